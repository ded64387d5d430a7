// JSON with text that is not UTF-8: written as nlohmann writes valid text, each stray byte as
// \udcXX (Python's surrogateescape), and read back to the same bytes.
#include "stoker/core/json_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

nlohmann::json valid_document() {
  return {{"name", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
          {"quotes", "\"a\\b\"\n\t\r\b\f\x01\x1f\x7f"},
          {"numbers", {1, -2, 0.1, 1e300, 3.25, 18446744073709551615ULL}},
          {"flags", {true, false, nullptr}},
          {"empty", {{"object", nlohmann::json::object()}, {"array", nlohmann::json::array()}}},
          {"nested", {{{"a", {1, {{"b", "c"}}}}}}}};
}

TEST(JsonTextTest, ValidTextIsWrittenAsNlohmannWritesIt) {
  const nlohmann::json j = valid_document();
  EXPECT_EQ(dump_json(j), j.dump());
  EXPECT_EQ(dump_json(j, 2), j.dump(2));
  EXPECT_EQ(dump_json(j, 4), j.dump(4));
  const nlohmann::ordered_json o = {{"z", 1}, {"a", {"x", "y"}}, {"m", nlohmann::ordered_json::object()}};
  EXPECT_EQ(dump_json(o), o.dump());
  EXPECT_EQ(dump_json(o, 2), o.dump(2));
  EXPECT_EQ(dump_json(nlohmann::json("plain")), "\"plain\"");
  EXPECT_EQ(parse_json(j.dump(2)), j);
}

TEST(JsonTextTest, BytesThatAreNotUtf8AreSurrogateEscapes) {
  EXPECT_EQ(dump_json(nlohmann::json("bad\xff\xfe")), R"("bad\udcff\udcfe")");
  EXPECT_EQ(dump_json(nlohmann::json("\xe2\x82")), R"("\udce2\udc82")");                      // cut short
  EXPECT_EQ(dump_json(nlohmann::json("\xc0\xaf")), R"("\udcc0\udcaf")");                      // overlong '/'
  EXPECT_EQ(dump_json(nlohmann::json("\xed\xa0\x80")), R"("\udced\udca0\udc80")");            // a surrogate
  EXPECT_EQ(dump_json(nlohmann::json("\xf4\x90\x80\x80")), R"("\udcf4\udc90\udc80\udc80")");  // > U+10FFFF
  EXPECT_EQ(dump_json(nlohmann::json("\xe2\x82\xac\x80")), R"("€\udc80")");
}

TEST(JsonTextTest, NamesRoundTripInValuesAndKeys) {
  const nlohmann::json j = {{"classes", {"good", "bad\xff\xfe", "x\x80y\\udcff"}},
                            {"by\xc3\x28name", {{"bad\xff", 1}}},
                            {"plain", "\\\\udcff"}};
  const std::string text = dump_json(j, 2);
  EXPECT_NE(text.find(R"("bad\udcff\udcfe")"), std::string::npos) << text;
  EXPECT_EQ(parse_json(text), j);
  EXPECT_EQ(parse_json(dump_json(j)), j);
}

TEST(JsonTextTest, PythonReadsTheBytesBack) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const testing::TempDir dir;
  const std::string path = dir.write_text("names.json", dump_json(nlohmann::json({"bad\xff\xfe", "caf\xc3\xa9"})));
  const auto r = testing::run_command(
      "/usr/bin/python3 -c \"import json, os, sys; print(' '.join(os.fsencode(n).hex() for n in "
      "json.load(open(sys.argv[1]))))\" " +
      path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "626164fffe 636166c3a9\n");
}

}  // namespace
}  // namespace stoker
