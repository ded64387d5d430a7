// torch.save files (.pt, .pth) of tensors -> an ArraySource (open_torch_file): the zip archive
// torch writes, its pickle read by pickle.cpp, and each tensor's storage read in place from the
// archive's map (torch stores storages uncompressed), named like the arrays of an .npz.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

#include "array_naming.h"
#include "array_source.h"
#include "npy.h"
#include "pickle.h"
#include "stoker/core/error.h"
#include "zip_archive.h"

namespace stoker::data {

namespace {

constexpr const char* kSaveHint = "save the tensors as torch.save({\"x\": features, \"y\": targets}, path)";

struct StorageType {
  char kind;
  int itemsize;
};

std::optional<StorageType> storage_type(const std::string& dotted) {
  static const std::map<std::string, StorageType> kTypes{
      {"torch.FloatStorage", {'f', 4}}, {"torch.DoubleStorage", {'f', 8}}, {"torch.HalfStorage", {'f', 2}},
      {"torch.LongStorage", {'i', 8}},  {"torch.IntStorage", {'i', 4}},    {"torch.ShortStorage", {'i', 2}},
      {"torch.CharStorage", {'i', 1}},  {"torch.ByteStorage", {'u', 1}},   {"torch.BoolStorage", {'b', 1}},
      {"torch.BFloat16Storage", {'B', 2}}};
  const auto found = kTypes.find(dotted);
  if (found == kTypes.end()) return std::nullopt;
  return found->second;
}

bool is_tensor(const PickleValue& v) {
  return v.kind == PickleValue::Kind::kReduce && v.items.size() == 2 &&
         (v.items[0]->is_global("torch._utils._rebuild_tensor_v2") || v.items[0]->is_global("torch._utils._rebuild_tensor"));
}

std::vector<int64_t> integers(const PickleValue& tuple) {
  std::vector<int64_t> out;
  for (const auto& item : tuple.items) out.push_back(item->integer);
  return out;
}

class TorchFile {
 public:
  explicit TorchFile(const std::string& path) : path_(path), zip_(open_zip(path)) {
    const auto pickle = std::find_if(zip_.members().begin(), zip_.members().end(), [](const auto& m) {
      return m.name.ends_with("data.pkl") && std::count(m.name.begin(), m.name.end(), '/') == 1;
    });
    if (pickle == zip_.members().end())
      throw DataError(fmt::format("{} is a zip archive but not a torch.save file (no data.pkl in it); {}", path, kSaveHint));
    prefix_ = pickle->name.substr(0, pickle->name.size() - 8);  // "name/"
    const std::vector<uint8_t> bytes = zip_.extract(*pickle);
    root_ = read_pickle(bytes, path);
    if (const ZipArchive::Member* order = zip_.find(prefix_ + "byteorder")) {
      const std::vector<uint8_t> text = zip_.extract(*order);
      big_endian_ = std::string(text.begin(), text.end()) == "big";
    }
  }

  // The tensors of the file by name: a dict's string keys, or "0", "1" ... of a tuple or list.
  std::vector<std::pair<std::string, PickleRef>> tensors() const {
    std::vector<std::pair<std::string, PickleRef>> out;
    if (root_->kind == PickleValue::Kind::kDict) {
      for (const auto& [key, value] : root_->entries) {
        if (key->kind == PickleValue::Kind::kString && is_tensor(*value)) out.emplace_back(key->text, value);
      }
    } else if (root_->kind == PickleValue::Kind::kTuple) {
      for (size_t i = 0; i < root_->items.size(); ++i) {
        if (is_tensor(*root_->items[i])) out.emplace_back(std::to_string(i), root_->items[i]);
      }
    } else if (is_tensor(*root_)) {
      throw DataError(fmt::format("{} holds one tensor; stoker needs features and targets: {}", path_, kSaveHint));
    }
    return out;
  }
  bool is_sequence() const { return root_->kind == PickleValue::Kind::kTuple; }

