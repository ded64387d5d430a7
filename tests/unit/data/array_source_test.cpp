// NumPy arrays (.npy, .npz) and numeric CSV tables as sources: values, layouts, targets, and
// the one-line errors for what cannot be read.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;
using testing::features_of;
using testing::npy_bytes;
using testing::raw_bytes;
using testing::targets_of;
using testing::TempDir;
using testing::usage_error_text;
using testing::zip_bytes;

TEST(NpySource, FeaturesAndClassIdsFromSiblingFiles) {
  TempDir dir;
  dir.write("X_train.npy", npy_bytes("<f4", {3, 2}, raw_bytes<float>({1, 2, 3, 4, 5, 6})));
  dir.write("y_train.npy", npy_bytes("<i8", {3}, raw_bytes<int64_t>({2, 0, 1})));
  const auto source = open_source(dir.str() + "/X_train.npy");
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->feature_count(), 2);
  EXPECT_EQ(source->default_transforms(), "Standardize");
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->class_names().size(), 3u);
  EXPECT_EQ(source->label(0), 2);
  EXPECT_EQ(features_of(*source, 2), (std::vector<float>{5, 6}));
  EXPECT_NE(source->describe().find("X_train.npy + y_train.npy: 3 samples × 2 features, 3 classes · memory-mapped "
                                    "float32"),
            std::string::npos)
      << source->describe();
  expect_has(source->name(1), "X_train.npy[1]");
}

