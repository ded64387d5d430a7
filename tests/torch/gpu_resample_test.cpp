// resample_with_taps (the resample of GPU-decoded windows): with the tables the loader's
// workers build (data::filter_taps), its uint8 output equals the CPU path's resample of the
// same window and box to the bit, for batches of windows of several sizes, random boxes, both
// flips, both filters, RGB and grey to RGB; a bad argument is one UsageError line. On the CPU
// here; the same code runs on a GPU.
#include "train/torch/step/gpu_resample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "data/transform/resample.h"
#include "data/transform/u8_cast.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/test_images.h"

namespace stoker::train {
namespace gpu_resample_test {

using data::CropRect;
using data::FilterTaps;
using data::Image;
using data::ResampleFilter;

// One sample as the workers leave it: its window (what nvJPEG decodes), the box the CPU path
// resamples, the flips drawn, and the tables built from them as sample_loader.cpp builds them.
struct Sample {
  Image window;
  CropRect box;
  bool hflip = false, vflip = false;
  FilterTaps columns, rows;
};

struct Case {
  ResampleFilter filter = ResampleFilter::kBilinear;
  bool clamp = false;  // RandomResizedCrop keeps the taps inside the box
  int channels = 3;    // of the windows
  int out_channels = 3;
  int out_w = 40, out_h = 32;
  bool same_size = false;  // all windows one size
};

std::vector<Sample> make_samples(const Case& c, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  std::vector<Sample> samples(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Sample& s = samples[static_cast<size_t>(i)];
    const int w = c.same_size ? 61 : 23 + static_cast<int>(rng() % 90);
    const int h = c.same_size ? 47 : 17 + static_cast<int>(rng() % 80);
    s.window = testing::make_photo_like(w, h, c.channels, seed * 31 + static_cast<uint32_t>(i));
    // From a small box (enlarged) to the whole window (reduced), fractional edges.
    s.box.width = uniform(0.15, 1.0) * w;
    s.box.height = uniform(0.15, 1.0) * h;
    s.box.x = uniform(0, w - s.box.width);
    s.box.y = uniform(0, h - s.box.height);
    s.hflip = (rng() & 1) != 0;
    s.vflip = (rng() & 1) != 0;
    data::filter_taps(w, s.box.x, s.box.width, c.out_w, c.clamp, s.hflip, c.filter, &s.columns);
    data::filter_taps(h, s.box.y, s.box.height, c.out_h, c.clamp, s.vflip, c.filter, &s.rows);
  }
  return samples;
}

// The CPU path's uint8 planes of one sample (SampleTransformer::run): resample_region, the
// vertical flip as a reversal of the rows, round_half_up_u8, a grey plane written to each of
// out_channels.
std::vector<uint8_t> cpu_planes(const Sample& s, const Case& c) {
  data::ResampleOptions options;
  options.filter = c.filter;
  options.flip = s.hflip;
  options.clamp_to_region = c.clamp;
  options.planar = true;
  std::vector<float> planes, scratch;
  data::resample_region(&planes, &scratch, s.window, s.box, c.out_w, c.out_h, options);
  const size_t plane = static_cast<size_t>(c.out_w) * c.out_h;
  std::vector<uint8_t> out(plane * c.out_channels);
  for (int ch = 0; ch < c.out_channels; ++ch) {
    const size_t from = static_cast<size_t>(std::min(ch, c.channels - 1)) * plane;
    for (int y = 0; y < c.out_h; ++y) {
      const int src_y = s.vflip ? c.out_h - 1 - y : y;
      for (int x = 0; x < c.out_w; ++x) {
        out[ch * plane + static_cast<size_t>(y) * c.out_w + x] =
            data::round_half_up_u8(planes[from + static_cast<size_t>(src_y) * c.out_w + x]);
      }
    }
  }
  return out;
}

torch::Tensor window_tensor(const Image& image) {
  return torch::from_blob(const_cast<uint8_t*>(image.data()), {image.height(), image.width(), image.channels()},
                          torch::kUInt8)
      .clone();
}

TapTensors taps_of(const std::vector<Sample>& samples) {
  std::vector<const FilterTaps*> columns, rows;
  for (const Sample& s : samples) {
    columns.push_back(&s.columns);
    rows.push_back(&s.rows);
  }
  return tap_tensors(data::pad_taps(columns), data::pad_taps(rows));
}

std::vector<torch::Tensor> windows_of(const std::vector<Sample>& samples) {
  std::vector<torch::Tensor> windows;
  for (const Sample& s : samples) windows.push_back(window_tensor(s.window));
  return windows;
}

std::string name_of(const Case& c) {
  return std::string(data::to_string(c.filter)) + (c.clamp ? " clamped" : "") + " " + std::to_string(c.channels) +
         "->" + std::to_string(c.out_channels) + " channels " + std::to_string(c.out_w) + "x" +
         std::to_string(c.out_h) + (c.same_size ? " same-size windows" : "");
}

// Resamples `n` samples of `c` into an NHWC-strided out and compares each with the CPU path's.
void expect_cpu_pixels(const Case& c, int n, uint32_t seed) {
  const std::vector<Sample> samples = make_samples(c, n, seed);
  // Any strides: an NCHW view of NHWC memory.
  torch::Tensor out = torch::full({n, c.out_h, c.out_w, c.out_channels}, 7, torch::kUInt8).permute({0, 3, 1, 2});
  resample_with_taps(windows_of(samples), taps_of(samples), c.filter == ResampleFilter::kBicubic, out);
  for (int i = 0; i < n; ++i) {
    const torch::Tensor got = out[i].contiguous();
    const std::vector<uint8_t> want = cpu_planes(samples[static_cast<size_t>(i)], c);
    ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
    const uint8_t* g = got.data_ptr<uint8_t>();
    const auto [first, _] = std::mismatch(want.begin(), want.end(), g);
    EXPECT_TRUE(first == want.end()) << name_of(c) << ", sample " << i << " of " << n << ": pixel "
                                     << (first - want.begin()) << " is " << static_cast<int>(g[first - want.begin()])
                                     << ", the CPU path's " << static_cast<int>(*first);
  }
}

TEST(GpuResampleTest, EqualsTheCpuPathToTheBit) {
  uint32_t seed = 1;
  for (const ResampleFilter filter : {ResampleFilter::kBilinear, ResampleFilter::kBicubic}) {
    for (const bool clamp : {false, true}) {
      for (const int channels : {3, 1}) {
        Case c;
        c.filter = filter;
        c.clamp = clamp;
        c.channels = channels;
        c.out_channels = 3;
        c.out_w = 56;
        c.out_h = 44;
        // 9 samples: passes of 4, 4 and 1 on the CPU.
        expect_cpu_pixels(c, 9, seed++);
      }
    }
  }
}

TEST(GpuResampleTest, EqualsTheCpuPathForOneSizeOfWindowAndGreyToGrey) {
  Case same;
  same.same_size = true;
  same.filter = ResampleFilter::kBicubic;
  same.out_w = 24;
  same.out_h = 56;
  expect_cpu_pixels(same, 5, 11);
  Case grey;
  grey.channels = 1;
  grey.out_channels = 1;
  grey.clamp = true;
  expect_cpu_pixels(grey, 3, 12);
}

// Empty batches and outputs are no work.
TEST(GpuResampleTest, NothingToWriteIsNoWork) {
  const TapTensors none{torch::empty({0, 40, 1}, torch::kInt32), torch::empty({0, 40, 1}),
                        torch::empty({0, 32, 1}, torch::kInt32), torch::empty({0, 32, 1})};
  EXPECT_NO_THROW(resample_with_taps({}, none, false, torch::empty({0, 3, 32, 40}, torch::kUInt8)));
}

class GpuResampleErrorTest : public ::testing::Test {
 protected:
  Case c;
  std::vector<Sample> samples = make_samples(c, 2, 5);
  std::vector<torch::Tensor> windows = windows_of(samples);
  TapTensors taps = taps_of(samples);
  torch::Tensor out = torch::empty({2, 3, c.out_h, c.out_w}, torch::kUInt8);

