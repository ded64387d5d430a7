// The layout of a safetensors file (https://github.com/huggingface/safetensors, format v1),
// read and checked without libtorch: an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"k": "v", ...}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}
// then the tensors' bytes, which must tile the rest of the file: no overlap, no hole, nothing
// after the last tensor. Files from outside are untrusted bytes, so the parser is fuzzed
// (tests/fuzz/safetensors_fuzz.cpp); src/train/torch/safetensors.* reads the data into tensors.
//
// Errors: every problem is a DataError "PATH is not a safetensors file: REASON".
// Thread safety: the functions are pure and may run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::train {

// The header's key for the file's string metadata; no tensor may take that name.
inline constexpr const char* kSafetensorsMetadataKey = "__metadata__";

// The reference implementation's limit on the header length.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// An element type stoker reads and writes: its name in the header and its size in bytes.
struct SafetensorsDtype {
  const char* name;
  int64_t size;
};

// F64, I64, F32, I32, F16, BF16, I16, I8, U8, BOOL.
std::span<const SafetensorsDtype> safetensors_dtypes();

// The dtype of that name, or nullptr when stoker cannot load it.
const SafetensorsDtype* safetensors_dtype_named(std::string_view name);

struct SafetensorsEntry {
  std::string name;
  const SafetensorsDtype* dtype = nullptr;  // one of safetensors_dtypes()
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to SafetensorsLayout::data_start
  uint64_t end = 0;
};

struct SafetensorsLayout {
  std::vector<SafetensorsEntry> tensors;  // ordered by name
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // the file offset of the first tensor's bytes: 8 + the header length
};

// The header length that the file's first 8 bytes declare, checked against the file's size.
uint64_t safetensors_header_length(const std::string& path, const uint8_t (&prefix)[8], uint64_t file_size);

// The layout that `header` (the JSON text after the 8-byte length) declares for a file of
// `file_size` bytes, with every entry checked: a known dtype, a shape whose bytes match its
// data_offsets, and tensors that tile the data exactly.
SafetensorsLayout parse_safetensors_header(const std::string& path, std::string_view header, uint64_t file_size);

}  // namespace stoker::train
