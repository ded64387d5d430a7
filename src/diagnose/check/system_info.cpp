// `stoker check`: the machine as /proc, cgroup v2, statvfs and NVML describe it.
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stoker/core/clock.h"
#include "stoker/diagnose/check.h"
#include "stoker/monitor/gpu_reader.h"

namespace stoker::diagnose::check {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Calls fn(key, value) for each "key : value" line (the /proc/cpuinfo and meminfo layout).
template <typename Fn>
void for_each_key_value(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fn(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
}

bool has_word(std::string_view words, std::string_view word) {
  while (!words.empty()) {
    const size_t start = words.find_first_not_of(" \t");
    if (start == std::string_view::npos) return false;
    words.remove_prefix(start);
    const size_t end = std::min(words.find_first_of(" \t"), words.size());
    if (words.substr(0, end) == word) return true;
    words.remove_prefix(end);
  }
  return false;
}

std::string collapse_spaces(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if ((c == ' ' || c == '\t') && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c == '\t' ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

template <typename T>
bool parse_number(std::string_view s, T* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The cgroup v2 directories of this process, innermost first (limits may sit on any).
std::vector<std::string> cgroup_dirs(const SystemPaths& paths) {
  std::vector<std::string> dirs;
  const auto relative = parse_cgroup_path(read_file(paths.proc + "/self/cgroup"));
  if (!relative) return dirs;
  fs::path dir = fs::path(paths.cgroup + *relative).lexically_normal();
  const fs::path root = fs::path(paths.cgroup).lexically_normal();
  for (int depth = 0; depth < 64; ++depth) {
    dirs.push_back(dir.string());
    if (dir == root || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return dirs;
}

// The lowest limit any of this process's cgroups sets in `file`.
std::optional<double> lowest_cgroup_limit(const SystemPaths& paths, const char* file,
                                          std::optional<double> (*parse)(std::string_view)) {
  std::optional<double> lowest;
  for (const std::string& dir : cgroup_dirs(paths)) {
    const std::string text = read_file(dir + "/" + file);
    if (text.empty()) continue;
    if (const auto limit = parse(text); limit && (!lowest || *limit < *lowest)) lowest = limit;
  }
  return lowest;
}

// "\040" → ' ' as /proc/self/mountinfo escapes spaces, tabs, newlines and backslashes.
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view digits = s.substr(i + 1, 3);
      if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const size_t end = std::min(line.find(' '), line.size());
    fields.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
  return fields;
}

bool path_is_under(std::string_view path, std::string_view mount_point) {
  if (mount_point == "/") return !path.empty() && path.front() == '/';
  if (path.substr(0, mount_point.size()) != mount_point) return false;
  return path.size() == mount_point.size() || path[mount_point.size()] == '/';
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  std::string model, fallback;
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "processor") ++info.logical_cpus;
    if (key == "model name" && model.empty()) model = collapse_spaces(value);
    if ((key == "Hardware" || key == "cpu model" || key == "Processor") && fallback.empty()) {
      fallback = collapse_spaces(value);
    }
    if (key == "flags" && (has_word(value, "avx512_bf16") || has_word(value, "amx_bf16"))) {
      info.bf16_instructions = true;
    }
    if (key == "Features" && has_word(value, "bf16")) info.bf16_instructions = true;
  });
  if (!model.empty()) {
    info.model = model;
  } else if (!fallback.empty()) {
    info.model = fallback;
  }
  info.usable_cores = std::max(1, info.logical_cpus);
  return info;
}

std::optional<double> parse_cgroup_cpu_max(std::string_view text) {
  const auto fields = split_fields(trim(text.substr(0, text.find('\n'))));
  if (fields.size() != 2 || fields[0] == "max") return std::nullopt;
  double quota = 0, period = 0;
  if (!parse_number(fields[0], &quota) || !parse_number(fields[1], &period) || quota <= 0 || period <= 0) {
    return std::nullopt;
  }
  return quota / period;
}

std::optional<double> parse_cgroup_memory_max(std::string_view text) {
  const std::string_view value = trim(text.substr(0, text.find('\n')));
  uint64_t bytes = 0;
  if (value == "max" || !parse_number(value, &bytes)) return std::nullopt;
  return static_cast<double>(bytes);
}

std::optional<std::string> parse_cgroup_path(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.substr(0, 3) == "0::") return std::string(trim(line.substr(3)));
  }
  return std::nullopt;
}

std::optional<int> parse_cpu_list(std::string_view list) {
  list = trim(list.substr(0, list.find('\n')));
  if (list.empty()) return std::nullopt;
  int count = 0;
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    const std::string_view range = list.substr(0, comma);
    list.remove_prefix(comma == list.size() ? comma : comma + 1);
    const size_t dash = range.find('-');
    int first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!parse_number(range, &first)) return std::nullopt;
      last = first;
    } else if (!parse_number(range.substr(0, dash), &first) || !parse_number(range.substr(dash + 1), &last) ||
               last < first) {
      return std::nullopt;
    }
    count += last - first + 1;
  }
  return count;
}

int usable_cores(int affinity_cpus, std::optional<double> quota_cores) {
  int cores = std::max(1, affinity_cpus);
  if (quota_cores && *quota_cores > 0) {
    cores = std::min(cores, static_cast<int>(std::ceil(*quota_cores - 1e-9)));
  }
  return std::max(1, cores);
}

