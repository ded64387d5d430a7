// `stoker check`'s recommendations and epoch estimate: pure functions of measured numbers.
#include <fmt/format.h>

#include <cmath>

#include "stoker/core/numbers.h"
#include "stoker/diagnose/check.h"

namespace stoker::diagnose::check {

namespace {

constexpr double kMinMemoryMargin = 0.20;  // batch estimates are good to about ±25 %

// A rate that is missing, zero or negative limits nothing we can compute with.
Figure positive(const Figure& f, const std::string& what) {
  if (!f.ok()) return f;
  if (!(*f > 0) || !std::isfinite(*f)) return Figure::skip(what + " measured " + fmt::format("{:g}", *f));
  return f;
}

}  // namespace

std::string training_device(const TorchFigures& torch) { return torch.gpus.empty() ? "cpu" : "cuda"; }

Figure matmul_tflops(const std::vector<MatmulFigure>& list, std::string_view dtype) {
  for (const MatmulFigure& m : list) {
    if (m.dtype == dtype) return m.tflops;
  }
  return Figure::skip(std::string(dtype) + " matmul not measured");
}

AmpChoice choose_amp(bool bf16_supported, const Figure& bf16_tflops, const Figure& fp32_tflops) {
  if (!bf16_supported) return {"off", "the device has no native bf16"};
  if (!bf16_tflops.ok()) return {"off", "bf16 matmul not measured (" + bf16_tflops.skipped + ")"};
  if (!fp32_tflops.ok())
    return {"off", "fp32 matmul not measured (" + fp32_tflops.skipped + "), so bf16 cannot be compared"};
  if (!(*fp32_tflops > 0)) return {"off", "fp32 matmul measured 0, so bf16 cannot be compared"};
  if (*bf16_tflops > *fp32_tflops) {
    return {"bf16", fmt::format("bf16 matmul measured {:.1f}x fp32", *bf16_tflops / *fp32_tflops)};
  }
  return {"off", fmt::format("bf16 matmul measured no faster than fp32 ({:.3g} vs {:.3g} TFLOP/s)", *bf16_tflops,
                             *fp32_tflops)};
}

Figure compute_tflops(const std::string& amp, const std::string& device, const TorchFigures& torch) {
  const auto& list = device == "cuda" ? torch.matmul_cuda : torch.matmul_cpu;
  if (amp == "bf16") return matmul_tflops(list, "bf16");
  if (device == "cuda") {
    const Figure tf32 = matmul_tflops(list, "tf32");
    if (tf32.ok()) return tf32;
  }
  return matmul_tflops(list, "fp32");
}

Figure compute_ceiling(const ModelCost& model, const Figure& tflops) {
  const Figure rate = positive(tflops, "matmul rate");
  if (!rate.ok()) return rate;
  return Figure::of(*rate * 1e12 / training_flops_per_sample(model));
}

WorkersChoice choose_workers(const Figure& decode_per_core, const Figure& compute_ceiling, int usable_cores) {
  const int cap = usable_cores > 1 ? usable_cores - 1 : 1;
  const std::string cores = usable_cores > 1 ? fmt::format("{} cores, one left for the training thread", usable_cores)
                                             : std::string("1 core");
  const Figure decode = positive(decode_per_core, "decode rate");
  if (!decode.ok()) return {cap, "decode rate unknown (" + decode.skipped + "): " + cores};
  const Figure compute = positive(compute_ceiling, "compute ceiling");
  if (!compute.ok()) return {cap, "compute ceiling unknown (" + compute.skipped + "): " + cores};
  const double needed = std::ceil(*compute / *decode - 1e-9);
  if (needed <= cap) {
    const int workers = std::max(1, static_cast<int>(needed));
    return {workers, fmt::format("{} × {} img/s per core covers the compute ceiling of {} img/s", workers,
                                 grouped(*decode), grouped(*compute))};
  }
  return {cap,
          fmt::format("{} would match the compute ceiling of {} img/s; {}", grouped(needed), grouped(*compute), cores)};
}

double training_memory_bytes(const ModelCost& model, bool mixed, bool gpu, int batch) {
  const double fixed = model.parameters * (16.0 + (mixed ? 2.0 : 0.0)) + (gpu ? 1.0 : 0.5) * kBytesPerGiB;
  const double input = 4.0 * model.channels * model.height * model.width;
  const double per_sample =
      (mixed ? model.activation_bytes_mixed : model.activation_bytes_fp32) + input * (gpu ? 1 : 5);
  return fixed + per_sample * batch;
}

BatchChoice choose_batch(const ModelCost& model, bool mixed, bool gpu, const Figure& memory_bytes,
                         const Figure& samples) {
  BatchChoice choice;
  choice.memory_kind = gpu ? "GPU memory" : "RAM";
  if (!memory_bytes.ok() || !(*memory_bytes > 0)) {
    const std::string why = choice.memory_kind + " size unknown" +
                            (memory_bytes.ok() ? std::string(" (reads 0)") : " (" + memory_bytes.skipped + ")");
    choice.batch = choice.margin = Figure::skip(why);
    return choice;
  }
  // No batch is fuller than the data: at most the largest power of two <= its samples.
  int largest = model.reference_batch;
  const bool data_caps = samples.ok() && *samples >= 1 && *samples < largest;
  while (data_caps && largest > *samples) largest /= 2;
  for (int batch = largest; batch >= 1; batch /= 2) {
    const double needed = training_memory_bytes(model, mixed, gpu, batch);
    if (needed <= (1 - kMinMemoryMargin) * *memory_bytes) {
      if (data_caps && batch == largest) choice.capped = fmt::format("the data holds {} samples", grouped(*samples));
      choice.batch = Figure::of(batch);
      choice.margin = Figure::of(1 - needed / *memory_bytes);
      choice.needed_bytes = needed;
      return choice;
    }
  }
  choice.needed_bytes = training_memory_bytes(model, mixed, gpu, 1);
  const std::string why = fmt::format("{} does not fit: batch 1 needs about {}, {} available", model.name,
                                      gib(choice.needed_bytes), gib(*memory_bytes));
  choice.batch = choice.margin = Figure::skip(why);
  return choice;
}

EpochEstimate estimate_epoch(const Figure& images, const Figure& decode_per_core, int workers, bool raw_pixels,
                             const Figure& compute_ceiling) {
  EpochEstimate e;
  e.images = images;
  if (raw_pixels) {
    e.input_ceiling = Figure::skip("raw pixels or feature vectors, nothing to decode");
  } else {
    const Figure decode = positive(decode_per_core, "decode rate");
    e.input_ceiling = decode.ok() ? Figure::of(*decode * std::max(1, workers)) : decode;
  }
  e.compute_ceiling = positive(compute_ceiling, "compute ceiling");
  const bool input = e.input_ceiling.ok(), compute = e.compute_ceiling.ok();
  if (!images.ok()) {
    e.epoch_seconds = Figure::skip("image count unknown (" + images.skipped + ")");
  } else if (!input && !compute) {
    e.epoch_seconds = Figure::skip("no ceiling known (compute: " + e.compute_ceiling.skipped + ")");
  } else {
    const bool input_limits = input && (!compute || *e.input_ceiling < *e.compute_ceiling);
    e.epoch_seconds = Figure::of(*images / (input_limits ? *e.input_ceiling : *e.compute_ceiling));
    e.lower_bound = !compute || (!input && !raw_pixels);
    if (!e.lower_bound) e.bound = input_limits ? "input-bound" : "compute-bound";
  }
  return e;
}

void suggest_and_estimate(CheckReport* r) {
  const ModelCost& model = *r->model;
  Suggestion& s = r->suggest;
  s.device = training_device(r->torch);
  const bool cuda = s.device == "cuda";
  const auto& matmul = cuda ? r->torch.matmul_cuda : r->torch.matmul_cpu;
  const bool bf16_supported = cuda ? r->torch.gpus.front().bf16 : r->cpu.bf16_instructions;
  s.amp = choose_amp(bf16_supported, matmul_tflops(matmul, "bf16"), matmul_tflops(matmul, "fp32"));
  const Figure compute = compute_ceiling(model, compute_tflops(s.amp.amp, s.device, r->torch));
  s.workers = choose_workers(r->decode.images_per_s, compute, r->cpu.usable_cores);

  Figure memory = r->memory.available_bytes;
  if (cuda) {
    const int index = r->torch.gpus.front().index;
    memory = Figure::skip("NVML: " +
                          (r->nvml.skipped.empty() ? "no figure for GPU" + std::to_string(index) : r->nvml.skipped));
    for (const NvmlGpu& gpu : r->nvml.gpus) {
      if (gpu.index == index) memory = gpu.memory_total_bytes;
    }
  }
  Figure images = Figure::of(static_cast<double>(model.reference_images));
  bool raw = model.reference_raw_pixels;
  if (!r->data_path.empty()) {
    images = r->dataset.images;
    raw = r->dataset.raw_pixels;
  }
  s.batch =
      choose_batch(model, s.amp.amp == "bf16", cuda, memory, r->data_path.empty() ? Figure::skip("no --data") : images);
  r->estimate = estimate_epoch(images, r->decode.images_per_s, s.workers.workers, raw, compute);
  r->estimate.images_from = r->data_path.empty() ? model.reference_dataset : "--data";
}

}  // namespace stoker::diagnose::check
