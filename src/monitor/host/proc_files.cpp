#include "monitor/host/proc_files.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>

namespace stoker::monitor::host {
namespace {

// Enough for /proc/stat on a few dozen cores in one read(); bigger files grow the buffer
// once and it stays grown.
constexpr size_t kInitialCapacity = 4096;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

bool read_small_file(const char* path, std::string* out) {
  out->clear();
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  if (out->capacity() < kInitialCapacity) out->reserve(kInitialCapacity);
  // Use the whole existing capacity as the read buffer: no allocation once it has grown.
  out->resize(out->capacity());
  size_t length = 0;
  bool ok = true;
  for (;;) {
    if (length == out->size()) out->resize(out->size() * 2);
    const ssize_t n = ::read(fd, out->data() + length, out->size() - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  ::close(fd);
  out->resize(ok ? length : 0);
  return ok;
}

bool next_line(std::string_view* text, std::string_view* line) {
  if (text->empty()) return false;
  const size_t end = text->find('\n');
  if (end == std::string_view::npos) {
    *line = *text;
    *text = {};
  } else {
    *line = text->substr(0, end);
    text->remove_prefix(end + 1);
  }
  return true;
}

bool next_field(std::string_view* text, std::string_view* field) {
  size_t begin = 0;
  while (begin < text->size() && is_blank((*text)[begin])) ++begin;
  if (begin == text->size()) {
    *text = {};
    return false;
  }
  size_t end = begin;
  while (end < text->size() && !is_blank((*text)[end])) ++end;
  *field = text->substr(begin, end - begin);
  text->remove_prefix(end);
  return true;
}

bool skip_fields(std::string_view* text, int count) {
  std::string_view ignored;
  for (int i = 0; i < count; ++i) {
    if (!next_field(text, &ignored)) return false;
  }
  return true;
}

bool parse_u64(std::string_view field, uint64_t* out) {
  if (field.empty()) return false;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool next_u64(std::string_view* text, uint64_t* out) {
  std::string_view field;
  return next_field(text, &field) && parse_u64(field, out);
}

void append_decimal(std::string* out, uint64_t value) {
  char digits[24];
  const auto [ptr, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  (void)ec;  // 24 characters always hold a uint64_t
  out->append(digits, ptr);
}

}  // namespace stoker::monitor::host
