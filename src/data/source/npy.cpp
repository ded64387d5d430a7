#include "npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "stoker/core/error.h"

namespace stoker::data {

namespace {

constexpr uint8_t kNpyMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr const char* kNpyConvertHint = "save it with x.astype(np.float32) (features) or np.int64 (class ids)";

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw DataError(fmt::format("{}: {}", name, what));
}

// The value of `key` in the header's dict literal, e.g. 'descr' -> "'<f4'", 'shape' -> "(3, 4)".
std::string header_value(const std::string& header, const std::string& key, const std::string& name) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) at = header.find("\"" + key + "\"");
  if (at == std::string::npos) fail(name, "the .npy header has no '" + key + "'");
  at = header.find(':', at);
  if (at == std::string::npos) fail(name, "the .npy header is malformed at '" + key + "'");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  size_t end = at;
  if (at < header.size() && header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) fail(name, "the .npy header's shape has no ')'");
    return header.substr(at, end + 1 - at);
  }
  if (at < header.size() && header[at] == '[')
    fail(name, std::string("has a structured dtype (record fields); ") + kNpyConvertHint);
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string value = header.substr(at, end - at);
  while (!value.empty() && value.back() == ' ') value.pop_back();
  return value;
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& name) {
  std::vector<int64_t> shape;
  size_t i = 1;  // past '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    int64_t value = 0;
    bool digits = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + (text[i] - '0');
      if (value > (int64_t{1} << 48)) fail(name, "the .npy shape " + text + " is too large");
      digits = true;
      ++i;
    }
    while (i < text.size() && text[i] == 'L') ++i;  // Python 2 longs
    if (!digits) fail(name, "cannot read the .npy shape " + text);
    shape.push_back(value);
  }
  return shape;
}

// bfloat16 is the top half of a float32.
float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// The element of `a`'s dtype at `p` as raw little-endian bits in a uint64, byte-swapped where
// the array is big-endian.
uint64_t bits_at(const NpyArray& a, const uint8_t* p) {
  uint64_t bits = 0;
  for (int b = 0; b < a.itemsize; ++b) {
    const int from = a.big_endian ? a.itemsize - 1 - b : b;
    bits |= static_cast<uint64_t>(p[from]) << (8 * b);
  }
  return bits;
}

// Element `index` (in storage order) of `a.data`, as bits_at reads it.
uint64_t raw_bits(const NpyArray& a, int64_t index) {
  return bits_at(a, a.data.data() + static_cast<size_t>(index) * static_cast<size_t>(a.itemsize));
}

// The element of `a`'s dtype at `p`, as a double.
double value_at(const NpyArray& a, const uint8_t* p) {
  const uint64_t bits = bits_at(a, p);
  const int width = a.itemsize * 8;
  switch (a.kind) {
    case 'B':
      return bfloat16_to_float(static_cast<uint16_t>(bits));
    case 'f':
      if (a.itemsize == 2) return half_to_float(static_cast<uint16_t>(bits));
      if (a.itemsize == 4) return std::bit_cast<float>(static_cast<uint32_t>(bits));
      return std::bit_cast<double>(bits);
    case 'i': {
      if (width == 64) return static_cast<double>(static_cast<int64_t>(bits));
      const uint64_t sign_bit = uint64_t{1} << (width - 1);
      return static_cast<double>(static_cast<int64_t>((bits ^ sign_bit)) - static_cast<int64_t>(sign_bit));
    }
    default:  // 'u', 'b'
      return static_cast<double>(bits);
  }
}

double element(const NpyArray& a, int64_t index) {
  return value_at(a, a.data.data() + static_cast<size_t>(index) * static_cast<size_t>(a.itemsize));
}

// Storage index of C-order element k (the identity unless Fortran-ordered).
class StorageIndex {
 public:
  explicit StorageIndex(const NpyArray& a) : shape_(a.shape), fortran_(a.fortran_order && a.shape.size() > 1) {
    counter_.assign(shape_.size(), 0);
    int64_t stride = 1;
    for (int64_t dim : shape_) {
      strides_.push_back(stride);
      stride *= dim;
    }
  }
  // Call for k = 0, 1, 2, ... in turn.
  int64_t next() {
    if (!fortran_) return linear_++;
    int64_t index = 0;
    for (size_t d = 0; d < shape_.size(); ++d) index += counter_[d] * strides_[d];
    for (size_t d = shape_.size(); d-- > 0;) {  // advance the C-order counter
      if (++counter_[d] < shape_[d]) break;
      counter_[d] = 0;
    }
    return index;
  }

