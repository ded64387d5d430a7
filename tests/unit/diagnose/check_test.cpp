// `stoker check`'s pieces without the binary: /proc and cgroup parsers on literal text and
// fake trees, the recommendation and estimate math on scripted numbers (zero and missing
// rates included), the reports, and the two benchmarks on tiny inputs.
#include "stoker/diagnose/check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "stoker/data/encode.h"
#include "stoker/train/config.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::diagnose::check {
namespace {

using stoker::testing::TempDir;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const char* const kX86CpuInfo =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "model name\t: AMD EPYC 9654   96-Core Processor\n"
    "flags\t\t: fpu vme avx2 avx512f avx512_bf16 avx512_vnni\n"
    "\n"
    "processor\t: 1\n"
    "model name\t: AMD EPYC 9654   96-Core Processor\n"
    "flags\t\t: fpu vme avx2 avx512f avx512_bf16 avx512_vnni\n"
    "\n";

TEST(CheckParsers, CpuInfoX86) {
  const CpuInfo info = parse_cpuinfo(kX86CpuInfo);
  EXPECT_EQ(info.model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(info.logical_cpus, 2);
  EXPECT_TRUE(info.bf16_instructions);
}

TEST(CheckParsers, CpuInfoWithoutBf16AndArm) {
  const CpuInfo old_x86 =
      parse_cpuinfo("processor : 0\nmodel name : Intel(R) Xeon(R) CPU E5-2680\nflags : fpu avx2 xavx512_bf16x\n");
  EXPECT_FALSE(old_x86.bf16_instructions) << "a flag is a whole word";
  const CpuInfo arm = parse_cpuinfo(
      "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n\nprocessor\t: 1\nFeatures\t: fp asimd bf16 i8mm\n");
  EXPECT_EQ(arm.model, "unknown CPU");
  EXPECT_EQ(arm.logical_cpus, 2);
  EXPECT_TRUE(arm.bf16_instructions);
  EXPECT_EQ(parse_cpuinfo("").logical_cpus, 0);
  EXPECT_EQ(parse_cpuinfo("").usable_cores, 1);
}

TEST(CheckParsers, CgroupFiles) {
  EXPECT_DOUBLE_EQ(*parse_cgroup_cpu_max("200000 100000\n"), 2.0);
  EXPECT_DOUBLE_EQ(*parse_cgroup_cpu_max("150000 100000"), 1.5);
  EXPECT_FALSE(parse_cgroup_cpu_max("max 100000\n"));
  EXPECT_FALSE(parse_cgroup_cpu_max("junk"));
  EXPECT_FALSE(parse_cgroup_cpu_max("0 100000"));
  EXPECT_DOUBLE_EQ(*parse_cgroup_memory_max("8589934592\n"), 8 * kGiB);
  EXPECT_FALSE(parse_cgroup_memory_max("max\n"));
  EXPECT_FALSE(parse_cgroup_memory_max(""));
  EXPECT_EQ(*parse_cgroup_path("4:memory:/x\n0::/user.slice/job\n"), "/user.slice/job");
  EXPECT_FALSE(parse_cgroup_path("4:memory:/x\n1:cpu:/\n"));
}

TEST(CheckParsers, CpuListsAndUsableCores) {
  EXPECT_EQ(*parse_cpu_list("0-3,8-11\n"), 8);
  EXPECT_EQ(*parse_cpu_list("5"), 1);
  EXPECT_EQ(*parse_cpu_list("0,2,4-5"), 4);
  EXPECT_FALSE(parse_cpu_list(""));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a-b"));
  EXPECT_EQ(usable_cores(2, std::nullopt), 2);
  EXPECT_EQ(usable_cores(16, 4.0), 4);
  EXPECT_EQ(usable_cores(16, 1.5), 2) << "a fraction of a core still runs a thread";
  EXPECT_EQ(usable_cores(8, 0.5), 1);
  EXPECT_EQ(usable_cores(0, std::nullopt), 1);
  EXPECT_EQ(usable_cores(4, 64.0), 4);
}

TEST(CheckParsers, ReadCpuInfoFromAFakeTree) {
  TempDir dir;
  dir.write_text("proc/cpuinfo",
                 std::string(kX86CpuInfo) + "processor\t: 2\n\nprocessor\t: 3\n\nprocessor\t: 4\n\nprocessor\t: 5\n");
  dir.write_text("proc/self/status", "Name:\tstoker\nCpus_allowed_list:\t0-4\n");
  dir.write_text("proc/self/cgroup", "0::/job/step\n");
  dir.write_text("cg/job/step/cpu.max", "max 100000\n");
  dir.write_text("cg/job/cpu.max", "300000 100000\n");
  SystemPaths paths{dir.str() + "/proc", dir.str() + "/cg"};
  const CpuInfo info = read_cpu_info(paths);
  EXPECT_EQ(info.logical_cpus, 6);
  EXPECT_EQ(info.usable_cores, 3) << "the parent cgroup's quota holds for the child";
  dir.write_text("cg/job/cpu.max", "max 100000\n");
  EXPECT_EQ(read_cpu_info(paths).usable_cores, 5) << "the affinity mask";
}

TEST(CheckParsers, MemInfo) {
  const MemoryInfo m = parse_meminfo("MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   20480000 kB\n");
  ASSERT_TRUE(m.total_bytes.ok());
  EXPECT_DOUBLE_EQ(*m.total_bytes, 24576000.0 * 1024);
  EXPECT_DOUBLE_EQ(*m.available_bytes, 20480000.0 * 1024);
  const MemoryInfo old_kernel = parse_meminfo("MemTotal: 1000 kB\n");
  EXPECT_TRUE(old_kernel.total_bytes.ok());
  EXPECT_FALSE(old_kernel.available_bytes.ok());
  EXPECT_NE(old_kernel.available_bytes.skipped.find("MemAvailable"), std::string::npos);
}

TEST(CheckParsers, MemoryLimitedByTheCgroup) {
  TempDir dir;
  dir.write_text("proc/meminfo", "MemTotal: 67108864 kB\nMemAvailable: 60000000 kB\n");  // 64 GiB
  dir.write_text("proc/self/cgroup", "0::/job\n");
  dir.write_text("cg/job/memory.max", "8589934592\n");      // 8 GiB
  dir.write_text("cg/job/memory.current", "2147483648\n");  // 2 GiB used
  const MemoryInfo m = read_memory_info({dir.str() + "/proc", dir.str() + "/cg"});
  EXPECT_DOUBLE_EQ(*m.total_bytes, 8 * kGiB);
  EXPECT_DOUBLE_EQ(*m.available_bytes, 6 * kGiB);
  const MemoryInfo missing = read_memory_info({dir.str() + "/nothing", dir.str() + "/cg"});
  EXPECT_FALSE(missing.total_bytes.ok());
  EXPECT_NE(missing.total_bytes.skipped.find("cannot read"), std::string::npos);
}

const char* const kMountInfo =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "40 27 0:40 / /data rw,relatime shared:5 - nfs4 server:/export rw,vers=4.2\n"
    "41 27 259:1 / /mnt/my\\040disk rw - xfs /dev/nvme0n1p1 rw\n"
    "42 27 0:50 / /scratch rw - tmpfs tmpfs rw\n"
    "43 27 259:2 / /scratch rw - ext4 /dev/nvme1n1 rw\n"
    "bad line\n";

TEST(CheckParsers, FindsTheMountHoldingAPath) {
  EXPECT_EQ(find_mount(kMountInfo, "/data/imagenet/train")->filesystem, "nfs4");
  EXPECT_EQ(find_mount(kMountInfo, "/data")->device, "server:/export");
  EXPECT_EQ(find_mount(kMountInfo, "/database/x")->mount_point, "/") << "prefix at a '/' boundary only";
  const auto spaced = find_mount(kMountInfo, "/mnt/my disk/set");
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->mount_point, "/mnt/my disk");
  EXPECT_EQ(spaced->filesystem, "xfs");
  EXPECT_EQ(find_mount(kMountInfo, "/scratch/a")->device, "/dev/nvme1n1") << "the later mount covers the earlier";
  EXPECT_FALSE(find_mount("", "/x"));
  EXPECT_FALSE(find_mount(kMountInfo, "relative/path"));
}

TEST(CheckParsers, DiskInfoOfADirectory) {
  TempDir dir;
  dir.write_text("proc/self/mountinfo", "27 1 254:0 / / rw,relatime - ext4 /dev/fake rw\n");
  const DiskInfo disk = read_disk_info(dir.str(), {dir.str() + "/proc", "/nonexistent"});
  EXPECT_TRUE(disk.skipped.empty()) << disk.skipped;
  EXPECT_EQ(disk.mount.device, "/dev/fake");
  ASSERT_TRUE(disk.size_bytes.ok());
  EXPECT_GT(*disk.size_bytes, 0);
  EXPECT_LE(*disk.free_bytes, *disk.size_bytes);
  const DiskInfo gone = read_disk_info(dir.str() + "/missing/dir", {dir.str() + "/nothing", "/nonexistent"});
  EXPECT_FALSE(gone.size_bytes.ok());
  EXPECT_NE(gone.skipped.find("statvfs"), std::string::npos) << gone.skipped;
}

// ---- Model table -------------------------------------------------------------------------------

TEST(CheckModels, TableHasTheDocumentedModels) {
  const ModelCost* resnet50 = find_model_cost("resnet50");
  ASSERT_NE(resnet50, nullptr);
  EXPECT_DOUBLE_EQ(training_flops_per_sample(*resnet50), 6 * 4.11e9);
  EXPECT_DOUBLE_EQ(find_model_cost("resnet18")->forward_macs, 1.82e9);
  EXPECT_LT(find_model_cost("mnist_cnn")->forward_macs, 1e8);
  EXPECT_TRUE(find_model_cost("mnist_cnn")->reference_raw_pixels);
  EXPECT_EQ(find_model_cost("vgg16"), nullptr);
  EXPECT_EQ(model_cost_names().rfind("resnet50, resnet18, mnist_cnn, mlp, efficientnet_b0, ", 0), 0u)
      << model_cost_names();
  EXPECT_DOUBLE_EQ(find_model_cost("efficientnet_b0")->forward_macs, 0.386e9);
  EXPECT_EQ(find_model_cost("efficientnet_b7")->height, 600);
}

TEST(CheckModels, EveryTrainableModelHasARow) {
  for (const std::string_view name : train::kModelNames) EXPECT_NE(find_model_cost(name), nullptr) << name;
}

// ---- Recommendations -------------------------------------------------------------------------

TEST(CheckRecommend, AmpIsBf16OnlyWhenSupportedAndFaster) {
  EXPECT_EQ(choose_amp(true, Figure::of(0.4), Figure::of(0.2)).amp, "bf16");
  EXPECT_NE(choose_amp(true, Figure::of(0.4), Figure::of(0.2)).reason.find("2.0x"), std::string::npos);
  EXPECT_EQ(choose_amp(false, Figure::of(0.4), Figure::of(0.2)).amp, "off");
  EXPECT_EQ(choose_amp(true, Figure::of(0.1), Figure::of(0.2)).amp, "off");
  EXPECT_EQ(choose_amp(true, Figure::of(0.2), Figure::of(0.2)).amp, "off") << "equal is not faster";
  const AmpChoice skipped = choose_amp(true, Figure::skip("built without libtorch"), Figure::of(0.2));
  EXPECT_EQ(skipped.amp, "off");
  EXPECT_NE(skipped.reason.find("built without libtorch"), std::string::npos);
  EXPECT_EQ(choose_amp(true, Figure::of(0.4), Figure::skip("x")).amp, "off");
  EXPECT_EQ(choose_amp(true, Figure::of(0.4), Figure::of(0)).amp, "off");
}

TEST(CheckRecommend, ComputeCeilingIsFlopsOverTrainingFlops) {
  const ModelCost& resnet50 = *find_model_cost("resnet50");
  EXPECT_NEAR(*compute_ceiling(resnet50, Figure::of(1.0)), 1e12 / (6 * 4.11e9), 1e-9);
  EXPECT_FALSE(compute_ceiling(resnet50, Figure::of(0)).ok());
  EXPECT_FALSE(compute_ceiling(resnet50, Figure::of(-1)).ok());
  EXPECT_EQ(compute_ceiling(resnet50, Figure::skip("no torch")).skipped, "no torch");
}

TEST(CheckRecommend, ComputeRateFollowsAmpAndDevice) {
  TorchFigures t;
  t.matmul_cpu = {{"fp32", Figure::of(0.2), 0, 0}, {"bf16", Figure::of(0.5), 0, 0}};
  t.matmul_cuda = {{"fp32", Figure::of(50), 0, 0}, {"tf32", Figure::of(400), 0, 0}, {"bf16", Figure::of(780), 0, 0}};
  EXPECT_DOUBLE_EQ(*compute_tflops("bf16", "cpu", t), 0.5);
  EXPECT_DOUBLE_EQ(*compute_tflops("off", "cpu", t), 0.2);
  EXPECT_DOUBLE_EQ(*compute_tflops("off", "cuda", t), 400) << "cuDNN convolutions use TF32 by default";
  EXPECT_DOUBLE_EQ(*compute_tflops("bf16", "cuda", t), 780);
  t.matmul_cuda[1].tflops = Figure::skip("cc 7.0");
  EXPECT_DOUBLE_EQ(*compute_tflops("off", "cuda", t), 50);
  EXPECT_FALSE(matmul_tflops({}, "fp16").ok());
  EXPECT_EQ(training_device(t), "cpu");
  t.gpus.push_back({});
  EXPECT_EQ(training_device(t), "cuda");
}

TEST(CheckRecommend, WorkersMatchTheComputeCeilingWithinTheCores) {
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::of(450), 16).workers, 5);
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::of(500), 16).workers, 5) << "exactly enough";
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::of(450), 4).workers, 3) << "one core left for training";
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::of(450), 1).workers, 1);
  EXPECT_EQ(choose_workers(Figure::of(1000), Figure::of(10), 16).workers, 1);
  const WorkersChoice zero_decode = choose_workers(Figure::of(0), Figure::of(450), 8);
  EXPECT_EQ(zero_decode.workers, 7);
  EXPECT_NE(zero_decode.reason.find("decode rate"), std::string::npos) << zero_decode.reason;
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::skip("no torch"), 8).workers, 7);
  EXPECT_EQ(choose_workers(Figure::of(100), Figure::of(0), 8).workers, 7);
  EXPECT_EQ(choose_workers(Figure::skip("x"), Figure::skip("y"), 2).workers, 1);
}

