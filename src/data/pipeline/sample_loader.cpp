#include "sample_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "data/transform/box_crop.h"
#include "data/transform/features.h"
#include "stoker/core/clock.h"
#include "stoker/core/rng.h"

namespace stoker::data {
namespace {
// A padded RandomCrop window after a Resize resizes the whole image: a sliver of an image
// resized by its shorter side can be huge (1x10000 at Resize(256): 256x2,560,000). 2^26
// pixels (8192x8192, the largest output) is 768 MiB of floats per worker at 3 channels.
constexpr int64_t kMaxResizedPixels = int64_t{1} << 26;
// Makes a sample's draw against the GPU share a stream of its own (SampleRng(seed, epoch, i)
// is its transform's).
constexpr uint64_t kShareSalt = 0x5348415245ull;  // "SHARE"
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

SampleLoader::SampleLoader(const Source& source, const TransformSpec& spec, const DecodeOptions& decode,
                           DecodedCache* cache, const ClipOptions& clip, const TargetGeometrySpec* target_geometry,
                           GpuHandoff handoff, const std::atomic<double>* gpu_share)
    : source_(source),
      spec_(spec),
      clip_(clip),
      cache_(cache),
      target_geometry_(target_geometry),
      handoff_(handoff),
      gpu_share_(gpu_share),
      planner_(handoff != GpuHandoff::kOff
                   ? std::make_unique<gpu::DecodePlanner>(
                         decode, gpu::GpuDecodeLimits{.engine = handoff != GpuHandoff::kCudaPath})
                   : nullptr),
      decoder_(decode) {}

Status SampleLoader::check_size(const SampleParams& params, int source_width, int source_height) const {
  // After a BoxCrop, the image the geometry takes is its crop.
  const auto [width, height] = geometry_input_size(params, source_width, source_height);
  const char* image = params.subject.width > 0 ? "BoxCrop's crop" : "image";
  if (const auto [w, h] = resized_size(spec_.resize, width, height); spec_.resize.enabled() && (w < 1 || h < 1)) {
    // Resize(n, max_size=m) on an image thinner than m / n: torchvision raises on it too.
    return Status::failure(
        fmt::format("{} is {}x{}, which Resize makes {}x{}, a side of no pixels (max_size={} caps "
                    "its longer side; raise max_size or leave it out)",
                    image, width, height, w, h, spec_.resize.max_size));
  }
  if (spec_.geometry == Geometry::kRandomCrop && params.crop.width == 0) {
    const PadSpec& pad = spec_.pad;
    const auto [resized_w, resized_h] = resized_size(spec_.resize, width, height);
    const std::string resized = spec_.resize.enabled() ? fmt::format(", resized to {}x{}", resized_w, resized_h) : "";
    return Status::failure(
        fmt::format("{} is {}x{}{}, padded to {}x{}, smaller than RandomCrop's {}x{} (add pad_if_needed=True, more "
                    "padding or a smaller size)",
                    image, width, height, resized, resized_w + pad.left + pad.right, resized_h + pad.top + pad.bottom,
                    spec_.out_width, spec_.out_height));
  }
  if (static_cast<int64_t>(params.resized_width) * params.resized_height > kMaxResizedPixels) {
    return Status::failure(
        fmt::format("{} is {}x{}, which Resize makes {}x{}: more than {} pixels to pad a crop window from", image,
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

void SampleLoader::read_ahead(std::span<const uint64_t> indices, std::span<std::shared_ptr<const void>> retired) {
  Stopwatch watch;
  const size_t n = indices.size();
  run_indices_.assign(indices.begin(), indices.end());
  if (run_data_.size() < n) run_data_.resize(n);
  run_status_.assign(n, Status::ok_status());
  for (size_t k = 0; k < n; ++k) {  // as load() readies data_ for a read
    SampleData& d = run_data_[k];
    d.extra.reset();
    d.geometry.clear();
    d.pil_resample = PilResample::kAsStored;
    d.retired = std::move(retired[k]);
  }
  run_next_ = 0;
  run_read_ = source_.read_run(run_indices_, std::span(run_data_).first(n), run_status_);
  clocks_.add(clocks_.read_ns, watch.lap());
}

Status SampleLoader::read(uint64_t index) {
  if (run_next_ < run_read_ && run_indices_[run_next_] == index) {
    std::swap(data_, run_data_[run_next_]);
    data_.retired = std::move(run_data_[run_next_].retired);  // what retire() gave: the loader lets it go
    return run_status_[run_next_++];
  }
  return source_.read(index, &data_);
}

Status SampleLoader::load(uint64_t index, uint64_t seed, int64_t epoch, uint64_t rng_index, void* out) {
  Stopwatch watch;
  SampleRng rng(seed, static_cast<uint64_t>(epoch), rng_index);
  SampleParams params;
  data_.extra.reset();
  data_.geometry.clear();
  data_.pil_resample = PilResample::kAsStored;
  left_for_gpu_ = false;
  if (clip_.enabled()) return load_clip(index, rng, watch, static_cast<uint8_t*>(out));

  // A cached sample: the same random draws on the same full image, only the transform runs;
  // what the source attaches to it is what its read would attach (Source::extra_of).
  if (const Image* cached = cache_ != nullptr ? cache_->find(index) : nullptr) {
    data_.extra = source_.extra_of(index);
    params = draw_params(spec_, cached->width(), cached->height(), rng);
    if (Status status = check_size(params, cached->width(), cached->height()); !status.ok()) return status;
    record_ = {index, cached->width(), cached->height(), params, 0, 0, {}, {}};
    transformer_.run(out, *cached, resampled_region(params, cached->width(), cached->height()), params, spec_);
    clocks_.add(clocks_.transform_ns, watch.lap());
    clocks_.decoded_bytes.fetch_add(cached->stride() * static_cast<uint64_t>(cached->height()),
                                    std::memory_order_relaxed);
    clocks_.cache_hits.fetch_add(1, std::memory_order_relaxed);
    clocks_.samples.fetch_add(1, std::memory_order_relaxed);
    return Status::ok_status();
  }

  Status status = read(index);
  clocks_.add(clocks_.read_ns, watch.lap());
  if (!status.ok()) return status;
  clocks_.bytes_read.fetch_add(data_.bytes.size(), std::memory_order_relaxed);

  if (spec_.features.enabled()) return load_features(watch, out);

  ImageInfo info;
  status = image_info(data_, &info);
  if (status.ok()) {
    params = draw_params(spec_, info.width, info.height, rng, &data_.geometry);
    if (spec_.box_crop.enabled() && params.subject.width == 0) {
      return Status::failure(box_crop_problem(spec_, params, data_.geometry, info.width, info.height));
    }
    if (planner_ && check_size(params, info.width, info.height).ok() &&
        leave_for_gpu(info, params, seed, epoch, rng_index)) {
      clocks_.add(clocks_.decode_ns, watch.lap());  // the planning
      record_ = {index, info.width, info.height, params, 0, 0, {}, {}};
      clocks_.gpu_samples.fetch_add(1, std::memory_order_relaxed);
      clocks_.samples.fetch_add(1, std::memory_order_relaxed);
      return Status::ok_status();
    }
    status = decode_image(data_, info, params);
    if (status.ok() && cache_ != nullptr && !data_.raw) cache_->offer(index, decoded_.image);
  }
  clocks_.add(clocks_.decode_ns, watch.lap());
  if (!status.ok()) return status;
  // Of the whole image: what caching it would take.
  const uint64_t full_pixels = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
  clocks_.decoded_bytes.fetch_add(full_pixels * static_cast<uint64_t>(spec_.channels), std::memory_order_relaxed);

  if (status = check_size(params, info.width, info.height); !status.ok()) return status;
  record_ = {index, info.width, info.height, params, 0, 0, {}, {}};
  if (!data_.geometry.empty()) {
    static const TargetGeometrySpec kNoPairs;
    move_targets(spec_, target_geometry_ != nullptr ? *target_geometry_ : kNoPairs, params, info.width, info.height,
                 &data_.geometry);
  }
  transformer_.run(out, decoded_, params, spec_);
  clocks_.add(clocks_.transform_ns, watch.lap());
  clocks_.samples.fetch_add(1, std::memory_order_relaxed);
  return Status::ok_status();
}

Status SampleLoader::load_clip(uint64_t index, SampleRng& rng, Stopwatch& watch, uint8_t* out) {
  clip_count_ = 0;
  const FramePicker pick = [this, &rng](int count) -> std::span<const int> {
    clip_count_ = count;
    clip_start_ = pick_frames(clip_, count, rng, &chosen_);
    return chosen_;
  };
  Status status = source_.read_clip(index, pick, &frames_);
  clocks_.add(clocks_.read_ns, watch.lap());
  if (!status.ok()) return status;
  if (clip_count_ < 1 || frames_.size() != chosen_.size()) {
    return Status::failure("the source read " + std::to_string(frames_.size()) + " frames of the clip, expected " +
                           std::to_string(clip_.frames));
  }
  uint64_t bytes_read = 0;
  for (const SampleData& frame : frames_) bytes_read += frame.bytes.size();
  clocks_.bytes_read.fetch_add(bytes_read, std::memory_order_relaxed);
  data_.extra = std::move(frames_.front().extra);

  const size_t frame_bytes = spec_.sample_bytes();
  const auto frame_failure = [&](size_t k, const std::string& reason) {
    return Status::failure("frame " + source_.frame_name(index, chosen_[k]) + ": " + reason);
  };
  // Every frame takes the clip's one set of draws: each draws its geometry for its own size
  // (face crops saved one per frame differ in size and aspect) from a copy of the clip's
  // stream as it stands here, and with_frame_geometry gives it the first chosen frame's every
  // other draw. With BoxCrop, each frame draws with the targets of the frame whose box it is
  // cropped around (its own, else the nearest usable one's).
  const SampleRng clip_rng = rng;
  const bool box_crop = spec_.box_crop.enabled();
  static const TargetGeometrySpec kNoPairs;
  const TargetGeometrySpec& pairs = target_geometry_ != nullptr ? *target_geometry_ : kNoPairs;
  frame_infos_.resize(frames_.size());
  for (size_t k = 0; k < frames_.size(); ++k) {
    if (k > 0 && chosen_[k] == chosen_[k - 1]) {
      frame_infos_[k] = frame_infos_[k - 1];
    } else if (status = image_info(frames_[k], &frame_infos_[k]); !status.ok()) {
      return frame_failure(k, status.reason());
    }
  }
  if (box_crop) {
    if (status = pick_crop_frames(index, clip_rng); !status.ok()) return status;
  }
  SampleParams params, first_params;
  uint64_t full_pixels = 0;
  record_.frame_boxes.clear();
  record_.frame_sizes.clear();
  for (size_t k = 0; k < frames_.size(); ++k) {
    uint8_t* frame_out = out + k * frame_bytes;
    const ImageInfo& info = frame_infos_[k];
    if (k > 0 && chosen_[k] == chosen_[k - 1]) {  // a short clip's last frame, repeated
      std::memcpy(frame_out, frame_out - frame_bytes, frame_bytes);
      append_frame_geometry(frames_[k - 1].geometry);
      record_.frame_boxes.push_back(record_.frame_boxes.back());
      record_.frame_sizes.push_back(record_.frame_sizes.back());
      frames_[k].geometry = frames_[k - 1].geometry;
      continue;
    }
    if (box_crop) {
      params = frame_params_[k];
    } else {
      SampleRng frame_rng = clip_rng;
      params = draw_params(spec_, info.width, info.height, frame_rng);
    }
    if (k == 0) {
      first_params = params;
    } else {
      params = with_frame_geometry(first_params, params);
    }
    if (status = check_size(params, info.width, info.height); !status.ok()) return frame_failure(k, status.reason());
    record_.frame_boxes.push_back(source_box(spec_, params, info.width, info.height));
    record_.frame_sizes.push_back({info.width, info.height});
    status = decode_image(frames_[k], info, params);
    clocks_.add(clocks_.decode_ns, watch.lap());
    if (!status.ok()) return frame_failure(k, status.reason());
    full_pixels += static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
    if (!frames_[k].geometry.empty()) {
      move_targets(spec_, pairs, params, info.width, info.height, &frames_[k].geometry);
      append_frame_geometry(frames_[k].geometry);
    }
    transformer_.run(frame_out, decoded_, params, spec_);
    clocks_.add(clocks_.transform_ns, watch.lap());
  }
  clocks_.decoded_bytes.fetch_add(full_pixels * static_cast<uint64_t>(spec_.channels), std::memory_order_relaxed);
  std::vector<CropRect> frame_boxes = std::move(record_.frame_boxes);
  std::vector<std::array<int, 2>> frame_sizes = std::move(record_.frame_sizes);
  record_ = {index,       frame_infos_[0].width, frame_infos_[0].height, first_params,
             clip_count_, clip_start_,           std::move(frame_boxes), std::move(frame_sizes)};
  clocks_.samples.fetch_add(1, std::memory_order_relaxed);
  return Status::ok_status();
}

Status SampleLoader::pick_crop_frames(uint64_t index, const SampleRng& clip_rng) {
  const ImageInfo& info = frame_infos_.front();
  // The margin, drawn first, is the same for every frame: the first frame's draw names it.
  SampleRng probe = clip_rng;
  const double margin = draw_params(spec_, info.width, info.height, probe, &frames_.front().geometry).subject_margin;
  crop_usable_.assign(frames_.size(), false);
  std::array<float, 5> all{kInf, kInf, -kInf, -kInf, 1};  // union=True: the union of the usable boxes
  for (size_t k = 0; k < frames_.size(); ++k) {
    const BoxCropRegion region =
        box_crop_region(spec_.box_crop, &frames_[k].geometry, margin, frame_infos_[k].width, frame_infos_[k].height);
    crop_usable_[k] = region.fault == BoxCropFault::kNone;
    if (!crop_usable_[k] || !spec_.box_crop.union_box) continue;
    const std::array<double, 4>& b = region.box;
    all = {std::min(all[0], static_cast<float>(b[0])), std::min(all[1], static_cast<float>(b[1])),
           std::max(all[2], static_cast<float>(b[2])), std::max(all[3], static_cast<float>(b[3])), 1};
  }
  if (nearest_usable_frames(chosen_, crop_usable_, &crop_from_)) {
    if (spec_.box_crop.union_box) {  // one box for every frame
      union_box_.clear();
      union_box_.boxes.assign(all.begin(), all.end());
    }
    // Drawn before any frame's targets move: a frame may take another's box.
    frame_params_.resize(frames_.size());
    for (size_t k = 0; k < frames_.size(); ++k) {
      SampleRng frame_rng = clip_rng;
      const GeometryTargets& around =
          spec_.box_crop.union_box ? union_box_ : frames_[static_cast<size_t>(crop_from_[k])].geometry;
      const ImageInfo& own = frame_infos_[k];
      frame_params_[k] = draw_params(spec_, own.width, own.height, frame_rng, &around);
      if (frame_params_[k].subject.width == 0) {  // the union's crop: too large
        return Status::failure(std::string(spec_.box_crop.union_box ? "BoxCrop(union=True): " : "") +
                               box_crop_problem(spec_, frame_params_[k], around, own.width, own.height));
      }
    }
    return Status::ok_status();
  }
  SampleParams none;
  none.subject_margin = margin;
  return Status::failure(fmt::format(
      "BoxCrop has no box to crop the clip around: none of its {} chosen frames has a usable one (frame {}: {})",
      frames_.size(), source_.frame_name(index, chosen_[0]),
      box_crop_problem(spec_, none, frames_.front().geometry, info.width, info.height)));
}

void SampleLoader::append_frame_geometry(const GeometryTargets& frame) {
  data_.geometry.points.insert(data_.geometry.points.end(), frame.points.begin(), frame.points.end());
  data_.geometry.boxes.insert(data_.geometry.boxes.end(), frame.boxes.begin(), frame.boxes.end());
}

Status SampleLoader::image_info(const SampleData& data, ImageInfo* info) {
  if (!data.raw) return decoder_.read_info(data.bytes, info);
  *info = {ImageFormat::kRaw, data.raw_width, data.raw_height, data.raw_channels};
  return Status::ok_status();
}

DecodeRequest SampleLoader::decode_request(const SampleParams& params, const ImageInfo& info) const {
  DecodeRequest request;
  request.channels = spec_.channels;
  request.filter_support = filter_support(spec_.resample);
  if (params.subject.width > 0) {
    // BoxCrop: the part of its crop the geometry resamples, where it lies in the image, scaled
    // toward its share of the output; a 1:1 crop (whose padding may mirror any of the crop),
    // the whole image at full resolution.
    if (params.copy) return request;
    const CropRect& subject = params.subject;
    const CropRect region = resampled_region(params, static_cast<int>(subject.width), static_cast<int>(subject.height));
    const double x0 = subject.x + region.x, y0 = subject.y + region.y;
    const double x1 = x0 + region.width, y1 = y0 + region.height;
    const double cx0 = std::clamp(x0, 0.0, info.width - 1.0), cy0 = std::clamp(y0, 0.0, info.height - 1.0);
    // A region wholly in the fill still decodes a pixel (never read).
    const double cx1 = std::clamp(x1, cx0 + 1, static_cast<double>(info.width));
    const double cy1 = std::clamp(y1, cy0 + 1, static_cast<double>(info.height));
    request.crop = {cx0, cy0, cx1 - cx0, cy1 - cy0};
    request.target_width =
        std::max(1, static_cast<int>(std::ceil(spec_.out_width * request.crop.width / region.width)));
    request.target_height =
        std::max(1, static_cast<int>(std::ceil(spec_.out_height * request.crop.height / region.height)));
    return request;
  }
  // A box: its region, scaled toward the output size. A window after a Resize: the whole
  // image, scaled toward the resized size. With a cache, or a 1:1 crop (whose padding may
  // mirror any of the image): the whole image at full resolution.
  if (cache_ == nullptr && !params.copy) {
    request.crop = resampled_region(params, info.width, info.height);
    request.target_width = spec_.out_width;
    request.target_height = spec_.out_height;
  } else if (cache_ == nullptr && params.resized_width > 0) {
    request.target_width = params.resized_width;
    request.target_height = params.resized_height;
  }
  return request;
}

bool SampleLoader::leave_for_gpu(const ImageInfo& info, const SampleParams& params, uint64_t seed, int64_t epoch,
                                 uint64_t rng_stream) {
  // A 1:1 crop copies pixels and padding, which the GPU does not do: the CPU makes it; so
  // does BoxCrop's crop.
  if (info.format != ImageFormat::kJpeg || data_.raw || params.copy || params.subject.width > 0) return false;
  if (handoff_ == GpuHandoff::kHardware && gpu_share_ != nullptr) {
    // decode='auto' keeps the rest of the share on the CPU (before planning: no header parse
    // for them). Drawn apart from the sample's transform draws, which are the same either way.
    const double share = gpu_share_->load(std::memory_order_relaxed);
    if (share < 1.0 && SampleRng(seed ^ kShareSalt, static_cast<uint64_t>(epoch), rng_stream).uniform() >= share) {
      return false;
    }
  }
  const gpu::DecodePlan plan = planner_->plan(data_.bytes, decode_request(params, info));
  if (plan.backend == gpu::DecodeBackend::kCpu) return false;
  if (plan.backend == gpu::DecodeBackend::kCuda && handoff_ == GpuHandoff::kHardware) return false;
  GpuSample& g = gpu_sample_;
  g.bytes.assign(data_.bytes.begin(), data_.bytes.end());
  g.hardware = plan.backend == gpu::DecodeBackend::kHardware;
  g.scale_num = plan.window.scale_num;
  g.window_x = plan.window.cols.begin;
  g.window_y = plan.window.rows.begin;
  g.window_width = plan.window.cols.end - plan.window.cols.begin;
  g.window_height = plan.window.rows.end - plan.window.rows.begin;
  g.scaled_width = plan.window.full_width;
  g.scaled_height = plan.window.full_height;
  g.crop = plan.crop;
  // As SampleTransformer::run resamples (RandomResizedCrop keeps the taps inside its box).
  const bool clamp = spec_.geometry == Geometry::kRandomResizedCrop;
  filter_taps(g.window_width, g.crop.x, g.crop.width, spec_.out_width, clamp, params.flip, spec_.resample, &g.columns);
  filter_taps(g.window_height, g.crop.y, g.crop.height, spec_.out_height, clamp, params.vflip, spec_.resample, &g.rows);
  g.rng_stream = rng_stream;
  left_for_gpu_ = true;
  return true;
}

bool SampleLoader::take_gpu_sample(GpuSample* out) {
  if (!left_for_gpu_) return false;
  std::swap(*out, gpu_sample_);
  left_for_gpu_ = false;
  return true;
}

Status SampleLoader::decode_image(const SampleData& data, const ImageInfo& info, const SampleParams& params) {
  const DecodeRequest request = decode_request(params, info);
  if (data.raw) {
    const Status status = decode_raw(data, params);
    if (status.ok() && params.subject.width > 0) {  // the whole image: source pixels
      decoded_.crop = request.crop.width > 0
                          ? request.crop
                          : CropRect{0, 0, static_cast<double>(info.width), static_cast<double>(info.height)};
      cut_subject(request.crop, info, params);
    }
    return status;
  }
  const Status status = decoder_.decode(data.bytes, request, &decoded_);
  decoded_.pil_resample = PilResample::kAsStored;
  if (status.ok() && params.subject.width > 0) cut_subject(request.crop, info, params);
  if (info.format == ImageFormat::kJpeg) {
    clocks_.jpeg_decodes.fetch_add(1, std::memory_order_relaxed);
    if (decoded_.spliced) clocks_.spliced_decodes.fetch_add(1, std::memory_order_relaxed);
  }
  if (status.ok() && cache_ != nullptr) {  // the full image: same coordinates
    decoded_.crop = resampled_region(params, info.width, info.height);
  }
  return status;
}

void SampleLoader::cut_subject(const CropRect& requested, const ImageInfo& info, const SampleParams& params) {
  // decoded_.crop is where `requested` (source pixels; the whole image when empty) lies in the
  // decoded pixels, which may be a window, at a reduced scale.
  const CropRect source = requested.width > 0
                              ? requested
                              : CropRect{0, 0, static_cast<double>(info.width), static_cast<double>(info.height)};
  const CropRect& decoded = decoded_.crop;
  const double kx = decoded.width / source.width, ky = decoded.height / source.height;
  const auto to_x = [&](double x) { return (x - source.x) * kx + decoded.x; };
  const auto to_y = [&](double y) { return (y - source.y) * ky + decoded.y; };
  const CropRect& subject = params.subject;
  const CropRect region = resampled_region(params, static_cast<int>(subject.width), static_cast<int>(subject.height));
  const double rx0 = to_x(subject.x + region.x), rx1 = to_x(subject.x + region.x + region.width);
  const double ry0 = to_y(subject.y + region.y), ry1 = to_y(subject.y + region.y + region.height);
  // The crop in decoded pixels: all of it for a 1:1 crop (its padding may mirror any of it),
  // else the region with as much around it as the filter's taps reach.
  double x0 = to_x(subject.x), x1 = to_x(subject.x + subject.width);
  double y0 = to_y(subject.y), y1 = to_y(subject.y + subject.height);
  if (!params.copy) {
    const double support = filter_support(spec_.resample);
    const double reach_x = support * std::max(1.0, (rx1 - rx0) / spec_.out_width) + 2;
    const double reach_y = support * std::max(1.0, (ry1 - ry0) / spec_.out_height) + 2;
    x0 = std::max(x0, rx0 - reach_x), x1 = std::min(x1, rx1 + reach_x);
    y0 = std::max(y0, ry0 - reach_y), y1 = std::min(y1, ry1 + reach_y);
  }
  const int cut_x = static_cast<int>(std::floor(x0)), cut_y = static_cast<int>(std::floor(y0));
  const int cut_w = std::max(1, static_cast<int>(std::ceil(x1)) - cut_x);
  const int cut_h = std::max(1, static_cast<int>(std::ceil(y1)) - cut_y);
  cut_with_fill(decoded_.image, cut_x, cut_y, cut_w, cut_h, spec_.box_crop.fill, &subject_image_);
  std::swap(decoded_.image, subject_image_);
  decoded_.crop = {rx0 - cut_x, ry0 - cut_y, rx1 - rx0, ry1 - ry0};
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

// Raw pixels (IDX) need no decoding: copy them into the decoded image, converting channels
// (grey replicated to RGB; RGB for a grey spec kept, for the transformer to turn grey as it
// does an RGB decode; RGBA to be resampled premultiplied kept, alpha and all).
Status SampleLoader::decode_raw(const SampleData& data, const SampleParams& params) {
  const bool premultiplied = data.pil_resample == PilResample::kPremultiplied && data.raw_channels == 4;
  const int channels = premultiplied ? 4 : data.raw_channels == 3 && spec_.channels == 1 ? 3 : spec_.channels;
  decoded_.pil_resample =
      data.pil_resample == PilResample::kNearest || premultiplied ? data.pil_resample : PilResample::kAsStored;
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
