// TransformSpec::describe / validate and parse_transforms.
//
// The parser works in two steps: a small recursive-descent reader turns the text into calls
// (name, positional and keyword arguments whose values are numbers, words or nested tuples),
// then each call is bound to its parameters the way Python binds a call and applied to the
// spec. Messages quote what the user wrote.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/suggest.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

constexpr int kMaxSize = 8192;
constexpr std::array<float, 3> kImagenetMean{0.485f, 0.456f, 0.406f};
constexpr std::array<float, 3> kImagenetStd{0.229f, 0.224f, 0.225f};
constexpr double kDefaultScaleMin = 0.08;
constexpr double kDefaultScaleMax = 1.0;
constexpr double kDefaultRatioMin = 3.0 / 4.0;
constexpr double kDefaultRatioMax = 4.0 / 3.0;

// describe() joins with these, so its output parses back.
constexpr std::string_view kMiddleDot = "\xC2\xB7";  // U+00B7
constexpr std::string_view kArrow = "\xE2\x86\x92";  // U+2192

constexpr std::array<std::string_view, 37> kKnownNames{"RandomResizedCrop",
                                                       "RandomCrop",
                                                       "Resize",
                                                       "CenterCrop",
                                                       "RandomHorizontalFlip",
                                                       "RandomVerticalFlip",
                                                       "RandomRotation",
                                                       "RandomAffine",
                                                       "RandomApply",
                                                       "TrivialAugmentWide",
                                                       "RandAugment",
                                                       "AutoAugment",
                                                       "AugMix",
                                                       "ColorJitter",
                                                       "RandomErasing",
                                                       "Normalize",
                                                       "Grayscale",
                                                       "RandomGrayscale",
                                                       "GaussianBlur",
                                                       "RandomInvert",
                                                       "RandomPosterize",
                                                       "RandomSolarize",
                                                       "RandomAdjustSharpness",
                                                       "RandomAutocontrast",
                                                       "RandomEqualize",
                                                       "ToTensor",
                                                       "PILToTensor",
                                                       "ToImage",
                                                       "ConvertImageDtype",
                                                       "ToDtype",
                                                       "ToUint8",
                                                       "Float16",
                                                       "Float32",
                                                       "NCHW",
                                                       "NHWC",
                                                       "none",
                                                       "Standardize"};

// ---------------------------------------------------------------------------------------
// describe

// A range as torchvision's arguments take it: d for (-d, d), else (min, max).
std::string range_text(double lo, double hi) {
  return lo == -hi && hi >= 0 ? fmt::format("{}", hi) : fmt::format("({}, {})", lo, hi);
}

// `transform` inside RandomApply when it runs on a share of the samples only.
std::string applied_text(const std::string& transform, double apply_p) {
  return apply_p == 1 ? transform : fmt::format("RandomApply([{}], p={})", transform, apply_p);
}

