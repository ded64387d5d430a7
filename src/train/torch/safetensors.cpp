#include "safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <tuple>

#include "stoker/core/error.h"
#include "stoker/core/user_files.h"

namespace stoker::train {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this writer copies tensor memory as it is");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr const char* kMetadataKey = "__metadata__";

struct DtypeInfo {
  torch::ScalarType type;
  const char* name;
  int64_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {torch::kFloat64, "F64", 8}, {torch::kInt64, "I64", 8},     {torch::kFloat32, "F32", 4}, {torch::kInt32, "I32", 4},
    {torch::kFloat16, "F16", 2}, {torch::kBFloat16, "BF16", 2}, {torch::kInt16, "I16", 2},   {torch::kInt8, "I8", 1},
    {torch::kUInt8, "U8", 1},    {torch::kBool, "BOOL", 1},
};

const DtypeInfo* dtype_of(torch::ScalarType type) {
  for (const auto& d : kDtypes) {
    if (d.type == type) return &d;
  }
  return nullptr;
}

const DtypeInfo* dtype_named(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string errno_text(int err) { return std::generic_category().message(err); }

std::string shape_text(c10::IntArrayRef shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// A file descriptor closed on scope exit (errors of an explicit close() are checked by the caller).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// 0 or the errno of the failed write.
int write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// 0, or the errno of the failed read; a read past the end of the file gives -1.
int read_all(int fd, void* data, size_t size, uint64_t offset) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return -1;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

void fsync_directory_of(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: the rename itself is already done
  ::close(fd);
}

struct TensorEntry {
  std::string name;
  const DtypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct Layout {
  std::vector<TensorEntry> tensors;  // ordered by name
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // file offset of the data buffer
};

[[noreturn]] void not_safetensors(const std::string& path, const std::string& reason) {
  throw DataError(path + " is not a safetensors file: " + reason);
}

TensorEntry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& value) {
  const auto bad = [&](const std::string& what) { not_safetensors(path, "tensor '" + name + "' " + what); };
  if (!value.is_object()) bad("is not described by a JSON object");
  TensorEntry entry;
  entry.name = name;
  const auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string()) bad("has no \"dtype\" string");
  entry.dtype = dtype_named(dtype->get<std::string>());
  if (entry.dtype == nullptr) bad("has dtype " + dtype->dump() + ", which stoker cannot load");
  const auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array()) bad("has no \"shape\" array");
  uint64_t numel = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned()) bad("has a shape entry that is not a non-negative integer: " + dim.dump());
    const uint64_t d = dim.get<uint64_t>();
    if (d > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, d, &numel)) bad("has a huge shape");
    entry.shape.push_back(static_cast<int64_t>(d));
  }
  const auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    bad("has no \"data_offsets\" pair of non-negative integers");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  uint64_t bytes = 0;
  if (entry.end < entry.begin)
    bad(fmt::format("has data_offsets [{}, {}] that end before they begin", entry.begin, entry.end));
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(entry.dtype->size), &bytes) ||
      bytes != entry.end - entry.begin) {
    bad(fmt::format("has {} bytes of data for shape {} of {}", entry.end - entry.begin, shape_text(entry.shape),
                    entry.dtype->name));
  }
  return entry;
}

