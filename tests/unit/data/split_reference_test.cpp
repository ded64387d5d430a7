// docs/reference/data.md's table of split names says what split_declarations() says. (This
// test alone compiles the source folder's path in: tests/CMakeLists.txt.)
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "stoker/data/split.h"

namespace stoker::data {
namespace {

// The data reference's table of split names says what the declaration says (regenerate: paste
// the table this test prints into docs/reference/data.md).
TEST(SplitReference, TheDataReferenceTableIsTheDeclarations) {
  std::string table = "| `split` | Meaning | IDX files | Arrays (`.npz`, `.h5`, `.pt`) |\n|---|---|---|---|\n";
  for (const SplitDeclaration& d : split_declarations()) {
    std::string name = "`" + std::string(d.name) + "`";
    if (!d.alias.empty()) name += " or `" + std::string(d.alias) + "`";
    std::string suffixes;
    for (const std::string_view suffix : d.suffixes) {
      if (!suffixes.empty()) suffixes += ", ";
      suffixes += suffix.empty() ? std::string("plain `x` / `y`") : "`x" + std::string(suffix) + "`";
    }
    const std::string idx = d.idx_prefix.empty() ? "none" : "`" + std::string(d.idx_prefix) + "-*`";
    table += "| " + name + " | " + std::string(d.meaning) + " | " + idx + " | " + suffixes + " |\n";
  }
  std::ifstream in(STOKER_SOURCE_DIR "/docs/reference/data.md");
  ASSERT_TRUE(in) << "docs/reference/data.md is missing";
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find(table), std::string::npos)
      << "docs/reference/data.md's table of split names differs from split_declarations(); paste this table there:\n"
      << table;
}

}  // namespace
}  // namespace stoker::data