  // The tensor as an NpyArray viewing its storage in the archive's map.
  NpyArray array(const std::string& key, const PickleValue& tensor) const {
    NpyArray a;
    a.name = path_ + ":" + key;
    const PickleValue& args = *tensor.items[1];
    const auto bad = [&](const std::string& what) { return DataError(fmt::format("{}: {}", a.name, what)); };
    if (args.kind != PickleValue::Kind::kTuple || args.items.size() < 4 ||
        args.items[0]->kind != PickleValue::Kind::kPersistent)
      throw bad("is a tensor stoker cannot read (an unexpected torch.save layout); " + std::string(kSaveHint));
    const PickleValue& id = *args.items[0]->items[0];
    if (id.kind != PickleValue::Kind::kTuple || id.items.size() < 3) throw bad("has a storage stoker cannot read");
    const std::string& type = id.items[1]->text;
    const auto dtype = storage_type(type);
    if (!dtype) {
      throw bad(fmt::format("is a {} tensor; stoker reads float16/32/64, bfloat16, int8..int64, uint8 and bool tensors: "
                            "convert with x.float() (features) or y.long() (class ids)",
                            type.substr(type.find('.') + 1, type.rfind("Storage") - type.find('.') - 1)));
    }
    a.kind = dtype->kind;
    a.itemsize = dtype->itemsize;
    a.big_endian = big_endian_ && a.itemsize > 1;
    a.shape = integers(*args.items[2]);
    const std::vector<int64_t> stride = integers(*args.items[3]);
    int64_t expected = 1;
    for (size_t d = a.shape.size(); d-- > 0;) {
      if (a.shape[d] != 1 && stride[d] != expected)
        throw bad(fmt::format("is not contiguous (strides ({})); save x.contiguous()", fmt::join(stride, ", ")));
      expected *= a.shape[d];
    }
    const ZipArchive::Member* storage = zip_.find(prefix_ + "data/" + id.items[2]->text);
    if (storage == nullptr) throw bad("names a storage the archive lacks (a damaged file?)");
    if (storage->method != 0) throw bad("has a compressed storage; save it again with torch.save");
    const std::span<const uint8_t> bytes = zip_.stored(*storage);
    const auto offset = static_cast<uint64_t>(args.items[1]->integer) * static_cast<uint64_t>(a.itemsize);
    const uint64_t size = static_cast<uint64_t>(a.count()) * static_cast<uint64_t>(a.itemsize);
    if (offset > bytes.size() || bytes.size() - offset < size)
      throw bad(fmt::format("needs {} bytes of its storage, which holds {}", offset + size, bytes.size()));
    a.data = bytes.subspan(offset, size);
    return a;
  }

  const ZipArchive& zip() const { return zip_; }

 private:
  static ZipArchive open_zip(const std::string& path) {
    try {
      return ZipArchive(path);
    } catch (const DataError&) {
      throw DataError(fmt::format(
          "{} is not a torch.save zip archive (the format PyTorch writes since 1.6); load it in Python and {}", path,
          kSaveHint));
    }
  }
  std::string path_;
  ZipArchive zip_;
  std::string prefix_;
  PickleRef root_;
  bool big_endian_ = false;
};

std::vector<std::string> keys_of(const std::vector<std::pair<std::string, PickleRef>>& tensors) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : tensors) keys.push_back(key);
  return keys;
}

// The (features, targets) keys of `split`: named as in an .npz, or a (features, targets) tuple.
std::optional<std::pair<std::string, std::string>> pick(const TorchFile& file,
                                                        const std::vector<std::pair<std::string, PickleRef>>& tensors,
                                                        const std::string& split) {
  if (file.is_sequence()) {
    if (is_test_split(split) || tensors.size() != 2) return std::nullopt;
    return std::make_pair(tensors[0].first, tensors[1].first);
  }
  return array_pair(keys_of(tensors), split_suffixes(split));
}

}  // namespace

std::unique_ptr<Source> open_torch_file(const std::string& path, const std::string& split) {
  const TorchFile file(path);
  const auto tensors = file.tensors();
  const auto pair = pick(file, tensors, split);
  if (!pair) {
    const std::vector<std::string> suffixes = split_suffixes(split);
    throw DataError(fmt::format(
        "{} holds the tensors [{}]{}; expected features named {} and targets named {}, or a (features, targets) "
        "tuple: {}",
        path, fmt::join(keys_of(tensors), ", "), file.is_sequence() ? " in a tuple" : "",
        names_looked_for(kFeatureNames, suffixes), names_looked_for(kTargetNames, suffixes), kSaveHint));
  }
  const auto tensor = [&](const std::string& key) {
    return *std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.first == key; })->second;
  };
  const NpyArray x = file.array(pair->first, tensor(pair->first));
  const NpyArray y = file.array(pair->second, tensor(pair->second));
  const std::string origin = fmt::format("tensors {} ({}, {})", path, pair->first, pair->second);
  return make_array_source(to_sample_arrays(x, y, origin, file.zip().file()));
}

bool torch_file_has_test_split(const std::string& path) {
  const TorchFile file(path);
  return pick(file, file.tensors(), "test").has_value();
}

}  // namespace stoker::data
