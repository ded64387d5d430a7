#include "stoker/diagnose/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "stoker/core/numbers.h"
#include "stoker/core/shell_quote.h"

namespace stoker::diagnose {

namespace {

constexpr double kInputHigh = 0.20;
constexpr double kInputModerate = 0.05;
constexpr double kTransfer = 0.20;
constexpr double kDeviceIdlePercent = 70;

std::string percent(double share) { return fmt::format("{:.0f} %", 100 * share); }

using data::LoaderKey;

// Advice to set a whole-number option.
data::OptionChange option(LoaderKey key, int value, bool or_more = false) {
  return {key, std::to_string(value), or_more};
}

}  // namespace

Verdict classify(const StepWindow& w) {
  Verdict v;
  const double total = w.total_s();
  if (total <= 0) return v;
  v.wait_share = w.wait_s / total;
  v.copy_share = w.copy_s / total;
  v.compute_share = w.compute_s / total;
  if (v.wait_share >= kInputHigh) {
    v.kind = Bottleneck::kInput;
    v.severity = Severity::kHigh;
  } else if (v.copy_share >= kTransfer && v.copy_share > v.wait_share) {
    v.kind = Bottleneck::kTransfer;
    v.severity = v.copy_share >= 2 * kTransfer ? Severity::kHigh : Severity::kModerate;
  } else if (v.wait_share >= kInputModerate) {
    v.kind = Bottleneck::kInput;
    v.severity = Severity::kModerate;
  } else if (!w.slowdown.empty()) {
    v.kind = Bottleneck::kThrottled;
    v.severity = Severity::kModerate;
  } else if (w.gpu_util_percent >= 0 && w.gpu_util_percent < kDeviceIdlePercent) {
    v.kind = Bottleneck::kHost;
    v.severity = w.gpu_util_percent < kDeviceIdlePercent / 2 ? Severity::kHigh : Severity::kModerate;
  } else {
    v.kind = Bottleneck::kCompute;
  }
  return v;
}

std::string verdict_name(const Verdict& v) {
  const char* level = v.severity == Severity::kHigh       ? " (high)"
                      : v.severity == Severity::kModerate ? " (moderate)"
                                                          : "";
  switch (v.kind) {
    case Bottleneck::kInput:
      return std::string("input-bound") + level;
    case Bottleneck::kTransfer:
      return "transfer-bound";
    case Bottleneck::kThrottled:
      return "throttled";
    case Bottleneck::kHost:
      return "host/launch-bound";
    case Bottleneck::kCompute:
      return "compute-bound";
    case Bottleneck::kUnknown:
      break;
  }
  return "not measured";
}

std::string format_step_shares(const StepWindow& w) {
  const Verdict v = classify(w);
  if (v.kind == Bottleneck::kUnknown) return "step time: not measured";
  std::string text = fmt::format("step time: compute {:.1f} % · waiting for data {:.1f} % · copy {:.1f} %",
                                 100 * v.compute_share, 100 * v.wait_share, 100 * v.copy_share);
  if (w.gpu_util_percent >= 0) text += fmt::format(" · GPU util {:.0f} %", w.gpu_util_percent);
  if (!w.slowdown.empty()) text += " · GPU slowed by " + w.slowdown;
  return text + " → " + verdict_name(v);
}

double pipeline_rate(const PipelineEvidence& p) {
  if (p.busy_worker_s <= 0 || p.samples <= 0) return 0;
  return static_cast<double>(p.samples) / p.busy_worker_s * std::max(1, p.workers);
}

double model_rate(const StepWindow& w) {
  const double busy = w.copy_s + w.compute_s;
  return busy > 0 ? static_cast<double>(w.samples) / busy : 0;
}

namespace {
// The read stage's name where it is a Dataset's Python.
std::string python_stage(const PipelineEvidence& p) { return p.reads_stream ? "__iter__" : "dataset[i]"; }
}  // namespace

std::pair<std::string, double> dominant_stage(const PipelineEvidence& p) {
  const double busy = p.read_s + p.decode_s + p.transform_s;
  if (busy <= 0) return {"", 0};
  std::pair<std::string, double> best{p.reads_in_python ? python_stage(p) : "read", p.read_s / busy};
  if (p.decode_s / busy > best.second) best = {"decode", p.decode_s / busy};
  if (p.transform_s / busy > best.second) best = {"transform", p.transform_s / busy};
  return best;
}

double joint_rate(double model, double loader, int workers, int cores, bool shared_cores) {
  if (!(model > 0) || !(loader > 0)) return 0;
  const double slower = std::min(model, loader);
  if (!shared_cores || cores < 1 || workers < 1) return slower;
  const double core_seconds = static_cast<double>(cores) / model + static_cast<double>(workers) / loader;
  return std::min(slower, static_cast<double>(cores) / core_seconds);
}

std::string prepare_command(const std::string& dataset) {
  if (dataset.empty()) return "stoker prepare --data DIR --out NEW_DIR";
  std::filesystem::path dir(dataset);
  if (!dir.has_filename()) dir = dir.parent_path();  // "train/" -> "train"
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) dir = dir.parent_path();
  const std::string d = dir.empty() ? std::string(".") : dir.string();
  return fmt::format("stoker prepare --data {} --out {}", shell_quote(d), shell_quote(d + "-prepared"));
}

