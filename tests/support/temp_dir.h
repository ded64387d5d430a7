// A temporary directory removed (recursively) when the object goes out of scope, and a working
// directory changed for a scope.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace stoker::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // Writes `bytes` to path()/relative, creating parent folders; returns the full path.
  std::string write(const std::string& relative, const std::vector<uint8_t>& bytes) const;
  std::string write_text(const std::string& relative, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

// The working directory changed to `folder` for the object's scope, restored after it.
class InFolder {
 public:
  explicit InFolder(const std::filesystem::path& folder) : before_(std::filesystem::current_path()) {
    std::filesystem::current_path(folder);
  }
  ~InFolder() { std::filesystem::current_path(before_); }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  std::filesystem::path before_;
};

}  // namespace stoker::testing
