// WebDataset shards: tar files whose consecutive members sharing a key are one sample.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

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

// One of the image types every source decodes (has_image_extension), a PNM name webdataset's
// decoders read as an image too, or a GIF (its first frame), as the whole extension: "seg.png" is a segmentation mask
// beside the image, not the image.
bool is_image_extension(const std::string& extension) {
  if (extension.find('.') != std::string::npos) return false;
  const std::string ext = lower(extension);
  return has_image_extension("." + ext) || ext == "pbm" || ext == "pnm" || ext == "gif";
}

// An image stoker does not decode (img2dataset's --encode_format avif, say), as the whole
// extension: a sample whose image is one is refused, not read as a sample without an image.
constexpr std::array<std::string_view, 7> kOtherImageExtensions = {"jp2", "j2k", "avif", "heic", "heif", "jxl", "dib"};

bool is_other_image_extension(const std::string& extension) {
  const std::string ext = lower(extension);
  return std::find(kOtherImageExtensions.begin(), kOtherImageExtensions.end(), ext) != kOtherImageExtensions.end();
}

// The members webdataset decodes as text (its last suffix, any case): a caption ("txt",
// "caption.txt") or metadata ("json"). They pass through as columns of text.
constexpr std::array<std::string_view, 5> kTextSuffixes = {"txt", "text", "transcript", "json", "jsn"};

bool is_text_extension(const std::string& extension) {
  const std::string suffix = lower(extension.substr(extension.rfind('.') + 1));
  return std::find(kTextSuffixes.begin(), kTextSuffixes.end(), suffix) != kTextSuffixes.end();
}

// The bytes of a .cls member read: more is not a class id.
constexpr size_t kMaxClassText = 4096;

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

// The text members' bytes, sample after sample, in place in the shard's map (which this
// keeps alive): what extra_of points into.
struct TextCells {
  std::shared_ptr<const MappedFile> map;
  std::vector<std::string_view> views;  // samples x text columns; empty where a sample has none
};

// One sample as the index finds it: its members' numbers in the archive.
struct IndexedSample {
  size_t image = 0;
  std::optional<size_t> cls;
  std::vector<std::pair<std::string, size_t>> texts;  // (extension, member)
};

class WebDatasetSource final : public Source {
 public:
  // `images`: each sample's image member (the shard's other members are not kept: one entry
  // per sample); `missing[i]`: the column sample i lacks (its read fails), or -1; empty
  // without text columns.
  WebDatasetSource(std::shared_ptr<const MappedFile> map, std::vector<TarArchive::Member> images,
                   std::vector<int64_t> labels, size_t skipped, SourceColumns columns,
                   std::shared_ptr<const TextCells> cells, std::vector<int> missing)
      : map_(std::move(map)),
        images_(std::move(images)),
        labels_(std::move(labels)),
        skipped_(skipped),
        columns_(std::move(columns)),
        cells_(std::move(cells)),
        missing_(std::move(missing)),
        ids_(map_->path(), has_classes() ? images_.size() : 0, [this](size_t i) { return labels_[i]; }) {}

