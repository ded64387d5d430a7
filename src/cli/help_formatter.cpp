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
  if (!option->get_option_text().empty()) return " " + option->get_option_text();
  std::string out;
  if (option->get_type_size() != 0 && !option->get_type_name().empty())
    out += " " + get_label(option->get_type_name());
  if (!option->get_default_str().empty()) out += "=" + option->get_default_str();
  if (option->get_type_size() != 0) {
    if (option->get_expected_max() == CLI::detail::expected_max_vector_size) {
      out += " ...";
    } else if (option->get_expected_min() > 1) {
      out += " x " + std::to_string(option->get_expected());
    }
    if (option->get_required()) out += " " + get_label("REQUIRED");
  }
  if (!option->get_envname().empty())
    out += " (" + get_label("Env") + ":" + option->get_envname() + ")";
  if (!option->get_needs().empty()) {
    out += " " + get_label("Needs") + ":";
    for (const CLI::Option* other : option->get_needs()) out += " " + other->get_name();
  }
  if (!option->get_excludes().empty()) {
    out += " " + get_label("Excludes") + ":";
    for (const CLI::Option* other : option->get_excludes()) out += " " + other->get_name();
  }
  return out;
}

}  // namespace stoker::cli
