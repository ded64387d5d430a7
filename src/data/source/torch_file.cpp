// torch.save files (.pt, .pth) of tensors, or of TensorDatasets (alone, in a dict by split or
// a (train, val[, test]) tuple, or as random_split's Subsets of one) -> an ArraySource (a
// RowsView of it for a Subset)
// (open_torch_file): the zip archive torch writes, its pickle read by pickle.cpp, and each
// tensor's storage read in place from the archive's map (torch stores storages uncompressed),
// named like the arrays of an .npz.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "array_naming.h"
#include "array_source.h"
#include "file_reader.h"
#include "npy.h"
#include "pickle.h"
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"
#include "stoker/data/state_dict.h"
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
      {"torch.FloatStorage", {'f', 4}},   {"torch.DoubleStorage", {'f', 8}}, {"torch.HalfStorage", {'f', 2}},
      {"torch.LongStorage", {'i', 8}},    {"torch.IntStorage", {'i', 4}},    {"torch.ShortStorage", {'i', 2}},
      {"torch.CharStorage", {'i', 1}},    {"torch.ByteStorage", {'u', 1}},   {"torch.BoolStorage", {'b', 1}},
      {"torch.BFloat16Storage", {'B', 2}}};
  const auto found = kTypes.find(dotted);
  if (found == kTypes.end()) return std::nullopt;
  return found->second;
}

bool is_tensor(const PickleValue& v) {
  return v.kind == PickleValue::Kind::kReduce && v.items.size() == 2 &&
         (v.items[0]->is_global("torch._utils._rebuild_tensor_v2") ||
          v.items[0]->is_global("torch._utils._rebuild_tensor"));
}

// An entry of the state BUILD gave an object (nullptr when it has none of that name).
const PickleValue* state_entry(const PickleValue& v, const std::string& name) {
  if (v.kind != PickleValue::Kind::kBuilt || v.items[1]->kind != PickleValue::Kind::kDict) return nullptr;
  for (const auto& [key, value] : v.items[1]->entries) {
    if (key->kind == PickleValue::Kind::kString && key->text == name) return value.get();
  }
  return nullptr;
}

// The tuple of tensors a torch.utils.data.TensorDataset holds (the state BUILD gave it), or
// nullptr for anything else.
const PickleValue* tensor_dataset_tensors(const PickleValue& v) {
  if (v.kind != PickleValue::Kind::kBuilt || v.items[0]->kind != PickleValue::Kind::kReduce ||
      !v.items[0]->items[0]->is_global("torch.utils.data.dataset.TensorDataset"))
    return nullptr;
  const PickleValue* tensors = state_entry(v, "tensors");
  return tensors != nullptr && tensors->kind == PickleValue::Kind::kTuple ? tensors : nullptr;
}

// "module.Class" of an object the file holds, for messages ("" when it is not one).
std::string class_of(const PickleValue& v) {
  const PickleValue& made = v.kind == PickleValue::Kind::kBuilt ? *v.items[0] : v;
  if (made.kind != PickleValue::Kind::kReduce || made.items[0]->kind != PickleValue::Kind::kGlobal) return "";
  return made.items[0]->text;
}

// A torch.utils.data.Subset (what random_split returns) of a TensorDataset with a list of
// indices: the dataset; nullptr for anything else.
const PickleValue* subset_dataset(const PickleValue& v) {
  if (class_of(v) != "torch.utils.data.dataset.Subset") return nullptr;
  const PickleValue* dataset = state_entry(v, "dataset");
  const PickleValue* indices = state_entry(v, "indices");
  if (dataset == nullptr || tensor_dataset_tensors(*dataset) == nullptr || indices == nullptr ||
      indices->kind != PickleValue::Kind::kTuple)
    return nullptr;
  for (const auto& index : indices->items) {
    if (index->kind != PickleValue::Kind::kInt) return nullptr;
  }
  return dataset;
}

// The tensors of a TensorDataset, or of the TensorDataset a Subset selects from; nullptr for
// anything else.
const PickleValue* dataset_tensors(const PickleValue& v) {
  if (const PickleValue* tensors = tensor_dataset_tensors(v)) return tensors;
  const PickleValue* dataset = subset_dataset(v);
  return dataset != nullptr ? tensor_dataset_tensors(*dataset) : nullptr;
}

// The splits a tuple (or list) of 2 or 3 TensorDatasets (or Subsets of one) stands for, in order: (train, val) or
// (train, val, test); empty for anything else.
std::vector<std::string> dataset_tuple_splits(const PickleValue& v) {
  if (v.kind != PickleValue::Kind::kTuple || v.items.size() < 2 || v.items.size() > 3) return {};
  for (const auto& item : v.items) {
    if (dataset_tensors(*item) == nullptr) return {};
  }
  std::vector<std::string> splits{"train", "val", "test"};
  splits.resize(v.items.size());
  return splits;
}