  size_t size() const override { return images_.size(); }
  std::string name(size_t index) const override { return map_->path() + ":" + images_[index].name; }
  std::string describe() const override {
    std::string text = fmt::format("WebDataset shard {}: {} images, {}", map_->path(), with_commas(images_.size()),
                                   has_classes() ? ids_.describe() : "no targets");
    if (!columns_.extra.empty()) {
      std::vector<std::string> names;
      for (const ExtraColumn& c : columns_.extra) names.push_back(c.name);
      text += fmt::format(" · passes through {}", fmt::join(names, ", "));
    }
    if (skipped_ > 0) {
      text += fmt::format(" ({} sample{} without an image skipped)", with_commas(skipped_), skipped_ == 1 ? "" : "s");
    }
    return text;
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  // Numbered: a shard holds the ids it happens to hold, and shards of one dataset combine.
  bool targets_are_numbers() const override { return has_classes(); }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
  void check_class_ids(int64_t max_classes) const override {
    ids_.check(max_classes, [this](size_t i) { return name(i); });
  }
  int64_t label(size_t index) const override { return labels_[index]; }
  void targets(size_t index, float* out) const override { out[0] = static_cast<float>(labels_[index]); }
  Status read(size_t index, SampleData* out) const override {
    if (!missing_.empty() && missing_[index] >= 0) {
      const auto [key, extension] = key_and_extension(images_[index].name);
      return Status::failure(fmt::format("no {}.{} member, which the shard's other samples have", key,
                                         columns_.extra[static_cast<size_t>(missing_[index])].name));
    }
    out->raw = false;
    out->feature_count = 0;
    out->bytes = TarArchive::bytes(*map_, images_[index]);  // in place, in the map
    map_->note_read(out->bytes);
    out->extra = extra_of(index);
    return Status::ok_status();
  }
  const SourceColumns* columns() const override { return &columns_; }
  std::shared_ptr<const void> extra_of(size_t index) const override {
    if (columns_.extra.empty()) return nullptr;
    return {cells_, cells_->views.data() + index * columns_.extra.size()};  // shares the cells' ownership
  }
  void expect_reads(ReadOrder order) const override {
    map_->advise(order == ReadOrder::kInOrder ? MappedFile::Access::kSequential : MappedFile::Access::kRandom);
  }

 private:
  bool has_classes() const { return !columns_.targets.empty(); }

  std::shared_ptr<const MappedFile> map_;
  std::vector<TarArchive::Member> images_;  // each sample's image member
  std::vector<int64_t> labels_;             // each sample's .cls; 0 for a shard without them
  size_t skipped_;
  SourceColumns columns_;
  std::shared_ptr<const TextCells> cells_;
  std::vector<int> missing_;  // empty without text columns
  NumberedClasses ids_;
};

// What index_samples found: the samples with an image, the number without one, and those
// whose image stoker does not decode (and the first of their image members).
struct ShardSamples {
  std::vector<IndexedSample> samples;
  size_t skipped = 0;
  size_t undecodable = 0;
  std::optional<size_t> first_undecodable;
};

// The samples of `archive` (the shard at `path`). One sample: the members from `begin` on that
// share its key, as WebDataset writes and reads them; a key met again after another's members
// (members grouped by extension, `tar -cf x.tar *.jpg *.txt`) is refused, its caption apart
// from its image.
ShardSamples index_samples(const TarArchive& archive, const std::string& path) {
  const std::vector<TarArchive::Member>& members = archive.members();
  ShardSamples found;
  std::unordered_map<std::string, size_t> first_member;  // each key's first member
  for (size_t begin = 0; begin < members.size();) {
    const std::string key = key_and_extension(members[begin].name).first;
    const auto [earlier, fresh] = first_member.emplace(key, begin);
    if (!fresh) {
      throw DataError(fmt::format(
          "{}: the members of the sample '{}' are apart ({} is member {}, {} member {}, another sample's between "
          "them), and WebDataset reads a sample from consecutive members; write each sample's members together "
          "(tar --sort=name, webdataset's ShardWriter, img2dataset)",
          path, key, members[earlier->second].name, earlier->second + 1, members[begin].name, begin + 1));
    }
    std::optional<size_t> image, other_image;
    IndexedSample sample;
    size_t end = begin;
    for (; end < members.size(); ++end) {
      const auto [member_key, extension] = key_and_extension(members[end].name);
      if (member_key != key) break;
      if (!image && is_image_extension(extension)) {
        image = end;
      } else if (lower(extension) == "cls") {
        sample.cls = end;
      } else if (is_text_extension(extension)) {
        sample.texts.emplace_back(extension, end);
      } else if (!other_image && is_other_image_extension(extension)) {
        other_image = end;
      }
    }
    begin = end;
    if (!image) {
      if (other_image) {
        ++found.undecodable;
        if (!found.first_undecodable) found.first_undecodable = other_image;
      } else {
        ++found.skipped;
      }
      continue;
    }
    sample.image = *image;
    found.samples.push_back(std::move(sample));
  }
  return found;
}

}  // namespace

