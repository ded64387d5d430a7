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
#include <string>

namespace stoker::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
};

}  // namespace stoker::cli
