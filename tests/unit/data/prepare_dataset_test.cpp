// prepare_dataset() with several workers (also run under TSan): every file is written once,
// the report adds up, damaged JPEGs are listed, and bad paths throw with the path named.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/prepare.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::make_photo_like;
using stoker::testing::TempDir;

TEST(PrepareDatasetTest, RewritesEveryJpegOnceWithSeveralWorkers) {
  TempDir dir;
  int64_t jpeg_bytes = 0;
  for (int i = 0; i < 24; ++i) {
    const auto bytes = encode_jpeg(make_photo_like(48 + i, 40, 3, static_cast<uint32_t>(i)));
    jpeg_bytes += static_cast<int64_t>(bytes.size());
    dir.write("in/c" + std::to_string(i % 3) + "/" + std::to_string(i) + ".jpg", bytes);
  }
  dir.write_text("in/notes.txt", "not an image");
  dir.write("in/c0/bad.jpg", {0xFF, 0xD8, 0xFF, 0xE0, 0x00});
  std::atomic<int64_t> last_done{-1};
  PrepareOptions options;
  options.workers = 3;
  options.progress = [&](int64_t done, int64_t total) {
    EXPECT_LE(done, total);
    last_done = done;
  };
  const PrepareReport r = prepare_dataset(dir.str() + "/in", dir.str() + "/out", options);
  EXPECT_EQ(r.files, 26);
  EXPECT_EQ(r.jpegs_rewritten, 24);
  EXPECT_EQ(last_done.load(), 26);
  ASSERT_EQ(r.kept_count, 1);
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_EQ(r.kept[0].path, "c0/bad.jpg");
  EXPECT_EQ(r.bytes_in, jpeg_bytes + 12 + 5);
  int64_t written = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path() / "out")) {
    if (e.is_regular_file()) written += static_cast<int64_t>(e.file_size());
  }
  EXPECT_EQ(r.bytes_out, written);
}

// A large tree takes a while to list before the first file is rewritten: progress reports the
// files found so far (total -1) during the listing, then the rewriting.
TEST(PrepareDatasetTest, ProgressCoversTheListingToo) {
  TempDir dir;
  for (int i = 0; i < 700; ++i) dir.write_text("in/c" + std::to_string(i % 7) + "/" + std::to_string(i) + ".txt", "x");
  std::vector<int64_t> found;
  int64_t last_done = -1;
  PrepareOptions options;
  options.progress = [&](int64_t done, int64_t total) {
    if (total < 0) {
      found.push_back(done);
    } else {
      EXPECT_EQ(total, 700);
      last_done = done;
    }
  };
  EXPECT_EQ(prepare_dataset(dir.str() + "/in", dir.str() + "/out", options).files, 700);
  ASSERT_GE(found.size(), 2u);  // 707 entries (7 folders), one call per 256
  EXPECT_LT(found.front(), found.back());
  EXPECT_LE(found.back(), 700);
  EXPECT_EQ(last_done, 700);
}

TEST(PrepareDatasetTest, BadPathsThrowNamingThePath) {
  TempDir dir;
  dir.write_text("in/a/x.txt", "x");
  dir.write_text("taken/y.txt", "y");
  const auto message = [&](const std::string& in, const std::string& out) -> std::string {
    try {
      prepare_dataset(in, out);
    } catch (const Error& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_NE(message(dir.str() + "/nope", dir.str() + "/o").find("/nope is not a directory"), std::string::npos);
  EXPECT_NE(message(dir.str() + "/in", dir.str() + "/taken").find("/taken exists and is not empty"), std::string::npos);
  EXPECT_NE(message(dir.str() + "/in", dir.str() + "/in/a/out").find("lies inside --data"), std::string::npos);
  EXPECT_NE(message(dir.str() + "/in", dir.str() + "/in").find("/in is --data " + dir.str() + "/in (the same folder)"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
