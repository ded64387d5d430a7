// Standardize's fit cache (data/transform/fit_cache.h): a second fit over the same rows reads
// none of them; another file size, modification time or fit_rows is another key; a damaged or
// unreadable cache file counts as absent; STOKER_FIT_CACHE=0 turns the cache off; a source
// without a rows origin (a view, a table) is never cached.
#include "data/transform/fit_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

namespace fs = std::filesystem;

// Rows of 3 features (row i: i, 2i, 7), read one at a time and counted, as a chunked
// dataset of `origin` would be.
class RowsSource final : public Source {
 public:
  RowsSource(size_t rows, std::optional<RowsOrigin> origin) : rows_(rows), origin_(std::move(origin)) {}
  size_t size() const override { return rows_; }
  std::string name(size_t i) const override { return "rows[" + std::to_string(i) + "]"; }
  std::string describe() const override { return "rows"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  int feature_count() const override { return 3; }
  Status read(size_t i, SampleData* out) const override {
    reads_.fetch_add(1);
    const float row[3] = {static_cast<float>(i), 2.0f * static_cast<float>(i), 7};
    out->storage.resize(sizeof(row));
    std::memcpy(out->storage.data(), row, sizeof(row));
    out->bytes = out->storage;
    out->feature_count = 3;
    return Status::ok_status();
  }
  std::optional<RowsOrigin> rows_origin() const override { return origin_; }
  uint64_t reads() const { return reads_.load(); }

 private:
  size_t rows_;
  std::optional<RowsOrigin> origin_;
  std::vector<std::string> classes_{"a"};
  mutable std::atomic<uint64_t> reads_{0};
};

// Sets an environment variable for its scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* before = std::getenv(name)) before_ = before;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (before_) {
      ::setenv(name_, before_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> before_;
};

class FitCacheTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  ScopedEnv cache{"STOKER_CACHE", dir.str() + "/cache"};
  ScopedEnv on{"STOKER_FIT_CACHE", "1"};
  const std::string data = dir.write_text("rows.h5", "stands for the file the rows are in");
  const Source::RowsOrigin origin{data, "x"};

  // Fits `source` through the cache; returns the note.
  static std::string fit(const Source& source, std::vector<float>* mean, std::vector<float>* std,
                         int64_t fit_rows = 0) {
    return fit_standardize_cached(source, mean, std, 1, fit_rows);
  }
};

TEST_F(FitCacheTest, ASecondFitOverTheSameRowsReadsNone) {
  RowsSource first(100, origin);
  std::vector<float> mean, std;
  EXPECT_EQ(fit(first, &mean, &std), "");
  EXPECT_EQ(first.reads(), 100u);
  ASSERT_EQ(mean.size(), 3u);
  EXPECT_FLOAT_EQ(mean[0], 49.5f);
  EXPECT_FLOAT_EQ(std[2], 1.0f);  // a constant feature

  RowsSource second(100, origin);
  std::vector<float> mean2, std2;
  const std::string note = fit(second, &mean2, &std2);
  EXPECT_EQ(second.reads(), 0u);
  EXPECT_EQ(mean2, mean);  // bit for bit: hex floats
  EXPECT_EQ(std2, std);
  const auto entry = fit_cache_entry(second, 0);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(note, "Standardize: the mean and std of " + data + " (dataset x) read from the fit cache " + entry->file +
                      "; STOKER_FIT_CACHE=0 fits again");
  EXPECT_TRUE(entry->file.starts_with(dir.str() + "/cache/fit-")) << entry->file;

  // Through a Loader too, which says so.
  LoaderOptions options;
  options.batch_size = 10;
  options.workers = 1;
  options.transform = parse_transforms("Standardize(fit_rows=None)");  // fit_rows 0, as above
  auto counted = std::make_shared<RowsSource>(100, origin);
  Loader loader(counted, options);
  EXPECT_EQ(counted->reads(), 0u);
  EXPECT_EQ(loader.options().transform.features.mean, mean);
  EXPECT_EQ(loader.fit_note(), note);
}

