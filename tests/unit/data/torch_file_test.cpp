// torch.save files written byte by byte (support/torch_files.h): a good one reads, and a
// damaged tensor record is one line naming the file and the tensor, through --data
// (open_torch_file) and --weights (read_state_dict) alike. One changed byte in a tensor's
// strides once crashed both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "stoker/data/state_dict.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"
#include "support/torch_files.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::PickleWriter;
using testing::TempDir;

struct Record {
  int64_t offset = 0;
  std::vector<int64_t> sizes{4, 3};
  std::vector<int64_t> strides{3, 1};
};

// The pickle of {"x": 4 x 3 float32 (the record given), "y": 4 int64 class ids}.
std::string features_pickle(const Record& x) {
  PickleWriter p;
  p.empty_dict().mark();
  p.text("x").tensor("FloatStorage", "0", 12, x.offset, x.sizes, x.strides);
  p.text("y").tensor("LongStorage", "1", 4, 0, {4}, {1});
  p.set_items();
  return p.stop();
}

// A torch.save file of that pickle with its two storages.
std::vector<uint8_t> features_file(const std::string& pickle) {
  const std::vector<float> features{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  return testing::torch_save_bytes(
      pickle, {{"0", testing::raw_bytes(features)}, {"1", testing::raw_bytes(std::vector<int64_t>{0, 1, 0, 1})}});
}

TEST(TorchFileTest, AFileWrittenAsTorchSaveDoesReads) {
  TempDir dir;
  const std::string path = dir.write("good.pt", features_file(features_pickle({})));
  const auto source = open_source(path);
  EXPECT_EQ(source->size(), 4u);
  EXPECT_EQ(source->feature_count(), 3);
  const std::vector<StoredTensor> tensors = read_state_dict(path);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "x");
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(tensors[0].floats[11], 11.0f);
}

TEST(TorchFileTest, ADamagedTensorRecordIsOneLineNamingTheTensor) {
  TempDir dir;
  struct Case {
    const char* what;
    Record record;
    std::string expected;
  };
  const std::string damaged = "has a damaged tensor record";
  const std::vector<Case> cases{
      {"no strides", {0, {4, 3}, {}}, damaged},
      {"a stride short", {0, {4, 3}, {1}}, damaged},
      {"a negative size", {0, {-4, 3}, {3, 1}}, damaged},
      {"sizes whose product wraps", {0, {int64_t{1} << 40, int64_t{1} << 40}, {1, 1}}, damaged},
      {"an offset past the storage", {13, {4, 3}, {3, 1}}, "needs 100 bytes of its storage, which holds 48"},
      {"an offset that wraps", {int64_t{1} << 62, {4, 3}, {3, 1}}, "starts past the end of its storage"},
      {"a negative offset", {-1, {4, 3}, {3, 1}}, damaged},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write("bad.pt", features_file(features_pickle(c.record)));
    for (const std::string& message :
         {error_text([&] { open_source(path); }), error_text([&] { read_state_dict(path); })}) {
      EXPECT_EQ(message.rfind(path + ":x: ", 0), 0u) << c.what << ": " << message;
      EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": " << message;
    }
  }
}

// A dict's "val" entries (x_val, y_val) are its val split and nothing else is; a (features,
// targets) tuple is the training split alone.
TEST(TorchFileTest, ADictOffersTheSplitsItsKeysName) {
  TempDir dir;
  using Offered = std::vector<std::string>;
  PickleWriter dict;
  dict.empty_dict().mark();
  dict.text("x_train").tensor("FloatStorage", "0", 12, 0, {3, 3}, {3, 1});
  dict.text("y_train").tensor("LongStorage", "1", 4, 0, {3}, {1});
  dict.text("x_val").tensor("FloatStorage", "0", 12, 9, {1, 3}, {3, 1});  // the storage's last row
  dict.text("y_val").tensor("LongStorage", "1", 4, 3, {1}, {1});
  dict.set_items();
  const std::string path = dir.write("splits.pt", features_file(dict.stop()));
  EXPECT_EQ(splits_of(path), (Offered{"train", "val"}));
  EXPECT_TRUE(has_held_out_split(path));
  EXPECT_EQ(open_source(path, "train")->size(), 3u);
  EXPECT_EQ(testing::features_of(*open_source(path, "val"), 0), (std::vector<float>{9, 10, 11}));
  EXPECT_EQ(testing::features_of(*open_source(path, Split::kHeldOut), 0), (std::vector<float>{9, 10, 11}));
  EXPECT_EQ(testing::usage_error_text([&] { open_source(path, "test"); }),
            "no split 'test' in " + path +
                " (PyTorch tensors): it offers train and val, and no tensors are named with _test and no dict entry "
                "is keyed test; ask for one of those, or give the test data's own path");

  PickleWriter tuple;
  tuple.mark();
  tuple.tensor("FloatStorage", "0", 12, 0, {4, 3}, {3, 1});
  tuple.tensor("LongStorage", "1", 4, 0, {4}, {1});
  tuple.tuple();
  const std::string pair = dir.write("pair.pt", features_file(tuple.stop()));
  EXPECT_EQ(splits_of(pair), Offered{"train"});
  EXPECT_FALSE(has_held_out_split(pair));
  EXPECT_EQ(open_source(pair, Split::kValidationFile)->size(), 4u);
  EXPECT_EQ(testing::usage_error_text([&] { open_source(pair, "val"); }),
            "no split 'val' in " + pair +
                " (PyTorch tensors): it offers train, and no tensors are named with _val, _valid or _validation and no "
                "dict entry is keyed val, valid or validation; ask for train, or give the validation data's own path");
}

// Strides that are an integer, not a tuple: x's strides (3, 1) become the int 3, padded with
// a FRAME to the same length.
TEST(TorchFileTest, StridesThatAreNotATupleAreOneLine) {
  TempDir dir;
  std::string pickle = features_pickle({});
  const std::string strides("(J\x03\x00\x00\x00J\x01\x00\x00\x00t", 12);
  const size_t at = pickle.find(strides);
  ASSERT_NE(at, std::string::npos);
  pickle.replace(at, strides.size(), std::string("M\x03\x00\x95\x00\x00\x00\x00\x00\x00\x00\x00", 12));
  const std::string path = dir.write("int.pt", features_file(pickle));
  EXPECT_EQ(error_text([&] { open_source(path); }),
            path + ":x: has a damaged tensor record (its offset, sizes or strides are not what torch.save writes)");
}

}  // namespace
}  // namespace stoker::data