std::vector<int64_t> integers(const PickleValue& tuple) {
  std::vector<int64_t> out;
  for (const auto& item : tuple.items) out.push_back(item->integer);
  return out;
}

// A tensor of the file by the name tensors() gives it, and the random_split Subset it is read
// through (its indices select the rows), if any.
struct NamedTensor {
  std::string key;
  PickleRef tensor;
  const PickleValue* subset = nullptr;
};

class TorchFile {
 public:
  explicit TorchFile(const std::string& path) : path_(path), zip_(open_zip(path)) {
    const auto pickle = std::find_if(zip_.members().begin(), zip_.members().end(), [](const auto& m) {
      return m.name.ends_with("data.pkl") && std::count(m.name.begin(), m.name.end(), '/') == 1;
    });
    if (pickle == zip_.members().end())
      throw DataError(
          fmt::format("{} is a zip archive but not a torch.save file (no data.pkl in it); {}", path, kSaveHint));
    prefix_ = pickle->name.substr(0, pickle->name.size() - 8);  // "name/"
    const std::vector<uint8_t> bytes = zip_.extract(*pickle);
    root_ = read_pickle(bytes, path);
    if (const ZipArchive::Member* order = zip_.find(prefix_ + "byteorder")) {
      const std::vector<uint8_t> text = zip_.extract(*order);
      big_endian_ = std::string(text.begin(), text.end()) == "big";
    }
  }

