// TensorBoard event files: CRC32C against published vectors, the protobuf wire format byte for
// byte, TFRecord framing, and files cut at every byte or by a full disk.
#include "stoker/report/event_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "report/proto_wire.h"
#include "report/tfrecord.h"
#include "stoker/report/scalar_tags.h"
#include "support/temp_dir.h"

namespace stoker::report {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint64_t u64_at(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

// The payloads of the complete, intact records at the start of `file`, as a reader takes them:
// it stops at the first record that is cut off or whose CRCs do not match.
std::vector<std::string> complete_records(const std::string& file) {
  std::vector<std::string> out;
  size_t at = 0;
  while (file.size() - at >= 12) {
    const uint64_t length = u64_at(file, at);
    if (u32_at(file, at + 8) != masked_crc32c(file.substr(at, 8))) break;
    if (file.size() - at - 12 < length + 4) break;
    std::string payload = file.substr(at + 12, length);
    if (u32_at(file, at + 12 + length) != masked_crc32c(payload)) break;
    out.push_back(std::move(payload));
    at += 12 + length + 4;
  }
  return out;
}

TEST(Crc32cTest, MatchesPublishedVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  // RFC 3720 (iSCSI), B.4.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32cTest, MaskRotatesRightBy15AndAddsTheConstant) {
  // ((0xE3069283 >> 15) | (0xE3069283 << 17)) + 0xa282ead8, modulo 2^32.
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
}

TEST(ProtoWireTest, VarintsByteForByte) {
  const auto varint = [](uint64_t v) {
    std::string out;
    append_varint(&out, v);
    return out;
  };
  EXPECT_EQ(varint(0), bytes({0x00}));
  EXPECT_EQ(varint(1), bytes({0x01}));
  EXPECT_EQ(varint(127), bytes({0x7f}));
  EXPECT_EQ(varint(128), bytes({0x80, 0x01}));
  EXPECT_EQ(varint(300), bytes({0xac, 0x02}));
  EXPECT_EQ(varint(static_cast<uint64_t>(int64_t{-1})),
            bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(ProtoWireTest, FixedWidthAndLengthDelimitedFieldsByteForByte) {
  ProtoWriter w;
  w.double_field(1, 0.1);
  w.float_field(2, 0.1f);
  w.varint_field(2, 300);
  w.bytes_field(3, "hi");
  w.bytes_field(20, "");  // a field number above 15 takes two key bytes
  EXPECT_EQ(w.bytes(), bytes({0x09, 0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f,  // double 0.1
                              0x15, 0xcd, 0xcc, 0xcc, 0x3d,                          // float 0.1
                              0x10, 0xac, 0x02,                                      // varint 300
                              0x1a, 0x02, 'h',  'i',                                 // "hi"
                              0xa2, 0x01, 0x00}));
}

TEST(EventProtoTest, ScalarEventByteForByte) {
  // Event{wall_time 1.5, step 3, summary{value{tag "a", simple_value 1.0}}}
  EXPECT_EQ(scalars_event(1.5, 3, {{"a", 1.0}}),
            bytes({0x09, 0,    0,    0,    0,   0, 0, 0xf8, 0x3f,  // wall_time = 1 (double)
                   0x10, 0x03,                                     // step = 2 (varint)
                   0x2a, 0x0a,                                     // summary = 5, 10 bytes
                   0x0a, 0x08,                                     // Summary.value = 1, 8 bytes
                   0x0a, 0x01, 'a',                                // Value.tag = 1
                   0x15, 0x00, 0x00, 0x80, 0x3f}));                // Value.simple_value = 2 (float)
}

TEST(EventProtoTest, FileVersionEventByteForByte) {
  std::string expected = bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x1a, 0x0d});  // file_version = 3
  expected += "brain.Event:2";
  EXPECT_EQ(file_version_event(1.5), expected);
}

TEST(TfRecordTest, FramesLengthAndPayloadWithTheirMaskedCrcs) {
  std::string record;
  append_record(&record, "123456789");
  ASSERT_EQ(record.size(), 8u + 4 + 9 + 4);
  EXPECT_EQ(record.substr(0, 8), bytes({9, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(u32_at(record, 8), masked_crc32c(record.substr(0, 8)));
  EXPECT_EQ(record.substr(12, 9), "123456789");
  EXPECT_EQ(u32_at(record, 21), 0xC78AB0E5u);
}

TEST(EventFileTest, NamesTheFileForTensorBoardAndStartsWithTheFileVersion) {
  TempDir dir;
  EventFile events((dir.path() / "tb").string());
  const std::string name = fs::path(events.path()).filename().string();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  const auto records = complete_records(read_file(events.path()));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].find("brain.Event:2"), std::string::npos);
  EXPECT_EQ(events.records(), 1);
}

TEST(EventFileTest, TwoWritersInOneFolderGetTwoFiles) {
  TempDir dir;
  EventFile first(dir.str());
  EventFile second(dir.str());
  EXPECT_NE(first.path(), second.path());
}

TEST(EventFileTest, AFileCutAtEveryByteYieldsExactlyItsCompleteRecords) {
  TempDir dir;
  std::vector<std::string> payloads;
  std::string path;
  {
    EventFile events(dir.str());
    path = events.path();
    for (int step = 0; step < 12; ++step) {
      std::vector<Scalar> scalars = {{"train/loss", 1.0 / (step + 1)}};
      for (int i = 0; i < step % 4; ++i) scalars.push_back({"gpu" + std::to_string(i) + "/util", 10.0 * i});
      ASSERT_TRUE(events.write(step, scalars, 1000.0 + step).ok());
    }
  }
  const std::string file = read_file(path);
  const std::vector<std::string> all = complete_records(file);
  ASSERT_EQ(all.size(), 13u);  // file_version + 12
  std::vector<size_t> ends;    // where each record ends
  size_t at = 0;
  for (const auto& payload : all) ends.push_back(at += payload.size() + 16);
  ASSERT_EQ(ends.back(), file.size());
  for (size_t cut = 0; cut <= file.size(); ++cut) {
    const auto got = complete_records(file.substr(0, cut));
    const size_t expected = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    ASSERT_EQ(got.size(), expected) << "cut at byte " << cut;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], all[i]) << "cut at byte " << cut;
  }
}

TEST(EventFileTest, ADamagedByteEndsTheReadableRecordsThere) {
  TempDir dir;
  std::string path;
  {
    EventFile events(dir.str());
    path = events.path();
    for (int step = 0; step < 3; ++step) ASSERT_TRUE(events.write(step, {{"x", 1.0 * step}}).ok());
  }
  std::string file = read_file(path);
  const size_t second_end = complete_records(file)[0].size() + 16 + complete_records(file)[1].size() + 16;
  file[second_end + 14] ^= 0x01;  // inside the third record's payload
  EXPECT_EQ(complete_records(file).size(), 2u);
}

TEST(EventFileTest, AFolderThatCannotBeMadeNamesItself) {
  TempDir dir;
  const std::string blocker = dir.write_text("plain_file", "not a folder");
  try {
    EventFile events(blocker + "/tb");
    FAIL() << "no error";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find(blocker + "/tb"), std::string::npos) << e.what();
  }
}

