// BoxCrop(margin, sides, fill): the box (first box, else the visible keypoints' extent), the
// margin rule against hand-computed crops, the fill past the image through the loader's
// decode path, a reduced-scale decode of the crop's window against a full decode, and the
// refusals and bad samples, each one line.
#include "data/transform/box_crop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "data/pipeline/sample_loader.h"
#include "stoker/core/error.h"
#include "stoker/core/rng.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"
#include "support/counting_source.h"
#include "support/error_text.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {
namespace box_crop {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

GeometryTargets points(std::vector<std::array<float, 3>> xyv) {
  GeometryTargets t;
  for (const auto& p : xyv) t.points.insert(t.points.end(), p.begin(), p.end());
  return t;
}

SampleParams drawn(const std::string& chain, int width, int height, const GeometryTargets& targets, uint64_t seed = 1) {
  SampleRng rng(seed, 0, 0);
  return draw_params(parse_transforms(chain), width, height, rng, &targets);
}

void expect_rect(const CropRect& r, double x, double y, double w, double h) {
  EXPECT_EQ(r.x, x);
  EXPECT_EQ(r.y, y);
  EXPECT_EQ(r.width, w);
  EXPECT_EQ(r.height, h);
}

TEST(BoxCropTest, HopenetsRuleAroundTheVisibleKeypoints) {
  // Visible points span (10, 20)-(50, 80): w 40, h 60. The hidden and the NaN point do not count.
  const GeometryTargets t = points({{10, 20, 1}, {50, 20, 1}, {30, 80, 1}, {900, 900, 0}, {kNaN, 5, 1}});
  const SampleParams p = drawn("BoxCrop(margin=0.25, sides=(0.6, 2, 0.6, 0.6)), Resize((32, 32))", 100, 100, t);
  // left 10 - 0.6 * 0.25 * 40 = 4, top 20 - 2 * 0.25 * 60 = -10, right 50 + 6 = 56, bottom 80 + 9 = 89.
  expect_rect(p.subject, 4, -10, 52, 99);
  EXPECT_EQ(p.subject_margin, 0.25);
  // The geometry after it takes the crop as its image: Resize((32, 32)) resamples all of it.
  expect_rect(p.crop, 0, 0, 52, 99);
  expect_rect(source_box(parse_transforms("BoxCrop(), Resize((32, 32))"), p, 100, 100), 4, -10, 52, 99);
}

TEST(BoxCropTest, TheFirstBoxWinsAndEdgesAreTruncatedTowardZero) {
  GeometryTargets t = points({{0, 0, 1}, {99, 99, 1}});
  t.boxes = {-5.5f, 2.5f, 20.7f, 30.2f, 1, 0, 0, 99, 99, 1};
  // margin 0: the box itself, each edge as int() makes it: -5, 2, 20, 30.
  expect_rect(drawn("BoxCrop(), Resize((8, 8))", 100, 100, t).subject, -5, 2, 25, 28);
  // A symmetric widening by 10 % of w 26.2 and h 27.7 on every side: -8.12, -0.27, 23.32 and
  // 32.97, truncated toward zero (the top to 0, not -1).
  expect_rect(drawn("BoxCrop(margin=0.1), Resize((8, 8))", 100, 100, t).subject, -8, 0, 31, 32);
}

TEST(BoxCropTest, AMarginRangeIsDrawnPerSampleAndEvaluationTakesItsMiddle) {
  const GeometryTargets t = points({{100, 100, 1}, {200, 250, 1}});  // w 100, h 150
  const std::string chain = "BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2, 0.6, 0.6)), Resize((16, 16))";
  std::set<double> margins;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const SampleParams p = drawn(chain, 400, 400, t, seed);
    const double k = p.subject_margin;
    ASSERT_GE(k, 0.2);
    ASSERT_LE(k, 0.4);
    margins.insert(k);
    const double left = std::trunc(100 - 0.6 * k * 100), top = std::trunc(100 - 2 * k * 150);
    const double right = std::trunc(200 + 0.6 * k * 100), bottom = std::trunc(250 + 0.6 * k * 150);
    expect_rect(p.subject, left, top, right - left, bottom - top);
  }
  EXPECT_GT(margins.size(), 30U);
  const TransformSpec eval = eval_transform(parse_transforms(chain));
  EXPECT_EQ(eval.describe(), "BoxCrop(margin=0.3, sides=(0.6, 2, 0.6, 0.6)) · Resize((16, 16)) → float32 NCHW");
  // A fixed margin draws nothing: the next draw is the same as without BoxCrop.
  SampleRng a(3, 0, 0), b(3, 0, 0);
  draw_params(eval, 400, 400, a, &t);
  EXPECT_EQ(a.uniform(), b.uniform());
}