  // The tensors of the file by name: a dict's string keys, or "0", "1" ... of a tuple, a list
  // or a TensorDataset. A dict's TensorDataset of (features, targets) under key K gives x_K and
  // y_K, so {"train": ..., "val": ...} reads as an .npz's splits; a tuple or list of two or
  // three TensorDatasets reads as (train, val) or (train, val, test).
  std::vector<NamedTensor> tensors() const {
    std::vector<NamedTensor> out;
    // A TensorDataset of (features, targets) as the split `name`: x_name and y_name.
    const auto add_dataset = [&](const std::string& name, const PickleValue& dataset, const std::string& where) {
      const PickleValue* pair = dataset_tensors(dataset);
      if (pair->items.size() != 2 || !is_tensor(*pair->items[0]) || !is_tensor(*pair->items[1]))
        throw DataError(
            fmt::format("{}: {} is a TensorDataset of {} {}; stoker needs (features, targets): "
                        "TensorDataset(x, y)",
                        path_, where, pair->items.size(), pair->items.size() == 1 ? "tensor" : "items"));
      const PickleValue* subset = subset_dataset(dataset) != nullptr ? &dataset : nullptr;
      out.push_back({"x_" + name, pair->items[0], subset});
      out.push_back({"y_" + name, pair->items[1], subset});
    };
    const auto add_sequence = [&](const PickleValue& sequence, const PickleValue* subset) {
      for (size_t i = 0; i < sequence.items.size(); ++i) {
        if (is_tensor(*sequence.items[i])) out.push_back({std::to_string(i), sequence.items[i], subset});
      }
    };
    if (root_->kind == PickleValue::Kind::kDict) {
      for (const auto& [key, value] : root_->entries) {
        if (key->kind != PickleValue::Kind::kString) continue;
        if (is_tensor(*value)) out.push_back({key->text, value});
        if (dataset_tensors(*value)) add_dataset(key->text, *value, fmt::format("\"{}\"", key->text));
      }
    } else if (const std::vector<std::string> splits = dataset_tuple_splits(*root_); !splits.empty()) {
      for (size_t i = 0; i < splits.size(); ++i) add_dataset(splits[i], *root_->items[i], fmt::format("item {}", i));
    } else if (root_->kind == PickleValue::Kind::kTuple) {
      for (const auto& item : root_->items) {
        if (const std::string type = class_of(*item); !type.empty() && !is_tensor(*item) && !dataset_tensors(*item))
          throw DataError(fmt::format(
              "{} holds a sequence with an object of type {}{}, which stoker does not build (it reads tensors, "
              "TensorDatasets, and (train, val[, test]) tuples of TensorDatasets or of random_split's Subsets of one); "
              "{}",
              path_, type,
              type.ends_with(".Subset") ? " that is not a Subset of a TensorDataset with a list of indices" : "",
              type.ends_with(".Subset") ? "save the whole TensorDataset and hold out validation with --val-split"
                                        : kSaveHint));
      }
      add_sequence(*root_, nullptr);
    } else if (const PickleValue* dataset = dataset_tensors(*root_)) {
      add_sequence(*dataset, subset_dataset(*root_) != nullptr ? root_.get() : nullptr);
    } else if (is_tensor(*root_)) {
      throw DataError(fmt::format("{} holds one tensor; stoker needs features and targets: {}", path_, kSaveHint));
    } else if (const std::string type = class_of(*root_); !type.empty()) {
      throw DataError(
          fmt::format("{} holds an object of type {}, which stoker does not build (it reads tensors, dicts and "
                      "tuples of them, and TensorDataset); {}",
                      path_, type, kSaveHint));
    }
    return out;
  }
  // Whether the tensors are positional: a tuple, a list or a TensorDataset (not a tuple of
  // TensorDatasets, whose tensors are named by split).
  bool is_sequence() const {
    return (root_->kind == PickleValue::Kind::kTuple && dataset_tuple_splits(*root_).empty()) ||
           dataset_tensors(*root_);
  }
  const char* sequence_kind() const {
    return subset_dataset(*root_) ? "a Subset" : tensor_dataset_tensors(*root_) ? "a TensorDataset" : "a tuple";
  }
  // Whether a dict holds TensorDatasets (named x_K, y_K by tensors()).
  bool holds_datasets() const {
    return root_->kind == PickleValue::Kind::kDict &&
           std::any_of(root_->entries.begin(), root_->entries.end(),
                       [](const auto& entry) { return dataset_tensors(*entry.second) != nullptr; });
  }

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
      throw bad(
          fmt::format("is a {} tensor; stoker reads float16/32/64, bfloat16, int8..int64, uint8 and bool tensors: "
                      "convert with x.float() (features) or y.long() (class ids)",
                      type.substr(type.find('.') + 1, type.rfind("Storage") - type.find('.') - 1)));
    }
    a.kind = dtype->kind;
    a.itemsize = dtype->itemsize;
    a.big_endian = big_endian_ && a.itemsize > 1;
    const auto int_tuple = [](const PickleValue& v) {
      return v.kind == PickleValue::Kind::kTuple && std::all_of(v.items.begin(), v.items.end(), [](const auto& i) {
               return i->kind == PickleValue::Kind::kInt;
             });
    };
    if (!int_tuple(*args.items[2]) || !int_tuple(*args.items[3]) ||
        args.items[2]->items.size() != args.items[3]->items.size() || args.items[1]->kind != PickleValue::Kind::kInt ||
        args.items[1]->integer < 0 || id.items[2]->kind != PickleValue::Kind::kString)
      throw bad("has a damaged tensor record (its offset, sizes or strides are not what torch.save writes)");
    a.shape = integers(*args.items[2]);
    const std::vector<int64_t> stride = integers(*args.items[3]);
    uint64_t elements = 1;
    for (const int64_t size : a.shape) {
      if (size < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(size), &elements) ||
          elements > (uint64_t{1} << 48))
        throw bad(fmt::format("has a damaged tensor record (sizes ({}))", fmt::join(a.shape, ", ")));
    }
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
    uint64_t offset = 0;
    const bool wraps = __builtin_mul_overflow(static_cast<uint64_t>(args.items[1]->integer),
                                              static_cast<uint64_t>(a.itemsize), &offset);
    const uint64_t size = static_cast<uint64_t>(a.count()) * static_cast<uint64_t>(a.itemsize);
    if (wraps || offset > bytes.size() || bytes.size() - offset < size)
      throw bad(wraps ? fmt::format("starts past the end of its storage, which holds {} bytes", bytes.size())
                      : fmt::format("needs {} bytes of its storage, which holds {}", offset + size, bytes.size()));
    a.data = bytes.subspan(offset, size);
    return a;
  }

  const ZipArchive& zip() const { return zip_; }
  const PickleValue& root() const { return *root_; }

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

std::vector<std::string> keys_of(const std::vector<NamedTensor>& tensors) {
  std::vector<std::string> keys;
  for (const NamedTensor& t : tensors) keys.push_back(t.key);
  return keys;
}

// The (features, targets) keys of `split`: named as in an .npz, or a (features, targets) tuple.
std::optional<std::pair<std::string, std::string>> pick(const TorchFile& file, const std::vector<NamedTensor>& tensors,
                                                        Split split) {
  if (file.is_sequence()) {
    if ((split != Split::kTrain && split != Split::kValidationFile) || tensors.size() != 2) return std::nullopt;
    return std::make_pair(tensors[0].key, tensors[1].key);
  }
  return array_pair(keys_of(tensors), split_suffixes(split));
}

}  // namespace