CpuInfo read_cpu_info(const SystemPaths& paths) {
  CpuInfo info = parse_cpuinfo(read_file(paths.proc + "/cpuinfo"));
  int affinity = info.logical_cpus;
  for_each_key_value(read_file(paths.proc + "/self/status"), [&](std::string_view key, std::string_view value) {
    if (key == "Cpus_allowed_list") {
      if (const auto n = parse_cpu_list(value)) affinity = *n;
    }
  });
  info.usable_cores = usable_cores(affinity, lowest_cgroup_limit(paths, "cpu.max", parse_cgroup_cpu_max));
  return info;
}

MemoryInfo parse_meminfo(std::string_view text) {
  MemoryInfo info;
  info.total_bytes = Figure::skip("no MemTotal in /proc/meminfo");
  info.available_bytes = Figure::skip("no MemAvailable in /proc/meminfo");
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key != "MemTotal" && key != "MemAvailable") return;
    const std::string_view number = value.substr(0, value.find(' '));
    uint64_t kib = 0;
    if (!parse_number(number, &kib)) return;
    (key == "MemTotal" ? info.total_bytes : info.available_bytes) = Figure::of(static_cast<double>(kib) * 1024.0);
  });
  return info;
}

MemoryInfo read_memory_info(const SystemPaths& paths) {
  const std::string text = read_file(paths.proc + "/meminfo");
  if (text.empty()) {
    return {Figure::skip("cannot read " + paths.proc + "/meminfo"),
            Figure::skip("cannot read " + paths.proc + "/meminfo")};
  }
  MemoryInfo info = parse_meminfo(text);
  if (const auto limit = lowest_cgroup_limit(paths, "memory.max", parse_cgroup_memory_max)) {
    if (!info.total_bytes.ok() || *limit < *info.total_bytes) info.total_bytes = Figure::of(*limit);
    // What the limit leaves: the limit minus what this cgroup already uses.
    double left = *limit;
    for (const std::string& dir : cgroup_dirs(paths)) {
      double current = 0;
      const std::string used = std::string(trim(read_file(dir + "/memory.current")));
      if (!used.empty() && parse_number(std::string_view(used).substr(0, used.find('\n')), &current)) {
        left = std::max(0.0, *limit - current);
        break;
      }
    }
    if (!info.available_bytes.ok() || left < *info.available_bytes) info.available_bytes = Figure::of(left);
  }
  return info;
}

std::optional<MountInfo> find_mount(std::string_view mountinfo, std::string_view path) {
  std::optional<MountInfo> best;
  while (!mountinfo.empty()) {
    const size_t end = mountinfo.find('\n');
    const std::string_view line = mountinfo.substr(0, end);
    mountinfo.remove_prefix(end == std::string_view::npos ? mountinfo.size() : end + 1);
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    const auto fields = split_fields(line);
    if (fields.size() < 7) continue;
    const auto dash = std::find(fields.begin() + 6, fields.end(), std::string_view("-"));
    if (dash == fields.end() || fields.end() - dash < 3) continue;
    const std::string mount_point = unescape_octal(fields[4]);
    if (!path_is_under(path, mount_point)) continue;
    if (best && mount_point.size() < best->mount_point.size()) continue;
    best = MountInfo{mount_point, unescape_octal(*(dash + 1)), unescape_octal(*(dash + 2))};
  }
  return best;
}

DiskInfo read_disk_info(const std::string& path, const SystemPaths& paths) {
  DiskInfo disk;
  std::error_code ec;
  fs::path absolute = fs::weakly_canonical(fs::absolute(path, ec), ec);
  disk.path = ec ? path : absolute.string();
  disk.size_bytes = Figure::skip("statvfs not read");
  disk.free_bytes = disk.size_bytes;
  const std::string mountinfo = read_file(paths.proc + "/self/mountinfo");
  if (const auto mount = find_mount(mountinfo, disk.path)) disk.mount = *mount;
  struct statvfs vfs {};
  if (::statvfs(disk.path.c_str(), &vfs) != 0) {
    const std::string why = std::string("statvfs ") + disk.path + ": " + std::strerror(errno);
    disk.size_bytes = Figure::skip(why);
    disk.free_bytes = Figure::skip(why);
    if (disk.mount.mount_point.empty()) disk.skipped = why;
    return disk;
  }
  disk.size_bytes = Figure::of(static_cast<double>(vfs.f_blocks) * static_cast<double>(vfs.f_frsize));
  disk.free_bytes = Figure::of(static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize));
  return disk;
}

NvmlReport read_nvml(const std::string& library) {
  NvmlReport report;
  std::string why;
  std::unique_ptr<monitor::GpuReader> reader = monitor::GpuReader::open(&why, library);
  if (!reader) {
    report.skipped = why.empty() ? "NVML could not be opened" : why;
    return report;
  }
  // versions(): "driver 580.159, NVML 13.580.159".
  const std::string& versions = reader->versions();
  if (versions.rfind("driver ", 0) == 0) report.driver = versions.substr(7, versions.find(',') - 7);
  std::vector<monitor::GpuSample> samples;
  reader->sample(&samples, now_ns(), {}, false);
  const auto& gpus = reader->gpus();
  for (size_t i = 0; i < gpus.size(); ++i) {
    NvmlGpu gpu;
    gpu.index = gpus[i].index;
    gpu.name = gpus[i].name;
    const monitor::GpuSample* s = i < samples.size() ? &samples[i] : nullptr;
    gpu.memory_total_bytes = s != nullptr && s->memory_total_bytes.ok() ? Figure::of(s->memory_total_bytes.value)
                                                                        : Figure::skip("NVML gave no memory figure");
    gpu.memory_used_bytes = s != nullptr && s->memory_used_bytes.ok() ? Figure::of(s->memory_used_bytes.value)
                                                                      : Figure::skip("NVML gave no memory figure");
    report.gpus.push_back(gpu);
  }
  return report;
}

}  // namespace stoker::diagnose::check