TEST(CheckRecommend, BatchIsTheLargestPowerOfTwoThatLeavesAMargin) {
  const ModelCost& resnet50 = *find_model_cost("resnet50");
  const BatchChoice big = choose_batch(resnet50, true, true, Figure::of(80 * kGiB));
  ASSERT_TRUE(big.batch.ok()) << big.batch.skipped;
  EXPECT_EQ(*big.batch, 256) << "never above the model's reference batch";
  EXPECT_EQ(big.memory_kind, "GPU memory");
  EXPECT_NEAR(*big.margin, 1 - training_memory_bytes(resnet50, true, true, 256) / (80 * kGiB), 1e-12);

  // Exactly 128 at the 20 % margin: 128 is chosen, a byte less gives 64.
  const double fits_128 = training_memory_bytes(resnet50, false, true, 128) / 0.8;
  EXPECT_EQ(*choose_batch(resnet50, false, true, Figure::of(fits_128)).batch, 128);
  EXPECT_EQ(*choose_batch(resnet50, false, true, Figure::of(fits_128 - 1024)).batch, 64);

  EXPECT_GT(training_memory_bytes(resnet50, false, false, 64), training_memory_bytes(resnet50, true, false, 64))
      << "bf16 activations are smaller";
  const BatchChoice tiny = choose_batch(resnet50, false, false, Figure::of(0.5 * kGiB));
  EXPECT_FALSE(tiny.batch.ok());
  EXPECT_NE(tiny.batch.skipped.find("does not fit"), std::string::npos) << tiny.batch.skipped;
  EXPECT_EQ(tiny.memory_kind, "RAM");
  EXPECT_FALSE(choose_batch(resnet50, false, false, Figure::skip("no meminfo")).batch.ok());
  EXPECT_FALSE(choose_batch(resnet50, false, false, Figure::of(0)).batch.ok());
  EXPECT_EQ(*choose_batch(*find_model_cost("mnist_cnn"), false, false, Figure::of(8 * kGiB)).batch, 64);
}

