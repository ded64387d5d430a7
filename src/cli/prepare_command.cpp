// `stoker prepare`: rewrite a dataset's JPEGs with restart markers (stoker/data/prepare.h).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "format.h"
#include "stoker/core/error.h"
#include "stoker/core/progress_line.h"
#include "stoker/core/shell_quote.h"
#include "stoker/data/prepare.h"

namespace stoker::cli {
namespace {

struct PrepareArgs {
  std::string data;
  std::string out;
  int workers = 0;  // 0: one per core
};

int run_prepare(const PrepareArgs& args) {
  if (args.data.empty()) throw UsageError("stoker prepare needs --data DIR (the dataset's root)");
  if (args.out.empty()) {
    throw UsageError("stoker prepare needs --out DIR (a new directory for the prepared copy)");
  }
  if (args.workers < 0) {
    throw UsageError(fmt::format("--workers must be >= 0 (got {}; 0 = one per core)", args.workers));
  }
  data::PrepareOptions options;
  options.workers = args.workers > 0 ? args.workers : cpu_count();
  ProgressLine line;
  options.progress = [&line, &args](int64_t done, int64_t total) {
    line.update([&] {
      if (total < 0) {
        return fmt::format("listing {}: {} files so far, {:.0f} s", args.data, grouped(static_cast<double>(done)),
                           line.seconds());
      }
      return fmt::format("preparing {} / {} files, {:.0f} s", grouped(static_cast<double>(done)),
                         grouped(static_cast<double>(total)), line.seconds());
    });
  };
  const data::PrepareReport r = data::prepare_dataset(args.data, args.out, options);
  line.clear();
  const double growth = r.bytes_in > 0 ? 100.0 * (r.bytes_out - r.bytes_in) / r.bytes_in : 0.0;
  std::printf("prepared  %s -> %s: %s files, %s JPEGs rewritten with restart markers\n", args.data.c_str(),
              args.out.c_str(), grouped(static_cast<double>(r.files)).c_str(),
              grouped(static_cast<double>(r.jpegs_rewritten)).c_str());
  std::printf("size      %s -> %s (%+.1f %%) in %.1f s with %d workers\n",
              megabytes(static_cast<double>(r.bytes_in)).c_str(), megabytes(static_cast<double>(r.bytes_out)).c_str(),
              growth, r.seconds, options.workers);
  if (r.kept_count > 0) {
    const bool one = r.kept_count == 1;
    std::printf("kept      %s damaged JPEG%s copied as %s (still %s):\n",
                grouped(static_cast<double>(r.kept_count)).c_str(), one ? "" : "s", one ? "it was" : "they were",
                one ? "a bad sample" : "bad samples");
    for (const auto& k : r.kept) std::printf("          %s: %s\n", k.path.c_str(), k.reason.c_str());
    if (r.kept_count > static_cast<int64_t>(r.kept.size())) {
      std::printf("          ... and %s more\n",
                  grouped(static_cast<double>(r.kept_count - static_cast<int64_t>(r.kept.size()))).c_str());
    }
  }
  std::printf("next      train or bench on --data %s: random crops now decode only their own part\n",
              shell_quote(args.out).c_str());
  return 0;
}

}  // namespace

void add_prepare_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PrepareArgs>();
  CLI::App* prepare =
      app.add_subcommand("prepare", "Copy a dataset with its JPEGs rewritten losslessly for faster cropped decoding");
  prepare->add_option("--data", args->data, "Dataset root (image folder, or a CSV list's folder)");
  prepare->add_option("--out", args->out, "New directory for the prepared copy");
  prepare->add_option("--workers,--num-workers,--num_workers", args->workers, "Threads (default: one per core)");
  prepare->callback([args, exit_code] { *exit_code = run_prepare(*args); });
}

}  // namespace stoker::cli
