// HDF5 files (.h5, .hdf5) as sources: datasets of every integer and float type, either byte
// order, chunked and compressed, images, splits, regression targets, and the one-line errors
// for what cannot be read. The files are written with the HDF5 C library, as h5py writes them.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/h5_file.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;
using testing::features_of;
using testing::H5File;
using testing::targets_of;
using testing::TempDir;
using testing::usage_error_text;

TEST(Hdf5Source, Float32FeaturesWithInt64ClassIds) {
  TempDir dir;
  const std::string path = dir.str() + "/feats.h5";
  {
    H5File f(path);
    f.floats("x", {3, 2}, {1, 2, 3, 4, 5, 6});
    f.int64s("y", {2, 0, 1});
  }
  const auto source = open_source(path);
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->feature_count(), 2);
  EXPECT_EQ(source->default_transforms(), "Standardize");
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->class_names().size(), 3u);
  EXPECT_EQ(source->label(0), 2);
  EXPECT_EQ(features_of(*source, 2), (std::vector<float>{5, 6}));
  expect_has(source->describe(), "feats.h5 (x, y): 3 samples × 2 features, 3 classes");
  expect_has(source->name(1), "feats.h5:x[1]");
  EXPECT_FALSE(has_held_out_split(path));
}

TEST(Hdf5Source, Float16FeaturesAreReadAsFloat32) {
  // numpy's float16 as h5py writes it: IEEE binary16 (sign 15, exponent 10..14, mantissa
  // 0..9, bias 15). Values a half holds exactly come back exactly, the smallest normal too.
  TempDir dir;
  const std::string path = dir.str() + "/half.h5";
  const std::vector<float> values = {1, -2.5f, 65504, 0.000061035156f, 0.333251953125f, 0};
  {
    H5File f(path);
    const hid_t half = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(half, 15, 10, 5, 0, 10);
    H5Tset_size(half, 2);
    H5Tset_ebias(half, 15);
    f.write("x", half, H5T_NATIVE_FLOAT, {3, 2}, values);
    H5Tclose(half);
    f.int64s("y", {0, 1, 0});
  }
  const auto source = open_source(path);
  ASSERT_EQ(source->feature_count(), 2);
  expect_has(source->describe(), "· memory-mapped float16");  // contiguous: converted row by row
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(features_of(*source, i), (std::vector<float>{values[2 * i], values[2 * i + 1]})) << i;
  }
}

TEST(Hdf5Source, Float64FeaturesWithInt32AndUint8Labels) {
  TempDir dir;
  const std::string a = dir.str() + "/a.hdf5";
  const std::string b = dir.str() + "/b.h5";
  {
    H5File f(a);
    f.write("features", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 3}, std::vector<double>{0.5, 1, 1.5, -2, -2.5, 3});
    f.write("labels", H5T_STD_I32LE, H5T_NATIVE_INT32, {2}, std::vector<int32_t>{1, 0});
  }
  {
    H5File f(b);
    f.write("X", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 1}, std::vector<double>{7, 8});
    f.write("Y", H5T_STD_U8LE, H5T_NATIVE_UINT8, {2}, std::vector<uint8_t>{0, 4});
  }
  const auto sa = open_source(a);
  EXPECT_EQ(features_of(*sa, 1), (std::vector<float>{-2, -2.5f, 3}));
  EXPECT_EQ(sa->label(0), 1);
  EXPECT_EQ(sa->class_names().size(), 2u);
  const auto sb = open_source(b);
  EXPECT_EQ(features_of(*sb, 1), (std::vector<float>{8}));
  EXPECT_EQ(sb->label(1), 4);
  EXPECT_EQ(sb->class_names().size(), 5u);
}

