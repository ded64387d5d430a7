// WebDataset shards: tar files whose consecutive members sharing a key are one sample.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>

#include "file_reader.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "tar_archive.h"

namespace stoker::data {

namespace {

// WebDataset's split of a member name: the key is the path up to the first dot of the file
// name, the extension the rest ("a/000123.seg.png" -> "a/000123", "seg.png").
std::pair<std::string, std::string> key_and_extension(const std::string& name) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// One of the image types every source decodes (has_image_extension), as the whole extension:
// "seg.png" is a segmentation mask beside the image, not the image.
bool is_image_extension(const std::string& extension) {
  return extension.find('.') == std::string::npos && has_image_extension("." + extension);
}

// A .cls member's text: an integer, with surrounding white space.
std::optional<int64_t> class_of(std::span<const uint8_t> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

class WebDatasetSource final : public Source {
 public:
  WebDatasetSource(TarArchive archive, std::vector<size_t> images, std::vector<int64_t> labels, size_t skipped)
      : archive_(std::move(archive)),
        images_(std::move(images)),
        labels_(std::move(labels)),
        skipped_(skipped),
        ids_(archive_.path(), images_.size(), [this](size_t i) { return labels_[i]; }) {}

  size_t size() const override { return images_.size(); }
  std::string name(size_t index) const override {
    return archive_.path() + ":" + archive_.members()[images_[index]].name;
  }
  std::string describe() const override {
    std::string text = fmt::format("WebDataset shard {}: {} images, {}", archive_.path(), with_commas(images_.size()),
                                   ids_.describe());
    if (skipped_ > 0) {
      text += fmt::format(" ({} sample{} without an image skipped)", with_commas(skipped_), skipped_ == 1 ? "" : "s");
    }
    return text;
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  // Numbered: a shard holds the ids it happens to hold, and shards of one dataset combine.
  bool targets_are_numbers() const override { return true; }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
  void check_class_ids(int64_t max_classes) const override {
    ids_.check(max_classes, [this](size_t i) { return name(i); });
  }
  int64_t label(size_t index) const override { return labels_[index]; }
  void targets(size_t index, float* out) const override { out[0] = static_cast<float>(labels_[index]); }
  Status read(size_t index, SampleData* out) const override {
    out->raw = false;
    out->feature_count = 0;
    out->bytes = archive_.bytes(archive_.members()[images_[index]]);  // in place, in the map
    return Status::ok_status();
  }
  void expect_reads(ReadOrder order) const override {
    archive_.file()->advise(order == ReadOrder::kInOrder ? MappedFile::Access::kSequential
                                                         : MappedFile::Access::kRandom);
  }

 private:
  TarArchive archive_;
  std::vector<size_t> images_;  // member index of each sample's image
  std::vector<int64_t> labels_;
  size_t skipped_;
  NumberedClasses ids_;
};

}  // namespace

std::unique_ptr<Source> open_web_dataset(const std::string& path) {
  TarArchive archive(path);
  const std::vector<TarArchive::Member>& members = archive.members();
  std::vector<size_t> images;
  std::vector<int64_t> labels;
  size_t skipped = 0;
  // One sample: the members from `begin` on that share its key (WebDataset writes them
  // together; a key met again later is another sample, as WebDataset reads it).
  for (size_t begin = 0; begin < members.size();) {
    const std::string key = key_and_extension(members[begin].name).first;
    std::optional<size_t> image, cls;
    size_t end = begin;
    for (; end < members.size(); ++end) {
      const auto [member_key, extension] = key_and_extension(members[end].name);
      if (member_key != key) break;
      if (!image && is_image_extension(extension)) image = end;
      if (lower(extension) == "cls") cls = end;
    }
    begin = end;
    if (!image) {
      ++skipped;
      continue;
    }
    if (!cls) {
      throw DataError(
          fmt::format("{}: the sample '{}' has an image ({}) but no class: stoker reads a WebDataset "
                      "shard's class id from <key>.cls (an integer as text), as webdataset's "
                      "ShardWriter writes {{\"__key__\": …, \"jpg\": …, \"cls\": 3}}",
                      path, key, members[*image].name));
    }
    const std::span<const uint8_t> cls_text = archive.bytes(members[*cls]);
    const std::optional<int64_t> id = class_of(cls_text);
    if (!id) {
      const std::span<const uint8_t> shown = cls_text.first(std::min<size_t>(cls_text.size(), 40));
      throw DataError(fmt::format("{}: {} holds '{}', not a class id; a .cls member holds one integer as text", path,
                                  members[*cls].name, std::string(shown.begin(), shown.end())));
    }
    images.push_back(*image);
    labels.push_back(*id);
  }
  if (images.empty()) {
    throw DataError(
        fmt::format("{} holds no image samples ({} members; looked for <key>.jpg, .jpeg or .png with "
                    "<key>.cls beside it, as WebDataset shards have)",
                    path, members.size()));
  }
  return std::make_unique<WebDatasetSource>(std::move(archive), std::move(images), std::move(labels), skipped);
}

}  // namespace stoker::data
