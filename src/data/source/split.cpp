// The split names (split.h): the declaration and what is read from it.
#include "stoker/data/split.h"

#include <fmt/format.h>

namespace stoker::data {

std::span<const SplitDeclaration> split_declarations() {
  static const std::vector<SplitDeclaration> kSplits = {
      {Split::kTrain,
       "train",
       "",
       "the training data: all of a folder, list, table or shards",
       "train",
       {"_train", ""}},
      {Split::kVal, "val", "", "the data's own validation split", "", {"_val", "_valid", "_validation"}},
      {Split::kTest, "test", "t10k", "the data's own test split", "t10k", {"_test"}},
  };
  return kSplits;
}

const SplitDeclaration* declaration_of(Split split) {
  for (const SplitDeclaration& d : split_declarations()) {
    if (d.split == split) return &d;
  }
  return nullptr;
}

std::optional<Split> split_named(std::string_view name) {
  for (const SplitDeclaration& d : split_declarations()) {
    if (name == d.name || (!d.alias.empty() && name == d.alias)) return d.split;
  }
  return std::nullopt;
}

std::string_view split_name(Split split) {
  if (const SplitDeclaration* d = declaration_of(split)) return d->name;
  return split == Split::kHeldOut ? "held-out" : "validation-file";
}

namespace {

// The user splits `split` looks in, in order: itself for a user split; the validation split,
// then the test split, for the trainer's held-out data; those, then the whole file (its plain
// arrays, its train-* IDX files) for a file given for validation.
std::vector<Split> looked_in(Split split, bool* then_whole) {
  *then_whole = split == Split::kValidationFile;
  if (split == Split::kHeldOut || split == Split::kValidationFile) return {Split::kVal, Split::kTest};
  return {split};
}

}  // namespace

std::vector<std::string> split_suffixes(Split split) {
  bool then_whole = false;
  std::vector<std::string> suffixes;
  for (const Split s : looked_in(split, &then_whole)) {
    for (std::string_view suffix : declaration_of(s)->suffixes) suffixes.emplace_back(suffix);
  }
  if (then_whole) suffixes.emplace_back();  // the plain names
  return suffixes;
}

std::vector<std::string_view> idx_prefixes(Split split) {
  bool then_whole = false;
  std::vector<std::string_view> prefixes;
  std::vector<Split> splits = looked_in(split, &then_whole);
  if (then_whole) splits.push_back(Split::kTrain);  // an IDX folder's whole data is its train files
  for (const Split s : splits) {
    if (const std::string_view p = declaration_of(s)->idx_prefix; !p.empty()) prefixes.push_back(p);
  }
  return prefixes;
}

namespace {

std::string with_alias(const SplitDeclaration& d, std::string_view between) {
  return d.alias.empty() ? std::string(d.name) : fmt::format("{}{}{}", d.name, between, d.alias);
}

// "a", "a or b", "a, b or c".
std::string joined(const std::vector<std::string>& items, std::string_view last) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? last : ", ";
    text += items[i];
  }
  return text;
}

}  // namespace

std::string split_list_text(std::span<const Split> splits) {
  std::vector<std::string> names;
  for (const Split s : splits) {
    const SplitDeclaration* d = declaration_of(s);
    names.push_back(d != nullptr ? with_alias(*d, " (") + (d->alias.empty() ? "" : ")") : std::string(split_name(s)));
  }
  return joined(names, " and ");
}

std::string split_help_text() {
  std::vector<std::string> names;
  for (const SplitDeclaration& d : split_declarations()) {
    names.push_back(fmt::format("{} ({})", with_alias(d, ", also "), d.meaning));
  }
  return joined(names, " or ");
}

}  // namespace stoker::data