TEST(CheckRecommend, BatchIsNoLargerThanTheData) {
  const ModelCost& resnet50 = *find_model_cost("resnet50");
  const BatchChoice small = choose_batch(resnet50, true, true, Figure::of(80 * kGiB), Figure::of(63));
  ASSERT_TRUE(small.batch.ok()) << small.batch.skipped;
  EXPECT_EQ(*small.batch, 32) << "the largest power of two <= 63 samples, not the reference 256";
  EXPECT_EQ(small.capped, "the data holds 63 samples");
  EXPECT_NEAR(*small.margin, 1 - training_memory_bytes(resnet50, true, true, 32) / (80 * kGiB), 1e-12);

  EXPECT_EQ(*choose_batch(resnet50, true, true, Figure::of(80 * kGiB), Figure::of(64)).batch, 64);
  EXPECT_EQ(*choose_batch(resnet50, true, true, Figure::of(80 * kGiB), Figure::of(1)).batch, 1);
  const BatchChoice big_data = choose_batch(resnet50, true, true, Figure::of(80 * kGiB), Figure::of(1e6));
  EXPECT_EQ(*big_data.batch, 256);
  EXPECT_EQ(big_data.capped, "") << "data larger than the reference batch caps nothing";
  for (const Figure& unknown : {Figure::skip("unreadable"), Figure::of(0)}) {
    EXPECT_EQ(*choose_batch(resnet50, true, true, Figure::of(80 * kGiB), unknown).batch, 256);
  }
  // Memory allows 64, below the data's cap of 128: memory set it, so no "capped".
  const double fits_64 = training_memory_bytes(resnet50, false, true, 64) / 0.8;
  const BatchChoice memory = choose_batch(resnet50, false, true, Figure::of(fits_64), Figure::of(200));
  EXPECT_EQ(*memory.batch, 64);
  EXPECT_EQ(memory.capped, "");
}

