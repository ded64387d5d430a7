// The chroma subsamplings, declared once (stoker/data/chroma_subsampling.h): the encoder writes
// each with its declared factors, the decoder reads each back as itself, and its name finds it.
#include "stoker/data/chroma_subsampling.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "data/decode/jpeg_decoder.h"
#include "data/decode/jpeg_layout.h"
#include "stoker/data/encode.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

JpegLayout layout_of(const std::vector<uint8_t>& jpeg) {
  JpegDecoder decoder;
  JpegLayout layout;
  decoder.read_layout(jpeg, &layout);
  return layout;
}

TEST(ChromaSubsamplingTest, EachEncodesWithItsFactorsAndReadsBackAsItself) {
  const Image rgb = testing::make_photo_like(48, 40, 3);
  ASSERT_EQ(chroma_subsamplings().size(), 6u);
  for (const ChromaSubsamplingDeclaration& d : chroma_subsamplings()) {
    for (const bool progressive : {false, true}) {
      const JpegLayout layout = layout_of(encode_jpeg(rgb, {.progressive = progressive, .subsampling = d.subsampling}));
      EXPECT_EQ(layout.h_samp[0], d.h_samp) << d.name;
      EXPECT_EQ(layout.v_samp[0], d.v_samp) << d.name;
      EXPECT_EQ(chroma_subsampling_of(layout), d.subsampling) << d.name;
    }
    EXPECT_EQ(chroma_subsampling_named(d.name), d.subsampling) << d.name;
  }
  EXPECT_EQ(chroma_subsamplings()[2].name, "4:2:0");
}

TEST(ChromaSubsamplingTest, GrayOtherFactorsAndUnknownNamesAreNone) {
  EXPECT_EQ(chroma_subsampling_of(layout_of(encode_jpeg(testing::make_photo_like(48, 40, 1)))), std::nullopt);
  JpegLayout odd = layout_of(encode_jpeg(testing::make_photo_like(48, 40, 3)));
  odd.h_samp[0] = 3;  // 3x1 luma: no declared subsampling
  EXPECT_EQ(chroma_subsampling_of(odd), std::nullopt);
  odd.h_samp = {2, 2, 1, 0};  // Cb 2x1
  EXPECT_EQ(chroma_subsampling_of(odd), std::nullopt);
  EXPECT_EQ(chroma_subsampling_named("4:2:1"), std::nullopt);
  EXPECT_EQ(chroma_subsampling_named("420"), std::nullopt);
}

}  // namespace
}  // namespace stoker::data