TEST(BoxCropTest, TheChainAfterItDrawsInTheCropAndTargetsFollow) {
  const GeometryTargets t = points({{40, 30, 1}, {80, 90, 1}});  // crop (40, 30, 40, 60)
  const TransformSpec spec = parse_transforms("BoxCrop(), RandomResizedCrop(16, scale=(0.2, 0.5))");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SampleRng rng(seed, 0, 0);
    const SampleParams p = draw_params(spec, 200, 100, rng, &t);
    expect_rect(p.subject, 40, 30, 40, 60);
    ASSERT_GE(p.crop.x, 0);
    ASSERT_LE(p.crop.x + p.crop.width, 40);
    ASSERT_LE(p.crop.y + p.crop.height, 60);
    const CropRect box = source_box(spec, p, 200, 100);
    expect_rect(box, 40 + p.crop.x, 30 + p.crop.y, p.crop.width, p.crop.height);
    // The source box's corners land on the output's.
    GeometryTargets corners =
        points({{static_cast<float>(box.x), static_cast<float>(box.y), 1},
                {static_cast<float>(box.x + box.width), static_cast<float>(box.y + box.height), 1}});
    move_targets(spec, {}, p, 200, 100, &corners);
    EXPECT_NEAR(corners.points[0], 0, 1e-4);
    EXPECT_NEAR(corners.points[1], 0, 1e-4);
    EXPECT_NEAR(corners.points[3], 16, 1e-4);
    EXPECT_NEAR(corners.points[4], 16, 1e-4);
  }
}

// The 8 x 8 grey samples of CountingSource (pixel p of sample i is i * 7 + p * 3) with the
// same keypoints each, through the loader's path for one sample.
struct Loaded {
  Status status;
  std::vector<uint8_t> out;
  SampleRecord record;
  GeometryTargets targets;
};

Loaded load_counting(const std::string& chain, std::vector<float> sample_points, int per_sample, uint64_t index = 2) {
  const auto images = std::make_shared<testing::CountingSource>(4);
  std::vector<float> all;
  for (int i = 0; i < 4; ++i) all.insert(all.end(), sample_points.begin(), sample_points.end());
  const auto source = with_geometry(images, all, per_sample, {}, 0);
  const TransformSpec spec = parse_transforms(chain);
  SampleLoader loader(*source, spec, DecodeOptions{});
  Loaded r;
  r.out.resize(spec.sample_bytes());
  r.status = loader.load(index, 1, 0, index, r.out.data());
  if (r.status.ok()) {
    r.record = loader.record();
    loader.take_geometry(&r.targets);
  }
  return r;
}

