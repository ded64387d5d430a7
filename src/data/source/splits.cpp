// Which splits a path offers (splits_of, has_held_out_split) and the refusal of one it does
// not (check_split).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "array_source.h"
#include "dataset_paths.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

// True for a .npy file: NumPy arrays, but one split (its targets lie beside it).
bool is_npy(const std::string& path) { return fs::path(path).extension() == ".npy"; }

// Kinds whose path is all of one split: an image folder, a CSV list or table, a WebDataset
// shard, a lone .npy.
bool holds_one_split(FormatKind kind, const std::string& path) {
  switch (kind) {
    case FormatKind::kIdx:
    case FormatKind::kTorch:
    case FormatKind::kHdf5:
      return false;
    case FormatKind::kNumpy:
      return is_npy(path);
    case FormatKind::kImageFolder:
    case FormatKind::kCsv:
    case FormatKind::kWebDataset:
      break;
  }
  return true;
}

std::vector<Split> offered_by(const std::string& path) {
  const FormatKind kind = kind_of_path(path);
  if (holds_one_split(kind, path)) return {Split::kTrain};
  switch (kind) {
    case FormatKind::kIdx: {
      std::vector<Split> splits;
      for (const SplitDeclaration& d : split_declarations()) {
        const std::vector<std::string_view> prefixes = idx_prefixes(d.split);
        const bool found = std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view prefix) {
          return !find_idx(path, prefix, "images-idx3-ubyte").empty();
        });
        if (d.split == Split::kTrain || found) splits.push_back(d.split);
      }
      return splits;
    }
    case FormatKind::kNumpy:
      return npz_splits(path);
    case FormatKind::kTorch:
      return torch_file_splits(path);
    case FormatKind::kHdf5:
      return hdf5_splits(path);
    default:
      return {Split::kTrain};
  }
}

// "an image folder" from formats.h's "an image folder (one subfolder per class)": of the format
// `path` has by its extension when it is of `kind` ("a TSV file"), else of the first of `kind`.
std::string kind_text(FormatKind kind, const std::string& path) {
  const DataFormat* format = format_of_file(path);
  if (format == nullptr || format->kind != kind) {
    const auto formats = data_formats();
    const auto first =
        std::find_if(formats.begin(), formats.end(), [&](const DataFormat& f) { return f.kind == kind; });
    format = first == formats.end() ? nullptr : &*first;
  }
  return format == nullptr ? "data" : std::string(format->described.substr(0, format->described.find(" (")));
}

