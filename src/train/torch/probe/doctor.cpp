// `stoker doctor`: the measuring half (libtorch). The loader alone, the model alone, both
// together, the changes that are cheap to try; doctor_report.cpp ranks them and reports.
#include "stoker/train/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "diagnose/doctor/doctor_findings.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"
#include "stoker/core/process.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/prepare.h"
#include "stoker/diagnose/loop_diagnosis.h"
#include "stoker/diagnose/verdict.h"
#include "stoker/train/trainer.h"
#include "train/torch/run/setup.h"
#include "train/torch/step/step.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

// What the probes fill and the report reads (torch-free, in src/diagnose/doctor/).
using diagnose::batch_suggestion;
using diagnose::BatchSuggestion;
using diagnose::doctor_json;
using diagnose::DoctorChange;
using diagnose::DoctorFindings;
using diagnose::JointProbe;
using diagnose::LoaderProbe;
using diagnose::ModelProbe;
using diagnose::print_doctor_text;
using diagnose::rank_changes;
using diagnose::worker_counts;

namespace {

using nlohmann::json;

class Doctor {
 public:
  Doctor(const TrainConfig& cfg, const DoctorOptions& options)
      : cfg_(cfg), options_(options), setup_(make_setup(cfg)), cores_(usable_cores()) {
    // The moving average costs a pass over the weights per step: measured as training pays it.
    const AveragePlan average = average_plan(cfg, 1, optimizer_steps_per_epoch(cfg, setup_));
    if (average.on) ema_.emplace(another_model(cfg, setup_), *setup_.model, average);
  }

  // The loader alone: batches taken as fast as they come, nothing else running.
  LoaderProbe probe_loader(int workers) {
    data::Loader& loader = *setup_.train_loader;
    loader.set_prefetch(data::buffers_in_flight(cfg_.prefetch_factor, workers));
    loader.set_workers(workers);
    loader.start_epoch(next_epoch_++);
    (void)loader.next();  // the first batch pays the queue's fill
    const data::StageTimes start = loader.stage_times();
    Stopwatch clock;
    int64_t images = 0;
    while (ns_to_seconds(clock.elapsed_ns()) < options_.seconds) {
      data::Batch batch = loader.next();
      if (!batch) {
        loader.start_epoch(next_epoch_++);
        continue;
      }
      images += batch.size();
    }
    return {workers, images / ns_to_seconds(clock.elapsed_ns()), loader.stage_times() - start};
  }