  std::string error(const std::vector<torch::Tensor>& w, const TapTensors& t, const torch::Tensor& o) {
    return testing::usage_error_text([&] { resample_with_taps(w, t, false, o); });
  }
};

TEST_F(GpuResampleErrorTest, AFloatOutIsRefused) {
  EXPECT_EQ(error(windows, taps, out.to(torch::kFloat32)),
            "resample_with_taps: out is a (2, 3, 32, 40) float32 tensor on cpu; the resample writes a (N, C, H, W) "
            "uint8 tensor");
}

TEST_F(GpuResampleErrorTest, OneWindowPerSample) {
  EXPECT_EQ(error({windows[0]}, taps, out),
            "resample_with_taps: 1 windows for an out of 2 samples; give one window per sample");
}

TEST_F(GpuResampleErrorTest, TablesOfAnotherOutputSizeAreRefused) {
  TapTensors narrow = taps;
  narrow.column_index = taps.column_index.slice(1, 0, 39);
  narrow.column_weight = taps.column_weight.slice(1, 0, 39);
  EXPECT_EQ(error(windows, narrow, out),
            "resample_with_taps: columns must be (index, weight) of shape (2, 40, taps >= 1); got (2, 39, " +
                std::to_string(taps.column_index.size(2)) + ") and (2, 39, " +
                std::to_string(taps.column_index.size(2)) + ")");
}

TEST_F(GpuResampleErrorTest, WindowsAreUint8OfOneChannelCountOnOutsDevice) {
  EXPECT_EQ(error({windows[0], windows[1].to(torch::kFloat32)}, taps, out).find("window 1 is a ("), 20u);
  EXPECT_NE(error({windows[0], windows[1].index({"...", torch::indexing::Slice(0, 1)})}, taps, out)
                .find("window 1 has 1 channels; windows have 1 or 3, all the same"),
            std::string::npos);
  EXPECT_NE(error(windows, taps, torch::empty({2, 2, c.out_h, c.out_w}, torch::kUInt8))
                .find("out has 2 channels and the windows 3; out needs 3"),
            std::string::npos);
}

TEST_F(GpuResampleErrorTest, TablesAreInt32OrInt64AndFloat32) {
  TapTensors doubles = taps;
  doubles.row_weight = taps.row_weight.to(torch::kFloat64);
  EXPECT_NE(error(windows, doubles, out).find("rows are int32 index and float64 weight"), std::string::npos)
      << error(windows, doubles, out);
}

}  // namespace gpu_resample_test
}  // namespace stoker::train
