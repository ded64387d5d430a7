// HDF5's deflate, shuffle and fletcher32 undone on one chunk (chunk_filters.h), as the library's
// own H5Zdeflate.c, H5Zshuffle.c and H5Zfletcher32.c undo them on read.
#include "chunk_filters.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <optional>

namespace stoker::data {

namespace {

// HDF5's Fletcher-32 (H5_checksum_fletcher32): over big-endian 16-bit words, an odd last byte
// as the high byte of a word, both sums folded to 16 bits every 360 words.
uint32_t fletcher32(std::span<const uint8_t> data) {
  uint32_t sum1 = 0, sum2 = 0;
  size_t words = data.size() / 2;
  const uint8_t* p = data.data();
  while (words > 0) {
    size_t run = words > 360 ? 360 : words;
    words -= run;
    do {
      sum1 += (static_cast<uint32_t>(p[0]) << 8) | p[1];
      p += 2;
      sum2 += sum1;
    } while (--run > 0);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (data.size() % 2 != 0) {
    sum1 += static_cast<uint32_t>(*p) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

// Checks the 4 checksum bytes (little-endian) that end `bytes` and drops them. HDF5 also takes the
// checksum with the bytes of each 16-bit half swapped, which files of libraries before 1.6.3 hold.
Status unfletcher(std::vector<uint8_t>* bytes) {
  if (bytes->size() < 4) return Status::failure("fletcher32: fewer than its 4 checksum bytes");
  const size_t n = bytes->size() - 4;
  const uint8_t* end = bytes->data() + n;
  const uint32_t stored = end[0] | (end[1] << 8) | (end[2] << 16) | (static_cast<uint32_t>(end[3]) << 24);
  const uint32_t sum = fletcher32({bytes->data(), n});
  const uint32_t swapped = ((sum & 0x00ff00ffu) << 8) | ((sum >> 8) & 0x00ff00ffu);
  if (stored != sum && stored != swapped) return Status::failure("fletcher32 checksum mismatch");
  bytes->resize(n);
  return Status::ok_status();
}

// The inverse of HDF5's shuffle: byte k of every element was stored in the k-th run of
// elements-count bytes; a tail shorter than one element was stored as it was.
void unshuffle(size_t element_size, const std::vector<uint8_t>& in, std::vector<uint8_t>* out) {
  out->resize(in.size());
  const size_t elements = element_size > 0 ? in.size() / element_size : 0;
  if (element_size <= 1 || elements <= 1) {
    if (!in.empty()) std::memcpy(out->data(), in.data(), in.size());  // an empty vector's data() may be null
    return;
  }
  for (size_t k = 0; k < element_size; ++k) {
    const uint8_t* from = in.data() + k * elements;
    uint8_t* to = out->data() + k;
    for (size_t e = 0; e < elements; ++e) to[e * element_size] = from[e];
  }
  const size_t tail = in.size() - elements * element_size;
  if (tail > 0) std::memcpy(out->data() + elements * element_size, in.data() + elements * element_size, tail);
}

// Inflates the zlib stream `in` into exactly `size` bytes of `out`.
Status inflate_exactly(const std::vector<uint8_t>& in, size_t size, std::vector<uint8_t>* out) {
  out->resize(size + 1);  // one byte more: a stream that inflates to more shows as such
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return Status::failure("deflate: zlib could not start");
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out->data();
  z.avail_out = static_cast<uInt>(out->size());
  int status = Z_OK;
  while (status == Z_OK) status = inflate(&z, Z_NO_FLUSH);
  const size_t produced = z.total_out;
  const std::string message = z.msg != nullptr ? z.msg : "";
  inflateEnd(&z);
  if (status == Z_STREAM_END && produced == size) {
    out->resize(size);
    return Status::ok_status();
  }
  if (status == Z_STREAM_END || (status == Z_BUF_ERROR && z.avail_out == 0)) {
    return Status::failure(
        fmt::format("deflate: inflates to {}{} bytes, not {}", status == Z_STREAM_END ? "" : "over ", produced, size));
  }
  if (status == Z_BUF_ERROR) return Status::failure("deflate: the compressed bytes end before their stream does");
  return Status::failure("deflate: " + (message.empty() ? std::string("invalid compressed bytes") : message));
}

}  // namespace

Status unfilter_chunk(std::span<const ChunkFilterStep> pipeline, unsigned filter_mask, std::span<const uint8_t> stored,
                      size_t chunk_bytes, std::vector<uint8_t>* out, std::vector<uint8_t>* scratch) {
  const auto applied = [&](size_t i) { return i >= 32 || (filter_mask & (1u << i)) == 0; };
  // The size of the bytes before each step was applied: known from chunk_bytes up to the first
  // applied deflate (the only step whose output size the bytes alone decide).
  std::vector<std::optional<size_t>> size_before(pipeline.size() + 1);
  size_before[0] = chunk_bytes;
  for (size_t i = 0; i < pipeline.size(); ++i) {
    const auto& before = size_before[i];
    if (!applied(i) || pipeline[i].filter == ChunkFilter::kShuffle) {
      size_before[i + 1] = before;
    } else if (pipeline[i].filter == ChunkFilter::kFletcher32 && before) {
      size_before[i + 1] = *before + 4;
    }
  }
  out->assign(stored.begin(), stored.end());
  for (size_t i = pipeline.size(); i-- > 0;) {
    if (!applied(i)) continue;
    const ChunkFilterStep& step = pipeline[i];
    switch (step.filter) {
      case ChunkFilter::kDeflate: {
        if (!size_before[i]) return Status::failure("deflate applied twice: not undone here");
        std::swap(*out, *scratch);
        if (Status status = inflate_exactly(*scratch, *size_before[i], out); !status.ok()) return status;
        break;
      }
      case ChunkFilter::kShuffle:
        std::swap(*out, *scratch);
        unshuffle(step.element_size, *scratch, out);
        break;
      case ChunkFilter::kFletcher32:
        if (Status status = unfletcher(out); !status.ok()) return status;
        break;
    }
  }
  if (out->size() != chunk_bytes) {
    return Status::failure(fmt::format("{} bytes where the chunk holds {}", out->size(), chunk_bytes));
  }
  return Status::ok_status();
}

}  // namespace stoker::data