std::unique_ptr<Source> open_torch_file(const std::string& path, Split split) {
  const TorchFile file(path);
  const auto tensors = file.tensors();
  const auto pair = pick(file, tensors, split);
  if (!pair) {
    const std::vector<std::string> suffixes = split_suffixes(split);
    throw DataError(fmt::format(
        "{} holds the tensors [{}]{}; expected features named {} and targets named {}, or a (features, targets) "
        "tuple: {}",
        path, fmt::join(keys_of(tensors), ", "), file.is_sequence() ? std::string(" in ") + file.sequence_kind() : "",
        names_looked_for(kFeatureNames, suffixes), names_looked_for(kTargetNames, suffixes),
        file.holds_datasets() ? "a dict's TensorDataset under key K reads as x_K, y_K: key them \"train\" and "
                                "\"val\" or \"test\""
                              : kSaveHint));
  }
  const auto named = [&](const std::string& key) -> const NamedTensor& {
    return *std::find_if(tensors.begin(), tensors.end(), [&](const NamedTensor& t) { return t.key == key; });
  };
  const NamedTensor& features = named(pair->first);
  const NpyArray x = file.array(pair->first, *features.tensor);
  const NpyArray y = file.array(pair->second, *named(pair->second).tensor);
  const std::string origin = fmt::format("tensors {} ({}, {})", path, pair->first, pair->second);
  std::unique_ptr<Source> source = make_array_source(to_sample_arrays(x, y, origin, file.zip().file()));
  if (features.subset == nullptr) return source;
  const std::vector<int64_t> subset = integers(*state_entry(*features.subset, "indices"));
  std::vector<size_t> rows;
  rows.reserve(subset.size());
  for (const int64_t row : subset) {
    if (row < 0 || static_cast<size_t>(row) >= source->size()) {
      throw DataError(
          fmt::format("{}: the Subset read as {} selects row {}, and its TensorDataset holds {} rows (0 to "
                      "{}); save the Subsets of the TensorDataset they were split from",
                      path, pair->first, row, source->size(), source->size() - 1));
    }
    rows.push_back(static_cast<size_t>(row));
  }
  const std::string what = fmt::format("{} of its {} rows, as a Subset (random_split) selects them",
                                       with_commas(rows.size()), with_commas(source->size()));
  return std::make_unique<RowsView>(std::shared_ptr<const Source>(std::move(source)), std::move(rows), what);
}

std::vector<StoredTensor> read_state_dict(const std::string& path) {
  check_input_file(path, "weights file");
  {
    char magic[2] = {};
    std::ifstream(path, std::ios::binary).read(magic, 2);
    if (magic[0] != 'P' || magic[1] != 'K') {
      throw DataError(
          fmt::format("{} is not a torch.save zip archive (PyTorch 1.6 and later write one; for an older "
                      "file, torch.save(torch.load(\"{}\"), \"new.pth\") and give new.pth)",
                      path, path));
    }
  }
  const TorchFile file(path);
  const PickleValue* dict = &file.root();
  const auto entry = [](const PickleValue& d, const std::string& key) -> const PickleValue* {
    for (const auto& [k, v] : d.entries) {
      if (k->kind == PickleValue::Kind::kString && k->text == key) return v.get();
    }
    return nullptr;
  };
  if (dict->kind == PickleValue::Kind::kDict) {
    for (const char* wrapper : {"model", "state_dict", "model_state_dict"}) {
      if (const PickleValue* inner = entry(*dict, wrapper); inner && inner->kind == PickleValue::Kind::kDict) {
        dict = inner;
        break;
      }
    }
  }
  std::vector<StoredTensor> out;
  if (dict->kind == PickleValue::Kind::kDict) {
    for (const auto& [key, value] : dict->entries) {
      if (key->kind != PickleValue::Kind::kString || !is_tensor(*value)) continue;
      const NpyArray array = file.array(key->text, *value);
      StoredTensor t;
      t.name = key->text;
      t.shape = array.shape;
      t.integral = array.integral();
      if (t.integral) {
        t.integers = npy_to_int64(array);
      } else {
        t.floats = npy_to_float(array);
      }
      out.push_back(std::move(t));
    }
  }
  if (out.empty()) {
    throw DataError(
        fmt::format("{} holds no dict of tensors; save the weights as torch.save(model.state_dict(), path)", path));
  }
  const auto wrapped = [](const StoredTensor& t) { return t.name.starts_with("module."); };
  if (std::all_of(out.begin(), out.end(), wrapped)) {
    for (StoredTensor& t : out) t.name.erase(0, 7);
  }
  return out;
}

std::vector<Split> torch_file_splits(const std::string& path) {
  const TorchFile file(path);
  const auto tensors = file.tensors();
  std::vector<Split> splits;
  for (const SplitDeclaration& d : split_declarations()) {
    if (d.split == Split::kTrain || pick(file, tensors, d.split)) splits.push_back(d.split);
  }
  return splits;
}

}  // namespace stoker::data
