// The split names (split.h): what each means, which a path offers (splits_of), the one-line
// refusal of one it does not (check_split, which open_source calls). IDX, .npz, .h5 and .pt splits are
// tested beside their sources (source_test, array_source_test, hdf5_source_test, torch_file_test).
#include "stoker/data/split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::TempDir;
using testing::usage_error_text;
using NameList = std::vector<std::string>;

TEST(SplitNames, EachNameAndAliasNamesOneSplit) {
  EXPECT_EQ(split_named("train"), Split::kTrain);
  EXPECT_EQ(split_named("val"), Split::kVal);
  EXPECT_EQ(split_named("test"), Split::kTest);
  EXPECT_EQ(split_named("t10k"), Split::kTest);
  for (const char* word : {"garbage", "Train", "validation", "held-out", "validation-file", ""}) {
    EXPECT_FALSE(split_named(word).has_value()) << word;
  }
  EXPECT_EQ(split_name(Split::kTest), "test");
  EXPECT_EQ(declaration_of(Split::kHeldOut), nullptr);
  EXPECT_EQ(split_help_text(),
            "train (the training data: all of a folder, list, table or shards), val (the data's own validation "
            "split) or test, also t10k (the data's own test split)");
  const std::vector<Split> all{Split::kTrain, Split::kVal, Split::kTest};
  EXPECT_EQ(split_list_text(all), "train, val and test (t10k)");
}

// The trainer's two readings keep their order: validation arrays before test arrays, and a
// file given for validation falls back to its plain arrays and its train files.
TEST(SplitNames, TheTrainersReadingsAreValThenTestThenAll) {
  EXPECT_EQ(split_suffixes(Split::kTrain), (NameList{"_train", ""}));
  EXPECT_EQ(split_suffixes(Split::kVal), (NameList{"_val", "_valid", "_validation"}));
  EXPECT_EQ(split_suffixes(Split::kTest), (NameList{"_test"}));
  EXPECT_EQ(split_suffixes(Split::kHeldOut), (NameList{"_val", "_valid", "_validation", "_test"}));
  EXPECT_EQ(split_suffixes(Split::kValidationFile), (NameList{"_val", "_valid", "_validation", "_test", ""}));
  using Prefixes = std::vector<std::string_view>;
  EXPECT_EQ(idx_prefixes(Split::kTrain), (Prefixes{"train"}));
  EXPECT_EQ(idx_prefixes(Split::kVal), Prefixes{});
  EXPECT_EQ(idx_prefixes(Split::kTest), (Prefixes{"t10k"}));
  EXPECT_EQ(idx_prefixes(Split::kHeldOut), (Prefixes{"t10k"}));
  EXPECT_EQ(idx_prefixes(Split::kValidationFile), (Prefixes{"t10k", "train"}));
}

// data/train/<class>/<image>: an image folder.
std::string write_image_folder(const TempDir& dir, const std::string& name) {
  dir.write(name + "/cat/a.jpg", {0xFF, 0xD8});
  return dir.str() + "/" + name;
}

// The case: a folder asked for 'val' gave its training images.
TEST(SplitsOf, AFolderHoldsOneSplitAndAsksForTheValidationDatasOwnPath) {
  TempDir dir;
  const std::string train = write_image_folder(dir, "data/train");
  EXPECT_EQ(splits_of(train), NameList{"train"});
  EXPECT_NO_THROW(check_split(train, "train"));
  const std::string alone = "no split 'val' in " + train +
                            " (an image folder): it holds one split, train; give the validation data's own path";
  EXPECT_EQ(usage_error_text([&] { check_split(train, "val"); }), alone);
  EXPECT_EQ(usage_error_text([&] { open_source(train, "val"); }), alone);
  EXPECT_EQ(usage_error_text([&] { open_source(train, Split::kVal); }), alone);
  EXPECT_EQ(
      usage_error_text([&] { open_source(train, "t10k"); }),
      "no split 't10k' in " + train + " (an image folder): it holds one split, train; give the test data's own path");
  write_image_folder(dir, "data/val");
  EXPECT_EQ(usage_error_text([&] { check_split(train, "val"); }),
            alone + " (there is " + dir.str() + "/data/val beside it)");
  EXPECT_EQ(usage_error_text([&] { check_split(train + "/", "test"); }),
            "no split 'test' in " + train +
                "/ (an image folder): it holds one split, train; give the test data's own path (there is " + dir.str() +
                "/data/val beside it)");
  write_image_folder(dir, "data/test");
  EXPECT_NE(usage_error_text([&] { check_split(train, "test"); }).find("(there is " + dir.str() + "/data/test beside"),
            std::string::npos);
  // The trainer's reading of a folder given with --val-data is the folder.
  EXPECT_EQ(open_source(train, Split::kValidationFile)->size(), 1u);
  EXPECT_FALSE(has_held_out_split(train));
}

