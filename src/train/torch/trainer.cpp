// The training loop: stoker::data batches viewed as tensors (zero copy), per-step timing
// (waiting for data / copy / compute), evaluation, metrics, checkpoints, signals.
#include "stoker/train/trainer.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "evaluate.h"
#include "loop_diagnosis.h"
#include "models.h"
#include "safetensors.h"
#include "setup.h"
#include "step.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/process.h"
#include "stoker/data/loader.h"
#include "stoker/monitor/gpu_reader.h"
#include "stoker/monitor/sampler.h"
#include "stoker/monitor/sinks.h"
#include "torch_compat.h"
#include "train/common/progress.h"

namespace stoker::train {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signal{0};  // set by the handler; no I/O in the handler

extern "C" void on_stop_signal(int signo) { g_stop_signal.store(signo); }

// Installs SIGINT/SIGTERM handlers for the life of the run and restores the old ones.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal.store(0);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  int raised() const { return g_stop_signal.load(); }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string run_id() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d_%H-%M-%S", &tm);
  return text;
}

// " val acc 91.2 % (top-5 99.8 %)", " val acc 88.0 % · AUC 0.947", " val MAE 0.031 (0.02, 0.04)"
std::string format_eval(const EvalResult& eval) {
  if (!eval.mae.empty()) {
    std::string text = fmt::format("val loss {:.4f} · MAE {:.4g}", eval.loss, eval.mean_mae());
    if (eval.mae.size() > 1 && eval.mae.size() <= 8) text += fmt::format(" ({:.4g})", fmt::join(eval.mae, ", "));
    return text;
  }
  std::string text = fmt::format("val acc {:.1f} %", 100 * eval.top1);
  if (eval.top5 >= 0) text += fmt::format(" (top-5 {:.1f} %)", 100 * eval.top5);
  if (eval.auc >= 0 || std::isnan(eval.auc)) text += fmt::format(" · AUC {:.4f}", eval.auc);
  return text;
}

// Out of memory in a step: one line naming the batch size that failed and what keeps the
// effective batch (UX: never a raw allocator exception).
SystemError out_of_memory(const TrainConfig& cfg, const torch::Device& device, const std::string& where) {
  const int effective = cfg.batch_size * cfg.accumulation_steps;
  std::string tries;
  if (cfg.batch_size > 1) {
    const int half = (cfg.batch_size + 1) / 2;
    tries = fmt::format("--batch-size {} --accumulation-steps {} (effective batch {}{})", half,
                        cfg.accumulation_steps * 2, half * cfg.accumulation_steps * 2,
                        half * cfg.accumulation_steps * 2 == effective ? ", as now" : "");
  }
  if (cfg.amp == AmpMode::kOff) tries += std::string(tries.empty() ? "" : ", ") + "--amp bf16";
  if (tries.empty()) tries = "a smaller model or input size";
  return SystemError(fmt::format("out of memory {} at batch size {} on {}; try {}, or stoker doctor "
                                 "--find-batch-size to find the largest batch that fits",
                                 where, cfg.batch_size, device.str(), tries));
}

// "3.21 GiB used by this process (NVML)", or why it is unknown.
std::string gpu_memory_text(int gpu_index) {
  std::string why;
  const auto reader = monitor::GpuReader::open(&why);
  if (!reader) return "unknown (" + why + ")";
  std::vector<monitor::GpuSample> samples;
  reader->sample(&samples, now_ns(), {::getpid()}, false);
  for (const monitor::GpuSample& gpu : samples) {
    if (gpu.index != gpu_index || !gpu.process_memory_bytes.ok()) continue;
    return fmt::format("{:.2f} GiB used by this process (NVML)", gpu.process_memory_bytes.value / (1 << 30));
  }
  return "unknown (NVML does not report this process on GPU " + std::to_string(gpu_index) + ")";
}

// Runs `work`; an out-of-memory failure in it becomes out_of_memory()'s one line, with
// `where()` saying what ran out. Other failures pass through unchanged.
template <typename Work, typename Where>
auto naming_out_of_memory(const TrainConfig& cfg, const torch::Device& device, Where where, Work work) {
  try {
    return work();
  } catch (const std::exception& e) {
    if (!compat::is_out_of_memory(e)) throw;
    throw out_of_memory(cfg, device, where());
  }
}

std::string checkpoint_path_of(const std::string& resume) {
  std::error_code ec;
  return fs::is_directory(resume, ec) ? (fs::path(resume) / "checkpoint.pt").string() : resume;
}

}  // namespace

