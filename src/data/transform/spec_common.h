// What TransformSpec's reading (chain/), description and validation share: the limits and
// torchvision's defaults they compare against, the separators describe() writes and the reader
// takes, and the few words all three print. Internal to stoker_data.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "stoker/data/transform.h"

namespace stoker::data::spec {

inline constexpr int kMaxSize = 8192;
inline constexpr std::array<float, 3> kImagenetMean{0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImagenetStd{0.229f, 0.224f, 0.225f};
inline constexpr double kDefaultScaleMin = 0.08;
inline constexpr double kDefaultScaleMax = 1.0;
inline constexpr double kDefaultRatioMin = 3.0 / 4.0;
inline constexpr double kDefaultRatioMax = 4.0 / 3.0;

// describe() joins a chain with these, and the chain reader takes them as separators, so
// describe()'s text parses back.
inline constexpr std::string_view kMiddleDot = "\xC2\xB7";  // U+00B7
inline constexpr std::string_view kArrow = "\xE2\x86\x92";  // U+2192

// The name of a colour operation's value argument (RandomPosterize's bits, RandomSolarize's
// threshold, RandomAdjustSharpness's sharpness_factor); null for those with none.
const char* color_op_value_name(ColorOp op);
// The first colour operation `spec` applies, as torchvision names it; null when none.
const char* first_color_op(const TransformSpec& spec);
// "224" for a square, else "(height, width)", as torchvision's size arguments take it.
std::string size_text(int height, int width);
// The transform that gives `geometry`, as a chain names it; "output" for none.
const char* geometry_name(Geometry geometry);

}  // namespace stoker::data::spec