TEST(SplitsOf, ListsTablesShardsAndALoneNpyHoldOneSplit) {
  TempDir dir;
  const std::string list = dir.write_text("train.csv", "path,label\na.jpg,0\n");
  const std::string table = dir.write_text("table.csv", "1.5,2.5,0\n");
  const std::string shard = dir.write("shards/train-000000.tar", std::vector<uint8_t>(1024, 0));
  const std::string npy = dir.write("x.npy", {0x93, 'N', 'U', 'M', 'P', 'Y'});
  for (const std::string& path : {list, table, shard, npy, dir.str() + "/shards/train-*.tar"}) {
    EXPECT_EQ(splits_of(path), NameList{"train"}) << path;
    EXPECT_NE(usage_error_text([&] { check_split(path, "test"); }).find("holds one split, train; give the test data"),
              std::string::npos)
        << path;
  }
  EXPECT_EQ(
      usage_error_text([&] { check_split(list, "val"); }),
      "no split 'val' in " + list + " (a CSV file): it holds one split, train; give the validation data's own path");
  dir.write_text("val.csv", "path,label\nb.jpg,1\n");
  EXPECT_EQ(usage_error_text([&] { check_split(list, "val"); }),
            "no split 'val' in " + list +
                " (a CSV file): it holds one split, train; give the validation data's own path (there is " + dir.str() +
                "/val.csv beside it)");
  EXPECT_NE(usage_error_text([&] { check_split(shard, "val"); }).find("(WebDataset shards)"), std::string::npos);
  // A .tsv is named as one, though it is of the CSV's kind; its val.tsv beside it is found.
  const std::string tsv = dir.write_text("train.tsv", "path\tlabel\na.jpg\t0\n");
  dir.write_text("val.tsv", "path\tlabel\nb.jpg\t1\n");
  EXPECT_EQ(usage_error_text([&] { check_split(tsv, "val"); }),
            "no split 'val' in " + tsv +
                " (a TSV file): it holds one split, train; give the validation data's own path (there is " + dir.str() +
                "/val.tsv beside it)");
}

TEST(SplitsOf, AnUnknownNameListsTheAcceptedOnes) {
  TempDir dir;
  const std::string train = write_image_folder(dir, "train");
  EXPECT_EQ(usage_error_text([&] { open_source(train, "garbage"); }),
            "unknown split 'garbage': stoker reads train, val and test (t10k), and " + train +
                " (an image folder) holds one split, train; ask for train");
  // A path that cannot be read still gets the names; opening it says what is wrong with it.
  EXPECT_EQ(usage_error_text([&] { check_split(dir.str() + "/missing", "Val"); }),
            "unknown split 'Val': stoker reads train, val and test (t10k); ask for one of those");
  EXPECT_NO_THROW(check_split(dir.str() + "/missing", "train"));  // "train" reads nothing
  EXPECT_EQ(error_text<DataError>([&] { splits_of(dir.str() + "/missing"); }),
            "dataset path " + dir.str() + "/missing does not exist");
}

}  // namespace
}  // namespace stoker::data
