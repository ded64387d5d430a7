// OpenProgress: what opening a source reports while it runs (the class folders of an image
// folder listed and the files found; the files of a pattern opened and their samples), to the
// scope of the thread that opens it, and nothing outside a scope; and when the front ends show
// it: a line once the open has run a second past its checks, which a bad path never passes;
// and the one loop that shows those lines while an open runs (open_with_progress_line); and the
// rows Standardize's fit has summed, which the same loop shows while a Loader is made.
#include "stoker/data/open_progress.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "data/source/source_view.h"
#include "stoker/core/error.h"
#include "stoker/core/progress_line.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/numpy_files.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::npy_bytes;
using stoker::testing::raw_bytes;
using stoker::testing::TempDir;
using stoker::testing::without_open_progress_lines;

// The command-line tests' error checks leave out the lines a slow open writes before an error
// (a loaded machine's): every form open_progress_text writes, and nothing else.
TEST(OpenProgressTest, TheErrorChecksKnowEveryFormOfTheLine) {
  const std::string error = "error: RandomCrop's 32x32 crop is larger than the data's 28x28 images\n";
  for (const std::string& line : {open_progress_text("/data/fashion-mnist", 0, 0, 0, false, 1.2),
                                  open_progress_text("train/", 412000, 322, 1000, false, 4),
                                  open_progress_text("train/", 9, 1000, 1000, false, 30),
                                  open_progress_text("s-{000..999}.tar", 300000, 300, 1282, true, 12),
                                  fit_progress_text("x.h5", 40000, 125000, 6)}) {
    EXPECT_EQ(without_open_progress_lines(line + "\n" + error), error) << line;
  }
  EXPECT_EQ(without_open_progress_lines("opening the file failed, 1 s late\n" + error),
            "opening the file failed, 1 s late\n" + error);
}

TEST(OpenProgressTest, AnImageFolderCountsItsClassFoldersAndFiles) {
  TempDir dir;
  for (const char* name : {"cat/a.jpg", "cat/b.jpg", "dog/c.png", "eel/d.jpg", "eel/deep/e.jpg", "eel/notes.txt"}) {
    dir.write(name, std::vector<uint8_t>{1});
  }
  OpenProgress progress;
  {
    const OpenProgressScope scope(&progress);
    EXPECT_EQ(current_open_progress(), &progress);
    EXPECT_EQ(open_source(dir.str())->size(), 5u);
  }
  EXPECT_EQ(current_open_progress(), nullptr);
  EXPECT_EQ(progress.parts, 3u);
  EXPECT_EQ(progress.parts_done, 3u);
  EXPECT_EQ(progress.files, 5u);
  EXPECT_FALSE(progress.shards);
  EXPECT_EQ(open_source(dir.str())->size(), 5u);  // outside a scope: nothing to report to
  EXPECT_EQ(progress.files, 5u);
}

