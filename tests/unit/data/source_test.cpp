#include "stoker/data/source.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>

#include "stoker/core/error.h"
#include "stoker/core/process.h"
#include "support/error_text.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::error_text;
using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

TEST(ImageFolderTest, ClassesSortedFilesSortedNonImagesSkipped) {
  TempDir dir;
  dir.write("zebra/b.jpg", bytes_of("x"));
  dir.write("zebra/a.PNG", bytes_of("x"));
  dir.write("ant/sub/c.jpeg", bytes_of("x"));
  dir.write("ant/notes.txt", bytes_of("x"));
  auto source = open_image_folder(dir.str());
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->class_names(), (std::vector<std::string>{"ant", "zebra"}));
  EXPECT_EQ(source->label(0), 0);
  EXPECT_EQ(source->label(1), 1);
  EXPECT_NE(source->name(1).find("zebra/a.PNG"), std::string::npos);
  EXPECT_NE(source->describe().find("1 non-image files skipped"), std::string::npos);
  SampleData data;
  ASSERT_TRUE(source->read(0, &data).ok());
  EXPECT_EQ(data.bytes.size(), 1u);
}

// torchvision's IMG_EXTENSIONS, any case, are the folder's images; other files are skipped.
TEST(ImageFolderTest, ImagesOfEveryTorchvisionExtensionAreRead) {
  TempDir dir;
  dir.write("cat/a.jpg", bytes_of("x"));
  dir.write("cat/b.webp", bytes_of("x"));
  dir.write("dog/c.WEBP", bytes_of("x"));
  dir.write("dog/d.bmp", bytes_of("x"));
  dir.write("dog/e.png", bytes_of("x"));
  dir.write("dog/f.ppm", bytes_of("x"));
  dir.write("dog/g.pgm", bytes_of("x"));
  dir.write("dog/h.tif", bytes_of("x"));
  dir.write("dog/i.TIFF", bytes_of("x"));
  dir.write("dog/notes.txt", bytes_of("x"));
  dir.write("dog/anim.gif", bytes_of("x"));
  dir.write("dog/bitmap.pbm", bytes_of("x"));
  EXPECT_EQ(open_image_folder(dir.str())->size(), 9u);
}

TEST(ImageFolderTest, ReadOfAVanishedFileIsAStatusNotAnException) {
  TempDir dir;
  const std::string path = dir.write("a/x.jpg", bytes_of("x"));
  auto source = open_image_folder(dir.str());
  std::filesystem::remove(path);
  SampleData data;
  const Status status = source->read(0, &data);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.reason(), "file not found");
}

TEST(ImageFolderTest, AFileLargerThanAnyImageIsRefusedUnread) {
  // A small image padded to gigabytes (sparse here: nothing is written) is not read into memory.
  TempDir dir;
  const std::string path = dir.write("a/huge.jpg", bytes_of("\xff\xd8\xff"));
  std::filesystem::resize_file(path, kMaxSampleFileBytes + 1);
  auto source = open_image_folder(dir.str());
  SampleData data;
  const Status status = source->read(0, &data);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.reason(),
            "file is 1,073,741,825 bytes, larger than any image stoker decodes (1,073,741,824 at most); not read");
  EXPECT_LT(data.storage.capacity(), size_t{1} << 20) << "the file was read after all";
}

TEST(ImageFolderTest, UnusableRootsNameThePath) {
  TempDir dir;
  struct Case {
    std::string root;
    std::string expected;
  };
  dir.write("empty_class_dir/c/readme.txt", bytes_of("x"));
  dir.write("flat/x.jpg", bytes_of("x"));
  const std::vector<Case> cases = {
      {dir.str() + "/missing", "does not exist"},
      {dir.str() + "/flat/x.jpg", "not a directory"},
      {dir.str() + "/flat", "no class folders"},
      {dir.str() + "/empty_class_dir", "no images found"},
  };
  for (const auto& c : cases) {
    try {
      open_image_folder(c.root);
      ADD_FAILURE() << "no error for " << c.root;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.root), std::string::npos) << e.what();
    }
  }
}

