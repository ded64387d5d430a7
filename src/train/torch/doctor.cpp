// `stoker doctor`: the loader alone, the model alone, both together; which limits; what to
// change, measured where cheap.
#include "stoker/train/doctor.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "loop_diagnosis.h"
#include "setup.h"
#include "step.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/core/process.h"
#include "stoker/data/prepare.h"
#include "stoker/diagnose/verdict.h"
#include "stoker/train/trainer.h"
#include "torch_compat.h"

namespace stoker::train {

namespace {

using nlohmann::json;

struct LoaderProbe {
  int workers = 0;
  double images_per_s = 0;
  data::StageTimes stages;  // over the probe
};

struct JointProbe {
  int workers = 0;
  diagnose::StepWindow window;
  double samples_per_s() const { return window.total_s() > 0 ? window.samples / window.total_s() : 0; }
};

struct ModelProbe {
  std::string variant;  // "as configured", "amp bf16", "batch 128"
  int batch = 0;
  double samples_per_s = 0;
  std::string skipped;  // why it did not run
};

class Doctor {
 public:
  Doctor(const TrainConfig& cfg, const DoctorOptions& options)
      : cfg_(cfg), options_(options), setup_(make_setup(cfg)), cores_(usable_cores()) {}

  // The loader alone: batches taken as fast as they come, nothing else running.
  LoaderProbe probe_loader(int workers) {
    data::Loader& loader = *setup_.train_loader;
    loader.set_prefetch(std::max(2, cfg_.prefetch_factor * workers));
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

  // Both together: the training loop on real batches.
  JointProbe probe_joint(int workers) {
    data::Loader& loader = *setup_.train_loader;
    loader.set_prefetch(std::max(2, cfg_.prefetch_factor * workers));
    loader.set_workers(workers);
    loader.start_epoch(next_epoch_++);
    DeviceFeed feed(loader, setup_.objective, setup_.feed);
    Stepper stepper(cfg_, *setup_.model, *setup_.optimizer, setup_.objective, setup_.device, 1 << 30, 1 << 20);
    setup_.model->train();
    JointProbe probe{workers, {}};
    int64_t seen = 0;
    Stopwatch clock;
    while (ns_to_seconds(clock.elapsed_ns()) < options_.seconds + 0.5 || probe.window.steps < 3) {
      FedBatch batch = feed.next();
      if (!batch) {
        loader.start_epoch(next_epoch_++);
        continue;
      }
      const Stepper::Result r = stepper.step(batch.images, batch.targets);
      if (++seen <= 2) continue;  // the queue fills and the first steps allocate: not counted
      probe.window.wait_s += batch.wait_s;
      probe.window.copy_s += r.copy_s + batch.copy_s;
      probe.window.compute_s += r.compute_s;
      probe.window.steps += 1;
      probe.window.samples += batch.size();
    }
    return probe;
  }

  int run() {
    const int configured = setup_.start_workers;
    std::vector<int> counts;
    for (int w = 1; w <= cores_; ++w) counts.push_back(w);
    if (std::find(counts.begin(), counts.end(), configured) == counts.end()) counts.push_back(configured);
    say("measuring: the loader alone at {} worker count{}, the model alone, both together ({:g} s each)",
        counts.size(), counts.size() == 1 ? "" : "s", options_.seconds);

    std::vector<LoaderProbe> loader_probes;
    for (int w : counts) loader_probes.push_back(probe_loader(w));
    const LoaderProbe& at_configured =
        *std::find_if(loader_probes.begin(), loader_probes.end(), [&](const LoaderProbe& p) { return p.workers == configured; });

    std::vector<ModelProbe> model_probes{probe_model("as configured", cfg_.batch_size, cfg_.amp)};
    if (cfg_.amp == AmpMode::kOff) {
      model_probes.push_back(probe_model("amp bf16", cfg_.batch_size, AmpMode::kBf16));
      // fp16 (with loss scaling) exists on CUDA only; on older GPUs it is the faster one.
      if (setup_.device.is_cuda()) model_probes.push_back(probe_model("amp fp16", cfg_.batch_size, AmpMode::kFp16));
    }
    model_probes.push_back(probe_model(fmt::format("batch {}", 2 * cfg_.batch_size), 2 * cfg_.batch_size, cfg_.amp));
    const double model_rate = model_probes[0].samples_per_s;

    const JointProbe joint = probe_joint(configured);
    const diagnose::Verdict verdict = diagnose::classify(joint.window);

    // The worker count the loader alone says is enough (the fewest within 5 % of the best
    // that matches the model), tried together with the model: a measured gain.
    int best_workers = configured;
    double best_loader = at_configured.images_per_s;
    for (const LoaderProbe& p : loader_probes) {
      const double useful = std::min(p.images_per_s, model_rate);
      const double current = std::min(best_loader, model_rate);
      if (useful > current * 1.05) {
        best_workers = p.workers;
        best_loader = p.images_per_s;
      }
    }
    std::optional<JointProbe> tried;
    if (best_workers != configured) tried = probe_joint(best_workers);

    // On the CPU the model's threads and the loader's workers share the cores; OpenMP threads
    // that find their core taken stall every barrier. Try leaving the workers their cores.
    std::optional<JointProbe> fewer_threads;
    const int threads_now = torch::get_num_threads();
    const int threads_free = std::max(1, cores_ - configured);
    if (setup_.device.is_cpu() && threads_free < threads_now) {
      torch::set_num_threads(threads_free);
      fewer_threads = probe_joint(configured);
      torch::set_num_threads(threads_now);
    }

    // Ranked changes.
    struct Change {
      std::string change;
      double gain;
      std::string how;  // "measured together", "model alone, measured", "predicted"
    };
    std::vector<Change> changes;
    const double together = joint.samples_per_s();
    if (tried && together > 0) {
      changes.push_back({fmt::format("--workers {}", best_workers), tried->samples_per_s() / together,
                         fmt::format("measured together: {} samples/s", grouped(tried->samples_per_s()))});
    }
    if (fewer_threads && together > 0) {
      changes.push_back({fmt::format("--threads {}", threads_free), fewer_threads->samples_per_s() / together,
                         fmt::format("measured together: {} samples/s with {} torch thread{} instead of {}",
                                     grouped(fewer_threads->samples_per_s()), threads_free,
                                     threads_free == 1 ? "" : "s", threads_now)});
    }
    // A faster model helps only up to what the loader delivers, and on the CPU only as far as
    // the cores it shares with the workers allow: compare the predicted joint rates with the
    // variant and without (diagnose::joint_rate), at the configured worker count.
    const bool shared_cores = setup_.device.is_cpu();
    const double loader_now = at_configured.images_per_s;
    const double joint_now = diagnose::joint_rate(model_rate, loader_now, configured, cores_, shared_cores);
    for (size_t i = 1; i < model_probes.size(); ++i) {
      const ModelProbe& m = model_probes[i];
      if (!m.skipped.empty() || model_rate <= 0 || joint_now <= 0) continue;
      const std::string flag = m.variant.starts_with("amp ")
                                   ? "--amp " + m.variant.substr(4)
                                   : fmt::format("--batch-size {} --accum-steps {}", m.batch,
                                                 std::max(1, cfg_.accumulation_steps / 2));
      const double joint_then = diagnose::joint_rate(m.samples_per_s, loader_now, configured, cores_, shared_cores);
      changes.push_back({flag, joint_then / joint_now,
                         fmt::format("model alone measured {} vs {} samples/s{}", grouped(m.samples_per_s),
                                     grouped(model_rate), shared_cores ? ", discounted for the shared cores" : "")});
    }
    if (verdict.kind == diagnose::Bottleneck::kInput && at_configured.images_per_s > model_rate) {
      changes.push_back({fmt::format("--prefetch-factor {}", 2 * cfg_.prefetch_factor), 1 / (1 - verdict.wait_share),
                         "predicted: the loader keeps up on average, the waits are bursts"});
    }
    // The decoded cache, when the images fit in RAM and reading + decoding is much of the
    // loader's time: later epochs only transform (predicted from the stage clocks).
    {
      const diagnose::PipelineEvidence evidence = pipeline_evidence(at_configured.stages, *setup_.train_loader);
      const diagnose::CacheEstimate cache = diagnose::estimate_decoded_cache(evidence);
      if (cache.worth_offering && joint_now > 0) {
        changes.push_back(
            {"--cache decoded",
             diagnose::joint_rate(model_rate, loader_now * cache.speedup, configured, cores_, shared_cores) / joint_now,
             fmt::format("predicted from epoch 2 on: needs {:.1f} GB of {:.0f} GB free; read + decode are {:.0f} % of "
                         "the loader's time",
                         cache.needed_bytes / 1e9, evidence.free_ram_bytes / 1e9, 100 * cache.load_share)});
      }
    }
    // A copy with restart markers (`stoker prepare`): decode + transform of some of the
    // dataset's JPEGs measured in memory, as they are and rewritten; read time unchanged.
    if (const auto& loader_options = setup_.train_loader->options();
        loader_options.cache_decoded_bytes == 0 && loader_options.decode.crop_window && joint_now > 0) {
      const data::RestartGain g =
          data::measure_restart_gain(*setup_.train_source, loader_options.transform, loader_options.decode);
      const auto& s = at_configured.stages;
      const double busy = s.read + s.decode + s.transform;
      if (g.measured > 0 && busy > 0) {
        const double share = (s.decode + s.transform) / busy;
        const double loader_speedup = 1 / ((1 - share) + share / g.speedup());
        changes.push_back(
            {diagnose::prepare_command(cfg_.data),
             diagnose::joint_rate(model_rate, loader_now * loader_speedup, configured, cores_, shared_cores) /
                 joint_now,
             fmt::format("predicted: decode + transform of {} of its JPEGs measured in memory, {:.2f} → {:.2f} ms "
                         "per sample; a one-off lossless rewrite, then train on the copy",
                         g.measured, 1e3 * g.plain_s, 1e3 * g.prepared_s)});
      }
    }
    std::erase_if(changes, [](const Change& c) { return c.gain < 1.02; });
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.gain > b.gain; });

