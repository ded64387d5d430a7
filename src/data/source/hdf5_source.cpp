// HDF5 files (.h5, .hdf5) -> an ArraySource (open_hdf5): the datasets named like the arrays of
// an .npz, read with the HDF5 C library (the features in place from the file's map where its
// layout allows) and handed to to_sample_arrays.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <span>

#include "array_naming.h"
#include "array_source.h"
#include "hdf5_chunk_reader.h"
#include "hdf5_filters.h"
#include "hdf5_handle.h"
#include "npy.h"
#include "stoker/core/error.h"
#include "stoker/core/mapped_file.h"
#include "stoker/core/mutex.h"
#include "stoker/core/process.h"

namespace stoker::data {

namespace fs = std::filesystem;

Mutex& hdf5_mutex() {
  static Mutex mutex;
  return mutex;
}

bool ieee_float(hid_t type, size_t size) {
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0 || mpos != 0) return false;
  const size_t bits = size * 8, exponent_bits = size == 2 ? 5 : size == 4 ? 8 : 11;
  return spos == bits - 1 && esize == exponent_bits && epos == bits - 1 - exponent_bits && msize == epos &&
         H5Tget_ebias(type) == (size_t{1} << (exponent_bits - 1)) - 1;
}

namespace {

constexpr const char* kHdf5ConvertHint =
    "convert with x.astype(np.float32) (features) or y.astype(np.int64) (class ids)";

// A dataset described as an NpyArray: read into memory, the elements in native byte order,
// `data` viewing `bytes` (moving an Hdf5Array keeps the vector's buffer, so the view stays
// valid; copying it would not, hence no copies); or in place, `data` viewing `mapping`; or
// row by row through `rows` (a chunked dataset), `data` empty.
struct Hdf5Array {
  Hdf5Array() = default;
  Hdf5Array(Hdf5Array&&) = default;
  Hdf5Array(const Hdf5Array&) = delete;
  Hdf5Array& operator=(const Hdf5Array&) = delete;

