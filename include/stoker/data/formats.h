// stoker/data/formats.h — the kinds of data stoker reads, declared once. open_source() finds a
// file's kind here by its extension, and every `--data` help text, the refusal of a file of
// another kind and the data reference page (`stoker help data`) read the same list.
//
// Thread safety: the list is immutable; every function may be called from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::data {

enum class FormatKind {
  kImageFolder,  // a directory: root/<class>/<image>
  kIdx,          // a directory holding IDX files (MNIST's format)
  kCsv,          // a file list (path, label) or a numeric feature table, told apart by content;
                 // commas between the cells of a .csv, tabs in a .tsv (DataFormat::separator)
  kNumpy,        // .npz archives and .npy arrays
  kTorch,        // torch.save files
  kHdf5,         // HDF5 files, or "file.h5:group"
  kWebDataset,   // .tar shards of <key>.<ext> members
};

struct DataFormat {
  FormatKind kind;
  std::string_view described;                // a phrase for sentences: "an IDX directory"
  std::string_view brief;                    // a few words for compact help: "IDX dir"
  std::vector<std::string_view> extensions;  // of a file of this kind; none for directories
  // What a dataset of this kind holds and how stoker reads it, for the data reference page
  // (docs/reference/data.md): Markdown, one paragraph, links relative to docs/reference/.
  std::string_view doc;
  // The character between the cells of a row, for a kind read as lines of text (',' for .csv,
  // '\t' for .tsv); 0 for the others.
  char separator = 0;
};

// Every format, in the order help texts list them; .csv and .tsv files are both of kind kCsv.
std::span<const DataFormat> data_formats();

// The kind a file's extension names (".npz", ".PT" is not one), or nullptr.
const DataFormat* format_of_file(std::string_view path);

// The character between the cells of a row of `path`, a file list or feature table: its
// format's separator ('\t' for a .tsv), else ',' (the CSV rules for any other name).
char cell_separator(std::string_view path);

// "an image folder (one subfolder per class), an IDX directory, ... or WebDataset shards (...)".
std::string data_formats_text();

// "image folder (root/<class>/<img>), IDX dir, CSV list or table, .npz/.npy, ...".
std::string data_formats_brief();

}  // namespace stoker::data