TEST(BoxCropTest, PastTheImageTheCropHoldsTheFill) {
  // Points (1, 1) and (7, 7): w = h = 6, margin 0.5 puts each edge 3 further: (-2, -2)-(10, 10).
  // Resized to its own 12 x 12, the output is the crop itself, pixel for pixel.
  const Loaded r =
      load_counting("BoxCrop(margin=0.5, fill=9), Resize((12, 12)), Grayscale, ToUint8", {1, 1, 1, 7, 7, 1}, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.reason();
  for (int y = 0; y < 12; ++y) {
    for (int x = 0; x < 12; ++x) {
      const int sx = x - 2, sy = y - 2;
      const bool inside = sx >= 0 && sx < 8 && sy >= 0 && sy < 8;
      const auto expected = static_cast<uint8_t>(inside ? 2 * 7 + (sy * 8 + sx) * 3 : 9);
      ASSERT_EQ(r.out[static_cast<size_t>(y * 12 + x)], expected) << "at " << x << ", " << y;
    }
  }
  // The source's region that became the output, and the points in the output's pixels.
  const CropRect box = source_box(parse_transforms("BoxCrop(), Resize((12, 12))"), r.record.params, 8, 8);
  expect_rect(box, -2, -2, 12, 12);
  EXPECT_EQ(r.targets.points, (std::vector<float>{3, 3, 1, 9, 9, 1}));
}

TEST(BoxCropTest, AOneToOneCropAfterItCopiesFromTheCrop) {
  // RandomCrop(12) of the 12 x 12 crop (the whole of it): the same pixels as above.
  const Loaded r = load_counting("BoxCrop(margin=0.5), RandomCrop(12), Grayscale, ToUint8", {1, 1, 1, 7, 7, 1}, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.reason();
  EXPECT_EQ(r.out[0], 0);               // fill
  EXPECT_EQ(r.out[2 * 12 + 2], 2 * 7);  // source pixel (0, 0)
  EXPECT_EQ(r.out[9 * 12 + 9], 203);    // source pixel (7, 7): 2 * 7 + 63 * 3
  expect_rect(source_box(parse_transforms("BoxCrop(), RandomCrop(12)"), r.record.params, 8, 8), -2, -2, 12, 12);
}

// One JPEG, its keypoints near its bottom-right corner so that the crop reaches past it.
class OneJpeg final : public Source {
 public:
  explicit OneJpeg(std::vector<uint8_t> jpeg) : jpeg_(std::move(jpeg)) {}
  size_t size() const override { return 1; }
  std::string name(size_t) const override { return "face.jpg"; }
  std::string describe() const override { return "one JPEG"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  Status read(size_t, SampleData* out) const override {
    out->bytes = jpeg_;
    out->raw = false;
    return Status::ok_status();
  }

 private:
  std::vector<uint8_t> jpeg_;
  std::vector<std::string> classes_{"face"};
};

TEST(BoxCropTest, AReducedDecodeOfTheCropsWindowMatchesAFullDecode) {
  const auto jpeg = std::make_shared<OneJpeg>(encode_jpeg(testing::make_photo_like(640, 480, 3, 5)));
  // Box (500, 360)-(620, 460), margin 0.3: the crop (464, 330)-(656, 490) reaches past the
  // right and bottom edges. 32 x 32 from its 176 x 150 pixels in the image decodes at a
  // quarter scale.
  const auto source = with_geometry(jpeg, {500, 360, 1, 620, 460, 1}, 2, {}, 0);
  const TransformSpec spec = parse_transforms("BoxCrop(margin=0.3), Resize((32, 32)), ToUint8");
  std::vector<uint8_t> reduced(spec.sample_bytes()), full(spec.sample_bytes());
  SampleLoader windowed(*source, spec, DecodeOptions{});
  ASSERT_TRUE(windowed.load(0, 1, 0, 0, reduced.data()).ok());
  SampleLoader whole(*source, spec, DecodeOptions{.crop_window = false, .dct_scaling = false});
  ASSERT_TRUE(whole.load(0, 1, 0, 0, full.data()).ok());
  expect_rect(windowed.record().params.subject, 464, 330, 192, 160);
  std::vector<float> a(reduced.begin(), reduced.end()), b(full.begin(), full.end());
  const testing::DiffStats d = testing::diff_stats(a, b);
  // The decode contract's bound (decode_resample_tolerance_test.cpp); measured mean 0.79, p99 8.
  EXPECT_LE(d.mean, 1.0) << d.str();
  EXPECT_LE(d.p99, 8.0) << d.str();
  // The last output column and row lie past the image: the fill, in both.
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k < 32; ++k) {
      const size_t plane = static_cast<size_t>(c) * 32 * 32;
      ASSERT_EQ(reduced[plane + static_cast<size_t>(k * 32 + 31)], 0) << "column 31, row " << k;
      ASSERT_EQ(reduced[plane + static_cast<size_t>(31 * 32 + k)], 0) << "row 31, column " << k;
      ASSERT_EQ(full[plane + static_cast<size_t>(k * 32 + 31)], 0);
    }
  }
}

TEST(BoxCropTest, ASampleWithoutABoxIsBadAndSaysWhy) {
  const std::string chain = "BoxCrop(margin=0.5), Resize((8, 8))";
  EXPECT_EQ(load_counting(chain, {kNaN, 1, 1, 3, 3, 0}, 2).status.reason(),
            "BoxCrop has no box to crop around: the sample has no box, and none of its 2 keypoints is visible and "
            "finite; give it a box or keypoints, or leave it out");
  EXPECT_EQ(load_counting(chain, {2, 2, 1, 2, 6, 1}, 2).status.reason(),
            "BoxCrop's box around the keypoints (2, 2, 2, 6) has no area (x2 <= x1 or y2 <= y1); BoxCrop crops around "
            "a box with an area");
  EXPECT_EQ(load_counting(chain, {20, 20, 1, 30, 24, 1}, 2).status.reason(),
            "BoxCrop's box around the keypoints (20, 20, 30, 24) with margin 0.5 makes the crop (x=15, y=18, w=20, "
            "h=8), wholly outside the 8x8 image");
  EXPECT_EQ(load_counting(chain, {0, 0, 1, 10000, 10000, 1}, 2).status.reason(),
            "BoxCrop's box around the keypoints (0, 0, 10000, 10000) with margin 0.5 makes a 20000x20000 crop, more "
            "pixels than 8192x8192");
  // A box: its own words.
  const auto images = std::make_shared<testing::CountingSource>(1);
  const auto boxed = with_geometry(images, {}, 0, {1, kNaN, 5, 5, 1}, 1);
  const TransformSpec spec = parse_transforms(chain);  // the loader keeps a reference to it
  SampleLoader loader(*boxed, spec, DecodeOptions{});
  std::vector<uint8_t> out(spec.sample_bytes());
  EXPECT_EQ(loader.load(0, 1, 0, 0, out.data()).reason(),
            "BoxCrop's box (1, nan, 5, 5) is not finite; give the sample a box of numbers, or leave it out");
  // Through the Loader: a bad sample, named, and substituted.
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = 1;
  options.max_bad_fraction = 0.5;
  options.transform = parse_transforms(chain + ", Grayscale");
  std::vector<float> pts;
  for (int i = 0; i < 4; ++i) pts.insert(pts.end(), {1, 1, 1, 6, i == 1 ? kNaN : 6.0f, 1});
  Loader l(with_geometry(std::make_shared<testing::CountingSource>(4), pts, 2, {}, 0), options);
  l.start_epoch(0);
  while (Batch batch = l.next()) {
  }
  const EpochStats stats = l.epoch_stats();
  ASSERT_EQ(stats.bad_samples.size(), 1U);
  EXPECT_EQ(stats.bad_samples[0].name, "sample-1");
  EXPECT_EQ(stats.bad_samples[0].reason.rfind("BoxCrop's box around the keypoints (1, 1, 1, 1) has no area", 0), 0U)
      << stats.bad_samples[0].reason;
}

TEST(BoxCropTest, RefusedWithoutKeypointsOrBoxesAndWithoutOneSizeAfterIt) {
  LoaderOptions options;
  options.transform = parse_transforms("BoxCrop(margin=0.2), Resize((8, 8))");
  const auto images = std::make_shared<testing::CountingSource>(4);
  EXPECT_EQ(testing::usage_error_text([&] { Loader(images, options); }),
            "BoxCrop crops each sample around its box or keypoints, and counting has neither; give them (keypoints=, "
            "boxes=, or stoker.Keypoints / stoker.Boxes in a Dataset's items), or leave BoxCrop out");
  options.transform = parse_transforms("BoxCrop(margin=0.2)");
  EXPECT_EQ(
      testing::usage_error_text([&] { Loader(with_geometry(images, std::vector<float>(12, 1), 1, {}, 0), options); }),
      "the chain 'BoxCrop(margin=0.2) · none → float32 NCHW' keeps BoxCrop's crops at their own sizes, one per sample; "
      "add Resize((224, 224)) (or another crop) after BoxCrop, so that every sample has one size");
}

// A clip of 16 x 16 grey raw frames, frame t's pixel (x, y) = 10 t + x + 16 y (mod 256) (all
// frames alike with `same`), each frame with its box: boxes[t] (x1, y1, x2, y2; NaN: none).
class BoxedClip final : public Source {
 public:
  // `geometry` false: a clip without boxes (has_geometry), to refuse BoxCrop on.
  BoxedClip(std::vector<std::array<float, 4>> boxes, bool same = false, bool geometry = true)
      : boxes_(std::move(boxes)), same_(same), geometry_(geometry) {}
  size_t size() const override { return 1; }
  std::string name(size_t) const override { return "clip"; }
  std::string describe() const override { return geometry_ ? "one boxed clip" : "one clip"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  bool has_geometry() const override { return geometry_; }
  bool holds_clips() const override { return true; }
  Status read(size_t, SampleData*) const override { return Status::failure("read a clip with read_clip"); }
  Status read_clip(size_t, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    const std::span<const int> chosen = pick(static_cast<int>(boxes_.size()));
    frames->resize(chosen.size());
    for (size_t k = 0; k < chosen.size(); ++k) {
      const auto t = static_cast<size_t>(chosen[k]);
      SampleData& f = (*frames)[k];
      f.storage.resize(16 * 16);
      for (int p = 0; p < 16 * 16; ++p) {
        f.storage[static_cast<size_t>(p)] = static_cast<uint8_t>((same_ ? 0 : 10 * t) + p % 16 + p / 16 * 16);
      }
      f.bytes = f.storage;
      f.raw = true;
      f.raw_width = f.raw_height = 16;
      f.raw_channels = 1;
      f.geometry.clear();
      f.geometry.boxes.assign(boxes_[t].begin(), boxes_[t].end());
      f.geometry.boxes.push_back(1);
    }
    return Status::ok_status();
  }
  std::string frame_name(size_t, int frame) const override { return std::to_string(frame) + " of clip"; }

 private:
  std::vector<std::array<float, 4>> boxes_;
  bool same_;
  bool geometry_;
  std::vector<std::string> classes_{"face"};
};

struct LoadedClip {
  Status status;
  std::vector<uint8_t> out;
  SampleRecord record;
  GeometryTargets targets;
};

LoadedClip load_clip(const Source& source, const std::string& chain, int frames, uint64_t seed = 1) {
  const TransformSpec spec = parse_transforms(chain);
  ClipOptions clip;
  clip.frames = frames;
  SampleLoader loader(source, spec, DecodeOptions{}, nullptr, clip);
  LoadedClip r;
  r.out.resize(spec.sample_bytes() * static_cast<size_t>(frames));
  r.status = loader.load(0, seed, 0, 0, r.out.data());
  if (r.status.ok()) {
    r.record = loader.record();
    loader.take_geometry(&r.targets);
  }
  return r;
}

TEST(BoxCropTest, NearestUsableFrameLendsItsBox) {
  std::vector<int> from;
  const std::vector<int> chosen{3, 5, 7, 9, 11};
  ASSERT_TRUE(nearest_usable_frames(chosen, {false, true, false, false, true}, &from));
  EXPECT_EQ(from, (std::vector<int>{1, 1, 1, 4, 4}));  // frame 7 is as near 5 as 9: the earlier
  ASSERT_TRUE(nearest_usable_frames(chosen, {true, false, false, false, false}, &from));
  EXPECT_EQ(from, (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_FALSE(nearest_usable_frames(chosen, std::vector<bool>(5, false), &from));
}

TEST(BoxCropTest, EachFrameOfAClipIsCroppedAroundItsOwnBox) {
  // Margin 0 and a 4 x 4 box resized to 4 x 4: each frame's output is its box's pixels. Frame 1
  // has no box (NaN) and takes frame 0's, frame 3's the nearest other (frame 2's).
  const BoxedClip clip({{{0, 0, 4, 4}}, {{kNaN, kNaN, kNaN, kNaN}}, {{8, 4, 12, 8}}, {{kNaN, 0, 1, 1}}});
  const LoadedClip r = load_clip(clip, "BoxCrop(margin=0), Resize((4, 4)), Grayscale, ToUint8", 4);
  ASSERT_TRUE(r.status.ok()) << r.status.reason();
  const std::array<std::array<int, 3>, 4> expected{{{0, 0, 0}, {1, 0, 0}, {2, 8, 4}, {3, 8, 4}}};  // t, box x, y
  for (const auto& [t, bx, by] : expected) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) {
        ASSERT_EQ(r.out[static_cast<size_t>(t * 16 + y * 4 + x)], 10 * t + (bx + x) + (by + y) * 16)
            << "frame " << t << " at " << x << ", " << y;
      }
    }
  }
  // return_params' box, per frame; each frame's box moved with its frame (the borrowed crops
  // leave a NaN box NaN, and frame 3's own box (NaN, 0, 1, 1) outside the crop).
  ASSERT_EQ(r.record.frame_boxes.size(), 4U);
  expect_rect(r.record.frame_boxes[0], 0, 0, 4, 4);
  expect_rect(r.record.frame_boxes[1], 0, 0, 4, 4);
  expect_rect(r.record.frame_boxes[2], 8, 4, 4, 4);
  expect_rect(r.record.frame_boxes[3], 8, 4, 4, 4);
  ASSERT_EQ(r.targets.boxes.size(), 4U * 5);
  EXPECT_EQ(std::vector<float>(r.targets.boxes.begin(), r.targets.boxes.begin() + 5),
            (std::vector<float>{0, 0, 4, 4, 1}));
  EXPECT_EQ(std::vector<float>(r.targets.boxes.begin() + 10, r.targets.boxes.begin() + 15),
            (std::vector<float>{0, 0, 4, 4, 1}));
}

TEST(BoxCropTest, AClipDrawsOneMarginAndOneSetOfDrawsForAllItsFrames) {
  // Identical frames with identical boxes, a margin range, a flip and a crop after the Resize:
  // every frame's output is the same, for any seed.
  const BoxedClip clip({{{3, 4, 9, 12}}, {{3, 4, 9, 12}}, {{3, 4, 9, 12}}}, true);
  const std::string chain =
      "BoxCrop(margin=(0.1, 0.6)), Resize((10, 10)), RandomCrop(8), RandomHorizontalFlip(), Grayscale, ToUint8";
  std::set<double> widths;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const LoadedClip r = load_clip(clip, chain, 3, seed);
    ASSERT_TRUE(r.status.ok()) << r.status.reason();
    for (size_t k = 1; k < 3; ++k) {
      ASSERT_TRUE(std::equal(r.out.begin(), r.out.begin() + 64, r.out.begin() + static_cast<std::ptrdiff_t>(k * 64)))
          << "seed " << seed << ", frame " << k;
      EXPECT_EQ(r.record.frame_boxes[k].width, r.record.frame_boxes[0].width);
    }
    widths.insert(r.record.params.subject.width);
  }
  EXPECT_GT(widths.size(), 1U);  // the margin is drawn, per clip
}