// What open_image_folder(root) throws ("<no error>" when it opens), asked in a child process
// that runs as the unprivileged user 65534 when this one is root: root reads every folder,
// whatever its permissions.
std::string error_without_root(const std::string& root) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "<pipe failed>";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string text;
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                             ::setresuid(65534, 65534, 65534) != 0)) {
      text = "<could not become user 65534>";
    } else {
      text = error_text([&] { open_image_folder(root); });
    }
    const ssize_t written = ::write(pipe_fds[1], text.data(), text.size());
    ::_exit(written == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return text;
}

// A class folder, or a folder inside one, that cannot be listed once made "30 images in 3
// classes" of 40 in 4, and training then advised removing empty class folders.
TEST(ImageFolderTest, AFolderThatCannotBeListedIsAnErrorNamingIt) {
  TempDir dir;
  for (const char* name : {"data/a/1.jpg", "data/b/2.jpg", "data/c/3.jpg", "data/c/deep/4.jpg"})
    dir.write(name, bytes_of("x"));
  for (const char* folder : {"", "/data", "/data/a", "/data/b", "/data/c", "/data/c/deep"})
    ASSERT_EQ(::chmod((dir.str() + folder).c_str(), 0755), 0);
  const std::string root = dir.str() + "/data";
  ASSERT_EQ(error_without_root(root), "<no error>");

  ASSERT_EQ(::chmod((root + "/b").c_str(), 0), 0);
  EXPECT_EQ(error_without_root(root), "cannot list the folder " + root +
                                          "/b of the dataset: Permission denied; check its permissions (its "
                                          "images would otherwise be missing from the data)");
  ASSERT_EQ(::chmod((root + "/b").c_str(), 0755), 0);

  ASSERT_EQ(::chmod((root + "/c/deep").c_str(), 0311), 0);  // entered, not listed
  const std::string deep = error_without_root(root);
  EXPECT_EQ(deep.rfind("cannot list the folder " + root + "/c/deep of the dataset: Permission denied", 0), 0u) << deep;
  ASSERT_EQ(::chmod((root + "/c/deep").c_str(), 0755), 0);

  ASSERT_EQ(::chmod(root.c_str(), 0311), 0);
  const std::string top = error_without_root(root);
  EXPECT_EQ(top.rfind("cannot list the folder " + root + " of the dataset: Permission denied", 0), 0u) << top;
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
}

TEST(FileListTest, ClassificationWithHeaderAndQuotedPaths) {
  TempDir dir;
  const std::string csv = dir.write_text("list.csv", "path,label\n\"a,b.jpg\",2\nimg/c.jpg,0\n");
  auto source = open_file_list(csv);
  ASSERT_EQ(source->size(), 2u);
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->label(0), 2);
  EXPECT_EQ(source->class_names().size(), 3u);
  EXPECT_EQ(source->name(0), (dir.path() / "a,b.jpg").string());
  EXPECT_EQ(source->name(1), (dir.path() / "img/c.jpg").string());
}

TEST(FileListTest, SeveralFloatTargetsAreRegression) {
  TempDir dir;
  const std::string csv = dir.write_text("pose.csv", "/abs/a.jpg,10.5,-3,0.25\nb.jpg,1,2,3\n");
  auto source = open_file_list(csv, "/data");
  EXPECT_EQ(source->target_kind(), TargetKind::kRegression);
  EXPECT_EQ(source->target_dim(), 3);
  float t[3];
  source->targets(0, t);
  EXPECT_FLOAT_EQ(t[0], 10.5f);
  EXPECT_FLOAT_EQ(t[1], -3.0f);
  EXPECT_FLOAT_EQ(t[2], 0.25f);
  EXPECT_EQ(source->name(0), "/abs/a.jpg");
  EXPECT_EQ(source->name(1), "/data/b.jpg");
}

