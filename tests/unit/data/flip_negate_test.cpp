// flip_negate: the float targets a horizontal flip negates (a head pose's yaw and roll) are
// negated exactly for the samples the flip mirrored, the others kept; indices the source does
// not have, and class ids, are refused.
#include <gtest/gtest.h>

#include <string>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

namespace flip_negate_test {

using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

constexpr int kSamples = 16;

// path,yaw,pitch,roll with yaw = i + 1, pitch = 10 (i + 1), roll = 100 (i + 1).
std::shared_ptr<const Source> make_poses(const TempDir& dir) {
  std::string csv = "path,yaw,pitch,roll\n";
  for (int i = 0; i < kSamples; ++i) {
    const std::string name = std::to_string(i) + ".jpg";
    dir.write(name, encode_jpeg(stoker::testing::make_photo_like(24, 20, 3, static_cast<uint32_t>(i + 1))));
    csv += name + "," + std::to_string(i + 1) + "," + std::to_string(10 * (i + 1)) + "," +
           std::to_string(100 * (i + 1)) + "\n";
  }
  return open_file_list(dir.write_text("poses.csv", csv));
}

LoaderOptions options(std::vector<int> flip_negate) {
  LoaderOptions o;
  o.batch_size = kSamples;
  o.workers = 2;
  o.prefetch = 2;
  o.sampler.shuffle = false;
  o.transform = parse_transforms("Resize((8, 8)), RandomHorizontalFlip(0.5)");
  o.target_geometry.flip_negate = std::move(flip_negate);
  return o;
}

TEST(FlipNegateTest, AFlippedSamplesNamedTargetsAreNegatedAndNoOthers) {
  TempDir dir;
  Loader loader(make_poses(dir), options({0, 2}));
  int flipped = 0;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    loader.start_epoch(epoch);
    Batch batch = loader.next();
    ASSERT_TRUE(batch);
    for (int s = 0; s < batch.size(); ++s) {
      const auto i = static_cast<float>(batch.indices()[s] + 1);
      const float sign = batch.record(s).params.flip ? -1.0f : 1.0f;
      flipped += batch.record(s).params.flip;
      const float* t = batch.targets() + 3 * s;
      EXPECT_EQ(t[0], sign * i) << "yaw, slot " << s;
      EXPECT_EQ(t[1], 10 * i) << "pitch is kept";
      EXPECT_EQ(t[2], sign * 100 * i) << "roll, slot " << s;
    }
  }
  EXPECT_GT(flipped, 5);  // both kinds were seen
  EXPECT_LT(flipped, 3 * kSamples - 5);
}

TEST(FlipNegateTest, IndicesPastTheTargetsAndClassIdsAreRefused) {
  TempDir dir;
  const auto poses = make_poses(dir);
  EXPECT_NE(usage_error_text([&] { Loader(poses, options({3})); }).find("flip_negate names target 3, and"),
            std::string::npos);
  dir.write_text("classes.csv", "0.jpg,1\n1.jpg,0\n");
  const std::shared_ptr<const Source> classes = open_file_list(dir.path() / "classes.csv");
  EXPECT_NE(usage_error_text([&] { Loader(classes, options({0})); }).find("has class ids; leave it out"),
            std::string::npos);
}

}  // namespace flip_negate_test

}  // namespace
}  // namespace stoker::data
