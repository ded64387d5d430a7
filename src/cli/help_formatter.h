// The one look of `--help` for every stoker command, whatever CLI11 version built it.
//
// CLI11 2.1 (Debian 12) writes an option's default as `--epochs INT=2`, 2.4 (Debian 13) as
// `--epochs INT [2] `; both write a boolean flag with its negation as
// `--pin-memory,--no-pin-memory{false}`. HelpFormatter writes `--epochs INT=2` and
// `--pin-memory,--no-pin-memory=true` on every version; the rest of the option text is
// CLI11's own. Set it on the top-level app before adding subcommands (they copy their
// parent's formatter). Stateless; thread-safe.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace stoker::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
};

// The options `--help` shows for `app` as one Markdown table, from the same data: the
// names as HelpFormatter writes them, CLI11's type name, the default and the description
// (hidden spellings and -h left out). `key_of` fills a "YAML key" column ("" for an option
// that has none); without it there is no such column. `stoker train --help-markdown` is this
// for the train options, checked in as docs/reference/train-options.md.
std::string options_markdown(const CLI::App& app, const std::function<std::string(const CLI::Option&)>& key_of = {});

// A Markdown table cell: '|' escaped, line breaks as spaces; in prose (`code` false) also '<'
// and '*', which Markdown would read as HTML or emphasis.
std::string markdown_cell(const std::string& text, bool code);

// `text` as code in a table cell ("" for none).
std::string markdown_code(const std::string& text);

}  // namespace stoker::cli
