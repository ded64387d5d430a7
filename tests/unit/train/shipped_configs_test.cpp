// Every ready-made config in configs/ loads and validates.
#include <gtest/gtest.h>

#include <filesystem>

#include "stoker/data/transform.h"
#include "stoker/train/config.h"

namespace stoker::train {
namespace {

TEST(ShippedConfigsTest, AllLoadAndValidate) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(STOKER_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    TrainConfig config;
    EXPECT_NO_THROW(apply_yaml_file(entry.path().string(), &config));
    EXPECT_NO_THROW(validate(config));
    if (!config.transforms.empty()) {
      EXPECT_NO_THROW(data::parse_transforms(config.transforms));
    }
    ++seen;
  }
  EXPECT_GE(seen, 2);
}

}  // namespace
}  // namespace stoker::train