TEST(FileListTest, MalformedRowsNameFileAndLine) {
  TempDir dir;
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"a.jpg\n", "list.csv:1: expected 'path,target"},
      {"a.jpg,1\nb.jpg\n", "list.csv:2: 1 cell, but the first row has 2; every row needs a cell for each column"},
      {"path,label\na.jpg,1\nb.jpg,cat\n", "list.csv:3: target 'label' is 'cat'; every target must be a number"},
      {"a.jpg,1\nb.jpg,nan\n", "list.csv:2: target 1 is 'nan'; targets must be finite numbers"},
      {"a.jpg,1.5\nb.jpg,-inf\n", "list.csv:2: target 1 is '-inf'; targets must be finite numbers"},
      {"a.jpg,1,2\nb.jpg,1\n", "list.csv:2: 2 cells, but the first row has 3"},
      {"path,label\n", "has no rows"},
  };
  for (const auto& c : cases) {
    const std::string csv = dir.write_text("list.csv", c.text);
    try {
      open_file_list(csv);
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(open_file_list(dir.str() + "/nope.csv"), DataError);
}

TEST(FileListTest, IntegerTargetsAreCheckedOnceTheTaskIsKnown) {
  // Ages or prices may be stored as integers: open takes them, check_class_ids refuses them
  // as class ids, and integers_as_regression reads them as quantities.
  TempDir dir;
  const std::string ages = dir.write_text("ages.csv", "a.jpg,3\nb.jpg,-1\nc.jpg,-1\n");
  const std::shared_ptr<const Source> source = open_file_list(ages);
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->label(1), -1);
  EXPECT_NE(source->describe().find("integer targets -1..3"), std::string::npos) << source->describe();
  EXPECT_TRUE(source->class_names().empty());
  try {
    source->check_class_ids(kMaxClasses);
    ADD_FAILURE() << "a negative class id was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(ages + ": class id -1 of " + (dir.path() / "b.jpg").string() +
                                         " is negative; class ids must be 0..K-1 (for quantities, pass --task "
                                         "regression)"),
              std::string::npos)
        << e.what();
  }
  const auto quantities = integers_as_regression(source);
  float target = 0;
  quantities->targets(1, &target);
  EXPECT_EQ(target, -1.0f);

  // An id beyond int64's range (30 digits) is read without undefined behaviour, and refused
  // as written, not as the number float32 made of it; so is one just beyond 2^24.
  const std::string huge_csv = dir.write_text("huge.csv", "a.jpg,0\nb.jpg,100000000000000000000000000000\n");
  const auto huge = open_file_list(huge_csv);
  EXPECT_GT(huge->label(1), int64_t{1} << 62);
  try {
    huge->check_class_ids(kMaxClasses);
    ADD_FAILURE() << "a 30-digit class id was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(huge_csv + ":2: label '100000000000000000000000000000' is beyond 16777216 "
                                                    "(2^24), the largest whole number a float32 target holds exactly"),
              std::string::npos)
        << e.what();
  }
  const std::shared_ptr<const Source> odd = open_file_list(dir.write_text("odd.csv", "a.jpg,16777217\nb.jpg,0\n"));
  EXPECT_THROW(odd->check_class_ids(kMaxClasses), DataError);
  EXPECT_NO_THROW(integers_as_regression(odd));  // as quantities, float32's nearest is the value
  EXPECT_NO_THROW(open_file_list(dir.write_text("edge.csv", "a.jpg,16777216\nb.jpg,0\n")));

  const std::string ids = dir.write_text("faces.csv", "a.jpg,250000\nb.jpg,0\n");
  const auto faces = open_file_list(ids);
  EXPECT_THROW(faces->check_class_ids(kUsualMaxClasses), DataError);
  EXPECT_NO_THROW(faces->check_class_ids(kMaxClasses));
  EXPECT_EQ(faces->class_names().size(), 250'001u);
  EXPECT_NE(faces->describe().find("250,001 classes"), std::string::npos) << faces->describe();
}

std::vector<uint8_t> idx_bytes(uint8_t rank, std::vector<uint32_t> dims, size_t payload_bytes, uint8_t fill_start) {
  std::vector<uint8_t> out = {0, 0, 0x08, rank};
  for (uint32_t d : dims) {
    out.push_back(static_cast<uint8_t>(d >> 24));
    out.push_back(static_cast<uint8_t>(d >> 16));
    out.push_back(static_cast<uint8_t>(d >> 8));
    out.push_back(static_cast<uint8_t>(d));
  }
  for (size_t i = 0; i < payload_bytes; ++i) out.push_back(static_cast<uint8_t>(fill_start + i));
  return out;
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(gz);
}

