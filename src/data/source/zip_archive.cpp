#include "zip_archive.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "stoker/core/error.h"

namespace stoker::data {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectorySize = 22;
constexpr uint32_t kMax32 = 0xFFFFFFFFu;

// Little-endian reads, bounds-checked against the archive.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  uint64_t le(uint64_t at, int width) const {
    if (at > bytes_.size() || bytes_.size() - at < static_cast<uint64_t>(width)) damaged("a record runs past the end");
    uint64_t value = 0;
    for (int b = 0; b < width; ++b) value |= static_cast<uint64_t>(bytes_[at + static_cast<uint64_t>(b)]) << (8 * b);
    return value;
  }
  uint16_t u16(uint64_t at) const { return static_cast<uint16_t>(le(at, 2)); }
  uint32_t u32(uint64_t at) const { return static_cast<uint32_t>(le(at, 4)); }
  uint64_t u64(uint64_t at) const { return le(at, 8); }
  std::span<const uint8_t> span(uint64_t at, uint64_t size) const {
    if (at > bytes_.size() || bytes_.size() - at < size) damaged("a member runs past the end (truncated file?)");
    return bytes_.subspan(at, size);
  }
  [[noreturn]] void damaged(const std::string& what) const {
    throw DataError(fmt::format("{} is a damaged ZIP/.npz archive: {}", path_, what));
  }
  size_t size() const { return bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& path_;
};

// Fills the fields the 32-bit header marked 0xFFFFFFFF from a ZIP64 extra field (id 1).
void apply_zip64(const Reader& r, uint64_t extra_at, uint64_t extra_len, ZipArchive::Member* m) {
  const uint64_t end = extra_at + extra_len;
  for (uint64_t at = extra_at; at + 4 <= end;) {
    const uint16_t id = r.u16(at);
    const uint16_t len = r.u16(at + 2);
    if (id == 1) {
      uint64_t field = at + 4;
      for (uint64_t* value : {&m->size, &m->compressed_size, &m->local_header_offset}) {
        if (*value != kMax32) continue;
        if (field + 8 > at + 4 + len) r.damaged("ZIP64 extra field too short for " + m->name);
        *value = r.u64(field);
        field += 8;
      }
      return;
    }
    at += 4 + static_cast<uint64_t>(len);
  }
}

}  // namespace

ZipArchive::ZipArchive(const std::string& path) : map_(std::make_shared<const MappedFile>(path)) {
  const Reader r(map_->bytes(), map_->path());
  if (r.size() < kEndOfDirectorySize) r.damaged("too short to be a ZIP archive (np.savez writes one)");
  // The end-of-directory record sits at the end, before a comment of up to 64 KiB.
  uint64_t eocd = 0;
  bool found = false;
  const uint64_t lowest = r.size() > kEndOfDirectorySize + 0xFFFF ? r.size() - kEndOfDirectorySize - 0xFFFF : 0;
  for (uint64_t at = r.size() - kEndOfDirectorySize + 1; at-- > lowest;) {
    if (r.u32(at) == kEndOfDirectory) {
      eocd = at;
      found = true;
      break;
    }
  }
  if (!found) r.damaged("no end-of-directory record (not a ZIP file, or truncated)");
  uint64_t entries = r.u16(eocd + 10);
  uint64_t directory = r.u32(eocd + 16);
  if (eocd >= 20 && r.u32(eocd - 20) == kZip64Locator) {
    const uint64_t record = r.u64(eocd - 20 + 8);
    if (r.u32(record) != kZip64EndOfDirectory) r.damaged("bad ZIP64 end-of-directory record");
    entries = r.u64(record + 32);
    directory = r.u64(record + 48);
  }
  uint64_t at = directory;
  for (uint64_t e = 0; e < entries; ++e) {
    if (r.u32(at) != kDirectoryEntry) r.damaged("bad central directory entry");
    Member m;
    m.method = r.u16(at + 10);
    m.crc32 = r.u32(at + 16);
    m.compressed_size = r.u32(at + 20);
    m.size = r.u32(at + 24);
    const uint16_t name_len = r.u16(at + 28);
    const uint16_t extra_len = r.u16(at + 30);
    const uint16_t comment_len = r.u16(at + 32);
    m.local_header_offset = r.u32(at + 42);
    const std::span<const uint8_t> name = r.span(at + 46, name_len);
    m.name.assign(name.begin(), name.end());
    apply_zip64(r, at + 46 + name_len, extra_len, &m);
    members_.push_back(std::move(m));
    at += 46 + static_cast<uint64_t>(name_len) + extra_len + comment_len;
  }
}

const ZipArchive::Member* ZipArchive::find(const std::string& name) const {
  const auto found = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.name == name; });
  return found == members_.end() ? nullptr : &*found;
}

std::span<const uint8_t> ZipArchive::packed(const Member& m) const {
  const Reader r(map_->bytes(), map_->path());
  if (r.u32(m.local_header_offset) != kLocalHeader) r.damaged("bad local header of " + m.name);
  const uint64_t data_at =
      m.local_header_offset + 30 + r.u16(m.local_header_offset + 26) + r.u16(m.local_header_offset + 28);
  return r.span(data_at, m.compressed_size);
}