  std::vector<uint8_t> bytes;
  std::shared_ptr<const MappedFile> mapping;
  std::shared_ptr<const RowReader> rows;
  NpyArray array;
};

struct Entry {
  std::string name;
  H5I_type_t type = H5I_BADID;  // H5I_DATASET, H5I_GROUP, or other
};

std::string in_group(const std::string& group, const std::string& name) {
  return group.empty() ? name : group + "/" + name;
}

// The links in `group` ("" = the root) of `file`, in name order, with their object types.
// Returns nullopt when `group` is not a group of the file.
std::optional<std::vector<Entry>> entries_of(hid_t file, const std::string& group) {
  if (!group.empty() && H5Lexists(file, group.c_str(), H5P_DEFAULT) <= 0) return std::nullopt;
  const Hid handle(H5Gopen2(file, group.empty() ? "/" : group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!handle.ok()) return std::nullopt;
  std::vector<std::string> names;
  hsize_t index = 0;
  H5Literate(
      handle.get(), H5_INDEX_NAME, H5_ITER_INC, &index,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &names);
  std::vector<Entry> entries;
  for (const std::string& name : names) {
    Entry entry{name};
    if (H5Oexists_by_name(handle.get(), name.c_str(), H5P_DEFAULT) > 0) {
      const Hid object(H5Oopen(handle.get(), name.c_str(), H5P_DEFAULT), H5Oclose);
      if (object.ok()) entry.type = H5Iget_type(object.get());
    }
    entries.push_back(entry);
  }
  return entries;
}

std::string listing(const std::vector<Entry>& entries) {
  if (entries.empty()) return "nothing";
  std::vector<std::string> names;
  for (const Entry& e : entries) names.push_back(e.type == H5I_GROUP ? e.name + " (group)" : e.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

const char* class_text(H5T_class_t c) {
  switch (c) {
    case H5T_TIME:
      return "time";
    case H5T_STRING:
      return "string";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_COMPOUND:
      return "compound (record)";
    case H5T_REFERENCE:
      return "reference";
    case H5T_ENUM:
      return "enum";
    case H5T_VLEN:
      return "variable-length";
    case H5T_ARRAY:
      return "array";
    default:
      return "unknown";
  }
}

// What HDF5's error stack holds for the call that just failed: the innermost entry's text (the
// cause, "truncated file: eof = 4000, ... stored_eof = 8000") and which of the failures a user can
// act on it names.
struct Hdf5Failure {
  std::string cause;
  bool locked = false;          // another process holds the file's lock: its writer has it open
  bool truncated = false;       // shorter than its superblock records
  bool open_for_write = false;  // its superblock is marked open for writing: the writer did not close it
};

Hdf5Failure last_failure() {
  Hdf5Failure failure;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* entry, void* data) -> herr_t {
        auto& f = *static_cast<Hdf5Failure*>(data);
        if (entry->desc != nullptr) f.cause = entry->desc;
        f.locked = f.locked || entry->min_num == H5E_CANTLOCKFILE;
        f.truncated = f.truncated || entry->min_num == H5E_TRUNCATED;
        // HDF5 names this case in its text alone (its minor number is the generic "unable to open").
        f.open_for_write =
            f.open_for_write || (entry->desc != nullptr && std::strstr(entry->desc, "already open for write"));
        return 0;
      },
      &failure);
  return failure;
}

// `dataset`'s elements where they lie in `file_path`, when the file keeps them as plain
// C-ordered values: contiguous layout (h5py's default without chunks or compression), storage
// allocated, in the file itself (not external), of an integer or IEEE float type. The first
// row is read through the library and compared with the mapped bytes, so a layout the library
// sees otherwise (a user block it counts differently) is read the ordinary way instead.
std::optional<Hdf5Array> in_place(hid_t dataset, hid_t type, const NpyArray& described, uint64_t count,
                                  const std::string& file_path) {
  const Hid plist(H5Dget_create_plist(dataset), H5Pclose);
  if (!plist.ok() || H5Pget_layout(plist.get()) != H5D_CONTIGUOUS || H5Pget_external_count(plist.get()) > 0 ||
      count == 0) {
    return std::nullopt;
  }
  const H5T_class_t type_class = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (type_class != H5T_INTEGER && !(type_class == H5T_FLOAT && ieee_float(type, size))) return std::nullopt;
  const H5T_order_t order = H5Tget_order(type);
  if (size > 1 && order != H5T_ORDER_LE && order != H5T_ORDER_BE) return std::nullopt;
  const haddr_t offset = H5Dget_offset(dataset);
  if (offset == HADDR_UNDEF) return std::nullopt;  // not written yet (h5py's shape= without data)

  Hdf5Array out;
  out.array = described;
  out.array.itemsize = static_cast<int>(size);  // float16 stays 2 bytes: converted per row
  out.array.big_endian = size > 1 && order == H5T_ORDER_BE;
  out.mapping = std::make_shared<const MappedFile>(file_path);
  const std::span<const uint8_t> whole = out.mapping->bytes();
  const uint64_t bytes = count * size;
  if (offset > whole.size() || whole.size() - offset < bytes) return std::nullopt;
  out.array.data = whole.subspan(offset, bytes);

  const Hid space(H5Dget_space(dataset), H5Sclose);
  std::vector<hsize_t> start(out.array.shape.size(), 0), first_row(out.array.shape.begin(), out.array.shape.end());
  if (!first_row.empty()) first_row[0] = 1;
  const auto row_bytes = static_cast<size_t>(out.array.row_size()) * size;
  std::vector<uint8_t> row(row_bytes);
  const Hid memory(H5Screate_simple(static_cast<int>(first_row.size()), first_row.data(), nullptr), H5Sclose);
  if (!space.ok() || !memory.ok() || first_row.empty() ||
      H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, first_row.data(), nullptr) < 0 ||
      H5Dread(dataset, type, memory.get(), space.get(), H5P_DEFAULT, row.data()) < 0 ||
      std::memcmp(row.data(), out.array.data.data(), row_bytes) != 0) {
    return std::nullopt;
  }
  return out;
}

// The bytes holding `key` in memory takes at most, from its header alone: its values as read,
// plus the same count as float32 features (`features`) or as int64 class ids. Nothing for a
// contiguous dataset read as features, which is read in place from the file's map, nor for a
// chunked one, read row by row (Hdf5ChunkReader).
double bytes_to_hold(hid_t file, const std::string& key, bool features) {
  const Hid dataset(H5Dopen2(file, key.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok()) return 0;  // read_dataset says what is wrong
  const Hid type(H5Dget_type(dataset.get()), H5Tclose);
  const Hid space(H5Dget_space(dataset.get()), H5Sclose);
  const Hid plist(H5Dget_create_plist(dataset.get()), H5Pclose);
  if (!type.ok() || !space.ok() || !plist.ok()) return 0;
  const H5D_layout_t layout = H5Pget_layout(plist.get());
  if (features && (layout == H5D_CONTIGUOUS || layout == H5D_CHUNKED)) return 0;
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count <= 0) return 0;
  return static_cast<double>(count) * static_cast<double>(H5Tget_size(type.get()) + (features ? 4 : 8));
}

// `from_file`: the features, read from the file where its layout allows (in place when
// contiguous, row by row when chunked) rather than into memory.
Hdf5Array read_dataset(hid_t file, const std::string& path, const std::string& key, bool from_file = false) {
  Hdf5Array out;
  NpyArray& a = out.array;
  a.name = path + ":" + key;
  const Hid dataset(H5Dopen2(file, key.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok()) throw DataError(a.name + " cannot be opened as a dataset (damaged file?)");
  const Hid type(H5Dget_type(dataset.get()), H5Tclose);
  const Hid space(H5Dget_space(dataset.get()), H5Sclose);
  if (!type.ok() || !space.ok()) throw DataError(a.name + ": cannot read its type or shape");

  const H5T_class_t type_class = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  hid_t memory_type = -1;  // a predefined native type: not closed
  if (type_class == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
    a.kind = is_signed ? 'i' : 'u';
    switch (size) {
      case 1:
        memory_type = is_signed ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8;
        break;
      case 2:
        memory_type = is_signed ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16;
        break;
      case 4:
        memory_type = is_signed ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32;
        break;
      case 8:
        memory_type = is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
        break;
      default:
        throw DataError(
            fmt::format("{} holds {}-byte integers; stoker reads 1, 2, 4 and 8-byte "
                        "integers: {}",
                        a.name, size, kHdf5ConvertHint));
    }
    a.itemsize = static_cast<int>(size);
  } else if (type_class == H5T_FLOAT) {
    if (size != 2 && size != 4 && size != 8) {
      throw DataError(
          fmt::format("{} holds {}-byte floats; stoker reads float16, float32 and float64 "
                      "datasets: {}",
                      a.name, size, kHdf5ConvertHint));
    }
    // float16 (numpy's, common for stored embeddings) has no native C type: the library
    // converts it to float32 while reading, exactly (every half is a float).
    memory_type = size == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    a.kind = 'f';
    a.itemsize = size == 8 ? 8 : 4;
  } else if (type_class == H5T_ENUM) {
    throw DataError(
        fmt::format("{} is an enum dataset (h5py stores bool arrays this way); stoker reads integer and "
                    "float datasets: store it with .astype(np.uint8) or .astype(np.int64)",
                    a.name));
  } else if (type_class == H5T_STRING) {
    throw DataError(
        fmt::format("{} holds string values; stoker reads integer and float datasets: convert with "
                    "x.astype(np.float32) (features), or store class names as ids with "
                    "names, y = np.unique(labels, return_inverse=True) and f.create_dataset(\"y\", data=y)",
                    a.name));
  } else if (type_class == H5T_VLEN) {
    throw DataError(
        fmt::format("{} holds variable-length values (encoded images, say); stoker reads integer and float datasets "
                    "of one shape: give a Dataset whose items return each image's bytes to stoker.DataLoader",
                    a.name));
  } else {
    throw DataError(fmt::format("{} holds {} values; stoker reads integer and float datasets: {}", a.name,
                                class_text(type_class), kHdf5ConvertHint));
  }

  const H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
  if (space_class == H5S_NULL) throw DataError(a.name + " is an empty (null) dataset");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw DataError(a.name + ": cannot read its shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  uint64_t count = 1;
  for (hsize_t d : dims) {
    a.shape.push_back(static_cast<int64_t>(d));
    count *= d;
    if (count > (uint64_t{1} << 40)) {
      throw DataError(fmt::format("{} has shape ({}): too large to hold in memory", a.name, fmt::join(a.shape, ", ")));
    }
  }
  const Hid plist(H5Dget_create_plist(dataset.get()), H5Pclose);
  if (!plist.ok()) throw DataError(a.name + ": cannot read how it is stored (damaged file?)");
  const Hdf5Filters filters = read_filters(plist.get(), size);
  if (filters.missing) {
    throw DataError(
        fmt::format("{} is compressed with {}, which this HDF5 library cannot decode; rewrite it with "
                    "compression=\"gzip\" or none",
                    a.name, *filters.missing));
  }
  if (from_file) {
    if (auto placed = in_place(dataset.get(), type.get(), a, count, path)) return std::move(*placed);
    if (auto rows = Hdf5ChunkReader::open(file, path, key, a, filters)) {
      out.array = rows->layout();
      out.rows = std::move(rows);
      return out;
    }
  }
  out.bytes.resize(static_cast<size_t>(count) * static_cast<size_t>(a.itemsize));
  if (count > 0 && H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.bytes.data()) < 0) {
    throw DataError(fmt::format("{}: cannot read its values ({}): a damaged or truncated file; write it again", a.name,
                                last_failure().cause));
  }
  a.big_endian = false;  // H5Dread converted to the native (little-endian) order
  a.data = out.bytes;
  return out;
}

// Opens `path` read-only; throws DataError for a missing file, one that is not HDF5, one its
// writer still holds or left open, and one truncated or damaged.
hid_t open_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError("dataset file " + path + " does not exist");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // failures become our own messages
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw DataError(path +
                    " is not an HDF5 file (no HDF5 signature); write it with h5py, or "
                    "save the arrays with numpy.savez");
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) return file;
  const Hdf5Failure failure = last_failure();
  if (failure.locked) {
    throw DataError(path +
                    " is locked by another process that has it open for writing (HDF5's file lock); wait until that "
                    "program closes it (h5py: File.close(), or the end of its with block), then start again");
  }
  if (failure.open_for_write) {
    throw DataError(fmt::format(
        "{} is marked open for writing: the program that wrote it did not close it (still running, or stopped "
        "before File.close()); let it finish, or, if the file is complete, clear the mark with h5clear -s {} "
        "(Debian's hdf5-tools)",
        path, path));
  }
  if (failure.truncated) {
    throw DataError(fmt::format(
        "{} is truncated ({}): shorter than its HDF5 header records, a copy cut short or a file still being "
        "written; copy or write it again",
        path, failure.cause));
  }
  throw DataError(fmt::format("{} cannot be opened as HDF5 ({}): a damaged file; write it again", path,
                              failure.cause.empty() ? "no reason given" : failure.cause));
}

