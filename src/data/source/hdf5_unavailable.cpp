// open_hdf5 for a stoker built without the HDF5 C library (CMake did not find libhdf5-dev):
// .h5 files are recognised and refused with a way forward.
#include <filesystem>

#include "array_source.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

std::unique_ptr<Source> open_hdf5(const std::string& path, Split) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw DataError("dataset file " + path + " does not exist");
  throw DataError(path +
                  ": this stoker was built without HDF5 support; install libhdf5-dev and rebuild, "
                  "or save the arrays with numpy.savez");
}

std::vector<Split> hdf5_splits(const std::string& path) {
  open_hdf5(path, Split::kTrain);  // throws: no HDF5 here
  return {Split::kTrain};
}

}  // namespace stoker::data
