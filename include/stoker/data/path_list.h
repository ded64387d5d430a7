// stoker/data/path_list.h — file paths held in one buffer: each path's bytes end to end, and
// where each ends. ImageNet's 1,281,167 paths of about 56 bytes take about 64 bytes each, where
// a std::vector<std::string> takes 32 bytes more and one allocation per path: what an image
// list (a folder listed, an ImageFolder object's samples) holds.
// Ownership: a value type. Thread safety: const members may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::data {

class PathList {
 public:
  PathList() = default;
  // Room for `paths` paths of `bytes` bytes in all, made before they are added.
  void reserve(size_t paths, size_t bytes) {
    ends_.reserve(paths);
    bytes_.reserve(bytes);
  }
  void push_back(std::string_view path) {
    bytes_.append(path);
    ends_.push_back(bytes_.size());
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  // The path at `index` (< size()); valid while the list lives and is not added to.
  std::string_view operator[](size_t index) const {
    const size_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(bytes_).substr(begin, ends_[index] - begin);
  }

 private:
  std::string bytes_;
  std::vector<uint64_t> ends_;  // ends_[i]: where path i ends in bytes_
};

}  // namespace stoker::data
