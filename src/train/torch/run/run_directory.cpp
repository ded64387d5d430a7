#include "train/torch/run/run_directory.h"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "stoker/core/directory_lock.h"
#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/output_clash.h"
#include "stoker/core/user_files.h"
#include "stoker/data/source.h"
#include "stoker/train/trainer.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/run/setup.h"

namespace stoker::train {

namespace fs = std::filesystem;

namespace {

std::string run_id() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d_%H-%M-%S", &tm);
  return text;
}

// A new folder <output_dir>/<date_time>, or <date_time>-2, -3, ... when runs start in the same
// second: create_directory makes the name this process's alone (two runs shared one folder,
// and one died renaming its checkpoint over the other's).
std::string new_run_folder(const std::string& output_dir) {
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (ec) throw UsageError("cannot create --output-dir " + output_dir + ": " + ec.message());
  const std::string id = run_id();
  for (int n = 1; n <= 1000; ++n) {
    const std::string dir = (fs::path(output_dir) / (n == 1 ? id : fmt::format("{}-{}", id, n))).string();
    if (fs::create_directory(dir, ec)) return dir;
    if (ec) throw UsageError("cannot create run directory " + dir + ": " + ec.message() + "; choose --output-dir");
  }
  throw UsageError(
      fmt::format("--output-dir {} already holds 1000 runs named {}: choose another --output-dir", output_dir, id));
}

// A moving average spans about every_steps / (1 - decay) optimizer steps (the weight of an
// update falls to 1/e over that many): one longer than the run mostly remembers where it started.
// Said, with a decay that spans a tenth of the run, not changed.
void print_average_hint(const TrainConfig& cfg, const TrainSetup& setup, const AveragePlan& average) {
  if (!average.on || average.decay >= 1) return;
  int64_t steps = scheduled_steps(cfg, setup);
  if (cfg.max_steps > 0) steps = std::min<int64_t>(steps, cfg.max_steps);
  const double span = average.every_steps / (1 - average.decay);
  if (steps <= 0 || span <= static_cast<double>(steps)) return;
  const double suggested = 1 - 10.0 * average.every_steps / static_cast<double>(steps);
  std::printf(
      "hint     the moving average spans about %s optimizer steps (ema_steps / (1 - ema_decay)), more than "
      "this run's %s: it stays close to the early weights%s\n",
      grouped(span).c_str(), grouped(static_cast<double>(steps)).c_str(),
      suggested >= 0.9 && !cfg.model_ema ? fmt::format("; ema_decay {:.4g} spans a tenth of the run", suggested).c_str()
                                         : "");
}

// An SGD-sized rate given to AdamW: most often a torchvision recipe pasted without --opt, whose
// script defaults to SGD where stoker defaults to AdamW.
void print_rate_hint(const TrainConfig& cfg) {
  if (cfg.optimizer != OptimizerKind::kAdamW || cfg.lr < 0.05) return;
  std::printf(
      "hint     lr %g is an SGD-sized rate and the optimizer is adamw (stoker's default; torchvision's script "
      "defaults to sgd): add --opt sgd, or give adamw a rate such as 0.001\n",
      cfg.lr);
}

// A warmup as long as the run: the rate never reaches lr and the schedule never starts (a
// recipe's --lr-warmup-epochs kept while --epochs was cut down).
void print_warmup_hint(const TrainConfig& cfg, const TrainSetup& setup) {
  const int64_t steps = scheduled_steps(cfg, setup);
  const int64_t warmup = warmup_steps_of(cfg, optimizer_steps_per_epoch(cfg, setup));
  if (warmup == 0 || warmup < steps) return;
  std::printf(
      "hint     the warmup's %s optimizer steps are the whole run's %s: the rate never reaches lr %g%s; shorten "
      "--warmup-epochs or --warmup-steps, or train for longer\n",
      grouped(static_cast<double>(warmup)).c_str(), grouped(static_cast<double>(steps)).c_str(), cfg.lr,
      cfg.schedule == ScheduleKind::kConstant
          ? ""
          : fmt::format(" and schedule {} never starts", to_string(cfg.schedule)).c_str());
}

// The header's words for the moving average: "" when there is none.
std::string average_text(const TrainConfig& cfg, const AveragePlan& average) {
  if (!average.on) return "";
  std::string text = fmt::format(" · ema_decay {:.6g}{}", average.decay,
                                 average.every_steps > 1 ? fmt::format(" every {} steps", average.every_steps) : "");
  if (cfg.model_ema) {
    text += " (torchvision's --model-ema rescaling";
    if (average.copy_until_step > 0) text += fmt::format("; a copy until step {}", average.copy_until_step);
    text += ")";
  }
  return text;
}

}  // namespace

