#include "tar_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

#include "stoker/core/error.h"

namespace stoker::data {

namespace {

constexpr size_t kBlock = 512;

// The header fields stoker reads (POSIX.1-1988 ustar; GNU and pax build on it).
struct Field {
  size_t at, length;
};
constexpr Field kName{0, 100};
constexpr Field kSize{124, 12};
constexpr Field kChecksum{148, 8};
constexpr size_t kTypeFlag = 156;
constexpr Field kMagic{257, 6};
constexpr Field kPrefix{345, 155};

std::string_view text_of(const uint8_t* header, Field f) {
  const char* begin = reinterpret_cast<const char*>(header) + f.at;
  return {begin, strnlen(begin, f.length)};
}

// An octal number padded with spaces or NULs, or GNU's base-256 form (first byte 0x80) for
// sizes of 8 GiB and more. nullopt when it is neither.
std::optional<uint64_t> number_of(const uint8_t* header, Field f) {
  const uint8_t* p = header + f.at;
  if (p[0] & 0x80) {
    uint64_t value = p[0] & 0x7f;
    for (size_t i = 1; i < f.length; ++i) {
      if (value >> 56) return std::nullopt;
      value = (value << 8) | p[i];
    }
    return value;
  }
  uint64_t value = 0;
  size_t i = 0;
  while (i < f.length && p[i] == ' ') ++i;
  bool digits = false;
  for (; i < f.length && p[i] >= '0' && p[i] <= '7'; ++i) {
    value = value * 8 + (p[i] - '0');
    digits = true;
  }
  for (; i < f.length; ++i) {
    if (p[i] != ' ' && p[i] != '\0') return std::nullopt;
  }
  return digits ? std::optional<uint64_t>(value) : std::nullopt;
}

// The checksum rule: the sum of the header's bytes with the checksum field read as spaces.
bool checksum_matches(const uint8_t* header) {
  const std::optional<uint64_t> stored = number_of(header, kChecksum);
  if (!stored) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= kChecksum.at && i < kChecksum.at + kChecksum.length) ? ' ' : header[i];
  }
  return sum == *stored;
}

bool all_zero(const uint8_t* header) {
  return std::all_of(header, header + kBlock, [](uint8_t b) { return b == 0; });
}

// The records of a pax extended header ("<length> <key>=<value>\n" each) that stoker uses.
struct PaxRecords {
  std::optional<std::string> path;
  std::optional<uint64_t> size;
};
PaxRecords parse_pax(std::string_view data) {
  PaxRecords records;
  while (!data.empty()) {
    const size_t space = data.find(' ');
    if (space == std::string_view::npos) break;
    size_t length = 0;
    for (const char c : data.substr(0, space)) {
      if (c < '0' || c > '9') return records;
      length = length * 10 + static_cast<size_t>(c - '0');
    }
    if (length <= space + 1 || length > data.size()) break;
    std::string_view record = data.substr(space + 1, length - space - 1);
    if (!record.empty() && record.back() == '\n') record.remove_suffix(1);
    const size_t eq = record.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
      if (key == "path") records.path = std::string(value);
      uint64_t size = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), size);
      if (key == "size" && error == std::errc() && end == value.data() + value.size()) records.size = size;
    }
    data.remove_prefix(length);
  }
  return records;
}

uint64_t padded(uint64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

}  // namespace

TarArchive::TarArchive(const std::string& path) : map_(std::make_shared<const MappedFile>(path)) {
  const std::span<const uint8_t> file = map_->bytes();
  const auto fail = [&](const std::string& what) {
    throw DataError(fmt::format("{}: {}; check it with `tar -tvf {}` (stoker reads whole, uncompressed tar files)",
                                path, what, path));
  };
  if (file.size() < kBlock) fail(fmt::format("not a tar archive ({} bytes, shorter than one header)", file.size()));
  // What the records before a member say of it: GNU long name, pax path and size.
  std::optional<std::string> next_name;
  std::optional<uint64_t> next_size;
  uint64_t at = 0;
  bool ended = false;
  while (at + kBlock <= file.size()) {
    const uint8_t* header = file.data() + at;
    if (all_zero(header)) {  // the end-of-archive blocks
      ended = true;
      break;
    }
    if (!checksum_matches(header)) {
      fail(at == 0 ? "not a tar archive (its first header's checksum is wrong)"
                   : fmt::format("the header at byte {} is damaged (its checksum is wrong)", at));
    }
    std::optional<uint64_t> size = number_of(header, kSize);
    if (!size) fail(fmt::format("the header at byte {} has no size", at));
    const char type = static_cast<char>(header[kTypeFlag]);
    if (next_size && type != 'x' && type != 'g' && type != 'L') size = next_size;
    const uint64_t data = at + kBlock;
    if (*size > file.size() - data) {  // data <= file.size(): the loop's condition
      fail(
          fmt::format("the member '{}' runs past the end of the file ({} of its {} bytes are there): the file is "
                      "truncated",
                      next_name ? *next_name : std::string(text_of(header, kName)), file.size() - data, *size));
    }
    const std::string_view contents(reinterpret_cast<const char*>(file.data() + data), *size);
    if (type == 'L') {  // GNU: the next member's name, NUL-terminated
      next_name = std::string(contents.substr(0, contents.find('\0')));
    } else if (type == 'x') {  // pax: records for the next member
      const PaxRecords records = parse_pax(contents);
      if (records.path) next_name = records.path;
      if (records.size) next_size = records.size;
    } else if (type != 'g') {  // 'g': pax global records, nothing stoker needs
      if (type == '0' || type == '\0' || type == '7') {
        std::string name;
        if (next_name) {
          name = *next_name;
        } else {
          const std::string_view prefix = text_of(header, kPrefix);
          // POSIX ustar's magic is "ustar\0"; GNU's "ustar " keeps other things where the prefix is.
          const bool ustar = text_of(header, kMagic) == "ustar";
          name = ustar && !prefix.empty() ? std::string(prefix) + "/" + std::string(text_of(header, kName))
                                          : std::string(text_of(header, kName));
        }
        if (name.starts_with("./")) name.erase(0, 2);
        members_.push_back({std::move(name), data, *size});
      }
      next_name.reset();
      next_size.reset();
    }
    at = data + padded(*size);
  }
  // tar(1) and Python's tarfile end every archive with zero blocks. Without them the file was
  // cut, here at a member's end: its first members read well, and the rest were silently gone.
  if (!ended) {
    fail(fmt::format("it ends after {} member{} without tar's end-of-archive blocks: the file is truncated",
                     members_.size(), members_.size() == 1 ? "" : "s"));
  }
}

}  // namespace stoker::data