TEST(Hdf5Source, BigEndianDatasetsAreConvertedToHostOrder) {
  TempDir dir;
  const std::string path = dir.str() + "/be.h5";
  {
    H5File f(path);
    f.write("x", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, {2, 2}, std::vector<float>{1.5f, -2, 3, 4.25f});
    f.write("y", H5T_STD_I16BE, H5T_NATIVE_INT16, {2}, std::vector<int16_t>{3, 1});
  }
  const auto source = open_source(path);
  expect_has(source->describe(), "· memory-mapped >float32");
  EXPECT_EQ(features_of(*source, 0), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(features_of(*source, 1), (std::vector<float>{3, 4.25f}));
  EXPECT_EQ(source->label(0), 3);
  EXPECT_EQ(source->label(1), 1);
}

TEST(Hdf5Source, ContiguousFeaturesAreReadInPlaceEvenBehindAUserBlock) {
  // A user block (512 bytes of the file before HDF5's own, as MATLAB's v7.3 files have) moves
  // every address; the rows read in place must still be the dataset's.
  TempDir dir;
  const std::string path = dir.str() + "/userblock.h5";
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int64_t> y = {0, 1, 0, 1};
  {
    const hid_t create = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_userblock(create, 512);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, create, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    for (const auto& [name, type, memory, data] :
         {std::tuple{"x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, static_cast<const void*>(x.data())},
          std::tuple{"y", H5T_STD_I64LE, H5T_NATIVE_INT64, static_cast<const void*>(y.data())}}) {
      const hsize_t shape[2] = {4, 2};
      const hid_t space = H5Screate_simple(name[0] == 'x' ? 2 : 1, shape, nullptr);
      const hid_t dataset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      EXPECT_GE(H5Dwrite(dataset, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
      H5Dclose(dataset);
      H5Sclose(space);
    }
    H5Fclose(file);
    H5Pclose(create);
  }
  const auto source = open_source(path);
  expect_has(source->describe(), "· memory-mapped float32");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(features_of(*source, i), (std::vector<float>{x[2 * i], x[2 * i + 1]})) << i;
}

TEST(Hdf5Source, ChunkedGzipDatasetsAreRead) {
  ASSERT_GT(H5Zfilter_avail(H5Z_FILTER_DEFLATE), 0) << "this HDF5 library lacks gzip";
  TempDir dir;
  const std::string path = dir.str() + "/packed.h5";
  const hsize_t rows = 1000, cols = 8;
  std::vector<float> x(rows * cols);
  std::vector<int64_t> y(rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) * 0.5f;
  for (size_t i = 0; i < rows; ++i) y[i] = static_cast<int64_t>(i % 3);
  {
    H5File f(path);
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[2] = {64, cols};
    H5Pset_chunk(plist, 2, chunk);
    H5Pset_shuffle(plist);
    H5Pset_deflate(plist, 6);
    f.write("x_train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
    const hsize_t label_chunk[1] = {100};
    H5Pset_chunk(plist, 1, label_chunk);
    f.write("y_train", H5T_STD_I64LE, H5T_NATIVE_INT64, {rows}, y, plist);
    H5Pclose(plist);
  }
  EXPECT_LT(std::filesystem::file_size(path), rows * cols * 4 / 2);  // really compressed
  const auto source = open_source(path);
  ASSERT_EQ(source->size(), rows);
  expect_has(source->describe(), "· read per row from chunks of 64x8, shuffle+gzip float32");  // hdf5_chunks_test.cpp
  EXPECT_EQ(features_of(*source, 999), std::vector<float>(x.begin() + 999 * cols, x.begin() + 1000 * cols));
  EXPECT_EQ(source->label(998), 2);
}

TEST(Hdf5Source, Uint8ArraysAreImages) {
  TempDir dir;
  const std::string gray = dir.str() + "/gray.h5";
  const std::string rgb = dir.str() + "/rgb.h5";
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 2 * 2 * 3 * 3; ++i) pixels.push_back(static_cast<uint8_t>(i * 7));
  {
    H5File f(gray);
    f.write("images", H5T_STD_U8LE, H5T_NATIVE_UINT8, {3, 2, 3},
            std::vector<uint8_t>(pixels.begin(), pixels.begin() + 18));
    f.int64s("labels", {0, 1, 1});
  }
  {
    H5File f(rgb);
    f.write("x", H5T_STD_U8LE, H5T_NATIVE_UINT8, {2, 2, 3, 3}, pixels);
    f.int64s("y", {1, 0});
  }
  const auto g = open_source(gray);
  int w = 0, h = 0, c = 0;
  g->fixed_shape(&w, &h, &c);
  EXPECT_EQ(std::make_tuple(w, h, c), std::make_tuple(3, 2, 1));
  EXPECT_EQ(g->feature_count(), 0);
  SampleData sample;
  ASSERT_TRUE(g->read(2, &sample).ok());
  ASSERT_TRUE(sample.raw);
  EXPECT_EQ(std::vector<uint8_t>(sample.bytes.begin(), sample.bytes.end()),
            std::vector<uint8_t>(pixels.begin() + 12, pixels.begin() + 18));

  const auto color = open_source(rgb);
  color->fixed_shape(&w, &h, &c);
  EXPECT_EQ(std::make_tuple(w, h, c), std::make_tuple(3, 2, 3));
  ASSERT_TRUE(color->read(1, &sample).ok());
  EXPECT_EQ(std::vector<uint8_t>(sample.bytes.begin(), sample.bytes.end()),
            std::vector<uint8_t>(pixels.begin() + 18, pixels.end()));  // H x W x C as stored
  EXPECT_EQ(color->label(0), 1);
}

TEST(Hdf5Source, TrainAndTestSplitsByName) {
  TempDir dir;
  const std::string path = dir.str() + "/split.h5";
  {
    H5File f(path);
    f.floats("x_train", {2, 2}, {1, 2, 3, 4});
    f.int64s("y_train", {1, 0});
    f.write("x_test", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1, 2}, std::vector<double>{7, 8});
    f.write("y_test", H5T_STD_I32LE, H5T_NATIVE_INT32, {1}, std::vector<int32_t>{1});
  }
  EXPECT_TRUE(has_held_out_split(path));
  const auto train = open_source(path);
  ASSERT_EQ(train->size(), 2u);
  EXPECT_EQ(features_of(*train, 1), (std::vector<float>{3, 4}));
  expect_has(train->describe(), "(x_train, y_train)");
  const auto test = open_source(path, "t10k");
  ASSERT_EQ(test->size(), 1u);
  EXPECT_EQ(features_of(*test, 0), (std::vector<float>{7, 8}));
  expect_has(test->describe(), "(x_test, y_test)");
  const auto also_test = open_hdf5(path, Split::kTest);
  EXPECT_EQ(also_test->size(), 1u);
}

// A group of `f` at `name`, closed when it goes out of scope.
struct H5Group {
  H5Group(const H5File& f, const std::string& name)
      : id(H5Gcreate2(f.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) {
    EXPECT_GE(id, 0) << name;
  }
  ~H5Group() { H5Gclose(id); }
  H5Group(const H5Group&) = delete;
  H5Group& operator=(const H5Group&) = delete;
  hid_t id;
};

TEST(Hdf5Source, SplitGroupsHoldPlainXAndY) {
  TempDir dir;
  const std::string path = dir.str() + "/groups.h5";
  {
    H5File f(path);
    const H5Group train(f, "train"), val(f, "val"), test(f, "test");
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 2}, std::vector<float>{1, 2, 3, 4}, H5P_DEFAULT, train.id);
    f.write("labels", H5T_STD_I64LE, H5T_NATIVE_INT64, {2}, std::vector<int64_t>{1, 0}, H5P_DEFAULT, train.id);
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 2}, std::vector<float>{5, 6}, H5P_DEFAULT, val.id);
    f.write("y", H5T_STD_I64LE, H5T_NATIVE_INT64, {1}, std::vector<int64_t>{1}, H5P_DEFAULT, val.id);
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 2}, std::vector<float>{7, 8}, H5P_DEFAULT, test.id);
    f.write("y", H5T_STD_I64LE, H5T_NATIVE_INT64, {1}, std::vector<int64_t>{0}, H5P_DEFAULT, test.id);
  }
  const auto train = open_source(path);
  ASSERT_EQ(train->size(), 2u);
  EXPECT_EQ(features_of(*train, 1), (std::vector<float>{3, 4}));
  expect_has(train->describe(), "(train/x, train/labels)");
  EXPECT_TRUE(has_held_out_split(path));
  // The validation set is what training looks at; the test set stays held out.
  const auto held_out = open_source(path, Split::kHeldOut);
  EXPECT_EQ(features_of(*held_out, 0), (std::vector<float>{5, 6}));
  expect_has(held_out->describe(), "(val/x, val/y)");
  // A group named in the path is read as it is, whatever the split.
  const auto test = open_source(path + ":test", Split::kValidationFile);
  EXPECT_EQ(features_of(*test, 0), (std::vector<float>{7, 8}));
  EXPECT_FALSE(has_held_out_split(path + ":/test/"));
}

