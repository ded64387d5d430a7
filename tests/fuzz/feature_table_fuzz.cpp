// The numeric CSV table (open_feature_table: header names, the target column, numbers), read as
// a .csv and as a .tsv (tabs between the cells).
#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const char* name : {"table.csv", "table.tsv"}) {
    const std::string path = stoker::fuzz::write_file(name, data, size);
    stoker::fuzz::expect_clean_outcome([&] { stoker::fuzz::read_samples(*stoker::data::open_feature_table(path)); });
  }
  return 0;
}
