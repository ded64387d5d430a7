// Source::read_run's default: read() of each sample of the run in turn.
#include <exception>

#include "stoker/data/source.h"

namespace stoker::data {

size_t Source::read_run(std::span<const uint64_t> indices, std::span<SampleData> outs,
                        std::span<Status> statuses) const {
  for (size_t k = 0; k < indices.size(); ++k) {
    try {
      statuses[k] = read(indices[k], &outs[k]);
    } catch (const std::exception&) {  // read again on its own, where the loader names what it throws
      return k;
    }
  }
  return indices.size();
}

}  // namespace stoker::data
