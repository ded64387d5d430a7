// The kinds of data stoker reads: each file kind found by its extension, and what help texts
// and the refusal of another file say.
#include "stoker/data/formats.h"

#include <gtest/gtest.h>

#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

TEST(DataFormatsTest, EachFileKindIsFoundByItsExtension) {
  const std::vector<std::pair<const char*, FormatKind>> files = {
      {"list.csv", FormatKind::kCsv}, {"list.tsv", FormatKind::kCsv}, {"a/x.npz", FormatKind::kNumpy},
      {"x.npy", FormatKind::kNumpy},  {"t.pt", FormatKind::kTorch},   {"t.pth", FormatKind::kTorch},
      {"f.h5", FormatKind::kHdf5},    {"f.hdf5", FormatKind::kHdf5},  {"train-000.tar", FormatKind::kWebDataset}};
  for (const auto& [file, kind] : files) {
    const DataFormat* format = format_of_file(file);
    ASSERT_NE(format, nullptr) << file;
    EXPECT_EQ(format->kind, kind) << file;
  }
  for (const char* other : {"x.bin", "x.tar.gz", "folder", "x.NPZ", "x.csv.bak", "x.tsv.gz"}) {
    EXPECT_EQ(format_of_file(other), nullptr) << other;
  }
}

TEST(DataFormatsTest, TheTextsListEveryKindOnce) {
  EXPECT_EQ(data_formats_text(),
            "an image folder (one subfolder per class), an IDX directory, a CSV file (image list or numeric feature "
            "table), a TSV file (tab-separated image list or feature table), NumPy arrays (.npz, .npy), PyTorch "
            "tensors (.pt, .pth from torch.save), an HDF5 file (.h5, .hdf5; "
            "file.h5:group for a group) or WebDataset shards (.tar of <key>.jpg + <key>.cls)");
  EXPECT_EQ(data_formats_brief(),
            "image folder (root/<class>/<img>), IDX dir, CSV list or table, TSV list or table, .npz/.npy, .pt, .h5, "
            "WebDataset .tar");
}

// The data reference's table of formats (stoker help data --markdown) puts each kind's doc in one
// cell: it must say something, on one line, without a '|' that would end the cell.
TEST(DataFormatsTest, EveryKindHasItsReferenceText) {
  for (const DataFormat& format : data_formats()) {
    EXPECT_GE(format.doc.size(), 40U) << format.described;
    EXPECT_EQ(format.doc.find('\n'), std::string_view::npos) << format.described;
    EXPECT_EQ(format.doc.find('|'), std::string_view::npos) << format.described;
  }
}

TEST(DataFormatsTest, AFileOfAnotherKindIsRefusedWithTheKindsThatAreRead) {
  stoker::testing::TempDir dir;
  dir.write_text("weights.bin", "not data");
  try {
    open_source(dir.str() + "/weights.bin");
    FAIL() << "a .bin file was opened";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), "dataset path " + dir.str() +
                                         "/weights.bin is a file of none of the kinds stoker "
                                         "reads; expected " +
                                         data_formats_text());
  }
}

}  // namespace
}  // namespace stoker::data