    // Which side limits, and by how much.
    const double loader_rate = at_configured.images_per_s;
    const bool input_limits = loader_rate < model_rate;
    const std::string limit =
        input_limits ? fmt::format("the input pipeline: it delivers {} img/s at {} worker{}, the model takes {} ({:.1f}×)",
                                   grouped(loader_rate), configured, configured == 1 ? "" : "s", grouped(model_rate),
                                   model_rate / std::max(1.0, loader_rate))
                     : fmt::format("the model: it takes {} samples/s, the loader delivers {} at {} worker{} ({:.1f}× headroom)",
                                   grouped(model_rate), grouped(loader_rate), configured, configured == 1 ? "" : "s",
                                   loader_rate / std::max(1.0, model_rate));

    std::optional<json> batch_search;
    if (options_.find_batch_size) batch_search = find_batch_size();

    if (options_.json) {
      json out = {{"model", cfg_.model},
                  {"device", setup_.device.str()},
                  {"channels_last", setup_.feed.channels_last},
                  {"batch_size", cfg_.batch_size},
                  {"workers", configured},
                  {"cores", cores_},
                  {"loader_alone", json::array()},
                  {"model_alone", json::array()},
                  {"together", {{"workers", configured},
                                {"samples_per_sec", together},
                                {"wait_share", verdict.wait_share},
                                {"copy_share", verdict.copy_share},
                                {"compute_share", verdict.compute_share},
                                {"verdict", diagnose::verdict_name(verdict)}}},
                  {"limit", input_limits ? "input" : "model"},
                  {"limit_text", limit},
                  {"changes", json::array()}};
      for (const auto& p : loader_probes) {
        const double busy = p.stages.read + p.stages.decode + p.stages.transform;
        out["loader_alone"].push_back({{"workers", p.workers},
                                       {"images_per_sec", p.images_per_s},
                                       {"read_share", busy > 0 ? p.stages.read / busy : 0},
                                       {"decode_share", busy > 0 ? p.stages.decode / busy : 0},
                                       {"transform_share", busy > 0 ? p.stages.transform / busy : 0}});
      }
      for (const auto& m : model_probes) {
        out["model_alone"].push_back({{"variant", m.variant},
                                      {"batch_size", m.batch},
                                      {"samples_per_sec", m.skipped.empty() ? json(m.samples_per_s) : json(nullptr)},
                                      {"skipped", m.skipped.empty() ? json(nullptr) : json(m.skipped)}});
      }
      if (tried) out["tried"] = {{"workers", tried->workers}, {"samples_per_sec", tried->samples_per_s()}};
      if (fewer_threads) {
        out["tried_threads"] = {{"threads", threads_free}, {"samples_per_sec", fewer_threads->samples_per_s()}};
      }
      for (const auto& c : changes) out["changes"].push_back({{"change", c.change}, {"gain", c.gain}, {"how", c.how}});
      if (batch_search) out["batch_search"] = *batch_search;
      std::printf("%s\n", out.dump().c_str());
      return 0;
    }

