// The loop of a training run (train_loop.h).
#include "train/torch/run/train_loop.h"

#include <fmt/format.h>

#include <cmath>
#include <csignal>
#include <cstdio>

#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/shell_quote.h"
#include "stoker/data/loader.h"
#include "stoker/monitor/sinks.h"
#include "train/torch/evaluate/evaluate.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/step/out_of_memory.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

// With fp16 the scaler skips steps whose gradients overflow; a non-finite loss then stops
// the run only when it persists (the scale has fallen for this many windows in a row).
constexpr int kFp16NonFiniteLimit = 20;

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

}  // namespace

TrainLoop::TrainLoop(const RunParts& run)
    : run_(run),
      cfg_(run.cfg),
      leader_(run.group == nullptr || run.group->place().leader()),
      world_size_(run.group != nullptr ? run.group->place().world_size : 1),
      steps_per_epoch_(run.setup.train_loader->batches_per_epoch()),
      stepper_(run.cfg, *run.setup.model, *run.setup.optimizer, run.setup.objective, run.setup.device,
               scheduled_steps(run.cfg, run.setup), optimizer_steps_per_epoch(run.cfg, run.setup),
               run.start.global_step),
      feed_(*run.setup.train_loader, run.setup.objective, run.setup.feed),
      progress_(stdout) {
  if (stepper_.scaler() != nullptr && run.start.scaler) stepper_.scaler()->set_state(*run.start.scaler);
  stepper_.average_gradients_over(run.group);
  stepper_.keep_average(run.ema);
  if (cfg_.schedule == ScheduleKind::kPlateau) {
    run.start.plateau ? plateau_.emplace(cfg_, *run.start.plateau) : plateau_.emplace(cfg_);
    if (leader_ && plateau_->restarted()) {
      std::printf(
          "plateau: the checkpoint's schedule watched %s; watching %s from here, its record started afresh "
          "(lr stays %g)\n",
          run.start.plateau->metric.c_str(), cfg_.plateau_metric.c_str(), plateau_->lr());
    }
    follow_plateau();
  }
  if (leader_) best_.emplace(run.start.run_dir, run.start.resumed, run.ema != nullptr);
}

int TrainLoop::run() {
  for (int64_t epoch = run_.start.epoch; epoch < cfg_.epochs; ++epoch) {
    const int64_t first = epoch == run_.start.epoch ? run_.start.batch : 0;
    EpochRecord record;
    const EpochEnd end = train_epoch(epoch, first, &record);
    if (end == EpochEnd::kSignal) {
      const int signo = signal();
      if (leader_) {
        std::printf(
            "stopped by %s at epoch %lld step %lld; checkpoint saved: %s\nresume with: stoker train --resume %s\n",
            stop_signal_name(signo), static_cast<long long>(epoch + 1), static_cast<long long>(first + record.batches),
            run_.start.checkpoint_path.c_str(), shell_quote(run_.start.run_dir).c_str());
      }
      return 128 + signo;
    }
    const bool max_reached =
        end == EpochEnd::kMaxSteps || (cfg_.max_steps > 0 && stepper_.global_step() >= cfg_.max_steps);
    const bool stop =
        leader_ ? finish_epoch_as_leader(epoch, end, max_reached, record) : finish_epoch_as_follower(max_reached);
    if (stop) break;
  }
  return 0;
}

bool TrainLoop::finish_epoch_as_follower(bool max_reached) {
  // The leader validates, records and saves; the others hear its decisions and go on.
  if (plateau_ && !max_reached && run_.group->any(false)) {
    plateau_->lower();
    follow_plateau();
  }
  return max_reached || (cfg_.early_stopping_patience > 0 && run_.group->any(false));
}