TEST_F(FitCacheTest, AnotherFileStateOrSampleIsAnotherKey) {
  RowsSource source(100, origin);
  std::vector<float> mean, std;
  fit(source, &mean, &std);
  const std::string before = fit_cache_entry(source, 0)->file;
  EXPECT_NE(fit_cache_entry(source, 50)->file, before);                         // fit_rows
  EXPECT_NE(fit_cache_entry(RowsSource(99, origin), 0)->file, before);          // rows
  EXPECT_NE(fit_cache_entry(RowsSource(100, {{data, "y"}}), 0)->file, before);  // dataset

  // The file written again, with another modification time: fitted again.
  std::ofstream(data, std::ios::app) << " and more";
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, data.c_str(), times, 0), 0);
  EXPECT_NE(fit_cache_entry(source, 0)->file, before);
  RowsSource after(100, origin);
  EXPECT_EQ(fit(after, &mean, &std), "");
  EXPECT_EQ(after.reads(), 100u);
}

TEST_F(FitCacheTest, ADamagedOrUnreadableFileIsAbsent) {
  RowsSource source(100, origin);
  std::vector<float> mean, std;
  fit(source, &mean, &std);
  const FitCacheEntry entry = *fit_cache_entry(source, 0);
  const std::string whole = [&] {
    std::ifstream in(entry.file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  ASSERT_TRUE(whole.ends_with("end\n")) << whole;
  const std::vector<std::string> damaged{
      "",                                                                  // empty
      whole.substr(0, whole.size() / 2),                                   // cut short
      whole.substr(0, whole.size() - 4),                                   // no end line
      whole.substr(0, whole.find("mean")) + "mean 1 2\nstd 1 1 1\nend\n",  // too few values
      whole.substr(0, whole.find("mean")) + "mean 1 2 x\nstd 1 1 1\nend\n",
      whole.substr(0, whole.find("mean")) + "mean 1 2 3\nstd 1 0 1\nend\n",  // a std of 0
      whole.substr(0, whole.find("mean")) + "mean 1 2 nan\nstd 1 1 1\nend\n",
      "stoker fit cache\npath /elsewhere\n" + whole.substr(whole.find("mean")),  // another key
  };
  for (const std::string& text : damaged) {
    std::ofstream(entry.file, std::ios::trunc) << text;
    RowsSource again(100, origin);
    std::vector<float> m, s;
    EXPECT_EQ(fit(again, &m, &s), "") << text;
    EXPECT_EQ(again.reads(), 100u) << text;
    EXPECT_EQ(m, mean) << text;
  }
  // Written again whole by the last fit.
  RowsSource reread(100, origin);
  std::vector<float> m, s;
  EXPECT_NE(fit(reread, &m, &s), "");
  EXPECT_EQ(reread.reads(), 0u);

  // A folder in the file's place: unreadable, so fitted (and not kept).
  fs::remove(entry.file);
  fs::create_directories(entry.file);
  RowsSource blocked(100, origin);
  EXPECT_EQ(fit(blocked, &m, &s), "");
  EXPECT_EQ(blocked.reads(), 100u);
  EXPECT_EQ(m, mean);
}

TEST_F(FitCacheTest, TurnedOffOrWithoutAnOriginNothingIsCached) {
  {
    const ScopedEnv off("STOKER_FIT_CACHE", "0");
    RowsSource source(100, origin);
    EXPECT_FALSE(fit_cache_entry(source, 0).has_value());
    std::vector<float> mean, std;
    fit(source, &mean, &std);
    RowsSource again(100, origin);
    EXPECT_EQ(fit(again, &mean, &std), "");
    EXPECT_EQ(again.reads(), 100u);
  }
  EXPECT_FALSE(fs::exists(dir.str() + "/cache"));
  RowsSource unnamed(100, std::nullopt);
  EXPECT_FALSE(fit_cache_entry(unnamed, 0).has_value());
  std::vector<float> mean, std;
  fit(unnamed, &mean, &std);
  EXPECT_FALSE(fs::exists(dir.str() + "/cache"));
}

}  // namespace
}  // namespace stoker::data