    std::printf("stoker doctor · %s · batch %d · %s · %s · %d cores\n", cfg_.model.c_str(), cfg_.batch_size,
                setup_.device.str().c_str(), torch_description().c_str(), cores_);
    std::printf("data         %s\n", setup_.train_source->describe().c_str());
    if (setup_.device.is_cuda()) {
      // Applied by the trainer on CUDA, so not a change to suggest: say they are in the figures.
      std::printf("cuda         %s · %s · pinned %s · TF32 and cuDNN autotuning on\n",
                  setup_.feed.channels_last ? "channels_last" : "contiguous (not a conv net)",
                  setup_.feed.normalize_mean ? "uint8 batches normalized on the GPU" : "float batches",
                  setup_.pinned ? "on" : "off");
    }
    std::string loader_line;
    for (const auto& p : loader_probes) {
      loader_line += fmt::format("{}{} worker{} {} img/s", loader_line.empty() ? "" : " · ", p.workers,
                                 p.workers == 1 ? "" : "s", grouped(p.images_per_s));
    }
    const auto& s = at_configured.stages;
    const double busy = s.read + s.decode + s.transform;
    std::printf("loader alone %s\n             stages at %d: read %.0f %% · decode %.0f %% · transform %.0f %% of worker time\n",
                loader_line.c_str(), configured, busy > 0 ? 100 * s.read / busy : 0,
                busy > 0 ? 100 * s.decode / busy : 0, busy > 0 ? 100 * s.transform / busy : 0);
    std::string model_line;
    for (const auto& m : model_probes) {
      model_line += (model_line.empty() ? "" : " · ") + m.variant + " " +
                    (m.skipped.empty() ? grouped(m.samples_per_s) + " samples/s" : "skipped (" + m.skipped + ")");
    }
    std::printf("model alone  %s\n", model_line.c_str());
    std::printf("together     %s samples/s at %d worker%s · %s\n", grouped(together).c_str(), configured,
                configured == 1 ? "" : "s", diagnose::format_step_shares(joint.window).c_str());
    std::printf("limit        %s\n", limit.c_str());
    const double expected = std::min(loader_rate, model_rate);
    if (setup_.device.is_cpu() && together < 0.8 * expected) {
      std::printf("note         together reaches %.0f %% of the slower side alone: on the CPU the loader's workers "
                  "and the model's threads share the same %d cores\n",
                  100 * together / std::max(1e-9, expected), cores_);
    }
    if (tried) {
      std::printf("tried        --workers %d → %s samples/s together (%+.0f %%)\n", best_workers,
                  grouped(tried->samples_per_s()).c_str(), 100 * (tried->samples_per_s() / std::max(1e-9, together) - 1));
    }
    if (fewer_threads) {
      std::printf("tried        --threads %d → %s samples/s together (%+.0f %%)\n", threads_free,
                  grouped(fewer_threads->samples_per_s()).c_str(),
                  100 * (fewer_threads->samples_per_s() / std::max(1e-9, together) - 1));
    }
    if (changes.empty()) {
      std::printf("changes      none measured to help by 2 %% or more: this configuration is %s\n",
                  diagnose::verdict_name(verdict).c_str());
    } else {
      std::printf("changes      ranked by gain\n");
      for (size_t i = 0; i < changes.size(); ++i) {
        std::printf("  %zu. %-34s %+4.0f %%  (%s)\n", i + 1, changes[i].change.c_str(), 100 * (changes[i].gain - 1),
                    changes[i].how.c_str());
      }
    }
    if (batch_search) {
      std::printf("batch size   %s\n", (*batch_search)["text"].get<std::string>().c_str());
    }
    std::printf("(doctor never changes your settings; apply a change by passing its flag to `stoker train`)\n");
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
      if (p.samples_per_s > best_rate) {
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
    const int accum = std::max(1, (effective + best - 1) / std::max(1, best));
    const std::string text = fmt::format(
        "largest that ran {} ({}), suggest at most {} (10 % margin); fastest {} at {} samples/s → "
        "--batch-size {} --accum-steps {} keeps your effective batch {}",
        fits, stopped, safe, best, grouped(best_rate), best, accum, effective);
    return {{"largest", fits}, {"safe", safe}, {"fastest", best}, {"fastest_samples_per_sec", best_rate},
            {"accumulation_steps", accum}, {"stopped", stopped}, {"text", text}};
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
