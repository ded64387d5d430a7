#include "stoker/core/shell_quote.h"

namespace stoker {
namespace {

bool plain(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  for (const char safe : std::string_view("@%+=:,./_-")) {
    if (c == safe) return true;
  }
  return false;
}

}  // namespace

std::string shell_quote(std::string_view word) {
  bool all_plain = !word.empty();
  for (const char c : word) all_plain = all_plain && plain(c);
  if (all_plain) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace stoker
