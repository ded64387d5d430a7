// `stoker check`'s two reports: lines for a terminal and one JSON object.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"
#include "stoker/diagnose/check.h"

namespace stoker::diagnose::check {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* kIndent = "         ";  // under the 9-column labels
constexpr const char* kNote =
    "estimates from microbenchmarks: the ceilings are upper bounds (peak matmul rate, one decode "
    "per core); `stoker train` measures the real rate";

std::string bytes_per_second(double b) {
  if (b >= 1e9) return fmt::format("{:.1f} GB/s", b / 1e9);
  if (b >= 10e6) return fmt::format("{:.0f} MB/s", b / 1e6);
  return fmt::format("{:.1f} MB/s", b / 1e6);
}

// Three significant digits, no exponent: 781, 51.3, 0.215.
std::string sig3(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 3 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string skipped(const std::string& why) { return "skipped (" + why + ")"; }

std::string label(const std::string& name) { return fmt::format("{:<9}", name); }

// "cpu matmul fp32 183 GFLOP/s · bf16 355": the unit picked by the fastest figure; the
// dtypes in the order bf16, fp16, tf32, fp32 (fastest kinds first, as a card's datasheet).
std::string matmul_text(const std::string& device, const std::vector<MatmulFigure>& list) {
  std::vector<const MatmulFigure*> ordered;
  for (const char* dtype : {"bf16", "fp16", "tf32", "fp32"}) {
    for (const MatmulFigure& m : list) {
      if (m.dtype == dtype) ordered.push_back(&m);
    }
  }
  double best = 0;
  bool all_skipped = true;
  std::string same_reason = ordered.empty() ? "not measured" : ordered.front()->tflops.skipped;
  for (const MatmulFigure* m : ordered) {
    if (m->tflops.ok()) {
      best = std::max(best, *m->tflops);
      all_skipped = false;
    } else if (m->tflops.skipped != same_reason) {
      same_reason.clear();
    }
  }
  if (all_skipped && !same_reason.empty()) return device + " matmul " + skipped(same_reason);
  const bool tera = best >= 1;
  std::string text = device + " matmul";
  bool first_value = true;
  for (size_t i = 0; i < ordered.size(); ++i) {
    const MatmulFigure& m = *ordered[i];
    text += (i == 0 ? " " : " · ") + m.dtype + " ";
    if (!m.tflops.ok()) {
      text += skipped(m.tflops.skipped);
      continue;
    }
    text += sig3(tera ? *m.tflops : *m.tflops * 1e3);
    if (first_value) text += tera ? " TFLOP/s" : " GFLOP/s";
    first_value = false;
  }
  return text;
}

std::string cache_note(const ReadBench& read) {
  if (!read.cached_fraction.ok()) return "may come from the page cache";
  const double f = *read.cached_fraction;
  if (f >= 0.9) return fmt::format("cached: {:.0f} % was in the page cache, so this is memory speed", 100 * f);
  if (f <= 0.05) return "from disk, not cached";
  return fmt::format("{:.0f} % was in the page cache", 100 * f);
}

std::string gpu_line(const CheckReport& r, size_t i) {
  const NvmlGpu* nvml = i < r.nvml.gpus.size() ? &r.nvml.gpus[i] : nullptr;
  const TorchGpuFigures* torch = i < r.torch.gpus.size() ? &r.torch.gpus[i] : nullptr;
  const int index = nvml != nullptr ? nvml->index : torch != nullptr ? torch->index : static_cast<int>(i);
  std::string text = label("GPU" + std::to_string(index));
  if (nvml != nullptr) {
    text += nvml->name;
    if (nvml->memory_total_bytes.ok()) text += " · " + gib(*nvml->memory_total_bytes);
    if (!r.nvml.driver.empty()) text += " · driver " + r.nvml.driver;
  } else {
    text += "NVML " + skipped(r.nvml.skipped.empty() ? "no such GPU" : r.nvml.skipped);
  }
  if (torch == nullptr) return text + " · libtorch " + skipped(r.torch.gpu_skipped);
  if (torch->cc_major > 0) text += fmt::format(" · cc {}.{}", torch->cc_major, torch->cc_minor);
  if (!r.torch.cuda_version.empty()) text += " · CUDA " + r.torch.cuda_version;
  if (!r.torch.cudnn_version.empty()) text += " · cuDNN " + r.torch.cudnn_version;
  if (torch->cc_major > 0) text += std::string(" · bf16 ") + (torch->bf16 ? "yes" : "no");
  return text;
}

// Sets obj[key] to the figure's value or null; a skipped figure also sets obj["skipped"]
// (the first reason, when several figures of the item are missing).
void put(json& obj, const char* key, const Figure& f) {
  if (f.ok()) {
    obj[key] = *f;
    return;
  }
  obj[key] = nullptr;
  if (!obj.contains("skipped")) obj["skipped"] = f.skipped;
}

// put() for a count (images, a batch size): an integer in the JSON.
void put_count(json& obj, const char* key, const Figure& f) {
  put(obj, key, f);
  if (f.ok()) obj[key] = std::llround(*f);
}

json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json matmul_json(const std::vector<MatmulFigure>& list) {
  json out = json::object();
  for (const MatmulFigure& m : list) {
    json item = json::object();
    put(item, "tflops", m.tflops);
    if (m.tflops.ok()) {
      item["matrix_size"] = m.size;
      item["seconds"] = m.seconds;
    }
    out[m.dtype] = item;
  }
  return out;
}

}  // namespace

std::string format_text(const CheckReport& r) {
  std::string out;
  auto line = [&out](const std::string& text) { out += text + "\n"; };

  // CPU, RAM, disk.
  std::string cpu = label("CPU") + r.cpu.model + " · ";
  cpu += r.cpu.usable_cores == r.cpu.logical_cpus || r.cpu.logical_cpus == 0
             ? fmt::format("{} core{}", r.cpu.usable_cores, r.cpu.usable_cores == 1 ? "" : "s")
             : fmt::format("{} of {} cores usable", r.cpu.usable_cores, r.cpu.logical_cpus);
  if (r.memory.total_bytes.ok()) {
    cpu += " · " + gib(*r.memory.total_bytes) + " RAM";
    if (r.memory.available_bytes.ok()) cpu += " (" + gib(*r.memory.available_bytes) + " available)";
  } else {
    cpu += " · RAM " + skipped(r.memory.total_bytes.skipped);
  }
  if (r.cpu.bf16_instructions) cpu += " · bf16 instructions";
  line(cpu);
  std::string disk = label("disk") + r.disk.path;
  if (!r.disk.skipped.empty()) {
    disk += " " + skipped(r.disk.skipped);
  } else {
    if (!r.disk.mount.mount_point.empty()) {
      disk += fmt::format(" · {} {} at {}", r.disk.mount.filesystem, r.disk.mount.device, r.disk.mount.mount_point);
    }
    if (r.disk.size_bytes.ok()) disk += " · " + gib(*r.disk.size_bytes);
    if (r.disk.free_bytes.ok()) disk += ", " + gib(*r.disk.free_bytes) + " free";
  }
  line(disk);

  // GPUs.
  const size_t gpus = std::max(r.nvml.gpus.size(), r.torch.gpus.size());
  if (gpus == 0) {
    line(label("GPU") + "none found (NVML: " + r.nvml.skipped + ") · CPU figures only");
  }
  for (size_t i = 0; i < gpus; ++i) line(gpu_line(r, i));

  // Measurements.
  const bool cuda = r.suggest.device == "cuda";
  std::string measured = label("measured");
  if (cuda) {
    measured += matmul_text("GPU", r.torch.matmul_cuda) + " · H2D ";
    const Figure& pinned = r.torch.h2d_pinned_gb_per_s;
    const Figure& pageable = r.torch.h2d_pageable_gb_per_s;
    measured += "pinned " + (pinned.ok() ? fmt::format("{:.1f} GB/s", *pinned) : skipped(pinned.skipped));
    measured += ", pageable " + (pageable.ok() ? fmt::format("{:.1f} GB/s", *pageable) : skipped(pageable.skipped));
  } else {
    const std::string device = r.torch.cpu_threads > 0 ? fmt::format("cpu ({} thread{})", r.torch.cpu_threads,
                                                                     r.torch.cpu_threads == 1 ? "" : "s")
                                                       : "cpu";
    measured += matmul_text(device, r.torch.matmul_cpu);
    if (!r.torch.blas.empty()) measured += " · BLAS " + r.torch.blas;
    if (gpus > 0) measured += " · GPU matmul and H2D " + skipped(r.torch.gpu_skipped);
  }
  line(measured);
  if (r.torch.blas_reference) {
    line(label("warning") +
         "libtorch calls the reference BLAS: linear layers train several times slower on the CPU "
         "(the Fashion-MNIST CNN 2.5x); sudo apt-get install libopenblas0-pthread, or pick it with "
         "update-alternatives --config libblas.so.3-x86_64-linux-gnu");
  }
  std::string io = kIndent;
  io += "JPEG decode " + (r.decode.images_per_s.ok() ? grouped(*r.decode.images_per_s) + " img/s per core"
                                                     : skipped(r.decode.images_per_s.skipped));
  io += " · data dir read ";
  if (r.read.bytes_per_s.ok()) {
    io += bytes_per_second(*r.read.bytes_per_s) + " (" + cache_note(r.read) + ")";
  } else {
    io += skipped(r.read.bytes_per_s.skipped);
  }
  if (r.dataset.jpegs_sampled > 0) {
    const int marked = r.dataset.jpegs_with_restart_markers;
    io += fmt::format(" · restart markers in {} of {} sampled JPEGs", marked, r.dataset.jpegs_sampled);
    if (2 * marked < r.dataset.jpegs_sampled)
      io += " (crops decode every row above them; `stoker prepare` adds them losslessly)";
  }
  line(io);

  // Suggestion and estimate.
  const ModelCost& model = *r.model;
  std::string suggest =
      label("suggest") + "amp " + r.suggest.amp.amp + " · workers " + std::to_string(r.suggest.workers.workers) + " · ";
  const BatchChoice& batch = r.suggest.batch;
  if (batch.batch.ok()) {
    suggest += fmt::format("batch {:.0f} for {} on {} ({}fits in {} with {:.0f} % margin)", *batch.batch, model.name,
                           r.suggest.device, batch.capped.empty() ? "" : "capped: " + batch.capped + "; ",
                           batch.memory_kind, 100 * *batch.margin);
  } else {
    suggest += fmt::format("batch for {} on {} {}", model.name, r.suggest.device, skipped(batch.batch.skipped));
  }
  line(suggest);

  const EpochEstimate& e = r.estimate;
  std::string estimate = label("estimate") + model.name + " on ";
  if (r.data_path.empty()) {
    estimate += fmt::format("{} ({} images; --data DIR for yours)", model.reference_dataset,
                            grouped(static_cast<double>(model.reference_images)));
  } else {
    estimate += "this data" + (e.images.ok() ? " (" + grouped(*e.images) + " images)" : std::string());
  }
  estimate += ": ";
  if (e.epoch_seconds.ok()) {
    estimate += (e.lower_bound ? "at least " : "") + duration(*e.epoch_seconds) + "/epoch";
  } else {
    estimate += "epoch time " + skipped(e.epoch_seconds.skipped);
  }
  if (e.input_ceiling.ok()) {
    estimate += " (input ceiling " + grouped(*e.input_ceiling) + " img/s";
  } else if (e.input_ceiling.skipped.rfind("raw pixels", 0) == 0) {
    estimate += " (no input ceiling: " + e.input_ceiling.skipped;
  } else {
    estimate += " (input ceiling " + skipped(e.input_ceiling.skipped);
  }
  estimate += ", compute ceiling " +
              (e.compute_ceiling.ok() ? grouped(*e.compute_ceiling) + " img/s" : skipped(e.compute_ceiling.skipped));
  estimate += e.bound.empty() ? ")" : " → " + e.bound + ")";
  line(estimate);
  line(std::string(kIndent) + kNote);
  return out;
}

std::string format_json(const CheckReport& r) {
  const ModelCost& model = *r.model;
  json out = json::object();
  out["note"] = kNote;
  out["model"] = model.name;
  out["seconds_budget"] = r.seconds_budget;
  out["wall_seconds"] = r.wall_seconds;

  json cpu = {{"model", r.cpu.model},
              {"logical_cpus", r.cpu.logical_cpus},
              {"usable_cores", r.cpu.usable_cores},
              {"bf16_instructions", r.cpu.bf16_instructions}};
  out["cpu"] = cpu;
  json memory = json::object();
  put(memory, "total_bytes", r.memory.total_bytes);
  put(memory, "available_bytes", r.memory.available_bytes);
  out["memory"] = memory;
  json disk = {{"path", r.disk.path},
               {"mount_point", text_or_null(r.disk.mount.mount_point)},
               {"filesystem", text_or_null(r.disk.mount.filesystem)},
               {"device", text_or_null(r.disk.mount.device)}};
  put(disk, "size_bytes", r.disk.size_bytes);
  put(disk, "free_bytes", r.disk.free_bytes);
  out["disk"] = disk;

  json nvml = {{"driver", text_or_null(r.nvml.driver)}};
  if (!r.nvml.skipped.empty()) nvml["skipped"] = r.nvml.skipped;
  out["nvml"] = nvml;
  json gpus = json::array();
  const size_t gpu_count = std::max(r.nvml.gpus.size(), r.torch.gpus.size());
  for (size_t i = 0; i < gpu_count; ++i) {
    const NvmlGpu* n = i < r.nvml.gpus.size() ? &r.nvml.gpus[i] : nullptr;
    const TorchGpuFigures* t = i < r.torch.gpus.size() ? &r.torch.gpus[i] : nullptr;
    json gpu = json::object();
    gpu["index"] = n != nullptr ? n->index : t->index;
    gpu["name"] = n != nullptr ? json(n->name) : json(nullptr);
    put(gpu, "memory_total_bytes", n != nullptr ? n->memory_total_bytes : Figure::skip("NVML: " + r.nvml.skipped));
    put(gpu, "memory_used_bytes", n != nullptr ? n->memory_used_bytes : Figure::skip("NVML: " + r.nvml.skipped));
    gpu["driver"] = text_or_null(r.nvml.driver);
    if (t != nullptr) {
      gpu["compute_capability"] =
          t->cc_major > 0 ? json(fmt::format("{}.{}", t->cc_major, t->cc_minor)) : json(nullptr);
      gpu["bf16"] = t->cc_major > 0 ? json(t->bf16) : json(nullptr);
      gpu["tf32"] = t->cc_major > 0 ? json(t->tf32) : json(nullptr);
      gpu["cuda"] = text_or_null(r.torch.cuda_version);
      gpu["cudnn"] = text_or_null(r.torch.cudnn_version);
      if (t->cc_major == 0 && !gpu.contains("skipped"))
        gpu["skipped"] = "compute capability unknown (libcuda.so.1 not readable)";
    } else {
      for (const char* key : {"compute_capability", "bf16", "tf32", "cuda", "cudnn"}) gpu[key] = nullptr;
      gpu["skipped"] = "libtorch: " + r.torch.gpu_skipped;
    }
    gpus.push_back(gpu);
  }
  out["gpus"] = gpus;
  out["torch"] = {{"description", text_or_null(r.torch.description)},
                  {"cuda_version", text_or_null(r.torch.cuda_version)},
                  {"cudnn_version", text_or_null(r.torch.cudnn_version)},
                  {"cuda_devices", r.torch.gpus.size()},
                  {"cpu_threads", r.torch.cpu_threads},
                  {"blas", text_or_null(r.torch.blas)},
                  {"blas_reference", r.torch.blas_reference}};
  if (!r.torch.gpu_skipped.empty()) out["torch"]["skipped"] = r.torch.gpu_skipped;

  json measured = json::object();
  measured["matmul"] = {{"device", r.suggest.device},
                        {"cpu", matmul_json(r.torch.matmul_cpu)},
                        {"cuda", matmul_json(r.torch.matmul_cuda)}};
  json pinned = json::object(), pageable = json::object();
  put(pinned, "gb_per_s", r.torch.h2d_pinned_gb_per_s);
  put(pageable, "gb_per_s", r.torch.h2d_pageable_gb_per_s);
  measured["h2d"] = {{"pinned", pinned}, {"pageable", pageable}};
  json decode = {{"method", "stoker::data ImageDecoder, whole synthetic JPEGs (~400x350, 4:2:0) to RGB, one core"}};
  put(decode, "images_per_s_per_core", r.decode.images_per_s);
  if (r.decode.images_per_s.ok()) {
    decode["images"] = r.decode.images;
    decode["seconds"] = r.decode.seconds;
    decode["mean_pixels"] = r.decode.mean_pixels;
    decode["mean_jpeg_bytes"] = r.decode.mean_bytes;
  }
  measured["jpeg_decode"] = decode;
  json read = {{"path", text_or_null(r.data_path)}};
  put(read, "bytes_per_s", r.read.bytes_per_s);
  if (r.read.bytes_per_s.ok()) {
    read["bytes"] = r.read.bytes;
    read["files"] = r.read.files;
    read["files_listed"] = r.read.files_listed;
    read["files_failed"] = r.read.files_failed;
    read["all_read"] = r.read.all_read;
    read["seconds"] = r.read.seconds;
    read["page_cache_fraction"] = r.read.cached_fraction.ok() ? json(*r.read.cached_fraction) : json(nullptr);
  }
  measured["data_read"] = read;
  out["measured"] = measured;

  json dataset = {{"path", text_or_null(r.data_path)},
                  {"description", text_or_null(r.dataset.description)},
                  {"raw_pixels", r.dataset.raw_pixels},
                  {"jpegs_sampled", r.dataset.jpegs_sampled},
                  {"jpegs_with_restart_markers", r.dataset.jpegs_with_restart_markers}};
  put_count(dataset, "images", r.dataset.images);
  out["dataset"] = dataset;

  const Suggestion& s = r.suggest;
  json suggest = {{"device", s.device},
                  {"amp", s.amp.amp},
                  {"amp_reason", s.amp.reason},
                  {"workers", s.workers.workers},
                  {"workers_reason", s.workers.reason},
                  {"memory_kind", s.batch.memory_kind}};
  put_count(suggest, "batch_size", s.batch.batch);
  put(suggest, "memory_margin", s.batch.margin);
  suggest["batch_capped"] = s.batch.capped.empty() ? json(nullptr) : json(s.batch.capped);
  suggest["memory_needed_bytes"] = s.batch.batch.ok() ? json(s.batch.needed_bytes) : json(nullptr);
  out["suggest"] = suggest;

  const EpochEstimate& e = r.estimate;
  json estimate = {{"model", model.name},
                   {"training_flops_per_sample", training_flops_per_sample(model)},
                   {"images_from", e.images_from},
                   {"bound", text_or_null(e.bound)}};
  put_count(estimate, "images", e.images);
  put(estimate, "input_ceiling_images_per_s", e.input_ceiling);
  put(estimate, "compute_ceiling_images_per_s", e.compute_ceiling);
  put(estimate, "epoch_seconds", e.epoch_seconds);
  estimate["epoch_seconds_is_lower_bound"] = e.lower_bound;
  out["estimate"] = estimate;
  return dump_json(out, 2);
}

}  // namespace stoker::diagnose::check