std::string affine_text(const AffineSpec& a) {
  std::string s = "RandomAffine(" + range_text(a.min_degrees, a.max_degrees);
  if (a.translate) s += fmt::format(", translate=({}, {})", a.translate_x, a.translate_y);
  if (a.scale) s += fmt::format(", scale=({}, {})", a.scale_min, a.scale_max);
  if (a.shear_y) {
    s += fmt::format(", shear=({}, {}, {}, {})", a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max);
  } else if (a.shear) {
    s += ", shear=" + range_text(a.shear_x_min, a.shear_x_max);
  }
  if (a.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
  if (a.fill != std::array<float, 3>{0, 0, 0}) s += fmt::format(", fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]);
  return s + ")";
}

// The argument RandomPosterize, RandomSolarize and RandomAdjustSharpness take before p.
const char* color_op_value_name(ColorOp op) {
  switch (op) {
    case ColorOp::kPosterize:
      return "bits";
    case ColorOp::kSolarize:
      return "threshold";
    case ColorOp::kAdjustSharpness:
      return "sharpness_factor";
    default:
      return nullptr;
  }
}

// The first colour operation that is on (its name), or null.
const char* first_color_op(const TransformSpec& spec) {
  for (size_t i = 0; i < spec.color_ops.size(); ++i) {
    if (spec.color_ops[i].enabled()) return to_string(static_cast<ColorOp>(i));
  }
  return nullptr;
}

std::string color_op_text(ColorOp op, const ColorOpSpec& c) {
  return color_op_value_name(op) ? fmt::format("{}({}, p={})", to_string(op), c.value, c.p)
                                 : fmt::format("{}(p={})", to_string(op), c.p);
}

std::string size_text(int height, int width) {
  return height == width ? fmt::format("{}", height) : fmt::format("({}, {})", height, width);
}

std::string triple_text(const std::array<float, 3>& v) {
  return fmt::format("({}, {}, {})", v[0], v[1], v[2]);
}

const char* geometry_name(Geometry geometry) {
  switch (geometry) {
    case Geometry::kRandomResizedCrop:
      return "RandomResizedCrop";
    case Geometry::kResizeCenterCrop:
    case Geometry::kCenterCrop:
      return "CenterCrop";
    case Geometry::kRandomCrop:
      return "RandomCrop";
    case Geometry::kNone:
      break;
  }
  return "output";
}

const char* policy_name(AutoAugmentPolicy policy) {
  switch (policy) {
    case AutoAugmentPolicy::kCifar10:
      return "cifar10";
    case AutoAugmentPolicy::kSvhn:
      return "svhn";
    case AutoAugmentPolicy::kImageNet:
      break;
  }
  return "imagenet";
}

// The arguments that differ from torchvision's defaults, e.g. "RandAugment(magnitude=5)".
std::string auto_augment_text(const AutoAugmentSpec& a) {
  const AutoAugmentSpec defaults;
  std::vector<std::string> args;
  if (a.kind == AutoAugmentKind::kAutoAugment && a.policy != defaults.policy) {
    args.push_back(fmt::format("policy={}", policy_name(a.policy)));
  }
  if (a.kind == AutoAugmentKind::kRandAugment) {
    if (a.num_ops != defaults.num_ops) args.push_back(fmt::format("num_ops={}", a.num_ops));
    if (a.magnitude != defaults.magnitude) args.push_back(fmt::format("magnitude={}", a.magnitude));
  }
  const bool mix = a.kind == AutoAugmentKind::kAugMix;
  if (mix) {
    if (a.severity != defaults.severity) args.push_back(fmt::format("severity={}", a.severity));
    if (a.mixture_width != defaults.mixture_width) args.push_back(fmt::format("mixture_width={}", a.mixture_width));
    if (a.chain_depth != defaults.chain_depth) args.push_back(fmt::format("chain_depth={}", a.chain_depth));
    if (a.alpha != defaults.alpha) args.push_back(fmt::format("alpha={}", a.alpha));
    if (!a.all_ops) args.emplace_back("all_ops=False");
  }
  if (a.kind != AutoAugmentKind::kAutoAugment && !mix && a.num_magnitude_bins != defaults.num_magnitude_bins) {
    args.push_back(fmt::format("num_magnitude_bins={}", a.num_magnitude_bins));
  }
  // Each one's default: bilinear for AugMix, nearest for the others.
  if ((a.interpolation == Interpolation::kBilinear) != mix) {
    args.push_back(fmt::format("interpolation={}", mix ? "nearest" : "bilinear"));
  }
  if (a.has_fill) args.push_back(fmt::format("fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]));
  return fmt::format("{}({})", to_string(a.kind), fmt::join(args, ", "));
}

// "RandomCrop(32, padding=4)": the arguments that differ from torchvision's defaults.
std::string random_crop_text(int height, int width, const PadSpec& pad) {
  std::string s = "RandomCrop(" + size_text(height, width);
  if (pad.left == pad.right && pad.top == pad.bottom) {
    if (pad.left == pad.top && pad.left > 0) {
      s += fmt::format(", padding={}", pad.left);
    } else if (pad.left != pad.top) {
      s += fmt::format(", padding=({}, {})", pad.left, pad.top);
    }
  } else {
    s += fmt::format(", padding=({}, {}, {}, {})", pad.left, pad.top, pad.right, pad.bottom);
  }
  if (pad.if_needed) s += ", pad_if_needed=True";
  if (pad.fill != PadSpec{}.fill) {
    s += fmt::format(", fill={}", pad.fill[0] == pad.fill[1] && pad.fill[1] == pad.fill[2]
                                      ? fmt::format("{}", pad.fill[0])
                                      : triple_text(pad.fill));
  }
  if (pad.mode != PaddingMode::kConstant) s += fmt::format(", padding_mode={}", to_string(pad.mode));
  return s + ")";
}

std::string erasing_text(const RandomErasingSpec& e) {
  const RandomErasingSpec defaults;
  std::string s = fmt::format("RandomErasing(p={}", e.p);
  if (e.scale_min != defaults.scale_min || e.scale_max != defaults.scale_max) {
    s += fmt::format(", scale=({}, {})", e.scale_min, e.scale_max);
  }
  if (e.ratio_min != defaults.ratio_min || e.ratio_max != defaults.ratio_max) {
    s += fmt::format(", ratio=({}, {})", e.ratio_min, e.ratio_max);
  }
  if (e.random_value) {
    s += ", value=random";
  } else if (e.value != defaults.value) {
    s += fmt::format(", value={}", e.value[0] == e.value[1] && e.value[1] == e.value[2]
                                       ? fmt::format("{}", e.value[0])
                                       : triple_text(e.value));
  }
  return s + ")";
}

// ---------------------------------------------------------------------------------------
// Reading the text into calls.

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

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E';
}

// A transform's name without the module path Python may write before it: transforms.Resize,
// T.Resize and v2.Resize are Resize.
std::string transform_name(std::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return std::string(dot == std::string_view::npos ? dotted : dotted.substr(dot + 1));
}

class ChainReader {
 public:
  // Brackets nested deeper than this in one argument are refused.
  static constexpr int kMaxNesting = 8;

  explicit ChainReader(std::string_view text) : text_(text) {}

  std::vector<Call> read() {
    std::vector<Call> calls;
    while (true) {
      skip_space_and_separators();
      if (at_end()) break;
      if (peek() == '[') {  // a Python list, as pasted from Compose([...])
        const Value list = value("the list");
        for (const Value& item : list.items) append(item, "the list", &calls);
      } else {
        append(call(), &calls);
      }
      // Items are separated by ',', ';', '·', '→' or just whitespace ("float32 NCHW").
      const size_t before = pos_;
      skip_space();
      if (!at_end() && !at_separator() && (pos_ == before || !is_ident_start(peek()))) {
        fail(fmt::format("expected ',' after '{}'", calls.empty() ? std::string("[]") : calls.back().text));
      }
    }
    return calls;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }
  size_t separator_length() const {
    const std::string_view rest = text_.substr(pos_);
    if (rest.empty()) return 0;
    if (rest[0] == ',' || rest[0] == ';') return 1;
    if (rest.starts_with(kMiddleDot)) return kMiddleDot.size();
    if (rest.starts_with(kArrow)) return kArrow.size();
    return 0;
  }
  bool at_separator() const { return separator_length() > 0; }
  void skip_space_and_separators() {
    skip_space();
    while (size_t n = separator_length()) {
      pos_ += n;
      skip_space();
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(fmt::format("{} in transform chain '{}'", what, text_));
  }

  // A call, or a Compose([...]) as the transforms of its list, in order.
  void append(const Call& c, std::vector<Call>* calls) const {
    if (c.name != "Compose") {
      calls->push_back(c);
      return;
    }
    const bool one_list = c.args.size() == 1 && (c.args[0].keyword.empty() || c.args[0].keyword == "transforms") &&
                          c.args[0].value.kind == Value::Kind::kTuple;
    if (!one_list) {
      fail(fmt::format("Compose takes one list of transforms, e.g. Compose([Resize(256), CenterCrop(224)]) (got '{}')",
                       c.text));
    }
    for (const Value& item : c.args[0].value.items) append(item, "Compose", calls);
  }
  void append(const Value& item, std::string_view where, std::vector<Call>* calls) const {
    if (item.kind == Value::Kind::kCall) {
      append(*item.call, calls);
    } else if (item.kind == Value::Kind::kWord) {  // a transform without parentheses
      calls->push_back(Call{transform_name(item.text), item.text, {}});
    } else {
      fail(fmt::format("{} holds '{}', which is not a transform", where, item.text));
    }
  }

  std::string_view identifier() {
    const size_t start = pos_;
    while (!at_end() && is_ident_char(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Words joined by dots, as Python's attribute access: torchvision.transforms.Resize.
  std::string dotted_identifier() {
    const size_t start = pos_;
    identifier();
    while (peek() == '.' && pos_ + 1 < text_.size() && is_ident_start(text_[pos_ + 1])) {
      ++pos_;
      identifier();
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  Call call() {
    const size_t start = pos_;
    Call result;
    if (!is_ident_start(peek())) {
      const size_t end = std::min(text_.find_first_of(",;() ", pos_ + 1), text_.size());
      fail(fmt::format("expected a transform name, got '{}'", text_.substr(pos_, end - pos_)));
    }
    result.name = transform_name(dotted_identifier());
    if (result.name == "Lambda") {
      throw UsageError(
          "Lambda runs Python code, which stoker's C++ workers cannot; leave it out of the chain and apply it to the "
          "batch in the model, or use the transforms stoker knows");
    }
    const size_t after_name = pos_;
    skip_space();
    if (peek() != '(') {
      pos_ = after_name;
      result.text = result.name;
      return result;
    }
    ++pos_;
    const Nesting nested(this, result.name);
    skip_space();
    if (peek() == ')') {
      ++pos_;
    } else {
      while (true) {
        result.args.push_back(argument(result.name));
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
          if (peek() == ')') {  // trailing comma, as Python allows
            ++pos_;
            break;
          }
          continue;
        }
        if (peek() == ')') {
          ++pos_;
          break;
        }
        if (at_end()) fail(fmt::format("missing ')' after the arguments of {}", result.name));
        fail(fmt::format("expected ',' or ')' in the arguments of {} at '{}'", result.name,
                         text_.substr(pos_)));
      }
    }
    result.text = text_.substr(start, pos_ - start);
    return result;
  }

  Arg argument(std::string_view call_name) {
    skip_space();
    Arg arg;
    const size_t start = pos_;
    if (is_ident_start(peek())) {
      const std::string_view word = identifier();
      skip_space();
      if (peek() == '=') {
        ++pos_;
        arg.keyword = word;
      } else {
        pos_ = start;
      }
    }
    arg.value = value(call_name);
    return arg;
  }

  // One level of brackets (a call's arguments, a tuple, a list) for as long as it lives. The
  // reader recurses once per level: the bound keeps it off the end of the stack whatever the
  // text (a pasted Compose nests 4 deep: [RandomApply([ColorJitter(0.4)])]).
  class Nesting {
   public:
    Nesting(ChainReader* reader, std::string_view call_name) : reader_(reader) {
      if (++reader_->depth_ > kMaxNesting) {
        reader_->fail(fmt::format("the arguments of {} nest more than {} brackets deep", call_name, kMaxNesting));
      }
    }
    ~Nesting() { --reader_->depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    ChainReader* reader_;
  };

  Value value(std::string_view call_name) {
    skip_space();
    const size_t start = pos_;
    Value v;
    const char c = peek();
    if (c == '(' || c == '[') {
      const Nesting nested(this, call_name);
      const char close = c == '(' ? ')' : ']';
      v.kind = Value::Kind::kTuple;
      ++pos_;
      skip_space();
      while (peek() != close) {
        v.items.push_back(value(call_name));
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
        } else if (peek() != close) {
          if (at_end()) fail(fmt::format("missing '{}' in the arguments of {}", close, call_name));
          fail(fmt::format("expected ',' or '{}' in the arguments of {} at '{}'", close, call_name,
                           text_.substr(pos_)));
        }
      }
      ++pos_;
    } else if (c == '\'' || c == '"') {
      // A Python string: a word, without its quotes ('reflect').
      const size_t close = text_.find(c, pos_ + 1);
      if (close == std::string_view::npos) {
        fail(fmt::format("missing closing {} in the arguments of {}", c, call_name));
      }
      v.kind = Value::Kind::kWord;
      v.text = text_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
      return v;
    } else if (is_ident_start(c)) {
      // Dotted words too, as Python's enums: InterpolationMode.BILINEAR, torch.float32.
      dotted_identifier();
      const size_t after_word = pos_;
      skip_space();
      if (peek() == '(') {  // a transform: RandomApply([ColorJitter(0.4)], p=0.8)
        pos_ = start;
        v.kind = Value::Kind::kCall;
        v.call = std::make_shared<const Call>(call());
        v.text = v.call->text;
        return v;
      }
      pos_ = after_word;
      v.kind = Value::Kind::kWord;
    } else if (is_number_char(c)) {
      // Take letters too, so that "1.x" is reported whole as a bad number.
      while (!at_end() && (is_number_char(peek()) || is_ident_char(peek()))) ++pos_;
      const std::string_view digits = text_.substr(start, pos_ - start);
      const char* first = digits.data() + (digits.starts_with('+') ? 1 : 0);
      const char* last = digits.data() + digits.size();
      const auto [end, ec] = std::from_chars(first, last, v.number);
      v.kind = (ec == std::errc() && end == last) ? Value::Kind::kNumber : Value::Kind::kBadNumber;
    } else if (at_end()) {
      fail(fmt::format("missing ')' after the arguments of {}", call_name));
    } else {
      fail(fmt::format("unexpected '{}' in the arguments of {}", c, call_name));
    }
    v.text = text_.substr(start, pos_ - start);
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;  // brackets open (Nesting)
};

// ---------------------------------------------------------------------------------------
// Binding arguments and converting values.

[[noreturn]] void unknown_transform(std::string_view name) {
  std::string known;
  for (const std::string_view k : kKnownNames) {
    if (!known.empty()) known += ", ";
    known += k;
  }
  std::string message = fmt::format("unknown transform '{}' (known: {})", name, known);
  const std::string_view best = closest(name, kKnownNames);
  if (!best.empty()) message += fmt::format("; did you mean '{}'?", best);
  throw UsageError(message);
}

// The call's arguments matched to `params` by position or keyword, as Python does; null
// where not given.
std::vector<const Value*> bind(const Call& call, std::initializer_list<std::string_view> params) {
  const std::vector<std::string_view> names(params);
  std::vector<const Value*> bound(names.size(), nullptr);
  size_t positional = 0;
  for (const Arg& arg : call.args) {
    size_t index = 0;
    if (arg.keyword.empty()) {
      if (positional >= names.size()) {
        if (names.empty()) {
          throw UsageError(fmt::format("{} takes no arguments (got '{}')", call.name, call.text));
        }
        throw UsageError(fmt::format("{} takes at most {} positional argument{} (got '{}')",
                                     call.name, names.size(), names.size() == 1 ? "" : "s",
                                     call.text));
      }
      index = positional++;
    } else {
      const auto it = std::find(names.begin(), names.end(), arg.keyword);
      if (it == names.end()) {
        std::string known;
        for (const std::string_view n : names)
          known += (known.empty() ? "" : ", ") + std::string(n);
        throw UsageError(fmt::format("{} has no argument '{}' (known: {})", call.name, arg.keyword,
                                     known.empty() ? "none" : known));
      }
      index = static_cast<size_t>(it - names.begin());
    }
    if (bound[index] != nullptr) {
      throw UsageError(
          fmt::format("{} got more than one value for argument '{}'", call.name, names[index]));
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

// An int in 1..kMaxSize.
int to_size(const Call& call, std::string_view param, const Value& v) {
  const double x = to_number(call, param, v);
  if (std::floor(x) != x) {
    throw UsageError(
        fmt::format("{} {} must be a whole number of pixels (got '{}')", call.name, param, v.text));
  }
  if (x < 1 || x > kMaxSize) {
    throw UsageError(
        fmt::format("{} {} must be in 1..{} (got {})", call.name, param, kMaxSize, v.text));
  }
  return static_cast<int>(x);
}

// torchvision's size: an int (square) or a sequence (h, w) or (s,). Returns {h, w}.
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
    throw UsageError(fmt::format("{} {} must be an integer or (height, width) (got '{}')",
                                 call.name, param, v.text));
  }
  return {to_size(call, param, v.items[0]), to_size(call, param, v.items[1])};
}

std::array<double, 2> to_range(const Call& call, std::string_view param, const Value& v) {
  if (v.kind != Value::Kind::kTuple || v.items.size() != 2) {
    throw UsageError(
        fmt::format("{} {} must be a pair (min, max) (got '{}')", call.name, param, v.text));
  }
  return {to_number(call, param, v.items[0]), to_number(call, param, v.items[1])};
}

// Per-channel values: (a, b, c), or one value (a,) / a for every channel.
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
    throw UsageError(fmt::format("{} {} must have 1 or 3 values, one per channel (got '{}')",
                                 call.name, param, v.text));
  }
  return {static_cast<float>(to_number(call, param, v.items[0])),
          static_cast<float>(to_number(call, param, v.items[1])),
          static_cast<float>(to_number(call, param, v.items[2]))};
}

// ---------------------------------------------------------------------------------------
// Applying calls to a spec. The chain always runs in the fixed order of transform.h, so the
// order of the calls does not matter; what does is that each thing is said once.

class ChainBuilder {
 public:
  ChainBuilder() {
    // Nothing asked for, nothing done: no geometry (output = source size, filled in by the
    // pipeline), no flip, no jitter, no Normalize; float32 NCHW like ToTensor.
    spec_.geometry = Geometry::kNone;
    spec_.out_width = 0;
    spec_.out_height = 0;
  }

  void apply(const Call& call) {
    // Each transform once; RandomApply may wrap several (its transform is checked inside).
    if (call.name != "RandomApply" && !seen_.insert(call.name).second) {
      throw UsageError(fmt::format("{} appears twice in the transform chain", call.name));
    }
    const std::string& n = call.name;
    if (n == "RandomResizedCrop") {
      random_resized_crop(call);
    } else if (n == "RandomCrop") {
      random_crop(call);
    } else if (n == "Resize") {
      resize(call);
    } else if (n == "CenterCrop") {
      center_crop(call);
    } else if (n == "RandomHorizontalFlip") {
      spec_.flip_p = probability(call, 0.5);
    } else if (n == "RandomVerticalFlip") {
      spec_.vflip_p = probability(call, 0.5);
    } else if (n == "GaussianBlur") {
      gaussian_blur(call);
    } else if (n == "RandomRotation") {
      random_rotation(call);
    } else if (n == "RandomAffine") {
      random_affine(call);
    } else if (n == "RandomApply") {
      random_apply(call);
    } else if (n == "RandomGrayscale") {
      spec_.grayscale_p = probability(call, 0.1);
    } else if (const std::optional<ColorOp> op = color_op_named(n)) {
      color_op(call, *op);
    } else if (n == "TrivialAugmentWide" || n == "RandAugment" || n == "AutoAugment" || n == "AugMix") {
      auto_augment(call);
    } else if (n == "RandomErasing") {
      random_erasing(call);
    } else if (n == "ColorJitter") {
      color_jitter(call);
    } else if (n == "Normalize") {
      normalize(call);
    } else if (n == "Grayscale") {
      const auto args = bind(call, {"num_output_channels"});
      if (args[0] && to_number(call, "num_output_channels", *args[0]) != 1) {
        throw UsageError(fmt::format(
            "Grayscale num_output_channels must be 1 (got {}); stoker's Grayscale gives one "
            "channel",
            args[0]->text));
      }
      spec_.channels = 1;
    } else if (n == "ToTensor") {
      bind(call, {});  // float32 in [0, 1], NCHW: what the output is unless the chain says otherwise
    } else if (n == "PILToTensor" || n == "ToImage") {
      bind(call, {});
      uint8_by_ = call.name;  // uint8 unless a ConvertImageDtype / ToDtype follows
    } else if (n == "ConvertImageDtype" || n == "ToDtype") {
      convert_dtype(call);
    } else if (n == "ToUint8" || n == "uint8") {
      set_dtype(call, DType::kUint8);
    } else if (n == "Float16" || n == "float16") {
      set_dtype(call, DType::kFloat16);
    } else if (n == "Float32" || n == "float32") {
      set_dtype(call, DType::kFloat32);
    } else if (n == "NCHW" || n == "NHWC") {
      bind(call, {});
      if (!layout_by_.empty()) {
        throw UsageError(
            fmt::format("{} and {} both set the output layout; give one", layout_by_, call.name));
      }
      layout_by_ = call.name;
      spec_.layout = n == "NCHW" ? Layout::kNCHW : Layout::kNHWC;
    } else if (n == "Standardize") {
      bind(call, {});
      spec_.standardize = true;
    } else if (n == "none") {
      bind(call, {});
      claim_geometry(call);
      spec_.geometry = Geometry::kNone;
    } else {
      unknown_transform(n);
    }
  }

  TransformSpec finish() {
    if (!uint8_by_.empty() && dtype_by_.empty()) spec_.dtype = DType::kUint8;
    if (resize_.enabled()) {
      if (geometry_by_ == "none") {
        throw UsageError(fmt::format("{} resizes and 'none' keeps the source's size; give one of the two",
                                     resize_by_));
      }
      spec_.resize = resize_;
    }
    if (crop_[0] > 0 && !crop_resizes_ && !resize_.enabled()) {
      spec_.geometry = Geometry::kCenterCrop;
      spec_.out_height = crop_[0];
      spec_.out_width = crop_[1];
    } else if (crop_[0] > 0) {  // after a Resize, CenterCrop(m) and CenterCrop(m, resize=False) agree
      spec_.geometry = Geometry::kResizeCenterCrop;
      spec_.out_height = crop_[0];
      spec_.out_width = crop_[1];
      // A CenterCrop alone resizes the shorter side to the crop size first (to its larger
      // side for a non-square crop, so that the crop fits).
      if (!resize_.enabled()) spec_.resize.shorter = std::max(crop_[0], crop_[1]);
    } else if (resize_.enabled() && geometry_by_.empty()) {  // Resize alone
      if (resize_.shorter > 0) {
        throw UsageError(fmt::format(
            "{} resizes the shorter side, so images of other shapes come out in other sizes; add a crop after it "
            "(CenterCrop({}), RandomCrop({}) or RandomResizedCrop({})), or resize to one size with Resize(({}, {}))",
            resize_by_, resize_.shorter, resize_.shorter, resize_.shorter, resize_.shorter, resize_.shorter));
      }
      spec_.geometry = Geometry::kResizeCenterCrop;  // the centre crop of the whole resized image
      spec_.out_height = resize_.height;
      spec_.out_width = resize_.width;
    }
    spec_.validate();
    return spec_;
  }

 private:
  // A transform whose one argument is its probability `p` (torchvision's default otherwise).
  double probability(const Call& call, double default_p) {
    const auto args = bind(call, {"p"});
    return args[0] ? to_number(call, "p", *args[0]) : default_p;
  }

  static std::optional<ColorOp> color_op_named(const std::string& name) {
    for (int i = 0; i < kColorOps; ++i) {
      if (name == to_string(static_cast<ColorOp>(i))) return static_cast<ColorOp>(i);
    }
    return std::nullopt;
  }

  // torchvision's RandomInvert(p=0.5), RandomPosterize(bits, p=0.5), RandomSolarize(threshold,
  // p=0.5), RandomAdjustSharpness(sharpness_factor, p=0.5), RandomAutocontrast(p=0.5),
  // RandomEqualize(p=0.5).
  void color_op(const Call& call, ColorOp op) {
    ColorOpSpec& c = spec_.color_ops[static_cast<size_t>(op)];
    const char* value_name = color_op_value_name(op);
    if (value_name == nullptr) {
      c.p = probability(call, 0.5);
      return;
    }
    const auto args = bind(call, {value_name, "p"});
    if (!args[0]) {
      const char* example = op == ColorOp::kPosterize ? "4, p=0.5" : op == ColorOp::kSolarize ? "128, p=0.2" : "2, p=0.5";
      throw UsageError(fmt::format("{} needs its {}, e.g. {}({}) (got '{}')", call.name, value_name, call.name,
                                   example, call.text));
    }
    c.value = op == ColorOp::kPosterize ? to_int(call, value_name, *args[0], 0, 8)
                                        : to_number(call, value_name, *args[0]);
    c.p = args[1] ? to_number(call, "p", *args[1]) : 0.5;
  }

  // One crop (or none), after an optional Resize.
  void claim_geometry(const Call& call) {
    if (!geometry_by_.empty()) {
      throw UsageError(fmt::format(
          "{} conflicts with {}: give one of RandomResizedCrop(size), RandomCrop(size), CenterCrop(size) (each "
          "after an optional Resize) or none",
          call.name, geometry_by_));
    }
    geometry_by_ = call.name;
  }

  void random_resized_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "scale", "ratio", "interpolation", "antialias"});
    if (!args[0]) {
      throw UsageError(fmt::format(
          "RandomResizedCrop needs a size, e.g. RandomResizedCrop(224) (got '{}')", call.text));
    }
    set_resampling(call, args[3], args[4]);
    const auto [h, w] = to_size_pair(call, "size", *args[0]);
    spec_.geometry = Geometry::kRandomResizedCrop;
    spec_.out_height = h;
    spec_.out_width = w;
    spec_.scale_min = kDefaultScaleMin;
    spec_.scale_max = kDefaultScaleMax;
    spec_.ratio_min = kDefaultRatioMin;
    spec_.ratio_max = kDefaultRatioMax;
    if (args[1]) {
      const auto [lo, hi] = to_range(call, "scale", *args[1]);
      spec_.scale_min = lo;
      spec_.scale_max = hi;
    }
    if (args[2]) {
      const auto [lo, hi] = to_range(call, "ratio", *args[2]);
      spec_.ratio_min = lo;
      spec_.ratio_max = hi;
    }
  }

  // torchvision's Resize(size, interpolation, max_size, antialias): an int (or (size,)) for
  // the shorter side, (height, width) for exactly that size.
  void resize(const Call& call) {
    const auto args = bind(call, {"size", "interpolation", "max_size", "antialias"});
    if (!args[0]) {
      throw UsageError(fmt::format("Resize needs a size, e.g. Resize(256) or Resize((224, 224)) (got '{}')",
                                   call.text));
    }
    set_resampling(call, args[1], args[3]);
    resize_by_ = call.text;
    const bool pair = args[0]->kind == Value::Kind::kTuple && args[0]->items.size() != 1;
    if (pair) {
      const auto [h, w] = to_size_pair(call, "size", *args[0]);
      resize_.height = h;
      resize_.width = w;
    } else {
      resize_.shorter = to_size_pair(call, "size", *args[0])[0];
    }
    if (args[2] && !is_none(*args[2])) {
      if (pair) {
        throw UsageError(fmt::format("Resize max_size applies to an int size, the shorter side (got size {})",
                                     args[0]->text));
      }
      resize_.max_size = to_int(call, "max_size", *args[2], resize_.shorter + 1, kMaxSize);
    }
  }

  // stoker resamples with Pillow's antialiased filters, bilinear (torchvision's default on a
  // PIL image) or bicubic; the arguments that ask for one are accepted, others refused. One
  // resample makes the output, so a Resize and a RandomResizedCrop after it share their filter.
  void set_resampling(const Call& call, const Value* interpolation, const Value* antialias) {
    if (antialias && !is_none(*antialias) && !to_bool(call, "antialias", *antialias)) {
      throw UsageError(fmt::format(
          "{} antialias must be True or None (got '{}'): stoker always antialiases, as torchvision does on PIL "
          "images",
          call.name, antialias->text));
    }
    if (!interpolation) return;
    // PIL's constants (Image.BILINEAR = 2, Image.BICUBIC = 3) are what torchvision took before
    // InterpolationMode.
    const bool number = interpolation->kind == Value::Kind::kNumber;
    const std::string word = interpolation->kind == Value::Kind::kWord ? enum_word(*interpolation) : "";
    ResampleFilter filter;
    if ((number && interpolation->number == 2) || word == "bilinear") {
      filter = ResampleFilter::kBilinear;
    } else if ((number && interpolation->number == 3) || word == "bicubic") {
      filter = ResampleFilter::kBicubic;
    } else {
      throw UsageError(fmt::format(
          "{} interpolation must be bilinear or bicubic (got '{}'): stoker resamples with Pillow's antialiased "
          "bilinear or bicubic filter",
          call.name, interpolation->text));
    }
    if (!resample_by_.empty() && filter != spec_.resample) {
      throw UsageError(fmt::format(
          "{} and {} ask for different interpolations ({} and {}); stoker makes the crop in one resample, so give "
          "one",
          resample_by_, call.name, to_string(spec_.resample), to_string(filter)));
    }
    resample_by_ = call.name;
    spec_.resample = filter;
  }

  void center_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "resize"});
    if (!args[0]) {
      throw UsageError(
          fmt::format("CenterCrop needs a size, e.g. CenterCrop(224) (got '{}')", call.text));
    }
    crop_ = to_size_pair(call, "size", *args[0]);
    if (args[1]) crop_resizes_ = to_bool(call, "resize", *args[1]);
  }

  // torchvision's RandomCrop(size, padding=None, pad_if_needed=False, fill=0,
  // padding_mode='constant').
  void random_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "padding", "pad_if_needed", "fill", "padding_mode"});
    if (!args[0]) {
      throw UsageError(fmt::format("RandomCrop needs a size, e.g. RandomCrop(32, padding=4) (got '{}')", call.text));
    }
    const auto [h, w] = to_size_pair(call, "size", *args[0]);
    spec_.geometry = Geometry::kRandomCrop;
    spec_.out_height = h;
    spec_.out_width = w;
    PadSpec& pad = spec_.pad;
    pad = PadSpec{};
    if (args[1] && !is_none(*args[1])) padding(call, *args[1]);
    if (args[2]) pad.if_needed = to_bool(call, "pad_if_needed", *args[2]);
    if (args[3]) pad.fill = to_channels(call, "fill", *args[3]);
    if (args[4]) {
      const std::string mode = to_word(call, "padding_mode", *args[4], {"constant", "edge", "reflect", "symmetric"});
      pad.mode = mode == "edge"      ? PaddingMode::kEdge
                 : mode == "reflect" ? PaddingMode::kReflect
                 : mode == "symmetric" ? PaddingMode::kSymmetric
                                       : PaddingMode::kConstant;
    }
  }

  // An int for every side, (left/right, top/bottom) or (left, top, right, bottom), as
  // torchvision's padding.
  void padding(const Call& call, const Value& v) {
    const auto side = [&](const Value& x) { return to_int(call, "padding", x, 0, kMaxSize); };
    PadSpec& pad = spec_.pad;
    if (v.kind != Value::Kind::kTuple) {
      pad.left = pad.top = pad.right = pad.bottom = side(v);
    } else if (v.items.size() == 1) {
      pad.left = pad.top = pad.right = pad.bottom = side(v.items[0]);
    } else if (v.items.size() == 2) {
      pad.left = pad.right = side(v.items[0]);
      pad.top = pad.bottom = side(v.items[1]);
    } else if (v.items.size() == 4) {
      pad.left = side(v.items[0]);
      pad.top = side(v.items[1]);
      pad.right = side(v.items[2]);
      pad.bottom = side(v.items[3]);
    } else {
      throw UsageError(fmt::format(
          "RandomCrop padding must be an int, (left/right, top/bottom) or (left, top, right, bottom) (got '{}')",
          v.text));
    }
  }

  static bool is_none(const Value& v) { return v.kind == Value::Kind::kWord && v.text == "None"; }

  // Python's True / False (and true / false, 1 / 0).
  static bool to_bool(const Call& call, std::string_view param, const Value& v) {
    if (v.kind == Value::Kind::kWord && (v.text == "True" || v.text == "true")) return true;
    if (v.kind == Value::Kind::kWord && (v.text == "False" || v.text == "false")) return false;
    if (v.kind == Value::Kind::kNumber && (v.number == 0 || v.number == 1)) return v.number == 1;
    throw UsageError(fmt::format("{} {} must be True or False (got '{}')", call.name, param, v.text));
  }

  // A whole number in [lo, hi].
  static int to_int(const Call& call, std::string_view param, const Value& v, int lo, int hi) {
    const double x = to_number(call, param, v);
    if (std::floor(x) != x || x < lo || x > hi) {
      throw UsageError(fmt::format("{} {} must be a whole number in {}..{} (got '{}')", call.name, param, lo, hi, v.text));
    }
    return static_cast<int>(x);
  }

  // A word as a Python enum's member name, lower case: InterpolationMode.BILINEAR and
  // AutoAugmentPolicy.IMAGENET are read as bilinear and imagenet.
  static std::string enum_word(const Value& v) {
    std::string word = v.text;
    if (const size_t dot = word.rfind('.'); v.kind == Value::Kind::kWord && dot != std::string::npos) {
      word = word.substr(dot + 1);
    }
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    return word;
  }

  // The warps' interpolation: nearest or bilinear (InterpolationMode.NEAREST / .BILINEAR).
  static Interpolation to_interpolation(const Call& call, const Value& v) {
    return to_word(call, "interpolation", v, {"nearest", "bilinear"}) == "bilinear" ? Interpolation::kBilinear
                                                                                    : Interpolation::kNearest;
  }

  // A word out of `allowed`, read by enum_word.
  static std::string to_word(const Call& call, std::string_view param, const Value& v,
                             std::initializer_list<std::string_view> allowed) {
    const std::string word = enum_word(v);
    for (const std::string_view a : allowed) {
      if (v.kind == Value::Kind::kWord && word == a) return word;
    }
    throw UsageError(fmt::format("{} {} must be one of {} (got '{}')", call.name, param, fmt::join(allowed, ", "),
                                 v.text));
  }

  void auto_augment(const Call& call) {
    if (!auto_augment_by_.empty()) {
      throw UsageError(fmt::format(
          "{} conflicts with {}: give one automatic augmentation (TrivialAugmentWide, RandAugment, AutoAugment or "
          "AugMix)",
          call.name, auto_augment_by_));
    }
    auto_augment_by_ = call.name;
    AutoAugmentSpec& a = spec_.auto_augment;
    std::vector<const Value*> args;
    if (call.name == "TrivialAugmentWide") {
      a.kind = AutoAugmentKind::kTrivialAugmentWide;
      args = bind(call, {"num_magnitude_bins", "interpolation", "fill"});
    } else if (call.name == "RandAugment") {
      a.kind = AutoAugmentKind::kRandAugment;
      const auto all = bind(call, {"num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill"});
      if (all[0]) a.num_ops = to_int(call, "num_ops", *all[0], 0, AutoAugmentSpec::kMaxOps);
      if (all[1]) a.magnitude = to_int(call, "magnitude", *all[1], 0, 999);
      args = {all[2], all[3], all[4]};
    } else if (call.name == "AugMix") {
      a.kind = AutoAugmentKind::kAugMix;
      a.interpolation = Interpolation::kBilinear;  // AugMix's default
      const auto all = bind(call, {"severity", "mixture_width", "chain_depth", "alpha", "all_ops", "interpolation",
                                   "fill"});
      if (all[0]) a.severity = to_int(call, "severity", *all[0], 1, 10);
      if (all[1]) a.mixture_width = to_int(call, "mixture_width", *all[1], 1, AutoAugmentSpec::kMaxChains);
      if (all[2]) a.chain_depth = to_int(call, "chain_depth", *all[2], -1, AutoAugmentSpec::kMaxDepth);  // 0: validate()
      if (all[3]) a.alpha = to_number(call, "alpha", *all[3]);
      if (all[4]) a.all_ops = to_bool(call, "all_ops", *all[4]);
      args = {nullptr, all[5], all[6]};
    } else {
      a.kind = AutoAugmentKind::kAutoAugment;
      const auto all = bind(call, {"policy", "interpolation", "fill"});
      if (all[0]) {
        const std::string policy = to_word(call, "policy", *all[0], {"imagenet", "cifar10", "svhn"});
        a.policy = policy == "cifar10" ? AutoAugmentPolicy::kCifar10
                   : policy == "svhn"  ? AutoAugmentPolicy::kSvhn
                                       : AutoAugmentPolicy::kImageNet;
      }
      args = {nullptr, all[1], all[2]};
    }
    if (args[0]) a.num_magnitude_bins = to_int(call, "num_magnitude_bins", *args[0], 2, 1000);
    if (args[1]) {
      a.interpolation = to_interpolation(call, *args[1]);
    }
    if (args[2] && !is_none(*args[2])) {
      a.has_fill = true;
      a.fill = to_channels(call, "fill", *args[2]);
    }
  }

  // torchvision's GaussianBlur(kernel_size, sigma=(0.1, 2.0)): an int or (kx, ky), odd; a
  // sigma or (min, max).
  void gaussian_blur(const Call& call) {
    const auto args = bind(call, {"kernel_size", "sigma"});
    if (!args[0]) {
      throw UsageError(fmt::format("GaussianBlur needs a kernel_size, e.g. GaussianBlur(23) (got '{}')", call.text));
    }
    GaussianBlurSpec& b = spec_.blur;
    b = GaussianBlurSpec{};
    if (args[0]->kind == Value::Kind::kTuple && args[0]->items.size() == 2) {  // torchvision's (x, y)
      b.kernel_w = to_int(call, "kernel_size", args[0]->items[0], 1, kMaxSize);
      b.kernel_h = to_int(call, "kernel_size", args[0]->items[1], 1, kMaxSize);
    } else {
      b.kernel_w = b.kernel_h = to_size_pair(call, "kernel_size", *args[0])[0];
    }
    if (args[1] && args[1]->kind == Value::Kind::kTuple) {
      const auto [lo, hi] = to_range(call, "sigma", *args[1]);
      b.sigma_min = lo;
      b.sigma_max = hi;
    } else if (args[1]) {
      b.sigma_min = b.sigma_max = to_number(call, "sigma", *args[1]);
    }
  }

  // torchvision's _setup_angle: a number d >= 0 is (-d, d), a pair is (min, max).
  static std::array<double, 2> symmetric_range(const Call& call, std::string_view param, const Value& v) {
    if (v.kind == Value::Kind::kTuple) return to_range(call, param, v);
    const double d = to_number(call, param, v);
    if (d < 0) {
      throw UsageError(fmt::format("{} {} must be >= 0 for a single number (got {}); give (min, max) for a range",
                                   call.name, param, d));
    }
    return {-d, d};
  }

  // torchvision's RandomRotation(degrees, interpolation, expand, center, fill).
  void random_rotation(const Call& call) {
    const auto args = bind(call, {"degrees", "interpolation", "expand", "center", "fill"});
    if (!args[0]) {
      throw UsageError(fmt::format("RandomRotation needs degrees, e.g. RandomRotation(15) (got '{}')", call.text));
    }
    RotationSpec& r = spec_.rotation;
    r = RotationSpec{};
    std::tie(r.min_degrees, r.max_degrees) = std::tuple_cat(symmetric_range(call, "degrees", *args[0]));
    if (args[1]) {
      r.interpolation = to_interpolation(call, *args[1]);
    }
    if (args[2] && to_bool(call, "expand", *args[2])) {
      throw UsageError("RandomRotation expand=True changes the image's size; stoker's samples have one size, so "
                       "give expand=False (the default)");
    }
    if (args[3] && !is_none(*args[3])) {
      throw UsageError(fmt::format("RandomRotation center must be None, the image's centre (got '{}')",
                                   args[3]->text));
    }
    if (args[4] && !is_none(*args[4])) r.fill = to_channels(call, "fill", *args[4]);
  }

  // torchvision's RandomAffine(degrees, translate, scale, shear, interpolation, fill, center).
  void random_affine(const Call& call) {
    const auto args = bind(call, {"degrees", "translate", "scale", "shear", "interpolation", "fill", "center"});
    if (!args[0]) {
      throw UsageError(fmt::format(
          "RandomAffine needs degrees, e.g. RandomAffine(10, translate=(0.1, 0.1)) or RandomAffine(0, "
          "scale=(0.9, 1.1)) (got '{}')",
          call.text));
    }
    AffineSpec& a = spec_.affine;
    a = AffineSpec{};
    std::tie(a.min_degrees, a.max_degrees) = std::tuple_cat(symmetric_range(call, "degrees", *args[0]));
    if (args[1] && !is_none(*args[1])) {
      a.translate = true;
      std::tie(a.translate_x, a.translate_y) = std::tuple_cat(to_pair(call, "translate", *args[1], "(tx, ty)"));
    }
    if (args[2] && !is_none(*args[2])) {
      a.scale = true;
      std::tie(a.scale_min, a.scale_max) = std::tuple_cat(to_range(call, "scale", *args[2]));
    }
    if (args[3] && !is_none(*args[3])) {
      a.shear = true;
      const Value& v = *args[3];
      if (v.kind == Value::Kind::kTuple && v.items.size() == 4) {
        a.shear_y = true;
        a.shear_x_min = to_number(call, "shear", v.items[0]);
        a.shear_x_max = to_number(call, "shear", v.items[1]);
        a.shear_y_min = to_number(call, "shear", v.items[2]);
        a.shear_y_max = to_number(call, "shear", v.items[3]);
      } else if (v.kind == Value::Kind::kTuple && v.items.size() != 2) {
        throw UsageError(fmt::format(
            "RandomAffine shear must be a number, (min, max) for x or (x min, x max, y min, y max) (got '{}')",
            v.text));
      } else {
        std::tie(a.shear_x_min, a.shear_x_max) = std::tuple_cat(symmetric_range(call, "shear", v));
      }
    }
    if (args[4]) a.interpolation = to_interpolation(call, *args[4]);
    if (args[5] && !is_none(*args[5])) a.fill = to_channels(call, "fill", *args[5]);
    if (args[6] && !is_none(*args[6])) {
      throw UsageError(
          fmt::format("RandomAffine center must be None, the image's centre (got '{}')", args[6]->text));
    }
  }

  // torchvision's RandomApply(transforms, p=0.5) around one transform that has no probability
  // of its own: its spec's apply_p.
  void random_apply(const Call& call) {
    const auto args = bind(call, {"transforms", "p"});
    static constexpr std::string_view kTakes =
        "ColorJitter, GaussianBlur, RandomRotation, RandomAffine or a colour operation (RandomInvert, "
        "RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize)";
    if (!args[0] || args[0]->kind != Value::Kind::kTuple || args[0]->items.empty()) {
      throw UsageError(fmt::format(
          "RandomApply needs a list of one transform ({}), e.g. RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], "
          "p=0.8) (got '{}')",
          kTakes, call.text));
    }
    const std::vector<Value>& items = args[0]->items;
    if (items.size() > 1) {
      throw UsageError(fmt::format(
          "RandomApply takes one transform in stoker (got {}: {}); write one RandomApply per transform, knowing "
          "that each then draws its own chance where torchvision's one RandomApply draws one for all",
          items.size(), args[0]->text));
    }
    const Value& inner = items[0];
    const Call applied =
        inner.kind == Value::Kind::kCall ? *inner.call : Call{transform_name(inner.text), inner.text, {}};
    const std::string& name = applied.name;
    const double p = args[1] ? to_number(call, "p", *args[1]) : 0.5;
    if (const std::optional<ColorOp> op = color_op_named(name)) {
      // Its own coin and RandomApply's, both drawn per sample: one coin of the product, so
      // RandomApply's p is checked here; validate() sees only the product.
      apply(applied);
      if (!(p >= 0 && p <= 1)) {
        throw UsageError(fmt::format("RandomApply p must be in [0, 1] (got {}, around {})", p, name));
      }
      spec_.color_ops[static_cast<size_t>(*op)].p *= p;
      return;
    }
    double* apply_p = name == "ColorJitter"      ? &spec_.jitter.apply_p
                      : name == "GaussianBlur"   ? &spec_.blur.apply_p
                      : name == "RandomRotation" ? &spec_.rotation.apply_p
                      : name == "RandomAffine"   ? &spec_.affine.apply_p
                                                 : nullptr;
    if (apply_p == nullptr) {
      const std::string own = name == "Grayscale"                              ? "; use RandomGrayscale(p)"
                              : name == "RandomErasing" || name == "RandomGrayscale" ||
                                        name == "RandomHorizontalFlip" || name == "RandomVerticalFlip"
                                  ? fmt::format("; {} has a p of its own", name)
                                  : "";
      throw UsageError(fmt::format("RandomApply takes {} (got '{}'){}", kTakes, inner.text, own));
    }
    apply(applied);
    *apply_p = p;  // kept as given: validate() says when it is outside [0, 1]
  }

  // Two numbers, named by `shape` in the message.
  static std::array<double, 2> to_pair(const Call& call, std::string_view param, const Value& v,
                                       std::string_view shape) {
    if (v.kind != Value::Kind::kTuple || v.items.size() != 2) {
      throw UsageError(fmt::format("{} {} must be a pair {} (got '{}')", call.name, param, shape, v.text));
    }
    return {to_number(call, param, v.items[0]), to_number(call, param, v.items[1])};
  }

  void random_erasing(const Call& call) {
    const auto args = bind(call, {"p", "scale", "ratio", "value"});
    RandomErasingSpec& e = spec_.erasing;
    e = RandomErasingSpec{};
    e.p = args[0] ? to_number(call, "p", *args[0]) : 0.5;
    if (args[1]) {
      const auto [lo, hi] = to_range(call, "scale", *args[1]);
      e.scale_min = lo;
      e.scale_max = hi;
    }
    if (args[2]) {
      const auto [lo, hi] = to_range(call, "ratio", *args[2]);
      e.ratio_min = lo;
      e.ratio_max = hi;
    }
    if (args[3] && args[3]->kind == Value::Kind::kWord) {
      if (args[3]->text != "random") {
        throw UsageError(fmt::format(
            "RandomErasing value must be a number, one per channel (r, g, b), or random (got '{}')", args[3]->text));
      }
      e.random_value = true;
    } else if (args[3]) {
      e.value = to_channels(call, "value", *args[3]);
    }
  }

  void color_jitter(const Call& call) {
    const auto args = bind(call, {"brightness", "contrast", "saturation", "hue"});
    static constexpr std::array<std::string_view, 4> kNames{"brightness", "contrast", "saturation",
                                                            "hue"};
    std::array<double, 4> values{};
    for (size_t i = 0; i < 4; ++i) {
      if (!args[i]) continue;
      if (args[i]->kind == Value::Kind::kTuple) {
        throw UsageError(fmt::format(
            "ColorJitter {} must be a single number (got '{}'); ranges (min, max) are not "
            "supported",
            kNames[i], args[i]->text));
      }
      values[i] = to_number(call, kNames[i], *args[i]);
    }
    spec_.jitter = {values[0], values[1], values[2], values[3]};
  }

  void normalize(const Call& call) {
    const auto args = bind(call, {"mean", "std"});
    spec_.normalize = true;
    spec_.mean = kImagenetMean;
    spec_.std = kImagenetStd;
    if (!args[0] && !args[1]) return;
    if (args[0] && args[0]->kind == Value::Kind::kWord && !args[1]) {
      if (args[0]->text != "imagenet") {
        throw UsageError(
            fmt::format("Normalize preset must be 'imagenet' (got '{}')", args[0]->text));
      }
      return;
    }
    if (!args[0] || !args[1]) {
      throw UsageError(
          fmt::format("Normalize needs both mean and std, or 'imagenet' (got '{}')", call.text));
    }
    spec_.mean = to_channels(call, "mean", *args[0]);
    spec_.std = to_channels(call, "std", *args[1]);
  }

  // torchvision's ConvertImageDtype(dtype) and v2's ToDtype(dtype, scale=False): floats in
  // [0, 1] (scaled as ToTensor scales) or uint8.
  void convert_dtype(const Call& call) {
    const bool v2 = call.name == "ToDtype";
    const auto args = v2 ? bind(call, {"dtype", "scale"}) : bind(call, {"dtype"});
    if (!args[0]) {
      throw UsageError(fmt::format("{} needs a dtype, e.g. {}(torch.float32{}) (got '{}')", call.name, call.name,
                                   v2 ? ", scale=True" : "", call.text));
    }
    const std::string dtype = to_word(call, "dtype", *args[0], {"float", "float32", "half", "float16", "uint8"});
    const DType to = dtype == "uint8" ? DType::kUint8 : dtype == "half" || dtype == "float16" ? DType::kFloat16
                                                                                             : DType::kFloat32;
    if (v2 && to != DType::kUint8 && !(args[1] && to_bool(call, "scale", *args[1]))) {
      throw UsageError(fmt::format(
          "{} keeps pixel values 0..255 as floats without scale=True; stoker's float output is in [0, 1] as "
          "ToTensor gives it: write {}({}, scale=True)",
          call.text, call.name, args[0]->text));
    }
    claim_dtype(call, to);
  }

  void set_dtype(const Call& call, DType dtype) {
    bind(call, {});
    claim_dtype(call, dtype);
  }
  void claim_dtype(const Call& call, DType dtype) {
    if (!dtype_by_.empty()) {
      throw UsageError(
          fmt::format("{} and {} both set the output type; give one", dtype_by_, call.name));
    }
    dtype_by_ = call.name;
    spec_.dtype = dtype;
  }

  TransformSpec spec_;
  std::set<std::string> seen_;
  std::string geometry_by_;  // the crop (or none) given
  std::string dtype_by_;
  std::string resample_by_;  // the call that set an interpolation
  std::string uint8_by_;  // PILToTensor / ToImage: uint8 output unless a dtype is set
  std::string layout_by_;
  std::string auto_augment_by_;
  ResizeSpec resize_;
  std::string resize_by_;          // the Resize call as written
  std::array<int, 2> crop_{0, 0};  // CenterCrop (height, width)
  bool crop_resizes_ = true;       // CenterCrop's resize= (stoker's: Resize(size) first)
};

}  // namespace