// A file size limit stands in for a full disk: write() fails with EFBIG where ENOSPC would.
TEST(EventFileTest, AFailedWriteStopsOnceSaysWhyAndLeavesCompleteRecords) {
  TempDir dir;
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  EventFile events(dir.str());
  rlimit limited = saved;
  limited.rlim_cur = 1000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::vector<Status> results;
  for (int step = 0; step < 100; ++step)
    results.push_back(events.write(step, {{"train/loss", 0.5}, {"train/lr", 0.1}}));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  int failures = 0;
  for (const Status& s : results) {
    if (s.ok()) continue;
    ++failures;
    EXPECT_NE(s.reason().find(events.path()), std::string::npos) << s.reason();
    EXPECT_NE(s.reason().find("too large"), std::string::npos) << s.reason();  // strerror(EFBIG)
  }
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(events.stopped());
  const std::string file = read_file(events.path());
  const auto records = complete_records(file);
  EXPECT_EQ(static_cast<int64_t>(records.size()), events.records());
  size_t complete_bytes = 0;
  for (const auto& r : records) complete_bytes += r.size() + 16;
  EXPECT_EQ(file.size(), complete_bytes);  // cut back to its last complete record
  EXPECT_LE(file.size(), 1000u);
}

TEST(MonitorScalarsTest, TagsAvailableFiguresOnlyInUnitsPeopleRead) {
  monitor::Sample sample;
  sample.host.cpu_percent.set(42, "/proc/stat");
  sample.host.memory_used_bytes.set(2.0 * (1 << 30), "/proc/meminfo");
  sample.host.memory_total_bytes.set(8.0 * (1 << 30), "/proc/meminfo");
  monitor::GpuSample gpu;
  gpu.index = 1;
  gpu.util_gpu_percent.set(97, "nvml");
  gpu.memory_used_bytes.set(1.0 * (1 << 30), "nvml");
  sample.gpus.push_back(gpu);  // no GPM, no memory total: those are left out
  const std::vector<Scalar> scalars = monitor_scalars(sample);
  std::vector<std::pair<std::string, double>> got;
  for (const auto& s : scalars) got.emplace_back(s.tag, s.value);
  const std::vector<std::pair<std::string, double>> expected = {{"host/cpu_percent", 42},
                                                                {"host/ram_used_gib", 2},
                                                                {"host/ram_percent", 25},
                                                                {"gpu1/util", 97},
                                                                {"gpu1/memory_used_gib", 1}};
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace stoker::report
