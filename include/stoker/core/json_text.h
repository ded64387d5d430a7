// stoker/core/json_text.h — JSON written and read back by stoker, with text that need not be
// UTF-8: a file or folder name is bytes (a class folder named `bad\xff\xfe`), and
// nlohmann::json's own dump() throws type_error.316 on such a string, which once ended a
// training run after its setup and lost `stoker scan --json`'s result.
//
// The escape: each byte of a string that is not part of a well-formed UTF-8 sequence is
// written as \udcXX, XX its value in lower-case hex (80..ff), the lone low surrogate Python's
// `surrogateescape` error handler gives it: `json.loads` then `os.fsencode` gives the bytes
// back, and JavaScript reads a string with that code unit. Everything else is written as
// nlohmann::json::dump() writes it (valid UTF-8 as it is; ", \ and control characters
// escaped), so a document of valid text comes out byte for byte the same.
// parse_json() reads such a document back, \udc80..\udcff as the bytes again (nlohmann's parser
// refuses lone surrogates); so a name survives a round trip. It stands for a byte by a NUL
// before the parse: a string that holds NUL followed by two hex digits of its own would read
// back wrong (names and stoker's texts hold no NUL).
//
// Thread safety: pure functions. Errors: parse_json throws nlohmann::json::parse_error as
// nlohmann::json::parse does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace stoker {

// Appends `text` as a JSON string, quotes included, with the escape above.
void append_json_string(std::string_view text, std::string* out);

// `j` as dump(indent) writes it (-1: compact; n: n spaces per level), its strings and object
// keys with the escape above. For nlohmann::json and nlohmann::ordered_json.
template <typename Json>
void append_json(const Json& j, int indent, int level, std::string* out) {
  const auto line_break = [&](int at) {
    if (indent < 0) return;
    *out += '\n';
    out->append(static_cast<size_t>(indent) * static_cast<size_t>(at), ' ');
  };
  if (j.is_object() || j.is_array()) {
    if (j.empty()) {
      *out += j.is_object() ? "{}" : "[]";
      return;
    }
    *out += j.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) *out += ',';
      first = false;
      line_break(level + 1);
      if (j.is_object()) {
        append_json_string(it.key(), out);
        *out += indent < 0 ? ":" : ": ";
      }
      append_json(it.value(), indent, level + 1, out);
    }
    line_break(level);
    *out += j.is_object() ? '}' : ']';
  } else if (j.is_string()) {
    append_json_string(j.template get_ref<const typename Json::string_t&>(), out);
  } else {
    *out += j.dump();  // a number, a boolean or null: no text in it
  }
}

template <typename Json>
std::string dump_json(const Json& j, int indent = -1) {
  std::string out;
  append_json(j, indent, 0, &out);
  return out;
}

// A document as nlohmann::json::parse reads it, with \udc80..\udcff read back as the bytes.
nlohmann::json parse_json(std::string_view text);

}  // namespace stoker
