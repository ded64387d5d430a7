#include "csv_fields.h"

#include <charconv>
#include <cmath>

namespace stoker::data {

void skip_byte_order_mark(std::istream& in) {
  char mark[3] = {};
  if (in.read(mark, 3) && mark[0] == '\xEF' && mark[1] == '\xBB' && mark[2] == '\xBF') return;
  in.clear();
  in.seekg(0);
}

bool parse_float(const std::string& text, float* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

std::string inexact_label_error(const std::string& where, const std::string& text, float value) {
  constexpr float kLargestExact = 16777216.0f;  // 2^24
  if (std::fabs(value) <= kLargestExact) return "";
  return where + ": label '" + text +
         "' is beyond 16777216 (2^24), the largest whole number a float32 target holds exactly, so it "
         "would be read as another class; number the classes 0, 1, 2, ..., or give --task regression "
         "for quantities";
}

std::string target_cell_error(const std::string& where, const std::string& what, const std::string& text,
                              float* value) {
  if (!parse_float(text, value)) {
    return where + ": " + what + " is " + (text.empty() ? "empty" : "'" + text + "'") +
           "; every target must be a number (fill or drop missing values)";
  }
  if (!std::isfinite(*value)) {
    return where + ": " + what + " is '" + text + "'; targets must be finite numbers (fill or drop the row)";
  }
  return "";
}

bool is_integer_text(const std::string& text) {
  if (text.empty()) return false;
  size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

}  // namespace stoker::data
