// A call's arguments bound to a transform's parameters as Python binds them, and their values
// converted to what the spec holds. Each failure is one UsageError naming the transform, the
// parameter and the value as written.
// Thread safety: free functions on their arguments.
#pragma once

#include <array>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "calls.h"

namespace stoker::data::chain {

// The call's arguments matched to `params` by position or keyword, as Python does; null
// where not given.
std::vector<const Value*> bind(const Call& call, std::initializer_list<std::string_view> params);

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

}  // namespace stoker::data::chain