TEST(CheckRecommend, EpochIsImagesOverTheLowerCeiling) {
  const EpochEstimate compute_bound =
      estimate_epoch(Figure::of(1'281'167), Figure::of(600), 12, false, Figure::of(2890));
  EXPECT_DOUBLE_EQ(*compute_bound.input_ceiling, 7200);
  EXPECT_DOUBLE_EQ(*compute_bound.epoch_seconds, 1'281'167 / 2890.0);
  EXPECT_EQ(compute_bound.bound, "compute-bound");

  const EpochEstimate input_bound = estimate_epoch(Figure::of(1000), Figure::of(100), 2, false, Figure::of(2890));
  EXPECT_DOUBLE_EQ(*input_bound.epoch_seconds, 5.0);
  EXPECT_EQ(input_bound.bound, "input-bound");

  const EpochEstimate raw = estimate_epoch(Figure::of(60000), Figure::of(100), 1, true, Figure::of(6000));
  EXPECT_FALSE(raw.input_ceiling.ok());
  EXPECT_DOUBLE_EQ(*raw.epoch_seconds, 10.0);
  EXPECT_EQ(raw.bound, "compute-bound");

  const EpochEstimate no_compute =
      estimate_epoch(Figure::of(1000), Figure::of(100), 1, false, Figure::skip("no torch"));
  EXPECT_DOUBLE_EQ(*no_compute.epoch_seconds, 10.0);
  EXPECT_TRUE(no_compute.lower_bound) << "the unknown compute ceiling may be lower";
  EXPECT_EQ(no_compute.bound, "");
  EXPECT_FALSE(compute_bound.lower_bound);
  EXPECT_FALSE(raw.lower_bound) << "raw pixels: the input does not limit";

  const EpochEstimate no_decode = estimate_epoch(Figure::of(1000), Figure::skip("no JPEGs"), 1, false, Figure::of(50));
  EXPECT_DOUBLE_EQ(*no_decode.epoch_seconds, 20.0);
  EXPECT_TRUE(no_decode.lower_bound);

  const EpochEstimate zeros = estimate_epoch(Figure::of(1000), Figure::of(0), 4, false, Figure::of(0));
  EXPECT_FALSE(zeros.epoch_seconds.ok());
  EXPECT_FALSE(zeros.input_ceiling.ok());
  EXPECT_TRUE(zeros.bound.empty());

  const EpochEstimate no_images =
      estimate_epoch(Figure::skip("not a dataset"), Figure::of(100), 1, false, Figure::of(10));
  EXPECT_FALSE(no_images.epoch_seconds.ok());
  EXPECT_NE(no_images.epoch_seconds.skipped.find("not a dataset"), std::string::npos);
}