CacheEstimate estimate_decoded_cache(const PipelineEvidence& p) {
  CacheEstimate e;
  e.load_share = p.busy_worker_s > 0 ? (p.read_s + p.decode_s) / p.busy_worker_s : 0;
  e.speedup = 1 / std::max(0.05, 1 - e.load_share);
  if (p.samples > 0) {
    e.needed_bytes = p.decoded_bytes / static_cast<double>(p.samples) * static_cast<double>(p.dataset_samples);
  }
  e.worth_offering = !p.cache_on && p.cache_possible && e.load_share >= 0.3 && e.needed_bytes > 0 &&
                     e.needed_bytes < 0.8 * p.free_ram_bytes;
  return e;
}

std::vector<Recommendation> recommend(const Verdict& v, const StepWindow& w, const PipelineEvidence& p) {
  std::vector<Recommendation> out;
  // Only input-bound windows have a change the trainer offers today; a transfer-bound one
  // needs the asynchronous pinned copies of the CUDA path, named in the warning instead.
  if (v.kind != Bottleneck::kInput) return out;
  const double pipe = pipeline_rate(p), model = model_rate(w);
  const double current = w.total_s() > 0 ? static_cast<double>(w.samples) / w.total_s() : 0;
  const int cores = std::max(1, p.cores);
  const int max_workers = std::max(1, cores - 1);  // one core for the training thread
  auto idle_text = [&] {
    if (p.cpu_percent < 0) return fmt::format("{} cores", cores);
    const double idle = cores * (1 - p.cpu_percent / 100);
    return fmt::format("{:.0f} of {} cores idle", std::max(0.0, idle), cores);
  };
  if (pipe > 0 && model > 0 && current > 0) {
    // A Dataset's __getitem__ that the loader waits on: on the worker threads its Python runs one
    // call at a time (the GIL), whatever their number; worker processes run it side by side.
    // More worker threads do not help it, so they are not offered beside the processes.
    const auto [top_stage, top_share] = dominant_stage(p);
    const bool getitem_bound = p.reads_in_python && top_stage == python_stage(p) && top_share >= 0.5 && pipe < model;
    if (getitem_bound) {
      const int now = p.dataset_processes;
      const int processes = now == 0 ? max_workers : std::min(max_workers, 2 * now);
      if (processes > now && processes >= 2) {
        out.push_back(
            {std::nullopt, fmt::format("dataset_processes={}", processes),
             now == 0 ? fmt::format("dataset[i] is {} of worker time, and the worker threads run its "
                                    "Python one call at a time; processes call it side by side",
                                    percent(top_share))
                      : fmt::format("{} is {} of worker time; {} {} it now, {}", top_stage, percent(top_share), now,
                                    now == 1 ? (p.reads_stream ? "process runs" : "process calls")
                                             : (p.reads_stream ? "processes run" : "processes call"),
                                    idle_text()),
             0});
      }
    }
    // Workers that match the model's rate with 10 % headroom, within the cores.
    const int needed = static_cast<int>(std::ceil(p.workers * model / pipe * 1.1));
    const int target = std::min({needed, max_workers, static_cast<int>(data::loader_key(LoaderKey::kWorkers).hi)});
    if (target > p.workers && !getitem_bound) {
      const double predicted = std::min(model, pipe * target / std::max(1, p.workers));
      out.push_back({option(LoaderKey::kWorkers, target), "", idle_text(), predicted / current});
    }
    const int deepest = static_cast<int>(data::loader_key(LoaderKey::kPrefetchFactor).hi);
    if (pipe >= model && p.prefetch_factor < deepest) {
      // Fast enough on average, yet the steps waited: bursts; a deeper queue absorbs them.
      // With the depth unknown, a floor.
      out.push_back({p.prefetch_factor > 0
                         ? option(LoaderKey::kPrefetchFactor, std::min(deepest, 2 * p.prefetch_factor))
                         : option(LoaderKey::kPrefetchFactor, 4, true),
                     "",
                     fmt::format("the workers' rate ({} samples/s) exceeds the model's ({}); the waits are bursts",
                                 grouped(pipe), grouped(model)),
                     1 / std::max(0.05, 1 - v.wait_share)});
    } else if (pipe < model) {
      // Decoding (and reading) every epoch again: the workers could only transform.
      if (const CacheEstimate cache = estimate_decoded_cache(p); cache.worth_offering) {
        out.push_back(
            {data::OptionChange{LoaderKey::kCache, "decoded", false, cache.needed_bytes / 1e9}, "",
             fmt::format("needs {:.1f} GB, {:.0f} GB free; later epochs skip read and decode ({} of worker time)",
                         cache.needed_bytes / 1e9, p.free_ram_bytes / 1e9, percent(cache.load_share)),
             std::min(model, pipe * cache.speedup) / current});
      }
      // JPEGs decoded row by row from the top: a lossless rewrite with restart markers lets
      // each crop decode only its own part. Not predicted: the saving depends on the crops.
      const double decode_share = p.busy_worker_s > 0 ? p.decode_s / p.busy_worker_s : 0;
      if (!p.cache_on && decode_share >= 0.3 && p.jpeg_samples > 0 && 2 * p.spliced_samples < p.jpeg_samples) {
        out.push_back({std::nullopt, prepare_command(p.dataset),
                       fmt::format("decode is {} of worker time and the JPEGs have no restart markers; "
                                   "a one-off lossless rewrite lets a crop decode only its part; then "
                                   "train on the copy",
                                   percent(decode_share)),
                       0});
      }
    }
    // The most workers offered, or those already running where that is more (the tuner of
    // --workers auto goes up to the cores; a script may set more).
    const int most = std::max(max_workers, p.workers);
    if (pipe < model && needed > most) {
      const auto [stage, share] = dominant_stage(p);
      std::string change = stage == "decode"       ? "store the images pre-resized near the training size"
                           : stage == "transform"  ? "lighter augmentation or a smaller output size"
                           : stage == "dataset[i]" ? "a lighter __getitem__ (return the image as loaded, for stoker "
                                                     "to decode and transform; more workers than cores where it "
                                                     "waits on storage or the network)"
                           : stage == "__iter__"   ? "a lighter __iter__ (yield the image as loaded, for stoker to "
                                                     "decode and transform; more dataset_processes than cores where "
                                                     "it waits on storage or the network)"
                                                   : "faster storage (local disk, page cache) for the dataset";
      out.push_back({std::nullopt, change,
                     fmt::format("{} is {} of worker time and {} worker{} cannot reach the model's {} samples/s", stage,
                                 percent(share), most, most == 1 ? "" : "s", grouped(model)),
                     0});
    }
  }
  return out;
}

