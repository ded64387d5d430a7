// A transform chain's text read into calls, the first step of parse_transforms():
// "RandomResizedCrop(224, scale=(0.5, 1)), Normalize" is two calls, each a name with positional
// and keyword arguments whose values are numbers, words, tuples and lists, or calls (the
// transforms in RandomApply's list). Nothing here knows what a transform means: chain_builder.h
// does.
//
// Errors: UsageError, one line quoting what was written: text that is not a chain of calls
// (an unclosed bracket, a missing separator, a Lambda, brackets nested more than 8 deep).
// Thread safety: free functions on their arguments.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::data::chain {

struct Call;

struct Value {
  // kCall: a transform written as an argument (RandomApply's list holds them).
  enum class Kind { kNumber, kWord, kTuple, kBadNumber, kCall };
  Kind kind = Kind::kWord;
  std::string text;  // as written, for messages
  double number = 0;
  std::vector<Value> items;
  std::shared_ptr<const Call> call;
};

struct Arg {
  std::string keyword;  // empty: positional
  Value value;
};

struct Call {
  std::string name;
  std::string text;  // the whole call as written
  std::vector<Arg> args;
};

// The calls of `text` in order. A pasted Compose([...]) or a Python list gives its items; items
// are separated by ',', ';', '·', '→' or whitespace ("float32 NCHW"). Empty text: no calls.
std::vector<Call> read_calls(std::string_view text);

// A transform's name without the module path Python may write before it: transforms.Resize,
// T.Resize and v2.Resize are Resize.
std::string transform_name(std::string_view dotted);

}  // namespace stoker::data::chain
