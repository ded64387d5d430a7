// `stoker prepare` end to end: a copy of a dataset whose JPEGs carry restart markers and
// decode to the same pixels, other files byte for byte, damaged JPEGs kept as they were, the
// loader's batches unchanged, and one-line errors for bad arguments.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stoker/data/decode.h"
#include "stoker/data/encode.h"
#include "stoker_program.h"
#include "support/codec_bytes.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

using stoker::testing::expect_one_line_errors;
using stoker::testing::find_jpeg_segment;
using stoker::testing::make_photo_like;
using stoker::testing::read_bytes;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::TempDir;

using testing::kStoker;

// root/{cat,dog}/ with 6 JPEGs of different sizes and flavours each, a PNG, a truncated
// JPEG and a CSV list beside them.
std::string write_dataset(const TempDir& dir) {
  for (int i = 0; i < 12; ++i) {
    const std::string cls = i % 2 == 0 ? "cat" : "dog";
    data::JpegEncodeOptions options{.quality = 70 + 2 * i, .progressive = i % 3 == 0};
    const auto image = make_photo_like(96 + 17 * i, 80 + 11 * i, 3, static_cast<uint32_t>(i));
    dir.write("data/" + cls + "/img" + std::to_string(i) + ".jpg", data::encode_jpeg(image, options));
  }
  dir.write("data/cat/flat.png", data::encode_png(make_photo_like(64, 64, 3, 99)));
  std::vector<uint8_t> truncated = data::encode_jpeg(make_photo_like(120, 90, 3, 5));
  truncated.resize(truncated.size() / 2);
  dir.write("data/dog/broken.jpg", truncated);
  dir.write_text("data/list.csv", "path,label\ncat/img0.jpg,0\ndog/img1.jpg,1\n");
  return (dir.path() / "data").string();
}

TEST(PrepareCli, RewritesJpegsLosslesslyAndCopiesTheRest) {
  TempDir dir;
  const std::string data = write_dataset(dir);
  const std::string out = (dir.path() / "prepared").string();
  const auto r = run_command(kStoker + " prepare --data " + data + " --out " + out + " --workers 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("15 files, 12 JPEGs rewritten with restart markers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept      1 damaged JPEG copied as it was"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dog/broken.jpg: cannot rewrite JPEG: "), std::string::npos) << r.out;

  data::ImageDecoder decoder({.crop_window = false});
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data)) {
    if (!entry.is_regular_file()) continue;
    const auto rel = std::filesystem::relative(entry.path(), data);
    SCOPED_TRACE(rel.string());
    const std::vector<uint8_t> before = read_bytes(entry.path().string());
    const std::vector<uint8_t> after = read_bytes((std::filesystem::path(out) / rel).string());
    ASSERT_FALSE(after.empty());
    if (rel.extension() != ".jpg" || rel.filename() == "broken.jpg") {
      EXPECT_EQ(before, after);
      continue;
    }
    EXPECT_GE(find_jpeg_segment(after, 0xDD), 0) << "no restart interval";
    data::DecodedImage a, b;
    ASSERT_TRUE(decoder.decode(before, {3, {}, 0, 0}, &a).ok());
    ASSERT_TRUE(decoder.decode(after, {3, {}, 0, 0}, &b).ok());
    ASSERT_EQ(a.image.width(), b.image.width());
    ASSERT_EQ(a.image.height(), b.image.height());
    for (int y = 0; y < a.image.height(); ++y) {
      ASSERT_EQ(0, std::memcmp(a.image.row(y), b.image.row(y), static_cast<size_t>(a.image.width()) * 3));
    }
  }

  // The loader gives the same batches from both copies, bad sample included.
  const std::string bench =
      kStoker + " bench loader --workers 2 --epochs 2 --batch-size 4 " + "--size 48 --max-bad 0.5 --json --data ";
  const auto original = run_command(bench + data);
  const auto prepared = run_command(bench + out);
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_EQ(prepared.exit_code, 0) << prepared.err;
  const auto jo = nlohmann::json::parse(original.out);
  const auto jp = nlohmann::json::parse(prepared.out);
  EXPECT_EQ(jo["checksum"], jp["checksum"]);
  EXPECT_EQ(jo["bad_samples"].size(), jp["bad_samples"].size());
}

TEST(PrepareCli, BadArgumentsGiveOneLine) {
  TempDir dir;
  const std::string data = write_dataset(dir);
  dir.write_text("full/keep.txt", "x");
  expect_one_line_errors(kStoker + " prepare", {
                                                   {"", 2, "stoker prepare needs --data DIR"},
                                                   {" --data " + data, 2, "stoker prepare needs --out DIR"},
                                                   {" --data " + dir.str() + "/missing --out " + dir.str() + "/o", 1,
                                                    "/missing is not a directory; give the dataset's root folder"},
                                                   {" --data " + data + " --out " + dir.str() + "/full", 1,
                                                    "/full exists and is not empty; give a new directory"},
                                                   {" --data " + data + " --out " + data + "/cat/inner", 2,
                                                    "/cat/inner lies inside --data " + data + ": writing there"},
                                                   {" --data " + data + " --out " + dir.str() + "/o --workers -1", 2,
                                                    "--workers must be >= 0 (got -1; 0 = one per core)"},
                                               });
}

}  // namespace
}  // namespace stoker