const char* to_string(AutoAugmentKind kind) {
  switch (kind) {
    case AutoAugmentKind::kTrivialAugmentWide:
      return "TrivialAugmentWide";
    case AutoAugmentKind::kRandAugment:
      return "RandAugment";
    case AutoAugmentKind::kAutoAugment:
      return "AutoAugment";
    case AutoAugmentKind::kAugMix:
      return "AugMix";
    case AutoAugmentKind::kNone:
      break;
  }
  return "none";
}

const char* to_string(ColorOp op) {
  switch (op) {
    case ColorOp::kInvert:
      return "RandomInvert";
    case ColorOp::kPosterize:
      return "RandomPosterize";
    case ColorOp::kSolarize:
      return "RandomSolarize";
    case ColorOp::kAdjustSharpness:
      return "RandomAdjustSharpness";
    case ColorOp::kAutocontrast:
      return "RandomAutocontrast";
    case ColorOp::kEqualize:
      break;
  }
  return "RandomEqualize";
}

const char* to_string(ResampleFilter filter) {
  return filter == ResampleFilter::kBicubic ? "bicubic" : "bilinear";
}

const char* to_string(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::kEdge:
      return "edge";
    case PaddingMode::kReflect:
      return "reflect";
    case PaddingMode::kSymmetric:
      return "symmetric";
    case PaddingMode::kConstant:
      break;
  }
  return "constant";
}

