// The chain reader: a small recursive-descent reader of Python's call syntax (calls.h).
#include "calls.h"

#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "data/transform/spec_common.h"
#include "stoker/core/error.h"

namespace stoker::data::chain {

std::string transform_name(std::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return std::string(dot == std::string_view::npos ? dotted : dotted.substr(dot + 1));
}

namespace {

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E';
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
    if (rest.starts_with(spec::kMiddleDot)) return spec::kMiddleDot.size();
    if (rest.starts_with(spec::kArrow)) return spec::kArrow.size();
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
        fail(fmt::format("expected ',' or ')' in the arguments of {} at '{}'", result.name, text_.substr(pos_)));
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
          fail(
              fmt::format("expected ',' or '{}' in the arguments of {} at '{}'", close, call_name, text_.substr(pos_)));
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

}  // namespace

std::vector<Call> read_calls(std::string_view text) { return ChainReader(text).read(); }

}  // namespace stoker::data::chain
