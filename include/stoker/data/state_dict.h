// stoker/data/state_dict.h — the named tensors of a PyTorch state_dict saved with torch.save
// (.pth/.pt), read without Python or libtorch, for starting a model from saved weights.
//
// The file's object may be the state_dict itself (a dict of tensors, as
// torch.save(model.state_dict(), path) writes it) or a checkpoint dict holding it under
// "model", "state_dict" or "model_state_dict" (torchvision's reference checkpoints, and the
// common spellings). A "module." prefix on every name (a DistributedDataParallel's
// state_dict) is dropped. Entries that are not tensors are skipped.
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::data {

struct StoredTensor {
  std::string name;
  std::vector<int64_t> shape;
  bool integral = false;          // int/uint/bool tensors (BatchNorm's num_batches_tracked)
  std::vector<float> floats;      // the elements in C order, as float32, when !integral
  std::vector<int64_t> integers;  // the elements in C order, when integral
};

// Throws DataError naming the file for one that is not a torch.save zip archive (a file saved
// before PyTorch 1.6 included: the line says how to save it again), that holds no dict of
// tensors, or whose tensors it cannot read.
std::vector<StoredTensor> read_state_dict(const std::string& path);

}  // namespace stoker::data