bool normalize_in_consumer(TransformSpec* spec) {
  if (!spec->normalize || spec->dtype != DType::kFloat32) return false;
  spec->dtype = DType::kUint8;
  return true;
}

TransformSpec eval_transform(const TransformSpec& train) {
  TransformSpec eval = train;
  if (train.geometry == Geometry::kRandomCrop) {  // torchvision's CenterCrop: 1:1, zero padding
    // After a Resize: Resize + CenterCrop, the pair evaluation recipes write.
    eval.geometry = train.resize.enabled() ? Geometry::kResizeCenterCrop : Geometry::kCenterCrop;
    eval.pad = PadSpec{};
  }
  if (train.geometry == Geometry::kRandomResizedCrop) {
    constexpr double kCropFraction = 0.875;  // 224 of 256
    eval.geometry = Geometry::kResizeCenterCrop;
    if (!train.resize.enabled()) {  // else the training chain's Resize, then the centre
      eval.resize.shorter =
          static_cast<int>(std::floor(std::min(train.out_width, train.out_height) / kCropFraction + 1e-9));
    }
    eval.scale_min = kDefaultScaleMin;
    eval.scale_max = kDefaultScaleMax;
    eval.ratio_min = kDefaultRatioMin;
    eval.ratio_max = kDefaultRatioMax;
  }
  eval.flip_p = 0;
  eval.vflip_p = 0;
  eval.grayscale_p = 0;
  eval.rotation = RotationSpec{};
  eval.affine = AffineSpec{};
  eval.blur = GaussianBlurSpec{};
  eval.color_ops = {};
  eval.auto_augment = AutoAugmentSpec{};
  eval.jitter = ColorJitterSpec{};
  eval.erasing = RandomErasingSpec{};
  return eval;
}

