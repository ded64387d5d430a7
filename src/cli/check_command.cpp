// `stoker check`: the machine, microbenchmarks, and what to train with (stoker::diagnose::check
// does the reading, the math and the reports; stoker::train measures the torch side).
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "commands.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/host_tuning.h"
#include "stoker/diagnose/check.h"
#include "stoker/train/device_bench.h"
#include "torch_handoff.h"

namespace stoker::cli {

namespace {

namespace check = stoker::diagnose::check;

constexpr double kDefaultSeconds = 1.5;

struct CheckArgs {
  std::string data;
  std::string model = "resnet50";
  double seconds = kDefaultSeconds;
  bool json = false;
};

void validate(const CheckArgs& args) {
  if (!(args.seconds > 0) || !std::isfinite(args.seconds)) {
    throw UsageError(
        fmt::format("--seconds must be > 0 (got {}); it is the time each benchmark may take", args.seconds));
  }
  if (diagnose::find_model_cost(args.model) == nullptr) {
    throw UsageError("unknown model '" + args.model + "' for --model (known: " + diagnose::model_cost_names() + ")");
  }
  if (!args.data.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(args.data, ec)) {
      throw UsageError("data directory " + args.data + " does not exist (--data)");
    }
  }
}

std::vector<check::MatmulFigure> to_figures(const std::vector<train::MatmulResult>& results) {
  std::vector<check::MatmulFigure> figures;
  for (const auto& m : results) {
    check::MatmulFigure f;
    f.dtype = m.dtype;
    f.tflops = m.skipped.empty() ? check::Figure::of(m.tflops) : check::Figure::skip(m.skipped);
    f.size = m.size;
    f.seconds = m.seconds;
    figures.push_back(f);
  }
  return figures;
}

// libtorch's view: versions and GPUs, then the matmul and copy benchmarks on the device a
// `stoker train --device auto` would use (the other device's figures come back skipped).
check::TorchFigures measure_torch(double seconds) {
  const train::TorchDeviceInfo info = train::torch_device_info();
  check::TorchFigures t;
  t.description = info.torch;
  t.cuda_version = info.cuda_version;
  t.cudnn_version = info.cudnn_version;
  t.gpu_skipped = info.skipped;
  t.cpu_threads = info.cpu_threads;
  const BlasInfo blas = describe_blas();
  t.blas = blas.text;
  t.blas_reference = blas.reference;
  for (const auto& gpu : info.gpus) t.gpus.push_back({gpu.index, gpu.cc_major, gpu.cc_minor, gpu.bf16, gpu.tf32});
  if (check::training_device(t) == "cuda") {
    t.matmul_cuda = to_figures(train::measure_matmul("cuda", seconds));
    for (const char* dtype : {"fp32", "bf16"}) {
      t.matmul_cpu.push_back({dtype, check::Figure::skip("not measured: a GPU trains"), 0, 0});
    }
  } else {
    t.matmul_cpu = to_figures(train::measure_matmul("cpu", seconds));
    t.matmul_cuda = to_figures(train::measure_matmul("cuda", seconds));  // skipped at once
  }
  for (const auto& copy : train::measure_host_to_device(seconds)) {  // skipped at once without CUDA
    const check::Figure f = copy.skipped.empty() ? check::Figure::of(copy.gb_per_s) : check::Figure::skip(copy.skipped);
    (copy.kind == "pinned" ? t.h2d_pinned_gb_per_s : t.h2d_pageable_gb_per_s) = f;
  }
  return t;
}

// After validate(args).
int run_check(const CheckArgs& args) {
  Stopwatch wall;
  const bool hint = ::isatty(STDERR_FILENO) != 0;
  if (hint) std::fprintf(stderr, "stoker check: measuring, about %.0f s per benchmark ...", args.seconds);

  check::CheckReport r;
  r.model = diagnose::find_model_cost(args.model);
  r.seconds_budget = args.seconds;
  r.data_path = args.data;
  r.cpu = check::read_cpu_info();
  r.memory = check::read_memory_info();
  r.disk = check::read_disk_info(args.data.empty() ? "." : args.data);
  r.nvml = check::read_nvml();
  r.torch = measure_torch(args.seconds);
  r.decode = check::measure_jpeg_decode(args.seconds);
  if (args.data.empty()) {
    r.read.bytes_per_s = check::Figure::skip("no --data given");
    r.read.cached_fraction = r.read.bytes_per_s;
    r.dataset.images = r.read.bytes_per_s;
  } else {
    r.read = check::measure_read(args.data, args.seconds);  // before opening it, which may read it all
    r.dataset = check::inspect_dataset(args.data);
  }
  check::suggest_and_estimate(&r);
  r.wall_seconds = ns_to_seconds(wall.elapsed_ns());

  if (hint) std::fputs("\r\033[K", stderr);
  const std::string text = args.json ? check::format_json(r) + "\n" : check::format_text(r);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Report the machine, run short microbenchmarks, suggest amp/workers/batch and estimate an epoch");
  cmd->add_option("--data", args->data, "Dataset directory to read (MB/s) and count (the epoch estimate)");
  cmd->add_option("--model", args->model, "Model for the suggestions: " + diagnose::model_cost_names())
      ->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Time budget of each benchmark")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->callback([args, exit_code] {
    validate(*args);
    continue_in_torch_program();
    *exit_code = run_check(*args);
  });
}

}  // namespace stoker::cli
