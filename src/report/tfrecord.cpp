#include "report/tfrecord.h"

#include <array>

#include "report/proto_wire.h"

namespace stoker::report {

namespace {

// Field numbers of TensorBoard's protos (tensorboard/compat/proto/event.proto and
// summary.proto, package tensorflow):
//   message Event   { double wall_time = 1; int64 step = 2;
//                     oneof what { string file_version = 3; ...; Summary summary = 5; ... } }
//   message Summary { repeated Value value = 1; }
//   message Summary.Value { string tag = 1; oneof value { float simple_value = 2; ... } }
constexpr int kEventWallTime = 1;
constexpr int kEventStep = 2;
constexpr int kEventFileVersion = 3;
constexpr int kEventSummary = 5;
constexpr int kSummaryValue = 1;
constexpr int kValueTag = 1;
constexpr int kValueSimpleValue = 2;

// "brain.Event:2": TensorBoard reads the file's steps as they are (no purge of "orphaned"
// steps when a step goes back, which version 1 files get).
constexpr std::string_view kFileVersion = "brain.Event:2";

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
    table[i] = crc;
  }
  return table;
}

void append_u32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : bytes) crc = (crc >> 8) ^ table[(crc ^ static_cast<unsigned char>(c)) & 0xff];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void append_record(std::string* out, std::string_view payload) {
  std::string length;
  const uint64_t n = payload.size();
  for (int i = 0; i < 8; ++i) length.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(length);
  append_u32(out, masked_crc32c(length));
  out->append(payload);
  append_u32(out, masked_crc32c(payload));
}

std::string file_version_event(double wall_time) {
  ProtoWriter event;
  event.double_field(kEventWallTime, wall_time);
  event.bytes_field(kEventFileVersion, kFileVersion);
  return event.bytes();
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars) {
  ProtoWriter summary;
  for (const Scalar& scalar : scalars) {
    ProtoWriter value;
    value.bytes_field(kValueTag, scalar.tag);
    value.float_field(kValueSimpleValue, static_cast<float>(scalar.value));
    summary.bytes_field(kSummaryValue, value.bytes());
  }
  ProtoWriter event;
  event.double_field(kEventWallTime, wall_time);
  event.varint_field(kEventStep, static_cast<uint64_t>(step));
  event.bytes_field(kEventSummary, summary.bytes());
  return event.bytes();
}

}  // namespace stoker::report
