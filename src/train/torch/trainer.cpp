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
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "checkpoint.h"
#include "models.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"
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

bool is_idx(const data::Source& source) {
  int w, h, c;
  source.fixed_shape(&w, &h, &c);
  return w > 0;
}

std::string default_transforms(const data::Source& source, bool train) {
  if (is_idx(source)) return "none, Grayscale, Normalize(mean=(0.286,), std=(0.353,))";
  return train ? "RandomResizedCrop(224), RandomHorizontalFlip(0.5), Normalize"
               : "Resize(256), CenterCrop(224), Normalize";
}

torch::Tensor as_tensor(const data::Batch& batch) {
  const auto shape = batch.shape();
  // Zero copy: the tensor views the pooled batch buffer; the Batch must outlive its use.
  auto t = torch::from_blob(const_cast<void*>(batch.data()), {shape[0], shape[1], shape[2], shape[3]},
                            torch::kFloat32);
  return batch.layout() == data::Layout::kNHWC ? t.permute({0, 3, 1, 2}) : t;
}

torch::Tensor labels_of(const data::Batch& batch) {
  return torch::from_blob(const_cast<int64_t*>(batch.labels()), {batch.size()}, torch::kInt64);
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& cfg, Network& model) {
  if (cfg.optimizer == OptimizerKind::kSgd) {
    return std::make_unique<torch::optim::SGD>(
        model.parameters(), torch::optim::SGDOptions(cfg.lr).momentum(cfg.momentum).nesterov(cfg.nesterov)
                                .weight_decay(cfg.weight_decay));
  }
  return std::make_unique<torch::optim::AdamW>(
      model.parameters(), torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay));
}