// "_val, _valid or _validation" / "val, valid or validation": how `split`'s arrays, groups or
// dict entries are named.
std::string named_by(Split split, bool underscore) {
  std::vector<std::string> names;
  for (const std::string& suffix : split_suffixes(split)) {
    if (!suffix.empty()) names.push_back(underscore ? suffix : suffix.substr(1));
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

// Why data of `kind` lacks `split`, a clause: "IDX data has no val split", "no arrays are named
// with _test".
std::string why_absent(FormatKind kind, Split split) {
  const SplitDeclaration& d = *declaration_of(split);
  switch (kind) {
    case FormatKind::kIdx:
      if (d.idx_prefix.empty()) return fmt::format("IDX data has no {} split", d.name);
      return fmt::format("there is no {}-images-idx3-ubyte[.gz]", d.idx_prefix);
    case FormatKind::kNumpy:
      return fmt::format("no arrays are named with {}", named_by(split, true));
    case FormatKind::kHdf5:
      return fmt::format("no datasets are named with {} and no group {} holds x and y", named_by(split, true),
                         named_by(split, false));
    case FormatKind::kTorch:
      return fmt::format("no tensors are named with {} and no dict entry is keyed {}", named_by(split, true),
                         named_by(split, false));
    default:
      return "it does not hold one";
  }
}

// " (there is data/val beside it)": a folder or file beside `path` that holds another split by
// its name (data/train -> data/val, train.csv -> test.csv), the kind `asked` names first.
std::string sibling_hint(const std::string& path, Split asked) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";  // a pattern
  const fs::path given = fs::path(path).lexically_normal();
  const fs::path self = given.has_filename() ? given : given.parent_path();
  std::vector<std::string> words;
  for (const Split s : {asked, Split::kVal, Split::kTest}) {
    for (const std::string& suffix : split_suffixes(s)) {
      const std::string word = suffix.substr(std::min<size_t>(1, suffix.size()));
      if (!word.empty() && std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    }
  }
  const std::string name = self.filename().string();
  const size_t at = name.find("train");
  for (const std::string& word : words) {
    std::vector<fs::path> candidates;
    if (fs::is_directory(self, ec)) candidates.push_back(self.parent_path() / word);
    if (at != std::string::npos) {
      candidates.push_back(self.parent_path() / (name.substr(0, at) + word + name.substr(at + 5)));
    }
    for (const fs::path& candidate : candidates) {
      if (candidate != self && fs::exists(candidate, ec))
        return fmt::format(" (there is {} beside it)", candidate.string());
    }
  }
  return "";
}

// "holds one split, train" / "offers train and test (t10k)".
std::string offers_text(bool one_split, const std::vector<Split>& offered) {
  if (one_split) return fmt::format("holds one split, {}", split_list_text(offered));
  return fmt::format("offers {}", split_list_text(offered));
}

// The kind of the first path `path` names, whether it holds one split, and its kind_text.
struct KindNamed {
  FormatKind kind;
  bool one_split;
  std::string text;
};
KindNamed kind_named(const std::string& path) {
  const std::string first = paths_named(path).front();
  const FormatKind kind = kind_of_path(first);
  return {kind, holds_one_split(kind, first), kind_text(kind, first)};
}

[[noreturn]] void refuse(const std::string& path, Split split, std::string_view asked) {
  const std::vector<Split> offered = offered_splits(path);
  const auto [kind, one_split, text] = kind_named(path);
  const std::string other = split == Split::kVal ? "validation" : "test";
  if (one_split) {
    throw UsageError(fmt::format("no split '{}' in {} ({}): it {}; give the {} data's own path{}", asked, path, text,
                                 offers_text(true, offered), other, sibling_hint(path, split)));
  }
  throw UsageError(fmt::format("no split '{}' in {} ({}): it {}, and {}; ask for {}, or give the {} data's own path",
                               asked, path, text, offers_text(false, offered), why_absent(kind, split),
                               offered.size() == 1 ? "train" : "one of those", other));
}

}  // namespace

std::vector<Split> offered_splits(const std::string& path) {
  std::vector<Split> common;
  bool first = true;
  for (const std::string& one : paths_named(path)) {
    const std::vector<Split> splits = offered_by(one);
    if (first) {
      common = splits;
      first = false;
    } else {
      std::erase_if(common, [&](Split s) { return std::find(splits.begin(), splits.end(), s) == splits.end(); });
    }
  }
  return common;
}

void check_offered(const std::string& path, Split split) {
  if (split != Split::kVal && split != Split::kTest) return;
  const std::vector<Split> offered = offered_splits(path);
  if (std::find(offered.begin(), offered.end(), split) == offered.end()) refuse(path, split, split_name(split));
}

std::vector<std::string> splits_of(const std::string& path) {
  std::vector<std::string> names;
  for (const Split s : offered_splits(path)) names.emplace_back(split_name(s));
  return names;
}

void check_split(const std::string& path, const std::string& split) {
  if (const std::optional<Split> named = split_named(split)) {
    const std::vector<Split> offered = *named == Split::kTrain ? std::vector<Split>{} : offered_splits(path);
    if (*named != Split::kTrain && std::find(offered.begin(), offered.end(), *named) == offered.end()) {
      refuse(path, *named, split);
    }
    return;
  }
  std::vector<Split> every;
  for (const SplitDeclaration& d : split_declarations()) every.push_back(d.split);
  std::string at_path;
  std::string ask = "one of those";
  try {
    const std::vector<Split> offered = offered_splits(path);
    const auto [kind, one_split, text] = kind_named(path);
    at_path = fmt::format(", and {} ({}) {}", path, text, offers_text(one_split, offered));
    if (offered.size() == 1) ask = "train";
  } catch (const Error&) {
    // A path that cannot be read: the names alone; opening it says what is wrong with it.
  }
  throw UsageError(
      fmt::format("unknown split '{}': stoker reads {}{}; ask for {}", split, split_list_text(every), at_path, ask));
}

bool has_held_out_split(const std::string& path) {
  const std::vector<std::string> paths = paths_named(path);
  return std::all_of(paths.begin(), paths.end(), [](const std::string& one) {
    const std::vector<Split> offered = offered_by(one);
    return std::any_of(offered.begin(), offered.end(), [](Split s) { return s == Split::kVal || s == Split::kTest; });
  });
}

}  // namespace stoker::data
