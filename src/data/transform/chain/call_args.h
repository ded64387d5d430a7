// A call's arguments bound to a transform's parameters as Python binds them, and their values
// converted to what the spec holds. Each failure is one UsageError naming the transform, the
// parameter and the value as written.
// Thread safety: free functions on their arguments.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "calls.h"
#include "stoker/data/transform.h"

namespace stoker::data::chain {

// The call's arguments matched to `params` by position or keyword, as Python does; null
// where not given.
std::vector<const Value*> bind(const Call& call, std::initializer_list<std::string_view> params);
// The same for `count` parameters at `params` (a transform's declared list, ops/registry.h).
std::vector<const Value*> bind(const Call& call, const std::string_view* params, size_t count);

// A finite number.
double to_number(const Call& call, std::string_view param, const Value& v);

// A whole number of pixels in 1..spec::kMaxSize.
int to_size(const Call& call, std::string_view param, const Value& v);

// torchvision's size: an int (square) or a sequence (h, w) or (s,). Returns {h, w}.
std::array<int, 2> to_size_pair(const Call& call, std::string_view param, const Value& v);

// A pair (min, max), as torchvision's scale= and ratio= take it.
std::array<double, 2> to_range(const Call& call, std::string_view param, const Value& v);

// Per-channel values: (a, b, c), or one value (a,) / a for every channel.
std::array<float, 3> to_channels(const Call& call, std::string_view param, const Value& v);

// Python's None.
bool is_none(const Value& v);

// Python's True / False (and true / false, 1 / 0).
bool to_bool(const Call& call, std::string_view param, const Value& v);

// A whole number in [lo, hi].
int to_int(const Call& call, std::string_view param, const Value& v, int lo, int hi);

// A word as a Python enum's member name, lower case: InterpolationMode.BILINEAR and
// AutoAugmentPolicy.IMAGENET are read as bilinear and imagenet.
std::string enum_word(const Value& v);

// A word out of `allowed`, read by enum_word.
std::string to_word(const Call& call, std::string_view param, const Value& v,
                    std::initializer_list<std::string_view> allowed);

// The warps' interpolation: nearest or bilinear (InterpolationMode.NEAREST / .BILINEAR), and
// bicubic where `bicubic` (the warps of warp(), not warp_grid()'s).
Interpolation to_interpolation(const Call& call, const Value& v, bool bicubic = false);

// Two numbers, named by `shape` in the message.
std::array<double, 2> to_pair(const Call& call, std::string_view param, const Value& v, std::string_view shape);

// torchvision's _setup_angle: a number d >= 0 is (-d, d), a pair is (min, max).
std::array<double, 2> symmetric_range(const Call& call, std::string_view param, const Value& v);

}  // namespace stoker::data::chain