Layout read_layout(const std::string& path, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw DataError("cannot read safetensors file " + path + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) not_safetensors(path, "it is not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8)
    not_safetensors(path, fmt::format("it has {} bytes, fewer than the 8-byte header length", file_size));
  uint8_t prefix[8];
  if (read_all(fd, prefix, 8, 0) != 0) not_safetensors(path, "cannot read the header length");
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | prefix[i];
  if (header_size > kMaxHeaderBytes) not_safetensors(path, fmt::format("header length {} is implausible", header_size));
  if (header_size > file_size - 8) {
    not_safetensors(path, fmt::format("header length {} exceeds the {} bytes after it", header_size, file_size - 8));
  }
  std::string header(header_size, '\0');
  if (read_all(fd, header.data(), header.size(), 8) != 0) not_safetensors(path, "cannot read the header");
  const nlohmann::json json = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) not_safetensors(path, "the header is not valid JSON");
  if (!json.is_object()) not_safetensors(path, "the header is not a JSON object");

  Layout layout;
  layout.data_start = 8 + header_size;
  for (const auto& [key, value] : json.items()) {
    if (key == kMetadataKey) {
      if (!value.is_object()) not_safetensors(path, "__metadata__ is not a JSON object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) not_safetensors(path, "__metadata__ value of '" + k + "' is not a string");
        layout.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    layout.tensors.push_back(parse_entry(path, key, value));  // json objects iterate by key
  }
  // The tensors must tile the data buffer: no overlap, no hole, nothing missing at the end.
  std::vector<const TensorEntry*> by_offset;
  for (const auto& t : layout.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t expected = 0;
  for (const TensorEntry* t : by_offset) {
    if (t->begin != expected) {
      not_safetensors(path, fmt::format("tensor '{}' starts at data byte {}, expected {} (overlap or hole)", t->name,
                                        t->begin, expected));
    }
    expected = t->end;
  }
  const uint64_t data_size = file_size - layout.data_start;
  if (expected > data_size) {
    not_safetensors(
        path, fmt::format("it is truncated: the tensors need {} bytes of data, the file has {}", expected, data_size));
  }
  if (expected < data_size) {
    not_safetensors(path, fmt::format("{} bytes follow the last tensor", data_size - expected));
  }
  return layout;
}

Fd open_for_reading(const std::string& path) {
  check_input_file(path, "safetensors file");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw DataError("cannot open safetensors file " + path + ": " + errno_text(errno));
  return fd;
}

torch::Tensor read_tensor(const std::string& path, int fd, const Layout& layout, const TensorEntry& entry) {
  torch::Tensor t = torch::empty(entry.shape, torch::TensorOptions().dtype(entry.dtype->type));
  const int err = read_all(fd, t.data_ptr(), entry.end - entry.begin, layout.data_start + entry.begin);
  if (err > 0) throw DataError("cannot read tensor '" + entry.name + "' from " + path + ": " + errno_text(err));
  if (err < 0) not_safetensors(path, "it ended while reading tensor '" + entry.name + "'");
  return t;
}

std::string name_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::string text;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > kShown) text += fmt::format(" and {} more", names.size() - kShown);
  return text;
}

NamedTensors state_of(const torch::nn::Module& module) {
  NamedTensors tensors;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) tensors.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) tensors.emplace_back(item.key(), item.value());
  return tensors;
}

}  // namespace

