// WebDataset shards (open_web_dataset, TarArchive): tar files written by GNU tar in its three
// formats (gnu: long names in 'L' records; pax: in 'x' records; ustar: split into prefix and
// name), read back sample by sample with their text members; and each broken shard stopped
// with one line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/encode.h"
#include "stoker/data/image.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;

std::vector<uint8_t> text_bytes(const std::string& text) { return {text.begin(), text.end()}; }

// A directory over 100 characters long: its member names need the format's long-name form.
const std::string kLongDir = std::string(110, 'd');

struct Shard {
  std::string path;
  std::vector<std::vector<uint8_t>> images;  // each sample's image bytes, in order
};

// Four keys: a JPEG with class 3, a PNG with class 1, a PNG with class 0 under a long
// directory, each with a caption, and a caption alone; written by `tar --format=<format>` in
// this order.
Shard write_shard(const TempDir& dir, const std::string& name, const std::string& format) {
  const std::string src = name + "_src";
  Shard shard;
  shard.images.push_back(encode_jpeg(stoker::testing::make_photo_like(24, 16, 3, 1)));
  shard.images.push_back(encode_png(stoker::testing::make_photo_like(12, 10, 3, 2)));
  shard.images.push_back(encode_png(stoker::testing::make_photo_like(8, 8, 1, 3)));
  dir.write(src + "/000000.jpg", shard.images[0]);
  dir.write_text(src + "/000000.cls", "3\n");
  dir.write_text(src + "/000000.txt", "a photo");
  dir.write(src + "/000001.png", shard.images[1]);
  dir.write_text(src + "/000001.cls", "1");
  dir.write_text(src + "/000001.txt", "a caption");
  dir.write(src + "/" + kLongDir + "/000002.png", shard.images[2]);
  dir.write_text(src + "/" + kLongDir + "/000002.cls", " 0 ");
  dir.write_text(src + "/" + kLongDir + "/000002.txt", "");
  dir.write_text(src + "/000003.txt", "a caption alone");
  shard.path = dir.str() + "/" + name + ".tar";
  const auto run = stoker::testing::run_command(
      fmt::format("tar --format={} -cf {} -C {}/{} 000000.jpg 000000.cls 000000.txt 000001.png 000001.cls "
                  "000001.txt {}/000002.png {}/000002.cls {}/000002.txt 000003.txt",
                  format, shard.path, dir.str(), src, kLongDir, kLongDir, kLongDir));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return shard;
}