TEST(IdxTest, PlainAndGzipReadTheSamePixelsAndLabels) {
  TempDir dir;
  const auto images = idx_bytes(3, {3, 2, 4}, 24, 0);
  const auto labels = idx_bytes(1, {3}, 3, 7);
  dir.write("train-images-idx3-ubyte", images);
  dir.write("train-labels-idx1-ubyte", labels);
  TempDir gz_dir;
  write_gz(gz_dir.str() + "/train-images-idx3-ubyte.gz", images);
  write_gz(gz_dir.str() + "/train-labels-idx1-ubyte.gz", labels);
  for (const std::string& root : {dir.str(), gz_dir.str()}) {
    auto source = open_source(root);
    ASSERT_EQ(source->size(), 3u);
    int w, h, c;
    source->fixed_shape(&w, &h, &c);
    EXPECT_EQ(w, 4);
    EXPECT_EQ(h, 2);
    EXPECT_EQ(c, 1);
    EXPECT_EQ(source->label(2), 9);
    SampleData data;
    ASSERT_TRUE(source->read(1, &data).ok());
    ASSERT_TRUE(data.raw);
    ASSERT_EQ(data.bytes.size(), 8u);
    EXPECT_EQ(data.bytes[0], 8);
    EXPECT_EQ(data.bytes[7], 15);
  }
}

