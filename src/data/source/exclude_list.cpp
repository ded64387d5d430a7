// The exclude list: see stoker/data/exclude_list.h.
#include "stoker/data/exclude_list.h"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>
#include <unordered_set>

#include "relative_path.h"
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"

namespace stoker::data {

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxListBytes = 256ull << 20;

// Sample names made relative to the data's root: the --data folder, or the folder of a --data
// file. The names of a folder's samples begin with --data as it was spelled, so most are cut
// as text; the rest are compared as absolute, normalised paths.
class RootRelative {
 public:
  explicit RootRelative(const std::string& data_path) {
    std::error_code ec;
    fs::path root = fs::is_directory(data_path, ec) ? fs::path(data_path) : fs::path(data_path).parent_path();
    if (root.empty()) root = ".";
    prefix_ = (root / "").string();
    root_ = fs::absolute(root, ec).lexically_normal();
    if (root_.has_relative_path() && root_.filename().empty()) root_ = root_.parent_path();  // "x/" -> "x"
  }

  std::string operator()(const std::string& name) const {
    if (name.size() > prefix_.size() && name.compare(0, prefix_.size(), prefix_) == 0 &&
        plain_relative(std::string_view(name).substr(prefix_.size()))) {
      return name.substr(prefix_.size());
    }
    std::error_code ec;
    const fs::path relative = fs::absolute(name, ec).lexically_normal().lexically_relative(root_);
    if (ec || relative.empty() || *relative.begin() == "..") return name;
    return relative.string();
  }

 private:
  std::string prefix_;  // the root as spelled, ending in '/'
  fs::path root_;       // absolute, normalised
};

std::string escaped(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  if (!name.empty() && name.front() == '#') out += '\\';
  for (const char c : name) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The names of a list's lines.
std::unordered_set<std::string> listed_names(const std::string& text) {
  std::unordered_set<std::string> names;
  std::string_view rest(text);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') names.emplace(unescape_exclude_list_name(line));
  }
  return names;
}

}  // namespace

std::string exclude_list_name(const std::string& name, const std::string& data_path) {
  return escaped(RootRelative(data_path)(name));
}

std::string unescape_exclude_list_name(std::string_view line) {
  line = line.substr(0, line.find('\t'));
  std::string name;
  name.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      const char next = line[i + 1];
      char byte = '\0';
      if (next == '\\') byte = '\\';
      if (next == 'n') byte = '\n';
      if (next == 't') byte = '\t';
      if (next == 'r') byte = '\r';
      if (next == '#' && i == 0) byte = '#';
      if (byte != '\0') {
        name += byte;
        ++i;
        continue;
      }
    }
    name += line[i];
  }
  return name;
}

Excluded exclude_listed(std::shared_ptr<const Source> source, const std::string& list_path,
                        const std::string& data_path) {
  std::unordered_set<std::string> names = listed_names(read_small_file(list_path, "--exclude-list", kMaxListBytes));
  const size_t listed = names.size();
  const RootRelative relative(data_path);
  std::vector<size_t> kept;
  kept.reserve(source->size());
  for (size_t i = 0; i < source->size(); ++i) {
    const std::string name = source->name(i);
    // A list of relative names, or one of whole names as stoker wrote before.
    if (names.erase(relative(name)) == 0 && names.erase(name) == 0) kept.push_back(i);
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
