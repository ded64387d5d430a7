// The exclude list: names relative to the data's root, so that a list matches however --data
// is spelled; names escaped so that a tab, a newline or a leading '#' cannot end or hide one;
// lists of whole names, as stoker wrote before, still read.
#include "stoker/data/exclude_list.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace stoker::data {
namespace {

namespace fs = std::filesystem;
using stoker::testing::InFolder;
using stoker::testing::TempDir;

std::vector<std::string> sample_names(const Source& source) {
  std::vector<std::string> names;
  for (size_t i = 0; i < source.size(); ++i) names.push_back(source.name(i));
  return names;
}

TEST(ExcludeListTest, NamesAreRelativeToTheDataRootHoweverItIsSpelled) {
  TempDir dir;
  dir.write_text("clean/a/1.jpg", "x");
  const InFolder here(dir.path());
  for (const std::string& data :
       std::vector<std::string>{"clean", "./clean/", "clean/", dir.str() + "/clean", dir.str() + "/./clean"}) {
    const std::string name = (fs::path(data) / "a" / "1.jpg").string();  // as an image folder names it
    EXPECT_EQ(exclude_list_name(name, data), "a/1.jpg") << data;
  }
  // A file's samples: relative to its folder.
  dir.write_text("arrays/x.npy", "x");
  EXPECT_EQ(exclude_list_name("arrays/x.npy[3]", "arrays/x.npy"), "x.npy[3]");
  EXPECT_EQ(exclude_list_name("./arrays/shard.tar:0017", "./arrays/shard.tar"), "shard.tar:0017");
  // Outside the root: the whole name.
  EXPECT_EQ(exclude_list_name("/elsewhere/1.jpg", "clean"), "/elsewhere/1.jpg");
  EXPECT_EQ(exclude_list_name("x.npy[3]", "arrays/x.npy"), "x.npy[3]");
}

TEST(ExcludeListTest, NamesAreEscapedAndReadBack) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain/1.jpg", "plain/1.jpg"},           {"tab\there.jpg", "tab\\there.jpg"},
      {"line\nbreak.jpg", "line\\nbreak.jpg"},  {"cr\r.jpg", "cr\\r.jpg"},
      {"back\\slash.jpg", "back\\\\slash.jpg"}, {"#hash/1.jpg", "\\#hash/1.jpg"},
      {"mid#hash.jpg", "mid#hash.jpg"},         {"caf\xc3\xa9 \xff.jpg", "caf\xc3\xa9 \xff.jpg"},
  };
  for (const auto& [name, line] : cases) {
    EXPECT_EQ(exclude_list_name(name, "/nowhere/data"), line);
    EXPECT_EQ(unescape_exclude_list_name(line), name);
    EXPECT_EQ(unescape_exclude_list_name(line + "\tthe reason"), name);
  }
  // A backslash before any other letter is itself (a name written before escapes existed).
  EXPECT_EQ(unescape_exclude_list_name("a\\b\\#c\\"), "a\\b\\#c\\");
}

TEST(ExcludeListTest, ListsMatchTheDataHoweverItIsSpelledAndOldListsStillRead) {
  TempDir dir;
  for (const char* name : {"clean/a/1.jpg", "clean/a/2.jpg", "clean/b/3.jpg", "clean/b/tab\there.jpg"})
    dir.write_text(name, "x");
  const InFolder here(dir.path());
  // Written against "clean", read against other spellings.
  const std::shared_ptr<const Source> written = open_image_folder("clean");
  std::string list = "# stoker scan\n";
  for (const size_t i : {size_t{0}, size_t{3}}) list += exclude_list_name(written->name(i), "clean") + "\treason\n";
  ASSERT_EQ(list, "# stoker scan\na/1.jpg\treason\nb/tab\\there.jpg\treason\n");
  dir.write_text("bad.txt", list);
  for (const std::string& data : std::vector<std::string>{"clean", "./clean/", dir.str() + "/clean"}) {
    const Excluded left = exclude_listed(open_image_folder(data), "bad.txt", data);
    EXPECT_EQ(left.excluded, 2u) << data;
    EXPECT_EQ(left.unknown, 0u) << data;
    EXPECT_EQ(sample_names(*left.source),
              (std::vector<std::string>{(fs::path(data) / "a/2.jpg").string(), (fs::path(data) / "b/3.jpg").string()}))
        << data;
  }
  // A list of whole names, as stoker wrote before, read with the same spelling.
  dir.write_text("old.txt", "clean/a/2.jpg\tfile truncated\nclean/gone.jpg\n");
  const Excluded old = exclude_listed(open_image_folder("clean"), "old.txt", "clean");
  EXPECT_EQ(old.excluded, 1u);
  EXPECT_EQ(old.unknown, 1u);
}

}  // namespace
}  // namespace stoker::data
