#include "train/torch/run/run_records.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"

namespace stoker::train {

namespace fs = std::filesystem;

double EpochRecord::samples_per_sec() const {
  const double s = times.total_s();
  return s > 0 ? static_cast<double>(samples) / s : 0;
}

double EpochRecord::batches_per_sec() const {
  const double s = times.total_s();
  return s > 0 ? static_cast<double>(batches) / s : 0;
}

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

namespace {

// The loader workers' seconds per stage, summed over the workers; null without stoker's loader.
nlohmann::json stage_seconds_json(const data::StageTimes& s) {
  if (s.read + s.decode + s.transform <= 0) return nullptr;
  return {
      {"read", s.read}, {"decode", s.decode}, {"transform", s.transform}, {"idle_full_buffers", s.wait_free_buffer}};
}

}  // namespace

RunRecords::RunRecords(const TrainConfig& cfg, const std::string& run_dir, bool resumed)
    : run_dir_(run_dir),
      metrics_(fs::path(run_dir) / "metrics.csv", resumed ? std::ios::app : std::ios::trunc),
      events_(fs::path(run_dir) / "events.log", std::ios::app),
      summary_({{"run_dir", run_dir},
                {"model", cfg.model},
                {"batch_size", cfg.batch_size},
                {"epochs", nlohmann::json::array()},
                {"stopped_early", nullptr},
                {"ema", nullptr}}) {
  if (!resumed) {
    metrics_ << "epoch,seconds,samples,samples_per_sec,batches_per_sec,train_loss,val_loss,val_top1,val_top5,"
                "val_auc,val_mae,wait_s,copy_s,compute_s,workers,fp16_scale,fp16_skipped,grad_norm_mean,grad_norm_max,"
                "clipped_steps,ema_val_loss,ema_val_top1,ema_val_mae,train_top1\n";
  }
}

void RunRecords::set_process(int threads, const HostTuning& host) {
  summary_["threads"] = threads;
  const auto text_or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  summary_["blas"] = text_or_null(host.blas);
  summary_["allocator"] = text_or_null(host.allocator);
  summary_["blas_reason"] = text_or_null(host.blas_reason);
}

nlohmann::json inputs_json(const data::TransformSpec& spec) {
  nlohmann::json inputs = {{"transform", spec.describe()}, {"features", nullptr}, {"standardize", nullptr}};
  if (spec.features.enabled()) inputs["features"] = spec.features.length;
  if (!spec.features.mean.empty()) inputs["standardize"] = {{"mean", spec.features.mean}, {"std", spec.features.std}};
  return inputs;
}

void RunRecords::set_inputs(const data::TransformSpec& spec) { summary_["inputs"] = inputs_json(spec); }

void RunRecords::report(const std::string& line) {
  std::printf("%s\n", line.c_str());
  events_ << line << "\n";
  events_.flush();
}

std::string RunRecords::add_epoch(const EpochRecord& r, int epochs) {
  total_samples_ += static_cast<double>(r.samples);
  total_train_seconds_ += r.times.total_s();
  const EvalResult& eval = r.eval;

  std::string line =
      fmt::format("epoch {}/{}  done in {:.1f} s · {} samples/s · {:.1f} batches/s · train loss {:.3f}", r.epoch,
                  epochs, r.seconds, grouped(r.samples_per_sec()), r.batches_per_sec(), r.train_loss);
  // On the training batches as they were fed (augmented, mixed), while the weights moved.
  if (r.train_top1 >= 0) line += fmt::format(", acc {:.1f} %", 100 * r.train_top1);
  if (eval.samples > 0) line += " · " + format_eval(eval);
  const EvalResult ema = r.ema_eval.value_or(EvalResult{});  // no samples where there is no average
  if (ema.samples > 0) line += " · EMA " + format_eval(ema);
  line += r.notes;
  if (r.scaler) {
    line += fmt::format(" · fp16 scale {:g}, {} step{} skipped", r.scaler->scale, r.scaler->skipped,
                        r.scaler->skipped == 1 ? "" : "s");
  }
  const GradNorms norms = r.grad_norms.value_or(GradNorms{});  // all zero where clipping is off
  const bool measured = norms.steps > 0;
  if (measured) {
    line += fmt::format(" · grad norm mean {:.3g}, max {:.3g}, clipped {} of {} step{}", norms.mean(), norms.max,
                        norms.clipped, norms.steps, norms.steps == 1 ? "" : "s");
  }

  auto optional = [](bool present, double value) { return present ? fmt::format("{:.5f}", value) : std::string(); };
  metrics_ << fmt::format(
      "{},{:.3f},{},{:.2f},{:.3f},{:.5f},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{},{},{},{},{},{},{},{}\n", r.epoch,
      r.seconds, r.samples, r.samples_per_sec(), r.batches_per_sec(), r.train_loss,
      optional(eval.samples > 0, eval.loss), optional(eval.top1 >= 0, eval.top1), optional(eval.top5 >= 0, eval.top5),
      optional(eval.auc >= 0, eval.auc), optional(!eval.mae.empty(), eval.mean_mae()), r.times.wait_s, r.times.copy_s,
      r.times.compute_s, r.workers, r.scaler ? fmt::format("{:g}", r.scaler->scale) : "",
      r.scaler ? std::to_string(r.scaler->skipped) : "", optional(measured, norms.mean()),
      optional(measured, norms.max), r.grad_norms ? std::to_string(norms.clipped) : "",
      optional(ema.samples > 0, ema.loss), optional(ema.samples > 0 && ema.top1 >= 0, ema.top1),
      optional(!ema.mae.empty(), ema.mean_mae()), optional(r.train_top1 >= 0, r.train_top1));
  metrics_.flush();

  using nlohmann::json;
  summary_["epochs"].push_back({{"epoch", r.epoch},
                                {"seconds", r.seconds},
                                {"samples_per_sec", r.samples_per_sec()},
                                {"train_loss", r.train_loss},
                                {"train_accuracy", r.train_top1 >= 0 ? json(r.train_top1) : json(nullptr)},
                                {"test_accuracy", eval.top1 >= 0 ? json(eval.top1) : json(nullptr)},
                                {"val_loss", eval.samples ? json(eval.loss) : json(nullptr)},
                                {"val_auc", eval.auc >= 0 ? json(eval.auc) : json(nullptr)},
                                {"val_mae", eval.mae.empty() ? json(nullptr) : json(eval.mae)},
                                {"wait_s", r.times.wait_s},
                                {"copy_s", r.times.copy_s},
                                {"compute_s", r.times.compute_s},
                                {"workers", r.workers},
                                {"grad_norm_mean", measured ? json(norms.mean()) : json(nullptr)},
                                {"grad_norm_max", measured ? json(norms.max) : json(nullptr)},
                                {"clipped_steps", r.grad_norms ? json(norms.clipped) : json(nullptr)},
                                {"ema_val_loss", ema.samples > 0 ? json(ema.loss) : json(nullptr)},
                                {"ema_val_top1", ema.samples > 0 && ema.top1 >= 0 ? json(ema.top1) : json(nullptr)},
                                {"ema_val_mae", ema.mae.empty() ? json(nullptr) : json(ema.mae)},
                                {"verdict", diagnose::verdict_name(r.verdict)},
                                {"loader_seconds", stage_seconds_json(r.stages)}});
  return line;
}

void RunRecords::set_ema(double decay, int64_t updates, const std::optional<std::string>& weights) {
  summary_["ema"] = {{"decay", decay}, {"updates", updates}, {"weights", weights ? nlohmann::json(*weights) : nullptr}};
}

const nlohmann::json& RunRecords::finish(const std::optional<std::string>& weights, int64_t global_step,
                                         int exit_code) {
  if (weights) summary_["weights"] = *weights;
  summary_["samples_per_sec"] = total_train_seconds_ > 0 ? total_samples_ / total_train_seconds_ : 0.0;
  summary_["test_accuracy"] =
      summary_["epochs"].empty() ? nlohmann::json(nullptr) : summary_["epochs"].back()["test_accuracy"];
  summary_["global_step"] = global_step;
  summary_["exit_code"] = exit_code;
  std::ofstream(fs::path(run_dir_) / "summary.json") << dump_json(summary_, 2) << "\n";
  return summary_;
}

}  // namespace stoker::train
