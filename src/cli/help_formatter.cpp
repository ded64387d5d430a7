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

std::string markdown_cell(const std::string& text, bool code) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else if (!code && c == '<') {
      out += "&lt;";
    } else if (!code && c == '*') {
      out += "\\*";
    } else {
      out += c;
    }
  }
  return out;
}

std::string markdown_code(const std::string& text) { return text.empty() ? "" : "`" + markdown_cell(text, true) + "`"; }

std::string options_markdown(const CLI::App& app, const std::function<std::string(const CLI::Option&)>& key_of) {
  const HelpFormatter names;
  std::string out = key_of ? "| option | YAML key | value | default | description |\n|---|---|---|---|---|\n"
                           : "| option | value | default | description |\n|---|---|---|---|\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty() || option == app.get_help_ptr()) continue;
    std::string row = "| " + markdown_code(names.make_option_name(option, false)) + " | ";
    if (key_of) row += markdown_code(key_of(*option)) + " | ";
    const bool flag = option->get_type_size() == 0;
    row += (flag ? std::string() : markdown_code(option->get_type_name())) + " | " +
           markdown_code(option->get_default_str()) + " | " + markdown_cell(option->get_description(), false) + " |\n";
    out += row;
  }
  return out;
}

}  // namespace stoker::cli