// Learning rate at optimiser step `step` of `total` (warmup, then the schedule).
double lr_at(const TrainConfig& cfg, int64_t step, int64_t total, int64_t steps_per_epoch) {
  if (cfg.warmup_steps > 0 && step < cfg.warmup_steps) {
    return cfg.lr * static_cast<double>(step + 1) / static_cast<double>(cfg.warmup_steps);
  }
  switch (cfg.schedule) {
    case ScheduleKind::kCosine: {
      const double span = std::max<int64_t>(1, total - cfg.warmup_steps);
      const double t = std::min(1.0, static_cast<double>(step - cfg.warmup_steps) / span);
      return 0.5 * cfg.lr * (1 + std::cos(M_PI * t));
    }
    case ScheduleKind::kStep: {
      const int64_t epoch = steps_per_epoch > 0 ? step / steps_per_epoch : 0;
      return cfg.lr * std::pow(cfg.step_gamma, static_cast<double>(epoch / cfg.step_every_epochs));
    }
    case ScheduleKind::kConstant:
      break;
  }
  return cfg.lr;
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

struct EvalResult {
  double loss = 0;
  double top1 = 0;
  double top5 = -1;  // only with more than 5 classes
  int64_t samples = 0;
};

EvalResult evaluate(Network& model, data::Loader& loader, int64_t classes, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult r;
  double loss_sum = 0, correct1 = 0, correct5 = 0;
  loader.start_epoch(0);
  while (data::Batch batch = loader.next()) {
    const auto x = as_tensor(batch).to(device);
    const auto y = labels_of(batch).to(device);
    const auto logits = model.forward(x);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct1 += logits.argmax(1).eq(y).sum().item<double>();
    if (classes > 5) {
      const auto top5 = std::get<1>(logits.topk(5, 1));
      correct5 += top5.eq(y.unsqueeze(1)).any(1).sum().item<double>();
    }
    r.samples += batch.size();
  }
  if (r.samples > 0) {
    r.loss = loss_sum / static_cast<double>(r.samples);
    r.top1 = correct1 / static_cast<double>(r.samples);
    if (classes > 5) r.top5 = correct5 / static_cast<double>(r.samples);
  }
  return r;
}

torch::Device pick_device(const TrainConfig& cfg) {
  if (cfg.device == "cpu") return torch::kCPU;
  if (cfg.device == "auto") return compat::cuda_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (!compat::cuda_available()) {
    std::fprintf(stderr,
                 "⚠ WARNING: device %s was asked for, but no CUDA device is available to this libtorch "
                 "(%s); training runs on the CPU\n",
                 cfg.device.c_str(), torch_description().c_str());
    return torch::kCPU;
  }
  return torch::Device(cfg.device);
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
  validate(cfg);
  const torch::Device device = pick_device(cfg);

  // Data.
  std::shared_ptr<const data::Source> train_source = data::open_source(cfg.data, "train");
  std::shared_ptr<const data::Source> val_source;
  if (!cfg.val_data.empty()) {
    val_source = data::open_source(cfg.val_data, "t10k");
  } else if (is_idx(*train_source)) {
    val_source = data::open_source(cfg.data, "t10k");
  }
  if (train_source->target_kind() != data::TargetKind::kClass) {
    throw UsageError("dataset " + cfg.data + " has float targets; this version trains classifiers only");
  }
  const auto classes = static_cast<int64_t>(train_source->class_names().size());

  data::LoaderOptions train_options;
  train_options.batch_size = cfg.batch_size;
  train_options.workers = cfg.num_workers;
  // PyTorch's prefetch_factor counts batches per worker; the loader's prefetch is the total.
  train_options.prefetch = std::max(2, cfg.prefetch_factor * cfg.num_workers);
  train_options.sampler.seed = cfg.seed;
  train_options.max_bad_fraction = cfg.max_bad_fraction;
  train_options.transform = data::parse_transforms(cfg.transforms.empty() ? default_transforms(*train_source, true)
                                                                          : cfg.transforms);
  train_options.transform.dtype = data::DType::kFloat32;
  data::Loader train_loader(train_source, train_options);

  std::unique_ptr<data::Loader> val_loader;
  if (val_source) {
    data::LoaderOptions val_options = train_options;
    val_options.batch_size = std::max(cfg.batch_size, 256);
    val_options.sampler.shuffle = false;
    val_options.transform = data::parse_transforms(cfg.transforms.empty() ? default_transforms(*val_source, false)
                                                                          : cfg.transforms);
    val_options.transform.dtype = data::DType::kFloat32;
    val_loader = std::make_unique<data::Loader>(val_source, val_options);
  }

  // Intra-op threads: libtorch's default can be 1 (it counts physical cores, and some VMs
  // report one); use every CPU the process may run on unless OMP_NUM_THREADS says otherwise.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    torch::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }

  // Model and optimiser.
  torch::manual_seed(cfg.seed);
  const data::TransformSpec& spec = train_loader.options().transform;
  auto model = make_model(cfg.model, {spec.channels, spec.out_height, spec.out_width}, classes);
  model->to(device);
  auto optimizer = make_optimizer(cfg, *model);

  // Run directory, resume.
  int64_t start_epoch = 0, start_batch = 0, global_step = 0;
  std::string run_dir;
  if (!cfg.resume.empty()) {
    const std::string path = checkpoint_path_of(cfg.resume);
    const CheckpointMeta meta = read_checkpoint_meta(path);
    if (meta.model != cfg.model || meta.batch_size != cfg.batch_size || meta.seed != cfg.seed) {
      throw UsageError(fmt::format("checkpoint {} was made with model {}, batch_size {}, seed {}; "
                                   "resume with the same values (got {}, {}, {})",
                                   path, meta.model, meta.batch_size, meta.seed, cfg.model, cfg.batch_size, cfg.seed));
    }
    const CheckpointMeta loaded = load_checkpoint(path, *model, *optimizer);
    start_epoch = loaded.epoch;
    start_batch = loaded.next_batch;
    global_step = loaded.global_step;
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
  std::printf("stoker 0.1 · run dir %s\n", run_dir.c_str());
  std::printf("device   %s · %s · %d threads\n", device.str().c_str(), torch_description().c_str(), torch::get_num_threads());
  std::printf("data     %s%s\n", train_source->describe().c_str(),
              val_source ? (" · validation " + std::to_string(val_source->size())).c_str() : "");
  std::printf("model    %s · %s parameters\n", cfg.model.c_str(),
              fmt::format("{:.2f} M", parameter_count(*model) / 1e6).c_str());
  std::printf("config   batch_size %d · epochs %d · lr %g %s · workers %d · prefetch %d · amp %s · accum %d\n",
              cfg.batch_size, cfg.epochs, cfg.lr, to_string(cfg.optimizer).c_str(), cfg.num_workers,
              cfg.prefetch_factor, to_string(cfg.amp).c_str(), cfg.accumulation_steps);
  std::printf("Batch size: %d (requested: %d)\n", cfg.batch_size, cfg.batch_size);
  if (cfg.amp == AmpMode::kFp16 && device.is_cpu()) {
    throw UsageError("amp fp16 needs a CUDA device; on the CPU use --amp bf16 or --amp off");
  }
  if (!cfg.resume.empty()) {
    std::printf("resume   epoch %lld, batch %lld, step %lld\n", static_cast<long long>(start_epoch + 1),
                static_cast<long long>(start_batch), static_cast<long long>(global_step));
  }
  std::fflush(stdout);

  monitor::SamplerOptions monitor_options;
  monitor_options.pid = ::getpid();
  monitor::Sampler monitor(monitor_options);
  monitor.start();

  std::ofstream metrics(fs::path(run_dir) / "metrics.csv", cfg.resume.empty() ? std::ios::trunc : std::ios::app);
  if (cfg.resume.empty()) {
    metrics << "epoch,seconds,samples,samples_per_sec,batches_per_sec,train_loss,val_loss,val_top1,val_top5,"
               "wait_s,copy_s,compute_s\n";
  }
  nlohmann::json summary = {{"run_dir", run_dir}, {"model", cfg.model}, {"batch_size", cfg.batch_size},
                            {"epochs", nlohmann::json::array()}};

  StopSignals signals;
  ProgressLine progress(stdout);
  const int64_t total_steps = static_cast<int64_t>(cfg.epochs) * steps_per_epoch / cfg.accumulation_steps;
  double total_samples = 0, total_train_seconds = 0;
  int exit_code = 0;
  bool stopped_at_max_steps = false;

  for (int64_t epoch = start_epoch; epoch < cfg.epochs && exit_code == 0; ++epoch) {
    model->train();
    train_loader.start_epoch(epoch, epoch == start_epoch ? start_batch : 0);
    StepTimes times;
    double loss_sum = 0;
    int64_t loss_count = 0, samples = 0, micro = 0;
    const int64_t first = epoch == start_epoch ? start_batch : 0;
    int64_t step = first;
    Stopwatch epoch_clock;
    int64_t last_draw_ns = 0;
    for (;;) {
      Stopwatch watch;
      data::Batch batch = train_loader.next();
      times.wait_s += ns_to_seconds(watch.lap());
      if (!batch) break;
      torch::Tensor x = as_tensor(batch), y = labels_of(batch);
      if (!device.is_cpu()) {
        x = x.to(device, /*non_blocking=*/false);
        y = y.to(device);
      }
      times.copy_s += ns_to_seconds(watch.lap());

      torch::Tensor loss;
      {
        const bool bf16 = cfg.amp == AmpMode::kBf16 && device.is_cpu();
        if (bf16) compat::enable_cpu_autocast(torch::kBFloat16);
        const auto logits = model->forward(x);
        loss = torch::nn::functional::cross_entropy(
            logits.to(torch::kFloat32), y,
            torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(cfg.label_smoothing));
        if (bf16) compat::disable_cpu_autocast();
      }
      (loss / cfg.accumulation_steps).backward();
      const double loss_value = loss.item<double>();
      if (!std::isfinite(loss_value)) {
        progress.finish();
        throw DataError(fmt::format("loss became {} at epoch {} step {}; try a lower --lr (now {:g}){}",
                                    std::isnan(loss_value) ? "NaN" : "infinite", epoch + 1, step + 1, cfg.lr,
                                    cfg.amp != AmpMode::kOff ? " or --amp off" : ""));
      }
      ++micro;
      const bool window_done = micro % cfg.accumulation_steps == 0;
      if (window_done) {
        set_lr(*optimizer, lr_at(cfg, global_step, total_steps, steps_per_epoch / cfg.accumulation_steps));
        optimizer->step();
        compat::zero_grad_set_to_none(*optimizer);
        ++global_step;
      }
      times.compute_s += ns_to_seconds(watch.lap());
      loss_sum += loss_value;
      ++loss_count;
      samples += batch.size();
      ++step;
      batch.release();

      if (ui.progress && (now_ns() - last_draw_ns > 100'000'000 || step == steps_per_epoch)) {
        last_draw_ns = now_ns();
        const double elapsed = ns_to_seconds(epoch_clock.elapsed_ns());
        const std::string mon = monitor.has_sample() ? monitor::format_status_line(monitor.latest()) : "";
        progress.update(step - first, steps_per_epoch - first,
                        format_progress(static_cast<int>(epoch + 1), cfg.epochs, step, steps_per_epoch, elapsed,
                                        elapsed > 0 ? samples / elapsed : 0, loss_sum / loss_count, mon));
      }
      const bool at_boundary = micro % cfg.accumulation_steps == 0;
      const bool max_reached = cfg.max_steps > 0 && global_step >= cfg.max_steps && at_boundary;
      if (at_boundary && (signals.raised() != 0 ||
                          (cfg.checkpoint_every_steps > 0 && window_done && global_step % cfg.checkpoint_every_steps == 0) ||
                          max_reached)) {
        save_checkpoint(checkpoint_path, *model, *optimizer,
                        {epoch, step, global_step, cfg.seed, cfg.batch_size, cfg.model});
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
    // A last partial accumulation window: scale its gradients up to a full window's weight.
    if (!stopped_at_max_steps && micro % cfg.accumulation_steps != 0) {
      const double scale = static_cast<double>(cfg.accumulation_steps) / static_cast<double>(micro % cfg.accumulation_steps);
      for (auto& p : model->parameters()) {
        if (p.grad().defined()) p.mutable_grad().mul_(scale);
      }
      optimizer->step();
      compat::zero_grad_set_to_none(*optimizer);
      ++global_step;
    }
    progress.finish();
    const double seconds = ns_to_seconds(epoch_clock.elapsed_ns());
    const double train_seconds = times.total();
    total_samples += static_cast<double>(samples);
    total_train_seconds += train_seconds;

    EvalResult eval;
    if (val_loader) eval = evaluate(*model, *val_loader, classes, device);
    const double sps = train_seconds > 0 ? samples / train_seconds : 0;
    std::string line = fmt::format("epoch {}/{}  done in {:.1f} s · {:.0f} samples/s · {:.1f} batches/s · train loss {:.3f}",
                                   epoch + 1, cfg.epochs, seconds, sps,
                                   train_seconds > 0 ? (step - first) / train_seconds : 0.0,
                                   loss_count ? loss_sum / loss_count : 0.0);
    if (eval.samples > 0) {
      line += fmt::format(" · val acc {:.1f} %", 100 * eval.top1);
      if (eval.top5 >= 0) line += fmt::format(" (top-5 {:.1f} %)", 100 * eval.top5);
    }
    std::printf("%s\n           %s\n", line.c_str(), format_step_times(times).c_str());
    std::fflush(stdout);
    metrics << fmt::format("{},{:.3f},{},{:.2f},{:.3f},{:.5f},{},{},{},{:.3f},{:.3f},{:.3f}\n", epoch + 1, seconds,
                           samples, sps, train_seconds > 0 ? (step - first) / train_seconds : 0.0,
                           loss_count ? loss_sum / loss_count : 0.0,
                           eval.samples ? fmt::format("{:.5f}", eval.loss) : "",
                           eval.samples ? fmt::format("{:.5f}", eval.top1) : "",
                           eval.top5 >= 0 ? fmt::format("{:.5f}", eval.top5) : "", times.wait_s, times.copy_s,
                           times.compute_s);
    metrics.flush();
    summary["epochs"].push_back({{"epoch", epoch + 1}, {"seconds", seconds}, {"samples_per_sec", sps},
                                 {"train_loss", loss_count ? loss_sum / loss_count : 0.0},
                                 {"test_accuracy", eval.samples ? nlohmann::json(eval.top1) : nlohmann::json(nullptr)},
                                 {"wait_s", times.wait_s}, {"copy_s", times.copy_s}, {"compute_s", times.compute_s}});
    if (stopped_at_max_steps) break;
    save_checkpoint(checkpoint_path, *model, *optimizer, {epoch + 1, 0, global_step, cfg.seed, cfg.batch_size, cfg.model});
    if (cfg.max_steps > 0 && global_step >= cfg.max_steps) break;
  }
  monitor.stop();

  summary["samples_per_sec"] = total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0;
  summary["test_accuracy"] = summary["epochs"].empty() ? nlohmann::json(nullptr) : summary["epochs"].back()["test_accuracy"];
  summary["global_step"] = global_step;
  summary["exit_code"] = exit_code;
  {
    std::ofstream out(fs::path(run_dir) / "summary.json");
    out << summary.dump(2) << "\n";
  }
  if (exit_code == 0) {
    std::printf("saved      %s (atomic) · metrics.csv · config.yaml · summary.json\n", checkpoint_path.c_str());
  }
  if (ui.json_summary) std::printf("%s\n", summary.dump().c_str());
  return exit_code;
}

}  // namespace stoker::train
