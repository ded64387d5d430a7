// The safetensors layout parser without libtorch: what a good file declares, and one DataError
// naming the file and the problem for each kind of damage. (tests/torch/models/ checks files
// that stoker writes and torchvision reads.)
#include "train/common/safetensors_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "support/safetensors_files.h"

namespace stoker::train {
namespace {

using testing::safetensors_bytes;

SafetensorsLayout parse(const std::string& bytes) {
  uint8_t prefix[8] = {};
  std::memcpy(prefix, bytes.data(), bytes.size() < 8 ? bytes.size() : 8);
  const uint64_t length = safetensors_header_length("w.safetensors", prefix, bytes.size());
  return parse_safetensors_header("w.safetensors", std::string_view(bytes).substr(8, length), bytes.size());
}

const std::string kGood =
    safetensors_bytes(R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]},)"
                      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                      std::string(14, 'x'));

TEST(SafetensorsLayoutTest, AGoodFileDeclaresItsTensorsByName) {
  const SafetensorsLayout layout = parse(kGood);
  ASSERT_EQ(layout.tensors.size(), 2u);
  EXPECT_EQ(layout.tensors[0].name, "a");
  EXPECT_STREQ(layout.tensors[0].dtype->name, "F32");
  EXPECT_EQ(layout.tensors[0].shape, std::vector<int64_t>{2});
  EXPECT_EQ(layout.tensors[1].begin, 8u);
  EXPECT_EQ(layout.tensors[1].end, 14u);
  EXPECT_EQ(layout.metadata.at("format"), "pt");
  EXPECT_EQ(layout.data_start, kGood.size() - 14);
}

TEST(SafetensorsLayoutTest, EveryDamageIsOneDataErrorNamingTheFile) {
  const auto one = [](const std::string& entry, const std::string& data) {
    return safetensors_bytes("{\"t\":" + entry + "}", data);
  };
  struct Case {
    std::string bytes;
    std::string expected;
  };
  std::string huge = kGood;
  huge[6] = '\x7f';
  const std::vector<Case> cases = {
      {"", "fewer than the 8-byte header length"},
      {kGood.substr(0, 20), "exceeds"},
      {huge, "header length 35747322042253456 is implausible"},
      {kGood.substr(0, kGood.size() - 1), "truncated: the tensors need 14 bytes of data, the file has 13"},
      {kGood + "z", "1 bytes follow the last tensor"},
      {safetensors_bytes("[1]", ""), "the header is not a JSON object"},
      {safetensors_bytes("{\"t\":", ""), "not valid JSON"},
      {one(R"({"dtype":"F8","shape":[1],"data_offsets":[0,1]})", "x"), "has dtype \"F8\", which stoker cannot load"},
      {one(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})", "xxxx"), "not a non-negative integer: -1"},
      {one(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]})", "xxxx"), "huge shape"},
      {one(R"({"dtype":"F32","shape":[2],"data_offsets":[4,0]})", "xxxx"), "end before they begin"},
      {one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})", "xxxx"), "has 4 bytes of data for shape [2] of F32"},
      {one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})", "xxxxxxxx"), "starts at data byte 4, expected 0"},
      {one(R"({"dtype":"F32","shape":[1]})", "xxxx"), "no \"data_offsets\" pair"},
      {one("7", ""), "is not described by a JSON object"},
      {safetensors_bytes(R"({"__metadata__":{"k":1}})", ""), "__metadata__ value of 'k' is not a string"},
  };
  for (const auto& c : cases) {
    try {
      parse(c.bytes);
      ADD_FAILURE() << "accepted; expected: " << c.expected;
    } catch (const DataError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("w.safetensors is not a safetensors file: ", 0), 0u) << message;
      EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    }
  }
}

TEST(SafetensorsLayoutTest, TheDtypeTableNamesEachOnce) {
  for (const auto& d : safetensors_dtypes()) {
    EXPECT_EQ(safetensors_dtype_named(d.name), &d);
    EXPECT_GT(d.size, 0);
  }
  EXPECT_EQ(safetensors_dtype_named("F8"), nullptr);
}

}  // namespace
}  // namespace stoker::train