TEST(OpenProgressTest, ThePatternsFilesCountAsTheyAreOpened) {
  TempDir dir;
  for (int s = 0; s < 3; ++s) {
    std::string names;
    for (int i = 0; i <= s; ++i) {
      dir.write(fmt::format("src{}/{:04d}.jpg", s, i), std::vector<uint8_t>{1});
      dir.write_text(fmt::format("src{}/{:04d}.cls", s, i), "1");
      names += fmt::format(" {:04d}.jpg {:04d}.cls", i, i);
    }
    const auto run =
        stoker::testing::run_command(fmt::format("tar -cf {0}/part-{1}.tar -C {0}/src{1}{2}", dir.str(), s, names));
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  OpenProgress progress;
  OpenProgress inner;
  {
    const OpenProgressScope scope(&progress);
    {
      const OpenProgressScope nested(&inner);  // the innermost scope is the one reported to
      EXPECT_EQ(open_source(dir.str() + "/part-*.tar")->size(), 6u);
    }
    EXPECT_EQ(current_open_progress(), &progress);
  }
  EXPECT_EQ(progress.parts, 0u);
  EXPECT_EQ(inner.parts, 3u);
  EXPECT_EQ(inner.parts_done, 3u);
  EXPECT_EQ(inner.files, 6u);
  EXPECT_TRUE(inner.shards);
}

// The checks that fail fast (a missing path, a pattern that matches nothing, a split the data
// lacks, a file of no kind stoker reads) end before the line's clock starts: however slow the
// machine, their error comes without a line before it.
TEST(OpenProgressTest, TheLinesClockStartsOnceThePathsChecksPass) {
  TempDir dir;
  dir.write("cat/a.jpg", std::vector<uint8_t>{1});
  dir.write_text("notes.txt", "not data");
  const std::vector<std::pair<std::string, std::string>> bad = {{dir.str() + "/missing", "train"},
                                                                {dir.str() + "/*.tar", "train"},
                                                                {dir.str() + "/notes.txt", "train"},
                                                                {dir.str(), "val"}};
  for (const auto& [path, split] : bad) {
    OpenProgress progress;
    const OpenProgressScope scope(&progress);
    EXPECT_THROW(open_source(path, split), Error) << path << " " << split;
    EXPECT_FALSE(progress.checked()) << path << " " << split;
    EXPECT_FALSE(progress.line_due());
  }
  OpenProgress progress;
  EXPECT_EQ(progress.seconds(), 0);
  {
    const OpenProgressScope scope(&progress);
    EXPECT_EQ(open_source(dir.str())->size(), 1u);
  }
  EXPECT_TRUE(progress.checked());
  std::this_thread::sleep_for(std::chrono::duration<double>(OpenProgress::kLineAfterSeconds));
  EXPECT_TRUE(progress.line_due());
  EXPECT_GE(progress.seconds(), OpenProgress::kLineAfterSeconds);
}

// The open runs on a thread of its own; the lines are written on the calling thread (where the
// command line's stderr is, and where Python's writer takes the GIL), once due, and the open's
// error comes to the caller with no line before it.
TEST(OpenProgressTest, OneLoopShowsASlowOpensLineOnTheCallingThread) {
  TempDir dir;
  dir.write("cat/a.jpg", std::vector<uint8_t>{1});
  std::vector<std::string> lines;
  std::vector<std::thread::id> writers;
  ProgressLine line([&](const std::string& text) {
    lines.push_back(text);
    writers.push_back(std::this_thread::get_id());
  });
  std::thread::id opener;
  const auto source = open_with_progress_line(
      "train/",
      [&] {
        opener = std::this_thread::get_id();
        auto opened = open_source(dir.str());  // counts 1 file in 1 class folder and starts the line's clock
        std::this_thread::sleep_for(std::chrono::duration<double>(OpenProgress::kLineAfterSeconds + 0.4));
        return opened;
      },
      line);
  EXPECT_EQ(source->size(), 1u);
  EXPECT_NE(opener, std::this_thread::get_id());
  EXPECT_EQ(lines, std::vector<std::string>{"listing train/: 1 files in 1 of 1 class folders, 1 s"});
  EXPECT_EQ(writers, std::vector<std::thread::id>{std::this_thread::get_id()});

  lines.clear();
  EXPECT_THROW(open_with_progress_line(
                   "missing", [&] { return open_source(dir.str() + "/missing"); }, line),
               Error);
  EXPECT_TRUE(lines.empty());
}

// A feature file of kFitRows rows of 2 float32 features, opened without the sums it gathered
// (as a chunked HDF5 file opens): Standardize's fit reads every row.
constexpr uint64_t kFitRows = 3000;  // not a multiple of the fit's report interval
class WithoutSums final : public SourceView {
 public:
  using SourceView::SourceView;
  const FeatureSums* feature_sums() const override { return nullptr; }
};
std::shared_ptr<const Source> features_without_sums(TempDir& dir) {
  std::vector<float> x(kFitRows * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  dir.write("y.npy", npy_bytes("|u1", {int64_t{kFitRows}}, std::vector<uint8_t>(kFitRows, 1)));
  const std::string path = dir.write("x.npy", npy_bytes("<f4", {int64_t{kFitRows}, 2}, raw_bytes(x)));
  return std::make_shared<WithoutSums>(std::shared_ptr<const Source>(open_source(path)));
}

TEST(OpenProgressTest, StandardizesFitReportsItsRowsToTheScope) {
  TempDir dir;
  const auto source = features_without_sums(dir);
  OpenProgress progress;
  std::vector<float> mean, sd;
  {
    const OpenProgressScope scope(&progress);
    fit_standardize(*source, &mean, &sd);
  }
  EXPECT_TRUE(progress.fit_rows);
  EXPECT_TRUE(progress.checked());
  EXPECT_EQ(progress.parts, kFitRows);
  EXPECT_EQ(progress.parts_done, kFitRows);
  EXPECT_EQ(fit_progress_text("x.npy", 40000, 120000, 6.7),
            "fitting Standardize over x.npy: 40,000 of 120,000 rows, 6 s; about 14 s left");
  EXPECT_EQ(progress.fit_sample_of, 0U);  // every row
  EXPECT_EQ(fit_progress_text("x.h5", 40000, 131072, 2, 12000000),
            "fitting Standardize over x.h5: 40,000 of 131,072 rows sampled of 12,000,000 "
            "(Standardize(fit_rows=None) fits all), 2 s; about 5 s left");
}

// The front ends make their Loader by run_with_progress_line: a fit past a second shows its line.
TEST(OpenProgressTest, MakingALoaderThatFitsStandardizeShowsTheFitsLine) {
  TempDir dir;
  const auto source = features_without_sums(dir);
  std::vector<std::string> lines;
  ProgressLine line([&](const std::string& text) { lines.push_back(text); });
  LoaderOptions options;
  options.batch_size = 2;
  options.workers = 1;
  options.transform = parse_transforms("Standardize");
  std::unique_ptr<Loader> loader;
  run_with_progress_line(
      "x.npy",
      [&] {
        loader = std::make_unique<Loader>(source, options);  // the fit starts the line's clock
        std::this_thread::sleep_for(std::chrono::duration<double>(OpenProgress::kLineAfterSeconds + 0.4));
      },
      line);
  ASSERT_NE(loader, nullptr);
  EXPECT_FALSE(loader->options().transform.features.mean.empty());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("fitting Standardize over x.npy: 3,000 of 3,000 rows, ", 0), 0u) << lines[0];
}

}  // namespace
}  // namespace stoker::data