std::string TransformSpec::describe() const {
  std::vector<std::string> parts;
  // The filter goes on the Resize, else on the RandomResizedCrop: the calls that take it.
  const std::string interpolation = resample == ResampleFilter::kBicubic ? ", interpolation=bicubic" : "";
  // Resize((h, w)) keeps its pair even when square: Resize(224) would be the shorter side.
  if (resize.shorter > 0) {
    parts.push_back(resize.max_size > 0
                        ? fmt::format("Resize({}, max_size={}{})", resize.shorter, resize.max_size, interpolation)
                        : fmt::format("Resize({}{})", resize.shorter, interpolation));
  } else if (resize.enabled()) {
    parts.push_back(fmt::format("Resize(({}, {}){})", resize.height, resize.width, interpolation));
  }
  const bool whole_resized = resize.shorter == 0 && resize.width == out_width && resize.height == out_height;
  switch (geometry) {
    case Geometry::kRandomResizedCrop: {
      std::string s = "RandomResizedCrop(" + size_text(out_height, out_width);
      if (scale_min != kDefaultScaleMin || scale_max != kDefaultScaleMax) {
        s += fmt::format(", scale=({}, {})", scale_min, scale_max);
      }
      if (ratio_min != kDefaultRatioMin || ratio_max != kDefaultRatioMax) {
        s += fmt::format(", ratio=({}, {})", ratio_min, ratio_max);
      }
      if (!resize.enabled()) s += interpolation;
      parts.push_back(s + ")");
      break;
    }
    case Geometry::kResizeCenterCrop:  // Resize((h, w)) alone crops all of it
      if (!whole_resized) parts.push_back(fmt::format("CenterCrop({})", size_text(out_height, out_width)));
      break;
    case Geometry::kRandomCrop:
      parts.push_back(random_crop_text(out_height, out_width, pad));
      break;
    case Geometry::kCenterCrop:
      parts.push_back(fmt::format("CenterCrop({}, resize=False)", size_text(out_height, out_width)));
      break;
    case Geometry::kNone:
      parts.emplace_back("none");
      break;
  }
  if (standardize) parts.emplace_back("Standardize");
  if (flip_p > 0) parts.push_back(fmt::format("RandomHorizontalFlip({})", flip_p));
  if (vflip_p > 0) parts.push_back(fmt::format("RandomVerticalFlip({})", vflip_p));
  if (rotation.enabled()) {
    const RotationSpec& r = rotation;
    std::string s = "RandomRotation(" + range_text(r.min_degrees, r.max_degrees);
    if (r.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
    if (r.fill != std::array<float, 3>{0, 0, 0}) s += ", fill=" + triple_text(r.fill);
    parts.push_back(applied_text(s + ")", r.apply_p));
  }
  if (affine.enabled()) parts.push_back(applied_text(affine_text(affine), affine.apply_p));
  if (auto_augment.enabled()) parts.push_back(auto_augment_text(auto_augment));
  if (jitter.enabled()) {
    std::string args;
    const std::array<std::pair<const char*, double>, 4> components{
        {{"brightness", jitter.brightness},
         {"contrast", jitter.contrast},
         {"saturation", jitter.saturation},
         {"hue", jitter.hue}}};
    for (const auto& [name, value] : components) {
      if (value == 0) continue;
      args += fmt::format("{}{}={}", args.empty() ? "" : ", ", name, value);
    }
    parts.push_back(applied_text("ColorJitter(" + args + ")", jitter.apply_p));
  }
  if (grayscale_p > 0) parts.push_back(fmt::format("RandomGrayscale({})", grayscale_p));
  if (blur.enabled()) {
    const std::string k = blur.kernel_w == blur.kernel_h ? fmt::format("{}", blur.kernel_w)
                                                         : fmt::format("({}, {})", blur.kernel_w, blur.kernel_h);
    const std::string sigma = blur.sigma_min == blur.sigma_max ? fmt::format("{}", blur.sigma_min)
                                                               : fmt::format("({}, {})", blur.sigma_min, blur.sigma_max);
    parts.push_back(applied_text(fmt::format("GaussianBlur({}, sigma={})", k, sigma), blur.apply_p));
  }
  for (size_t i = 0; i < color_ops.size(); ++i) {
    if (color_ops[i].enabled()) parts.push_back(color_op_text(static_cast<ColorOp>(i), color_ops[i]));
  }
  if (channels == 1 && features == 0) parts.emplace_back("Grayscale");
  if (normalize) {
    if (mean == kImagenetMean && std == kImagenetStd) {
      parts.emplace_back("Normalize");
    } else {
      parts.push_back(
          fmt::format("Normalize(mean={}, std={})", triple_text(mean), triple_text(std)));
    }
  }
  if (erasing.enabled()) parts.push_back(erasing_text(erasing));
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += fmt::format(" {} ", kMiddleDot);
    text += part;
  }
  return fmt::format("{} {} {} {}", text, kArrow, to_string(dtype), to_string(layout));
}