bool TrainLoop::finish_epoch_as_leader(int64_t epoch, EpochEnd end, bool max_reached, EpochRecord& record) {
  TrainSetup& setup = run_.setup;
  // Early stopping and the plateau are the leader's calls (it validates); the group hears
  // them at the epoch's end.
  const bool share_early_stop = run_.group != nullptr && cfg_.early_stopping_patience > 0 && !max_reached;
  const bool share_plateau = run_.group != nullptr && plateau_ && !max_reached;
  if (setup.val_loader) {
    // One pass over the validation data with `network`; out of memory names `where`.
    const auto validate = [&](Network& network, const char* where) {
      return naming_out_of_memory(
          cfg_, setup.device,
          [&] { return fmt::format("{} (batches of {})", where, setup.val_loader->options().batch_size); },
          [&] { return evaluate(network, *setup.val_loader, setup.objective, setup.feed); });
    };
    record.eval = validate(*setup.model, "in validation");
    if (run_.ema != nullptr) record.ema_eval = validate(run_.ema->network(), "in validating the moving average");
    const int64_t step = stepper_.global_step();
    const bool better = run_.ema != nullptr ? best_->offer(run_.ema->network(), *record.ema_eval, epoch + 1,
                                                           [&] { return run_.metadata.averaged(step, *run_.ema); })
                                            : best_->offer(*setup.model, record.eval, epoch + 1,
                                                           [&] { return run_.metadata.model(step); });
    if (better) record.notes += " · best so far";
  }
  if (plateau_) observe_plateau(record.eval, record, share_plateau);  // validation data is there (setup checks)
  const data::Loader& train_loader = *setup.train_loader;
  if (const data::CacheStats cache = train_loader.cache_stats(); cache.budget > 0) {
    record.notes += fmt::format(" · cache {} of {} images, {:.2f} GB{}", grouped(static_cast<double>(cache.entries)),
                                grouped(static_cast<double>(train_loader.source().size())), cache.bytes / 1e9,
                                cache.full ? " (full: the rest decode every epoch)" : "");
  }
  if (const auto& gpu = setup.feed.gpu_decode) {  // counts since the run started
    record.notes +=
        fmt::format(" · {} JPEGs decoded on the GPU, {} given back to the CPU",
                    grouped(static_cast<double>(gpu->decoded())), grouped(static_cast<double>(gpu->fallbacks())));
    // --decode auto: the share of the engine's JPEGs the workers leave it, now (tune_share).
    if (train_loader.options().gpu_handoff == data::GpuHandoff::kHardware) {
      record.notes += fmt::format(", share {:.2f}", train_loader.gpu_share());
    }
  }
  if (const data::EpochStats stats = train_loader.epoch_stats(); stats.bad > 0 && !stats.bad_samples.empty()) {
    // Replaced as --on-error substitute says; named here so a damaged file is not seen only in a scan.
    const data::BadSample& first = stats.bad_samples.front();
    record.notes += fmt::format(
        " · {} bad sample{} replaced, the first {}: {} (stoker scan -o bad.txt lists them; "
        "--exclude-list bad.txt leaves them out)",
        grouped(static_cast<double>(stats.bad)), stats.bad == 1 ? "" : "s", first.name, first.reason);
  }
  if (const double peak = run_.gpu_memory_peak.take(); run_.gpu_index >= 0 && peak >= 0) {
    record.notes += fmt::format(" · GPU memory peak {:.2f} GiB", peak / (1 << 30));
  }
  RunRecords& records = *run_.records;
  std::printf("%s\n", records.add_epoch(record, cfg_.epochs).c_str());
  if (run_.tensorboard != nullptr) run_.tensorboard->epoch(stepper_.global_step(), record);
  for (const std::string& text : run_.diagnosis.epoch_report()) records.report("           " + text);
  std::fflush(stdout);
  if (end == EpochEnd::kMaxSteps) return true;
  const int64_t stale = epoch + 1 - best_->epoch();  // epochs since the best (all of them before a figure)
  const bool stop_early = cfg_.early_stopping_patience > 0 && !max_reached && epoch + 1 < cfg_.epochs &&
                          stale >= cfg_.early_stopping_patience;
  if (share_early_stop) run_.group->any(stop_early);
  save(epoch + 1, 0);
  if (stop_early) {
    std::printf("%s\n", early_stop_text(*best_, epoch + 1, stale).c_str());
    records.stopped_early(epoch + 1);
  }
  return max_reached || stop_early;
}

void TrainLoop::observe_plateau(const EvalResult& eval, EpochRecord& record, bool share) {
  const double before = plateau_->lr();
  const std::string& metric = plateau_->metric();
  const double value = metric == "val_top1" ? eval.top1 : metric == "val_mae" ? eval.mean_mae() : eval.loss;
  const bool lowered = plateau_->observe(value);
  if (lowered) {
    const int stalled = cfg_.plateau_patience + 1;
    record.notes += fmt::format(" · lr {:g} → {:g} ({} {}, best {}: {} epoch{} without a better one)", before,
                                plateau_->lr(), figure_name(metric), figure_value_text(metric, value),
                                figure_value_text(metric, plateau_->state().best), stalled, stalled == 1 ? "" : "s");
    follow_plateau();
  }
  if (share) run_.group->any(lowered);
}

void TrainLoop::save(int64_t epoch, int64_t next_batch) {
  if (run_.records == nullptr) return;
  CheckpointMeta meta{epoch,       next_batch,   stepper_.global_step(), cfg_.seed,    cfg_.batch_size, cfg_.model,
                      world_size_, std::nullopt, std::nullopt,           std::nullopt, std::nullopt,    std::nullopt};
  if (stepper_.scaler() != nullptr) meta.scaler = stepper_.scaler()->state();
  if (plateau_) meta.plateau = plateau_->state();
  meta.train_samples = static_cast<int64_t>(run_.setup.train_loader->source().size());
  const data::FeatureSpec& features = run_.setup.train_loader->options().transform.features;
  if (features.standardize && !features.mean.empty()) meta.standardize = FittedStatistics{features.mean, features.std};
  save_checkpoint(run_.start.checkpoint_path, *run_.setup.model, *run_.setup.optimizer, meta, run_.ema);
}

