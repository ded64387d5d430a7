// stoker/diagnose/check.h — `stoker check`: a report of the machine, microbenchmarks of what
// feeds and computes a training step, and recommendations derived from those numbers.
//
// What is read (no benchmark): CPU model, logical CPUs and the cores this process may use
// (Cpus_allowed_list of /proc/self/status, cgroup v2 cpu.max quota) from /proc and
// /sys/fs/cgroup; RAM total
// and available from /proc/meminfo, lowered to a cgroup v2 memory.max; the filesystem holding
// the data directory (or the working directory) from /proc/self/mountinfo and statvfs; GPUs
// through NVML (stoker::monitor's GpuReader: name, memory, driver).
// What is measured here (each for a time budget, single-threaded; rates are the best of five
// windows of the budget, see RateMeter):
//  - JPEG decode: stoker::data's ImageDecoder on 16 synthetic photo-like JPEGs that
//    stoker::data generates (~400×350, 4:2:0, quality 75..95), decoded whole to RGB at full
//    resolution, in memory: images per second on one core.
//  - data dir read: the files under --data, in path order, read(2) in 1 MiB pieces until the
//    budget is spent: bytes per second. Before reading a file, mincore(2) says how much of it
//    is already in the page cache; that share is reported, since a cached read measures memory,
//    not the disk. Nothing is evicted from the cache.
// The matrix-multiply and host→device figures come from stoker::train (device_bench.h, the
// only layer with torch); the CLI copies them into CheckReport.
// Recommendations and the epoch estimate are pure functions of those numbers (unit-tested
// with scripted ones): they are estimates from microbenchmarks, upper bounds of what training
// reaches, and every text and JSON report says so.
//
// Figures that could not be read or measured are never 0: a Figure is a value or the reason
// it is missing ("skipped"), and the reports print "skipped (<reason>)" / JSON null plus a
// "skipped" string.
//
// Thread safety: every function may be called from any thread; none keeps state. The
// benchmarks run on the calling thread and take about their `seconds` budget each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/diagnose/model_costs.h"

namespace stoker::diagnose::check {

// A value, or why there is none.
struct Figure {
  std::optional<double> value;
  std::string skipped;  // the reason, when !value

  static Figure of(double v) { return Figure{v, ""}; }
  static Figure skip(std::string why) { return Figure{std::nullopt, std::move(why)}; }
  bool ok() const { return value.has_value(); }
  double operator*() const { return *value; }
};

// ---- The machine --------------------------------------------------------------------------

// Where the readers look; tests point them at fake trees.
struct SystemPaths {
  std::string proc = "/proc";
  std::string cgroup = "/sys/fs/cgroup";  // cgroup v2 mount
};

struct CpuInfo {
  std::string model = "unknown CPU";  // "AMD EPYC 9654 96-Core Processor"
  int logical_cpus = 0;               // processors listed in /proc/cpuinfo
  int usable_cores = 1;               // this process: affinity mask, cgroup quota (>= 1)
  bool bf16_instructions = false;     // x86 avx512_bf16/amx_bf16, arm64 bf16
};

// Model, processor count and bf16 flags of /proc/cpuinfo text (x86 "model name", arm64 "CPU
// part"-style files fall back to "Hardware"/"Processor", else "unknown CPU").
CpuInfo parse_cpuinfo(std::string_view text);
// cgroup v2 cpu.max ("200000 100000" → 2.0 cores; "max 100000" → none).
std::optional<double> parse_cgroup_cpu_max(std::string_view text);
// cgroup v2 memory.max ("8589934592" → 8 GiB; "max" → none).
std::optional<double> parse_cgroup_memory_max(std::string_view text);
// The cgroup v2 path of /proc/self/cgroup text ("0::/user.slice/x" → "/user.slice/x").
std::optional<std::string> parse_cgroup_path(std::string_view text);
// CPUs in a kernel CPU list ("0-3,8-11" → 8; the Cpus_allowed_list of /proc/self/status);
// none for text that is not one.
std::optional<int> parse_cpu_list(std::string_view list);
// min(affinity, ceil(quota)), at least 1.
int usable_cores(int affinity_cpus, std::optional<double> quota_cores);

CpuInfo read_cpu_info(const SystemPaths& paths = {});

struct MemoryInfo {
  Figure total_bytes;      // MemTotal, or the cgroup limit when lower
  Figure available_bytes;  // MemAvailable, or what the cgroup limit leaves when lower
};

// MemTotal and MemAvailable of /proc/meminfo text.
MemoryInfo parse_meminfo(std::string_view text);
MemoryInfo read_memory_info(const SystemPaths& paths = {});

struct MountInfo {
  std::string mount_point;
  std::string filesystem;  // "ext4", "nfs4", "overlay"
  std::string device;      // mount source, "/dev/nvme0n1p2"
};

// The mount of /proc/self/mountinfo text that holds absolute path `path` (the longest mount
// point that is a prefix of it at a '/' boundary; the later line wins a tie, as the kernel
// stacks mounts). Octal escapes (\040 for a space) are decoded.
std::optional<MountInfo> find_mount(std::string_view mountinfo, std::string_view path);

struct DiskInfo {
  std::string path;  // what was asked about, made absolute
  MountInfo mount;
  Figure size_bytes;
  Figure free_bytes;    // available to unprivileged users (f_bavail)
  std::string skipped;  // set when nothing could be read
};

DiskInfo read_disk_info(const std::string& path, const SystemPaths& paths = {});

struct NvmlGpu {
  int index = 0;
  std::string name;
  Figure memory_total_bytes;
  Figure memory_used_bytes;
};

struct NvmlReport {
  std::vector<NvmlGpu> gpus;
  std::string driver;   // "580.159"
  std::string skipped;  // why there are no GPUs: "NVML not found (...)", "NVML sees no GPU"
};

// Opens NVML (library "" = the usual dlopen names), reads the GPUs once and closes it again.
NvmlReport read_nvml(const std::string& library = "");

// ---- Microbenchmarks -------------------------------------------------------------------------

// A rate measured over a time budget that a busy machine disturbs little: the budget is cut
// into `windows` equal windows and the best complete window's rate is kept (a ceiling is what
// the hardware can do; another process's burst only lowers some windows). Used by every
// throughput benchmark of `stoker check`, the torch ones included. Not thread-safe.
class RateMeter {
 public:
  explicit RateMeter(double budget_s, int windows = 5);
  // Records `work` units (images, FLOPs, bytes) finished now; false once the budget is spent.
  bool add(double work);
  // Units/s of the best complete window; of the whole run when no window completed.
  double best_rate() const;
  double seconds() const { return seconds_; }  // from construction to the last add()
  double total() const { return total_; }