  // The model alone: one synthetic batch already on the device, stepped repeatedly.
  ModelProbe probe_model(const std::string& variant, int batch, AmpMode amp) {
    ModelProbe probe{variant, batch, 0, ""};
    TrainConfig c = cfg_;
    c.amp = amp;
    c.batch_size = batch;
    c.accumulation_steps = 1;
    const data::TransformSpec& spec = setup_.train_loader->options().transform;
    try {
      Stepper stepper(c, *setup_.model, *setup_.optimizer, setup_.objective, setup_.device, 1 << 30, 1 << 20);
      stepper.keep_average(ema_ ? &*ema_ : nullptr);
      setup_.model->train();
      const auto options = torch::TensorOptions().device(setup_.device);
      auto x = torch::randn({batch, spec.channels, spec.out_height, spec.out_width}, options);
      if (setup_.feed.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
      const auto y = setup_.objective.random_targets(batch, options);
      stepper.step(x, y);  // warm-up: allocations, kernel selection
      Stopwatch clock;
      int64_t steps = 0;
      while (steps < 2 || ns_to_seconds(clock.elapsed_ns()) < options_.seconds) {
        stepper.step(x, y);
        ++steps;
      }
      probe.samples_per_s = static_cast<double>(steps * batch) / ns_to_seconds(clock.elapsed_ns());
    } catch (const std::exception& e) {
      if (!compat::is_out_of_memory(e)) throw;
      probe.skipped = fmt::format("out of memory at batch {}", batch);
    }
    return probe;
  }

  // Seconds of one step at `batch` (after a warm-up step at batch 1 when `warm_up`), on a
  // synthetic batch already on the device; peak RSS growth over it through `rss_growth`.
  double time_steps(int batch, bool warm_up, double* rss_growth = nullptr) {
    TrainConfig c = cfg_;
    c.batch_size = batch;
    c.accumulation_steps = 1;
    const data::TransformSpec& spec = setup_.train_loader->options().transform;
    Stepper stepper(c, *setup_.model, *setup_.optimizer, setup_.objective, setup_.device, 1 << 30, 1 << 20);
    setup_.model->train();
    const auto options = torch::TensorOptions().device(setup_.device);
    auto x = torch::randn({batch, spec.channels, spec.out_height, spec.out_width}, options);
    if (setup_.feed.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const auto y = setup_.objective.random_targets(batch, options);
    const double rss_before = peak_rss_bytes();
    if (warm_up) stepper.step(x, y);
    Stopwatch clock;
    stepper.step(x, y);
    if (rss_growth != nullptr) *rss_growth = std::max(0.0, peak_rss_bytes() - rss_before);
    return ns_to_seconds(clock.elapsed_ns());
  }

  // The step at the configured batch when it outlasts a probe's window, or nothing: a batch-1
  // step gives the estimate first, so that the doctor never sits silent in a step it did not
  // announce (mnist_cnn on 224-px images took minutes per step at batch 64 on 2 cores).
  std::optional<DoctorFindings::SlowStep> slow_step() {
    double rss_one = 0, rss_two = 0;
    const double one = time_steps(1, true, &rss_one);
    (void)time_steps(2, false, &rss_two);  // what one more sample adds to the peak
    DoctorFindings::SlowStep slow;
    slow.estimate_s = one * cfg_.batch_size;  // an upper bound: a step's fixed costs counted B times
    if (slow.estimate_s <= options_.seconds) return std::nullopt;
    const double need = rss_two * (cfg_.batch_size - 2), free = free_ram_bytes();
    if (setup_.device.is_cpu() && need > 0.8 * free) {
      slow.skipped = fmt::format("it would need about {:.1f} GB more, {:.1f} GB free", need / 1e9, free / 1e9);
      say("the model: one step at batch {} would take up to {:.0f} s and need about {:.1f} GB more memory ({:.1f} GB "
          "free): not measured",
          cfg_.batch_size, slow.estimate_s, need / 1e9, free / 1e9);
      return slow;
    }
    say("the model: one step at batch {} may take up to {:.0f} s here (from one at batch 1), longer than the {:g} s "
        "probes: measuring one step first",
        cfg_.batch_size, slow.estimate_s, options_.seconds);
    try {
      slow.first_s = slow.measured_s = time_steps(cfg_.batch_size, false);
      if (slow.wants_second_step(setup_.device.is_cuda(), options_.seconds)) {
        say("the model: the first step at batch {} took {:.1f} s, one-time costs included (algorithms chosen, "
            "memory allocated): measuring a second",
            cfg_.batch_size, slow.first_s);
        slow.measured_s = time_steps(cfg_.batch_size, false);
      }
    } catch (const std::exception& e) {
      if (!compat::is_out_of_memory(e)) throw;
      slow.skipped = fmt::format("out of memory at batch {}", cfg_.batch_size);
      return slow;
    }
    // A step's fixed costs made the estimate high (a GPU takes batch 1 and batch 128 in about
    // the same time): the probes fit their window after all.
    if (slow.measured_s <= options_.seconds) return std::nullopt;
    return slow;
  }

  // Both together: the training loop on real batches.
  JointProbe probe_joint(int workers) {
    data::Loader& loader = *setup_.train_loader;
    loader.set_prefetch(data::buffers_in_flight(cfg_.prefetch_factor, workers));
    loader.set_workers(workers);
    loader.start_epoch(next_epoch_++);
    DeviceFeed feed(loader, setup_.objective, setup_.feed);
    Stepper stepper(cfg_, *setup_.model, *setup_.optimizer, setup_.objective, setup_.device, 1 << 30, 1 << 20);
    stepper.keep_average(ema_ ? &*ema_ : nullptr);
    setup_.model->train();
    JointProbe probe{workers, {}};
    int64_t seen = 0;
    diagnose::WarmUpShapes shapes;
    Stopwatch clock;
    while (ns_to_seconds(clock.elapsed_ns()) < options_.seconds + 0.5 || probe.window.steps < 3) {
      FedBatch batch = feed.next();
      if (!batch) {
        loader.start_epoch(next_epoch_++);
        continue;
      }
      Stepper::Result r = stepper.step(batch.images, batch.targets);
      r.charge_copy_stall(feed.copy_stall_s());
      // Not counted: the first steps (the queue fills, memory is allocated) and the first at
      // each batch size (an epoch's short last batch: cuDNN chooses algorithms for the new shape,
      // 6 s for ResNet-50 on an H100, which made "together" read a fifth of the model's rate).
      const bool new_size = shapes.first(batch.size());
      if (++seen <= 2 || new_size) continue;
      probe.window.wait_s += batch.wait_s;
      probe.window.copy_s += r.copy_s + batch.copy_s;
      probe.window.compute_s += r.compute_s;
      probe.window.steps += 1;
      probe.window.samples += batch.size();
    }
    return probe;
  }

  // Every probe, in one pass: the loader alone at each worker count, the model alone (as
  // configured, bf16/fp16, twice the batch), both together, the worker count the loader
  // suggests and (CPU) fewer torch threads together, and a prepared copy's decode in memory.
  DoctorFindings measure() {
    DoctorFindings f;
    f.model = cfg_.model;
    f.data = cfg_.data;
    f.data_description = setup_.train_source->describe();
    f.device = setup_.device.str();
    f.cuda = setup_.device.is_cuda();
    f.torch_description = torch_description();
    f.batch_size = cfg_.batch_size;
    f.accumulation_steps = cfg_.accumulation_steps;
    f.prefetch_factor = cfg_.prefetch_factor;
    f.cores = cores_;
    f.channels_last = setup_.feed.channels_last;
    f.gpu_normalize = setup_.feed.normalize_mean.has_value();
    if (setup_.feed.gpu_decode) f.gpu_decoder = setup_.feed.gpu_decode->decoder().description();
    f.pinned = setup_.pinned != nullptr;
    const int configured = setup_.start_workers;
    f.configured_workers = configured;

    const std::vector<int> counts = worker_counts(cores_, configured);
    if (cfg_.nproc_per_node > 1) {
      say("note: doctor measures one training process; nproc_per_node {} is for stoker train, whose processes "
          "each take a share of these cores",
          cfg_.nproc_per_node);
    }
    say("measuring: the loader alone at {} worker count{}, the model alone, both together ({:g} s each)", counts.size(),
        counts.size() == 1 ? "" : "s", options_.seconds);
    for (int w : counts) f.loader.push_back(probe_loader(w));
    const LoaderProbe& at_configured = f.at_configured();
    f.evidence = diagnose::pipeline_evidence(at_configured.stages, *setup_.train_loader);

    if ((f.slow_step = slow_step())) {
      // The model sets the pace by far: one step measured, the repeating probes left out, and
      // the verdict predicted from the two rates (a step waits for what the loader lacks).
      const DoctorFindings::SlowStep& slow = *f.slow_step;
      const double step_s = slow.measured_s > 0 ? slow.measured_s : slow.estimate_s;
      f.model_runs.push_back({"as configured", cfg_.batch_size, cfg_.batch_size / step_s, slow.skipped});
      diagnose::StepWindow predicted;
      predicted.steps = 1;
      predicted.samples = cfg_.batch_size;
      predicted.compute_s = step_s;
      predicted.wait_s = std::max(0.0, cfg_.batch_size / std::max(1e-9, at_configured.images_per_s) - step_s);
      f.verdict = diagnose::classify(predicted);
      return f;
    }
    f.model_runs.push_back(probe_model("as configured", cfg_.batch_size, cfg_.amp));
    if (cfg_.amp == AmpMode::kOff) {
      f.model_runs.push_back(probe_model("amp bf16", cfg_.batch_size, AmpMode::kBf16));
      // fp16 (with loss scaling) exists on CUDA only; on older GPUs it is the faster one.
      if (f.cuda) f.model_runs.push_back(probe_model("amp fp16", cfg_.batch_size, AmpMode::kFp16));
    }
    f.model_runs.push_back(probe_model(fmt::format("batch {}", 2 * cfg_.batch_size), 2 * cfg_.batch_size, cfg_.amp));
    const double model_rate = f.model_rate();

    f.joint = probe_joint(configured);
    f.verdict = diagnose::classify(f.joint.window);

    // The worker count the loader alone says is enough (the fewest within 5 % of the best
    // that matches the model), tried together with the model: a measured gain.
    int best_workers = configured;
    double best_loader = at_configured.images_per_s;
    for (const LoaderProbe& p : f.loader) {
      const double useful = std::min(p.images_per_s, model_rate);
      const double current = std::min(best_loader, model_rate);
      if (useful > current * 1.05) {
        best_workers = p.workers;
        best_loader = p.images_per_s;
      }
    }
    if (best_workers != configured) f.tried_workers = probe_joint(best_workers);

    // On the CPU the model's threads and the loader's workers share the cores; OpenMP threads
    // that find their core taken stall every barrier. Try leaving the workers their cores.
    f.threads_now = torch::get_num_threads();
    f.threads_free = std::max(1, cores_ - configured);
    if (setup_.device.is_cpu() && f.threads_free < f.threads_now) {
      torch::set_num_threads(f.threads_free);
      f.fewer_threads = probe_joint(configured);
      torch::set_num_threads(f.threads_now);
    }

    // A copy with restart markers (`stoker prepare`): decode + transform of some of the
    // dataset's JPEGs measured in memory, as they are and rewritten.
    if (const auto& o = setup_.train_loader->options(); o.cache_decoded_bytes == 0 && o.decode.crop_window) {
      f.restart_gain = data::measure_restart_gain(*setup_.train_source, o.transform, o.decode);
    }
    return f;
  }

  int run() {
    const Stopwatch clock;
    const DoctorFindings f = measure();
    const std::vector<DoctorChange> changes = rank_changes(f);
    std::optional<json> batch_search;
    if (options_.find_batch_size) {
      say("measuring: the largest batch that fits (doubling, then bisecting; {:g} s per size)", options_.seconds);
      batch_search = find_batch_size();
    }
    if (options_.json) {
      std::printf("%s\n", dump_json(doctor_json(f, changes, batch_search)).c_str());
    } else {
      print_doctor_text(f, changes, batch_search);
    }
    say("measured in {:.0f} s", ns_to_seconds(clock.elapsed_ns()));
    return 0;
  }

  // Doubles the batch until it fails (out of memory) or stops paying, then bisects between
  // the last that fit and the first that failed. Keeps a 10 % margin; on the CPU the limit
  // is half the RAM free at the start (the kernel kills a process before an allocation
  // fails there, so it cannot be caught).
  json find_batch_size() {
    const double free_ram = free_ram_bytes();
    const double start_rss = peak_rss_bytes();
    int fits = 0, fails = 0, best = 0;
    double best_rate = 0;
    std::string stopped = "reached 4,096";
    auto fits_at = [&](int batch) {
      const ModelProbe p = probe_model("search", batch, cfg_.amp);
      if (!p.skipped.empty()) return false;
      if (setup_.device.is_cpu() && peak_rss_bytes() - start_rss > 0.5 * free_ram) {
        stopped = "half the free RAM";
        return false;
      }
      // A larger batch counts as faster only when it is more than 5 % faster: timings on a busy
      // machine stray by that much, and each stray gain kept the search doubling, to 4,096.
      if (p.samples_per_s > 1.05 * best_rate) {
        best_rate = p.samples_per_s;
        best = batch;
      }
      return true;
    };
    for (int batch = std::max(1, cfg_.batch_size / 4); batch <= 4096; batch *= 2) {
      if (!fits_at(batch)) {
        fails = batch;
        break;
      }
      fits = batch;
      if (best_rate > 0 && batch >= 4 * best && batch > cfg_.batch_size) {
        stopped = "no faster beyond " + std::to_string(best);
        break;
      }
    }
    if (fails > 0) {
      while (fails - fits > std::max(1, fits / 8)) {
        const int mid = (fits + fails) / 2;
        (fits_at(mid) ? fits : fails) = mid;
      }
      stopped = fails == 0 ? stopped : "out of memory above " + std::to_string(fits);
    }
    const int safe = std::max(1, static_cast<int>(fits * 0.9));
    const int effective = cfg_.batch_size * cfg_.accumulation_steps;
    const BatchSuggestion suggestion = batch_suggestion(best, effective);
    const std::string text = fmt::format(
        "largest that ran {} ({}), suggest at most {} (10 % margin); fastest {} at {} samples/s → "
        "{}",
        fits, stopped, safe, best, grouped(best_rate), suggestion.text);
    return {{"largest", fits},
            {"safe", safe},
            {"fastest", best},
            {"fastest_samples_per_sec", best_rate},
            {"accumulation_steps", suggestion.accumulation_steps},
            {"stopped", stopped},
            {"text", text}};
  }

 private:
  template <typename... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    if (options_.json) return;
    std::printf("%s\n", fmt::format(format, std::forward<Args>(args)...).c_str());
    std::fflush(stdout);
  }

  const TrainConfig& cfg_;
  DoctorOptions options_;
  TrainSetup setup_;
  std::optional<ModelEma> ema_;  // AveragePlan::on
  int cores_;
  int64_t next_epoch_ = 0;
};

}  // namespace

int run_doctor(const TrainConfig& config, const DoctorOptions& options) {
  if (!(options.seconds > 0)) throw UsageError(fmt::format("--seconds must be > 0 (got {})", options.seconds));
  Doctor doctor(config, options);
  return doctor.run();
}

}  // namespace stoker::train
