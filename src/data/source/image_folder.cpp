// torchvision-style ImageFolder: root/<class>/**/<image>.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "file_reader.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

class ImageFolderSource final : public Source {
 public:
  ImageFolderSource(std::string root, std::vector<std::string> classes,
                    std::vector<std::string> paths, std::vector<int64_t> labels, size_t skipped)
      : root_(std::move(root)),
        classes_(std::move(classes)),
        paths_(std::move(paths)),
        labels_(std::move(labels)),
        skipped_(skipped) {}

  size_t size() const override { return paths_.size(); }
  std::string name(size_t index) const override { return paths_[index]; }
  std::string describe() const override {
    std::string text = "image folder " + root_ + ": " + with_commas(paths_.size()) + " images in " +
                       with_commas(classes_.size()) + (classes_.size() == 1 ? " class" : " classes");
    if (skipped_ > 0) text += " (" + with_commas(skipped_) + " non-image files skipped)";
    return text;
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t index) const override { return labels_[index]; }
  void targets(size_t index, float* out) const override {
    out[0] = static_cast<float>(labels_[index]);
  }
  Status read(size_t index, SampleData* out) const override {
    return read_whole_file(paths_[index], out);
  }

 private:
  std::string root_;
  std::vector<std::string> classes_;
  std::vector<std::string> paths_;
  std::vector<int64_t> labels_;
  size_t skipped_;
};

}  // namespace

std::unique_ptr<Source> open_image_folder(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) throw DataError("dataset directory " + root + " does not exist");
  if (!fs::is_directory(root, ec)) throw DataError("dataset path " + root + " is not a directory");

  std::vector<std::string> classes;
  fs::directory_iterator it(root, ec);
  if (ec) throw DataError("cannot read dataset directory " + root + ": " + ec.message());
  for (const auto& entry : it) {
    if (entry.is_directory(ec)) classes.push_back(entry.path().filename().string());
  }
  if (classes.empty()) {
    throw DataError("dataset directory " + root +
                    " has no class folders; expected root/<class>/<image>.jpg (torchvision "
                    "ImageFolder layout)");
  }
  std::sort(classes.begin(), classes.end());

  std::vector<std::string> paths;
  std::vector<int64_t> labels;
  size_t skipped = 0;
  for (size_t class_id = 0; class_id < classes.size(); ++class_id) {
    std::vector<std::string> class_paths;
    const fs::path class_dir = fs::path(root) / classes[class_id];
    fs::recursive_directory_iterator walk(
        class_dir, fs::directory_options::follow_directory_symlink |
                       fs::directory_options::skip_permission_denied, ec);
    if (ec) throw DataError("cannot read class folder " + class_dir.string() + ": " + ec.message());
    for (const auto& entry : walk) {
      if (entry.is_directory(ec)) continue;
      if (has_image_extension(entry.path().filename().string())) {
        class_paths.push_back(entry.path().string());
      } else {
        ++skipped;
      }
    }
    std::sort(class_paths.begin(), class_paths.end());
    for (auto& path : class_paths) {
      paths.push_back(std::move(path));
      labels.push_back(static_cast<int64_t>(class_id));
    }
  }
  if (paths.empty()) {
    throw DataError("no images found under " + root + " (looked for .jpg, .jpeg, .png in " +
                    std::to_string(classes.size()) + " class folders)");
  }
  return std::make_unique<ImageFolderSource>(root, std::move(classes), std::move(paths),
                                             std::move(labels), skipped);
}

}  // namespace stoker::data
