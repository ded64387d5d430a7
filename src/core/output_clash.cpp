#include "stoker/core/output_clash.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "stoker/core/error.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

struct FileId {
  dev_t device = 0;
  ino_t inode = 0;
  bool folder = false;
  bool operator==(const FileId& other) const { return device == other.device && inode == other.inode; }
};

// What `path` is once symlinks are followed; nothing when it does not exist (or cannot be stat'ed).
std::optional<FileId> id_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino, S_ISDIR(st.st_mode)};
}

// Every folder from `path` (a folder itself, else its folder) up to `/`: the deepest part of
// the path that exists, with symlinks resolved, then each folder above it.
std::vector<FileId> folders_holding(const fs::path& path) {
  fs::path start = path;
  const std::optional<FileId> self = id_of(path);
  if (!self || !self->folder) start = path.parent_path();
  for (;;) {
    if (start.empty()) start = ".";
    if (const std::optional<FileId> id = id_of(start); id && id->folder) break;
    if (start == start.parent_path() || start == ".") return {};
    start = start.parent_path();
  }
  std::error_code ec;
  fs::path folder = fs::canonical(start, ec);
  if (ec) return {};
  std::vector<FileId> chain;
  for (;;) {
    if (const std::optional<FileId> id = id_of(folder)) chain.push_back(*id);
    if (folder == folder.parent_path()) break;
    folder = folder.parent_path();
  }
  return chain;
}

bool holds(const std::vector<FileId>& chain, const FileId& folder) {
  return std::find(chain.begin(), chain.end(), folder) != chain.end();
}

// The first input `output` is, or lies inside; "" when none.
std::string clash(const std::string& output, const std::string& what, const std::vector<CommandInput>& inputs) {
  const std::optional<FileId> out = id_of(output);
  const std::vector<FileId> chain = folders_holding(output);
  for (const CommandInput& input : inputs) {
    const std::optional<FileId> in = id_of(input.path);
    if (!in) continue;
    if (out && *out == *in) {
      return fmt::format(
          "{} {} is {} {} (the same {}): writing it would destroy what this command reads; give {} "
          "another path",
          what, output, input.what, input.path, in->folder ? "folder" : "file", what);
    }
    if (in->folder && holds(chain, *in)) {
      return fmt::format(
          "{} {} lies inside {} {}: writing there would change what this command reads; give {} a "
          "path outside it",
          what, output, input.what, input.path, what);
    }
  }
  return "";
}

}  // namespace

void check_output_apart(const std::string& output, const std::string& what, const std::vector<CommandInput>& inputs) {
  if (const std::string why = clash(output, what, inputs); !why.empty()) throw UsageError(why);
}

void check_output_folder_apart(const std::string& output, const std::string& what,
                               const std::vector<CommandInput>& inputs) {
  check_output_apart(output, what, inputs);
  const std::optional<FileId> out = id_of(output);
  if (!out || !out->folder) return;
  for (const CommandInput& input : inputs) {
    if (!id_of(input.path)) continue;
    if (holds(folders_holding(input.path), *out)) {
      throw UsageError(fmt::format("{} {} lies inside {} {}: give {} a folder that does not hold it", input.what,
                                   input.path, what, output, what));
    }
  }
}

}  // namespace stoker
