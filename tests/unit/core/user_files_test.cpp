// What stoker reads from and writes to the paths a user gives: regular files only. A FIFO, a
// device or a symlink is refused with one line, without blocking and without being replaced.
#include "stoker/core/user_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "stoker/core/error.h"
#include "support/error_text.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

using testing::error_text;
using testing::TempDir;

// A folder with one of each kind of path.
struct Paths {
  TempDir dir;
  std::string file = dir.write_text("file.txt", "text");
  std::string fifo = dir.str() + "/fifo";
  std::string link = dir.str() + "/link";
  std::string folder = dir.str() + "/folder";
  std::string none = dir.str() + "/none";
  Paths() {
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::filesystem::create_symlink(file, link);
    std::filesystem::create_directory(folder);
  }
};

TEST(UserFilesTest, KindsAreNamedForThePathItself) {
  const Paths p;
  EXPECT_EQ(file_kind(p.file), "a regular file");
  EXPECT_EQ(file_kind(p.fifo), "a FIFO");
  EXPECT_EQ(file_kind(p.link), "a symbolic link");
  EXPECT_EQ(file_kind(p.folder), "a folder");
  EXPECT_EQ(file_kind("/dev/null"), "a character device");
  EXPECT_EQ(file_kind(p.none), "");
}

TEST(UserFilesTest, OnlyRegularFilesOfBoundedSizeAreRead) {
  const Paths p;
  EXPECT_EQ(read_small_file(p.file, "config file", 100), "text");
  EXPECT_EQ(read_small_file(p.link, "config file", 100), "text");  // a symlink to a file is read
  // Each returns at once: the FIFO is never opened, /dev/zero never read.
  EXPECT_EQ(error_text([&] { read_small_file(p.fifo, "config file", 100); }),
            "config file " + p.fifo + " is a FIFO; stoker reads only regular files: give the path of a file");
  EXPECT_EQ(error_text([] { read_small_file("/dev/zero", "config file", 100); }),
            "config file /dev/zero is a character device; stoker reads only regular files: give the path of a file");
  EXPECT_EQ(error_text([&] { read_small_file(p.folder, "config file", 100); }),
            "config file " + p.folder + " is a folder; stoker reads only regular files: give the path of a file");
  EXPECT_EQ(error_text([&] { read_small_file(p.file, "config file", 3); }),
            "config file " + p.file + " holds 4 bytes, more than the 3 a config file may have; is it the right file?");
  EXPECT_NE(error_text([&] { read_small_file(p.none, "config file", 3); }).find("No such file"), std::string::npos);
}

TEST(UserFilesTest, OutputFilesAreNewNamesOrRegularFiles) {
  const Paths p;
  EXPECT_NO_THROW(check_output_file(p.none, "log file"));
  EXPECT_NO_THROW(check_output_file(p.file, "log file"));
  for (const auto& [named, kind] :
       {std::pair{p.fifo, "a FIFO"}, std::pair{p.link, "a symbolic link"}, std::pair{p.folder, "a folder"},
        std::pair<std::string, const char*>{"/dev/full", "a character device"}}) {
    const std::string& path = named;  // a lambda captures a structured binding from C++20 on (clang 16)
    EXPECT_EQ(error_text([&] { check_output_file(path, "log file"); }),
              "log file " + path + " is " + kind +
                  "; stoker writes only to a new name or over a regular file: give another path");
  }
  EXPECT_EQ(error_text([&] { check_output_file(p.none + "/x.csv", "log file"); }),
            "cannot write log file " + p.none + "/x.csv: the folder " + p.none +
                " does not exist; create it or give another path");
}

TEST(UserFilesTest, ARenameNeverReplacesWhatIsNotARegularFile) {
  const Paths p;
  const std::string tmp = p.dir.write_text("new.tmp", "new");
  replace_file(tmp, p.file, "predictions file");
  EXPECT_EQ(testing::read_text(p.file), "new");
  EXPECT_FALSE(std::filesystem::exists(tmp));

  for (const std::string& target : {p.link, p.fifo}) {
    const std::string again = p.dir.write_text("again.tmp", "again");
    EXPECT_NE(error_text([&] { replace_file(again, target, "predictions file"); }).find("stoker writes only to"),
              std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(again)) << "the temporary is left behind";
  }
  EXPECT_EQ(file_kind(p.link), "a symbolic link");
  EXPECT_EQ(file_kind(p.fifo), "a FIFO");
  EXPECT_EQ(testing::read_text(p.file), "new");  // what the symlink points to is unchanged
}

TEST(UserFilesTest, OutputFoldersAreFoldersOrNewNames) {
  const Paths p;
  EXPECT_NO_THROW(check_output_folder(p.folder, "--output-dir"));
  EXPECT_NO_THROW(check_output_folder(p.none, "--output-dir"));
  const std::string folder_link = p.dir.str() + "/folder_link";
  std::filesystem::create_directory_symlink(p.folder, folder_link);
  EXPECT_NO_THROW(check_output_folder(folder_link, "--output-dir"));  // writing into it replaces nothing
  EXPECT_EQ(error_text([&] { check_output_folder(p.file, "--output-dir"); }),
            "--output-dir " + p.file + " is a regular file, not a folder; give a folder, or a new name for one");
  EXPECT_EQ(error_text([] { check_output_folder("/dev/null", "--out"); }),
            "--out /dev/null is a character device, not a folder; give a folder, or a new name for one");
}

}  // namespace
}  // namespace stoker
