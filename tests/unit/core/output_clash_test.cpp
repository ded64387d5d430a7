// An output path against the inputs of the same command: the same file however it is spelled
// or linked, and any path inside an input folder, is refused with one line; other paths pass.
#include "stoker/core/output_clash.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::InFolder;
using testing::TempDir;
using testing::usage_error_text;

std::string apart(const std::string& output, const std::vector<CommandInput>& inputs) {
  return usage_error_text([&] { check_output_apart(output, "-o", inputs); });
}

std::string folder_apart(const std::string& output, const std::vector<CommandInput>& inputs) {
  return usage_error_text([&] { check_output_folder_apart(output, "--out", inputs); });
}

constexpr const char* kNone = "<no UsageError>";

TEST(OutputClashTest, TheSameFileIsRefusedHoweverItIsSpelledOrLinked) {
  TempDir dir;
  const std::string log = dir.write_text("gpu.csv", "timestamp,seconds\n");
  fs::create_symlink(log, dir.str() + "/link.csv");
  ASSERT_EQ(::link(log.c_str(), (dir.str() + "/hard.csv").c_str()), 0);
  fs::create_directory_symlink(dir.path(), dir.str() + "/via");
  const std::vector<CommandInput> inputs = {{log, "the input"}};
  EXPECT_EQ(apart(log, inputs), "-o " + log + " is the input " + log +
                                    " (the same file): writing it would destroy what this command reads; give -o "
                                    "another path");
  for (const std::string& other :
       {dir.str() + "/./gpu.csv", dir.str() + "/link.csv", dir.str() + "/hard.csv", dir.str() + "/via/gpu.csv"}) {
    EXPECT_NE(apart(other, inputs).find(" (the same file)"), std::string::npos) << other;
  }
  // The input named through a symlink, the output plainly; and relative spellings.
  EXPECT_NE(apart(log, {{dir.str() + "/link.csv", "the input"}}), kNone);
  const InFolder here(dir.path());
  EXPECT_NE(apart("gpu.csv", {{"./gpu.csv", "the input"}}), kNone);
  EXPECT_NE(apart("./gpu.csv", {{log, "the input"}}), kNone);
}

TEST(OutputClashTest, OtherFilesAndNewNamesPass) {
  TempDir dir;
  const std::string log = dir.write_text("gpu.csv", "x");
  const std::string other = dir.write_text("other.csv", "x");
  EXPECT_EQ(apart(other, {{log, "the input"}}), kNone);
  EXPECT_EQ(apart(dir.str() + "/gpu.html", {{log, "the input"}}), kNone);
  EXPECT_EQ(apart(dir.str() + "/no-folder/x.html", {{log, "the input"}}), kNone);
  EXPECT_EQ(apart(dir.str() + "/x.html", {{dir.str() + "/missing.csv", "the input"}}), kNone);
  EXPECT_EQ(apart(dir.str() + "/x.html", {{"", "--data"}}), kNone);
  // A copy is another file, though its bytes are the same.
  fs::copy_file(log, dir.str() + "/copy.csv");
  EXPECT_EQ(apart(dir.str() + "/copy.csv", {{log, "the input"}}), kNone);
}

TEST(OutputClashTest, AnythingInsideAnInputFolderIsRefused) {
  TempDir dir;
  const std::string image = dir.write_text("d/a/00000.jpg", "jpeg");
  const std::string data = dir.str() + "/d";
  fs::create_directory_symlink(data + "/a", dir.str() + "/a-link");
  const std::vector<CommandInput> inputs = {{data, "--data"}};
  EXPECT_EQ(apart(image, inputs), "-o " + image + " lies inside --data " + data +
                                      ": writing there would change what this command reads; give -o a path "
                                      "outside it");
  for (const std::string& inside :
       {data + "/bad.txt", data + "/a/new/deeper/x.txt", dir.str() + "/a-link/00000.jpg", dir.str() + "/a-link/x"}) {
    EXPECT_NE(apart(inside, inputs).find(" lies inside --data "), std::string::npos) << inside;
  }
  EXPECT_NE(apart(data, inputs).find(" (the same folder)"), std::string::npos);
  // Beside the data, or named like it, is outside it.
  EXPECT_EQ(apart(dir.str() + "/bad.txt", inputs), kNone);
  EXPECT_EQ(apart(dir.str() + "/d2/x", inputs), kNone);
  // The data named relatively, the output through a symlink to its parent.
  const InFolder here(dir.path());
  EXPECT_NE(apart("a-link/x.txt", {{"d/", "--data"}}), kNone);
  EXPECT_NE(apart("x.txt", {{".", "--data"}}), kNone);
}

TEST(OutputClashTest, AnOutputFolderMustNotBeInsideNorHoldTheData) {
  TempDir dir;
  dir.write_text("d/a/1.jpg", "jpeg");
  const std::string data = dir.str() + "/d";
  fs::create_directory(dir.path() / "empty");
  const std::vector<CommandInput> inputs = {{data, "--data"}};
  EXPECT_NE(folder_apart(data, inputs).find(" (the same folder)"), std::string::npos);
  EXPECT_NE(folder_apart(data + "/a", inputs).find("lies inside --data"), std::string::npos);
  EXPECT_NE(folder_apart(data + "/new", inputs).find("lies inside --data"), std::string::npos);
  EXPECT_EQ(folder_apart(dir.str(), inputs),
            "--data " + data + " lies inside --out " + dir.str() + ": give --out a folder that does not hold it");
  EXPECT_EQ(folder_apart(dir.str() + "/empty", inputs), kNone);
  EXPECT_EQ(folder_apart(dir.str() + "/new", inputs), kNone);
}

}  // namespace
}  // namespace stoker
