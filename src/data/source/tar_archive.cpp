#include "tar_archive.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
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

// A file read with pread: the index's headers and the small members it reads (a .cls).
// Read through the map, each header would fault in the pages around it (the 64 KiB the page
// cache holds, or 128 KiB read ahead from disk): for shards of ImageNet-sized images the whole
// dataset, read and mapped before the first batch. Here nothing is mapped, and the reads follow
// the members' sizes (`small`): where members are large (ImageNet's images) the page of each
// header alone, with the kernel's readahead off (POSIX_FADV_RANDOM); where they are small, so
// that their headers fill most pages anyway, windows of kSmallWindow with the readahead on.
class PageReader {
 public:
  explicit PageReader(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw DataError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  ~PageReader() { ::close(fd_); }
  PageReader(const PageReader&) = delete;
  PageReader& operator=(const PageReader&) = delete;

  // Whether members of `span` bytes on average (header and data) are small.
  static bool small(uint64_t span) { return span < kSmallMember; }

  // The `length` bytes at `at`, which lie in the file; valid until the next call. Members
  // that lie together share the read of the first.
  std::span<const uint8_t> at(uint64_t at, size_t length, bool small) {
    if (at < page_at_ || at + length > page_at_ + page_size_) {
      const uint64_t begin = at / kPage * kPage;
      const size_t want = std::max<size_t>(small ? kSmallWindow : kPage,
                                           static_cast<size_t>((at + length - begin + kPage - 1) / kPage * kPage));
      if (small != small_) {
        ::posix_fadvise(fd_, 0, 0, small ? POSIX_FADV_NORMAL : POSIX_FADV_RANDOM);  // a hint
        small_ = small;
      }
      if (want > buffer_.size()) buffer_.resize(want);
      size_t got = 0;
      while (got < want) {
        const ssize_t n = ::pread(fd_, buffer_.data() + got, want - got, static_cast<off_t>(begin + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
          throw DataError(fmt::format("cannot read {} at byte {}: {}", path_, begin + got, std::strerror(errno)));
        if (n == 0) break;  // the end of the file
        got += static_cast<size_t>(n);
      }
      if (begin + got < at + length) {
        throw DataError(
            fmt::format("{} changed while it was being indexed: it ends at byte {}; index it again once "
                        "it is written",
                        path_, begin + got));
      }
      page_at_ = begin;
      page_size_ = got;
    }
    return {buffer_.data() + (at - page_at_), length};
  }

 private:
  static constexpr uint64_t kPage = 4096;
  static constexpr uint64_t kSmallMember = 16 * 1024;
  static constexpr uint64_t kSmallWindow = 64 * 1024;
  std::string path_;
  int fd_;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(kPage);
  uint64_t page_at_ = 0;
  size_t page_size_ = 0;
  bool small_ = true;  // the file's advice is POSIX_FADV_NORMAL (as opened)
};

}  // namespace

TarArchive::TarArchive(const std::string& path) : map_(std::make_shared<const MappedFile>(path)) {
  const std::span<const uint8_t> file = map_->bytes();
  PageReader pages(path);
  uint64_t headers = 0;
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
    std::array<uint8_t, kBlock> header_copy;
    // Small members while those so far are (the first header is read with its neighbours).
    const bool small = PageReader::small(at / std::max<uint64_t>(headers++, 1));
    const std::span<const uint8_t> header_bytes = pages.at(at, kBlock, small);
    std::copy(header_bytes.begin(), header_bytes.end(), header_copy.begin());
    const uint8_t* header = header_copy.data();
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
    const auto contents = [&] {  // of a record for the next member (small: a long name, pax records)
      const std::span<const uint8_t> bytes = pages.at(data, static_cast<size_t>(*size), small);
      return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    };
    if (type == 'L') {  // GNU: the next member's name, NUL-terminated
      const std::string_view name = contents();
      next_name = std::string(name.substr(0, name.find('\0')));
    } else if (type == 'x') {  // pax: records for the next member
      const PaxRecords records = parse_pax(contents());
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

std::vector<std::string> TarArchive::read_members(std::span<const size_t> which, size_t max_bytes) const {
  PageReader pages(path());
  const bool small = PageReader::small(map_->bytes().size() / std::max<size_t>(members_.size(), 1));
  std::vector<std::string> out;
  out.reserve(which.size());
  for (const size_t index : which) {
    const Member& member = members_[index];
    const std::span<const uint8_t> bytes =
        pages.at(member.offset, static_cast<size_t>(std::min<uint64_t>(member.size, max_bytes)), small);
    out.emplace_back(bytes.begin(), bytes.end());
  }
  return out;
}

}  // namespace stoker::data
