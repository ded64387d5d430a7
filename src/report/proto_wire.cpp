#include "report/proto_wire.h"

#include <cstring>
#include <type_traits>

namespace stoker::report {

namespace {

template <typename T>
void append_little_endian(std::string* out, T value) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  for (size_t i = 0; i < sizeof(bits); ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

}  // namespace

void append_varint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void ProtoWriter::key(int field, int wire_type) {
  append_varint(&bytes_, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void ProtoWriter::varint_field(int field, uint64_t value) {
  key(field, 0);
  append_varint(&bytes_, value);
}

void ProtoWriter::double_field(int field, double value) {
  key(field, 1);
  append_little_endian(&bytes_, value);
}

void ProtoWriter::float_field(int field, float value) {
  key(field, 5);
  append_little_endian(&bytes_, value);
}

void ProtoWriter::bytes_field(int field, std::string_view bytes) {
  key(field, 2);
  append_varint(&bytes_, bytes.size());
  bytes_.append(bytes);
}

}  // namespace stoker::report
