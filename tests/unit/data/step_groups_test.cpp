// RandomChoice and RandomOrder over the chain's steps: the member or order drawn per sample
// (random_params.cpp), members that were not chosen draw nothing, RandomOrder's members run in
// the drawn order (each order's result computed by hand), and what they refuse.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

TransformSpec chain(const std::string& text) {
  TransformSpec spec = parse_transforms(text + ", ToUint8");
  spec.out_width = 4;
  spec.out_height = 2;
  return spec;
}

// A 4 x 2 grey image, every pixel 100.
std::vector<uint8_t> run(const TransformSpec& spec, uint64_t index, SampleParams* drawn = nullptr) {
  DecodedImage d;
  d.image.reshape(4, 2, 1);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 4; ++x) d.image.row(y)[x] = 100;
  }
  d.crop = {0, 0, 4, 2};
  SampleRng rng(11, 0, index);
  const SampleParams params = draw_params(spec, 4, 2, rng);
  if (drawn != nullptr) *drawn = params;
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), d, params, spec);
  return out;
}

TEST(StepGroupsTest, RandomChoicePicksByWeight) {
  const TransformSpec spec = chain("Grayscale, RandomChoice([RandomInvert(1.0), RandomPosterize(1, p=1.0)], p=[1, 3])");
  std::map<int, int> picked;
  for (uint64_t i = 0; i < 4000; ++i) {
    SampleParams p;
    const std::vector<uint8_t> out = run(spec, i, &p);
    ++picked[p.chosen];
    // invert: 255 - 100 = 155; posterize to 1 bit: 100 & 0x80 = 0.
    const uint8_t expected = p.chosen == static_cast<uint8_t>(Step::kInvert) ? 155 : 0;
    ASSERT_EQ(out, std::vector<uint8_t>(8, expected)) << i;
    ASSERT_EQ(p.color_ops, p.chosen == static_cast<uint8_t>(Step::kInvert) ? 1 : 2) << i;
  }
  EXPECT_EQ(picked.size(), 2U);
  EXPECT_NEAR(picked[static_cast<int>(Step::kPosterize)] / 4000.0, 0.75, 0.03);
}

TEST(StepGroupsTest, MembersNotChosenDrawNothing) {
  // A zero weight is never chosen; the chain then draws exactly what it would without that member.
  const TransformSpec with = chain("RandomChoice([GaussianBlur(3), RandomRotation(30)], p=[0, 1]), ColorJitter(0.4)");
  const TransformSpec without = chain("RandomChoice([RandomRotation(30)]), ColorJitter(0.4)");
  for (uint64_t i = 0; i < 50; ++i) {
    SampleRng a(1, 0, i), b(1, 0, i);
    const SampleParams pa = draw_params(with, 4, 2, a);
    const SampleParams pb = draw_params(without, 4, 2, b);
    ASSERT_EQ(pa.blur_sigma, 0.0f);
    ASSERT_TRUE(pa.rotate);
    ASSERT_EQ(pa.angle, pb.angle);
    ASSERT_EQ(pa.brightness, pb.brightness);
  }
}

TEST(StepGroupsTest, RandomOrderRunsItsMembersInTheDrawnOrder) {
  // Invert then posterize: 155 -> 128; posterize then invert: 0 -> 255.
  const TransformSpec spec = chain("Grayscale, RandomOrder([RandomPosterize(1, p=1.0), RandomInvert(1.0)])");
  std::set<int> seen;
  for (uint64_t i = 0; i < 200; ++i) {
    SampleParams p;
    const std::vector<uint8_t> out = run(spec, i, &p);
    ASSERT_EQ(p.order_size, 2);
    const bool invert_first = p.order[0] == static_cast<uint8_t>(Step::kInvert);
    ASSERT_EQ(out, std::vector<uint8_t>(8, invert_first ? 128 : 255)) << i;
    seen.insert(invert_first ? 1 : 0);
  }
  EXPECT_EQ(seen.size(), 2U);
  // Without RandomOrder the fixed order is invert, then posterize.
  EXPECT_EQ(run(chain("Grayscale, RandomPosterize(1, p=1.0), RandomInvert(1.0)"), 0), std::vector<uint8_t>(8, 128));
}

TEST(StepGroupsTest, DescribesInStepOrderAndReadsBack) {
  const TransformSpec spec = parse_transforms(
      "RandomChoice([RandomInvert(1.0), GaussianBlur(3)], p=[0.75, 0.25]), RandomOrder([ColorJitter("
      "0.4), RandomRotation(10)])");
  const std::string text = spec.describe();
  EXPECT_EQ(text,
            "none \xC2\xB7 RandomChoice([GaussianBlur(3, sigma=(0.1, 2)), RandomInvert(p=1)], p=[0.25, 0.75]) \xC2\xB7 "
            "RandomOrder([RandomRotation(10), ColorJitter(brightness=0.4)]) \xE2\x86\x92 float32 NCHW");
  EXPECT_EQ(parse_transforms(text).describe(), text);
  const TransformSpec eval = eval_transform(spec);
  EXPECT_FALSE(eval.choice.enabled());
  EXPECT_FALSE(eval.order.enabled());
  EXPECT_EQ(eval.describe(), "none \xE2\x86\x92 float32 NCHW");
}

TEST(StepGroupsTest, RefusesWhatItCannotHold) {
  using stoker::testing::usage_error_text;
  EXPECT_NE(usage_error_text([] {
              parse_transforms("RandomChoice([Resize(32), CenterCrop(32)])");
            }).find("RandomChoice takes ColorJitter, GaussianBlur, RandomRotation"),
            std::string::npos);
  EXPECT_EQ(usage_error_text([] { parse_transforms("RandomChoice([GaussianBlur(3)], p=[0.5, 0.5])"); }),
            "RandomChoice p must be a list of one weight per transform (1 here) (got '[0.5, 0.5]')");
  EXPECT_EQ(usage_error_text([] { parse_transforms("RandomChoice([GaussianBlur(3), GaussianBlur(5)])"); }),
            "GaussianBlur appears twice in the transform chain");
  EXPECT_EQ(usage_error_text([] {
              parse_transforms("RandomChoice([GaussianBlur(3)]), RandomOrder([GaussianBlur(3), RandomInvert()])");
            }),
            "GaussianBlur is in both RandomChoice and RandomOrder; give it to one");
  EXPECT_EQ(usage_error_text([] { parse_transforms("RandomOrder([ColorJitter(), RandomInvert()])"); }),
            "ColorJitter changes nothing as written ('ColorJitter()'); leave it out of RandomOrder");
  EXPECT_EQ(usage_error_text([] { parse_transforms("RandomChoice([GaussianBlur(3), RandomInvert()], p=[0, 0])"); }),
            "RandomChoice p must have a positive, finite sum (got 0)");
  EXPECT_NE(usage_error_text([] {
              parse_transforms("RandomChoice([RandomApply([GaussianBlur(3)])])");
            }).find("RandomChoice takes"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