std::string torch_description() {
  return "libtorch " + compat::torch_version() + (compat::cuda_available() ? " (CUDA)" : " (CPU)");
}

int run_training(const TrainConfig& cfg, const TrainUi& ui) {
  TrainSetup setup = make_setup(cfg);
  const torch::Device device = setup.device;
  data::Loader& train_loader = *setup.train_loader;
  Network& model = *setup.model;
  torch::optim::Optimizer& optimizer = *setup.optimizer;

  // Run directory, resume.
  int64_t start_epoch = 0, start_batch = 0, global_step = 0;
  std::optional<GradScaler::State> scaler_state;
  std::string run_dir;
  if (!cfg.resume.empty()) {
    const std::string path = checkpoint_path_of(cfg.resume);
    CheckpointFile checkpoint(path);
    const CheckpointMeta& meta = checkpoint.meta();
    if (meta.model != cfg.model || meta.batch_size != cfg.batch_size || meta.seed != cfg.seed) {
      throw UsageError(fmt::format("checkpoint {} was made with model {}, batch_size {}, seed {}; "
                                   "resume with the same values (got {}, {}, {})",
                                   path, meta.model, meta.batch_size, meta.seed, cfg.model, cfg.batch_size, cfg.seed));
    }
    checkpoint.load_into(model, optimizer);
    start_epoch = meta.epoch;
    start_batch = meta.next_batch;
    global_step = meta.global_step;
    scaler_state = meta.scaler;
    run_dir = fs::path(path).parent_path().string();
  } else {
    run_dir = (fs::path(cfg.output_dir) / run_id()).string();
    std::error_code ec;
    fs::create_directories(run_dir, ec);
    if (ec) throw UsageError("cannot create run directory " + run_dir + ": " + ec.message() + "; choose --output-dir");
  }
  const std::string checkpoint_path = (fs::path(run_dir) / "checkpoint.pt").string();
  {
    std::ofstream config_file(fs::path(run_dir) / "config.yaml");
    config_file << to_yaml(cfg);
  }

  // Header (UX.md).
  const int64_t steps_per_epoch = train_loader.batches_per_epoch();
  const std::string workers_text = cfg.num_workers == kAuto
                                       ? fmt::format("auto (from {})", setup.start_workers)
                                       : std::to_string(cfg.num_workers);
  std::printf("stoker 0.1 · run dir %s\n", run_dir.c_str());
  std::printf("device   %s · %s · %d threads\n", device.str().c_str(), torch_description().c_str(), torch::get_num_threads());
  std::printf("data     %s%s\n", setup.train_source->describe().c_str(),
              setup.val_source ? (" · validation " + std::to_string(setup.val_source->size())).c_str() : "");
  if (const size_t budget = train_loader.options().cache_decoded_bytes; budget > 0) {
    std::printf("cache    decoded images in RAM after the first epoch, up to %.1f GB\n", budget / 1e9);
  }
  const Objective& objective = setup.objective;
  std::printf("model    %s · %s parameters · %s\n", cfg.model.c_str(),
              fmt::format("{:.2f} M", parameter_count(model) / 1e6).c_str(),
              objective.classification()
                  ? fmt::format("classification, {} classes, loss {}", objective.outputs, to_string(objective.loss)).c_str()
                  : fmt::format("regression, {} target{}, loss {}", objective.outputs, objective.outputs == 1 ? "" : "s",
                                to_string(objective.loss)).c_str());
  std::printf("config   batch_size %d · epochs %d · lr %g %s · workers %s · prefetch %d · amp %s · accum %d\n",
              cfg.batch_size, cfg.epochs, cfg.lr, to_string(cfg.optimizer).c_str(), workers_text.c_str(),
              cfg.prefetch_factor, to_string(cfg.amp).c_str(), cfg.accumulation_steps);
  std::printf("Batch size: %d (requested: %d)\n", cfg.batch_size, cfg.batch_size);
  if (!cfg.resume.empty()) {
    std::printf("resume   epoch %lld, batch %lld, step %lld\n", static_cast<long long>(start_epoch + 1),
                static_cast<long long>(start_batch), static_cast<long long>(global_step));
  }
  std::fflush(stdout);

  monitor::SamplerOptions monitor_options;
  monitor_options.pid = ::getpid();
  // The CUDA ordinal as NVML's index: the same unless CUDA_VISIBLE_DEVICES reorders them.
  const int gpu_index = device.is_cuda() ? std::max<int>(0, device.index()) : -1;
  // GPU memory this process holds (NVML, so the caching allocator's reserve is included, as
  // nvidia-smi shows it): the peak of each epoch, from the sampler thread. Declared before
  // the sampler, so it outlives the sampler's thread on every path out of this function.
  std::atomic<double> gpu_memory_peak{-1};
  monitor::Sampler monitor(monitor_options);
  if (gpu_index >= 0) {
    monitor.add_sink([&gpu_memory_peak, gpu_index](const monitor::Sample& sample) {
      for (const monitor::GpuSample& gpu : sample.gpus) {
        if (gpu.index != gpu_index || !gpu.process_memory_bytes.ok()) continue;
        const double used = gpu.process_memory_bytes.value;
        double seen = gpu_memory_peak.load();
        while (used > seen && !gpu_memory_peak.compare_exchange_weak(seen, used)) {
        }
      }
    });
  }
  monitor.start();
  LoopDiagnosis diagnosis(train_loader, monitor, usable_cores(), gpu_index, cfg.num_workers == kAuto,
                          cfg.prefetch_factor, cfg.data);

  std::ofstream metrics(fs::path(run_dir) / "metrics.csv", cfg.resume.empty() ? std::ios::trunc : std::ios::app);
  if (cfg.resume.empty()) {
    metrics << "epoch,seconds,samples,samples_per_sec,batches_per_sec,train_loss,val_loss,val_top1,val_top5,"
               "val_auc,val_mae,wait_s,copy_s,compute_s,workers,fp16_scale,fp16_skipped\n";
  }
  std::ofstream events(fs::path(run_dir) / "events.log", std::ios::app);
  auto report = [&](const std::string& text) {
    std::printf("%s\n", text.c_str());
    events << text << "\n";
    events.flush();
  };
  nlohmann::json summary = {{"run_dir", run_dir}, {"model", cfg.model}, {"batch_size", cfg.batch_size},
                            {"epochs", nlohmann::json::array()}};

  StopSignals signals;
  ProgressLine progress(stdout);
  const int64_t total_steps = static_cast<int64_t>(cfg.epochs) * steps_per_epoch / cfg.accumulation_steps;
  Stepper stepper(cfg, model, optimizer, objective, device, total_steps, steps_per_epoch / cfg.accumulation_steps,
                  global_step);
  if (stepper.scaler() != nullptr && scaler_state) stepper.scaler()->set_state(*scaler_state);
  auto checkpoint_meta = [&](int64_t epoch, int64_t next_batch) {
    CheckpointMeta meta{epoch, next_batch, stepper.global_step(), cfg.seed, cfg.batch_size, cfg.model, std::nullopt};
    if (stepper.scaler() != nullptr) meta.scaler = stepper.scaler()->state();
    return meta;
  };
  // With fp16 the scaler skips steps whose gradients overflow; a non-finite loss then stops
  // the run only when it persists (the scale has fallen for this many windows in a row).
  constexpr int kFp16NonFiniteLimit = 20;
  int non_finite_in_a_row = 0;
  double total_samples = 0, total_train_seconds = 0;
  int exit_code = 0;
  bool stopped_at_max_steps = false;

  DeviceFeed feed(train_loader, objective, setup.feed);
  for (int64_t epoch = start_epoch; epoch < cfg.epochs && exit_code == 0; ++epoch) {
    model.train();
    feed.reset();
    train_loader.start_epoch(epoch, epoch == start_epoch ? start_batch : 0);
    diagnosis.start_epoch();
    double loss_sum = 0;
    int64_t loss_count = 0, samples = 0;
    const int64_t first = epoch == start_epoch ? start_batch : 0;
    int64_t step = first;
    Stopwatch epoch_clock;
    int64_t last_draw_ns = 0;
    for (;;) {
      FedBatch batch = feed.next();
      const double wait_s = batch.wait_s;
      if (!batch) break;
      Stepper::Result r = naming_out_of_memory(
          cfg, device,
          [&] {
            progress.finish();
            return fmt::format("in training step {} of epoch {}", step + 1, epoch + 1);
          },
          [&] { return stepper.step(batch.images, batch.targets); });
      r.copy_s += batch.copy_s;
      const bool finite = std::isfinite(r.loss);
      non_finite_in_a_row = finite ? 0 : non_finite_in_a_row + 1;
      if (!finite && (stepper.scaler() == nullptr || non_finite_in_a_row >= kFp16NonFiniteLimit)) {
        progress.finish();
        throw DataError(fmt::format("loss became {} at epoch {} step {}{}; try a lower --lr (now {:g}){}",
                                    std::isnan(r.loss) ? "NaN" : "infinite", epoch + 1, step + 1,
                                    stepper.scaler() ? fmt::format(" and stayed so for {} steps", non_finite_in_a_row) : "",
                                    cfg.lr, cfg.amp != AmpMode::kOff ? " or --amp off" : ""));
      }
      if (finite) {
        loss_sum += r.loss;
        ++loss_count;
      }
      if (gpu_index >= 0 && epoch == start_epoch && step == first) {
        progress.finish();
        std::printf("GPU memory after the first batch: %s\n", gpu_memory_text(gpu_index).c_str());
      }
      samples += batch.size();
      ++step;
      const int64_t batch_samples = batch.size();
      batch = FedBatch{};
      const auto lines = diagnosis.after_step(wait_s, r.copy_s, r.compute_s, batch_samples);
      if (!lines.empty()) {
        progress.finish();
        for (const auto& line : lines) report(line);
      }

      if (ui.progress && (now_ns() - last_draw_ns > 100'000'000 || step == steps_per_epoch)) {
        last_draw_ns = now_ns();
        const double elapsed = ns_to_seconds(epoch_clock.elapsed_ns());
        const std::string mon = monitor.has_sample() ? monitor::format_status_line(monitor.latest()) : "";
        progress.update(step - first, steps_per_epoch - first,
                        format_progress(static_cast<int>(epoch + 1), cfg.epochs, step, steps_per_epoch, elapsed,
                                        elapsed > 0 ? samples / elapsed : 0,
                                        loss_count ? loss_sum / loss_count : 0.0, mon));
      }
      const bool at_boundary = !stepper.window_open();
      const bool max_reached = cfg.max_steps > 0 && stepper.global_step() >= cfg.max_steps && at_boundary;
      if (at_boundary &&
          (signals.raised() != 0 ||
           (cfg.checkpoint_every_steps > 0 && r.stepped && stepper.global_step() % cfg.checkpoint_every_steps == 0) ||
           max_reached)) {
        save_checkpoint(checkpoint_path, model, optimizer, checkpoint_meta(epoch, step));
        if (signals.raised() != 0) {
          progress.finish();
          std::printf("stopped by %s at epoch %lld step %lld; checkpoint saved: %s\nresume with: stoker train --resume %s\n",
                      signals.raised() == SIGINT ? "SIGINT" : "SIGTERM", static_cast<long long>(epoch + 1),
                      static_cast<long long>(step), checkpoint_path.c_str(), run_dir.c_str());
          exit_code = 128 + signals.raised();
          break;
        }
        if (max_reached) {
          stopped_at_max_steps = true;  // the checkpoint just saved says where to go on
          break;
        }
      }
    }
    if (exit_code != 0) break;
    if (!stopped_at_max_steps) stepper.finish_window();  // a last partial accumulation window
    progress.finish();
    const double seconds = ns_to_seconds(epoch_clock.elapsed_ns());
    const diagnose::StepWindow& times = diagnosis.epoch_window();
    const double train_seconds = times.total_s();
    total_samples += static_cast<double>(samples);
    total_train_seconds += train_seconds;

    EvalResult eval;
    if (setup.val_loader) {
      eval = naming_out_of_memory(
          cfg, device,
          [&] { return fmt::format("in validation (batches of {})", setup.val_loader->options().batch_size); },
          [&] { return evaluate(model, *setup.val_loader, objective, setup.feed); });
    }
    const double sps = train_seconds > 0 ? samples / train_seconds : 0;
    std::string line = fmt::format("epoch {}/{}  done in {:.1f} s · {:.0f} samples/s · {:.1f} batches/s · train loss {:.3f}",
                                   epoch + 1, cfg.epochs, seconds, sps,
                                   train_seconds > 0 ? (step - first) / train_seconds : 0.0,
                                   loss_count ? loss_sum / loss_count : 0.0);
    if (eval.samples > 0) line += " · " + format_eval(eval);
    if (const data::CacheStats cache = train_loader.cache_stats(); cache.budget > 0) {
      line += fmt::format(" · cache {} of {} images, {:.2f} GB{}", grouped(static_cast<double>(cache.entries)),
                          grouped(static_cast<double>(train_loader.source().size())), cache.bytes / 1e9,
                          cache.full ? " (full: the rest decode every epoch)" : "");
    }
    if (gpu_index >= 0 && gpu_memory_peak.load() >= 0) {
      line += fmt::format(" · GPU memory peak {:.2f} GiB", gpu_memory_peak.exchange(-1) / (1 << 30));
    }
    const GradScaler* scaler = stepper.scaler();
    if (scaler != nullptr) {
      line += fmt::format(" · fp16 scale {:g}, {} step{} skipped", scaler->state().scale, scaler->state().skipped,
                          scaler->state().skipped == 1 ? "" : "s");
    }
    std::printf("%s\n", line.c_str());
    for (const std::string& text : diagnosis.epoch_report()) report("           " + text);
    std::fflush(stdout);
    auto optional = [](bool present, double value) { return present ? fmt::format("{:.5f}", value) : std::string(); };
    metrics << fmt::format("{},{:.3f},{},{:.2f},{:.3f},{:.5f},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{}\n", epoch + 1,
                           seconds, samples, sps, train_seconds > 0 ? (step - first) / train_seconds : 0.0,
                           loss_count ? loss_sum / loss_count : 0.0, optional(eval.samples > 0, eval.loss),
                           optional(eval.top1 >= 0, eval.top1), optional(eval.top5 >= 0, eval.top5),
                           optional(eval.auc >= 0, eval.auc), optional(!eval.mae.empty(), eval.mean_mae()),
                           times.wait_s, times.copy_s, times.compute_s, train_loader.workers(),
                           scaler ? fmt::format("{:g}", scaler->state().scale) : "",
                           scaler ? std::to_string(scaler->state().skipped) : "");
    metrics.flush();
    summary["epochs"].push_back({{"epoch", epoch + 1},
                                 {"seconds", seconds},
                                 {"samples_per_sec", sps},
                                 {"train_loss", loss_count ? loss_sum / loss_count : 0.0},
                                 {"test_accuracy", eval.top1 >= 0 ? nlohmann::json(eval.top1) : nlohmann::json(nullptr)},
                                 {"val_loss", eval.samples ? nlohmann::json(eval.loss) : nlohmann::json(nullptr)},
                                 {"val_auc", eval.auc >= 0 ? nlohmann::json(eval.auc) : nlohmann::json(nullptr)},
                                 {"val_mae", eval.mae.empty() ? nlohmann::json(nullptr) : nlohmann::json(eval.mae)},
                                 {"wait_s", times.wait_s},
                                 {"copy_s", times.copy_s},
                                 {"compute_s", times.compute_s},
                                 {"workers", train_loader.workers()},
                                 {"verdict", diagnose::verdict_name(diagnose::classify(times))}});
    if (stopped_at_max_steps) break;
    save_checkpoint(checkpoint_path, model, optimizer, checkpoint_meta(epoch + 1, 0));
    if (cfg.max_steps > 0 && stepper.global_step() >= cfg.max_steps) break;
  }
  monitor.stop();

  // The weights alone, for other tools (torchvision's names for the ResNets).
  const std::string weights_path = (fs::path(run_dir) / "model.safetensors").string();
  if (exit_code == 0) {
    save_safetensors(model, weights_path,
                     {{"model", cfg.model},
                      {"task", to_string(objective.task)},
                      {"outputs", std::to_string(objective.outputs)},
                      {"class_names", nlohmann::json(setup.train_source->class_names()).dump()},
                      {"global_step", std::to_string(stepper.global_step())}});
    summary["weights"] = weights_path;
  }
  summary["samples_per_sec"] = total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0;
  summary["test_accuracy"] = summary["epochs"].empty() ? nlohmann::json(nullptr) : summary["epochs"].back()["test_accuracy"];
  summary["global_step"] = stepper.global_step();
  summary["exit_code"] = exit_code;
  {
    std::ofstream out(fs::path(run_dir) / "summary.json");
    out << summary.dump(2) << "\n";
  }
  if (exit_code == 0) {
    std::printf("saved      %s (atomic) · model.safetensors · metrics.csv · config.yaml · summary.json\n", checkpoint_path.c_str());
  }
  if (ui.json_summary) std::printf("%s\n", summary.dump().c_str());
  return exit_code;
}

}  // namespace stoker::train