// 'val' reads the val group and 'test' the test group (before, 't10k' read the val group); a
// file with a validation group alone offers train and val, and refuses 'test' in one line.
TEST(Hdf5Source, ValAndTestAreEachTheirOwnGroup) {
  TempDir dir;
  using Offered = std::vector<std::string>;
  const std::string path = dir.str() + "/groups.h5";
  {
    H5File f(path);
    const H5Group train(f, "train"), val(f, "val"), test(f, "test");
    for (const auto& [group, value] : {std::pair{train.id, 1.0f}, std::pair{val.id, 5.0f}, std::pair{test.id, 7.0f}}) {
      f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 1}, std::vector<float>{value}, H5P_DEFAULT, group);
      f.write("y", H5T_STD_I64LE, H5T_NATIVE_INT64, {1}, std::vector<int64_t>{0}, H5P_DEFAULT, group);
    }
  }
  EXPECT_EQ(splits_of(path), (Offered{"train", "val", "test"}));
  EXPECT_EQ(features_of(*open_source(path, "train"), 0), std::vector<float>{1});
  EXPECT_EQ(features_of(*open_source(path, "val"), 0), std::vector<float>{5});
  EXPECT_EQ(features_of(*open_source(path, "test"), 0), std::vector<float>{7});
  expect_has(open_source(path, "t10k")->describe(), "(test/x, test/y)");
  EXPECT_EQ(splits_of(path + ":test"), Offered{"train"});  // a group named in the path is one split

  const std::string valid = dir.str() + "/valid.h5";
  {
    H5File f(valid);
    f.floats("x", {1, 1}, {1});
    f.int64s("y", {0});
    const H5Group validation(f, "validation");
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 1}, std::vector<float>{2}, H5P_DEFAULT, validation.id);
    f.write("y", H5T_STD_I64LE, H5T_NATIVE_INT64, {1}, std::vector<int64_t>{0}, H5P_DEFAULT, validation.id);
  }
  EXPECT_EQ(splits_of(valid), (Offered{"train", "val"}));
  EXPECT_EQ(features_of(*open_source(valid, "val"), 0), std::vector<float>{2});
  EXPECT_EQ(usage_error_text([&] { open_source(valid, "test"); }),
            "no split 'test' in " + valid +
                " (an HDF5 file): it offers train and val, and no datasets are named with _test and no group test "
                "holds x and y; ask for one of those, or give the test data's own path");
}