std::string format_evidence(const StepWindow& w, const PipelineEvidence& p) {
  const auto [stage, share] = dominant_stage(p);
  if (stage.empty()) return "";
  return fmt::format("{} is {} of worker time; {} {} {} samples/s, the model takes {} samples/s.", stage,
                     percent(share), p.workers, p.workers == 1 ? "worker delivers" : "workers deliver",
                     grouped(pipeline_rate(p)), grouped(model_rate(w)));
}

std::string change_words(const Recommendation& r, data::FrontEnd front) {
  return r.option ? data::option_words(*r.option, front) : r.change;
}

std::string format_changes(const std::vector<Recommendation>& changes, data::FrontEnd front) {
  std::string text;
  for (const Recommendation& r : changes) {
    text += (text.empty() ? "try: " : "  or  ") + change_words(r, front) + " (" + r.reason + ")";
  }
  return text;
}

std::string format_warning(const Verdict& v, int64_t steps, const StepWindow& w, const PipelineEvidence& p,
                           const std::vector<Recommendation>& changes, data::FrontEnd front) {
  std::string text = fmt::format("⚠ {} for the last {} steps: ", verdict_name(v), steps);
  switch (v.kind) {
    case Bottleneck::kInput: {
      text += fmt::format("{} of step time waiting for data.", percent(v.wait_share));
      const std::string evidence = format_evidence(w, p);
      if (!evidence.empty()) text += "\n  " + evidence;
      break;
    }
    case Bottleneck::kTransfer:
      text += fmt::format(
          "{} of step time copying batches to the device (synchronous copies from pageable "
          "memory in this version).",
          percent(v.copy_share));
      break;
    case Bottleneck::kThrottled:
      text += "the GPU slowed its clocks (" + w.slowdown + ").";
      break;
    case Bottleneck::kHost:
      text += fmt::format(
          "GPU busy {:.0f} % of the time although no step waited for data; the host cannot "
          "launch work fast enough (larger batch, fewer small ops).",
          w.gpu_util_percent);
      break;
    case Bottleneck::kCompute:
    case Bottleneck::kUnknown:
      text += "no action needed.";
      break;
  }
  if (!changes.empty()) text += "\n  " + format_changes(changes, front);
  return text;
}

bool PersistenceGate::observe(const Verdict& v) {
  const bool problem = v.kind != Bottleneck::kCompute && v.kind != Bottleneck::kUnknown;
  if (!problem) {
    streak_ = 0;
    warned_ = false;
    last_ = v.kind;
    return false;
  }
  if (v.kind != last_) {
    streak_ = 0;
    warned_ = false;
  }
  last_ = v.kind;
  ++streak_;
  if (!warned_ && streak_ >= windows_to_warn_) {
    warned_ = true;
    return true;
  }
  return false;
}

}  // namespace stoker::diagnose