void save_safetensors(const NamedTensors& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  struct Item {
    std::string name;
    const DtypeInfo* dtype;
    torch::Tensor data;  // CPU, contiguous
  };
  std::vector<Item> items;
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) continue;  // an unset optional buffer, as torch's state_dict skips it
    if (name.empty() || name == kMetadataKey || !seen.insert(name).second) {
      throw UsageError("cannot write safetensors file " + path + ": tensor name '" + name +
                       "' is empty, reserved or repeated");
    }
    const DtypeInfo* dtype = dtype_of(tensor.scalar_type());
    if (dtype == nullptr) {
      throw UsageError(fmt::format("cannot write safetensors file {}: tensor '{}' has dtype {}, which it cannot hold",
                                   path, name, c10::toString(tensor.scalar_type())));
    }
    torch::Tensor cpu = tensor.detach();
    if (cpu.layout() != torch::kStrided) cpu = cpu.to_dense();
    items.push_back({name, dtype, cpu.to(torch::kCPU).contiguous()});
  }
  // Larger elements first, then by name: every tensor starts aligned to its element size
  // (the data begins at a multiple of 8), as the reference writer lays files out.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::make_pair(-a.dtype->size, a.name) < std::make_pair(-b.dtype->size, b.name);
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  if (metadata.find("format") == metadata.end()) meta["format"] = "pt";
  for (const auto& [k, v] : metadata) meta[k] = v;
  header[kMetadataKey] = meta;
  uint64_t offset = 0;
  for (const auto& item : items) {
    const auto bytes = static_cast<uint64_t>(item.data.numel() * item.dtype->size);
    header[item.name] = {
        {"dtype", item.dtype->name}, {"shape", item.data.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("cannot write safetensors file " + path + ": a name or metadata value is not UTF-8 (" + e.what() +
                     ")");
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  uint8_t prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<uint8_t>(static_cast<uint64_t>(header_text.size()) >> (8 * i));

  static std::atomic<uint64_t> counter{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);
  const auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("writing safetensors file {} failed: {} ({}); any previous file is unchanged", path,
                                  what, errno_text(err)));
  };
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (fd.get() < 0) {
    const int err = errno;
    throw SystemError(
        fmt::format("cannot write safetensors file {}: cannot create {} ({})", path, tmp, errno_text(err)));
  }
  int err = write_all(fd.get(), prefix, sizeof prefix);
  if (err == 0) err = write_all(fd.get(), header_text.data(), header_text.size());
  for (size_t i = 0; err == 0 && i < items.size(); ++i) {
    err = write_all(fd.get(), items[i].data.data_ptr(), static_cast<size_t>(items[i].data.nbytes()));
  }
  if (err != 0) fail("write", err);
  if (::fsync(fd.get()) != 0) fail("fsync", errno);
  if (::close(fd.release()) != 0) fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename of " + tmp, errno);
  fsync_directory_of(path);
}

void save_safetensors(const torch::nn::Module& module, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  save_safetensors(state_of(module), path, metadata);
}

std::map<std::string, torch::Tensor> read_safetensors(const std::string& path) {
  const Fd fd = open_for_reading(path);
  const Layout layout = read_layout(path, fd.get());
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& entry : layout.tensors) tensors[entry.name] = read_tensor(path, fd.get(), layout, entry);
  return tensors;
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  const Fd fd = open_for_reading(path);
  return read_layout(path, fd.get()).metadata;
}

void load_safetensors(torch::nn::Module& module, const std::string& path) {
  const Fd fd = open_for_reading(path);
  const Layout layout = read_layout(path, fd.get());
  std::map<std::string, const TensorEntry*> in_file;
  for (const auto& entry : layout.tensors) in_file[entry.name] = &entry;

  NamedTensors targets;
  for (auto& [name, tensor] : state_of(module)) {
    if (tensor.defined()) targets.emplace_back(name, tensor);
  }
  std::vector<std::string> missing, unexpected;
  std::set<std::string> in_model;
  for (const auto& [name, tensor] : targets) {
    in_model.insert(name);
    if (in_file.count(name) == 0) missing.push_back(name);
  }
  for (const auto& entry : layout.tensors) {
    if (in_model.count(entry.name) == 0) unexpected.push_back(entry.name);
  }
  if (!missing.empty() || !unexpected.empty()) {
    std::string text = "safetensors file " + path + " does not fit the model:";
    if (!missing.empty()) text += " missing " + name_list(missing) + (unexpected.empty() ? "" : ";");
    if (!unexpected.empty()) text += " unexpected " + name_list(unexpected);
    throw DataError(text + " (was it written for another model?)");
  }
  for (const auto& [name, tensor] : targets) {
    const TensorEntry& entry = *in_file.at(name);
    if (!tensor.sizes().equals(entry.shape)) {
      throw DataError(fmt::format("tensor '{}' in {} has shape {}, the model's has shape {}", name, path,
                                  shape_text(entry.shape), shape_text(tensor.sizes())));
    }
  }
  // Read everything before changing the module, so a file that fails mid-way leaves it as it was.
  std::vector<torch::Tensor> values;
  values.reserve(targets.size());
  for (const auto& [name, tensor] : targets) values.push_back(read_tensor(path, fd.get(), layout, *in_file.at(name)));
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < targets.size(); ++i) targets[i].second.copy_(values[i]);
}

}  // namespace stoker::train
