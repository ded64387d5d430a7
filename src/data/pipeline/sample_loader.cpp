#include "sample_loader.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "data/transform/features.h"
#include "stoker/core/clock.h"
#include "stoker/core/rng.h"

namespace stoker::data {
namespace {
// A padded RandomCrop window after a Resize resizes the whole image: a sliver of an image
// resized by its shorter side can be huge (1x10000 at Resize(256): 256x2,560,000). 2^26
// pixels (8192x8192, the largest output) is 768 MiB of floats per worker at 3 channels.
constexpr int64_t kMaxResizedPixels = int64_t{1} << 26;
}  // namespace

SampleLoader::SampleLoader(const Source& source, const TransformSpec& spec, const DecodeOptions& decode,
                           DecodedCache* cache, const TargetGeometrySpec* target_geometry)
    : source_(source), spec_(spec), cache_(cache), target_geometry_(target_geometry), decoder_(decode) {}

Status SampleLoader::check_size(const SampleParams& params, int width, int height) const {
  if (spec_.geometry == Geometry::kRandomCrop && params.crop.width == 0) {
    const PadSpec& pad = spec_.pad;
    const auto [resized_w, resized_h] = resized_size(spec_.resize, width, height);
    const std::string resized = spec_.resize.enabled() ? fmt::format(", resized to {}x{}", resized_w, resized_h) : "";
    return Status::failure(
        fmt::format("image is {}x{}{}, padded to {}x{}, smaller than RandomCrop's {}x{} (add pad_if_needed=True, more "
                    "padding or a smaller size)",
                    width, height, resized, resized_w + pad.left + pad.right, resized_h + pad.top + pad.bottom,
                    spec_.out_width, spec_.out_height));
  }
  if (static_cast<int64_t>(params.resized_width) * params.resized_height > kMaxResizedPixels) {
    return Status::failure(
        fmt::format("image is {}x{}, which Resize makes {}x{}: more than {} pixels to pad a RandomCrop window from",
                    width, height, params.resized_width, params.resized_height, kMaxResizedPixels));
  }
  if (spec_.geometry == Geometry::kNone &&
      (params.crop.width != spec_.out_width || params.crop.height != spec_.out_height)) {
    // Pad alone: the output is the padded image (params.crop), so the image itself is what differs.
    const PadSpec& pad = spec_.pad;
    if (pad.pads()) {
      return Status::failure(
          fmt::format("image is {}x{}, padded to {}x{}, expected {}x{} (Pad keeps the sizes' "
                      "differences; add Resize/CenterCrop)",
                      width, height, static_cast<int>(params.crop.width), static_cast<int>(params.crop.height),
                      spec_.out_width, spec_.out_height));
    }
    return Status::failure("image is " + std::to_string(static_cast<int>(params.crop.width)) + "x" +
                           std::to_string(static_cast<int>(params.crop.height)) + ", expected " +
                           std::to_string(spec_.out_width) + "x" + std::to_string(spec_.out_height) +
                           " (transform 'none' keeps sizes; add Resize/CenterCrop)");
  }
  return Status::ok_status();
}

Status SampleLoader::load(uint64_t index, uint64_t seed, int64_t epoch, uint64_t rng_index, void* out) {
  Stopwatch watch;
  SampleRng rng(seed, static_cast<uint64_t>(epoch), rng_index);
  SampleParams params;
  data_.extra.reset();
  data_.geometry.clear();

  // A cached sample: the same random draws on the same full image, only the transform runs;
  // what the source attaches to it is what its read would attach (Source::extra_of).
  if (const Image* cached = cache_ != nullptr ? cache_->find(index) : nullptr) {
    data_.extra = source_.extra_of(index);
    params = draw_params(spec_, cached->width(), cached->height(), rng);
    if (Status status = check_size(params, cached->width(), cached->height()); !status.ok()) return status;
    record_ = {index, cached->width(), cached->height(), params};
    transformer_.run(out, *cached, resampled_region(params, cached->width(), cached->height()), params, spec_);
    clocks_.add(clocks_.transform_ns, watch.lap());
    clocks_.decoded_bytes.fetch_add(cached->stride() * static_cast<uint64_t>(cached->height()),
                                    std::memory_order_relaxed);
    clocks_.cache_hits.fetch_add(1, std::memory_order_relaxed);
    clocks_.samples.fetch_add(1, std::memory_order_relaxed);
    return Status::ok_status();
  }

  Status status = source_.read(index, &data_);
  clocks_.add(clocks_.read_ns, watch.lap());
  if (!status.ok()) return status;
  clocks_.bytes_read.fetch_add(data_.bytes.size(), std::memory_order_relaxed);

  if (spec_.features.enabled()) return load_features(watch, out);

  uint64_t full_pixels = 0;  // of the whole image: what caching it would take
  int width = 0;
  int height = 0;
  if (data_.raw) {
    width = data_.raw_width;
    height = data_.raw_height;
    params = draw_params(spec_, data_.raw_width, data_.raw_height, rng);
    status = decode_raw(data_, params);
    full_pixels = static_cast<uint64_t>(data_.raw_width) * static_cast<uint64_t>(data_.raw_height);
  } else {
    ImageInfo info;
    status = decoder_.read_info(data_.bytes, &info);
    if (status.ok()) {
      full_pixels = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
      width = info.width;
      height = info.height;
      params = draw_params(spec_, info.width, info.height, rng);
      DecodeRequest request;
      request.channels = spec_.channels;
      request.filter_support = filter_support(spec_.resample);
      // A box: its region, scaled toward the output size. A window after a Resize: the whole
      // image, scaled toward the resized size. With a cache, or a 1:1 crop (whose padding may
      // mirror any of the image): the whole image at full resolution.
      const CropRect region = resampled_region(params, info.width, info.height);
      if (cache_ == nullptr && !params.copy) {
        request.crop = region;
        request.target_width = spec_.out_width;
        request.target_height = spec_.out_height;
      } else if (cache_ == nullptr && params.resized_width > 0) {
        request.target_width = params.resized_width;
        request.target_height = params.resized_height;
      }
      status = decoder_.decode(data_.bytes, request, &decoded_);
      if (info.format == ImageFormat::kJpeg) {
        clocks_.jpeg_decodes.fetch_add(1, std::memory_order_relaxed);
        if (decoded_.spliced) clocks_.spliced_decodes.fetch_add(1, std::memory_order_relaxed);
      }
      if (status.ok() && cache_ != nullptr) decoded_.crop = region;  // the full image: same coordinates
      if (status.ok() && cache_ != nullptr) cache_->offer(index, decoded_.image);
    }
  }
  clocks_.add(clocks_.decode_ns, watch.lap());
  if (!status.ok()) return status;
  clocks_.decoded_bytes.fetch_add(full_pixels * static_cast<uint64_t>(spec_.channels), std::memory_order_relaxed);

  if (status = check_size(params, width, height); !status.ok()) return status;
  record_ = {index, width, height, params};
  if (!data_.geometry.empty()) {
    static const TargetGeometrySpec kNoPairs;
    move_targets(spec_, target_geometry_ != nullptr ? *target_geometry_ : kNoPairs, params, width, height,
                 &data_.geometry);
  }
  transformer_.run(out, decoded_, params, spec_);
  clocks_.add(clocks_.transform_ns, watch.lap());
  clocks_.samples.fetch_add(1, std::memory_order_relaxed);
  return Status::ok_status();
}

// A feature vector is written as it is, or standardized: no decode, no random draws.
Status SampleLoader::load_features(Stopwatch& watch, void* out) {
  if (data_.feature_count != spec_.features.length) {
    return Status::failure("sample has " + std::to_string(data_.feature_count) + " features, expected " +
                           std::to_string(spec_.features.length));
  }
  record_ = SampleRecord{};
  write_features(out, data_.bytes.first(static_cast<size_t>(data_.feature_count) * sizeof(float)), spec_);
  clocks_.add(clocks_.transform_ns, watch.lap());
  clocks_.samples.fetch_add(1, std::memory_order_relaxed);
  return Status::ok_status();
}

// Raw pixels (IDX) need no decoding: copy them into the decoded image, converting channels.
Status SampleLoader::decode_raw(const SampleData& data, const SampleParams& params) {
  const int channels = spec_.channels;
  Image& image = decoded_.image;
  image.reshape(data.raw_width, data.raw_height, channels);
  const size_t pixels = static_cast<size_t>(data.raw_width) * data.raw_height;
  if (data.raw_channels == channels) {
    std::memcpy(image.data(), data.bytes.data(), pixels * static_cast<size_t>(channels));
  } else if (data.raw_channels == 1 && channels == 3) {
    for (size_t p = 0; p < pixels; ++p) {
      image.data()[3 * p] = image.data()[3 * p + 1] = image.data()[3 * p + 2] = data.bytes[p];
    }
  } else {
    return Status::failure("raw sample has " + std::to_string(data.raw_channels) + " channels; cannot make " +
                           std::to_string(channels));
  }
  decoded_.crop = params.crop;
  decoded_.scale_num = 8;
  return Status::ok_status();
}

}  // namespace stoker::data
