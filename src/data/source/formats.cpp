#include "stoker/data/formats.h"

#include <algorithm>
#include <filesystem>

namespace stoker::data {

std::span<const DataFormat> data_formats() {
  static const std::vector<DataFormat> kFormats = {
      {FormatKind::kImageFolder,
       "an image folder (one subfolder per class)",
       "image folder (root/<class>/<img>)",
       {},
       "`root/<class>/<image>`, torchvision's ImageFolder rules: the files ending `.jpg`, `.jpeg`, `.png`, `.ppm`, "
       "`.bmp`, `.pgm`, `.tif`, `.tiff` or `.webp` (any case; its IMG_EXTENSIONS) are the images, other files are "
       "skipped and counted ([Image files](#image-files)). A folder in it that cannot be listed, "
       "for its permissions or an I/O error, stops with one line naming it rather than being read as empty. A file "
       "or folder name that is not UTF-8 is written in every JSON stoker makes (`summary.json`, the weights' class "
       "names, `--json`) with each stray byte as `\\udcXX`, as Python's `surrogateescape` writes it, so `json.load` "
       "and `os.fsencode` give the bytes back. With clips, `root/<class>/<clip>/<frame>` ([Clips](#clips))."},
      {FormatKind::kIdx,
       "an IDX directory",
       "IDX dir",
       {},
       "MNIST's and Fashion-MNIST's files, plain or `.gz`: `train-*` and `t10k-*` ([Splits](#splits))."},
      {FormatKind::kCsv,
       "a CSV file (image list or numeric feature table)",
       "CSV list or table",
       {".csv"},
       "A file list, one image (or clip) per row with its targets and other columns: `path,label`, "
       "`path,yaw,pitch,roll`, `path,label,caption` ([CSV file lists](#csv-file-lists)); or a table of numbers, "
       "feature vectors with a target column ([train.md](../guide/train.md#feature-vectors)). Told apart by content.",
       ','},
      {FormatKind::kCsv,
       "a TSV file (tab-separated image list or feature table)",
       "TSV list or table",
       {".tsv"},
       "A CSV file list or table whose cells are separated by tabs, read by the same rules, quoting included (a tab "
       "inside quotes is part of the cell): open_clip's `CsvDataset(sep=\"\\t\")` list, `filepath` and `title`, "
       "gives `(images, titles)` ([CSV file lists](#csv-file-lists)).",
       '\t'},
      {FormatKind::kNumpy,
       "NumPy arrays (.npz, .npy)",
       ".npz/.npy",
       {".npz", ".npy"},
       "Feature vectors and their targets (`x`, `y` and their split suffixes), or uint8 images of shape (N, H, W), "
       "(N, H, W, C) or (N, C, H, W) ([train.md](../guide/train.md#numpy-archives))."},
      {FormatKind::kTorch,
       "PyTorch tensors (.pt, .pth from torch.save)",
       ".pt",
       {".pt", ".pth"},
       "A `torch.save` file holding a dict of tensors named as in an `.npz`, an `(x, y)` tuple or a "
       "`TensorDataset`, read without running its pickle ([train.md](../guide/train.md#pytorch-files))."},
      {FormatKind::kHdf5,
       "an HDF5 file (.h5, .hdf5; file.h5:group for a group)",
       ".h5",
       {".h5", ".hdf5"},
       "Datasets named as in an `.npz`, at the root or in a group (`file.h5:group`) "
       "([train.md](../guide/train.md#hdf5-files)). Contiguous features are memory-mapped; chunked ones "
       "(`compression=\"gzip\"`, `shuffle=`, `fletcher32=`) are read row by row from their chunks, so neither "
       "needs to fit in memory."},
      {FormatKind::kWebDataset,
       "WebDataset shards (.tar of <key>.jpg + <key>.cls)",
       "WebDataset .tar",
       {".tar"},
       "Uncompressed tar files (`--data 'shards/train-*.tar'`) whose consecutive members sharing a key are one "
       "sample: `000123.jpg` with `000123.cls` holding its class id as text, as webdataset's `ShardWriter` writes "
       "them. The images are read in place from each file's memory map, and let go from it once every 64 MiB read "
       "(they stay in the page cache), so the process's RSS does not grow with the shards read over an epoch; "
       "ustar, GNU and pax tar files. Opening "
       "shards reads their headers, not their images (about 4 KiB per ImageNet-sized image), 8 shards at a time. "
       "Shards "
       "without `.cls` members are images and captions: their text members (`.txt`, `.json`, any extension whose "
       "last suffix is `txt`, `text`, `transcript`, `json` or `jsn`) pass through as columns named by their "
       "extension, in name order, as a CSV list's other columns do (`jpg`, `json`, `txt` give `(images, json, "
       "txt)` in Python), and a sample without a text member that other samples of its shard have is a bad "
       "sample naming it. With `.cls`, text members are not read (ImageNet's shards carry a `.json` of "
       "metadata): `(images, labels)`. Members without an image, such as captions "
       "alone, are skipped and counted; other members are not read. A damaged or truncated shard, an image "
       "without its `.cls` where the shard's other images have one, a sample whose members are apart (members "
       "grouped by extension, `tar -cf x.tar *.jpg *.txt`: write them with `tar --sort=name`), a sample whose "
       "image member is one stoker does not decode (`.avif`, `.heic`, `.jp2`, `.jxl`), or a `.tar.gz` stops "
       "with one line. Image members are those of the image folder's extensions and `.pbm`, `.pnm`, as webdataset's "
       "decoders read them, and `.gif` ([Image files](#image-files))."},
  };
  return kFormats;
}

char cell_separator(std::string_view path) {
  const DataFormat* format = format_of_file(path);
  return format != nullptr && format->separator != 0 ? format->separator : ',';
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