void TransformSpec::validate() const {
  if (channels != 1 && channels != 3) {
    throw UsageError(fmt::format("channels must be 1 (Grayscale) or 3 (RGB) (got {})", channels));
  }
  const auto in_size_range = [](int v) { return v >= 1 && v <= kMaxSize; };
  // kNone may leave the size at 0x0 until the pipeline sets it from the source.
  // Feature vectors are sized by the Loader (features x 1), not by an image size limit.
  const bool size_unset = geometry == Geometry::kNone && ((out_width == 0 && out_height == 0) || features > 0);
  if (!size_unset && !(in_size_range(out_width) && in_size_range(out_height))) {
    throw UsageError(fmt::format("{} size must be in 1..{} (got {})", geometry_name(geometry),
                                 kMaxSize, size_text(out_height, out_width)));
  }
  if (resize.shorter != 0 && !in_size_range(resize.shorter)) {
    throw UsageError(fmt::format("Resize size must be in 1..{} (got {})", kMaxSize, resize.shorter));
  }
  if ((resize.width != 0 || resize.height != 0) && !(in_size_range(resize.width) && in_size_range(resize.height))) {
    throw UsageError(fmt::format("Resize size must be in 1..{} (got ({}, {}))", kMaxSize, resize.height, resize.width));
  }
  if (resize.max_size != 0 && !(resize.shorter > 0 && resize.max_size > resize.shorter && resize.max_size <= kMaxSize)) {
    throw UsageError(fmt::format("Resize max_size must be in {}..{}, above the size (got {})", resize.shorter + 1,
                                 kMaxSize, resize.max_size));
  }
  if (geometry == Geometry::kResizeCenterCrop && !resize.enabled()) {
    throw UsageError("Resize+CenterCrop needs a Resize size (got none)");
  }
  if ((geometry == Geometry::kNone || geometry == Geometry::kCenterCrop) && resize.enabled()) {
    throw UsageError(fmt::format("{} takes no Resize; Resize then CenterCrop is Resize+CenterCrop",
                                 geometry == Geometry::kNone ? "none" : "CenterCrop(resize=False)"));
  }
  if (geometry == Geometry::kRandomCrop) {
    for (const int side : {pad.left, pad.top, pad.right, pad.bottom}) {
      if (side < 0 || side > kMaxSize) {
        throw UsageError(fmt::format("RandomCrop padding must be in 0..{} pixels per side (got {})", kMaxSize, side));
      }
    }
    for (const float f : pad.fill) {
      if (!(f >= 0 && f <= 255)) {
        throw UsageError(fmt::format("RandomCrop fill must be pixel values in [0, 255] (got {})", f));
      }
    }
  }
  if (geometry == Geometry::kRandomResizedCrop) {
    if (!(scale_min > 0 && scale_min <= scale_max && scale_max <= 1)) {
      throw UsageError(
          fmt::format("RandomResizedCrop scale must satisfy 0 < min <= max <= 1 (got ({}, {}))",
                      scale_min, scale_max));
    }
    if (!(ratio_min > 0 && ratio_min <= ratio_max && std::isfinite(ratio_max))) {
      throw UsageError(
          fmt::format("RandomResizedCrop ratio must satisfy 0 < min <= max (got ({}, {}))",
                      ratio_min, ratio_max));
    }
  }
  if (!(std::isfinite(rotation.min_degrees) && std::isfinite(rotation.max_degrees) &&
        rotation.min_degrees <= rotation.max_degrees)) {
    throw UsageError(fmt::format("RandomRotation degrees must satisfy min <= max, both finite (got ({}, {}))",
                                 rotation.min_degrees, rotation.max_degrees));
  }
  if (blur.kernel_w != 0 || blur.kernel_h != 0) {
    for (const int k : {blur.kernel_w, blur.kernel_h}) {
      if (k < 1 || k > kMaxSize || k % 2 == 0) {
        throw UsageError(fmt::format("GaussianBlur kernel_size must be odd and positive, as torchvision's (got {})", k));
      }
    }
    if (!(blur.sigma_min > 0 && blur.sigma_min <= blur.sigma_max && std::isfinite(blur.sigma_max))) {
      throw UsageError(fmt::format("GaussianBlur sigma must satisfy 0 < min <= max (got ({}, {}))", blur.sigma_min,
                                   blur.sigma_max));
    }
  }
  for (const float f : rotation.fill) {
    if (!(f >= 0 && f <= 255)) {
      throw UsageError(fmt::format("RandomRotation fill must be pixel values in [0, 255] (got {})", f));
    }
  }
  validate_affine();
  for (const auto& [name, p] : {std::pair<const char*, double>{"ColorJitter", jitter.apply_p},
                                 {"GaussianBlur", blur.apply_p},
                                 {"RandomRotation", rotation.apply_p},
                                 {"RandomAffine", affine.apply_p}}) {
    if (!(p >= 0 && p <= 1)) {
      throw UsageError(fmt::format("RandomApply p must be in [0, 1] (got {}, around {})", p, name));
    }
  }
  for (const auto& [name, p] : {std::pair<const char*, double>{"RandomHorizontalFlip", flip_p},
                                 {"RandomVerticalFlip", vflip_p},
                                 {"RandomGrayscale", grayscale_p}}) {
    if (!(p >= 0 && p <= 1)) throw UsageError(fmt::format("{} p must be in [0, 1] (got {})", name, p));
  }
  const std::array<std::pair<const char*, double>, 3> factors{{{"brightness", jitter.brightness},
                                                               {"contrast", jitter.contrast},
                                                               {"saturation", jitter.saturation}}};
  for (const auto& [name, value] : factors) {
    if (!(value >= 0 && std::isfinite(value))) {
      throw UsageError(fmt::format("ColorJitter {} must be >= 0 (got {})", name, value));
    }
  }
  if (!(jitter.hue >= 0 && jitter.hue <= 0.5)) {
    throw UsageError(fmt::format("ColorJitter hue must be in [0, 0.5] (got {})", jitter.hue));
  }
  validate_augmentations();
  validate_color_ops();
  validate_features();
  if (normalize) {
    for (int c = 0; c < channels; ++c) {
      if (!std::isfinite(mean[c])) {
        throw UsageError(
            fmt::format("Normalize mean must be finite (got mean[{}] = {})", c, mean[c]));
      }
      if (!(std::isfinite(std[c]) && std[c] != 0)) {
        throw UsageError(
            fmt::format("Normalize std must be non-zero and finite (got std[{}] = {})", c, std[c]));
      }
    }
  }
}

