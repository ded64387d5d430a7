// A CSV list's columns passed through reach each batch slot with the sample they belong to:
// a bad sample's slot carries its substitute's cells (as its label), and a sample taken from
// the decoded cache (not read again) carries its own.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;

constexpr int kSamples = 6;
constexpr uint64_t kBad = 2;  // a file that is no image

std::shared_ptr<const Source> make_list(const TempDir& dir) {
  std::string csv = "path,label,caption\n";
  for (int i = 0; i < kSamples; ++i) {
    const std::string name = std::to_string(i) + ".jpg";
    if (static_cast<uint64_t>(i) == kBad) {
      dir.write_text(name, "not a JPEG");
    } else {
      dir.write(name, encode_jpeg(stoker::testing::make_photo_like(40, 30, 3, static_cast<uint32_t>(i + 1))));
    }
    csv += name + "," + std::to_string(i) + ",\"caption " + std::to_string(i) + ", of sample " + std::to_string(i) +
           "\"\n";
  }
  return open_file_list(dir.write_text("list.csv", csv));
}

std::string caption_of(uint64_t index) {
  return "caption " + std::to_string(index) + ", of sample " + std::to_string(index);
}

TEST(ListColumnsLoaderTest, EachSlotCarriesItsSamplesCellsSubstitutesAndCachedOnesToo) {
  TempDir dir;
  const auto source = make_list(dir);
  LoaderOptions o;
  o.batch_size = kSamples;
  o.workers = 2;
  o.prefetch = 2;
  o.sampler.shuffle = false;
  o.max_bad_fraction = 0.5;
  o.transform = parse_transforms("RandomResizedCrop(16)");
  o.cache_decoded_bytes = size_t{1} << 24;  // epoch 1 comes from RAM
  o.run_ahead = false;
  Loader loader(source, o);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    loader.start_epoch(epoch);
    Batch batch = loader.next();
    ASSERT_TRUE(batch);
    ASSERT_EQ(batch.size(), kSamples);
    for (int s = 0; s < batch.size(); ++s) {
      const uint64_t index = batch.indices()[s];
      const uint64_t used = index == kBad ? kBad + 1 : index;  // the substitute: the next sample
      const std::string_view* cells = extra_cells(batch.extra(s));
      ASSERT_NE(cells, nullptr) << "epoch " << epoch << " slot " << s;
      EXPECT_EQ(cells[0], caption_of(used)) << "epoch " << epoch << " slot " << s;
      EXPECT_EQ(batch.labels()[s], static_cast<int64_t>(used));
    }
    EXPECT_FALSE(loader.next());
  }
  EXPECT_GT(loader.stage_times().cache_hits, 0u);
}

}  // namespace
}  // namespace stoker::data
