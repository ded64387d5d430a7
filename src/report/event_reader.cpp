#include "stoker/report/event_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "tfrecord.h"

namespace stoker::report {

namespace {

namespace fs = std::filesystem;

uint64_t little_endian_at(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

// A protobuf message read field by field; a malformed one stops it (ok() false).
class ProtoFieldReader {
 public:
  explicit ProtoFieldReader(std::string_view bytes) : bytes_(bytes) {}

  // The next field's number and wire type; false at the end or on malformed bytes.
  bool next(int* field, int* wire) {
    if (at_ >= bytes_.size() || !ok_) return false;
    const std::optional<uint64_t> key = varint();
    if (!key) return false;
    *field = static_cast<int>(*key >> 3);
    *wire = static_cast<int>(*key & 7);
    return true;
  }
  std::optional<uint64_t> varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ok_ = false;
    return std::nullopt;
  }
  std::optional<uint64_t> fixed(int bytes) {
    if (bytes_.size() - at_ < static_cast<size_t>(bytes)) {
      ok_ = false;
      return std::nullopt;
    }
    const uint64_t v = little_endian_at(bytes_, at_, bytes);
    at_ += static_cast<size_t>(bytes);
    return v;
  }
  std::optional<std::string_view> delimited() {
    const std::optional<uint64_t> length = varint();
    if (!length || bytes_.size() - at_ < *length) {
      ok_ = false;
      return std::nullopt;
    }
    const std::string_view out = bytes_.substr(at_, *length);
    at_ += *length;
    return out;
  }
  // Skips a field of wire type `wire`.
  void skip(int wire) {
    if (wire == 0) {
      varint();
    } else if (wire == 1) {
      fixed(8);
    } else if (wire == 2) {
      delimited();
    } else if (wire == 5) {
      fixed(4);
    } else {
      ok_ = false;
    }
  }
  bool ok() const { return ok_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

// Summary.Value{tag = 1, simple_value = 2 (float)}; false when it holds no simple value.
bool read_summary_value(std::string_view bytes, std::string* tag, double* value) {
  ProtoFieldReader r(bytes);
  bool has_value = false;
  int field = 0, wire = 0;
  while (r.next(&field, &wire)) {
    if (field == 1 && wire == 2) {
      const auto text = r.delimited();
      if (text) *tag = std::string(*text);
    } else if (field == 2 && wire == 5) {
      const auto bits = r.fixed(4);
      if (!bits) break;
      float f = 0;
      const auto b32 = static_cast<uint32_t>(*bits);
      std::memcpy(&f, &b32, sizeof f);
      *value = f;
      has_value = true;
    } else {
      r.skip(wire);
    }
  }
  return r.ok() && has_value && !tag->empty();
}

// Event{wall_time = 1 (double), step = 2, summary = 5 {value = 1 ...}}; false when malformed.
bool read_event(std::string_view bytes, EventScalars* out) {
  ProtoFieldReader r(bytes);
  double wall_time = 0;
  int64_t step = 0;
  std::vector<std::string_view> values;
  int field = 0, wire = 0;
  while (r.next(&field, &wire)) {
    if (field == 1 && wire == 1) {
      const auto bits = r.fixed(8);
      if (bits) std::memcpy(&wall_time, &*bits, sizeof wall_time);
    } else if (field == 2 && wire == 0) {
      const auto v = r.varint();
      if (v) step = static_cast<int64_t>(*v);
    } else if (field == 5 && wire == 2) {
      const auto summary = r.delimited();
      if (!summary) break;
      ProtoFieldReader s(*summary);
      int sf = 0, sw = 0;
      while (s.next(&sf, &sw)) {
        if (sf == 1 && sw == 2) {
          const auto value = s.delimited();
          if (value) values.push_back(*value);
        } else {
          s.skip(sw);
        }
      }
      if (!s.ok()) return false;
    } else {
      r.skip(wire);
    }
  }
  if (!r.ok()) return false;
  for (const std::string_view v : values) {
    std::string tag;
    double value = 0;
    if (read_summary_value(v, &tag, &value)) out->tags[tag].push_back({step, wall_time, value});
  }
  return true;
}

}  // namespace

void parse_event_records(std::string_view bytes, const std::string& path, EventScalars* out) {
  size_t at = 0;
  int64_t records = 0;
  while (at < bytes.size()) {
    const size_t left = bytes.size() - at;
    const char* why = nullptr;
    uint64_t length = 0;
    if (left < 12) {
      why = "cut off in its length";
    } else {
      length = little_endian_at(bytes, at, 8);
      if (static_cast<uint32_t>(little_endian_at(bytes, at + 8, 4)) != masked_crc32c(bytes.substr(at, 8))) {
        why = "damaged (its length's checksum does not match)";
      } else if (left - 12 < 4 || length > left - 16) {
        why = "cut off";
      } else if (static_cast<uint32_t>(little_endian_at(bytes, at + 12 + length, 4)) !=
                 masked_crc32c(bytes.substr(at + 12, length))) {
        why = "damaged (its checksum does not match)";
      } else if (!read_event(bytes.substr(at + 12, length), out)) {
        why = "not a TensorBoard event";
      }
    }
    if (why != nullptr) {
      out->notes.push_back(fmt::format("{}: record {} is {}: read up to it", path, records + 1, why));
      return;
    }
    at += 12 + length + 4;
    ++records;
  }
}

EventScalars read_event_scalars(const std::string& folder) {
  EventScalars out;
  std::error_code error;
  if (!fs::is_directory(folder, error)) return out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().filename().string().find("tfevents") != std::string::npos && entry.is_regular_file(error)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) {
      out.notes.push_back(fmt::format("{}: cannot be read: left out", file.string()));
      continue;
    }
    parse_event_records(bytes, file.string(), &out);
    ++out.files;
  }
  return out;
}

}  // namespace stoker::report
