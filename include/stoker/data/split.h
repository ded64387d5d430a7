// stoker/data/split.h — the parts of a dataset a user names with `split`, declared once.
//
// A dataset path holds one split (an image folder, a CSV list or table, WebDataset shards, a
// lone .npy: all of it is "train", whatever its name says) or several (IDX train-* and t10k-*
// files; .npz, .h5 and .pt files whose arrays are named by split). A user asks for one by the
// names declared here; open_source() opens it, splits_of() lists those a path offers and
// check_split() refuses the others (source.h). The --split help texts and the data reference
// page read the same list.
//
// The trainer has two more readings of a path, kHeldOut and kValidationFile: no user word
// names them, so no user can ask for one by mistake.
//
// Thread safety: the declarations are immutable; every function may be called from any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::data {

enum class Split {
  kTrain,  // "train": the training data
  kVal,    // "val": the data's own validation split
  kTest,   // "test" (or "t10k"): the data's own test split
  // What `stoker train` validates on when the data carries its own split (has_held_out_split)
  // and neither --val-data nor --val-split is given: the val split, else the test split.
  kHeldOut,
  // A path given with --val-data (or to `stoker evaluate`): its val split, else its test split,
  // else all of it (the plain x / y arrays, an IDX directory's train files, a folder).
  kValidationFile,
};

struct SplitDeclaration {
  Split split;
  std::string_view name;        // what a user writes: "test"
  std::string_view alias;       // another word for it ("t10k", MNIST's file prefix), or ""
  std::string_view meaning;     // a phrase for help: "the data's own test split"
  std::string_view idx_prefix;  // IDX files <prefix>-images-idx3-ubyte[.gz]; "" where IDX has none
  // Suffixes of array names (x_test, y_test in an .npz, .h5 or .pt), tried in order; "" is the
  // plain x / y. Without its '_', a suffix is also the name of an HDF5 group holding plain x / y
  // and of a .pt dict's entry (torch.save({"test": TensorDataset(x, y)})).
  std::vector<std::string_view> suffixes;
};

// The splits a user may name: train, val, test; in the order help lists them.
std::span<const SplitDeclaration> split_declarations();

// The declaration of kTrain, kVal or kTest; nullptr for the trainer's two readings.
const SplitDeclaration* declaration_of(Split split);

// The split a user's word names (a name or an alias, exact case), or nullopt.
std::optional<Split> split_named(std::string_view name);

// A split's user name ("test"); the trainer's readings: "held-out" and "validation-file".
std::string_view split_name(Split split);

// The array-name suffixes of `split`, in the order they are tried: a user split's declared
// ones; kHeldOut: val's then test's; kValidationFile: those, then "" (the plain arrays).
std::vector<std::string> split_suffixes(Split split);

// The IDX file prefixes of `split`, in the order they are tried (none for kVal); kHeldOut:
// test's; kValidationFile: test's, then train's.
std::vector<std::string_view> idx_prefixes(Split split);

// `splits` by name for a sentence: "train, val and test (t10k)".
std::string split_list_text(std::span<const Split> splits);

// What --split accepts, for help: "train (the training data), val (...) or test, also t10k (...)".
std::string split_help_text();

}  // namespace stoker::data