std::optional<Resumption> open_resumption(const TrainConfig& cfg, const ProcessPlace& place) {
  if (cfg.resume.empty()) return std::nullopt;
  Resumption resumption;
  resumption.path = resumed_checkpoint(cfg.resume);
  const std::string& path = resumption.path;
  if (place.leader()) {
    resumption.lock = std::make_shared<DirectoryLock>(
        fs::path(path).parent_path().string(),
        "a run resumes or trains there now; wait for it to end, or copy the folder and resume the copy");
  }
  resumption.checkpoint = std::make_shared<CheckpointFile>(path);
  const CheckpointMeta& meta = resumption.checkpoint->meta();
  if (meta.model != cfg.model || meta.batch_size != cfg.batch_size || meta.seed != cfg.seed) {
    throw UsageError(
        fmt::format("checkpoint {} was made with model {}, batch_size {}, seed {}; "
                    "resume with the same values (got {}, {}, {})",
                    path, meta.model, meta.batch_size, meta.seed, cfg.model, cfg.batch_size, cfg.seed));
  }
  if (meta.world_size != place.world_size) {  // another split of the epochs: not the same run
    throw UsageError(
        fmt::format("checkpoint {} was made by {} training process{}, and this run has {}; resume "
                    "with --nproc-per-node {} (or the same torchrun --nproc-per-node and --nnodes)",
                    path, meta.world_size, meta.world_size == 1 ? "" : "es", place.world_size, meta.world_size));
  }
  if (cfg.max_steps > 0 && cfg.max_steps <= meta.global_step) {
    throw UsageError(
        fmt::format("max_steps {} is not beyond the checkpoint's step {} ({}): the run has "
                    "taken those steps already; give a larger --max-steps, or --max-steps 0 for "
                    "no limit",
                    cfg.max_steps, meta.global_step, path));
  }
  return resumption;
}

RunStart open_run(const TrainConfig& cfg, const TrainSetup& setup, std::optional<Resumption> resumption,
                  const ProcessPlace& place, ModelEma* ema) {
  RunStart start;
  if (resumption) {
    const std::string& path = resumption->path;
    const CheckpointMeta& meta = resumption->checkpoint->meta();
    // The epoch plan (and the position in it) is the data's: on other data it would skip or
    // repeat samples without a word.
    const auto samples = static_cast<int64_t>(setup.train_loader->source().size());
    if (meta.train_samples && *meta.train_samples != samples) {
      throw UsageError(
          fmt::format("checkpoint {} was made on {} training samples, and this run's ({}) are {}; "
                      "resume on the same data and --val-split (to train on other data, start a "
                      "new run with --weights <the run's export>)",
                      path, *meta.train_samples, cfg.data, samples));
    }
    resumption->checkpoint->load_into(*setup.model, *setup.optimizer, ema);
    start.lock = resumption->lock;
    start.resumed = true;
    start.epoch = meta.epoch;
    start.batch = meta.next_batch;
    start.global_step = meta.global_step;
    start.scaler = meta.scaler;
    start.plateau = meta.plateau;
    if (ema != nullptr) start.ema_updates = meta.ema_updates;
    start.run_dir = fs::path(path).parent_path().string();
  } else if (place.leader()) {
    check_output_folder(cfg.output_dir, "--output-dir");
    // A run folder inside the data would be read as part of it next time (a class folder).
    std::vector<CommandInput> inputs = data::data_inputs(cfg.data, "--data");
    for (CommandInput& input : data::data_inputs(cfg.val_data, "--val-data")) inputs.push_back(std::move(input));
    check_output_apart(cfg.output_dir, "--output-dir", inputs);
    start.run_dir = new_run_folder(cfg.output_dir);
    start.lock = std::make_shared<DirectoryLock>(start.run_dir, "wait for it to end");
  }
  if (!place.leader()) return start;
  start.checkpoint_path = (fs::path(start.run_dir) / "checkpoint.pt").string();
  std::ofstream(fs::path(start.run_dir) / "config.yaml") << to_yaml(cfg);
  return start;
}