TEST(WebDatasetTest, ReadsEachSampleOfShardsInEveryTarFormat) {
  for (const char* format : {"gnu", "pax", "ustar"}) {
    SCOPED_TRACE(format);
    TempDir dir;
    const Shard shard = write_shard(dir, "train-000000", format);
    const std::unique_ptr<Source> source = open_source(shard.path);
    ASSERT_EQ(source->size(), 3u);
    EXPECT_EQ(source->target_kind(), TargetKind::kClass);
    EXPECT_EQ(source->label(0), 3);
    EXPECT_EQ(source->label(1), 1);
    EXPECT_EQ(source->label(2), 0);
    float target = -1;
    source->targets(0, &target);
    EXPECT_EQ(target, 3.0f);
    EXPECT_EQ(source->class_names(), (std::vector<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(source->name(2), shard.path + ":" + kLongDir + "/000002.png");
    EXPECT_EQ(source->describe(),
              "WebDataset shard " + shard.path + ": 3 images, 4 classes (1 sample without an image skipped)");
    // Classification shards: images and labels; their text members are not read.
    ASSERT_NE(source->columns(), nullptr);
    EXPECT_EQ(source->columns()->targets, std::vector<std::string>{"cls"});
    EXPECT_TRUE(source->columns()->extra.empty());
    SampleData data;
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(source->read(i, &data).ok());
      EXPECT_FALSE(data.raw);
      EXPECT_EQ(std::vector<uint8_t>(data.bytes.begin(), data.bytes.end()), shard.images[i]) << i;
      EXPECT_EQ(data.extra, nullptr) << i;
    }
    EXPECT_EQ(sniff_format(data.bytes), ImageFormat::kPng);  // the last read: the long-named PNG
  }
}

// Shards of one dataset by a pattern: one source, the class ids' union named.
TEST(WebDatasetTest, ShardsMatchingAPatternAreOneDataset) {
  TempDir dir;
  write_shard(dir, "train-000000", "gnu");
  dir.write("b_src/x.jpg", encode_jpeg(stoker::testing::make_photo_like(8, 8, 3, 4)));
  dir.write_text("b_src/x.cls", "7");
  dir.write_text("b_src/x.txt", "x");
  auto run = stoker::testing::run_command(
      fmt::format("tar -cf {0}/train-000001.tar -C {0}/b_src x.jpg x.cls x.txt", dir.str()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::unique_ptr<Source> source = open_source(dir.str() + "/train-*.tar");
  ASSERT_EQ(source->size(), 4u);
  EXPECT_EQ(source->label(3), 7);
  EXPECT_EQ(source->class_names().size(), 8u);
  EXPECT_EQ(source->name(3), dir.str() + "/train-000001.tar:x.jpg");
  // Classification shards with and without text members are one dataset of images and labels.
  run = stoker::testing::run_command(fmt::format("tar -cf {0}/train-000002.tar -C {0}/b_src x.jpg x.cls", dir.str()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(open_source(dir.str() + "/train-*.tar")->size(), 5u);
  // Caption shards with other text members are another kind of sample.
  run = stoker::testing::run_command(
      fmt::format("tar -cf {0}/cap-000000.tar -C {0}/b_src x.jpg x.txt && tar -cf {0}/cap-000001.tar -C {0}/b_src "
                  "x.jpg",
                  dir.str()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(stoker::testing::error_text<DataError>([&] { open_source(dir.str() + "/cap-*.tar"); }),
            fmt::format("{0}/cap-000000.tar:x.jpg and {0}/cap-000001.tar:x.jpg (both matching {0}/cap-*.tar) "
                        "differ in columns: image, txt and image; the files of one dataset must hold the same kind "
                        "of samples",
                        dir.str()));
}

// Shards of a pattern are indexed by several threads; a broken one is named as when they are
// indexed one after another: the first in the pattern's order.
TEST(WebDatasetTest, ShardsIndexedTogetherNameTheFirstBrokenOne) {
  TempDir dir;
  const Shard good = write_shard(dir, "part-00", "gnu");
  for (int i = 1; i < 12; ++i) {
    const std::string path = fmt::format("{}/part-{:02d}.tar", dir.str(), i);
    if (i == 3 || i == 9) {
      dir.write(fmt::format("part-{:02d}.tar", i), std::vector<uint8_t>(2048, 'x'));
    } else {
      std::filesystem::copy_file(good.path, path);
    }
  }
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(stoker::testing::error_text<DataError>([&] { open_source(dir.str() + "/part-*.tar"); }),
              fmt::format("{0}/part-03.tar: not a tar archive (its first header's checksum is wrong); check it with "
                          "`tar -tvf {0}/part-03.tar` (stoker reads whole, uncompressed tar files)",
                          dir.str()));
  }
  std::filesystem::copy_file(good.path, dir.str() + "/part-03.tar", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(good.path, dir.str() + "/part-09.tar", std::filesystem::copy_options::overwrite_existing);
  const std::unique_ptr<Source> source = open_source(dir.str() + "/part-*.tar");
  ASSERT_EQ(source->size(), 36u);
  EXPECT_EQ(source->name(35), dir.str() + "/part-11.tar:" + kLongDir + "/000002.png");  // in the pattern's order
}

// Shards of images and captions (as img2dataset writes them: .jpg, .json, .txt, no .cls): no
// targets, the text members as columns in name order, each sample's cells its own, and a
// sample without a member the others have a bad sample naming it; the shards combine.
TEST(WebDatasetTest, TextMembersPassThroughAsColumnsWithoutClasses) {
  TempDir dir;
  const std::vector<uint8_t> image = encode_jpeg(stoker::testing::make_photo_like(8, 8, 3, 5));
  for (int shard = 0; shard < 2; ++shard) {
    const std::string src = fmt::format("s{}_src", shard);
    std::string names;
    for (int k = 0; k < 3; ++k) {
      const std::string key = fmt::format("{:06d}", shard * 3 + k);
      dir.write(src + "/" + key + ".jpg", image);
      dir.write_text(src + "/" + key + ".json", fmt::format("{{\"id\": {}}}", shard * 3 + k));
      names += fmt::format(" {0}.jpg {0}.json", key);
      if (shard == 1 && k == 1) continue;  // 000004 has no caption
      dir.write_text(src + "/" + key + ".txt", fmt::format("caption {} · é", shard * 3 + k));
      names += " " + key + ".txt";
    }
    const auto run = stoker::testing::run_command(
        fmt::format("tar -cf {0}/cap-{1:06d}.tar -C {0}/{2}{3}", dir.str(), shard, src, names));
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  const std::unique_ptr<Source> source = open_source(dir.str() + "/cap-{000000..000001}.tar");
  ASSERT_EQ(source->size(), 6u);
  ASSERT_NE(source->columns(), nullptr);
  EXPECT_EQ(source->columns()->path, "image");
  EXPECT_TRUE(source->columns()->targets.empty());
  ASSERT_EQ(source->columns()->extra.size(), 2u);
  EXPECT_EQ(source->columns()->extra[0].name, "json");
  EXPECT_EQ(source->columns()->extra[1].name, "txt");
  EXPECT_EQ(source->label(5), 0);
  EXPECT_TRUE(source->class_names().empty());
  SampleData data;
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const Status status = source->read(i, &data);
    if (i == 4) {
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.reason(), "no 000004.txt member, which the shard's other samples have");
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.reason();
    EXPECT_EQ(std::vector<uint8_t>(data.bytes.begin(), data.bytes.end()), image);
    const std::string_view* cells = extra_cells(data.extra);
    ASSERT_NE(cells, nullptr);
    EXPECT_EQ(cells[0], fmt::format("{{\"id\": {}}}", i));
    EXPECT_EQ(cells[1], fmt::format("caption {} · é", i));
    EXPECT_EQ(extra_cells(source->extra_of(i))[1], cells[1]);
  }
  EXPECT_EQ(stoker::testing::error_text<UsageError>([&] { columns_left_unread(*source, "cap-*.tar", "stoker train"); }),
            "cap-*.tar has no target column among image, json and txt; stoker train needs one: write each sample's "
            "class id as <key>.cls (an integer as text) in its shard");
}

// One ustar header for `name` whose size field holds GNU's base-256 form of `size`, with its
// checksum right, and the two end blocks: a shard that claims a member larger than any file.
std::vector<uint8_t> header_claiming(const std::string& name, uint64_t size) {
  std::vector<uint8_t> tar(3 * 512, 0);
  std::copy(name.begin(), name.end(), tar.begin());
  tar[124] = 0x80;
  for (int i = 0; i < 8; ++i) tar[135 - i] = static_cast<uint8_t>(size >> (8 * i));
  tar[156] = '0';
  std::fill(tar.begin() + 148, tar.begin() + 156, ' ');
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) sum += tar[i];
  const std::string octal = fmt::format("{:06o}", sum);
  std::copy(octal.begin(), octal.end(), tar.begin() + 148);
  tar[154] = '\0';
  return tar;
}

// A tar file of `members` (name, contents) as tar(1) writes one: a ustar header each, the data
// padded to 512 bytes, two zero blocks at the end.
std::vector<uint8_t> tar_of(const std::vector<std::pair<std::string, std::string>>& members) {
  std::vector<uint8_t> tar;
  for (const auto& [name, data] : members) {
    std::vector<uint8_t> header(512, 0);
    std::copy(name.begin(), name.end(), header.begin());
    const std::string size = fmt::format("{:011o}", data.size());
    std::copy(size.begin(), size.end(), header.begin() + 124);
    header[156] = '0';
    std::fill(header.begin() + 148, header.begin() + 156, ' ');
    unsigned sum = 0;
    for (const uint8_t b : header) sum += b;
    const std::string checksum = fmt::format("{:06o}", sum);
    std::copy(checksum.begin(), checksum.end(), header.begin() + 148);
    header[154] = '\0';
    tar.insert(tar.end(), header.begin(), header.end());
    tar.insert(tar.end(), data.begin(), data.end());
    tar.resize((tar.size() + 511) / 512 * 512, 0);
  }
  tar.resize(tar.size() + 1024, 0);
  return tar;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kOwnMalloc = true;  // the sanitizer's allocator: mallinfo2 does not count it
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kOwnMalloc = true;
#else
constexpr bool kOwnMalloc = false;
#endif
#else
constexpr bool kOwnMalloc = false;
#endif

// ImageNet's shards hold a .jpg, a .cls and a .json per sample: the source keeps each
// sample's image member and class id, not an entry for each of the three (1.28 million
// samples on every rank).
TEST(WebDatasetTest, KeepsOneEntryPerSampleNotPerMember) {
  if (kOwnMalloc) GTEST_SKIP() << "the heap is the sanitizer's";
  constexpr size_t kSamples = 4000;
  std::vector<std::pair<std::string, std::string>> members;
  for (size_t i = 0; i < kSamples; ++i) {
    const std::string key = fmt::format("n{:08d}_{:07d}", i % 1000, i);
    members.emplace_back(key + ".jpg", "not decoded here");
    members.emplace_back(key + ".cls", std::to_string(i % 1000));
    members.emplace_back(key + ".json", R"({"width": 500, "height": 375})");
  }
  TempDir dir;
  const std::string path = dir.write("imagenet-train-000000.tar", tar_of(members));
  members.clear();
  members.shrink_to_fit();
  const size_t before = mallinfo2().uordblks;
  const std::unique_ptr<Source> source = open_source(path);
  const size_t per_sample = (mallinfo2().uordblks - before) / kSamples;
  ASSERT_EQ(source->size(), kSamples);
  EXPECT_EQ(source->label(1234), 234);
  EXPECT_EQ(source->name(7), path + ":n00000007_0000007.jpg");
  // An image member (its name, offset and size) and a class id take about 100 bytes; an entry
  // for each member took 313.
  EXPECT_LT(per_sample, 150u) << "bytes of heap per sample";
}

// Kilobytes of `path` mapped into this process (the Rss of its maps in /proc/self/smaps).
size_t mapped_kb(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  size_t kb = 0;
  bool in_file = false;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {  // a map's first line: its range, ..., path
      std::string field, last;
      while (words >> field) last = field;
      in_file = last == path;
    } else if (first == "Rss:" && in_file) {
      size_t value = 0;
      words >> value;
      kb += value;
    }
  }
  return kb;
}

TEST(WebDatasetTest, IndexingAShardMapsNoneOfItsPages) {
  // Each header read through the map would fault in at least its own page (and the kernel
  // maps up to 64 KiB around it): a shard of large images, indexed, would be mapped whole.
  TempDir dir;
  constexpr int kSamples = 16;
  std::string names;
  for (int i = 0; i < kSamples; ++i) {
    dir.write(fmt::format("src/{:06d}.jpg", i), std::vector<uint8_t>(256 * 1024, static_cast<uint8_t>(i)));
    dir.write_text(fmt::format("src/{:06d}.cls", i), std::to_string(i % 3));
    names += fmt::format(" {:06d}.jpg {:06d}.cls", i, i);
  }
  const std::string path = dir.str() + "/big.tar";
  const auto run =
      stoker::testing::run_command(fmt::format("tar --format=gnu -cf {} -C {}/src{}", path, dir.str(), names));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::unique_ptr<Source> source = open_source(path);
  ASSERT_EQ(source->size(), static_cast<size_t>(kSamples));
  EXPECT_EQ(source->label(4), 1);
  EXPECT_EQ(mapped_kb(path), 0u) << "the index read the shard through its map";
  SampleData sample;
  ASSERT_TRUE(source->read(5, &sample).ok());  // a sample's bytes are still read in place
  EXPECT_EQ(sample.bytes.size(), 256u * 1024);
  EXPECT_EQ(sample.bytes[100], 5);
  EXPECT_GT(mapped_kb(path), 0u) << "the test does not see the shard's map";
}

// Shards named as open_clip's --train-data names them, or by their folder, are one line saying how
// to name them: one pattern.
TEST(WebDatasetTest, AFolderOfShardsOrShardsJoinedByColonsSayToGiveOnePattern) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "shards");
  std::vector<std::string> shards;
  for (const char* name : {"00000", "00001"}) {  // moved out of the folder they were written from
    shards.push_back(dir.str() + "/shards/" + name + ".tar");
    std::filesystem::rename(write_shard(dir, name, "gnu").path, shards.back());
  }
  EXPECT_EQ(stoker::testing::error_text<DataError>([&] { open_source(dir.str() + "/shards"); }),
            "dataset directory " + dir.str() +
                "/shards has no class folders; it holds 2 .tar files: give WebDataset shards as one pattern, '" +
                dir.str() + "/shards/*.tar' or 'shards/{00000..00099}.tar'");
  EXPECT_EQ(stoker::testing::error_text<DataError>([&] { open_source(shards[0] + "::" + shards[1]); }),
            "dataset path " + shards[0] + "::" + shards[1] +
                " does not exist; '::' joins sources in open_clip's --train-data, and stoker reads one path or "
                "pattern: name the shards as one, 'shards/{00000..00099}.tar' or 'shards/*.tar'");
}

TEST(WebDatasetTest, BrokenShardsAreOneLineNamingTheFile) {
  TempDir dir;
  const Shard good = write_shard(dir, "good", "gnu");
  std::ifstream in(good.path, std::ios::binary);
  const std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Cut inside the first member's data (its header is 512 bytes, the JPEG longer than 100).
  const std::string truncated = dir.write("truncated.tar", std::vector<uint8_t>(whole.begin(), whole.begin() + 612));
  // Cut exactly where a member ends: every header reads, and the end-of-archive blocks are gone.
  size_t last = whole.size();
  while (last > 0 && whole[last - 1] == 0) --last;
  const std::string at_boundary = dir.write(
      "at_boundary.tar",
      std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>((last + 511) / 512 * 512)));
  const std::string not_tar = dir.write("notes.tar", std::vector<uint8_t>(2048, 'x'));
  dir.write("no_cls_src/a.jpg", good.images[0]);
  dir.write_text("no_cls_src/a.cls", "2");
  dir.write("no_cls_src/b.jpg", good.images[0]);
  dir.write_text("bad_cls_src/a.jpg", "x");
  dir.write_text("bad_cls_src/a.cls", "dog");
  dir.write_text("captions_src/a.txt", "only words");
  // Members grouped by extension (`tar -cf x.tar *.jpg *.txt`): each caption apart from its image.
  dir.write("apart_src/a.jpg", good.images[0]);
  dir.write("apart_src/b.jpg", good.images[0]);
  dir.write_text("apart_src/a.txt", "a cat");
  dir.write_text("apart_src/b.txt", "a dog");
  // img2dataset --encode_format avif: images stoker does not decode, beside JPEGs.
  dir.write("webp_src/a.jpg", good.images[0]);
  dir.write_text("webp_src/a.txt", "a cat");
  dir.write_text("webp_src/b.avif", "....ftypavif");
  dir.write_text("webp_src/b.txt", "a dog");
  dir.write_text("webp_src/c.avif", "....ftypavif");
  dir.write_text("webp_src/c.txt", "a bird");
  for (const char* name : {"no_cls", "bad_cls", "captions", "webp"}) {
    const auto run =
        stoker::testing::run_command(fmt::format("cd {0}/{1}_src && tar -cf {0}/{1}.tar *", dir.str(), name));
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  const auto apart = stoker::testing::run_command(
      fmt::format("cd {0}/apart_src && tar -cf {0}/apart.tar a.jpg b.jpg a.txt b.txt", dir.str()));
  ASSERT_EQ(apart.exit_code, 0) << apart.err;
  const std::string gz = dir.write("shard.tar.gz", text_bytes("x"));
  // A size that wraps around when added to the offset: refused, not read past the map.
  const std::string huge = dir.write("huge.tar", header_claiming("a.jpg", ~uint64_t{0} - 100));
  const struct {
    std::string path;
    std::string expected;
  } cases[] = {
      {truncated, truncated + ": the member '000000.jpg' runs past the end of the file (100 of its " +
                      std::to_string(good.images[0].size()) +
                      " bytes are there): the file is truncated; check it "
                      "with `tar -tvf " +
                      truncated + "` (stoker reads whole, uncompressed tar files)"},
      {at_boundary, at_boundary +
                        ": it ends after 10 members without tar's end-of-archive blocks: the file is truncated; "
                        "check it with `tar -tvf " +
                        at_boundary + "` (stoker reads whole, uncompressed tar files)"},
      {not_tar, not_tar + ": not a tar archive (its first header's checksum is wrong); check it with `tar -tvf " +
                    not_tar + "` (stoker reads whole, uncompressed tar files)"},
      {dir.str() + "/no_cls.tar", dir.str() +
                                      "/no_cls.tar: the sample 'b' has an image (b.jpg) but no class, and a has its "
                                      "class id in a.cls: give every image its <key>.cls (an integer as text), as "
                                      "webdataset's ShardWriter writes {\"__key__\": …, \"jpg\": …, \"cls\": 3}, "
                                      "or none for a shard of images and captions"},
      {dir.str() + "/bad_cls.tar", dir.str() + "/bad_cls.tar: a.cls holds 'dog', not a class id; a "
                                               ".cls member holds one integer as text"},
      {dir.str() + "/captions.tar", dir.str() + "/captions.tar holds no image samples (1 members; looked for "
                                                "<key>.jpg, .png, .webp or another image extension, as WebDataset "
                                                "shards have)"},
      {dir.str() + "/apart.tar",
       dir.str() + "/apart.tar: the members of the sample 'a' are apart (a.jpg is member 1, a.txt member 3, another "
                   "sample's between them), and WebDataset reads a sample from consecutive members; write each "
                   "sample's members together (tar --sort=name, webdataset's ShardWriter, img2dataset)"},
      {dir.str() + "/webp.tar",
       dir.str() + "/webp.tar: 2 of 3 samples have their image in a format stoker does not decode (the first: "
                   "b.avif); stoker reads JPEG, PNG, WebP, BMP, PNM and TIFF members: re-encode them (img2dataset "
                   "--encode_format jpg), or read the shards with a webdataset pipeline that decodes them with PIL, "
                   "as an iterable-style Dataset"},
      {huge, huge +
                 ": the member 'a.jpg' runs past the end of the file (1024 of its "
                 "18446744073709551515 bytes are "
                 "there): the file is truncated; check it with `tar -tvf " +
                 huge + "` (stoker reads whole, uncompressed tar files)"},
      {gz, "dataset path " + gz +
               " is a compressed tar file, whose images cannot be read in place; unpack it (tar "
               "-xzf) and give the folder, or recompress it as plain .tar shards"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    EXPECT_EQ(stoker::testing::error_text<DataError>([&] { open_source(c.path); }), c.expected);
  }
}

}  // namespace
}  // namespace stoker::data
