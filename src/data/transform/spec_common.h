// What TransformSpec's reading (chain/), its transforms (ops/), description and validation
// share: the limits and torchvision's defaults they compare against, the separators describe()
// writes and the reader takes, the few words all of them print, and the pieces of text and
// checks several transforms use. Internal to stoker_data; free functions, no state.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data::spec {

inline constexpr int kMaxSize = 8192;
// Normalize's defaults (NormalizeSpec's): ImageNet's statistics.
inline constexpr std::array<float, 3> kImagenetMean = NormalizeSpec{}.mean;
inline constexpr std::array<float, 3> kImagenetStd = NormalizeSpec{}.std;

// describe() joins a chain with these, and the chain reader takes them as separators, so
// describe()'s text parses back.
inline constexpr std::string_view kMiddleDot = "\xC2\xB7";  // U+00B7
inline constexpr std::string_view kArrow = "\xE2\x86\x92";  // U+2192

// "224" for a square, else "(height, width)", as torchvision's size arguments take it.
std::string size_text(int height, int width);
// The transform that gives `geometry`, as a chain names it; "output" for none.
const char* geometry_name(Geometry geometry);

// describe()'s pieces (transform_describe.cpp).
// A range as torchvision's arguments take it: d for (-d, d), else (min, max).
std::string range_text(double lo, double hi);
// `transform` inside RandomApply when it runs on a share of the samples only (apply_p < 1).
std::string applied_text(const std::string& transform, double apply_p);
// "(a, b, c)".
std::string triple_text(const std::array<float, 3>& v);
// Whether a RandomChoice or RandomOrder holds `step` (it then writes the step in its list).
bool grouped(const TransformSpec& spec, Step step);
// A step's piece of describe(): `text` (nothing when empty: the step is off), inside RandomApply
// when apply_p < 1; nothing when a RandomChoice or RandomOrder holds the step.
void push_step(std::vector<std::string>* parts, const TransformSpec& spec, Step step, const std::string& text,
               double apply_p = 1);

// validate()'s common checks (transform_validate.cpp), each a UsageError naming `transform`.
// "{transform} p must be in [0, 1] (got p)".
void check_probability(const char* transform, double p);
// RandomApply's p around `transform`: "RandomApply p must be in [0, 1] (got p, around T)".
void check_apply_p(const char* transform, double p);
// Pixel values in [0, 255]: "{transform} fill must be pixel values in [0, 255] (got f)".
void check_fill(const char* transform, const std::array<float, 3>& fill);

}  // namespace stoker::data::spec