 private:
  int64_t start_ns_, window_start_ns_, window_ns_, budget_ns_;
  double total_ = 0, window_work_ = 0, best_ = 0, seconds_ = 0;
  int complete_windows_ = 0;
};

struct DecodeBench {
  Figure images_per_s;  // on one core
  int64_t images = 0;
  double seconds = 0;
  double mean_pixels = 0;  // per decoded image
  double mean_bytes = 0;   // per JPEG file
};

// `seconds` > 0. Generating the JPEGs (in a temporary directory, removed again) is not timed.
DecodeBench measure_jpeg_decode(double seconds);

struct ReadBench {
  Figure bytes_per_s;
  uint64_t bytes = 0;
  uint64_t files = 0;  // read (whole or, the last one, in part)
  uint64_t files_listed = 0;
  uint64_t files_failed = 0;
  bool all_read = false;  // every listed file was read before the budget ran out
  double seconds = 0;
  Figure cached_fraction;  // of the bytes read, the share already in the page cache
};

// `path`: a directory (read recursively) or one file. Failures (cannot list, nothing
// readable, empty) come back as bytes_per_s.skipped.
ReadBench measure_read(const std::string& path, double seconds);

struct DatasetInfo {
  Figure images;            // samples stoker::data finds there
  std::string description;  // Source::describe()
  bool raw_pixels = false;  // IDX, NumPy arrays, feature tables: nothing to decode
  // Up to 32 samples spread over the dataset: how many are JPEGs, and how many of those
  // carry restart markers a crop can decode from (a `stoker prepare` copy: all of them).
  int jpegs_sampled = 0;
  int jpegs_with_restart_markers = 0;
};

// Opens `path` as `stoker train` would (data::open_source_showing_progress: a long open says
// what it does on stderr); an error becomes images.skipped. Call from the thread that writes
// the program's stderr.
DatasetInfo inspect_dataset(const std::string& path);

// ---- Recommendations and the estimate (pure) ---------------------------------------------

// Figures of the libtorch side, copied from stoker::train's device_bench.h by the CLI.
struct TorchGpuFigures {
  int index = 0;
  int cc_major = 0, cc_minor = 0;  // 0 = unknown
  bool bf16 = false, tf32 = false;
};

struct MatmulFigure {
  std::string dtype;  // "fp32", "tf32", "bf16", "fp16"
  Figure tflops;
  int size = 0;
  double seconds = 0;
};

struct TorchFigures {
  std::string description;                  // "libtorch 1.13.1 (CPU)"; "" = built without libtorch
  std::string cuda_version, cudnn_version;  // "" = none
  std::vector<TorchGpuFigures> gpus;        // empty = no CUDA device in libtorch
  std::string gpu_skipped;                  // why gpus is empty
  int cpu_threads = 0;
  std::string blas;                       // describe_blas() (stoker/core/host_tuning.h); "" = none loaded
  bool blas_reference = false;            // netlib's reference BLAS: say how much it costs
  std::vector<MatmulFigure> matmul_cpu;   // fp32, bf16 (skipped when a GPU trains)
  std::vector<MatmulFigure> matmul_cuda;  // fp32, tf32, bf16, fp16
  Figure h2d_pinned_gb_per_s, h2d_pageable_gb_per_s;
};

// Which device `stoker train --device auto` would use: "cuda" when libtorch sees a GPU.
std::string training_device(const TorchFigures& torch);

// The matmul figure of `dtype` in `list` (skipped "not measured" when absent).
Figure matmul_tflops(const std::vector<MatmulFigure>& list, std::string_view dtype);

struct AmpChoice {
  std::string amp = "off";  // "bf16" or "off"
  std::string reason;
};

// bf16 when the device supports it natively and bf16 measured faster than fp32, else off.
AmpChoice choose_amp(bool bf16_supported, const Figure& bf16_tflops, const Figure& fp32_tflops);

// The FLOP/s the model's step runs at: bf16 with amp bf16; amp off on CUDA takes tf32 when
// measured (cuDNN convolutions use TF32 by default), else fp32. In TFLOP/s.
Figure compute_tflops(const std::string& amp, const std::string& device, const TorchFigures& torch);

// Images per second the math allows: FLOP/s ÷ training FLOPs per sample.
Figure compute_ceiling(const ModelCost& model, const Figure& tflops);

struct WorkersChoice {
  int workers = 1;
  std::string reason;
};

// Workers to match the compute ceiling with the decode rate per core: ceil(compute ÷ decode),
// at least 1 and at most usable_cores − 1 (a core stays with the training thread; with one
// core, 1). Unknown rates → as many as the cores allow.
WorkersChoice choose_workers(const Figure& decode_per_core, const Figure& compute_ceiling, int usable_cores);

struct BatchChoice {
  Figure batch;   // a power of two <= the model's reference batch and <= the data's samples
  Figure margin;  // 1 − needed ÷ memory, 0..1
  double needed_bytes = 0;
  std::string memory_kind;  // "GPU memory", "RAM"
  std::string capped;       // why the batch is below what memory allows ("the data holds 63 samples"); "" if not
};

// Memory one training step needs at `batch`: parameters with gradients and Adam state
// (16 B each, + 2 B with amp), a fixed overhead (CUDA context 1 GiB, or libtorch 0.5 GiB on
// the CPU), and per sample its activations plus its input (on the CPU × 5 for the loader's
// prefetch buffers).
double training_memory_bytes(const ModelCost& model, bool mixed, bool gpu, int batch);

// The largest power of two <= reference batch whose training_memory_bytes leaves at least
// 20 % of `memory_bytes` free; skipped when not even batch 1 does. A known `samples` (the
// --data folder's count) caps it at the largest power of two <= samples, said in `capped`.
BatchChoice choose_batch(const ModelCost& model, bool mixed, bool gpu, const Figure& memory_bytes,
                         const Figure& samples = Figure::skip("no --data"));

struct EpochEstimate {
  Figure images;             // in the epoch
  std::string images_from;   // "--data" or the reference dataset's name
  Figure input_ceiling;      // img/s the loader can deliver: decode per core × workers
  Figure compute_ceiling;    // img/s the math allows
  Figure epoch_seconds;      // images ÷ min(ceilings)
  bool lower_bound = false;  // one ceiling is unknown: the epoch takes at least epoch_seconds
  std::string bound;         // "input-bound", "compute-bound"; "" when a ceiling is unknown
};

// Input ceiling = decode per core × workers; skipped ("raw pixels, nothing to decode") for
// raw_pixels data, which then does not limit. Epoch = images ÷ the lower ceiling; with one
// ceiling unknown (not measured, or measured 0), images ÷ the other, as a lower bound.
EpochEstimate estimate_epoch(const Figure& images, const Figure& decode_per_core, int workers, bool raw_pixels,
                             const Figure& compute_ceiling);

// ---- The whole report ------------------------------------------------------------------------

struct Suggestion {
  std::string device;  // "cuda", "cpu"
  AmpChoice amp;
  WorkersChoice workers;
  BatchChoice batch;
};

struct CheckReport {
  const ModelCost* model = nullptr;
  double seconds_budget = 0;
  std::string data_path;  // "" = no --data
  CpuInfo cpu;
  MemoryInfo memory;
  DiskInfo disk;
  NvmlReport nvml;
  TorchFigures torch;
  DecodeBench decode;
  ReadBench read;
  DatasetInfo dataset;
  // Filled by suggest_and_estimate():
  Suggestion suggest;
  EpochEstimate estimate;
  double wall_seconds = 0;
};

// Fills report->suggest and report->estimate from the measured parts.
void suggest_and_estimate(CheckReport* report);

// The report for a terminal (CPU, disk, GPU, measured, suggest and estimate lines, as
// docs/guide/check.md shows them), ending in '\n'.
std::string format_text(const CheckReport& report);
// One JSON object (indented), null for skipped figures with a "skipped" reason beside them.
std::string format_json(const CheckReport& report);

}  // namespace stoker::diagnose::check