std::vector<std::string> names_of(const std::vector<Entry>& entries, H5I_type_t type) {
  std::vector<std::string> names;
  for (const Entry& e : entries) {
    if (e.type == type) names.push_back(e.name);
  }
  return names;
}

// Where a split's arrays were looked for in a file: the group named (the root by default),
// what it holds, and the result.
struct Search {
  std::string group;
  std::vector<Entry> entries;
  std::vector<std::string> subgroups;                        // split groups of `group` that exist, e.g. "train"
  std::optional<std::pair<std::string, std::string>> found;  // dataset paths from the root
};

// The datasets of `split` in `group`: named as in an .npz (x_train, y_train, ...), or plain
// x / y inside a split group of `group` (train; val, valid, validation; test). Throws
// DataError when `group` is not a group of the file.
Search search(hid_t file, const std::string& path, const std::string& group, Split split) {
  Search s{group, {}, {}, std::nullopt};
  auto entries = entries_of(file, group);
  if (!entries) {
    if (H5Lexists(file, group.c_str(), H5P_DEFAULT) > 0) {
      throw DataError(
          fmt::format("{} names '{}', which is not a group; name the group that holds the features and "
                      "targets datasets (file.h5:group)",
                      path, group));
    }
    const auto root = entries_of(file, "");
    throw DataError(fmt::format("{} has no group '{}' (the root holds: {}); name a group as file.h5:group/subgroup",
                                path, group, listing(root.value_or(std::vector<Entry>{}))));
  }
  s.entries = std::move(*entries);
  const std::vector<std::string> suffixes = split_suffixes(split);
  const auto prefixed = [](const std::string& where, const std::pair<std::string, std::string>& pair) {
    return std::make_pair(in_group(where, pair.first), in_group(where, pair.second));
  };
  if (const auto pair = array_pair(names_of(s.entries, H5I_DATASET), suffixes)) {
    s.found = prefixed(group, *pair);
    return s;
  }
  const std::vector<std::string> groups = names_of(s.entries, H5I_GROUP);
  for (const std::string& suffix : suffixes) {
    if (suffix.empty() || std::find(groups.begin(), groups.end(), suffix.substr(1)) == groups.end()) continue;
    const std::string sub = in_group(group, suffix.substr(1));
    s.subgroups.push_back(suffix.substr(1));
    const auto inside = entries_of(file, sub);
    if (!inside) continue;
    if (const auto pair = array_pair(names_of(*inside, H5I_DATASET), {""})) {
      s.found = prefixed(sub, *pair);
      return s;
    }
  }
  return s;
}