TEST(BoxCropTest, UnionCropsEveryFrameOfAClipAroundOneBox) {
  // Boxes (0, 0)-(4, 4), none, (8, 4)-(12, 8): their union (0, 0)-(12, 8) for every frame, its
  // pixels 1:1 (Resize to its own 12 x 8), with no Resize((h, w)) needed.
  const BoxedClip clip({{{0, 0, 4, 4}}, {{kNaN, kNaN, kNaN, kNaN}}, {{8, 4, 12, 8}}});
  const LoadedClip r = load_clip(clip, "BoxCrop(union=True), Resize((8, 12)), Grayscale, ToUint8", 3);
  ASSERT_TRUE(r.status.ok()) << r.status.reason();
  for (int t = 0; t < 3; ++t) {
    expect_rect(r.record.frame_boxes[static_cast<size_t>(t)], 0, 0, 12, 8);
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 12; ++x) {
        ASSERT_EQ(r.out[static_cast<size_t>(t * 96 + y * 12 + x)], 10 * t + x + y * 16) << t << ": " << x << ", " << y;
      }
    }
  }
  EXPECT_EQ(parse_transforms("BoxCrop(margin=0.1, union=True), RandomResizedCrop(8)")
                .describe()
                .rfind("BoxCrop(margin=0.1, union=True) · RandomResizedCrop(8)", 0),
            0U);
  LoaderOptions options;
  options.transform = parse_transforms("BoxCrop(union=True), Resize((8, 8))");
  const auto images = std::make_shared<testing::CountingSource>(4);
  EXPECT_EQ(
      testing::usage_error_text([&] { Loader(with_geometry(images, {}, 0, std::vector<float>(20, 1), 1), options); }),
      "BoxCrop(union=True) crops the frames of a clip around the union of their boxes, and these samples are "
      "single images (no frames_per_clip); leave union out");
}

