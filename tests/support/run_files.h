// What a finished `stoker train` left in its output directory, read as any other tool would:
// summary.json and the metadata of model.safetensors. The output directory holds one run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace stoker::testing {

// Shell text that starts `stoker_train_command` (a `stoker train ...` command line without
// --output-dir) in the background as $pid, writing into `output_dir`, and returns once its
// run has started training (metrics.csv exists: the loop's signal handler is next) and a
// second more has passed, however slow a loaded machine makes the start-up. Append what to
// do to $pid.
inline std::string start_training_in_background(const std::string& stoker_train_command,
                                                const std::string& output_dir) {
  return stoker_train_command + " --output-dir " + output_dir + " & pid=$!; i=0; while [ $i -lt 1200 ] && ! ls " +
         output_dir + "/*/metrics.csv >/dev/null 2>&1; do sleep 0.1; i=$((i+1)); done; sleep 1; ";
}

// The run folder inside `output_dir`; "" when there is none.
inline std::string run_dir_of(const std::string& output_dir) {
  for (const auto& entry : std::filesystem::directory_iterator(output_dir)) return entry.path().string();
  return "";
}

// The run's summary.json; null when the directory holds no run.
inline nlohmann::json summary_of(const std::string& output_dir) {
  for (const auto& entry : std::filesystem::directory_iterator(output_dir)) {
    std::ifstream in(entry.path() / "summary.json");
    return nlohmann::json::parse(in);
  }
  return {};
}

// A safetensors file: its JSON header (after the 8-byte little-endian header length) and the
// tensor bytes that follow it. Throws for a file that is not one.
struct SafetensorsFile {
  nlohmann::json header;
  std::string data;
};
inline SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8) throw std::runtime_error(path + " is not a safetensors file (under 8 bytes)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(std::min<uint64_t>(8 + n, bytes.size()))};
}

// The "__metadata__" of the run's model.safetensors, or of `file`; null when the directory
// holds no run.
inline nlohmann::json weights_metadata_of(const std::string& output_dir,
                                          const std::string& file = "model.safetensors") {
  for (const auto& entry : std::filesystem::directory_iterator(output_dir)) {
    return read_safetensors((entry.path() / file).string()).header.value("__metadata__", nlohmann::json::object());
  }
  return {};
}

}  // namespace stoker::testing