void print_run_header(const TrainConfig& cfg, const TrainSetup& setup, const RunStart& start,
                      const AveragePlan& average, const ProcessPlace& place) {
  const data::Loader& train_loader = *setup.train_loader;
  const std::string workers_text =
      cfg.num_workers == kAuto ? fmt::format("auto (from {})", setup.start_workers) : std::to_string(cfg.num_workers);
  for (const std::string& line : setup.data_notes) std::fprintf(stderr, "%s\n", line.c_str());
  std::printf("stoker 0.1 · run dir %s\n", start.run_dir.c_str());
  const int threads = torch::get_num_threads();
  std::printf("device   %s · %s · %d thread%s%s\n", setup.device.str().c_str(), torch_description().c_str(), threads,
              threads == 1 ? "" : "s", setup.host.blas.empty() ? "" : (" · " + setup.host.blas).c_str());
  std::printf(
      "data     %s%s\n", setup.train_source->describe().c_str(),
      setup.val_source ? (" · validation " + grouped(static_cast<double>(setup.val_source->size()))).c_str() : "");
  if (const std::string empty = data::classes_without_samples_text(*setup.train_source, "training sample");
      !empty.empty()) {
    std::printf("warning  %s: the model still gives each an output; remove empty class folders, or check the labels\n",
                empty.c_str());
  }
  if (setup.excluded_unknown > 0) {
    std::printf("         %s name%s in --exclude-list %s %s not in the data\n",
                grouped(static_cast<double>(setup.excluded_unknown)).c_str(), setup.excluded_unknown == 1 ? "" : "s",
                cfg.exclude_list.c_str(), setup.excluded_unknown == 1 ? "is" : "are");
  }
  std::printf("inputs   train %s\n", setup.train_chain.describe().c_str());
  if (setup.val_loader) std::printf("         val   %s\n", setup.eval_chain.describe().c_str());
  if (const auto& gpu = setup.feed.gpu_decode) {
    std::printf("decode   JPEGs on the GPU (%s), %s; the rest on the workers\n", gpu->decoder().description().c_str(),
                train_loader.options().gpu_handoff == data::GpuHandoff::kHardware
                    ? "a share of those the engine takes, tuned so that neither it nor the workers wait"
                    : "all nvJPEG takes");
  }
  if (const size_t budget = train_loader.options().cache_decoded_bytes; budget > 0) {
    std::printf("cache    decoded images in RAM after the first epoch, up to %.1f GB\n", budget / 1e9);
  }
  const Objective& objective = setup.objective;
  std::printf(
      "model    %s · %s parameters · %s\n", cfg.model.c_str(),
      fmt::format("{:.2f} M", parameter_count(*setup.model) / 1e6).c_str(),
      objective.classification()
          ? fmt::format("classification, {} classes, loss {}", objective.outputs, to_string(objective.loss)).c_str()
          : fmt::format("regression, {} target{}, loss {}", objective.outputs, objective.outputs == 1 ? "" : "s",
                        to_string(objective.loss))
                .c_str());
  std::printf(
      "config   batch_size %d · epochs %d · lr %g %s · workers %s · prefetch %d · amp %s · accum %d%s\n",
      cfg.batch_size, cfg.epochs, cfg.lr, to_string(cfg.optimizer).c_str(), workers_text.c_str(), cfg.prefetch_factor,
      to_string(cfg.amp).c_str(), cfg.accumulation_steps,
      ((cfg.clip_grad_norm > 0 ? fmt::format(" · clip_grad_norm {:g}", cfg.clip_grad_norm) : std::string()) +
       (cfg.early_stopping_patience > 0 ? fmt::format(" · patience {}", cfg.early_stopping_patience) : std::string()) +
       average_text(cfg, average) +
       (cfg.norm_weight_decay != kAuto
            ? fmt::format(" · norm_weight_decay {:g}{}", cfg.norm_weight_decay,
                          optimizer_groups(*setup.model).norm.empty()
                              ? fmt::format(" (applies to nothing: {} has no normalization layers)", cfg.model)
                              : std::string())
            : std::string()) +
       (cfg.ra_sampler ? fmt::format(" · ra_reps {} ({} samples an epoch{})", cfg.ra_reps,
                                     grouped(static_cast<double>(train_loader.samples_per_epoch())),
                                     place.world_size > 1 ? " per process" : "")
                       : std::string()) +
       (cfg.mixup_alpha > 0 ? fmt::format(" · mixup {:g}", cfg.mixup_alpha) : std::string()) +
       (cfg.cutmix_alpha > 0 ? fmt::format(" · cutmix {:g}", cfg.cutmix_alpha) : std::string()))
          .c_str());
  if (!setup.weights_note.empty()) std::printf("weights  %s: %s\n", cfg.weights.c_str(), setup.weights_note.c_str());
  print_average_hint(cfg, setup, average);
  print_rate_hint(cfg);
  print_warmup_hint(cfg, setup);
  if (place.world_size > 1) {
    std::printf(
        "parallel %d processes (%d on this machine) · each trains on 1/%d of every epoch · gradients "
        "averaged over all before each step (Gloo)\n",
        place.world_size, place.local_world_size, place.world_size);
    std::printf("Batch size: %d per process, %lld per step over %d processes (requested: %d)\n", cfg.batch_size,
                static_cast<long long>(cfg.batch_size) * place.world_size, place.world_size, cfg.batch_size);
  } else {
    std::printf("Batch size: %d (requested: %d)\n", cfg.batch_size, cfg.batch_size);
  }
  if (start.resumed) {
    std::string averaged;
    if (average.on) {
      averaged = start.ema_updates
                     ? fmt::format(" · moving average of {} updates from the checkpoint", *start.ema_updates)
                     : " · the checkpoint has no moving average: it starts from the loaded weights";
    }
    // The plateau's rate: what the header's lr became in the run so far.
    const std::string lowered = start.plateau && start.plateau->lr != cfg.lr
                                    ? fmt::format(" · lr {:g} (lowered by the plateau schedule)", start.plateau->lr)
                                    : "";
    std::printf("resume   epoch %lld, batch %lld, step %lld%s%s\n", static_cast<long long>(start.epoch + 1),
                static_cast<long long>(start.batch), static_cast<long long>(start.global_step), averaged.c_str(),
                lowered.c_str());
  }
  std::fflush(stdout);
}

}  // namespace stoker::train
