// The arrays of one loader batch (its inputs, class ids, float targets) handed to Python
// through DLPack, without a copy.
//
// Ownership: every array and every DLPack capsule made from it holds a shared reference to
// the data::Batch, so the batch's buffer goes back to the loader's pool when the last tensor
// that views it is gone, also after the Loader itself (loader.h allows a Batch to outlive
// its Loader and to be released on any thread); in a forked child it is left as it is
// (delete_batch, loader_closing.h). The DLPack deleter takes no GIL.
// Thread safety: an array is immutable once made.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/data/loader.h"

namespace stoker::python {

class BatchArray {
 public:
  BatchArray(std::shared_ptr<const data::Batch> batch, const void* data, DLDataType dtype, std::vector<int64_t> shape,
             std::vector<int64_t> strides);

  // A new DLPack capsule named "dltensor" (the protocol's unversioned form, which torch 1.13
  // and 2.x both take). The memory is host memory, complete when next() returned it, so no
  // stream is waited for.
  pybind11::capsule dlpack() const;
  // (kDLCPU, 0).
  pybind11::tuple dlpack_device() const;

  const std::vector<int64_t>& shape() const { return shape_; }

 private:
  std::shared_ptr<const data::Batch> batch_;
  const void* data_;
  DLDataType dtype_;
  std::vector<int64_t> shape_, strides_;
};

// The inputs of `batch` as the framework expects them: images (N, C, H, W), in channels_last
// strides when the loader wrote NHWC; clips (N, K, C, H, W), each frame in channels_last
// strides (memory (N, K, H, W, C)) when the loader wrote NHWC; feature vectors (N, F).
BatchArray inputs_of(const std::shared_ptr<const data::Batch>& batch, bool features);
// Class ids, int64 (N,).
BatchArray labels_of(const std::shared_ptr<const data::Batch>& batch);
// Float targets, float32 (N,) for one value per sample, (N, D) for D.
BatchArray targets_of(const std::shared_ptr<const data::Batch>& batch);

}  // namespace stoker::python