TEST(IdxTest, BadFilesNameTheProblem) {
  TempDir dir;
  struct Case {
    std::vector<uint8_t> images, labels;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {idx_bytes(3, {3, 2, 4}, 10, 0), idx_bytes(1, {3}, 3, 0), "truncated"},
      {idx_bytes(3, {3, 2, 4}, 24, 0), idx_bytes(1, {4}, 4, 0), "disagree"},
      {idx_bytes(1, {3}, 3, 0), idx_bytes(1, {3}, 3, 0), "dimensions"},
      {{1, 2, 3, 4, 5, 6, 7, 8}, idx_bytes(1, {3}, 3, 0), "bad magic"},
  };
  for (const auto& c : cases) {
    const auto img = dir.write("i.idx", c.images);
    const auto lab = dir.write("l.idx", c.labels);
    try {
      open_idx(img, lab);
      ADD_FAILURE() << "no error, expected " << c.expected;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

// A gzip'd IDX file is inflated up to the end its header declares, never past it, and a
// declared size beyond the free memory (or beyond any real file) is refused before anything
// is allocated for it.
TEST(IdxTest, AGzipIsInflatedToItsDeclaredEndOnly) {
  TempDir dir;
  std::vector<uint8_t> images = idx_bytes(3, {3, 2, 4}, 24, 0);
  images.resize(images.size() + (64 << 20), 0);  // 64 MB of zeros after the data
  write_gz(dir.str() + "/train-images-idx3-ubyte.gz", images);
  write_gz(dir.str() + "/train-labels-idx1-ubyte.gz", idx_bytes(1, {3}, 3, 7));
  const double rss_before = peak_rss_bytes();
  const auto source = open_source(dir.str());
  EXPECT_EQ(source->size(), 3u);
#if !defined(STOKER_UNDER_ASAN) && !defined(STOKER_UNDER_TSAN)  // their allocators keep freed memory
  EXPECT_LT(peak_rss_bytes() - rss_before, 32e6);               // the zeros were not inflated
#else
  (void)rss_before;
#endif

  TempDir huge;
  write_gz(huge.str() + "/train-images-idx3-ubyte.gz", idx_bytes(3, {4000000, 4000, 4000}, 16, 0));
  write_gz(huge.str() + "/train-labels-idx1-ubyte.gz", idx_bytes(1, {4000000}, 16, 0));
  {
    const std::string text = error_text<DataError>([&] { open_source(huge.str()); });
    EXPECT_NE(text.find("declares"), std::string::npos) << text;
  }
  TempDir small;  // 6.4 GB declared by a file of a few hundred bytes (found by idx_fuzz)
  write_gz(small.str() + "/train-images-idx3-ubyte.gz", idx_bytes(3, {400000, 128, 128}, 16, 0));
  write_gz(small.str() + "/train-labels-idx1-ubyte.gz", idx_bytes(1, {400000}, 16, 0));
  {
    const std::string text = error_text<DataError>([&] { open_source(small.str()); });
    EXPECT_NE(text.find("compressed bytes can hold; it is damaged"), std::string::npos) << text;
  }
  TempDir wraps;  // 2^32-1 cubed wraps a 64-bit count
  write_gz(wraps.str() + "/train-images-idx3-ubyte.gz", idx_bytes(3, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, 16, 0));
  write_gz(wraps.str() + "/train-labels-idx1-ubyte.gz", idx_bytes(1, {3}, 3, 0));
  {
    const std::string text = error_text<DataError>([&] { open_source(wraps.str()); });
    EXPECT_NE(text.find("passes 2^48 bytes"), std::string::npos) << text;
  }
}

// IDX data offers train and, with t10k-* files, test (t10k); never val, and an unknown word is
// refused instead of read as an image folder ("has no class folders").
TEST(IdxTest, SplitsAreTrainAndT10kOnly) {
  TempDir dir;
  const std::string root = dir.str();
  write_gz(root + "/train-images-idx3-ubyte.gz", idx_bytes(3, {3, 2, 4}, 24, 0));
  write_gz(root + "/train-labels-idx1-ubyte.gz", idx_bytes(1, {3}, 3, 0));
  EXPECT_EQ(splits_of(root), std::vector<std::string>{"train"});
  EXPECT_FALSE(has_held_out_split(root));
  EXPECT_EQ(usage_error_text([&] { open_source(root, "t10k"); }),
            "no split 't10k' in " + root +
                " (an IDX directory): it offers train, and there is no t10k-images-idx3-ubyte[.gz]; ask for train, or "
                "give the test data's own path");
  write_gz(root + "/t10k-images-idx3-ubyte.gz", idx_bytes(3, {2, 2, 4}, 16, 0));
  write_gz(root + "/t10k-labels-idx1-ubyte.gz", idx_bytes(1, {2}, 2, 0));
  EXPECT_EQ(splits_of(root), (std::vector<std::string>{"train", "test"}));
  EXPECT_TRUE(has_held_out_split(root));
  EXPECT_EQ(open_source(root, "train")->size(), 3u);
  EXPECT_EQ(open_source(root, "test")->size(), 2u);
  EXPECT_EQ(open_source(root, "t10k")->size(), 2u);
  EXPECT_EQ(open_source(root, Split::kHeldOut)->size(), 2u);
  EXPECT_EQ(open_source(root, Split::kValidationFile)->size(), 2u);
  EXPECT_EQ(usage_error_text([&] { open_source(root, "val"); }),
            "no split 'val' in " + root +
                " (an IDX directory): it offers train and test (t10k), and IDX data has no val split; ask for one of "
                "those, or give the validation data's own path");
  EXPECT_EQ(usage_error_text([&] { open_source(root, "garbage"); }),
            "unknown split 'garbage': stoker reads train, val and test (t10k), and " + root +
                " (an IDX directory) offers train and test (t10k); ask for one of those");
  std::filesystem::remove(root + "/train-images-idx3-ubyte.gz");
  EXPECT_EQ(error_text<DataError>([&] { open_source(root); }),
            root + " holds IDX files but no train-images-idx3-ubyte[.gz]");
}

TEST(IdxTest, DebianFashionMnistWhenInstalled) {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  auto train = open_source(root, "train");
  auto test = open_source(root, "t10k");
  EXPECT_EQ(train->size(), 60000u);
  EXPECT_EQ(test->size(), 10000u);
  EXPECT_EQ(train->class_names().size(), 10u);
  // Given for validation, a directory is read by its t10k files, else by its train files.
  EXPECT_EQ(open_source(root, Split::kValidationFile)->size(), 10000u);
  TempDir only_train;
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"}) {
    std::filesystem::create_symlink(root + "/" + name, only_train.str() + "/" + name);
  }
  EXPECT_EQ(open_source(only_train.str(), Split::kValidationFile)->size(), 60000u);
}

}  // namespace
}  // namespace stoker::data
