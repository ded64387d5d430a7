// exclude_listed(): see stoker/data/source.h.
#include <fmt/format.h>

#include <string_view>
#include <unordered_set>

#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

constexpr uint64_t kMaxListBytes = 256ull << 20;

// The names of a list's lines: up to a tab, without a '\r' a Windows editor left.
std::unordered_set<std::string> listed_names(const std::string& text) {
  std::unordered_set<std::string> names;
  std::string_view rest(text);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    line = line.substr(0, line.find('\t'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') names.emplace(line);
  }
  return names;
}

}  // namespace

Excluded exclude_listed(std::shared_ptr<const Source> source, const std::string& list_path) {
  std::unordered_set<std::string> names = listed_names(read_small_file(list_path, "--exclude-list", kMaxListBytes));
  const size_t listed = names.size();
  std::vector<size_t> kept;
  kept.reserve(source->size());
  for (size_t i = 0; i < source->size(); ++i) {
    if (names.erase(source->name(i)) == 0) kept.push_back(i);
  }
  Excluded out;
  out.excluded = listed - names.size();
  out.unknown = names.size();
  if (out.excluded == 0) {
    out.source = std::move(source);
    return out;
  }
  if (kept.empty()) {
    throw UsageError(fmt::format("--exclude-list {} names every sample of {}; nothing would be left to train on",
                                 list_path, source->describe()));
  }
  out.source = std::make_shared<RowsView>(source, std::move(kept),
                                          fmt::format("{} listed in {} left out", out.excluded, list_path));
  return out;
}

}  // namespace stoker::data