int TrainLoop::signal() const { return signals_.raised() != 0 ? signals_.raised() : SIGTERM; }

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
  if (lines.empty() || run_.records == nullptr) return;
  progress_.finish();
  for (const auto& line : lines) run_.records->report(line);
}

void TrainLoop::log_window() {
  if (run_.tensorboard != nullptr && log_window_.steps > 0) {
    run_.tensorboard->window(stepper_.global_step(), log_window_, stepper_.lr());
  }
  log_window_ = {};
}

bool TrainLoop::stop_requested() {
  const bool here = signals_.raised() != 0;
  return run_.group != nullptr ? run_.group->any(here) : here;
}

void TrainLoop::draw_progress(int64_t epoch, int64_t first, int64_t step, const Stopwatch& clock, int64_t samples,
                              double loss_sum, int64_t loss_count) {
  if (!run_.ui.progress || (now_ns() - last_draw_ns_ <= 100'000'000 && step != steps_per_epoch_)) return;
  last_draw_ns_ = now_ns();
  const double elapsed = ns_to_seconds(clock.elapsed_ns());
  const std::string mon = run_.monitor.has_sample() ? monitor::format_status_line(run_.monitor.latest()) : "";
  progress_.update(step - first, steps_per_epoch_ - first,
                   format_progress(static_cast<int>(epoch + 1), cfg_.epochs, step, steps_per_epoch_, elapsed,
                                   elapsed > 0 ? samples / elapsed : 0, loss_count ? loss_sum / loss_count : 0.0, mon));
}

TrainLoop::EpochEnd TrainLoop::train_epoch(int64_t epoch, int64_t first, EpochRecord* record) {
  const torch::Device device = run_.setup.device;
  run_.setup.model->train();
  feed_.reset();
  run_.setup.train_loader->start_epoch(epoch, first);
  run_.diagnosis.start_epoch();
  double loss_sum = 0, sync_s = 0;
  int64_t loss_count = 0, samples = 0, correct = 0, counted = 0;
  GradNorms grad_norms;
  int64_t step = first;
  Stopwatch epoch_clock;
  EpochEnd end = EpochEnd::kCompleted;
  for (;;) {
    FedBatch batch = feed_.next();
    if (!batch) break;
    if (run_.group != nullptr && !run_.group->place().leader()) {
      // Dropout and stochastic depth differ per process, as under torch DDP. The leader's
      // generator is the checkpointed one; the others draw from a seed of (seed, rank, epoch,
      // step), so a resumed group repeats their draws too.
      torch::manual_seed(step_seed(cfg_.seed, run_.group->place().rank, epoch, step));
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
    if (run_.gpu_index >= 0 && run_.records != nullptr && epoch == run_.start.epoch && step == run_.start.batch) {
      progress_.finish();
      std::printf("GPU memory after the first batch: %s\n", gpu_memory_text(run_.gpu_index).c_str());
    }
    const int64_t batch_samples = batch.size();  // this process's; the group trains world_size_ times as many
    const double wait_s = batch.wait_s;
    samples += batch_samples * world_size_;
    ++step;
    if (run_.tensorboard != nullptr) run_.tensorboard->reached(stepper_.global_step());
    batch = FedBatch{};  // the loader's buffer goes back before the diagnosis looks
    report(run_.diagnosis.after_step(wait_s, r.copy_s, r.compute_s, batch_samples));
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
    if (run_.diagnosis.window_closed()) log_window();
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
  if (run_.group != nullptr) {  // the group's mean loss, not the leader's share alone
    const std::vector<double> sums = run_.group->sum(
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
  record->times = run_.diagnosis.epoch_window();
  record->verdict = run_.diagnosis.epoch_verdict();
  record->stages = run_.diagnosis.epoch_stages();
  record->workers = run_.setup.train_loader->workers();
  if (stepper_.scaler() != nullptr) record->scaler = stepper_.scaler()->state();
  if (cfg_.clip_grad_norm > 0) record->grad_norms = grad_norms;
  if (run_.group != nullptr && record->seconds > 0) {
    // What the steps waited for after backward; the buckets sent during backward are hidden.
    record->notes += fmt::format(" · all-reduce wait {:.1f} % of the epoch", 100 * sync_s / record->seconds);
  }
  return end;
}

}  // namespace stoker::train