TEST(BoxCropTest, AClipWithoutAnyBoxIsBadAndAnyGeometryMayFollow) {
  const BoxedClip clip({{{kNaN, 0, 4, 4}}, {{2, 2, 2, 6}}});
  EXPECT_EQ(load_clip(clip, "BoxCrop(margin=0.5), Resize((4, 4))", 2).status.reason(),
            "BoxCrop has no box to crop the clip around: none of its 2 chosen frames has a usable one (frame 0 of "
            "clip: BoxCrop's box (nan, 0, 4, 4) is not finite; give the sample a box of numbers, or leave it out)");
  LoaderOptions options;
  options.clip.frames = 2;
  const auto boxed = std::make_shared<BoxedClip>(std::vector<std::array<float, 4>>{{{0, 0, 4, 4}}});
  for (const char* chain :  // each frame's crop its own size: the chain after BoxCrop takes it as it comes
       {"BoxCrop(margin=0.2), Resize(8), CenterCrop(8)", "BoxCrop(margin=0.2), RandomResizedCrop(8)"}) {
    options.transform = parse_transforms(chain);
    EXPECT_EQ(testing::usage_error_text([&] { Loader(boxed, options); }), "<no UsageError>") << chain;
  }
  options.transform = parse_transforms("BoxCrop(margin=0.2), Resize((8, 8))");
  const auto unboxed = std::make_shared<BoxedClip>(std::vector<std::array<float, 4>>{{{0, 0, 4, 4}}}, false, false);
  EXPECT_EQ(testing::usage_error_text([&] { Loader(unboxed, options); }),
            "BoxCrop crops each sample around its box or keypoints, and one clip has neither; give them (boxes= or "
            "keypoints= with a row per frame, or stoker.Boxes (T, 4) or stoker.Keypoints (T, P, 2) beside a "
            "Dataset's clips), or leave BoxCrop out");
}

