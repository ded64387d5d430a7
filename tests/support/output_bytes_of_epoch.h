// Every output byte of every batch of one epoch of a Loader, in order: what two loaders (or
// two runs) compare to show they made the same samples.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/data/loader.h"

namespace stoker::testing {

// Starts `epoch` on `loader` and reads it to its end.
inline std::vector<uint8_t> output_bytes_of_epoch(data::Loader& loader, int64_t epoch) {
  std::vector<uint8_t> out;
  loader.start_epoch(epoch);
  while (data::Batch batch = loader.next()) {
    const auto* p = static_cast<const uint8_t*>(batch.data());
    out.insert(out.end(), p, p + batch.bytes());
  }
  return out;
}

}  // namespace stoker::testing