// "at the root", "in the group emb", plus " and in its group train" for the split groups searched.
std::string searched_where(const Search& s) {
  std::string where = s.group.empty() ? "at the root" : "in the group " + s.group;
  if (!s.subgroups.empty()) {
    where += fmt::format(" and in its group{} {}", s.subgroups.size() > 1 ? "s" : "", fmt::join(s.subgroups, ", "));
  }
  return where;
}

[[noreturn]] void no_arrays(const Search& s, const std::string& path, Split split) {
  const std::vector<std::string> suffixes = split_suffixes(split);
  std::optional<std::string> features;
  for (const std::string& suffix : suffixes) {
    if (!features) features = first_named(names_of(s.entries, H5I_DATASET), kFeatureNames, suffix);
  }
  if (!features) {
    throw DataError(fmt::format(
        "{} has no features dataset (looked for {} {}; found: {}); write them with f.create_dataset(\"x\", data=X), "
        "or name the group that holds them as file.h5:group",
        path, names_looked_for(kFeatureNames, suffixes), searched_where(s), listing(s.entries)));
  }
  throw DataError(
      fmt::format("{} has the features {} but no targets dataset (looked for {} {}; found: {}); write them with "
                  "f.create_dataset(\"y\", data=y)",
                  path, in_group(s.group, *features), names_looked_for(kTargetNames, suffixes), searched_where(s),
                  listing(s.entries)));
}

}  // namespace