// A CPU-only machine with scripted measurements.
CheckReport scripted_report() {
  CheckReport r;
  r.model = find_model_cost("resnet50");
  r.seconds_budget = 1;
  r.cpu.model = "Test CPU";
  r.cpu.logical_cpus = r.cpu.usable_cores = 8;
  r.cpu.bf16_instructions = true;
  r.memory = {Figure::of(64 * kGiB), Figure::of(60 * kGiB)};
  r.disk.path = "/data";
  r.disk.mount = {"/", "ext4", "/dev/vda"};
  r.disk.size_bytes = Figure::of(500 * kGiB);
  r.disk.free_bytes = Figure::of(100 * kGiB);
  r.nvml.skipped = "NVML not found (libnvidia-ml.so.1: cannot open shared object file)";
  r.torch.description = "libtorch 1.13.1 (CPU)";
  r.torch.gpu_skipped = "libtorch 1.13.1 is a CPU build";
  r.torch.cpu_threads = 8;
  r.torch.matmul_cpu = {{"fp32", Figure::of(0.25), 1024, 1}, {"bf16", Figure::of(0.75), 1024, 1}};
  r.torch.matmul_cuda = {{"fp32", Figure::skip(r.torch.gpu_skipped), 0, 0}};
  r.torch.h2d_pinned_gb_per_s = r.torch.h2d_pageable_gb_per_s = Figure::skip(r.torch.gpu_skipped);
  r.decode.images_per_s = Figure::of(10);
  r.read.bytes_per_s = Figure::skip("no --data given");
  r.dataset.images = r.read.bytes_per_s;
  return r;
}

