// The training loop: stoker::data batches viewed as tensors (zero copy), per-step timing
// (waiting for data / copy / compute), evaluation, metrics, checkpoints, signals.
#include "stoker/train/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/process.h"
#include "stoker/data/loader.h"
#include "stoker/diagnose/loop_diagnosis.h"
#include "stoker/monitor/sampler.h"
#include "stoker/monitor/sinks.h"
#include "train/common/plateau.h"
#include "train/common/progress.h"
#include "train/torch/evaluate/evaluate.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"
#include "train/torch/parallel/data_parallel.h"
#include "train/torch/run/best_weights.h"
#include "train/torch/run/run_directory.h"
#include "train/torch/run/run_records.h"
#include "train/torch/run/setup.h"
#include "train/torch/run/stop_signals.h"
#include "train/torch/run/tensorboard_log.h"
#include "train/torch/step/gpu_memory.h"
#include "train/torch/step/out_of_memory.h"
#include "train/torch/step/step.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace fs = std::filesystem;

std::string torch_description() {
  return "libtorch " + compat::torch_version() + (compat::cuda_available() ? " (CUDA)" : " (CPU)");
}

namespace {

// With fp16 the scaler skips steps whose gradients overflow; a non-finite loss then stops
// the run only when it persists (the scale has fallen for this many windows in a row).
constexpr int kFp16NonFiniteLimit = 20;

// How long a data-parallel process waits for the others (joining, every all-reduce) before
// it gives up with an error: torch's default. The leader's data setup and each validation
// pass happen while the others wait.
constexpr std::chrono::minutes kGroupTimeout{30};

// A well-mixed seed for one (seed, rank, epoch, step) (splitmix64's finaliser over each part).
uint64_t step_seed(uint64_t seed, int rank, int64_t epoch, int64_t step) {
  uint64_t h = seed;
  for (const uint64_t part : {static_cast<uint64_t>(rank), static_cast<uint64_t>(epoch), static_cast<uint64_t>(step)}) {
    h += 0x9e3779b97f4a7c15ULL + part;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h;
}

// "early stop after epoch 7: val acc has not improved for 3 epochs (best 91.2 % at epoch 4, its
// weights in model_best.safetensors)"
std::string early_stop_text(const BestWeights& best, int64_t epoch, int64_t stale) {
  if (best.epoch() == 0) {
    return fmt::format("early stop after epoch {}: validation gave no figure for {} epochs (NaN)", epoch, stale);
  }
  return fmt::format(
      "early stop after epoch {}: {} has not improved for {} epoch{} (best {} at epoch {}, its weights "
      "in model_best.safetensors)",
      epoch, best.figure_name(), stale, stale == 1 ? "" : "s", best.value_text(), best.epoch());
}

// How an epoch's step loop ended.
enum class EpochEnd { kCompleted, kMaxSteps, kSignal };

// The training loop of one run: owns the per-run state that the epochs share, and trains an
// epoch at a time. Lives on the caller's stack for the run; not thread-safe.
// In a data-parallel group every process runs one; only the leader (rank 0) prints, writes
// records and checkpoints (`records` is null in the others).
class TrainLoop {
 public:
  TrainLoop(const TrainConfig& cfg, const TrainUi& ui, TrainSetup& setup, const RunStart& start,
            monitor::Sampler& monitor, diagnose::LoopDiagnosis& diagnosis, RunRecords* records,
            TensorBoardLog* tensorboard, int gpu_index, DataParallel* group, ModelEma* ema)
      : cfg_(cfg),
        ui_(ui),
        setup_(setup),
        start_(start),
        monitor_(monitor),
        diagnosis_(diagnosis),
        records_(records),
        tensorboard_(tensorboard),
        gpu_index_(gpu_index),
        group_(group),
        ema_(ema),
        world_size_(group != nullptr ? group->place().world_size : 1),
        steps_per_epoch_(setup.train_loader->batches_per_epoch()),
        stepper_(cfg, *setup.model, *setup.optimizer, setup.objective, setup.device, scheduled_steps(cfg, setup),
                 optimizer_steps_per_epoch(cfg, setup), start.global_step),
        feed_(*setup.train_loader, setup.objective, setup.feed),
        progress_(stdout) {
    if (stepper_.scaler() != nullptr && start.scaler) stepper_.scaler()->set_state(*start.scaler);
    stepper_.average_gradients_over(group);
    stepper_.keep_average(ema);
  }

  // Trains epoch `epoch` (0-based) from `first_batch`; fills `record` with what it measured.
  EpochEnd train_epoch(int64_t epoch, int64_t first_batch, EpochRecord* record);
  // Saves the checkpoint that resumes at `next_batch` of `epoch` (the leader; a no-op in the
  // other processes of a group).
  void save(int64_t epoch, int64_t next_batch) {
    if (records_ == nullptr) return;
    CheckpointMeta meta{epoch,       next_batch,   stepper_.global_step(), cfg_.seed,    cfg_.batch_size, cfg_.model,
                        world_size_, std::nullopt, std::nullopt,           std::nullopt, std::nullopt};
    if (stepper_.scaler() != nullptr) meta.scaler = stepper_.scaler()->state();
    if (plateau_ != nullptr) meta.plateau = plateau_->state();
    meta.train_samples = static_cast<int64_t>(setup_.train_loader->source().size());
    save_checkpoint(start_.checkpoint_path, *setup_.model, *setup_.optimizer, meta, ema_);
  }
  // The plateau schedule (schedule plateau), whose rate caps the steps' from now on: call again
  // after it lowers the rate. Saved with each checkpoint.
  void follow(const Plateau* plateau) {
    plateau_ = plateau;
    stepper_.cap_lr(plateau->lr());
  }
  const Stepper& stepper() const { return stepper_; }
  // The signal that stopped the run: this process's, or SIGTERM when another process of the
  // group was the one signalled.
  int signal() const { return signals_.raised() != 0 ? signals_.raised() : SIGTERM; }

 private:
  void check_loss(double loss, int64_t epoch, int64_t step);
  void report(const std::vector<std::string>& lines);
  // At a window boundary: whether a signal asks to stop (in any process of the group).
  bool stop_requested();
  // Writes the logging window's scalars (the leader, with TensorBoard on) and starts the next.
  void log_window();
  void draw_progress(int64_t epoch, int64_t first, int64_t step, const Stopwatch& clock, int64_t samples,
                     double loss_sum, int64_t loss_count);

  const TrainConfig& cfg_;
  const TrainUi& ui_;
  TrainSetup& setup_;
  const RunStart& start_;
  monitor::Sampler& monitor_;
  diagnose::LoopDiagnosis& diagnosis_;
  RunRecords* records_;
  TensorBoardLog* tensorboard_;  // the leader's, where it is on; null otherwise
  LogWindow log_window_;
  const int gpu_index_;
  DataParallel* group_;
  ModelEma* ema_;  // the leader's moving average of the weights (AveragePlan::on); null otherwise
  const Plateau* plateau_ = nullptr;
  const int world_size_;
  const int64_t steps_per_epoch_;
  Stepper stepper_;
  DeviceFeed feed_;
  ProgressLine progress_;
  StopSignals signals_;
  int non_finite_in_a_row_ = 0;
  int64_t last_draw_ns_ = 0;
};

void TrainLoop::check_loss(double loss, int64_t epoch, int64_t step) {
  const bool finite = std::isfinite(loss);
  non_finite_in_a_row_ = finite ? 0 : non_finite_in_a_row_ + 1;
  if (finite || (stepper_.scaler() != nullptr && non_finite_in_a_row_ < kFp16NonFiniteLimit)) return;
  progress_.finish();
  throw DataError(fmt::format("loss became {} at epoch {} step {}{}; try a lower --lr (now {:g}){}",
                              std::isnan(loss) ? "NaN" : "infinite", epoch + 1, step + 1,
                              stepper_.scaler() ? fmt::format(" and stayed so for {} steps", non_finite_in_a_row_) : "",
                              cfg_.lr, cfg_.amp != AmpMode::kOff ? " or --amp off" : ""));
}

void TrainLoop::report(const std::vector<std::string>& lines) {
  if (lines.empty() || records_ == nullptr) return;
  progress_.finish();
  for (const auto& line : lines) records_->report(line);
}

void TrainLoop::log_window() {
  if (tensorboard_ != nullptr && log_window_.steps > 0) {
    tensorboard_->window(stepper_.global_step(), log_window_, stepper_.lr());
  }
  log_window_ = {};
}

bool TrainLoop::stop_requested() {
  const bool here = signals_.raised() != 0;
  return group_ != nullptr ? group_->any(here) : here;
}

void TrainLoop::draw_progress(int64_t epoch, int64_t first, int64_t step, const Stopwatch& clock, int64_t samples,
                              double loss_sum, int64_t loss_count) {
  if (!ui_.progress || (now_ns() - last_draw_ns_ <= 100'000'000 && step != steps_per_epoch_)) return;
  last_draw_ns_ = now_ns();
  const double elapsed = ns_to_seconds(clock.elapsed_ns());
  const std::string mon = monitor_.has_sample() ? monitor::format_status_line(monitor_.latest()) : "";
  progress_.update(step - first, steps_per_epoch_ - first,
                   format_progress(static_cast<int>(epoch + 1), cfg_.epochs, step, steps_per_epoch_, elapsed,
                                   elapsed > 0 ? samples / elapsed : 0, loss_count ? loss_sum / loss_count : 0.0, mon));
}

EpochEnd TrainLoop::train_epoch(int64_t epoch, int64_t first, EpochRecord* record) {
  const torch::Device device = setup_.device;
  setup_.model->train();
  feed_.reset();
  setup_.train_loader->start_epoch(epoch, first);
  diagnosis_.start_epoch();
  double loss_sum = 0, sync_s = 0;
  int64_t loss_count = 0, samples = 0, correct = 0, counted = 0;
  GradNorms grad_norms;
  int64_t step = first;
  Stopwatch epoch_clock;
  EpochEnd end = EpochEnd::kCompleted;
  for (;;) {
    FedBatch batch = feed_.next();
    if (!batch) break;
    if (group_ != nullptr && !group_->place().leader()) {
      // Dropout and stochastic depth differ per process, as under torch DDP. The leader's
      // generator is the checkpointed one; the others draw from a seed of (seed, rank, epoch,
      // step), so a resumed group repeats their draws too.
      torch::manual_seed(step_seed(cfg_.seed, group_->place().rank, epoch, step));
    }
    Stepper::Result r = naming_out_of_memory(
        cfg_, device,
        [&] {
          progress_.finish();
          return fmt::format("in training step {} of epoch {}", step + 1, epoch + 1);
        },
        [&] { return stepper_.step(batch.images, batch.targets); });
    r.copy_s += batch.copy_s;
    r.charge_copy_stall(feed_.copy_stall_s());
    sync_s += r.sync_s;
    if (r.grad_norm >= 0) grad_norms.add(r.grad_norm, r.clipped);
    check_loss(r.loss, epoch, step);
    if (std::isfinite(r.loss)) {
      loss_sum += r.loss;
      ++loss_count;
    }
    correct += r.correct;
    counted += r.counted;
    if (gpu_index_ >= 0 && records_ != nullptr && epoch == start_.epoch && step == start_.batch) {
      progress_.finish();
      std::printf("GPU memory after the first batch: %s\n", gpu_memory_text(gpu_index_).c_str());
    }
    const int64_t batch_samples = batch.size();  // this process's; the group trains world_size_ times as many
    const double wait_s = batch.wait_s;
    samples += batch_samples * world_size_;
    ++step;
    batch = FedBatch{};  // the loader's buffer goes back before the diagnosis looks
    report(diagnosis_.after_step(wait_s, r.copy_s, r.compute_s, batch_samples));
    log_window_.steps += 1;
    log_window_.samples += batch_samples * world_size_;
    log_window_.wait_s += wait_s;
    log_window_.copy_s += r.copy_s;
    log_window_.compute_s += r.compute_s;
    if (std::isfinite(r.loss)) {
      log_window_.loss_sum += r.loss;
      ++log_window_.losses;
    }
    log_window_.add_grad_norm(r.grad_norm);
    if (diagnosis_.window_closed()) log_window();
    draw_progress(epoch, first, step, epoch_clock, samples, loss_sum, loss_count);

    if (stepper_.window_open()) continue;  // checkpoints and stops only at window boundaries
    const bool max_reached = cfg_.max_steps > 0 && stepper_.global_step() >= cfg_.max_steps;
    const bool periodic =
        cfg_.checkpoint_every_steps > 0 && r.stepped && stepper_.global_step() % cfg_.checkpoint_every_steps == 0;
    const bool stop = stop_requested();
    if (!stop && !periodic && !max_reached) continue;
    save(epoch, step);
    if (stop) {
      end = EpochEnd::kSignal;
      break;
    }
    if (max_reached) {
      end = EpochEnd::kMaxSteps;  // the checkpoint just saved says where to go on
      break;
    }
  }
  if (end == EpochEnd::kCompleted) {  // a last partial accumulation window
    const Stepper::Result r = stepper_.finish_window();
    if (r.grad_norm >= 0) grad_norms.add(r.grad_norm, r.clipped);
    log_window_.add_grad_norm(r.grad_norm);
  }
  log_window();  // the rest of the epoch
  progress_.finish();
  if (group_ != nullptr) {  // the group's mean loss, not the leader's share alone
    const std::vector<double> sums = group_->sum(
        {loss_sum, static_cast<double>(loss_count), static_cast<double>(correct), static_cast<double>(counted)});
    loss_sum = sums[0];
    loss_count = static_cast<int64_t>(sums[1]);
    correct = static_cast<int64_t>(sums[2]);
    counted = static_cast<int64_t>(sums[3]);
  }
  record->epoch = epoch + 1;
  record->seconds = ns_to_seconds(epoch_clock.elapsed_ns());
  record->samples = samples;
  record->batches = step - first;
  record->train_loss = loss_count ? loss_sum / loss_count : 0.0;
  if (counted > 0) record->train_top1 = static_cast<double>(correct) / static_cast<double>(counted);
  record->times = diagnosis_.epoch_window();
  record->verdict = diagnosis_.epoch_verdict();
  record->stages = diagnosis_.epoch_stages();
  record->workers = setup_.train_loader->workers();
  if (stepper_.scaler() != nullptr) record->scaler = stepper_.scaler()->state();
  if (cfg_.clip_grad_norm > 0) record->grad_norms = grad_norms;
  if (group_ != nullptr && record->seconds > 0) {
    // What the steps waited for after backward; the buckets sent during backward are hidden.
    record->notes += fmt::format(" · all-reduce wait {:.1f} % of the epoch", 100 * sync_s / record->seconds);
  }
  return end;
}

// Refuses, in one line, what the config asks of data that the setup does not have: early
// stopping or a plateau schedule without validation data, a plateau metric of the other task.
void check_run_needs(const TrainConfig& cfg, const TrainSetup& setup) {
  if (cfg.early_stopping_patience > 0 && !setup.val_loader) {
    throw UsageError(
        fmt::format("early_stopping_patience {} needs validation data, and {} has none of its own; give --val-data, or "
                    "--val-split 0.1 to hold out part of it, or set early_stopping_patience 0",
                    cfg.early_stopping_patience, cfg.data));
  }
  if (cfg.schedule == ScheduleKind::kPlateau && !setup.val_loader) {
    throw UsageError(fmt::format(
        "schedule plateau lowers the rate when the validation loss stalls, and {} has no validation data of its own; "
        "give --val-data, or --val-split 0.1 to hold out part of it, or choose another schedule",
        cfg.data));
  }
  if (cfg.schedule == ScheduleKind::kPlateau && cfg.plateau_metric != "val_loss" &&
      setup.objective.classification() != (cfg.plateau_metric == "val_top1")) {
    throw UsageError(fmt::format("plateau_metric {} is a {} figure, and this run's task is {}; use {} or val_loss",
                                 cfg.plateau_metric, cfg.plateau_metric == "val_top1" ? "classification" : "regression",
                                 to_string(setup.objective.task),
                                 setup.objective.classification() ? "val_top1" : "val_mae"));
  }
}

// The weights alone as `run_dir`/`name`, for other tools (torchvision's names for the ResNets
// and EfficientNets), with what feeding them needs in the metadata; returns the path.
std::string export_weights(Network& network, const std::string& run_dir, const char* name,
                           const std::map<std::string, std::string>& metadata) {
  std::string path = (fs::path(run_dir) / name).string();
  save_safetensors(network, path, metadata);
  return path;
}

// The line that lists what a finished run saved.
void print_saved(const RunStart& start, bool averaged, const nlohmann::json& best) {
  const std::string best_text =
      best.is_null() ? "" : fmt::format(" · model_best.safetensors (epoch {})", best["epoch"].get<int64_t>());
  std::printf("saved      %s (atomic) · model.safetensors%s%s · metrics.csv · config.yaml · summary.json\n",
              start.checkpoint_path.c_str(), averaged ? " · model_ema.safetensors" : "", best_text.c_str());
}

}  // namespace

int run_training(const TrainConfig& cfg, const TrainUi& shown) {
  const ProcessPlace place = process_place_from_env();
  std::unique_ptr<DataParallel> group;
  if (place.world_size > 1) group = std::make_unique<DataParallel>(place, kGroupTimeout);
  const bool leader = place.leader();
  TrainUi ui = shown;
  ui.progress = ui.progress && leader;
  ui.json_summary = ui.json_summary && leader;

  // In a group the leader opens the data first, so a mistake in it is reported once, by one
  // process (the launcher stops the others); the rest start when it has.
  if (group && !leader) group->barrier();
  std::optional<Resumption> resumption = open_resumption(cfg, place);
  TrainSetup setup = make_setup(cfg, place);
  check_run_needs(cfg, setup);
  // The moving average of the weights: the leader's, which validates and saves it (every
  // process takes the same steps, so the others would hold the same one).
  std::optional<ModelEma> ema;
  const AveragePlan average = average_plan(cfg, place.world_size, optimizer_steps_per_epoch(cfg, setup));
  if (leader && average.on) ema.emplace(another_model(cfg, setup), *setup.model, average);
  const RunStart start = open_run(cfg, setup, std::move(resumption), place, ema ? &*ema : nullptr);
  if (group && leader) group->barrier();
  if (group) group->broadcast_from_leader(*setup.model);  // one starting point, whatever each process drew
  if (leader) print_run_header(cfg, setup, start, average, place);
  data::Loader& train_loader = *setup.train_loader;

  monitor::SamplerOptions monitor_options;
  monitor_options.pid = ::getpid();
  // The CUDA ordinal as NVML's index: the same unless CUDA_VISIBLE_DEVICES reorders them.
  const int gpu_index = setup.device.is_cuda() ? std::max<int>(0, setup.device.index()) : -1;
  GpuMemoryPeak gpu_memory_peak;  // outlives the sampler's thread, which feeds it
  monitor::Sampler monitor(monitor_options);
  if (gpu_index >= 0) gpu_memory_peak.attach(monitor, gpu_index);
  std::optional<TensorBoardLog> tensorboard;  // the leader's, in the run folder's tb/
  if (leader && cfg.tensorboard) {
    tensorboard.emplace(start.run_dir);
    tensorboard->attach(monitor);
  }
  monitor.start();
  // The processes on this machine share its cores: the diagnosis counts this one's share.
  diagnose::LoopDiagnosis diagnosis(&train_loader, &monitor, cores_per_process(place.local_world_size), gpu_index,
                                    cfg.num_workers == kAuto, cfg.prefetch_factor, cfg.data);
  const data::TransformSpec inputs = inference_inputs(setup);  // what feeding the trained model takes
  std::optional<RunRecords> leader_records;                    // the leader's run folder; none in the other processes
  if (leader) {
    leader_records.emplace(cfg, start.run_dir, start.resumed);
    leader_records->set_process(torch::get_num_threads(), setup.host);
    leader_records->set_inputs(inputs);
  }
  TrainLoop loop(cfg, ui, setup, start, monitor, diagnosis, leader_records ? &*leader_records : nullptr,
                 tensorboard ? &*tensorboard : nullptr, gpu_index, group.get(), ema ? &*ema : nullptr);
  // Every process keeps the plateau's rate; the leader, which validates, decides when it falls.
  std::optional<Plateau> plateau;
  if (cfg.schedule == ScheduleKind::kPlateau) {
    start.plateau ? plateau.emplace(cfg, *start.plateau) : plateau.emplace(cfg);
    if (leader && plateau->restarted()) {
      std::printf(
          "plateau: the checkpoint's schedule watched %s; watching %s from here, its record started afresh "
          "(lr stays %g)\n",
          start.plateau->metric.c_str(), cfg.plateau_metric.c_str(), plateau->lr());
    }
    loop.follow(&*plateau);
  }

  // What feeding the exported weights needs, in both weight files' metadata.
  const auto weights_metadata = [&] {
    return std::map<std::string, std::string>{
        {"model", cfg.model},
        {"task", to_string(setup.objective.task)},
        {"loss", to_string(setup.objective.loss)},
        {"label_smoothing", fmt::format("{:.17g}", setup.objective.label_smoothing)},
        {"outputs", std::to_string(setup.objective.outputs)},
        {"class_names", nlohmann::json(setup.train_source->class_names()).dump()},
        {"inputs", inputs_json(inputs).dump()},
        {"global_step", std::to_string(loop.stepper().global_step())}};
  };
  // The average's metadata adds its decay and updates to the model's.
  const auto averaged_metadata = [&] {
    std::map<std::string, std::string> entries = weights_metadata();
    entries["ema_decay"] = fmt::format("{:.17g}", average.decay);
    entries["ema_updates"] = std::to_string(ema->updates());
    return entries;
  };
  std::optional<BestWeights> best;  // the leader's; it judges the average when there is one
  if (leader) best.emplace(start.run_dir, start.resumed, ema.has_value());

  int exit_code = 0;
  for (int64_t epoch = start.epoch; epoch < cfg.epochs; ++epoch) {
    const int64_t first = epoch == start.epoch ? start.batch : 0;
    EpochRecord record;
    const EpochEnd end = loop.train_epoch(epoch, first, &record);
    if (end == EpochEnd::kSignal) {
      const int signo = loop.signal();
      if (leader)
        std::printf(
            "stopped by %s at epoch %lld step %lld; checkpoint saved: %s\nresume with: stoker train --resume %s\n",
            stop_signal_name(signo), static_cast<long long>(epoch + 1), static_cast<long long>(first + record.batches),
            start.checkpoint_path.c_str(), start.run_dir.c_str());
      exit_code = 128 + signo;
      break;
    }
    const bool max_reached =
        end == EpochEnd::kMaxSteps || (cfg.max_steps > 0 && loop.stepper().global_step() >= cfg.max_steps);
    // Early stopping is the leader's call (it validates); the group hears it at the epoch's end.
    const bool share_early_stop = group && cfg.early_stopping_patience > 0 && !max_reached;
    const bool share_plateau = group && plateau && !max_reached;
    if (!leader) {  // the leader validates, records and saves; the others go on to the next epoch
      if (share_plateau && group->any(false)) {
        plateau->lower();
        loop.follow(&*plateau);
      }
      if (max_reached || (share_early_stop && group->any(false))) break;
      continue;
    }
    RunRecords& records = *leader_records;
    if (setup.val_loader) {
      // One pass over the validation data with `network`; out of memory names `where`.
      const auto validate = [&](Network& network, const char* where) {
        return naming_out_of_memory(
            cfg, setup.device,
            [&] { return fmt::format("{} (batches of {})", where, setup.val_loader->options().batch_size); },
            [&] { return evaluate(network, *setup.val_loader, setup.objective, setup.feed); });
      };
      record.eval = validate(*setup.model, "in validation");
      if (ema) record.ema_eval = validate(ema->network(), "in validating the moving average");
      const bool better = ema ? best->offer(ema->network(), *record.ema_eval, epoch + 1, averaged_metadata)
                              : best->offer(*setup.model, record.eval, epoch + 1, weights_metadata);
      if (better) record.notes += " · best so far";
    }
    if (plateau) {  // validation data is there (checked at the start)
      const double before = plateau->lr();
      const std::string& metric = plateau->metric();
      const double value = metric == "val_top1"  ? record.eval.top1
                           : metric == "val_mae" ? record.eval.mean_mae()
                                                 : record.eval.loss;
      const bool lowered = plateau->observe(value);
      if (lowered) {
        const int stalled = cfg.plateau_patience + 1;
        record.notes += fmt::format(" · lr {:g} → {:g} ({} {}, best {}: {} epoch{} without a better one)", before,
                                    plateau->lr(), figure_name(metric), figure_value_text(metric, value),
                                    figure_value_text(metric, plateau->state().best), stalled, stalled == 1 ? "" : "s");
        loop.follow(&*plateau);
      }
      if (share_plateau) group->any(lowered);
    }
    if (const data::CacheStats cache = train_loader.cache_stats(); cache.budget > 0) {
      record.notes += fmt::format(" · cache {} of {} images, {:.2f} GB{}", grouped(static_cast<double>(cache.entries)),
                                  grouped(static_cast<double>(train_loader.source().size())), cache.bytes / 1e9,
                                  cache.full ? " (full: the rest decode every epoch)" : "");
    }
    if (const double peak = gpu_memory_peak.take(); gpu_index >= 0 && peak >= 0) {
      record.notes += fmt::format(" · GPU memory peak {:.2f} GiB", peak / (1 << 30));
    }
    std::printf("%s\n", records.add_epoch(record, cfg.epochs).c_str());
    if (tensorboard) tensorboard->epoch(loop.stepper().global_step(), record);
    for (const std::string& text : diagnosis.epoch_report()) records.report("           " + text);
    std::fflush(stdout);
    if (end == EpochEnd::kMaxSteps) break;
    const int64_t stale = epoch + 1 - best->epoch();  // epochs since the best (all of them before a figure)
    const bool stop_early = cfg.early_stopping_patience > 0 && !max_reached && epoch + 1 < cfg.epochs &&
                            stale >= cfg.early_stopping_patience;
    if (share_early_stop) group->any(stop_early);
    loop.save(epoch + 1, 0);
    if (stop_early) {
      std::printf("%s\n", early_stop_text(*best, epoch + 1, stale).c_str());
      records.stopped_early(epoch + 1);
    }
    if (max_reached || stop_early) break;
  }
  monitor.stop();
  if (!leader) return exit_code;

  RunRecords& records = *leader_records;
  std::optional<std::string> weights, averaged;
  if (exit_code == 0) {
    weights = export_weights(*setup.model, start.run_dir, "model.safetensors", weights_metadata());
    if (ema) averaged = export_weights(ema->network(), start.run_dir, "model_ema.safetensors", averaged_metadata());
  }
  if (ema) records.set_ema(average.decay, ema->updates(), averaged);
  const nlohmann::json best_so_far = best->summary();
  records.set_best(best_so_far);
  const nlohmann::json& summary = records.finish(weights, loop.stepper().global_step(), exit_code);
  if (exit_code == 0) print_saved(start, ema.has_value(), best_so_far);
  if (tensorboard && !tensorboard->path().empty()) {
    std::printf("TensorBoard: tensorboard --logdir %s\n", cfg.output_dir.c_str());
  }
  std::printf("report: stoker report %s\n", start.run_dir.c_str());
  if (ui.json_summary) std::printf("%s\n", summary.dump().c_str());
  return exit_code;
}

}  // namespace stoker::train