void TransformSpec::validate_augmentations() const {
  const AutoAugmentSpec& a = auto_augment;
  if (a.enabled()) {
    const char* name = to_string(a.kind);
    if (a.num_ops < 0 || a.num_ops > AutoAugmentSpec::kMaxOps) {
      throw UsageError(fmt::format("{} num_ops must be in 0..{} (got {})", name, AutoAugmentSpec::kMaxOps, a.num_ops));
    }
    if (a.num_magnitude_bins < 2 || a.num_magnitude_bins > 1000) {
      throw UsageError(fmt::format("{} num_magnitude_bins must be in 2..1000 (got {})", name, a.num_magnitude_bins));
    }
    if (a.kind == AutoAugmentKind::kAugMix) {
      if (a.severity < 1 || a.severity > 10) {
        throw UsageError(fmt::format("AugMix severity must be in 1..10 (got {})", a.severity));
      }
      if (a.mixture_width < 1 || a.mixture_width > AutoAugmentSpec::kMaxChains) {
        throw UsageError(fmt::format("AugMix mixture_width must be in 1..{} (got {})", AutoAugmentSpec::kMaxChains,
                                     a.mixture_width));
      }
      if (a.chain_depth != -1 && (a.chain_depth < 1 || a.chain_depth > AutoAugmentSpec::kMaxDepth)) {
        throw UsageError(fmt::format("AugMix chain_depth must be -1 (1 to 3 at random) or 1..{} (got {})",
                                     AutoAugmentSpec::kMaxDepth, a.chain_depth));
      }
      if (!(a.alpha > 0 && std::isfinite(a.alpha))) {
        throw UsageError(fmt::format("AugMix alpha must be a number > 0 (got {})", a.alpha));
      }
    }
    if (a.kind == AutoAugmentKind::kRandAugment && !(a.magnitude >= 0 && a.magnitude < a.num_magnitude_bins)) {
      throw UsageError(fmt::format("RandAugment magnitude must be in 0..{} (num_magnitude_bins - 1) (got {})",
                                   a.num_magnitude_bins - 1, a.magnitude));
    }
    for (const float f : a.fill) {
      if (!(f >= 0 && f <= 255)) {
        throw UsageError(fmt::format("{} fill must be pixel values in [0, 255] (got {})", name, f));
      }
    }
  }
  const RandomErasingSpec& e = erasing;
  if (!(e.p >= 0 && e.p <= 1)) {
    throw UsageError(fmt::format("RandomErasing p must be in [0, 1] (got {})", e.p));
  }
  if (!(e.scale_min >= 0 && e.scale_min <= e.scale_max && e.scale_max <= 1)) {
    throw UsageError(fmt::format("RandomErasing scale must satisfy 0 <= min <= max <= 1 (got ({}, {}))", e.scale_min,
                                 e.scale_max));
  }
  if (!(e.ratio_min > 0 && e.ratio_min <= e.ratio_max && std::isfinite(e.ratio_max))) {
    throw UsageError(fmt::format("RandomErasing ratio must satisfy 0 < min <= max (got ({}, {}))", e.ratio_min,
                                 e.ratio_max));
  }
  for (const float v : e.value) {
    if (!std::isfinite(v)) throw UsageError(fmt::format("RandomErasing value must be finite (got {})", v));
  }
}

