// What every fuzz target shares: the input as a file (most readers take a path), and the one
// outcome bad bytes may have besides success.
//
// Contract of a target: any input either parses or throws stoker::DataError or UsageError
// (stoker/core/error.h: the documented answer to a bad file). Any other exception escaping is a
// bug, and aborts so that libFuzzer reports it with the input; crashes, leaks, undefined
// behaviour, hangs (-timeout) and runaway memory (-rss_limit_mb) are reported by libFuzzer and
// the sanitizers themselves.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "stoker/core/error.h"

namespace stoker::fuzz {

// A folder of this process's own under the system's temp folder, removed at a normal exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "stoker-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("stoker fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

// Writes `size` bytes to scratch_dir()/name, replacing what was there; returns the path.
inline std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "stoker fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path.string();
}

// Runs `parse`: returning or throwing DataError/UsageError is fine, anything else aborts.
template <typename Parse>
void expect_clean_outcome(Parse&& parse) {
  try {
    parse();
  } catch (const DataError&) {
  } catch (const UsageError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker fuzz: undocumented exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "stoker fuzz: undocumented exception of a non-std type\n");
    std::abort();
  }
}

}  // namespace stoker::fuzz
