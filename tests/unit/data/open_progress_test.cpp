// OpenProgress: what opening a source reports while it runs (the class folders of an image
// folder listed and the files found; the files of a pattern opened and their samples), to the
// scope of the thread that opens it, and nothing outside a scope.
#include "stoker/data/open_progress.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/data/source.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;

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

}  // namespace
}  // namespace stoker::data
