// CSV and JSON-lines logs over the shared field table.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "fields.h"
#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/user_files.h"
#include "stoker/monitor/sinks.h"

namespace stoker::monitor {

namespace {

std::FILE* open_log(const std::string& path) {
  check_output_file(path, "log file");  // a FIFO would block fopen, a device be written to
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    throw UsageError(fmt::format("cannot write log file {}: {}; choose a writable path", path, std::strerror(errno)));
  }
  return file;
}

void write_or_throw(std::FILE* file, const std::string& text, const std::string& path) {
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0) {
    throw SystemError(fmt::format("writing {} failed: {}", path, std::strerror(errno)));
  }
}

// Shortest text that reads back as the same double; integers without a fraction.
void append_number(std::string* out, double v) { fmt::format_to(std::back_inserter(*out), "{}", v); }

}  // namespace

std::string iso8601_utc(int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  const int millis = static_cast<int>((unix_ns / 1'000'000) % 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[96];  // room for any int fields, which -Wformat-truncation cannot rule out
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return text;
}

std::string gpu_column(int gpu, const std::string& field) { return fmt::format("gpu{}_{}", gpu, field); }

std::vector<std::string> CsvLog::columns(int gpu_count) {
  std::vector<std::string> names = {"timestamp", "seconds"};
  for (const HostField& f : kHostFields) names.push_back(f.name);
  for (int g = 0; g < gpu_count; ++g) {
    for (const GpuField& f : kGpuFields) names.push_back(gpu_column(g, f.name));
    names.push_back(gpu_column(g, "throttle"));
  }
  return names;
}

CsvLog::CsvLog(const std::string& path, int gpu_count) : file_(open_log(path)), gpu_count_(gpu_count), path_(path) {
  std::string header;
  for (const std::string& c : columns(gpu_count)) header += (header.empty() ? "" : ",") + c;
  write_or_throw(file_, header + "\n", path_);
}

CsvLog::~CsvLog() { std::fclose(file_); }

void CsvLog::write(const Sample& s) {
  row_.clear();
  row_ += iso8601_utc(s.unix_ns);
  row_ += fmt::format(",{:.3f}", s.seconds);
  auto cell = [&](const Reading& r) {
    row_ += ',';
    if (r.ok()) append_number(&row_, r.value);
  };
  for (const HostField& f : kHostFields) cell(s.host.*f.member);
  for (int g = 0; g < gpu_count_; ++g) {
    const GpuSample* gpu = static_cast<size_t>(g) < s.gpus.size() ? &s.gpus[static_cast<size_t>(g)] : nullptr;
    for (const GpuField& f : kGpuFields) cell(gpu ? gpu->*f.member : Reading{});
    row_ += ',';
    if (gpu && gpu->throttle_reasons.ok()) {
      row_ += '"' + describe_throttle_reasons(static_cast<uint64_t>(gpu->throttle_reasons.value)) + '"';
    }
  }
  row_ += '\n';
  write_or_throw(file_, row_, path_);
}

JsonlLog::JsonlLog(const std::string& path, const std::vector<GpuInfo>& gpus, const std::string& gpu_status)
    : file_(open_log(path)), path_(path) {
  nlohmann::json fields = nlohmann::json::array();
  for (const HostField& f : kHostFields) {
    fields.push_back({{"name", f.name}, {"unit", f.unit}, {"source", f.source}});
  }
  for (const GpuField& f : kGpuFields) {
    fields.push_back({{"name", std::string("gpus[].") + f.name}, {"unit", f.unit}, {"source", f.source}});
  }
  fields.push_back({{"name", "gpus[].throttle"}, {"unit", "words"}, {"source", "nvml"}});
  fields.push_back({{"name", "core_percent"}, {"unit", "% per core"}, {"source", "/proc/stat"}});
  nlohmann::json devices = nlohmann::json::array();
  for (const GpuInfo& g : gpus) {
    devices.push_back({{"index", g.index}, {"name", g.name}, {"uuid", g.uuid}, {"gpm", g.gpm_supported}});
  }
  const nlohmann::json meta = {{"type", "meta"}, {"fields", fields}, {"gpus", devices}, {"gpu_status", gpu_status}};
  write_or_throw(file_, dump_json(meta) + "\n", path_);
}

JsonlLog::~JsonlLog() { std::fclose(file_); }

void JsonlLog::write(const Sample& s) {
  auto value = [](const Reading& r) { return r.ok() ? nlohmann::json(r.value) : nlohmann::json(nullptr); };
  nlohmann::json line = {{"type", "sample"}, {"timestamp", iso8601_utc(s.unix_ns)}, {"seconds", s.seconds}};
  for (const HostField& f : kHostFields) line[f.name] = value(s.host.*f.member);
  line["core_percent"] = s.host.core_percent;
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuSample& g : s.gpus) {
    nlohmann::json gpu = {{"index", g.index}};
    for (const GpuField& f : kGpuFields) gpu[f.name] = value(g.*f.member);
    gpu["throttle"] = g.throttle_reasons.ok()
                          ? nlohmann::json(describe_throttle_reasons(static_cast<uint64_t>(g.throttle_reasons.value)))
                          : nlohmann::json(nullptr);
    gpus.push_back(gpu);
  }
  line["gpus"] = gpus;
  write_or_throw(file_, dump_json(line) + "\n", path_);
}

}  // namespace stoker::monitor