std::unique_ptr<Source> open_hdf5(const std::string& path, Split split) {
  const auto [file_path, group] = split_hdf5_path(path);
  // Declared before the lock: a chunk reader takes it when it is destroyed.
  std::optional<Hdf5Array> x, y;
  std::string origin, x_name_of_rows;
  {
    const MutexLock lock(hdf5_mutex());
    const Hid file(open_file(file_path), H5Fclose);
    const Search found = search(file.get(), path, group, split);
    if (!found.found) no_arrays(found, path, split);
    const auto& [x_name, y_name] = *found.found;
    // Arrays that cannot fit are refused before minutes of reading: open_source says so.
    if (bytes_to_hold(file.get(), x_name, true) + bytes_to_hold(file.get(), y_name, false) >
        allocation_ceiling_bytes()) {
      throw std::bad_alloc();
    }
    // The features are read from the file where it allows it; the targets into memory.
    x.emplace(read_dataset(file.get(), file_path, x_name, true));
    y.emplace(read_dataset(file.get(), file_path, y_name));
    origin = fmt::format("arrays {} ({}, {})", file_path, x_name, y_name);
    x_name_of_rows = x_name;
  }
  // Outside the lock: rows read through a chunk reader take it.
  SampleArrays arrays = to_sample_arrays(x->array, y->array, origin, x->mapping, x->rows);
  std::error_code ec;
  const fs::path absolute = fs::absolute(file_path, ec);
  if (!ec) arrays.rows_origin = Source::RowsOrigin{absolute.lexically_normal().string(), x_name_of_rows};
  return make_array_source(std::move(arrays));
}

std::vector<Split> hdf5_splits(const std::string& path) {
  const auto [file_path, group] = split_hdf5_path(path);
  const MutexLock lock(hdf5_mutex());
  const Hid file(open_file(file_path), H5Fclose);
  std::vector<Split> splits;
  for (const SplitDeclaration& d : split_declarations()) {
    if (d.split == Split::kTrain || search(file.get(), path, group, d.split).found) splits.push_back(d.split);
  }
  return splits;
}

}  // namespace stoker::data
