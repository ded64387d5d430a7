// torchvision-style ImageFolder: root/<class>/**/<image>.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "file_reader.h"
#include "image_list.h"
#include "stoker/core/error.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

// The folder `path` names (after symlinks), by device and inode.
std::pair<dev_t, ino_t> folder_id(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

// A folder of the dataset that cannot be listed (no read permission, an I/O error).
DataError unreadable_folder(const fs::path& folder, const std::error_code& ec) {
  return DataError("cannot list the folder " + folder.string() + " of the dataset: " + ec.message() +
                   "; check its permissions (its images would otherwise be missing from the data)");
}

}  // namespace

std::unique_ptr<Source> open_image_folder(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) throw DataError("dataset directory " + root + " does not exist");
  if (!fs::is_directory(root, ec)) throw DataError("dataset path " + root + " is not a directory");

  std::vector<std::string> classes;
  size_t tar_files = 0;  // WebDataset shards given by their folder
  std::error_code list_error;
  fs::directory_iterator it(root, list_error);
  for (; it != fs::directory_iterator(); it.increment(list_error)) {
    std::error_code kind_error;  // an entry that cannot be stat'ed is not a class folder
    if (it->is_directory(kind_error)) classes.push_back(it->path().filename().string());
    if (it->path().extension() == ".tar") ++tar_files;
  }
  if (list_error) throw unreadable_folder(root, list_error);  // the listing ends at its first error
  if (classes.empty() && tar_files > 0) {
    std::string folder = root;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    throw DataError(fmt::format(
        "dataset directory {} has no class folders; it holds {} .tar file{}: give WebDataset shards as one pattern, "
        "'{}/*.tar' or 'shards/{{00000..00099}}.tar'",
        root, with_commas(tar_files), tar_files == 1 ? "" : "s", folder));
  }
  if (classes.empty()) {
    throw DataError("dataset directory " + root +
                    " has no class folders; expected root/<class>/<image>.jpg (torchvision "
                    "ImageFolder layout)");
  }
  std::sort(classes.begin(), classes.end());
  OpenProgress* const progress = current_open_progress();
  if (progress != nullptr) progress->parts = classes.size();

  PathList paths;
  std::vector<int64_t> labels;
  size_t skipped = 0;
  // Symlinks to folders are followed, but each folder is read once: a link back up the tree
  // would otherwise be walked without end, and two links to one folder would read it twice.
  // The root and the class folders are claimed first, so a link into another class is not read
  // as this one.
  std::set<std::pair<dev_t, ino_t>> read_folders{folder_id(root)};
  std::vector<bool> claimed(classes.size());
  size_t repeated_folders = 0;
  for (size_t class_id = 0; class_id < classes.size(); ++class_id) {
    claimed[class_id] = read_folders.insert(folder_id(fs::path(root) / classes[class_id])).second;
    if (!claimed[class_id]) ++repeated_folders;
  }
  for (size_t class_id = 0; class_id < classes.size(); ++class_id) {
    std::vector<std::string> class_paths;
    const fs::path class_dir = fs::path(root) / classes[class_id];
    if (!claimed[class_id]) continue;
    // Every folder is listed or the source is refused: a folder skipped for its permissions
    // (torchvision raises PermissionError) would make its images missing without a word.
    std::error_code walk_error;
    fs::recursive_directory_iterator walk(class_dir, fs::directory_options::follow_directory_symlink, walk_error);
    if (walk_error) throw unreadable_folder(class_dir, walk_error);
    // The folder the next step lists: the folder just met, else the one being listed.
    fs::path listing = class_dir;
    for (; walk != fs::recursive_directory_iterator(); walk.increment(walk_error)) {
      const fs::directory_entry& entry = *walk;
      listing = entry.path().parent_path();
      if (entry.is_directory(ec)) {  // ec: an entry that cannot be stat'ed is a file
        if (!read_folders.insert(folder_id(entry.path())).second) {
          walk.disable_recursion_pending();
          ++repeated_folders;
        } else {
          listing = entry.path();
        }
        continue;
      }
      const std::string filename = entry.path().filename().string();
      if (has_image_extension(filename)) {
        class_paths.push_back(entry.path().string());
      } else {
        ++skipped;
      }
    }
    if (walk_error) throw unreadable_folder(listing, walk_error);  // the walk ends at its first error
    std::sort(class_paths.begin(), class_paths.end());
    if (progress != nullptr) {
      progress->files += class_paths.size();
      ++progress->parts_done;
    }
    for (const auto& path : class_paths) {
      paths.push_back(path);
      labels.push_back(static_cast<int64_t>(class_id));
    }
  }
  if (paths.empty()) {
    throw DataError("no images found under " + root + " (looked for ." +
                    fmt::format("{}", fmt::join(kImageExtensions, ", .")) + " files in " +
                    std::to_string(classes.size()) + " class folders)");
  }
  std::string notes;
  if (skipped > 0) notes += " (" + with_commas(skipped) + " non-image files skipped)";
  if (repeated_folders > 0) {
    notes += " (" + with_commas(repeated_folders) + (repeated_folders == 1 ? " symlink" : " symlinks") +
             " to folders already read skipped)";
  }
  return image_list_source("image folder " + root, std::move(paths), std::move(labels), std::move(classes),
                           std::move(notes));
}

}  // namespace stoker::data
