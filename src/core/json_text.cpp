#include "stoker/core/json_text.h"

#include <fmt/format.h>

#include <cstdint>

namespace stoker {
namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF); 0 when the byte there starts none.
size_t utf8_sequence(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<uint8_t>(text[i + k]) : 0; };
  const auto continuation = [&](size_t k, uint8_t low = 0x80, uint8_t high = 0xBF) {
    return byte(k) >= low && byte(k) <= high && i + k < text.size();
  };
  const uint8_t b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(1) ? 2 : 0;
  if (b == 0xE0) return continuation(1, 0xA0) && continuation(2) ? 3 : 0;
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return continuation(1) && continuation(2) ? 3 : 0;
  if (b == 0xED) return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0;
  if (b == 0xF0) return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0;
  if (b >= 0xF1 && b <= 0xF3) return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  if (b == 0xF4) return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0;
  return 0;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The NUL-and-two-hex-digits of parse_json's first step turned back into bytes, in every
// string and key of `j`.
void restore_bytes(nlohmann::json* j) {
  const auto restored = [](const std::string& s) {
    if (s.find('\0') == std::string::npos) return s;
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\0' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
        out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  if (j->is_string()) {
    *j = restored(j->get_ref<const std::string&>());
  } else if (j->is_array()) {
    for (nlohmann::json& item : *j) restore_bytes(&item);
  } else if (j->is_object()) {
    nlohmann::json object = nlohmann::json::object();
    for (auto it = j->begin(); it != j->end(); ++it) {
      nlohmann::json value = std::move(it.value());
      restore_bytes(&value);
      object[restored(it.key())] = std::move(value);
    }
    *j = std::move(object);
  }
}

}  // namespace

void append_json_string(std::string_view text, std::string* out) {
  *out += '"';
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const size_t n = utf8_sequence(text, i);
    if (n == 0) {
      *out += fmt::format("\\udc{:02x}", static_cast<uint8_t>(c));
      ++i;
      continue;
    }
    if (n > 1) {
      out->append(text.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<uint8_t>(c) < 0x20) {
          *out += fmt::format("\\u{:04x}", static_cast<uint8_t>(c));
        } else {
          *out += c;
        }
    }
    ++i;
  }
  *out += '"';
}

nlohmann::json parse_json(std::string_view text) {
  // \udcXX (XX 80..ff) becomes \u0000 and the two digits, which nlohmann reads; the strings
  // are then mended. A backslash escaping a backslash is skipped with it.
  std::string mended;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') continue;
    if (i + 5 < text.size() && text[i + 1] == 'u' && (text[i + 2] == 'd' || text[i + 2] == 'D') &&
        (text[i + 3] == 'c' || text[i + 3] == 'C') && hex_value(text[i + 4]) >= 8 && hex_value(text[i + 5]) >= 0) {
      any = true;
      break;
    }
    ++i;
  }
  if (!any) return nlohmann::json::parse(text);
  mended.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 5 < text.size() && text[i + 1] == 'u' && (text[i + 2] == 'd' || text[i + 2] == 'D') &&
        (text[i + 3] == 'c' || text[i + 3] == 'C') && hex_value(text[i + 4]) >= 8 && hex_value(text[i + 5]) >= 0) {
      mended += "\\u0000";
      mended += text[i + 4];
      mended += text[i + 5];
      i += 5;
    } else if (text[i] == '\\' && i + 1 < text.size()) {
      mended += text[i];
      mended += text[++i];
    } else {
      mended += text[i];
    }
  }
  nlohmann::json j = nlohmann::json::parse(mended);
  restore_bytes(&j);
  return j;
}

}  // namespace stoker