void ZipArchive::check_crc(const Member& m, std::span<const uint8_t> bytes, bool in_map) const {
  uLong crc = crc32(0L, Z_NULL, 0);
  // 16 MiB at a time: a stored member's pages are noted as they are read (MappedFile::note_read),
  // so checking a member larger than RAM does not map all of it at once.
  for (uint64_t done = 0; done < bytes.size();) {
    const uInt n = static_cast<uInt>(std::min<uint64_t>(bytes.size() - done, uint64_t{1} << 24));
    if (in_map) map_->note_read(bytes.subspan(done, n));
    crc = crc32(crc, bytes.data() + done, n);
    done += n;
  }
  if (static_cast<uint32_t>(crc) != m.crc32)
    Reader(map_->bytes(), map_->path()).damaged("member " + m.name + " fails its CRC-32 check");
}

std::span<const uint8_t> ZipArchive::stored(const Member& m) const {
  if (m.method != 0) throw DataError(fmt::format("{}: member {} is compressed, not stored", map_->path(), m.name));
  const std::span<const uint8_t> bytes = packed(m);
  if (m.compressed_size != m.size)
    Reader(map_->bytes(), map_->path()).damaged("stored member " + m.name + " has two sizes");
  check_crc(m, bytes, true);
  return bytes;
}

constexpr uint64_t kMaxDeflateRatio = 1032;

std::vector<uint8_t> ZipArchive::extract(const Member& m) const {
  if (m.method == 0) {
    const std::span<const uint8_t> bytes = stored(m);
    return {bytes.begin(), bytes.end()};
  }
  const Reader r(map_->bytes(), map_->path());
  const std::span<const uint8_t> packed_bytes = packed(m);
  std::vector<uint8_t> out;
  if (m.method == 8) {
    // Deflate expands at most 1032:1 (a 258-byte match in about 2 bits): a larger size than
    // that is a damaged header, refused before it is allocated.
    if (m.size / kMaxDeflateRatio > packed_bytes.size()) {
      r.damaged(fmt::format("member {} says it inflates to {} bytes, more than its {} compressed bytes can", m.name,
                            m.size, packed_bytes.size()));
    }
    out.resize(m.size);
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw DataError("zlib inflateInit2 failed");
    // Inflated in chunks of at most 1 GiB: zlib counts in 32-bit unsigned.
    constexpr uint64_t kChunk = uint64_t{1} << 30;
    uint64_t in_done = 0, out_done = 0;
    int status = Z_OK;
    while (status == Z_OK) {
      z.next_in = const_cast<Bytef*>(packed_bytes.data() + in_done);
      z.avail_in = static_cast<uInt>(std::min(kChunk, packed_bytes.size() - in_done));
      z.next_out = out.data() + out_done;
      z.avail_out = static_cast<uInt>(std::min(kChunk, out.size() - out_done));
      const uInt in_before = z.avail_in, out_before = z.avail_out;
      status = inflate(&z, Z_NO_FLUSH);
      in_done += in_before - z.avail_in;
      out_done += out_before - z.avail_out;
      if (status == Z_OK && in_before == z.avail_in && out_before == z.avail_out) status = Z_BUF_ERROR;
    }
    inflateEnd(&z);
    if (status != Z_STREAM_END || out_done != m.size) r.damaged("member " + m.name + " does not inflate to its size");
  } else {
    throw DataError(
        fmt::format("{}: member {} uses ZIP compression method {}; stoker reads stored (0) and "
                    "deflated (8) members, as np.savez and np.savez_compressed write",
                    map_->path(), m.name, m.method));
  }
  check_crc(m, out, false);
  return out;
}

std::vector<uint8_t> ZipArchive::extract_prefix(const Member& m, size_t max_bytes) const {
  if (m.size <= max_bytes) return extract(m);
  const size_t want = static_cast<size_t>(max_bytes);
  const std::span<const uint8_t> packed_bytes = packed(m);
  if (m.method == 0) {
    if (packed_bytes.size() < want) Reader(map_->bytes(), map_->path()).damaged("member " + m.name + " is truncated");
    return {packed_bytes.begin(), packed_bytes.begin() + static_cast<std::ptrdiff_t>(want)};
  }
  if (m.method != 8) return extract(m);  // refuses the method
  std::vector<uint8_t> out(want);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw DataError("zlib inflateInit2 failed");
  // A header's worth of output needs far less than 4 GiB of input.
  z.next_in = const_cast<Bytef*>(packed_bytes.data());
  z.avail_in = static_cast<uInt>(std::min<uint64_t>(packed_bytes.size(), uint64_t{1} << 31));
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(want);
  int status = Z_OK;
  while (status == Z_OK && z.avail_out > 0) {
    const uInt in_before = z.avail_in, out_before = z.avail_out;
    status = inflate(&z, Z_NO_FLUSH);
    if (status == Z_OK && in_before == z.avail_in && out_before == z.avail_out) status = Z_BUF_ERROR;
  }
  const size_t got = want - z.avail_out;
  inflateEnd(&z);
  if (got != want) Reader(map_->bytes(), map_->path()).damaged("member " + m.name + " does not inflate to its size");
  return out;
}

}  // namespace stoker::data
