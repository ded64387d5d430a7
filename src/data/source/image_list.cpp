#include "image_list.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "file_reader.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

class ImageListSource final : public Source {
 public:
  ImageListSource(std::string description, std::shared_ptr<const PathList> paths, std::vector<int64_t> labels,
                  std::vector<std::string> classes, std::string notes)
      : description_(std::move(description)),
        notes_(std::move(notes)),
        paths_(std::move(paths)),
        labels_(std::move(labels)),
        classes_(std::move(classes)) {}

  // The same paths (shared) with other class ids and names.
  std::unique_ptr<Source> relabelled(std::vector<int64_t> labels, std::vector<std::string> classes) const {
    return std::make_unique<ImageListSource>(description_, paths_, std::move(labels), std::move(classes), notes_);
  }
  const PathList& paths() const { return *paths_; }
  const std::string& description() const { return description_; }

  size_t size() const override { return paths_->size(); }
  std::string name(size_t index) const override { return std::string((*paths_)[index]); }
  std::string describe() const override {
    return fmt::format("{}: {} images in {} {}{}", description_, with_commas(paths_->size()),
                       with_commas(classes_.size()), classes_.size() == 1 ? "class" : "classes", notes_);
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t index) const override { return labels_[index]; }
  void targets(size_t index, float* out) const override { out[0] = static_cast<float>(labels_[index]); }
  Status read(size_t index, SampleData* out) const override { return read_whole_file(name(index), out); }

 private:
  std::string description_;
  std::string notes_;
  std::shared_ptr<const PathList> paths_;
  std::vector<int64_t> labels_;
  std::vector<std::string> classes_;
};

// Throws UsageError unless there is one id per path, each in [0, class_names.size()).
void check_labels(const std::string& description, const PathList& paths, const std::vector<int64_t>& labels,
                  const std::vector<std::string>& class_names) {
  if (paths.size() != labels.size()) {
    throw UsageError(fmt::format("{}: {} paths and {} class ids; give one class id per path", description, paths.size(),
                                 labels.size()));
  }
  const auto classes = static_cast<int64_t>(class_names.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      throw UsageError(fmt::format("{}: sample {} ({}) has class id {}, and there are {} classes (ids 0 to {})",
                                   description, i, paths[i], labels[i], classes, classes - 1));
    }
  }
}

}  // namespace

std::unique_ptr<Source> image_list_source(std::string description, PathList paths, std::vector<int64_t> labels,
                                          std::vector<std::string> class_names, std::string notes) {
  return std::make_unique<ImageListSource>(std::move(description), std::make_shared<const PathList>(std::move(paths)),
                                           std::move(labels), std::move(class_names), std::move(notes));
}

std::unique_ptr<Source> open_image_list(std::string description, PathList paths, std::vector<int64_t> labels,
                                        std::vector<std::string> class_names) {
  check_labels(description, paths, labels, class_names);
  if (paths.empty()) throw UsageError(fmt::format("{} lists no sample", description));
  return image_list_source(std::move(description), std::move(paths), std::move(labels), std::move(class_names), "");
}

std::unique_ptr<Source> open_image_list(std::string description, const std::vector<std::string>& paths,
                                        std::vector<int64_t> labels, std::vector<std::string> class_names) {
  PathList list;
  for (const std::string& path : paths) list.push_back(path);
  return open_image_list(std::move(description), std::move(list), std::move(labels), std::move(class_names));
}

std::unique_ptr<Source> relabel_image_list(const Source& list, std::vector<int64_t> labels,
                                           std::vector<std::string> class_names) {
  const auto* images = dynamic_cast<const ImageListSource*>(&list);
  if (images == nullptr) {
    throw UsageError(fmt::format("relabel_image_list: {} is no list of image files held in memory", list.describe()));
  }
  check_labels(images->description(), images->paths(), labels, class_names);
  return images->relabelled(std::move(labels), std::move(class_names));
}

}  // namespace stoker::data