TEST(CheckRecommend, SuggestAndEstimateFromAScriptedCpuMachine) {
  CheckReport r = scripted_report();
  suggest_and_estimate(&r);
  EXPECT_EQ(r.suggest.device, "cpu");
  EXPECT_EQ(r.suggest.amp.amp, "bf16");
  const double compute = 0.75e12 / (6 * 4.11e9);  // ≈ 30.4 img/s
  EXPECT_NEAR(*r.estimate.compute_ceiling, compute, 1e-9);
  EXPECT_EQ(r.suggest.workers.workers, 4) << "ceil(30.4 / 10)";
  EXPECT_DOUBLE_EQ(*r.estimate.input_ceiling, 40);
  EXPECT_EQ(r.estimate.images_from, "ImageNet-1k train");
  EXPECT_NEAR(*r.estimate.epoch_seconds, 1'281'167 / compute, 1e-6);
  EXPECT_EQ(r.suggest.batch.memory_kind, "RAM");
  EXPECT_EQ(*r.suggest.batch.batch, 256);

  r.data_path = "/data";
  r.dataset.images = Figure::of(1000);
  suggest_and_estimate(&r);
  EXPECT_EQ(r.estimate.images_from, "--data");
  EXPECT_NEAR(*r.estimate.epoch_seconds, 1000 / compute, 1e-6);
  EXPECT_EQ(*r.suggest.batch.batch, 256);

  r.dataset.images = Figure::of(63);  // a folder of 63 images
  suggest_and_estimate(&r);
  EXPECT_EQ(*r.suggest.batch.batch, 32);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("batch 32 for resnet50 on cpu (capped: the data holds 63 samples; fits in RAM with "),
            std::string::npos)
      << text;
  EXPECT_EQ(nlohmann::json::parse(format_json(r))["suggest"]["batch_capped"], "the data holds 63 samples");
}

