#include "train/torch/model/safetensors.h"

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
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/user_files.h"
#include "train/common/safetensors_layout.h"

namespace stoker::train {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this writer copies tensor memory as it is");

namespace {

// The torch type of each safetensors dtype (train/common/safetensors_layout.h).
struct TorchDtype {
  torch::ScalarType type;
  const char* name;
};

constexpr TorchDtype kTorchDtypes[] = {
    {torch::kFloat64, "F64"}, {torch::kInt64, "I64"},     {torch::kFloat32, "F32"}, {torch::kInt32, "I32"},
    {torch::kFloat16, "F16"}, {torch::kBFloat16, "BF16"}, {torch::kInt16, "I16"},   {torch::kInt8, "I8"},
    {torch::kUInt8, "U8"},    {torch::kBool, "BOOL"},
};

// The safetensors dtype that holds `type`, or nullptr.
const SafetensorsDtype* dtype_of(torch::ScalarType type) {
  for (const auto& d : kTorchDtypes) {
    if (d.type == type) return safetensors_dtype_named(d.name);
  }
  return nullptr;
}

torch::ScalarType scalar_type_of(const SafetensorsDtype& dtype) {
  for (const auto& d : kTorchDtypes) {
    if (std::string_view(d.name) == dtype.name) return d.type;
  }
  throw std::logic_error(std::string("safetensors dtype without a torch type: ") + dtype.name);
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

SafetensorsLayout read_layout(const std::string& path, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw DataError("cannot read safetensors file " + path + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw DataError(path + " is not a safetensors file: it is not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);
  uint8_t prefix[8] = {};
  if (file_size >= 8 && read_all(fd, prefix, 8, 0) != 0) {
    throw DataError(path + " is not a safetensors file: cannot read the header length");
  }
  std::string header(safetensors_header_length(path, prefix, file_size), '\0');
  if (read_all(fd, header.data(), header.size(), 8) != 0) {
    throw DataError(path + " is not a safetensors file: cannot read the header");
  }
  return parse_safetensors_header(path, header, file_size);
}

Fd open_for_reading(const std::string& path) {
  check_input_file(path, "safetensors file");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw DataError("cannot open safetensors file " + path + ": " + errno_text(errno));
  return fd;
}

torch::Tensor read_tensor(const std::string& path, int fd, const SafetensorsLayout& layout,
                          const SafetensorsEntry& entry) {
  torch::Tensor t = torch::empty(entry.shape, torch::TensorOptions().dtype(scalar_type_of(*entry.dtype)));
  const int err = read_all(fd, t.data_ptr(), entry.end - entry.begin, layout.data_start + entry.begin);
  if (err > 0) throw DataError("cannot read tensor '" + entry.name + "' from " + path + ": " + errno_text(err));
  if (err < 0) throw DataError(path + " is not a safetensors file: it ended while reading tensor '" + entry.name + "'");
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
    const SafetensorsDtype* dtype;
    torch::Tensor data;  // CPU, contiguous
  };
  std::vector<Item> items;
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) continue;  // an unset optional buffer, as torch's state_dict skips it
    if (name.empty() || name == kSafetensorsMetadataKey || !seen.insert(name).second) {
      throw UsageError("cannot write safetensors file " + path + ": tensor name '" + name +
                       "' is empty, reserved or repeated");
    }
    const SafetensorsDtype* dtype = dtype_of(tensor.scalar_type());
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
  header[kSafetensorsMetadataKey] = meta;
  uint64_t offset = 0;
  for (const auto& item : items) {
    const auto bytes = static_cast<uint64_t>(item.data.numel() * item.dtype->size);
    header[item.name] = {
        {"dtype", item.dtype->name}, {"shape", item.data.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header_text;
  try {
    header_text = dump_json(header);
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
  const SafetensorsLayout layout = read_layout(path, fd.get());
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
  const SafetensorsLayout layout = read_layout(path, fd.get());
  std::map<std::string, const SafetensorsEntry*> in_file;
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
    const SafetensorsEntry& entry = *in_file.at(name);
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
