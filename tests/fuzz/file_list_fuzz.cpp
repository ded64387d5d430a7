// The CSV file list (open_file_list: "path,target[,target...]" and other columns, quoting,
// the header line, class ids and regression targets), read as a .csv and as a .tsv (tabs between
// the cells). The listed files do not exist: reading them fails as a Status, which is what a
// missing file gives.
#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const char* name : {"list.csv", "list.tsv"}) {
    const std::string path = stoker::fuzz::write_file(name, data, size);
    stoker::fuzz::expect_clean_outcome([&] {
      stoker::data::is_feature_table(path);
      stoker::fuzz::read_samples(*stoker::data::open_file_list(path));
    });
  }
  return 0;
}