TEST(Hdf5Source, AGroupNamedInThePathIsSearchedLikeTheRoot) {
  TempDir dir;
  const std::string path = dir.str() + "/emb.h5";
  {
    H5File f(path);
    f.floats("x", {1, 1}, {-1});  // the root's arrays are not the ones asked for
    f.int64s("y", {0});
    const H5Group models(f, "models");
    const hid_t resnet = H5Gcreate2(models.id, "resnet50", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    f.write("features_train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 1}, std::vector<float>{1, 2}, H5P_DEFAULT, resnet);
    f.write("targets_train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2}, std::vector<float>{0.5f, 1.5f}, H5P_DEFAULT,
            resnet);
    f.write("features_test", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 1}, std::vector<float>{3}, H5P_DEFAULT, resnet);
    f.write("targets_test", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1}, std::vector<float>{2.5f}, H5P_DEFAULT, resnet);
    H5Gclose(resnet);
  }
  const std::string group = path + ":models/resnet50";
  const auto train = open_source(group);
  ASSERT_EQ(train->size(), 2u);
  EXPECT_EQ(train->target_kind(), TargetKind::kRegression);
  EXPECT_EQ(targets_of(*train, 1), (std::vector<float>{1.5f}));
  expect_has(train->describe(), "(models/resnet50/features_train, models/resnet50/targets_train)");
  EXPECT_TRUE(has_held_out_split(group));
  EXPECT_EQ(features_of(*open_source(group, "t10k"), 0), (std::vector<float>{3}));
  EXPECT_EQ(features_of(*open_source(group, Split::kHeldOut), 0), (std::vector<float>{3}));
  EXPECT_EQ(features_of(*open_source(group, Split::kValidationFile), 0), (std::vector<float>{3}));
  EXPECT_EQ(features_of(*open_source(path), 0), (std::vector<float>{-1}));
  expect_has(error_text([&] { open_source(path + ":models"); }),
             "emb.h5:models has no features dataset (looked for x, X, features, data, inputs, images (or with "
             "_train) in the group models; found: resnet50 (group))");
}

