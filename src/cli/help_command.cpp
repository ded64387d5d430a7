// `stoker help data`: the data formats and the transforms, from their declarations
// (data_reference.h); `--markdown` prints docs/reference/data.md whole. `stoker help COMMAND`
// is `stoker COMMAND --help`.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "data_reference.h"
#include "stoker/core/error.h"

namespace stoker::cli {

namespace {

struct HelpArgs {
  std::string topic;
  bool markdown = false;
};

}  // namespace

void add_help_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<HelpArgs>();
  CLI::App* cmd = app.add_subcommand("help", "The data formats and transforms stoker reads (stoker help data)");
  cmd->add_option("topic", args->topic, "data: the formats and every transform; a command: its --help");
  cmd->add_flag("--markdown", args->markdown,
                "With data: print the whole reference as Markdown (docs/reference/data.md) and exit");
  cmd->callback([&app, cmd, args, exit_code] {
    if (args->topic == "data") {
      const std::string page = args->markdown ? data_reference_markdown() : data_reference_summary();
      std::fputs(page.c_str(), stdout);
      *exit_code = 0;
      return;
    }
    const CLI::App* command = nullptr;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub != cmd && sub->get_name() == args->topic) command = sub;
    }
    if (args->markdown) {
      throw UsageError(fmt::format(
          "stoker help --markdown writes the data reference: give it as stoker help data --markdown (got topic "
          "'{}'){}",
          args->topic, args->topic == "train" ? "; train's options as Markdown: stoker train --help-markdown" : ""));
    }
    if (command == nullptr) {
      const std::string got = args->topic.empty() ? "none given" : "got '" + args->topic + "'";
      throw UsageError(fmt::format(
          "stoker help takes a topic: data (the formats and transforms; --markdown for the whole reference) or a "
          "command's name for its options ({}); e.g. stoker help data",
          got));
    }
    std::fputs(command->help(app.get_name()).c_str(), stdout);
    *exit_code = 0;
  });
}

}  // namespace stoker::cli
