#include "help_formatter.h"

namespace stoker::cli {

std::string HelpFormatter::make_option_name(const CLI::Option* option, bool is_positional) const {
  std::string name = CLI::Formatter::make_option_name(option, is_positional);
  // Drop the `{false}` CLI11 appends to a negating spelling such as --no-pin-memory.
  for (size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
    const size_t close = name.find('}', open);
    if (close == std::string::npos) break;
    name.erase(open, close - open + 1);
  }
  return name;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  // CLI11's own text (type, default, REQUIRED, Needs, ...), with 2.4's " [default] " written
  // as 2.1's "=default".
  std::string opts = CLI::Formatter::make_option_opts(option);
  const std::string& value = option->get_default_str();
  if (value.empty()) return opts;
  const std::string bracketed = " [" + value + "] ";
  if (const size_t at = opts.find(bracketed); at != std::string::npos) opts.replace(at, bracketed.size(), "=" + value);
  return opts;
}

}  // namespace stoker::cli