void TransformSpec::validate_color_ops() const {
  for (size_t i = 0; i < color_ops.size(); ++i) {
    const char* name = to_string(static_cast<ColorOp>(i));
    const ColorOpSpec& c = color_ops[i];
    if (!(c.p >= 0 && c.p <= 1)) throw UsageError(fmt::format("{} p must be in [0, 1] (got {})", name, c.p));
  }
  const double bits = color_ops[static_cast<size_t>(ColorOp::kPosterize)].value;
  if (!(bits >= 0 && bits <= 8 && std::floor(bits) == bits)) {
    throw UsageError(fmt::format("RandomPosterize bits must be a whole number in 0..8 (got {})", bits));
  }
  const double threshold = color_ops[static_cast<size_t>(ColorOp::kSolarize)].value;
  if (threshold > 0 && threshold < 1) {
    // torchvision takes it in the image's units: a float tensor's 0.5 is a uint8 image's 128.
    throw UsageError(fmt::format(
        "RandomSolarize threshold is a pixel value in [0, 255], as for a PIL or uint8 image (got {}); a threshold "
        "written for a float image in [0, 1] is 255 times it here, e.g. RandomSolarize({:g}) for {}",
        threshold, std::round(255 * threshold), threshold));
  }
  if (!(threshold >= 0 && threshold <= 255)) {
    throw UsageError(fmt::format("RandomSolarize threshold must be a pixel value in [0, 255] (got {})", threshold));
  }
  const double factor = color_ops[static_cast<size_t>(ColorOp::kAdjustSharpness)].value;
  if (!(factor >= 0 && std::isfinite(factor))) {
    throw UsageError(fmt::format(
        "RandomAdjustSharpness sharpness_factor must be a number >= 0 (got {}); 0 blurs, 1 is the image, 2 sharpens",
        factor));
  }
}

void TransformSpec::validate_affine() const {
  const AffineSpec& a = affine;
  const auto range = [](const char* what, double lo, double hi) {
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
      throw UsageError(fmt::format("RandomAffine {} must satisfy min <= max, both finite (got ({}, {}))", what, lo, hi));
    }
  };
  range("degrees", a.min_degrees, a.max_degrees);
  range("shear", a.shear_x_min, a.shear_x_max);
  range("shear (y)", a.shear_y_min, a.shear_y_max);
  for (const double t : {a.translate_x, a.translate_y}) {
    if (!(t >= 0 && t <= 1)) {
      throw UsageError(fmt::format(
          "RandomAffine translate must be fractions of the image's size in [0, 1] (got ({}, {}))", a.translate_x,
          a.translate_y));
    }
  }
  if (!(a.scale_min > 0 && a.scale_min <= a.scale_max && std::isfinite(a.scale_max))) {
    throw UsageError(
        fmt::format("RandomAffine scale must satisfy 0 < min <= max (got ({}, {}))", a.scale_min, a.scale_max));
  }
  for (const double shear : {a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max}) {
    // tan(90°) is infinite: the grid would be NaN.
    if (std::abs(shear) >= 90) {
      throw UsageError(fmt::format("RandomAffine shear must be within (-90, 90) degrees (got {})", shear));
    }
  }
  for (const float f : a.fill) {
    if (!(f >= 0 && f <= 255)) {
      throw UsageError(fmt::format("RandomAffine fill must be pixel values in [0, 255] (got {})", f));
    }
  }
}

void TransformSpec::validate_features() const {
  if (!standardize && features == 0) return;
  const char* image_step = geometry != Geometry::kNone ? geometry_name(geometry)
                           : flip_p > 0                 ? "RandomHorizontalFlip"
                           : vflip_p > 0                ? "RandomVerticalFlip"
                           : rotation.enabled()         ? "RandomRotation"
                           : affine.enabled()           ? "RandomAffine"
                           : blur.enabled()             ? "GaussianBlur"
                           : grayscale_p > 0            ? "RandomGrayscale"
                           : first_color_op(*this)      ? first_color_op(*this)
                           : auto_augment.enabled()     ? to_string(auto_augment.kind)
                           : jitter.enabled()           ? "ColorJitter"
                           : normalize                  ? "Normalize"
                           : erasing.enabled()          ? "RandomErasing"
                                                        : nullptr;
  if (image_step != nullptr) {
    throw UsageError(fmt::format(
        "{} is an image transform, and {}; feature vectors take 'Standardize' or 'none' (and Float16/Float32)",
        image_step, features > 0 ? fmt::format("the data holds feature vectors ({} per sample)", features)
                                 : std::string("Standardize is for feature vectors")));
  }
  if (features > 0 && dtype == DType::kUint8) {
    throw UsageError("feature vectors cannot be written as uint8 (ToUint8); use Float32 or Float16");
  }
  if (feature_mean.size() != feature_std.size()) {
    throw UsageError(fmt::format("Standardize has {} mean and {} std values; give both or neither",
                                 feature_mean.size(), feature_std.size()));
  }
  for (const std::vector<float>* stats : {&feature_mean, &feature_std}) {
    if (!stats->empty() && stats->size() != static_cast<size_t>(features)) {
      throw UsageError(fmt::format("Standardize has {} {} values for {} features", stats->size(),
                                   stats == &feature_mean ? "mean" : "std", features));
    }
  }
  for (size_t j = 0; j < feature_mean.size(); ++j) {
    if (!std::isfinite(feature_mean[j]) || !(std::isfinite(feature_std[j]) && feature_std[j] > 0)) {
      throw UsageError(fmt::format("Standardize feature {} has mean {} and std {}; both must be finite, std > 0", j,
                                   feature_mean[j], feature_std[j]));
    }
  }
}

TransformSpec parse_transforms(std::string_view text) {
  const std::vector<Call> calls = ChainReader(text).read();
  if (calls.empty()) {
    throw UsageError(fmt::format(
        "empty transform chain '{}'; give e.g. 'RandomResizedCrop(224), Normalize', or 'none'",
        text));
  }
  ChainBuilder builder;
  for (const Call& call : calls) builder.apply(call);
  return builder.finish();
}

}  // namespace stoker::data