 private:
  std::vector<int64_t> shape_, strides_, counter_;
  bool fortran_;
  int64_t linear_ = 0;
};

}  // namespace

int64_t NpyArray::count() const {
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  return n;
}

int64_t NpyArray::row_size() const {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

std::string NpyArray::dtype_text() const {
  if (kind == 'b') return "bool";
  if (kind == 'B') return fmt::format("{}bfloat16", big_endian ? ">" : "");
  const char* base = kind == 'f' ? "float" : kind == 'i' ? "int" : "uint";
  return fmt::format("{}{}{}", big_endian && itemsize > 1 ? ">" : "", base, itemsize * 8);
}

namespace {

// Parses the header; `*data_at` is where the payload starts.
NpyArray read_npy_header(std::span<const uint8_t> bytes, const std::string& name, size_t* data_at) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kNpyMagic, sizeof(kNpyMagic)) != 0) {
    fail(name, "is not a .npy file (no \\x93NUMPY magic string); save it with np.save");
  }
  const int major = bytes[6];
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, "is truncated in its .npy header");
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) | (static_cast<size_t>(bytes[10]) << 16) |
                 (static_cast<size_t>(bytes[11]) << 24);
    header_at = 12;
  } else {
    fail(name, fmt::format(".npy format version {} is not known (1, 2 and 3 are)", major));
  }
  if (bytes.size() < header_at + header_len) fail(name, "is truncated in its .npy header");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);

  NpyArray a;
  a.name = name;
  std::string descr = header_value(header, "descr", name);
  if (descr.size() < 3 || (descr.front() != '\'' && descr.front() != '"')) {
    fail(name, "has dtype " + descr + ", which stoker cannot read; " + kNpyConvertHint);
  }
  descr = descr.substr(1, descr.size() - 2);
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    fail(name, "has dtype '" + descr + "', which stoker cannot read; " + kNpyConvertHint);
  }
  a.big_endian = order == '>';
  a.kind = descr[1];
  a.itemsize = std::atoi(descr.c_str() + 2);
  const bool known = (a.kind == 'f' && (a.itemsize == 2 || a.itemsize == 4 || a.itemsize == 8)) ||
                     ((a.kind == 'i' || a.kind == 'u') &&
                      (a.itemsize == 1 || a.itemsize == 2 || a.itemsize == 4 || a.itemsize == 8)) ||
                     (a.kind == 'b' && a.itemsize == 1);
  if (!known) {
    fail(name, "has dtype '" + descr +
                   "'; stoker reads bool, int8..int64, uint8..uint64 and float16/32/64: " + kNpyConvertHint);
  }
  const std::string fortran = header_value(header, "fortran_order", name);
  a.fortran_order = fortran == "True";
  a.shape = parse_shape(header_value(header, "shape", name), name);
  // The non-zero dimensions' product must fit in int64 too: a zero dimension empties the
  // payload, but row_size() still multiplies the others.
  int64_t extent = 1;
  for (int64_t dim : a.shape) {
    if (dim != 0 && __builtin_mul_overflow(extent, dim, &extent)) {
      fail(name, fmt::format("has shape ({}), more elements than a 64-bit count holds", fmt::join(a.shape, ", ")));
    }
  }

  *data_at = header_at + header_len;
  return a;
}

}  // namespace

NpyArray parse_npy_header(std::span<const uint8_t> prefix, const std::string& name) {
  size_t data_at = 0;
  return read_npy_header(prefix, name, &data_at);
}

NpyArray parse_npy(std::span<const uint8_t> bytes, const std::string& name) {
  size_t data_at = 0;
  NpyArray a = read_npy_header(bytes, name, &data_at);
  uint64_t payload = static_cast<uint64_t>(a.itemsize);
  bool overflow = false;
  for (int64_t dim : a.shape)
    overflow = overflow || __builtin_mul_overflow(payload, static_cast<uint64_t>(dim), &payload);
  if (overflow || bytes.size() - data_at < payload) {
    fail(name, fmt::format("is truncated: its shape ({}) of {} needs {} bytes, the file has {}",
                           fmt::join(a.shape, ", "), a.dtype_text(), payload, bytes.size() - data_at));
  }
  a.data = bytes.subspan(data_at, payload);
  return a;
}

