// stoker/core/suggest.h — "did you mean ...?" for names the user typed: config keys and
// values, transform names. Pure functions, thread-safe.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace stoker {

// Levenshtein distance, ignoring case and treating '-' as '_': `Batch-Size` is one typo away
// from nothing, so it should match `batch_size` exactly.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  auto fold = [](char c) { return c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = fold(a[i - 1]) == fold(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The candidate closest to `name`, or "" when none is close enough to be a likely typo:
// within 2 edits, or a third of the name's length for long names.
template <typename Range>
std::string_view closest(std::string_view name, const Range& candidates) {
  std::string_view best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const std::string_view c(candidate);
    const size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace stoker
