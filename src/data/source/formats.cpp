#include "stoker/data/formats.h"

#include <algorithm>
#include <filesystem>

namespace stoker::data {

std::span<const DataFormat> data_formats() {
  static const std::vector<DataFormat> kFormats = {
      {FormatKind::kImageFolder, "an image folder (one subfolder per class)", "image folder (root/<class>/<img>)", {}},
      {FormatKind::kIdx, "an IDX directory", "IDX dir", {}},
      {FormatKind::kCsv, "a CSV file (image list or numeric feature table)", "CSV list or table", {".csv"}},
      {FormatKind::kNumpy, "NumPy arrays (.npz, .npy)", ".npz/.npy", {".npz", ".npy"}},
      {FormatKind::kTorch, "PyTorch tensors (.pt, .pth from torch.save)", ".pt", {".pt", ".pth"}},
      {FormatKind::kHdf5, "an HDF5 file (.h5, .hdf5; file.h5:group for a group)", ".h5", {".h5", ".hdf5"}},
      {FormatKind::kWebDataset, "WebDataset shards (.tar of <key>.jpg + <key>.cls)", "WebDataset .tar", {".tar"}},
  };
  return kFormats;
}

const DataFormat* format_of_file(std::string_view path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const DataFormat& format : data_formats()) {
    if (std::find(format.extensions.begin(), format.extensions.end(), ext) != format.extensions.end()) return &format;
  }
  return nullptr;
}

namespace {

std::string joined(std::string_view DataFormat::*field, std::string_view last_separator) {
  const auto formats = data_formats();
  std::string text;
  for (size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) text += i + 1 == formats.size() ? last_separator : ", ";
    text += formats[i].*field;
  }
  return text;
}

}  // namespace

std::string data_formats_text() { return joined(&DataFormat::described, " or "); }

std::string data_formats_brief() { return joined(&DataFormat::brief, ", "); }

}  // namespace stoker::data
