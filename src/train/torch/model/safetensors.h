// Safetensors export and import (https://github.com/huggingface/safetensors, format v1):
// an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"k": "v", ...}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// padded with spaces to a multiple of 8, then the raw little-endian, C-contiguous tensor bytes;
// offsets are relative to the start of the data and the tensors tile it without holes.
//
// Contract:
//  - save_* writes every named parameter AND buffer of the module (torch state-dict names, e.g.
//    "layer1.0.bn1.running_mean"), CPU copies of them, larger element types first so every
//    tensor is aligned to its element size. The file is written atomically (temp file in the
//    same directory, fsync, rename, fsync of the directory): on any failure the previous file
//    is untouched and a SystemError names the path and strerror ("No space left on device").
//    Metadata always contains "format": "pt" unless the caller sets "format".
//  - load_safetensors is strict: every parameter and buffer of the module must be in the file
//    with the same shape, and the file must hold nothing else, else DataError naming the tensor;
//    the module is changed only when the whole file checks out. Values are converted to the
//    module's dtype and device.
//  - A missing, short, truncated or malformed file is a DataError "PATH is not a safetensors
//    file: REASON"; a file that cannot be opened is a DataError naming the path and strerror.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace stoker::train {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// Writes `tensors` (names must be unique and non-empty; any device, any layout).
void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});

// Writes module.named_parameters(true) followed by module.named_buffers(true).
void save_safetensors(const torch::nn::Module& module, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});

// Every tensor of the file, as CPU tensors, ordered by name.
std::map<std::string, torch::Tensor> read_safetensors(const std::string& path);

// The file's "__metadata__" (empty when it has none).
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// Strict load into an existing module (see the contract above).
void load_safetensors(torch::nn::Module& module, const std::string& path);

}  // namespace stoker::train