std::vector<float> npy_to_float(const NpyArray& a) {
  std::vector<float> out(static_cast<size_t>(a.count()));
  StorageIndex storage(a);
  if (a.kind == 'f' && a.itemsize == 4 && !a.big_endian && !a.fortran_order) {
    if (!out.empty()) std::memcpy(out.data(), a.data.data(), out.size() * sizeof(float));  // 0 rows: no data()
    return out;
  }
  for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<float>(element(a, storage.next()));
  return out;
}

bool npy_is_native_float32(const NpyArray& a) {
  return a.kind == 'f' && a.itemsize == 4 && !a.big_endian && std::endian::native == std::endian::little;
}

namespace {

// `n` elements of type T starting at `from` (unaligned), as float32.
template <typename T>
void cast_row(const uint8_t* from, size_t n, float* out) {
  for (size_t j = 0; j < n; ++j) {
    T value;
    std::memcpy(&value, from + j * sizeof(T), sizeof(T));
    out[j] = static_cast<float>(value);
  }
}

}  // namespace

void npy_row_to_float(const NpyArray& a, size_t row, float* out) {
  const auto n = static_cast<size_t>(a.row_size());
  npy_row_bytes_to_float(a, a.data.data() + row * n * static_cast<size_t>(a.itemsize), out);
}

void npy_row_bytes_to_float(const NpyArray& a, const uint8_t* from, float* out) {
  const auto n = static_cast<size_t>(a.row_size());
  const bool native = (!a.big_endian || a.itemsize == 1) && std::endian::native == std::endian::little;
  if (native && a.kind == 'f') {  // the common cases, without element()'s per-value decoding
    if (a.itemsize == 4) {
      std::memcpy(out, from, n * sizeof(float));
      return;
    }
    if (a.itemsize == 8) return cast_row<double>(from, n, out);
    for (size_t j = 0; j < n; ++j) {
      uint16_t bits;
      std::memcpy(&bits, from + 2 * j, 2);
      out[j] = half_to_float(bits);
    }
    return;
  }
  if (native && a.kind == 'B') {
    for (size_t j = 0; j < n; ++j) {
      uint16_t bits;
      std::memcpy(&bits, from + 2 * j, 2);
      out[j] = bfloat16_to_float(bits);
    }
    return;
  }
  if (native && a.itemsize == 1)
    return a.kind == 'i' ? cast_row<int8_t>(from, n, out) : cast_row<uint8_t>(from, n, out);
  const auto size = static_cast<size_t>(a.itemsize);
  for (size_t j = 0; j < n; ++j) out[j] = static_cast<float>(value_at(a, from + j * size));
}

std::vector<int64_t> npy_to_int64(const NpyArray& a) {
  std::vector<int64_t> out(static_cast<size_t>(a.count()));
  StorageIndex storage(a);
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t index = storage.next();
    if (a.kind == 'u' && a.itemsize == 8 &&
        raw_bits(a, index) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(a.name, fmt::format("element {} does not fit in int64", k));
    }
    if (a.kind == 'i' && a.itemsize == 8) {
      out[k] = static_cast<int64_t>(raw_bits(a, index));
      continue;
    }
    const double value = element(a, index);
    if ((a.kind == 'f' || a.kind == 'B') && (value != std::floor(value) || !std::isfinite(value))) {
      fail(a.name, fmt::format("element {} is {}, not a whole number", k, value));
    }
    // 2^63 is exact in a double; a whole number outside [-2^63, 2^63) has no int64 (casting it
    // would be undefined).
    if (!(value >= -0x1p63 && value < 0x1p63)) {
      fail(a.name, fmt::format("element {} is {}, which does not fit in int64", k, value));
    }
    out[k] = static_cast<int64_t>(value);
  }
  return out;
}

std::vector<uint8_t> npy_to_uint8(const NpyArray& a) {
  if (!((a.kind == 'u' || a.kind == 'b') && a.itemsize == 1)) {
    fail(a.name, "is " + a.dtype_text() + ", expected uint8 pixels");
  }
  std::vector<uint8_t> out(static_cast<size_t>(a.count()));
  StorageIndex storage(a);
  if (!a.fortran_order) {
    if (!out.empty()) std::memcpy(out.data(), a.data.data(), out.size());  // a 0-row array has no data()
    return out;
  }
  for (size_t k = 0; k < out.size(); ++k) out[k] = a.data[static_cast<size_t>(storage.next())];
  return out;
}

}  // namespace stoker::data
