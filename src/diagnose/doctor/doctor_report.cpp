// `stoker doctor`: the reporting half, torch-free. Ranks the changes from what doctor.cpp
// measured (measured gains where a probe ran them, predictions from the stage clocks and
// joint_rate otherwise) and writes the text or the JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "diagnose/doctor/doctor_findings.h"
#include "stoker/core/numbers.h"
#include "stoker/data/loader_keys.h"

namespace stoker::diagnose {

using nlohmann::json;

const LoaderProbe& DoctorFindings::at_configured() const {
  for (const LoaderProbe& p : loader) {
    if (p.workers == configured_workers) return p;
  }
  return loader.front();  // measure() always probes the configured count
}

namespace {

// Which side limits, and by how much.
struct Limit {
  bool input = false;
  std::string text;
};

using data::LoaderKey;

// A loader option in the command line's words, from the loader's table: "--workers 4".
std::string flag_words(LoaderKey key, std::string value) {
  return data::option_words({key, std::move(value)}, data::FrontEnd::kCommandLine);
}

// "3,232", or "0.38" below 10 samples/s (a model that takes minutes per step).
std::string rate_text(double samples_per_s) { return grouped(samples_per_s, samples_per_s < 10 ? 2 : 0); }

Limit limit_of(const DoctorFindings& f) {
  const int configured = f.configured_workers;
  const double model_rate = f.model_rate();
  const double loader_rate = f.at_configured().images_per_s;
  const bool input_limits = loader_rate < model_rate;
  const std::string limit =
      input_limits
          ? fmt::format("the input pipeline: it delivers {} samples/s at {} worker{}, the model takes {} ({:.1f}×)",
                        rate_text(loader_rate), configured, configured == 1 ? "" : "s", rate_text(model_rate),
                        model_rate / std::max(1.0, loader_rate))
          : fmt::format("the model: it takes {} samples/s, the loader delivers {} at {} worker{} ({:.1f}× headroom)",
                        rate_text(model_rate), rate_text(loader_rate), configured, configured == 1 ? "" : "s",
                        loader_rate / std::max(1.0, model_rate));
  return {input_limits, limit};
}

}  // namespace

BatchSuggestion batch_suggestion(int batch, int effective) {
  batch = std::max(1, batch);
  if (batch >= effective && batch != effective) {
    return {1, fmt::format("--batch-size {} --accum-steps 1 raises your effective batch from {} to {} (scale the "
                           "learning rate with it)",
                           batch, effective, batch)};
  }
  const int accum = std::max(1, (effective + batch - 1) / batch);
  if (batch * accum == effective) {
    return {accum,
            fmt::format("--batch-size {} --accum-steps {} keeps your effective batch {}", batch, accum, effective)};
  }
  return {accum, fmt::format("--batch-size {} --accum-steps {} gives an effective batch of {} (yours: {})", batch,
                             accum, batch * accum, effective)};
}

std::vector<int> worker_counts(int cores, int configured) {
  std::vector<int> counts;
  for (int w = 1; w < cores; w *= 2) counts.push_back(w);
  counts.push_back(std::max(1, cores));
  counts.push_back(configured);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::vector<DoctorChange> rank_changes(const DoctorFindings& f) {
  std::vector<DoctorChange> changes;
  const int configured = f.configured_workers;
  const LoaderProbe& at_configured = f.at_configured();
  const double model_rate = f.model_rate();
  const double together = f.joint.samples_per_s();
  if (f.tried_workers && together > 0) {
    changes.push_back({flag_words(LoaderKey::kWorkers, std::to_string(f.tried_workers->workers)),
                       f.tried_workers->samples_per_s() / together,
                       fmt::format("measured together: {} samples/s", grouped(f.tried_workers->samples_per_s()))});
  }
  if (f.fewer_threads && together > 0) {
    changes.push_back({fmt::format("--threads {}", f.threads_free), f.fewer_threads->samples_per_s() / together,
                       fmt::format("measured together: {} samples/s with {} torch thread{} instead of {}",
                                   grouped(f.fewer_threads->samples_per_s()), f.threads_free,
                                   f.threads_free == 1 ? "" : "s", f.threads_now)});
  }
  // A faster model helps only up to what the loader delivers, and on the CPU only as far as
  // the cores it shares with the workers allow: compare the predicted joint rates with the
  // variant and without (joint_rate), at the configured worker count.
  const bool shared_cores = !f.cuda;
  const double loader_now = at_configured.images_per_s;
  const double joint_now = joint_rate(model_rate, loader_now, configured, f.cores, shared_cores);
  for (size_t i = 1; i < f.model_runs.size(); ++i) {
    const ModelProbe& m = f.model_runs[i];
    if (!m.skipped.empty() || model_rate <= 0 || joint_now <= 0) continue;
    const std::string flag = m.variant.starts_with("amp ") ? "--amp " + m.variant.substr(4)
                                                           : fmt::format("--batch-size {} --accum-steps {}", m.batch,
                                                                         std::max(1, f.accumulation_steps / 2));
    const double joint_then = joint_rate(m.samples_per_s, loader_now, configured, f.cores, shared_cores);
    changes.push_back({flag, joint_then / joint_now,
                       fmt::format("model alone measured {} vs {} samples/s{}", grouped(m.samples_per_s),
                                   grouped(model_rate), shared_cores ? ", discounted for the shared cores" : "")});
  }
  const int deepest = static_cast<int>(data::loader_key(LoaderKey::kPrefetchFactor).hi);
  if (f.verdict.kind == Bottleneck::kInput && at_configured.images_per_s > model_rate && f.prefetch_factor < deepest) {
    changes.push_back({flag_words(LoaderKey::kPrefetchFactor, std::to_string(std::min(deepest, 2 * f.prefetch_factor))),
                       1 / (1 - f.verdict.wait_share),
                       "predicted: the loader keeps up on average, the waits are bursts"});
  }
  // The decoded cache, when the images fit in RAM and reading + decoding is much of the
  // loader's time: later epochs only transform (predicted from the stage clocks).
  {
    const PipelineEvidence& evidence = f.evidence;
    const CacheEstimate cache = estimate_decoded_cache(evidence);
    if (cache.worth_offering && joint_now > 0) {
      changes.push_back(
          {flag_words(LoaderKey::kCache, "decoded"),
           joint_rate(model_rate, loader_now * cache.speedup, configured, f.cores, shared_cores) / joint_now,
           fmt::format("predicted from epoch 2 on: needs {:.1f} GB of {:.0f} GB free; read + decode are {:.0f} % of "
                       "the loader's time",
                       cache.needed_bytes / 1e9, evidence.free_ram_bytes / 1e9, 100 * cache.load_share)});
    }
  }
  // A copy with restart markers (`stoker prepare`): decode + transform measured in memory
  // on some of the dataset's JPEGs, as they are and rewritten; read time unchanged.
  if (f.restart_gain && joint_now > 0) {
    const data::RestartGain& g = *f.restart_gain;
    const auto& s = at_configured.stages;
    const double busy = s.read + s.decode + s.transform;
    if (g.measured > 0 && busy > 0) {
      const double share = (s.decode + s.transform) / busy;
      const double loader_speedup = 1 / ((1 - share) + share / g.speedup());
      changes.push_back(
          {prepare_command(f.data),
           joint_rate(model_rate, loader_now * loader_speedup, configured, f.cores, shared_cores) / joint_now,
           fmt::format("predicted: decode + transform of {} of its JPEGs measured in memory, {:.2f} → {:.2f} ms "
                       "per sample; a one-off lossless rewrite, then train on the copy",
                       g.measured, 1e3 * g.plain_s, 1e3 * g.prepared_s)});
    }
  }
  std::erase_if(changes, [](const DoctorChange& c) { return c.gain < 1.02; });
  std::sort(changes.begin(), changes.end(),
            [](const DoctorChange& a, const DoctorChange& b) { return a.gain > b.gain; });
  return changes;
}

json doctor_json(const DoctorFindings& f, const std::vector<DoctorChange>& changes,
                 const std::optional<json>& batch_search) {
  const Limit limit = limit_of(f);
  const int configured = f.configured_workers;
  const double together = f.joint.samples_per_s();
  json out = {{"model", f.model},
              {"device", f.device},
              {"channels_last", f.channels_last},
              {"batch_size", f.batch_size},
              {"workers", configured},
              {"cores", f.cores},
              {"loader_alone", json::array()},
              {"model_alone", json::array()},
              {"together",
               {{"workers", configured},
                {"samples_per_sec", together},
                {"wait_share", f.verdict.wait_share},
                {"copy_share", f.verdict.copy_share},
                {"compute_share", f.verdict.compute_share},
                {"verdict", verdict_name(f.verdict)}}},
              {"limit", limit.input ? "input" : "model"},
              {"limit_text", limit.text},
              {"changes", json::array()}};
  for (const auto& p : f.loader) {
    const double busy = p.stages.read + p.stages.decode + p.stages.transform;
    out["loader_alone"].push_back({{"workers", p.workers},
                                   {"images_per_sec", p.images_per_s},
                                   {"read_share", busy > 0 ? p.stages.read / busy : 0},
                                   {"decode_share", busy > 0 ? p.stages.decode / busy : 0},
                                   {"transform_share", busy > 0 ? p.stages.transform / busy : 0}});
  }
  for (const auto& m : f.model_runs) {
    out["model_alone"].push_back({{"variant", m.variant},
                                  {"batch_size", m.batch},
                                  {"samples_per_sec", m.skipped.empty() ? json(m.samples_per_s) : json(nullptr)},
                                  {"skipped", m.skipped.empty() ? json(nullptr) : json(m.skipped)}});
  }
  if (f.slow_step) {
    out["together"]["samples_per_sec"] = nullptr;  // not measured: see slow_step
    out["slow_step"] = {{"estimate_seconds", f.slow_step->estimate_s},
                        {"first_step_seconds", f.slow_step->first_s > 0 ? json(f.slow_step->first_s) : json(nullptr)},
                        {"seconds", f.slow_step->measured_s > 0 ? json(f.slow_step->measured_s) : json(nullptr)},
                        {"skipped", f.slow_step->skipped.empty() ? json(nullptr) : json(f.slow_step->skipped)}};
  }
  if (f.tried_workers)
    out["tried"] = {{"workers", f.tried_workers->workers}, {"samples_per_sec", f.tried_workers->samples_per_s()}};
  if (f.fewer_threads) {
    out["tried_threads"] = {{"threads", f.threads_free}, {"samples_per_sec", f.fewer_threads->samples_per_s()}};
  }
  for (const auto& c : changes) out["changes"].push_back({{"change", c.change}, {"gain", c.gain}, {"how", c.how}});
  if (batch_search) out["batch_search"] = *batch_search;
  return out;
}

void print_doctor_text(const DoctorFindings& f, const std::vector<DoctorChange>& changes,
                       const std::optional<json>& batch_search) {
  const Limit limit = limit_of(f);
  const int configured = f.configured_workers;
  const double together = f.joint.samples_per_s();
  const double model_rate = f.model_rate();
  const double loader_rate = f.at_configured().images_per_s;

  std::printf("stoker doctor · %s · batch %d · %s · %s · %d cores\n", f.model.c_str(), f.batch_size, f.device.c_str(),
              f.torch_description.c_str(), f.cores);
  std::printf("data         %s\n", f.data_description.c_str());
  if (f.cuda) {
    // Applied by the trainer on CUDA, so not a change to suggest: say they are in the figures.
    std::printf("cuda         %s · %s · pinned %s · TF32 and cuDNN autotuning on\n",
                f.channels_last ? "channels_last" : "contiguous (not a conv net)",
                f.gpu_normalize ? "uint8 batches normalized on the GPU" : "float batches", f.pinned ? "on" : "off");
  }
  if (!f.gpu_decoder.empty()) {
    // The workers leave those JPEGs undecoded: the loader alone does not decode them.
    std::printf("decode       JPEGs on the GPU (%s): the loader alone leaves them undecoded, together decodes them\n",
                f.gpu_decoder.c_str());
  }
  std::string loader_line;
  for (const auto& p : f.loader) {
    loader_line += fmt::format("{}{} worker{} {} samples/s", loader_line.empty() ? "" : " · ", p.workers,
                               p.workers == 1 ? "" : "s", grouped(p.images_per_s));
  }
  const auto& s = f.at_configured().stages;
  const double busy = s.read + s.decode + s.transform;
  std::printf(
      "loader alone %s\n             stages at %d: read %.0f %% · decode %.0f %% · transform %.0f %% of worker time\n",
      loader_line.c_str(), configured, busy > 0 ? 100 * s.read / busy : 0, busy > 0 ? 100 * s.decode / busy : 0,
      busy > 0 ? 100 * s.transform / busy : 0);
  std::string model_line;
  for (const auto& m : f.model_runs) {
    model_line += (model_line.empty() ? "" : " · ") + m.variant + " " +
                  (m.skipped.empty() ? rate_text(m.samples_per_s) + " samples/s" : "skipped (" + m.skipped + ")");
  }
  std::printf("model alone  %s\n", model_line.c_str());
  if (f.slow_step) {
    const auto& slow = *f.slow_step;
    std::printf("together     not measured: %s\n",
                slow.measured_s > 0
                    ? fmt::format("one step takes {:.0f} s at batch {}: the model, not the loader, sets the pace",
                                  slow.measured_s, f.batch_size)
                          .c_str()
                    : fmt::format("one step at batch {} would take about {:.0f} s ({})", f.batch_size, slow.estimate_s,
                                  slow.skipped)
                          .c_str());
  } else {
    std::printf("together     %s samples/s at %d worker%s · %s\n", grouped(together).c_str(), configured,
                configured == 1 ? "" : "s", format_step_shares(f.joint.window).c_str());
  }
  std::printf("limit        %s\n", limit.text.c_str());
  const double expected = std::min(loader_rate, model_rate);
  if (!f.cuda && !f.slow_step && together < 0.8 * expected) {
    std::printf(
        "note         together reaches %.0f %% of the slower side alone: on the CPU the loader's workers "
        "and the model's threads share the same %d cores\n",
        100 * together / std::max(1e-9, expected), f.cores);
  }
  // Together cannot beat the slower side alone (its loader and its model are those two): more
  // than a little faster, the machine's load changed between the probes and every comparison
  // below (the limit, the gains) compares figures of different loads.
  if (!f.slow_step && expected > 0 && together > 1.15 * expected) {
    std::printf(
        "note         together measured %.0f %% of the slower side alone, which it cannot reach: the machine's load "
        "changed between the probes; run stoker doctor again on a quieter machine before acting on these figures\n",
        100 * together / expected);
  }
  if (f.tried_workers) {
    std::printf("tried        %s → %s samples/s together (%+.0f %%)\n",
                flag_words(LoaderKey::kWorkers, std::to_string(f.tried_workers->workers)).c_str(),
                grouped(f.tried_workers->samples_per_s()).c_str(),
                100 * (f.tried_workers->samples_per_s() / std::max(1e-9, together) - 1));
  }
  if (f.fewer_threads) {
    std::printf("tried        --threads %d → %s samples/s together (%+.0f %%)\n", f.threads_free,
                grouped(f.fewer_threads->samples_per_s()).c_str(),
                100 * (f.fewer_threads->samples_per_s() / std::max(1e-9, together) - 1));
  }
  if (changes.empty()) {
    std::printf("changes      none measured to help by 2 %% or more: this configuration is %s\n",
                verdict_name(f.verdict).c_str());
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
}

}  // namespace stoker::diagnose
