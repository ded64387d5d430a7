#include "brace_pattern.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "stoker/core/error.h"

namespace stoker::data {

namespace {

// The alternatives inside one group's braces: a range "a..b" or a comma list.
std::vector<std::string> alternatives(const std::string& inside, const std::string& pattern) {
  const size_t dots = inside.find("..");
  if (inside.find(',') == std::string::npos && dots != std::string::npos) {
    const std::string a = inside.substr(0, dots), b = inside.substr(dots + 2);
    const auto integer = [](const std::string& s, long long* out) {
      if (s.empty() || s.size() > 18) return false;
      char* end = nullptr;
      *out = std::strtoll(s.c_str(), &end, 10);
      return *end == '\0';
    };
    long long from = 0, to = 0;
    if (!integer(a, &from) || !integer(b, &to)) {
      throw UsageError(
          fmt::format("dataset pattern {}: the range {{{}}} needs two integers, as in "
                      "train-{{000000..000146}}.tar",
                      pattern, inside));
    }
    const long long count = (to >= from ? to - from : from - to) + 1;
    if (count > static_cast<long long>(kMaxBraceNames)) {
      throw UsageError(fmt::format("dataset pattern {}: the range {{{}}} names {} files; at most {} are allowed",
                                   pattern, inside, count, kMaxBraceNames));
    }
    // Zero-padded when an end is written with a leading zero (000000..000146), as braceexpand.
    const bool padded = (a.size() > 1 && a[0] == '0') || (b.size() > 1 && b[0] == '0');
    const size_t width = padded ? std::max(a.size(), b.size()) : 0;
    std::vector<std::string> out;
    const long long step = to >= from ? 1 : -1;
    for (long long v = from;; v += step) {
      out.push_back(fmt::format("{:0{}}", v, width));
      if (v == to) break;
    }
    return out;
  }
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = inside.find(',', start)) != std::string::npos; start = comma + 1) {
    out.push_back(inside.substr(start, comma - start));
  }
  out.push_back(inside.substr(start));
  return out;
}

// The first group (braces holding ".." or ","): the positions of its '{' and '}', or npos. A
// '{' closes at the first '}' after it, so the others before that '}' hold less of the same
// text: only the first is looked at, and the search goes on after the '}' (linear, where trying
// each '{' of "{{{...}" was quadratic).
std::pair<size_t, size_t> first_group(const std::string& s) {
  const std::string_view text(s);
  for (size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', open)) {
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view inside = text.substr(open + 1, close - open - 1);
    if (inside.find("..") != std::string_view::npos || inside.find(',') != std::string_view::npos) {
      return {open, close};
    }
    open = close + 1;
  }
  return {std::string::npos, std::string::npos};
}

}  // namespace

bool has_brace_group(const std::string& path) {
  const auto [open, close] = first_group(path);
  return open != std::string::npos && close != std::string::npos;
}

std::vector<std::string> expand_braces(const std::string& pattern) {
  if (!has_brace_group(pattern)) return {pattern};
  const size_t last_open = pattern.rfind('{'), last_close = pattern.rfind('}');
  if (last_close == std::string::npos || last_open > last_close) {
    throw UsageError(
        fmt::format("dataset pattern {}: the '{{' at character {} is not closed; write "
                    "train-{{000000..000146}}.tar or {{a,b}}",
                    pattern, last_open + 1));
  }
  std::vector<std::string> done, todo{pattern};
  size_t held = pattern.size();  // the bytes of the names in done and todo
  while (!todo.empty()) {
    std::string s = std::move(todo.back());
    todo.pop_back();
    const auto [open, close] = first_group(s);
    if (open == std::string::npos) {
      done.push_back(std::move(s));
      continue;
    }
    const std::vector<std::string> parts = alternatives(s.substr(open + 1, close - open - 1), pattern);
    if (done.size() + todo.size() + parts.size() > kMaxBraceNames) {
      throw UsageError(fmt::format("dataset pattern {} names more than {} files", pattern, kMaxBraceNames));
    }
    // Each part goes in place of the group: the rest of s is copied once per part.
    size_t made = parts.size() * (s.size() - (close + 1 - open));
    for (const std::string& part : parts) made += part.size();
    held = held - s.size() + made;
    if (held > kMaxBraceBytes) {
      constexpr size_t kShown = 80;  // of a pattern this long
      throw UsageError(fmt::format(
          "dataset pattern {}{} ({} bytes) stands for more than {} MiB of names: each of a group's {} "
          "alternatives copies the {} bytes around it; at most {} MiB are allowed: give a shorter pattern (a "
          "path is at most 4096 bytes)",
          pattern.substr(0, kShown), pattern.size() > kShown ? "..." : "", pattern.size(), kMaxBraceBytes >> 20,
          parts.size(), s.size() - (close + 1 - open), kMaxBraceBytes >> 20));
    }
    // Pushed in reverse: the stack then yields them in order.
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      todo.push_back(s.substr(0, open) + *it + s.substr(close + 1));
    }
  }
  return done;
}

}  // namespace stoker::data