TEST(NpySource, AFeatureArrayOfThreeDimensionsKeepsItsSampleShape) {
  TempDir dir;
  std::vector<float> x(4 * 3 * 2);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
  dir.write("X_train.npy", npy_bytes("<f4", {4, 3, 2}, raw_bytes(x)));  // (N, T, D) sequences
  dir.write("y_train.npy", npy_bytes("<i8", {4}, raw_bytes<int64_t>({0, 1, 0, 1})));
  dir.write("flat/x.npy", npy_bytes("<f4", {4, 6}, raw_bytes(x)));
  dir.write("flat/y.npy", npy_bytes("<i8", {4}, raw_bytes<int64_t>({0, 1, 0, 1})));
  const auto source = open_source(dir.str() + "/X_train.npy");
  EXPECT_EQ(source->feature_count(), 6);
  EXPECT_EQ(source->feature_shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(features_of(*source, 1), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(open_source(dir.str() + "/flat/x.npy")->feature_shape(), (std::vector<int64_t>{6}));
}

TEST(NpySource, ConvertsBigEndianIntegersAndFortranOrder) {
  TempDir dir;
  // >i2 values 1..6 of shape (2, 3) stored column-major: rows are (1, 2, 3) and (4, 5, 6).
  std::vector<uint8_t> payload;
  for (int16_t v : {1, 4, 2, 5, 3, 6}) {
    payload.push_back(static_cast<uint8_t>(static_cast<uint16_t>(v) >> 8));
    payload.push_back(static_cast<uint8_t>(v & 0xFF));
  }
  dir.write("features.npy", npy_bytes(">i2", {2, 3}, payload, /*fortran_order=*/true));
  dir.write("targets.npy", npy_bytes("<f8", {2, 2}, raw_bytes<double>({0.5, -1, 2.25, 3})));
  const auto source = open_arrays(dir.str() + "/features.npy");
  EXPECT_EQ(features_of(*source, 0), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(features_of(*source, 1), (std::vector<float>{4, 5, 6}));
  ASSERT_EQ(source->target_kind(), TargetKind::kRegression);
  ASSERT_EQ(source->target_dim(), 2);
  EXPECT_EQ(targets_of(*source, 1), (std::vector<float>{2.25f, 3.0f}));
}

TEST(NpySource, Uint8ImagesChannelsFirstBecomeRawPixels) {
  TempDir dir;
  // Two 3-channel 2x2 images (N, C, H, W): channel k of pixel p of image n = 100n + 10k + p.
  std::vector<uint8_t> pixels;
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 3; ++k)
      for (int p = 0; p < 4; ++p) pixels.push_back(static_cast<uint8_t>(100 * n + 10 * k + p));
  dir.write("d.npz", zip_bytes({{"images.npy", npy_bytes("|u1", {2, 3, 2, 2}, pixels)},
                                {"labels.npy", npy_bytes("|b1", {2}, {0, 1})}}));
  const auto source = open_source(dir.str() + "/d.npz");
  EXPECT_EQ(source->feature_count(), 0);
  EXPECT_EQ(source->default_transforms(), "none");  // RGB; one channel adds Grayscale
  int w = 0, h = 0, c = 0;
  source->fixed_shape(&w, &h, &c);
  EXPECT_EQ(w, 2);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(c, 3);
  SampleData sample;
  ASSERT_TRUE(source->read(1, &sample).ok());
  ASSERT_TRUE(sample.raw);
  EXPECT_EQ(std::vector<uint8_t>(sample.bytes.begin(), sample.bytes.end()),
            (std::vector<uint8_t>{100, 110, 120, 101, 111, 121, 102, 112, 122, 103, 113, 123}));  // H x W x C
  EXPECT_EQ(source->label(1), 1);
  EXPECT_EQ(source->class_names().size(), 2u);
}

class NpzSource : public ::testing::TestWithParam<std::pair<bool, bool>> {};

TEST_P(NpzSource, PicksTheSplitsArraysStoredDeflatedOrZip64) {
  const auto [deflate, zip64] = GetParam();
  TempDir dir;
  const std::string path =
      dir.write("mnist.npz", zip_bytes({{"x_test.npy", npy_bytes("<f8", {1, 2}, raw_bytes<double>({7, 8}))},
                                        {"x_train.npy", npy_bytes("<f4", {2, 2}, raw_bytes<float>({1, 2, 3, 4}))},
                                        {"y_train.npy", npy_bytes("<u1", {2}, {1, 0})},
                                        {"y_test.npy", npy_bytes("<i4", {1}, raw_bytes<int32_t>({1}))}},
                                       deflate, zip64));
  const auto train = open_source(path);
  ASSERT_EQ(train->size(), 2u);
  EXPECT_EQ(features_of(*train, 1), (std::vector<float>{3, 4}));
  EXPECT_EQ(train->label(0), 1);
  EXPECT_TRUE(has_held_out_split(path));
  const auto test = open_source(path, "t10k");
  ASSERT_EQ(test->size(), 1u);
  EXPECT_EQ(features_of(*test, 0), (std::vector<float>{7, 8}));
  EXPECT_NE(test->describe().find("(x_test, y_test)"), std::string::npos) << test->describe();
}

INSTANTIATE_TEST_SUITE_P(Layouts, NpzSource,
                         ::testing::Values(std::make_pair(false, false), std::make_pair(true, false),
                                           std::make_pair(false, true), std::make_pair(true, true)));

TEST(NpzSource, BadArchivesAndArraysEachGetOneLine) {
  TempDir dir;
  const auto x = npy_bytes("<f4", {2, 1}, raw_bytes<float>({1, 2}));
  const auto y = npy_bytes("<i8", {2}, raw_bytes<int64_t>({0, 1}));
  const auto open = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = dir.write(name, bytes);
    return error_text([&] { open_source(path); });
  };
  expect_has(open("keys.npz", zip_bytes({{"a.npy", x}, {"b.npy", y}})),
             "holds the arrays [a, b]; expected features named x");
  std::vector<uint8_t> corrupt = zip_bytes({{"x.npy", x}, {"y.npy", y}});
  corrupt[100] ^= 0xFF;  // inside x.npy's header: the CRC no longer matches
  expect_has(open("crc.npz", corrupt), "member x.npy fails its CRC-32 check");
  const auto whole = zip_bytes({{"x.npy", x}, {"y.npy", y}});
  expect_has(open("cut.npz", {whole.begin(), whole.begin() + 150}), "damaged ZIP/.npz archive");
  expect_has(open("text.npz", {'h', 'e', 'l', 'l', 'o'}), "too short to be a ZIP archive");

  const auto pair = [&](const std::vector<uint8_t>& xs, const std::vector<uint8_t>& ys) {
    return zip_bytes({{"x.npy", xs}, {"y.npy", ys}});
  };
  expect_has(open("rows.npz", pair(x, npy_bytes("<i8", {3}, raw_bytes<int64_t>({0, 1, 2})))),
             "rows.npz:y has 3; they must have one row per sample each");
  // Compressed members' headers are compared before the members are inflated and parsed: a
  // 3.3 MB np.savez_compressed file once inflated 3.4 GB to find the mismatch its headers show.
  // Here x's payload is cut short, which parsing it would report first.
  const auto short_x = npy_bytes("<f4", {3, 1}, raw_bytes<float>({1}));
  expect_has(open("rows_first.npz", zip_bytes({{"x.npy", short_x}, {"y.npy", y}}, /*deflate=*/true)),
             "rows_first.npz:x has 3 rows and " + dir.str() + "/rows_first.npz:y has 2");
  expect_has(open("complex.npz", pair(npy_bytes("<c8", {2}, std::vector<uint8_t>(16)), y)),
             "has dtype '<c8'; stoker reads bool, int8..int64");
  expect_has(open("short.npz", pair(npy_bytes("<f4", {2, 3}, raw_bytes<float>({1, 2})), y)),
             "is truncated: its shape (2, 3) of float32 needs 24 bytes, the file has 8");
  expect_has(open("nan.npz", pair(npy_bytes("<f4", {2, 1}, raw_bytes<float>({1, NAN})), y)),
             "a feature of sample 1 (column 0) is nan; fill or drop missing values");
  // Ids that cannot be classes open (they may be quantities); check_class_ids refuses them
  // once the trainer knows the task is classification.
  const auto class_ids = [&](const std::string& name, const std::vector<int64_t>& ids, int64_t max_classes) {
    const std::string path = dir.write(
        name, pair(npy_bytes("<f4", {2, 1}, raw_bytes<float>({1, 2})), npy_bytes("<i8", {2}, raw_bytes<int64_t>(ids))));
    const auto source = open_source(path);
    EXPECT_EQ(source->label(1), ids[1]);
    return error_text([&] { source->check_class_ids(max_classes); }, "<accepted>");
  };
  expect_has(class_ids("negative.npz", {0, -3}, kUsualMaxClasses),
             "class id -3 of sample 1 is negative; class ids must be 0..K-1 (for quantities, pass --task regression)");
  expect_has(class_ids("many.npz", {0, 250000}, kUsualMaxClasses),
             "integer targets up to 250000 would make 250,001 classes (at most 100,000); for quantities pass --task "
             "regression (or store floats: np.float32, or 12.0 in a CSV); for that many classes pass --task "
             "classification (up to 10,000,000)");
  EXPECT_EQ(class_ids("faces.npz", {0, 250000}, kMaxClasses), "<accepted>");
  expect_has(class_ids("huge.npz", {0, 20'000'000}, kMaxClasses), "at most 10,000,000); for quantities");
  EXPECT_NE(open_source(dir.str() + "/huge.npz")->describe().find("integer targets 0..20000000"), std::string::npos);
  EXPECT_EQ(open_source(dir.str() + "/faces.npz")->class_names().size(), 250'001u);
  expect_has(open("magic.npz", pair({'n', 'o', 't', ' ', 'n', 'p', 'y', '!', '!', '!'}, y)), "is not a .npy file");
  open("notest.npz", pair(x, y));
  expect_has(error_text([&] { open_source(dir.str() + "/notest.npz", Split::kHeldOut); }),
             "(with the suffix _val, _valid, _validation, _test)");
}

TEST(NpzSource, TheValidationArraysComeBeforeTheTestArrays) {
  TempDir dir;
  const auto x = [](float v) { return npy_bytes("<f4", {1, 1}, raw_bytes<float>({v})); };
  const auto y = npy_bytes("<i8", {1}, raw_bytes<int64_t>({0}));
  const std::string three = dir.write("three.npz", zip_bytes({{"x_train.npy", x(1)},
                                                              {"y_train.npy", y},
                                                              {"x_val.npy", x(2)},
                                                              {"y_val.npy", y},
                                                              {"x_test.npy", x(3)},
                                                              {"y_test.npy", y}}));
  EXPECT_TRUE(has_held_out_split(three));
  EXPECT_EQ(features_of(*open_source(three, Split::kHeldOut), 0), (std::vector<float>{2}));
  EXPECT_EQ(features_of(*open_source(three, Split::kValidationFile), 0), (std::vector<float>{2}));
  const std::string valid = dir.write(
      "valid.npz", zip_bytes({{"X.npy", x(1)}, {"labels.npy", y}, {"X_valid.npy", x(4)}, {"labels_valid.npy", y}}));
  EXPECT_TRUE(has_held_out_split(valid));
  EXPECT_EQ(features_of(*open_source(valid, Split::kHeldOut), 0), (std::vector<float>{4}));
}

// 'val' reads the validation arrays and 'test' the test arrays, exactly (before, 'test' read
// x_val when both were there, and 'val' the plain arrays of a file without either); a split
// the archive lacks is a UsageError, never another split's samples.
TEST(NpzSource, ValAndTestReadTheirOwnArraysOnly) {
  TempDir dir;
  using Offered = std::vector<std::string>;
  const auto x = [](float v) { return npy_bytes("<f4", {1, 1}, raw_bytes<float>({v})); };
  const auto y = npy_bytes("<i8", {1}, raw_bytes<int64_t>({0}));
  const auto first = [](const std::string& path, auto split) { return features_of(*open_source(path, split), 0); };
  const std::string both = dir.write("both.npz", zip_bytes({{"x_train.npy", x(1)},
                                                            {"y_train.npy", y},
                                                            {"x_val.npy", x(2)},
                                                            {"y_val.npy", y},
                                                            {"x_test.npy", x(3)},
                                                            {"y_test.npy", y}}));
  EXPECT_EQ(splits_of(both), (Offered{"train", "val", "test"}));
  EXPECT_EQ(first(both, "train"), std::vector<float>{1});
  EXPECT_EQ(first(both, "val"), std::vector<float>{2});
  EXPECT_EQ(first(both, "test"), std::vector<float>{3});
  EXPECT_EQ(first(both, "t10k"), std::vector<float>{3});
  EXPECT_EQ(first(both, Split::kHeldOut), std::vector<float>{2});

  const std::string val_only =
      dir.write("val_only.npz", zip_bytes({{"x.npy", x(1)}, {"y.npy", y}, {"x_valid.npy", x(2)}, {"y_valid.npy", y}}));
  EXPECT_EQ(splits_of(val_only), (Offered{"train", "val"}));
  EXPECT_EQ(first(val_only, "val"), std::vector<float>{2});
  EXPECT_EQ(usage_error_text([&] { open_source(val_only, "test"); }),
            "no split 'test' in " + val_only +
                " (NumPy arrays): it offers train and val, and no arrays are named with _test; ask for one of those, "
                "or give the test data's own path");
  EXPECT_EQ(first(val_only, Split::kHeldOut), std::vector<float>{2});

  const std::string test_only =
      dir.write("test_only.npz", zip_bytes({{"x.npy", x(1)}, {"y.npy", y}, {"x_test.npy", x(3)}, {"y_test.npy", y}}));
  EXPECT_EQ(splits_of(test_only), (Offered{"train", "test"}));
  EXPECT_EQ(first(test_only, "t10k"), std::vector<float>{3});
  EXPECT_EQ(usage_error_text([&] { open_source(test_only, "val"); }),
            "no split 'val' in " + test_only +
                " (NumPy arrays): it offers train and test (t10k), and no arrays are named with _val, _valid or "
                "_validation; ask for one of those, or give the validation data's own path");
  EXPECT_EQ(first(test_only, Split::kHeldOut), std::vector<float>{3});
  EXPECT_EQ(first(test_only, Split::kValidationFile), std::vector<float>{3});

  // Plain arrays alone: 'val' is refused; given with --val-data, the file is read whole.
  const std::string plain = dir.write("plain.npz", zip_bytes({{"x.npy", x(5)}, {"y.npy", y}}));
  EXPECT_EQ(splits_of(plain), Offered{"train"});
  EXPECT_EQ(usage_error_text([&] { open_source(plain, "val"); }),
            "no split 'val' in " + plain +
                " (NumPy arrays): it offers train, and no arrays are named with _val, _valid or _validation; ask for "
                "train, or give the validation data's own path");
  EXPECT_EQ(first(plain, Split::kValidationFile), std::vector<float>{5});
  // The opener itself, unchecked, finds no validation arrays rather than reading the plain ones.
  expect_has(error_text<DataError>([&] { open_arrays(plain, Split::kVal); }),
             "(with the suffix _val, _valid, _validation)");
}

TEST(NpzSource, AFileGivenForValidationIsReadByItsPlainArraysWhenItHasNoHeldOutOnes) {
  TempDir dir;
  const std::string path = dir.write("val.npz", zip_bytes({{"x.npy", npy_bytes("<f4", {1, 1}, raw_bytes<float>({5}))},
                                                           {"y.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({1}))}}));
  EXPECT_FALSE(has_held_out_split(path));
  const auto val = open_source(path, Split::kValidationFile);
  EXPECT_EQ(features_of(*val, 0), (std::vector<float>{5}));
  EXPECT_EQ(val->label(0), 1);
  // A lone .npy given for validation is read with its targets beside it.
  const std::string x_test = dir.write("X_test.npy", npy_bytes("<f4", {1, 1}, raw_bytes<float>({6})));
  dir.write("y_test.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({0})));
  EXPECT_EQ(features_of(*open_source(x_test, Split::kValidationFile), 0), (std::vector<float>{6}));
}

TEST(NpySource, NoTargetsBesideTheFeaturesSaysWhatWasLookedFor) {
  TempDir dir;
  const std::string path = dir.write("train_x.npy", npy_bytes("<f4", {1, 1}, raw_bytes<float>({1})));
  expect_has(error_text([&] { open_source(path); }), "no targets beside it (looked for train_y.npy)");
}

TEST(FeatureTable, HeaderNamesTheTargetColumnAnywhere) {
  TempDir dir;
  const std::string path = dir.write_text("t.csv", "label,age,height\n1,30,1.8\n0,40,1.6\n2,50,1.7\n");
  EXPECT_TRUE(is_feature_table(path));
  const auto source = open_source(path);
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->feature_count(), 2);
  EXPECT_EQ(source->label(1), 0);
  EXPECT_EQ(features_of(*source, 2), (std::vector<float>{50, 1.7f}));
  EXPECT_NE(source->describe().find("(target 'label'): 3 samples × 2 features, 3 classes"), std::string::npos)
      << source->describe();
}

TEST(FeatureTable, WithoutHeaderTheLastColumnIsARegressionTargetWhenNotWhole) {
  TempDir dir;
  const std::string path = dir.write_text("t.csv", "1,2,0.5\n3,4,1.5\n");
  const auto source = open_source(path);
  EXPECT_EQ(source->target_kind(), TargetKind::kRegression);
  float target = 0;
  source->targets(1, &target);
  EXPECT_EQ(target, 1.5f);
  EXPECT_EQ(features_of(*source, 1), (std::vector<float>{3, 4}));
}

TEST(FeatureTable, IntegerTargetsCanBeReadAsARegressionTarget) {
  TempDir dir;
  const std::shared_ptr<const Source> table = open_source(dir.write_text("ages.csv", "x,age\n0.5,31\n0.25,7\n"));
  ASSERT_EQ(table->target_kind(), TargetKind::kClass);
  ASSERT_TRUE(table->targets_are_numbers());
  const auto ages = integers_as_regression(table);
  EXPECT_EQ(ages->target_kind(), TargetKind::kRegression);
  EXPECT_EQ(ages->target_dim(), 1);
  EXPECT_TRUE(ages->class_names().empty());
  float target = 0;
  ages->targets(0, &target);
  EXPECT_EQ(target, 31.0f);
  EXPECT_EQ(features_of(*ages, 1), (std::vector<float>{0.25f}));
  expect_has(ages->describe(), "32 classes → read as 1 float target (task regression)");
  // A 24-digit label is named as written when it would be a class id, and stays a quantity.
  const std::string big = dir.write_text("big.csv", "x,id\n0.5,1\n0.25,123456789012345678901234\n");
  expect_has(error_text([&] { open_source(big)->check_class_ids(10'000'000); }),
             big + ":3: label '123456789012345678901234' is beyond 16777216 (2^24)");
  EXPECT_NO_THROW(integers_as_regression(open_source(big)));
  // Class ids that are folder names (or IDX labels) are categories, not quantities.
  dir.write("folder/cat/a.png", {0x89, 'P', 'N', 'G'});
  const std::shared_ptr<const Source> folder = open_image_folder(dir.str() + "/folder");
  EXPECT_FALSE(folder->targets_are_numbers());
  expect_has(error_text([&] { integers_as_regression(folder); }),
             "has no integer targets to read as regression targets");
}

TEST(FeatureTable, AFileListIsStillAFileList) {
  TempDir dir;
  EXPECT_FALSE(is_feature_table(dir.write_text("a.csv", "path,label\na.jpg,0\n")));
  EXPECT_FALSE(is_feature_table(dir.write_text("b.csv", "a.jpg,0\nb.jpg,1\n")));
}

TEST(FeatureTable, BadCellsAndRowsNameLineAndColumn) {
  TempDir dir;
  expect_has(error_text([&] { open_source(dir.write_text("e.csv", "a,b,label\n1,2,0\n3,,1\n")); }),
             "e.csv:3: column 2 ('b') is empty; every cell must be a number (fill or drop missing "
             "values)");
  expect_has(error_text([&] { open_source(dir.write_text("w.csv", "1,2,0\n3,x,1\n")); }), "w.csv:2: column 2 is 'x'");
  expect_has(error_text([&] { open_source(dir.write_text("r.csv", "1,2,0\n3,1\n")); }),
             "r.csv:2: 2 columns, but the first row has 3");
}

}  // namespace
}  // namespace stoker::data
