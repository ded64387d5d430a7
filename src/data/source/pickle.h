// A reader for the subset of Python's pickle format that torch.save writes for tensors and
// the containers around them (dicts, tuples, lists of tensors, numbers and strings). It only
// reads: callables are not called, classes are not built; a REDUCE, a persistent id or a BUILD
// stays a node in the tree for the caller to interpret (torch_file.cpp). Protocols 2 to 5.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace stoker::data {

struct PickleValue {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,      // str or bytes
    kTuple,       // tuple or list: items
    kDict,        // entries
    kGlobal,      // a class or function named by module and name (text = "module.name")
    kReduce,      // callable(args): items = {callable, args}
    kPersistent,  // a persistent id: items = {id}
    kBuilt        // an object given its state by BUILD: items = {object (a kReduce), state}
  };
  Kind kind = Kind::kNone;
  int64_t integer = 0;  // kBool, kInt
  double number = 0;    // kFloat
  std::string text;     // kString, kGlobal
  std::vector<std::shared_ptr<const PickleValue>> items;
  std::vector<std::pair<std::shared_ptr<const PickleValue>, std::shared_ptr<const PickleValue>>> entries;

  bool is_global(const std::string& dotted) const { return kind == Kind::kGlobal && text == dotted; }
};

using PickleRef = std::shared_ptr<const PickleValue>;

// Containers nest at most this deep (torch.save files of tensors nest a few levels).
inline constexpr int kMaxPickleDepth = 1000;

// Reads one pickle. Throws DataError naming `name` for an opcode outside the subset (with its
// byte offset), a truncated stream, a stack that does not add up, containers nested deeper
// than kMaxPickleDepth, or a container changed after it was placed in another (the only way a
// pickle can make a cycle). The result is a tree or a DAG (a memo entry may be used twice),
// never a cycle, so walking it terminates and freeing it recurses at most kMaxPickleDepth deep.
PickleRef read_pickle(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace stoker::data
