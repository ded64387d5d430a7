#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "stoker/data/source.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

// Four 2x3 images of `channels`, byte k of the array being k.
struct Array {
  explicit Array(int channels) : bytes(std::make_shared<std::vector<uint8_t>>(4 * 2 * 3 * channels)) {
    std::iota(bytes->begin(), bytes->end(), 0);
  }
  MemoryImages images(int channels, bool channels_first = false) const {
    MemoryImages m;
    m.origin = "CIFAR10 object (CIFAR10.data, CIFAR10.targets)";
    m.item = "CIFAR10.data";
    m.pixels = *bytes;
    m.count = 4;
    m.height = 2;
    m.width = 3;
    m.channels = channels;
    m.channels_first = channels_first;
    m.labels = {0, 1, 2, 1};
    m.class_names = {"cat", "dog", "frog"};
    m.owner = bytes;
    return m;
  }
  std::shared_ptr<std::vector<uint8_t>> bytes;
};

TEST(MemoryImagesTest, ChannelsLastRowsAreReadWhereTheyLieAndTheArrayKept) {
  Array array(3);
  auto source = open_memory_images(array.images(3));
  EXPECT_EQ(array.bytes.use_count(), 2);  // the source keeps the array
  ASSERT_EQ(source->size(), 4u);
  SampleData sample;
  ASSERT_TRUE(source->read(2, &sample).ok());
  EXPECT_EQ(sample.bytes.data(), array.bytes->data() + 2 * 18);  // not copied
  EXPECT_EQ(sample.bytes.size(), 18u);
  EXPECT_TRUE(sample.raw);
  EXPECT_EQ(sample.raw_width, 3);
  EXPECT_EQ(sample.raw_height, 2);
  EXPECT_EQ(sample.raw_channels, 3);
  EXPECT_EQ(source->label(2), 2);
  EXPECT_EQ(source->name(2), "CIFAR10.data[2]");
  EXPECT_EQ(source->class_names(), (std::vector<std::string>{"cat", "dog", "frog"}));
  EXPECT_NE(source->describe().find("read in place from the caller's array"), std::string::npos);
  source.reset();
  EXPECT_EQ(array.bytes.use_count(), 1);
}

TEST(MemoryImagesTest, RowsPickTheSamplesInTheirOrder) {
  Array array(1);
  MemoryImages m = array.images(1);
  m.rows = std::vector<size_t>{3, 0};
  auto source = open_memory_images(std::move(m));
  ASSERT_EQ(source->size(), 2u);
  SampleData sample;
  ASSERT_TRUE(source->read(0, &sample).ok());
  EXPECT_EQ(sample.bytes[0], 3 * 6);
  EXPECT_EQ(sample.raw_channels, 1);
  EXPECT_EQ(source->label(0), 1);
  EXPECT_EQ(source->label(1), 0);
  EXPECT_EQ(source->name(0), "CIFAR10.data[3]");
}

TEST(MemoryImagesTest, ChannelsFirstImagesAreTransposedOnceAndTheArrayLetGo) {
  Array array(3);
  auto source = open_memory_images(array.images(3, true));
  EXPECT_EQ(array.bytes.use_count(), 1);
  SampleData sample;
  ASSERT_TRUE(source->read(1, &sample).ok());
  // Image 1 starts at byte 18: its planes are 18..23, 24..29, 30..35; pixel (0, 1) is 19, 25, 31.
  ASSERT_EQ(sample.bytes.size(), 18u);
  EXPECT_EQ(sample.bytes[3], 19);
  EXPECT_EQ(sample.bytes[4], 25);
  EXPECT_EQ(sample.bytes[5], 31);
}

TEST(MemoryImagesTest, ArraysThatDisagreeAreRefusedNamingTheDataset) {
  Array array(3);
  MemoryImages bad_label = array.images(3);
  bad_label.labels[3] = 3;
  EXPECT_EQ(stoker::testing::usage_error_text([&] { open_memory_images(bad_label); }),
            "CIFAR10 object (CIFAR10.data, CIFAR10.targets): image 3's class id is 3, outside [0, 3) of its 3 classes");
  MemoryImages bad_row = array.images(3);
  bad_row.rows = std::vector<size_t>{0, 4};
  EXPECT_EQ(stoker::testing::usage_error_text([&] { open_memory_images(bad_row); }),
            "CIFAR10 object (CIFAR10.data, CIFAR10.targets): sample row 4 is past the array's 4 images");
  MemoryImages short_array = array.images(3);
  short_array.count = 5;
  short_array.labels.push_back(0);
  EXPECT_EQ(stoker::testing::usage_error_text([&] { open_memory_images(short_array); }),
            "CIFAR10 object (CIFAR10.data, CIFAR10.targets): 72 bytes for 5 images of 18 bytes");
}

}  // namespace
}  // namespace stoker::data
