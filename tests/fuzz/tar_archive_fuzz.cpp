// The tar reader alone (tar_archive.cpp: ustar prefix and name, GNU long names, pax records,
// base-256 sizes, the end blocks): the index, then every member's bytes through the map and
// through read_members, which must agree.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "data/source/tar_archive.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stoker::fuzz::write_file("archive.tar", data, size);
  stoker::fuzz::expect_clean_outcome([&] {
    const stoker::data::TarArchive archive(path);
    const auto& members = archive.members();
    std::vector<size_t> which(members.size());
    std::iota(which.begin(), which.end(), size_t{0});
    const std::vector<std::string> read = archive.read_members(which, 64);
    if (read.size() != members.size()) std::abort();
    for (size_t i = 0; i < members.size(); ++i) {
      const auto bytes = archive.bytes(members[i]);
      if (bytes.size() != members[i].size || members[i].offset + members[i].size > size) std::abort();
      const size_t n = std::min<size_t>(bytes.size(), 64);
      if (read[i].size() != n || std::memcmp(read[i].data(), bytes.data(), n) != 0) std::abort();
    }
  });
  return 0;
}