std::unique_ptr<Source> open_web_dataset(const std::string& path) {
  TarArchive archive(path);
  const std::vector<TarArchive::Member>& members = archive.members();
  auto [samples, skipped, undecodable, first_undecodable] = index_samples(archive, path);
  if (undecodable > 0) {
    throw DataError(fmt::format(
        "{}: {} of {} samples have their image in a format stoker does not decode (the first: {}); stoker reads "
        "JPEG, PNG, WebP, BMP, PNM and TIFF members: re-encode them (img2dataset --encode_format jpg), or read the "
        "shards with a webdataset pipeline that decodes them with PIL, as an iterable-style Dataset",
        path, with_commas(undecodable), with_commas(undecodable + samples.size()), members[*first_undecodable].name));
  }
  if (samples.empty()) {
    throw DataError(
        fmt::format("{} holds no image samples ({} members; looked for <key>.jpg, .png, .webp or another image "
                    "extension, as WebDataset shards have)",
                    path, members.size()));
  }
  // Class ids: every sample's .cls, or none at all (a shard of images and captions).
  const auto labelled = std::find_if(samples.begin(), samples.end(), [](const IndexedSample& s) { return s.cls; });
  const bool classes = labelled != samples.end();
  std::vector<int64_t> labels(samples.size(), 0);
  std::vector<size_t> cls_members;
  for (size_t i = 0; classes && i < samples.size() && samples[i].cls; ++i) cls_members.push_back(*samples[i].cls);
  const std::vector<std::string> cls_texts = archive.read_members(cls_members, kMaxClassText);
  for (size_t i = 0; classes && i < samples.size(); ++i) {
    const IndexedSample& s = samples[i];
    if (!s.cls) {
      throw DataError(fmt::format(
          "{}: the sample '{}' has an image ({}) but no class, and {} has its class id in {}: give every image its "
          "<key>.cls (an integer as text), as webdataset's ShardWriter writes {{\"__key__\": …, \"jpg\": …, \"cls\": "
          "3}}, or none for a shard of images and captions",
          path, key_and_extension(members[s.image].name).first, members[s.image].name,
          key_and_extension(members[labelled->image].name).first, members[*labelled->cls].name));
    }
    const std::span<const uint8_t> cls_text(reinterpret_cast<const uint8_t*>(cls_texts[i].data()), cls_texts[i].size());
    const std::optional<int64_t> id = class_of(cls_text);
    if (!id) {
      const std::span<const uint8_t> shown = cls_text.first(std::min<size_t>(cls_text.size(), 40));
      throw DataError(fmt::format("{}: {} holds '{}', not a class id; a .cls member holds one integer as text", path,
                                  members[*s.cls].name, std::string(shown.begin(), shown.end())));
    }
    labels[i] = *id;
  }
  // A shard of images and captions: the text members of any sample are its columns, in the
  // order of their names. A shard with class ids is classification data, and its text members
  // (ImageNet's shards carry a .json of metadata) are not read: its samples are images and
  // labels, as webdataset's to_tuple("jpg", "cls") makes them.
  std::set<std::string> names;
  for (const IndexedSample& s : classes ? std::span<const IndexedSample>() : std::span<const IndexedSample>(samples)) {
    for (const auto& text : s.texts) names.insert(text.first);
  }
  SourceColumns columns;
  columns.path = "image";
  if (classes) columns.targets = {"cls"};
  columns.header = true;  // the names are the members' extensions
  columns.no_target_hint = "write each sample's class id as <key>.cls (an integer as text) in its shard";
  for (const std::string& name : names) columns.extra.push_back({name, ColumnKind::kText, ""});
  auto cells = std::make_shared<TextCells>();
  cells->map = archive.file();
  cells->views.resize(samples.size() * names.size());
  std::vector<int> missing(names.empty() ? 0 : samples.size(), -1);
  std::vector<TarArchive::Member> images(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    images[i] = members[samples[i].image];
    int c = 0;
    for (const std::string& name : names) {
      const auto text = std::find_if(samples[i].texts.begin(), samples[i].texts.end(),
                                     [&](const auto& t) { return t.first == name; });
      if (text == samples[i].texts.end()) {
        if (missing[i] < 0) missing[i] = c;
      } else {
        const std::span<const uint8_t> bytes = archive.bytes(members[text->second]);
        cells->views[i * names.size() + static_cast<size_t>(c)] =
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }
      ++c;
    }
  }
  return std::make_unique<WebDatasetSource>(archive.file(), std::move(images), std::move(labels), skipped,
                                            std::move(columns), std::move(cells), std::move(missing));
}

}  // namespace stoker::data
