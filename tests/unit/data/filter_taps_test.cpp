// filter_taps: a resample summed from its taps, in tap order, one multiply and one add a tap (as
// the GPU path sums them), equals resample_region's output to the bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "data/transform/resample.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/image.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/test_images.h"

namespace stoker::data {
namespace filter_taps_test {

// Horizontal pass over every row, then vertical, interleaved HWC floats; bicubic clamps each
// pass to [0, 255] as the resampler does.
std::vector<float> resample_with_taps(const Image& src, const FilterTaps& columns, const FilterTaps& rows, int out_w,
                                      int out_h, bool clamp) {
  const int c = src.channels();
  std::vector<float> across(static_cast<size_t>(src.height()) * out_w * c);
  for (int y = 0; y < src.height(); ++y) {
    for (int o = 0; o < out_w; ++o) {
      for (int ch = 0; ch < c; ++ch) {
        float acc = 0;
        for (int k = 0; k < columns.taps; ++k) {
          const size_t t = static_cast<size_t>(o) * columns.taps + k;
          const float product = columns.weight[t] * static_cast<float>(src.row(y)[columns.index[t] * c + ch]);
          acc = k == 0 ? product : acc + product;
        }
        across[(static_cast<size_t>(y) * out_w + o) * c + ch] = clamp ? std::clamp(acc, 0.0f, 255.0f) : acc;
      }
    }
  }
  std::vector<float> out(static_cast<size_t>(out_h) * out_w * c);
  for (int o = 0; o < out_h; ++o) {
    for (size_t i = 0; i < static_cast<size_t>(out_w) * c; ++i) {
      float acc = 0;
      for (int k = 0; k < rows.taps; ++k) {
        const size_t t = static_cast<size_t>(o) * rows.taps + k;
        const float product = rows.weight[t] * across[static_cast<size_t>(rows.index[t]) * out_w * c + i];
        acc = k == 0 ? product : acc + product;
      }
      out[static_cast<size_t>(o) * out_w * c + i] = clamp ? std::clamp(acc, 0.0f, 255.0f) : acc;
    }
  }
  return out;
}

TEST(FilterTapsTest, ResamplingFromTheTapsEqualsResampleRegionToTheBit) {
  const Image src = testing::make_photo_like(157, 113, 3, 5);
  struct Case {
    CropRect box;
    int out_w, out_h;
  };
  const Case cases[] = {
      {{10.25, 7.5, 120.5, 90.75}, 48, 40},  // reduced: widened taps
      {{0, 0, 157, 113}, 157, 113},          // the identity
      {{30.5, 20.25, 20, 15.5}, 64, 48},     // enlarged
      {{100.75, 50, 56.25, 63}, 24, 31},     // against the right and bottom edges
  };
  for (const Case& c : cases) {
    for (const ResampleFilter filter : {ResampleFilter::kBilinear, ResampleFilter::kBicubic}) {
      for (const bool clamp : {false, true}) {
        for (const bool flip : {false, true}) {
          ResampleOptions options;
          options.filter = filter;
          options.clamp_to_region = clamp;
          options.flip = flip;
          std::vector<float> want, scratch;
          resample_region(&want, &scratch, src, c.box, c.out_w, c.out_h, options);
          FilterTaps columns, rows;
          filter_taps(src.width(), c.box.x, c.box.width, c.out_w, clamp, flip, filter, &columns);
          filter_taps(src.height(), c.box.y, c.box.height, c.out_h, clamp, false, filter, &rows);
          for (const int i : columns.index) ASSERT_TRUE(i >= 0 && i < src.width());
          for (const int i : rows.index) ASSERT_TRUE(i >= 0 && i < src.height());
          const std::vector<float> got =
              resample_with_taps(src, columns, rows, c.out_w, c.out_h, filter == ResampleFilter::kBicubic);
          ASSERT_EQ(got.size(), static_cast<size_t>(c.out_w) * c.out_h * 3);
          EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()))
              << "box " << c.box.x << "," << c.box.y << " " << c.out_w << "x" << c.out_h << " bicubic "
              << (filter == ResampleFilter::kBicubic) << " clamp " << clamp << " flip " << flip;
        }
      }
    }
  }
}

TEST(FilterTapsTest, AMirrorListsTheOutputsInReverse) {
  FilterTaps plain, mirrored;
  filter_taps(100, 10.5, 70, 20, false, false, ResampleFilter::kBilinear, &plain);
  filter_taps(100, 10.5, 70, 20, false, true, ResampleFilter::kBilinear, &mirrored);
  ASSERT_EQ(plain.taps, mirrored.taps);
  for (int o = 0; o < 20; ++o) {
    for (int k = 0; k < plain.taps; ++k) {
      EXPECT_EQ(plain.weight[o * plain.taps + k], mirrored.weight[(19 - o) * plain.taps + k]);
      EXPECT_EQ(plain.index[o * plain.taps + k], mirrored.index[(19 - o) * plain.taps + k]);
    }
  }
}

TEST(FilterTapsTest, PaddedTapsKeepEachSamplesTapsInOrderThenZeros) {
  FilterTaps wide, narrow;
  filter_taps(300, 0, 300, 20, false, false, ResampleFilter::kBicubic, &wide);   // reduced 15x: many taps
  filter_taps(30, 2.5, 10, 20, true, true, ResampleFilter::kBilinear, &narrow);  // enlarged: 2 or 3
  ASSERT_GT(wide.taps, narrow.taps);
  const FilterTaps* axes[] = {&narrow, &wide};
  const PaddedTaps p = pad_taps(axes);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.out_size, 20);
  EXPECT_EQ(p.taps, wide.taps);
  ASSERT_EQ(p.index.size(), 2u * 20 * wide.taps);
  ASSERT_EQ(p.weight.size(), p.index.size());
  for (int s = 0; s < 2; ++s) {
    const FilterTaps& a = *axes[s];
    for (int o = 0; o < 20; ++o) {
      for (int k = 0; k < p.taps; ++k) {
        const size_t at = (static_cast<size_t>(s) * 20 + o) * p.taps + k;
        EXPECT_EQ(p.index[at], k < a.taps ? a.index[o * a.taps + k] : 0);
        EXPECT_EQ(p.weight[at], k < a.taps ? a.weight[o * a.taps + k] : 0.0f);
      }
    }
  }
  const PaddedTaps none = pad_taps({});
  EXPECT_EQ(none.n, 0);
  EXPECT_EQ(none.out_size, 0);
  EXPECT_EQ(none.taps, 1);
}

TEST(FilterTapsTest, PaddingTablesOfTwoOutputSizesIsOneLine) {
  FilterTaps a, b;
  filter_taps(50, 0, 50, 20, false, false, ResampleFilter::kBilinear, &a);
  filter_taps(50, 0, 50, 21, false, false, ResampleFilter::kBilinear, &b);
  const FilterTaps* axes[] = {&a, &b};
  EXPECT_EQ(testing::usage_error_text([&] { pad_taps(axes); }),
            "pad_taps: the tables have 20 and 21 outputs; pad tables of one output size");
}

}  // namespace filter_taps_test
}  // namespace stoker::data