TEST(Hdf5Source, FloatTargetsAreRegressionTargets) {
  TempDir dir;
  const std::string path = dir.str() + "/reg.h5";
  {
    H5File f(path);
    f.floats("inputs", {2, 1}, {1, 2});
    f.write("targets", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 2}, std::vector<double>{0.5, -1, 2.25, 3});
  }
  const auto source = open_source(path);
  ASSERT_EQ(source->target_kind(), TargetKind::kRegression);
  ASSERT_EQ(source->target_dim(), 2);
  EXPECT_EQ(targets_of(*source, 1), (std::vector<float>{2.25f, 3.0f}));
}

TEST(Hdf5Source, WhatCannotBeReadGetsOneLine) {
  TempDir dir;
  const auto open = [&](const std::string& name) { return error_text([&] { open_source(dir.str() + "/" + name); }); };
  const auto make = [&](const std::string& name, const auto& fill) {
    H5File f(dir.str() + "/" + name);
    fill(f);
  };

  dir.write_text("text.h5", "x,y\n1,0\n");
  expect_has(open("text.h5"), "text.h5 is not an HDF5 file (no HDF5 signature)");
  make("whole.h5", [](H5File& f) {
    f.floats("x", {256, 4}, std::vector<float>(1024, 1.0f));
    f.int64s("y", std::vector<int64_t>(256, 0));
  });
  std::filesystem::copy_file(dir.str() + "/whole.h5", dir.str() + "/cut.h5");
  std::filesystem::resize_file(dir.str() + "/cut.h5", std::filesystem::file_size(dir.str() + "/whole.h5") / 2);
  expect_has(open("cut.h5"), "cut.h5 is truncated (truncated file: eof = ");
  expect_has(open("cut.h5"), "): shorter than its HDF5 header records, a copy cut short or a file still being written");

  make("notargets.h5", [](H5File& f) {
    f.floats("emb", {2, 1}, {1, 2});
    f.int64s("lab", {0, 1});
    H5Gclose(H5Gcreate2(f.id(), "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    f.floats("x", {2, 1}, {1, 2});
  });
  make("ingroup.h5", [](H5File& f) {
    const hid_t group = H5Gcreate2(f.id(), "train", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 1}, std::vector<float>{1}, H5P_DEFAULT, group);
    H5Gclose(group);
    f.floats("emb", {2, 1}, {1, 2});
  });
  expect_has(open("ingroup.h5"),
             "ingroup.h5 has no features dataset (looked for x, X, features, data, inputs, "
             "images (or with _train) at the root and in its group train; found: emb, train (group)); "
             "write them with f.create_dataset(\"x\", data=X), or name the group that holds them as file.h5:group");
  expect_has(open("notargets.h5"),
             "notargets.h5 has the features x but no targets dataset (looked for y, Y, labels, "
             "targets, label, target (or with _train) at the root; found: emb, lab, meta (group), "
             "x)");
  expect_has(error_text([&] { open_source(dir.str() + "/whole.h5", Split::kHeldOut); }),
             "looked for x, X, features, data, inputs, images (with the suffix _val, _valid, _validation, _test) "
             "at the root; found: x, y)");
  expect_has(open("whole.h5:emb"),
             "whole.h5:emb has no group 'emb' (the root holds: x, y); name a group as "
             "file.h5:group/subgroup");
  expect_has(open("whole.h5:x"),
             "whole.h5:x names 'x', which is not a group; name the group that holds the "
             "features and targets datasets (file.h5:group)");
  expect_has(open("absent.h5:emb"), "dataset file " + dir.str() + "/absent.h5 does not exist");

  make("rows.h5", [](H5File& f) {
    f.floats("x", {2, 1}, {1, 2});
    f.int64s("y", {0, 1, 2});
  });
  expect_has(open("rows.h5"), "rows.h5:x has 2 rows and ");
  expect_has(open("rows.h5"), "rows.h5:y has 3; they must have one row per sample each");

  make("strings.h5", [](H5File& f) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 4);
    f.write("x", type, type, {2}, std::vector<char>{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'});
    H5Tclose(type);
    f.int64s("y", {0, 1});
  });
  expect_has(open("strings.h5"),
             "strings.h5:x holds string values; stoker reads integer and float datasets: convert "
             "with x.astype(np.float32)");
  make("names.h5", [](H5File& f) {
    f.floats("x", {2, 1}, {1, 2});
    const hid_t type = H5Tcopy(H5T_C_S1);  // h5py's string_dtype(): variable-length UTF-8 strings
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    const std::vector<const char*> names{"cat", "dog"};
    f.write("y", type, type, {2}, names);
    H5Tclose(type);
  });
  expect_has(open("names.h5"),
             "names.h5:y holds string values; stoker reads integer and float datasets: convert with "
             "x.astype(np.float32) (features), or store class names as ids with "
             "names, y = np.unique(labels, return_inverse=True)");
  make("jpegs.h5", [](H5File& f) {
    const hid_t type = H5Tvlen_create(H5T_NATIVE_UINT8);  // h5py's vlen_dtype(np.uint8): encoded images
    std::vector<uint8_t> a{0xff, 0xd8, 0xff}, b{0xff, 0xd8};
    const std::vector<hvl_t> rows{{a.size(), a.data()}, {b.size(), b.data()}};
    f.write("x", type, type, {2}, rows);
    H5Tclose(type);
    f.int64s("y", {0, 1});
  });
  expect_has(open("jpegs.h5"),
             "jpegs.h5:x holds variable-length values (encoded images, say); stoker reads integer and float "
             "datasets of one shape: give a Dataset whose items return each image's bytes to stoker.DataLoader");

  make("records.h5", [](H5File& f) {
    struct Row {
      float a;
      int32_t b;
    };
    const hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(type, "a", HOFFSET(Row, a), H5T_NATIVE_FLOAT);
    H5Tinsert(type, "b", HOFFSET(Row, b), H5T_NATIVE_INT32);
    f.write("x", type, type, {2}, std::vector<Row>{{1, 2}, {3, 4}});
    H5Tclose(type);
    f.int64s("y", {0, 1});
  });
  expect_has(open("records.h5"), "records.h5:x holds compound (record) values; stoker reads");

  make("bools.h5", [](H5File& f) {
    // h5py's bool: an enum of int8 with FALSE = 0 and TRUE = 1.
    const hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t value = 0;
    H5Tenum_insert(type, "FALSE", &value);
    value = 1;
    H5Tenum_insert(type, "TRUE", &value);
    f.floats("x", {2, 1}, {1, 2});
    f.write("y", type, type, {2}, std::vector<int8_t>{0, 1});
    H5Tclose(type);
  });
  expect_has(open("bools.h5"),
             "bools.h5:y is an enum dataset (h5py stores bool arrays this way); stoker reads "
             "integer and float datasets: store it with .astype(np.uint8)");

  make("mini.h5", [](H5File& f) {
    const hid_t mini = H5Tcopy(H5T_IEEE_F32LE);  // a 1-byte float (E4M3-like): not numpy's
    H5Tset_fields(mini, 7, 3, 4, 0, 3);
    H5Tset_size(mini, 1);
    H5Tset_ebias(mini, 7);
    f.write("x", mini, H5T_NATIVE_FLOAT, {2, 1}, std::vector<float>{1, 2});
    H5Tclose(mini);
    f.int64s("y", {0, 1});
  });
  expect_has(open("mini.h5"), "mini.h5:x holds 1-byte floats; stoker reads float16, float32 and float64 datasets");

  make("nan.h5", [](H5File& f) {
    f.floats("x", {2, 1}, {1, NAN});
    f.int64s("y", {0, 1});
  });
  expect_has(open("nan.h5"), "a feature of sample 1 (column 0) is nan; fill or drop missing values");

  expect_has(open("absent.h5"), "absent.h5 does not exist");
}

// A file its writer holds open (h5py's File(path, "w") in another process: HDF5 locks it) and one
// whose writer stopped before closing it (killed; the latest file format marks it open for
// writing) are each named as what they are, not as damaged. The writer is a child process: HDF5
// shares a file one process opens twice instead of locking it.
TEST(Hdf5Source, AFileItsWriterHoldsOrLeftOpenSaysSo) {
  TempDir dir;
  const std::string locked = dir.str() + "/locked.h5", left_open = dir.str() + "/left_open.h5";
  const auto write_in_child = [](const std::string& path, bool latest, int ready, int finish) {
    const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
    if (latest) H5Pset_libver_bounds(access, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access);
    const hsize_t rows = 4;
    const hid_t space = H5Screate_simple(1, &rows, nullptr);
    const std::vector<int64_t> values{0, 1, 2, 3};
    for (const char* name : {"x", "y"}) {
      const hid_t d = H5Dcreate2(file, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
      H5Dclose(d);
    }
    H5Fflush(file, H5F_SCOPE_GLOBAL);
    const char byte = file >= 0 ? 1 : 0;
    if (::write(ready, &byte, 1) != 1) ::_exit(1);
    char wait = 0;
    if (finish >= 0 && ::read(finish, &wait, 1) < 0) ::_exit(1);
    ::_exit(0);  // without H5Fclose: as a writer killed mid-run
  };
  int ready[2], finish[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(finish), 0);
  const pid_t writer = ::fork();
  if (writer == 0) {
    ::close(finish[1]);  // else its read below never sees the end of the pipe
    write_in_child(locked, false, ready[1], finish[0]);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1) << "the child could not write " << locked;
  const std::string while_held = error_text([&] { open_source(locked); });
  ::close(finish[1]);  // the writer exits
  int status = 0;
  ::waitpid(writer, &status, 0);
  expect_has(while_held, locked +
                             " is locked by another process that has it open for writing (HDF5's file lock); "
                             "wait until that program closes it");

  const pid_t killed = ::fork();
  if (killed == 0) write_in_child(left_open, true, ready[1], -1);
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::waitpid(killed, &status, 0);
  expect_has(error_text([&] { open_source(left_open); }),
             left_open +
                 " is marked open for writing: the program that wrote it did not close it (still running, or "
                 "stopped before File.close()); let it finish, or, if the file is complete, clear the mark "
                 "with h5clear -s " +
                 left_open + " (Debian's hdf5-tools)");
  for (int fd : {ready[0], ready[1], finish[0]}) ::close(fd);
}

}  // namespace
}  // namespace stoker::data
