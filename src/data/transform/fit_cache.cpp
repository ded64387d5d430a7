#include "data/transform/fit_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "data/transform/features.h"
#include "stoker/core/cache_dir.h"
#include "stoker/core/digest.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHeader = "stoker fit cache\n";
constexpr uint64_t kMaxFileBytes = uint64_t{64} << 20;  // 1M features of two hex floats, with room

bool cache_on() {
  const char* value = std::getenv("STOKER_FIT_CACHE");
  if (value == nullptr) return true;
  for (const std::string_view off : {"0", "off", "false", "no"}) {
    if (std::string_view(value) == off) return false;
  }
  return true;
}

std::string values_line(std::string_view name, const std::vector<float>& values) {
  std::string line(name);
  for (const float v : values) line += fmt::format(" {:a}", v);
  return line + "\n";
}

// The values of a line "name v v v" (hex or decimal floats, finite); false for another line.
bool parse_values(const std::string& line, std::string_view name, int count, std::vector<float>* out) {
  std::istringstream words(line);
  std::string word;
  if (!(words >> word) || word != name) return false;
  out->clear();
  while (words >> word) {
    char* end = nullptr;
    errno = 0;
    const float v = std::strtof(word.c_str(), &end);
    if (end != word.c_str() + word.size() || errno != 0 || !std::isfinite(v)) return false;
    out->push_back(v);
  }
  return static_cast<int>(out->size()) == count;
}

}  // namespace

std::optional<FitCacheEntry> fit_cache_entry(const Source& source, int64_t fit_rows) {
  if (!cache_on()) return std::nullopt;
  const std::optional<Source::RowsOrigin> origin = source.rows_origin();
  if (!origin) return std::nullopt;
  struct stat info {};
  if (::stat(origin->path.c_str(), &info) != 0) return std::nullopt;
  const int64_t mtime_ns = int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec;
  FitCacheEntry entry;
  entry.key = fmt::format(
      "{}path {}\ndataset {}\nsize {}\nmtime_ns {}\nrows {}\nfeatures {}\nfit_rows {}\ntogether {}\n"
      "rule {}\n",
      kHeader, origin->path, origin->dataset, static_cast<int64_t>(info.st_size), mtime_ns, source.size(),
      source.feature_count(), fit_rows, source.rows_read_together(), kFitSampleRuleVersion);
  Digest key_digest;
  key_digest.update(entry.key);
  entry.file = (fs::path(cache_dir()) / fmt::format("fit-{}.txt", key_digest.hex())).string();
  return entry;
}

bool read_fit_cache(const FitCacheEntry& entry, int features, std::vector<float>* mean, std::vector<float>* std) {
  std::string text;
  try {
    text = read_small_file(entry.file, "fit cache file", kMaxFileBytes);
  } catch (const UsageError&) {
    return false;  // absent, unreadable, too large, or not a regular file: fitted again
  }
  if (!text.starts_with(entry.key)) return false;
  std::istringstream rest(text.substr(entry.key.size()));
  std::string mean_line, std_line, end_line;
  std::vector<float> m, s;
  if (!std::getline(rest, mean_line) || !std::getline(rest, std_line) || !std::getline(rest, end_line) ||
      end_line != "end" || !parse_values(mean_line, "mean", features, &m) ||
      !parse_values(std_line, "std", features, &s)) {
    return false;
  }
  for (const float v : s) {
    if (!(v > 0)) return false;
  }
  *mean = std::move(m);
  *std = std::move(s);
  return true;
}

bool write_fit_cache(const FitCacheEntry& entry, const std::vector<float>& mean, const std::vector<float>& std) {
  std::error_code ec;
  const fs::path file(entry.file);
  fs::create_directories(file.parent_path(), ec);
  if (ec) return false;
  const std::string text = entry.key + values_line("mean", mean) + values_line("std", std) + "end\n";
  const std::string tmp = fmt::format("{}.{}.tmp", entry.file, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = true;
  for (size_t at = 0; at < text.size() && ok;) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += static_cast<size_t>(n);
  }
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (ok) fs::rename(tmp, file, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::string fit_standardize_cached(const Source& source, std::vector<float>* mean, std::vector<float>* std, int threads,
                                   int64_t fit_rows) {
  const std::optional<FitCacheEntry> entry =
      complete_feature_sums(source) == nullptr ? fit_cache_entry(source, fit_rows) : std::nullopt;
  if (entry && read_fit_cache(*entry, source.feature_count(), mean, std)) {
    const Source::RowsOrigin origin = *source.rows_origin();
    return fmt::format(
        "Standardize: the mean and std of {} (dataset {}) read from the fit cache {}; "
        "STOKER_FIT_CACHE=0 fits again",
        origin.path, origin.dataset, entry->file);
  }
  fit_standardize_on_threads(source, mean, std, threads, fit_rows);
  if (entry) write_fit_cache(*entry, *mean, *std);
  return "";
}

}  // namespace stoker::data
