// The protobuf wire format, the part TensorBoard's Event and Summary need: a field's key
// (number << 3 | wire type), varints, fixed64 doubles, fixed32 floats and length-delimited
// bytes (strings, nested messages), all little-endian. Not thread-safe: one writer per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::report {

// Appends `value` as a varint: 7 bits a byte, lowest first, the high bit set on all but the
// last. A negative int64 is its two's complement: 10 bytes.
void append_varint(std::string* out, uint64_t value);

class ProtoWriter {
 public:
  // Wire type 0 (int32, int64, uint64, bool, enum).
  void varint_field(int field, uint64_t value);
  // Wire type 1: a double as 8 bytes, little-endian.
  void double_field(int field, double value);
  // Wire type 5: a float as 4 bytes, little-endian.
  void float_field(int field, float value);
  // Wire type 2: the length as a varint, then the bytes (a string, or a nested message).
  void bytes_field(int field, std::string_view bytes);

  const std::string& bytes() const { return bytes_; }

 private:
  void key(int field, int wire_type);
  std::string bytes_;
};

}  // namespace stoker::report