TEST(BoxCropTest, BadArgumentsAreRefusedInOneLine) {
  const auto error = [](const char* chain) { return testing::usage_error_text([&] { parse_transforms(chain); }); };
  EXPECT_EQ(error("BoxCrop(margin=-0.1)"),
            "BoxCrop margin must be a finite k >= 0 or a range 0 <= min <= max (got -0.1); Hopenet's is (0.2, 0.4)");
  EXPECT_EQ(error("BoxCrop(margin=(0.4, 0.2))"),
            "BoxCrop margin must be a finite k >= 0 or a range 0 <= min <= max (got (0.4, 0.2)); Hopenet's is (0.2, "
            "0.4)");
  EXPECT_EQ(error("BoxCrop(sides=(1, 2, 3))"),
            "BoxCrop sides must be one factor or four, (left, top, right, bottom) (got '(1, 2, 3)'); Hopenet's are "
            "(0.6, 2, 0.6, 0.6)");
  EXPECT_EQ(error("BoxCrop(sides=(1, -2, 1, 1))"),
            "BoxCrop sides must be finite factors >= 0 (got (1, -2, 1, 1)); Hopenet's are (0.6, 2, 0.6, 0.6)");
  EXPECT_EQ(error("BoxCrop(fill=300)"), "BoxCrop fill must be pixel values in [0, 255] (got 300)");
  EXPECT_EQ(error("BoxCrop(), BoxCrop()"), "BoxCrop appears twice in the transform chain");
  // It reads back as described.
  const TransformSpec spec =
      parse_transforms("T.BoxCrop(margin=[0.2, 0.4], sides=0.5, fill=(1, 2, 3)), Resize((8, 8))");
  EXPECT_EQ(spec.describe(), "BoxCrop(margin=(0.2, 0.4), sides=0.5, fill=(1, 2, 3)) · Resize((8, 8)) → float32 NCHW");
  EXPECT_EQ(parse_transforms(spec.describe()).describe(), spec.describe());
}

}  // namespace box_crop
}  // namespace
}  // namespace stoker::data
