// The WebDataset shard reader: the tar index (tar_archive.cpp: ustar, GNU long names, pax
// records, base-256 sizes) and the samples it groups (open_web_dataset: keys, .cls text, text members).
#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stoker::fuzz::write_file("shard.tar", data, size);
  stoker::fuzz::expect_clean_outcome([&] { stoker::fuzz::read_samples(*stoker::data::open_web_dataset(path)); });
  return 0;
}
