#include "foreign_flags.h"

#include <array>
#include <string_view>
#include <utility>

namespace stoker::cli {

namespace {

// torchvision's (or another training script's) flag, then what stoker takes for it.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kForeign{{
    {"--data-path", "the training data is --data (and --val-data for torchvision's val folder)"},
    {"-b", "the batch size is --batch-size"},
    {"-j", "the loader's workers are --workers"},
    {"--sync-bn", "data-parallel BatchNorm statistics stay per process; leave --sync-bn out"},
    {"--print-freq", "the progress line redraws itself; leave --print-freq out"},
    {"--test-only", "evaluate saved weights with `stoker evaluate`"},
    {"--use-deterministic-algorithms", "a run is reproducible from --seed on the CPU; leave the flag out"},
    {"--world-size", "the processes are --nproc-per-node on one machine, or torchrun's (WORLD_SIZE)"},
    {"--dist-url", "processes meet at torchrun's MASTER_ADDR and MASTER_PORT; leave --dist-url out"},
    {"--cache-dataset", "decoded images stay in RAM with --cache decoded"},
    {"--start-epoch", "--resume RUN_DIR continues at its checkpoint's epoch"},
    {"--bias-weight-decay",
     "biases take --weight-decay (normalization layers' biases --norm-weight-decay); there is no "
     "separate bias decay"},
    {"--transformer-embedding-decay", "stoker's models have no transformer embeddings; leave the flag out"},
    {"--backend", "stoker's workers decode and transform the images themselves; leave --backend out"},
    {"--use-v2", "stoker's workers decode and transform the images themselves; leave --use-v2 out"},
    {"--image-size",
     "the training crop is --train-crop-size (validation's: --val-crop-size), or write the sizes "
     "in --transforms"},
}};

}  // namespace

std::string foreign_flag_hint(int argc, char** argv) {
  // Only the commands that take the training flags: `stoker evaluate --weights` is its own.
  if (argc < 2 || (std::string_view(argv[1]) != "train" && std::string_view(argv[1]) != "doctor")) return "";
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) arg = arg.substr(0, eq);
    for (const auto& [flag, hint] : kForeign) {
      if (arg == flag) return std::string(flag) + ": " + std::string(hint);
    }
    // torchvision's --amp is a switch (fp16 with a GradScaler); stoker's takes a value.
    if (arg == "--amp" && (i + 1 == argc || argv[i + 1][0] == '-')) {
      return "--amp takes off, bf16 or fp16 here; torchvision's --amp switch is --amp fp16 (bf16 needs no loss "
             "scaling)";
    }
  }
  return "";
}

}  // namespace stoker::cli
