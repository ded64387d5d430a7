// Helpers of the clip sources whose frames are files (clip folders, CSV lists of frames).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

// Name order with runs of digits compared as numbers ("frame_2" < "frame_10" < "frame_10a");
// equal numbers with more leading zeros after, then byte order: a strict weak order.
bool natural_less(std::string_view a, std::string_view b);

// Reads the frames pick() chooses of a clip of `count` frame files, `path_of(k)` the path of
// frame k, into frames[0], [1], ... A failure names the frame's path.
template <typename PathOf>
Status read_frame_files(int count, const PathOf& path_of, const FramePicker& pick, std::vector<SampleData>* frames) {
  const std::span<const int> chosen = pick(count);
  frames->resize(chosen.size());
  for (size_t k = 0; k < chosen.size(); ++k) {
    const std::string path = path_of(chosen[k]);
    if (Status status = read_whole_file(path, &(*frames)[k]); !status.ok()) {
      return Status::failure("frame " + path + ": " + status.reason());
    }
  }
  return Status::ok_status();
}

// The frames of a clip folder: the image files (kImageExtensions) directly in `folder`, as paths
// under it, in natural_less order of their names; empty when it holds none. Throws DataError
// naming the folder when it cannot be listed.
std::vector<std::string> folder_frames(const std::filesystem::path& folder);

// The frames of a CSV path cell, "a.jpg|b.jpg|c.jpg": how many, and frame k.
int count_frames(std::string_view cell);
std::string_view frame_of(std::string_view cell, int k);

}  // namespace stoker::data
