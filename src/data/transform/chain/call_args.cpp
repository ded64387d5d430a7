#include "call_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "data/transform/spec_common.h"
#include "stoker/core/error.h"

namespace stoker::data::chain {

std::vector<const Value*> bind(const Call& call, std::initializer_list<std::string_view> params) {
  return bind(call, params.begin(), params.size());
}

std::vector<const Value*> bind(const Call& call, const std::string_view* params, size_t count) {
  const std::vector<std::string_view> names(params, params + count);
  std::vector<const Value*> bound(names.size(), nullptr);
  size_t positional = 0;
  for (const Arg& arg : call.args) {
    size_t index = 0;
    if (arg.keyword.empty()) {
      if (positional >= names.size()) {
        if (names.empty()) {
          throw UsageError(fmt::format("{} takes no arguments (got '{}')", call.name, call.text));
        }
        throw UsageError(fmt::format("{} takes at most {} positional argument{} (got '{}')", call.name, names.size(),
                                     names.size() == 1 ? "" : "s", call.text));
      }
      index = positional++;
    } else {
      const auto it = std::find(names.begin(), names.end(), arg.keyword);
      if (it == names.end()) {
        std::string known;
        for (const std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
        throw UsageError(
            fmt::format("{} has no argument '{}' (known: {})", call.name, arg.keyword, known.empty() ? "none" : known));
      }
      index = static_cast<size_t>(it - names.begin());
    }
    if (bound[index] != nullptr) {
      throw UsageError(fmt::format("{} got more than one value for argument '{}'", call.name, names[index]));
    }
    bound[index] = &arg.value;
  }
  return bound;
}

double to_number(const Call& call, std::string_view param, const Value& v) {
  if (v.kind != Value::Kind::kNumber || !std::isfinite(v.number)) {
    throw UsageError(fmt::format("{} {} must be a number (got '{}')", call.name, param, v.text));
  }
  return v.number;
}

int to_size(const Call& call, std::string_view param, const Value& v) {
  const double x = to_number(call, param, v);
  if (std::floor(x) != x) {
    throw UsageError(fmt::format("{} {} must be a whole number of pixels (got '{}')", call.name, param, v.text));
  }
  if (x < 1 || x > spec::kMaxSize) {
    throw UsageError(fmt::format("{} {} must be in 1..{} (got {})", call.name, param, spec::kMaxSize, v.text));
  }
  return static_cast<int>(x);
}

std::array<int, 2> to_size_pair(const Call& call, std::string_view param, const Value& v) {
  if (v.kind != Value::Kind::kTuple) {
    const int s = to_size(call, param, v);
    return {s, s};
  }
  if (v.items.size() == 1) {
    const int s = to_size(call, param, v.items[0]);
    return {s, s};
  }
  if (v.items.size() != 2) {
    throw UsageError(fmt::format("{} {} must be an integer or (height, width) (got '{}')", call.name, param, v.text));
  }
  return {to_size(call, param, v.items[0]), to_size(call, param, v.items[1])};
}

std::array<double, 2> to_range(const Call& call, std::string_view param, const Value& v) {
  if (v.kind != Value::Kind::kTuple || v.items.size() != 2) {
    throw UsageError(fmt::format("{} {} must be a pair (min, max) (got '{}')", call.name, param, v.text));
  }
  return {to_number(call, param, v.items[0]), to_number(call, param, v.items[1])};
}

std::array<float, 3> to_channels(const Call& call, std::string_view param, const Value& v) {
  if (v.kind != Value::Kind::kTuple) {
    const auto x = static_cast<float>(to_number(call, param, v));
    return {x, x, x};
  }
  if (v.items.size() == 1) {
    const auto x = static_cast<float>(to_number(call, param, v.items[0]));
    return {x, x, x};
  }
  if (v.items.size() != 3) {
    throw UsageError(
        fmt::format("{} {} must have 1 or 3 values, one per channel (got '{}')", call.name, param, v.text));
  }
  return {static_cast<float>(to_number(call, param, v.items[0])),
          static_cast<float>(to_number(call, param, v.items[1])),
          static_cast<float>(to_number(call, param, v.items[2]))};
}

bool is_none(const Value& v) { return v.kind == Value::Kind::kWord && v.text == "None"; }

bool to_bool(const Call& call, std::string_view param, const Value& v) {
  if (v.kind == Value::Kind::kWord && (v.text == "True" || v.text == "true")) return true;
  if (v.kind == Value::Kind::kWord && (v.text == "False" || v.text == "false")) return false;
  if (v.kind == Value::Kind::kNumber && (v.number == 0 || v.number == 1)) return v.number == 1;
  throw UsageError(fmt::format("{} {} must be True or False (got '{}')", call.name, param, v.text));
}

int to_int(const Call& call, std::string_view param, const Value& v, int lo, int hi) {
  const double x = to_number(call, param, v);
  if (std::floor(x) != x || x < lo || x > hi) {
    throw UsageError(
        fmt::format("{} {} must be a whole number in {}..{} (got '{}')", call.name, param, lo, hi, v.text));
  }
  return static_cast<int>(x);
}

std::string enum_word(const Value& v) {
  std::string word = v.text;
  if (const size_t dot = word.rfind('.'); v.kind == Value::Kind::kWord && dot != std::string::npos) {
    word = word.substr(dot + 1);
  }
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  return word;
}

std::string to_word(const Call& call, std::string_view param, const Value& v,
                    std::initializer_list<std::string_view> allowed) {
  const std::string word = enum_word(v);
  for (const std::string_view a : allowed) {
    if (v.kind == Value::Kind::kWord && word == a) return word;
  }
  throw UsageError(
      fmt::format("{} {} must be one of {} (got '{}')", call.name, param, fmt::join(allowed, ", "), v.text));
}

Interpolation to_interpolation(const Call& call, const Value& v, bool bicubic) {
  // torchvision's PIL path takes bicubic for every warp (the references' --interpolation bicubic
  // reaches their auto-augment policy); stoker's affine warps take it as grid_sample's bicubic,
  // its grid warps (perspective, elastic) do not.
  if (bicubic) {
    const std::string word = to_word(call, "interpolation", v, {"nearest", "bilinear", "bicubic"});
    return word == "bicubic"    ? Interpolation::kBicubic
           : word == "bilinear" ? Interpolation::kBilinear
                                : Interpolation::kNearest;
  }
  if (v.kind == Value::Kind::kWord && enum_word(v) == "bicubic") {
    throw UsageError(fmt::format(
        "{0} interpolation must be one of nearest, bilinear (got '{1}'): its warps sample as torchvision's tensor "
        "transforms do, which take those two; give {0} interpolation=bilinear (InterpolationMode.BILINEAR), and keep "
        "bicubic in Resize and the crops, which take it",
        call.name, v.text));
  }
  return to_word(call, "interpolation", v, {"nearest", "bilinear"}) == "bilinear" ? Interpolation::kBilinear
                                                                                  : Interpolation::kNearest;
}

std::array<double, 2> to_pair(const Call& call, std::string_view param, const Value& v, std::string_view shape) {
  if (v.kind != Value::Kind::kTuple || v.items.size() != 2) {
    throw UsageError(fmt::format("{} {} must be a pair {} (got '{}')", call.name, param, shape, v.text));
  }
  return {to_number(call, param, v.items[0]), to_number(call, param, v.items[1])};
}

std::array<double, 2> symmetric_range(const Call& call, std::string_view param, const Value& v) {
  if (v.kind == Value::Kind::kTuple) return to_range(call, param, v);
  const double d = to_number(call, param, v);
  if (d < 0) {
    throw UsageError(fmt::format("{} {} must be >= 0 for a single number (got {}); give (min, max) for a range",
                                 call.name, param, d));
  }
  return {-d, d};
}

}  // namespace stoker::data::chain