TEST(CheckReport, TextHasEveryLineAndSaysTheseAreEstimates) {
  CheckReport r = scripted_report();
  suggest_and_estimate(&r);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("CPU      Test CPU · 8 cores · 64.0 GiB RAM (60.0 GiB available) · bf16 instructions\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("disk     /data · ext4 /dev/vda at / · 500 GiB, 100 GiB free\n"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU      none found (NVML: NVML not found (libnvidia-ml.so.1: cannot open shared object file)) "
                      "· CPU figures only\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("measured cpu (8 threads) matmul bf16 750 GFLOP/s · fp32 250\n"), std::string::npos) << text;
  EXPECT_NE(text.find("         JPEG decode 10 img/s per core · data dir read skipped (no --data given)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("suggest  amp bf16 · workers 4 · batch 256 for resnet50 on cpu (fits in RAM with "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("estimate resnet50 on ImageNet-1k train (1,281,167 images; --data DIR for yours): 11.7 h/epoch "
                      "(input ceiling 40 img/s, compute ceiling 30 img/s → compute-bound)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("estimates from microbenchmarks"), std::string::npos) << text;
}

TEST(CheckReport, NamesTheBlasAndWarnsAboutTheReferenceOne) {
  CheckReport r = scripted_report();
  r.torch.blas = "OpenBLAS 0.3.21, pthreads, 8 threads";
  suggest_and_estimate(&r);
  std::string text = format_text(r);
  EXPECT_NE(
      text.find(
          "measured cpu (8 threads) matmul bf16 750 GFLOP/s · fp32 250 · BLAS OpenBLAS 0.3.21, pthreads, 8 threads\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("warning"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(format_json(r));
  EXPECT_EQ(j["torch"]["blas"], "OpenBLAS 0.3.21, pthreads, 8 threads");
  EXPECT_EQ(j["torch"]["blas_reference"], false);

  r.torch.blas = "reference BLAS (/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0)";
  r.torch.blas_reference = true;
  text = format_text(r);
  EXPECT_NE(text.find("\nwarning  libtorch calls the reference BLAS: linear layers train several times slower"),
            std::string::npos)
      << text;
  j = nlohmann::json::parse(format_json(r));
  EXPECT_EQ(j["torch"]["blas_reference"], true);
}

TEST(CheckReport, RawPixelDataHasNoInputCeiling) {
  CheckReport r = scripted_report();
  r.model = find_model_cost("mnist_cnn");
  suggest_and_estimate(&r);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("estimate mnist_cnn on Fashion-MNIST train (60,000 images; --data DIR for yours): 6 s/epoch "
                      "(no input ceiling: raw pixels or feature vectors, nothing to decode, compute ceiling 10,417 "
                      "img/s → compute-bound)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("batch 64 for mnist_cnn on cpu"), std::string::npos) << text;
}

TEST(CheckReport, TextWithAGpuThatLibtorchCannotUse) {
  CheckReport r = scripted_report();
  r.nvml.skipped.clear();
  r.nvml.driver = "580.159";
  r.nvml.gpus = {{0, "Fake H100", Figure::of(80 * kGiB), Figure::of(0)}};
  suggest_and_estimate(&r);
  const std::string text = format_text(r);
  EXPECT_NE(
      text.find("GPU0     Fake H100 · 80.0 GiB · driver 580.159 · libtorch skipped (libtorch 1.13.1 is a CPU build)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(" · GPU matmul and H2D skipped (libtorch 1.13.1 is a CPU build)"), std::string::npos) << text;
  EXPECT_EQ(r.suggest.device, "cpu");
}

TEST(CheckReport, TextWithACudaDevice) {
  CheckReport r = scripted_report();
  r.nvml.skipped.clear();
  r.nvml.driver = "580.159";
  r.nvml.gpus = {{0, "NVIDIA H100 80GB HBM3", Figure::of(79.6 * kGiB), Figure::of(0)}};
  r.torch.gpus = {{0, 9, 0, true, true}};
  r.torch.gpu_skipped.clear();
  r.torch.cuda_version = "12.1";
  r.torch.cudnn_version = "8.9.2";
  r.torch.matmul_cuda = {{"fp32", Figure::of(51), 8192, 10},
                         {"tf32", Figure::of(402), 8192, 10},
                         {"bf16", Figure::of(781), 8192, 10},
                         {"fp16", Figure::skip("out of memory"), 0, 0}};
  r.torch.h2d_pinned_gb_per_s = Figure::of(52.1);
  r.torch.h2d_pageable_gb_per_s = Figure::of(19.8);
  r.decode.images_per_s = Figure::of(612);
  r.cpu.usable_cores = r.cpu.logical_cpus = 16;
  suggest_and_estimate(&r);
  EXPECT_EQ(r.suggest.device, "cuda");
  EXPECT_EQ(r.suggest.amp.amp, "bf16");
  EXPECT_EQ(r.suggest.workers.workers, 15);
  const std::string text = format_text(r);
  EXPECT_NE(
      text.find(
          "GPU0     NVIDIA H100 80GB HBM3 · 79.6 GiB · driver 580.159 · cc 9.0 · CUDA 12.1 · cuDNN 8.9.2 · bf16 yes\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("measured GPU matmul bf16 781 TFLOP/s · fp16 skipped (out of memory) · tf32 402 · fp32 51.0 · "
                      "H2D pinned 52.1 GB/s, pageable 19.8 GB/s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fits in GPU memory"), std::string::npos) << text;
  EXPECT_NE(text.find("→ input-bound"), std::string::npos) << text;
}

TEST(CheckReport, WithoutLibtorchTheEpochIsALowerBound) {
  CheckReport r = scripted_report();
  for (auto& m : r.torch.matmul_cpu) m.tflops = Figure::skip("built without libtorch");
  suggest_and_estimate(&r);
  EXPECT_EQ(r.suggest.amp.amp, "off");
  EXPECT_EQ(r.suggest.workers.workers, 7);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("measured cpu (8 threads) matmul skipped (built without libtorch)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--data DIR for yours): at least 5.1 h/epoch (input ceiling 70 img/s, compute ceiling skipped "
                      "(built without libtorch))\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(nlohmann::json::parse(format_json(r))["estimate"]["epoch_seconds_is_lower_bound"].get<bool>());
}

TEST(CheckReport, JsonHasNullsWithReasons) {
  CheckReport r = scripted_report();
  suggest_and_estimate(&r);
  const nlohmann::json j = nlohmann::json::parse(format_json(r));
  EXPECT_EQ(j["cpu"]["model"], "Test CPU");
  EXPECT_EQ(j["model"], "resnet50");
  EXPECT_TRUE(j["measured"]["data_read"]["bytes_per_s"].is_null());
  EXPECT_EQ(j["measured"]["data_read"]["skipped"], "no --data given");
  EXPECT_DOUBLE_EQ(j["measured"]["matmul"]["cpu"]["bf16"]["tflops"].get<double>(), 0.75);
  EXPECT_TRUE(j["measured"]["matmul"]["cuda"]["fp32"]["tflops"].is_null());
  EXPECT_EQ(j["measured"]["matmul"]["cuda"]["fp32"]["skipped"], "libtorch 1.13.1 is a CPU build");
  EXPECT_TRUE(j["measured"]["h2d"]["pinned"]["gb_per_s"].is_null());
  EXPECT_TRUE(j["measured"]["h2d"]["pinned"].contains("skipped"));
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_TRUE(j["nvml"].contains("skipped"));
  EXPECT_EQ(j["suggest"]["amp"], "bf16");
  EXPECT_EQ(j["suggest"]["workers"], 4);
  EXPECT_EQ(j["suggest"]["batch_size"], 256);
  EXPECT_GT(j["estimate"]["epoch_seconds"].get<double>(), 0);
  EXPECT_EQ(j["estimate"]["bound"], "compute-bound");
  EXPECT_NE(j["note"].get<std::string>().find("estimates from microbenchmarks"), std::string::npos);
}

// ---- Benchmarks on tiny inputs ----------------------------------------------------------------

TEST(CheckBench, RateMeterKeepsTheBestWindow) {
  // Windows of 250 ms: a sleep that a loaded machine stretches tenfold still leaves the fast
  // phase whole windows.
  RateMeter meter(1.0, 4);
  bool more = true;
  while (more && meter.seconds() < 0.5) {  // slow phase: about 50 units/s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    more = meter.add(1);
  }
  while (more) more = meter.add(1);  // fast phase: millions of units/s
  EXPECT_GE(meter.seconds(), 1.0);
  EXPECT_GT(meter.best_rate(), 10'000);
  EXPECT_GT(meter.best_rate(), 1.5 * meter.total() / meter.seconds()) << "the slow windows do not count";

  RateMeter no_budget(0);
  EXPECT_FALSE(no_budget.add(10)) << "always at least one add";
  EXPECT_GT(no_budget.best_rate(), 0);
  EXPECT_EQ(no_budget.total(), 10);
}

TEST(CheckBench, ReadsEveryFileOfASmallDirectory) {
  TempDir dir;
  dir.write("data/a/1.bin", std::vector<uint8_t>(3000, 1));
  dir.write("data/a/2.bin", std::vector<uint8_t>(5000, 2));
  dir.write("data/b/3.bin", std::vector<uint8_t>(2'500'000, 3));  // several 1 MiB reads
  dir.write_text("data/empty.txt", "");
  const ReadBench read = measure_read(dir.str() + "/data", 5);
  ASSERT_TRUE(read.bytes_per_s.ok()) << read.bytes_per_s.skipped;
  EXPECT_EQ(read.bytes, 2'508'000u);
  EXPECT_EQ(read.files, 3u);
  EXPECT_EQ(read.files_listed, 4u);
  EXPECT_TRUE(read.all_read);
  EXPECT_GT(*read.bytes_per_s, 0);
  ASSERT_TRUE(read.cached_fraction.ok()) << read.cached_fraction.skipped;
  EXPECT_GE(*read.cached_fraction, 0.0);
  EXPECT_LE(*read.cached_fraction, 1.0);

  const ReadBench one = measure_read(dir.str() + "/data/a/2.bin", 5);
  EXPECT_EQ(one.bytes, 5000u);
  EXPECT_EQ(one.files, 1u);
}

TEST(CheckBench, ReadFailuresAreSkippedWithAReason) {
  TempDir dir;
  dir.write_text("empty_dir/.keep_dir/x", "");
  const ReadBench empty = measure_read(dir.str() + "/empty_dir", 1);
  EXPECT_FALSE(empty.bytes_per_s.ok());
  EXPECT_NE(empty.bytes_per_s.skipped.find("empty"), std::string::npos) << empty.bytes_per_s.skipped;
  std::filesystem::create_directories(dir.path() / "nothing");
  EXPECT_NE(measure_read(dir.str() + "/nothing", 1).bytes_per_s.skipped.find("no files"), std::string::npos);
  EXPECT_FALSE(measure_read(dir.str() + "/missing", 1).bytes_per_s.ok());
  if (::geteuid() != 0) {  // root reads anything
    const std::string locked = dir.write_text("locked/secret.bin", "data");
    ::chmod(locked.c_str(), 0);
    const ReadBench denied = measure_read(dir.str() + "/locked", 1);
    EXPECT_FALSE(denied.bytes_per_s.ok());
    EXPECT_NE(denied.bytes_per_s.skipped.find("could not read any file"), std::string::npos)
        << denied.bytes_per_s.skipped;
  }
}

TEST(CheckBench, DecodesSyntheticJpegs) {
  const DecodeBench bench = measure_jpeg_decode(0.05);
  ASSERT_TRUE(bench.images_per_s.ok()) << bench.images_per_s.skipped;
  EXPECT_GT(*bench.images_per_s, 0);
  EXPECT_GE(bench.images, 1);
  EXPECT_GT(bench.mean_pixels, 200 * 250 - 1);
  EXPECT_GT(bench.mean_bytes, 1000);
}

TEST(CheckBench, DatasetImageCount) {
  TempDir dir;
  const auto jpeg = data::encode_jpeg(stoker::testing::make_photo_like(40, 30));
  dir.write("set/cat/1.jpg", jpeg);
  dir.write("set/cat/2.jpg", jpeg);
  dir.write("set/dog/3.jpg", jpeg);
  const DatasetInfo set = inspect_dataset(dir.str() + "/set");
  ASSERT_TRUE(set.images.ok()) << set.images.skipped;
  EXPECT_EQ(*set.images, 3);
  EXPECT_FALSE(set.raw_pixels);
  dir.write_text("notes/readme.txt", "hello");
  EXPECT_FALSE(inspect_dataset(dir.str() + "/notes").images.ok());
}

}  // namespace
}  // namespace stoker::diagnose::check
