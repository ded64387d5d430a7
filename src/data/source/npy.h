// NumPy's .npy format (version 1, 2 and 3): the header and its payload, and conversion of
// the numeric dtypes to what the array source keeps (float32 features and targets, uint8
// pixels, int64 class ids). No Python needed; numpy's own format description is the spec.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stoker::data {

struct NpyArray {
  std::string name;            // for messages: "x.npy", "data.npz:x"
  std::vector<int64_t> shape;  // () for a scalar
  char kind = 'f';             // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'B' bfloat16 (torch files only)
  int itemsize = 4;            // bytes per element
  bool big_endian = false;
  bool fortran_order = false;
  std::span<const uint8_t> data;  // elements, not owned (the caller keeps the file's bytes)

  int64_t count() const;  // product of the shape
  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  int64_t row_size() const;        // product of shape[1:]
  std::string dtype_text() const;  // "float32", "int64", "uint8", "bool", ">f8" ...
  bool integral() const { return kind == 'i' || kind == 'u' || kind == 'b'; }
};

// Parses `bytes` as one .npy file. Throws DataError naming `name` for a bad magic string, a
// header it cannot read, a dtype other than bool/int/uint/float (complex, strings, objects,
// records: "convert with x.astype(np.float32)"), or a payload shorter than the shape says.
NpyArray parse_npy(std::span<const uint8_t> bytes, const std::string& name);

// The header alone (dtype, order and shape; `data` empty) from the first bytes of a .npy file,
// so that a compressed member's shape is checked before it is inflated. Throws as parse_npy
// does, except about the payload.
NpyArray parse_npy_header(std::span<const uint8_t> prefix, const std::string& name);

// The elements in C order (Fortran-ordered arrays are transposed), converted to float32 /
// to int64 (integral dtypes only; floats must hold whole numbers) / kept as uint8 ('u' 1 or
// 'b' 1 only). Throws DataError naming the array where a value does not fit.
std::vector<float> npy_to_float(const NpyArray& array);
std::vector<int64_t> npy_to_int64(const NpyArray& array);
std::vector<uint8_t> npy_to_uint8(const NpyArray& array);

// True when `array`'s elements are float32 in this machine's byte order, so its rows can be
// used as they lie in the file.
bool npy_is_native_float32(const NpyArray& array);

// Row `row` (row_size() values) of a C-ordered array, converted to float32 into `out`: the
// per-row form of npy_to_float, for arrays read in place from a mapped file.
void npy_row_to_float(const NpyArray& array, size_t row, float* out);
// The same for one row's bytes as stored (row_size() elements of `array`'s dtype at `row`, at
// any address), read from the file rather than through `array.data`.
void npy_row_bytes_to_float(const NpyArray& array, const uint8_t* row, float* out);

}  // namespace stoker::data
