// hold_out: a seeded, per-class validation split of one source, as two views of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::expect_has;
using testing::TempDir;

// A file list of `counts[c]` rows of class c (the files need not exist: nothing is read).
std::shared_ptr<const Source> classes_of(const TempDir& dir, const std::vector<int>& counts) {
  std::string csv;
  int row = 0;
  for (size_t c = 0; c < counts.size(); ++c) {
    for (int i = 0; i < counts[c]; ++i) csv += "img" + std::to_string(row++) + ".jpg," + std::to_string(c) + "\n";
  }
  return open_file_list(dir.write_text("list.csv", csv));
}

std::vector<std::string> names_of(const Source& source) {
  std::vector<std::string> names;
  for (size_t i = 0; i < source.size(); ++i) names.push_back(source.name(i));
  return names;
}

TEST(HoldOut, EachClassKeepsItsShareAndThePartsCoverTheSourceOnce) {
  TempDir dir;
  const auto source = classes_of(dir, {100, 20, 10});
  const HeldOut parts = hold_out(source, 0.1, 7);
  ASSERT_EQ(parts.val->size(), 13u);  // 10 + 2 + 1
  ASSERT_EQ(parts.train->size(), 117u);
  std::map<int64_t, int> held;
  for (size_t i = 0; i < parts.val->size(); ++i) ++held[parts.val->label(i)];
  EXPECT_EQ(held, (std::map<int64_t, int>{{0, 10}, {1, 2}, {2, 1}}));

  std::vector<std::string> all = names_of(*parts.train);
  const std::vector<std::string> val = names_of(*parts.val);
  EXPECT_TRUE(std::is_sorted(val.begin(), val.end(), [&](const std::string& a, const std::string& b) {
    return std::stoi(a.substr(a.rfind("img") + 3)) < std::stoi(b.substr(b.rfind("img") + 3));
  }));
  all.insert(all.end(), val.begin(), val.end());
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 130u);  // disjoint, and every row
  // A sample keeps its label, its targets and its name through the view.
  for (size_t i = 0; i < parts.val->size(); ++i) {
    const std::string name = parts.val->name(i);
    const int row = std::stoi(name.substr(name.rfind("img") + 3));
    EXPECT_EQ(parts.val->label(i), source->label(static_cast<size_t>(row))) << name;
  }
  EXPECT_EQ(parts.train->class_names().size(), 3u);
  EXPECT_EQ(parts.val->class_names().size(), 3u);
  expect_has(parts.train->describe(),
             "3 classes → 117 for training, 13 held out (val_split 0.1, each class in proportion)");
}

TEST(HoldOut, TheSeedDecidesTheSplit) {
  TempDir dir;
  const auto source = classes_of(dir, {60, 60});
  EXPECT_EQ(names_of(*hold_out(source, 0.2, 1).val), names_of(*hold_out(source, 0.2, 1).val));
  EXPECT_NE(names_of(*hold_out(source, 0.2, 1).val), names_of(*hold_out(source, 0.2, 2).val));
}

TEST(HoldOut, RegressionTargetsAreSplitOverAllSamples) {
  TempDir dir;
  std::string csv;
  for (int i = 0; i < 40; ++i) csv += "img" + std::to_string(i) + ".jpg," + std::to_string(i) + ".5\n";
  const std::shared_ptr<const Source> source = open_file_list(dir.write_text("ages.csv", csv));
  const HeldOut parts = hold_out(source, 0.25, 3);
  EXPECT_EQ(parts.val->size(), 10u);
  EXPECT_EQ(parts.val->target_kind(), TargetKind::kRegression);
  const std::string name = parts.val->name(0);
  EXPECT_EQ(testing::targets_of(*parts.val, 0),
            (std::vector<float>{std::stof(name.substr(name.rfind("img") + 3)) + 0.5f}));
  expect_has(parts.train->describe(), "→ 30 for training, 10 held out (val_split 0.25)");
}

TEST(HoldOut, ASplitThatLeavesAPartEmptySaysWhatWouldWork) {
  TempDir dir;
  const auto source = classes_of(dir, {40, 40, 40});
  expect_has(testing::usage_error_text([&] { hold_out(source, 0.001, 0); }),
             "val_split 0.001 of 120 samples (40 per class at most) leaves 0 for validation and 120 for training; both "
             "need some: choose a split between 0.025 and 0.975, or give --val-data");
  expect_has(testing::usage_error_text([&] { hold_out(source, 0.999, 0); }),
             "leaves 120 for validation and 0 for training");
  expect_has(testing::usage_error_text([&] { hold_out(source, 1, 0); }), "val_split must be in (0, 1)");
}

}  // namespace
}  // namespace stoker::data
