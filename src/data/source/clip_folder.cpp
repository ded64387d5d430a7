// Clips in folders: root/<class>/<clip>/<frame>.
#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "clip_files.h"
#include "file_reader.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

class ClipFolderSource final : public Source {
 public:
  ClipFolderSource(std::string root, std::vector<std::string> classes, std::vector<std::string> clips,
                   std::vector<int64_t> labels, std::vector<std::string> frames, std::vector<size_t> first_frame,
                   size_t skipped)
      : root_(std::move(root)),
        classes_(std::move(classes)),
        clips_(std::move(clips)),
        labels_(std::move(labels)),
        frames_(std::move(frames)),
        first_frame_(std::move(first_frame)),
        skipped_(skipped) {}

  size_t size() const override { return clips_.size(); }
  std::string name(size_t index) const override { return clips_[index]; }
  std::string describe() const override {
    std::string text = "clip folder " + root_ + ": " + with_commas(clips_.size()) + " clips of " +
                       with_commas(frames_.size()) + " frames in " + with_commas(classes_.size()) +
                       (classes_.size() == 1 ? " class" : " classes");
    if (skipped_ > 0) text += " (" + with_commas(skipped_) + " other files and folders skipped)";
    return text;
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t index) const override { return labels_[index]; }
  void targets(size_t index, float* out) const override { out[0] = static_cast<float>(labels_[index]); }
  // The clip's first frame: what tools that read one image per sample see.
  Status read(size_t index, SampleData* out) const override {
    return read_whole_file(frames_[first_frame_[index]], out);
  }
  bool holds_clips() const override { return true; }
  Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    const size_t first = first_frame_[index];
    const auto count = static_cast<int>(first_frame_[index + 1] - first);
    return read_frame_files(
        count, [&](int k) { return frames_[first + static_cast<size_t>(k)]; }, pick, frames);
  }
  std::string frame_name(size_t index, int frame) const override {
    return frames_[first_frame_[index] + static_cast<size_t>(frame)];
  }

 private:
  std::string root_;
  std::vector<std::string> classes_;
  std::vector<std::string> clips_;  // the clip folders' paths
  std::vector<int64_t> labels_;
  std::vector<std::string> frames_;  // every clip's frames, clip after clip
  std::vector<size_t> first_frame_;  // clip i's frames are frames_[first_frame_[i] .. first_frame_[i + 1])
  size_t skipped_;
};

DataError unreadable_folder(const fs::path& folder, const std::error_code& ec) {
  return DataError("cannot list the folder " + folder.string() + " of the dataset: " + ec.message() +
                   "; check its permissions (its clips would otherwise be missing from the data)");
}

// The entries of `folder`: its folders and its files apart, each in natural name order.
void list_folder(const fs::path& folder, std::vector<std::string>* folders, std::vector<std::string>* files) {
  folders->clear();
  files->clear();
  std::error_code list_error;
  fs::directory_iterator it(folder, list_error);
  for (; !list_error && it != fs::directory_iterator(); it.increment(list_error)) {
    std::error_code kind_error;  // an entry that cannot be stat'ed is a file
    (it->is_directory(kind_error) ? folders : files)->push_back(it->path().filename().string());
  }
  if (list_error) throw unreadable_folder(folder, list_error);
  std::sort(folders->begin(), folders->end(), natural_less);
  std::sort(files->begin(), files->end(), natural_less);
}

}  // namespace

std::unique_ptr<Source> open_clip_folder(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) throw DataError("dataset directory " + root + " does not exist");
  if (!fs::is_directory(root, ec)) throw DataError("dataset path " + root + " is not a directory");
  constexpr const char* kLayout = "clips are read from root/<class>/<clip>/<frame>.jpg";

  std::vector<std::string> classes, files;
  list_folder(root, &classes, &files);
  if (classes.empty()) throw DataError("dataset directory " + root + " has no class folders; " + kLayout);
  std::sort(classes.begin(), classes.end());  // class ids in byte order, as an image folder's

  std::vector<std::string> clips, frames, clip_folders, clip_frames, frame_files, inner;
  std::vector<int64_t> labels;
  std::vector<size_t> first_frame{0};
  size_t skipped = files.size();
  for (size_t class_id = 0; class_id < classes.size(); ++class_id) {
    const fs::path class_dir = fs::path(root) / classes[class_id];
    list_folder(class_dir, &clip_folders, &files);
    for (const std::string& file : files) {
      if (!has_image_extension(file)) {
        ++skipped;
        continue;
      }
      throw DataError("the image " + (class_dir / file).string() +
                      " lies in a class folder, outside any clip folder; " + kLayout +
                      " (a folder of single images is read without frames_per_clip)");
    }
    for (const std::string& clip : clip_folders) {
      const fs::path clip_dir = class_dir / clip;
      list_folder(clip_dir, &inner, &frame_files);
      skipped += inner.size();
      size_t count = 0;
      for (const std::string& file : frame_files) {
        if (!has_image_extension(file)) {
          ++skipped;
          continue;
        }
        frames.push_back((clip_dir / file).string());
        ++count;
      }
      if (count == 0) {
        throw DataError("the clip folder " + clip_dir.string() +
                        " holds no frames (image files, .jpg, .png, .webp, ..., in it); " + kLayout +
                        ": remove it or fill it");
      }
      clips.push_back(clip_dir.string());
      labels.push_back(static_cast<int64_t>(class_id));
      first_frame.push_back(frames.size());
    }
  }
  if (clips.empty()) {
    throw DataError("no clips found under " + root + " (looked for clip folders in " + std::to_string(classes.size()) +
                    " class folders); " + kLayout);
  }
  return std::make_unique<ClipFolderSource>(root, std::move(classes), std::move(clips), std::move(labels),
                                            std::move(frames), std::move(first_frame), skipped);
}

}  // namespace stoker::data
