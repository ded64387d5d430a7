#include "clip_files.h"

#include <algorithm>

#include "file_reader.h"

namespace stoker::data {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Status Source::read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const {
  const std::span<const int> chosen = pick(1);
  frames->resize(chosen.size());
  for (SampleData& frame : *frames) {
    if (Status status = read(index, &frame); !status.ok()) return status;
  }
  return Status::ok_status();
}

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  int zeros = 0;  // leading zeros of the first equal numbers that differed in them: a's minus b's
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const size_t a_start = i, b_start = j;
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      const size_t a_digits = i, b_digits = j;
      while (i < a.size() && is_digit(a[i])) ++i;
      while (j < b.size() && is_digit(b[j])) ++j;
      const std::string_view x = a.substr(a_digits, i - a_digits), y = b.substr(b_digits, j - b_digits);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      if (zeros == 0) zeros = static_cast<int>(a_digits - a_start) - static_cast<int>(b_digits - b_start);
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  if (zeros != 0) return zeros < 0;
  return false;
}

std::vector<std::string> folder_frames(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  std::error_code error;
  std::filesystem::directory_iterator it(folder, error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    std::error_code kind_error;  // an entry that cannot be stat'ed is taken for a file
    std::string name = it->path().filename().string();
    if (!it->is_directory(kind_error) && has_image_extension(name)) names.push_back(std::move(name));
  }
  if (error) throw DataError("cannot list the clip folder " + folder.string() + ": " + error.message());
  std::sort(names.begin(), names.end(), natural_less);
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back((folder / name).string());
  return paths;
}

int count_frames(std::string_view cell) { return static_cast<int>(std::count(cell.begin(), cell.end(), '|')) + 1; }

std::string_view frame_of(std::string_view cell, int k) {
  size_t begin = 0;
  for (int skipped = 0; skipped < k; ++skipped) begin = cell.find('|', begin) + 1;
  const size_t end = cell.find('|', begin);
  return cell.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

}  // namespace stoker::data
