// LoaderOptions::gpu_handoff: the workers leave the JPEGs nvJPEG takes in the batch, planned
// but not decoded, and Loader::redo_on_cpu makes any of them on the CPU exactly as a loader
// without the handoff does. What the GPU does with them is tested where nvJPEG runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "support/error_text.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace gpu_handoff_test {

using stoker::testing::make_photo_like;
using stoker::testing::TempDir;

void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// An ImageFolder of baseline JPEGs of several sizes, with one progressive JPEG (`prog.jpg`:
// nvJPEG's CUDA path only), one PNG and one JPEG cut short (the planner's end-of-image check
// sends it to the CPU, which reports it).
void make_folder(const TempDir& dir, int baseline) {
  for (int i = 0; i < baseline; ++i) {
    const Image image = make_photo_like(120 + 7 * i, 90 + 5 * i, 3, static_cast<uint32_t>(i + 1));
    write_file(dir.path() / (i % 2 == 0 ? "a" : "b") / ("img" + std::to_string(i) + ".jpg"),
               encode_jpeg(image, {.quality = 90}));
  }
  const Image image = make_photo_like(160, 120, 3, 99);
  write_file(dir.path() / "a" / "prog.jpg", encode_jpeg(image, {.quality = 90, .progressive = true}));
  write_file(dir.path() / "b" / "pic.png", encode_png(image));
  std::vector<uint8_t> cut = encode_jpeg(image, {.quality = 90});
  cut.resize(cut.size() * 2 / 3);
  write_file(dir.path() / "b" / "cut.jpg", cut);
}

LoaderOptions options_for(GpuHandoff handoff, const std::string& chain =
                                                  "RandomResizedCrop(64), "
                                                  "RandomHorizontalFlip, RandomVerticalFlip, "
                                                  "ToUint8") {
  LoaderOptions options;
  options.batch_size = 5;
  options.workers = 2;
  options.sampler.seed = 7;
  options.max_bad_fraction = 0.5;  // the cut file
  options.run_ahead = false;       // the counts are of one epoch
  options.transform = parse_transforms(chain);
  options.gpu_handoff = handoff;
  return options;
}

// Calls visit(sample, batch, slot) for every sample one epoch of `loader` leaves for the GPU;
// returns how many there were.
template <typename Visit>
int for_each_gpu_sample(Loader& loader, Visit visit) {
  loader.start_epoch(0);
  int handed = 0;
  for (Batch batch = loader.next(); batch; batch = loader.next()) {
    for (int slot = 0; slot < batch.size(); ++slot) {
      if (const GpuSample* g = batch.gpu_sample(slot)) {
        ++handed;
        visit(*g, batch, slot);
      }
    }
  }
  return handed;
}

std::vector<uint8_t> slot_bytes(const Batch& batch, int slot) {
  const size_t n = batch.bytes() / static_cast<size_t>(batch.size());
  const auto* p = static_cast<const uint8_t*>(batch.data()) + static_cast<size_t>(slot) * n;
  return {p, p + n};
}

TEST(GpuHandoffTest, TheJpegsNvjpegTakesAreLeftInTheBatchAndRedoneOnTheCpuTheyEqualALoaderWithout) {
  TempDir dir;
  make_folder(dir, 12);
  const std::shared_ptr<const Source> source = open_source(dir.str());
  Loader off(source, options_for(GpuHandoff::kOff));
  Loader all(source, options_for(GpuHandoff::kAll));
  off.start_epoch(1);
  all.start_epoch(1);
  int handed = 0, hardware = 0, cuda = 0, expected = 0;
  for (Batch a = all.next(), b = off.next(); a; a = all.next(), b = off.next()) {
    ASSERT_TRUE(b);
    for (int slot = 0; slot < a.size(); ++slot) {
      const std::string name = source->name(a.record(slot).index);
      const GpuSample* g = a.gpu_sample(slot);
      const bool jpeg_whole = name.find(".png") == std::string::npos && name.find("cut") == std::string::npos;
      EXPECT_EQ(g != nullptr, jpeg_whole) << name;
      expected += jpeg_whole ? 1 : 0;
      if (g == nullptr) {
        EXPECT_EQ(slot_bytes(a, slot), slot_bytes(b, slot)) << name;
        continue;
      }
      ++handed;
      (g->hardware ? hardware : cuda) += 1;
      EXPECT_EQ(g->hardware, name.find("prog") == std::string::npos) << name;
      // The filter tables are the CPU resampler's for the crop, each sample's flips mirroring
      // them, with RandomResizedCrop's taps kept inside the box.
      FilterTaps columns, rows;
      filter_taps(g->window_width, g->crop.x, g->crop.width, 64, true, a.record(slot).params.flip,
                  ResampleFilter::kBilinear, &columns);
      filter_taps(g->window_height, g->crop.y, g->crop.height, 64, true, a.record(slot).params.vflip,
                  ResampleFilter::kBilinear, &rows);
      EXPECT_EQ(g->columns.taps, columns.taps);
      EXPECT_EQ(g->columns.index, columns.index);
      EXPECT_EQ(g->columns.weight, columns.weight);
      EXPECT_EQ(g->rows.index, rows.index);
      EXPECT_EQ(g->rows.weight, rows.weight);
      // The window lies inside the scaled image and the crop inside the window.
      EXPECT_GE(g->window_x, 0);
      EXPECT_LE(g->window_x + g->window_width, g->scaled_width);
      EXPECT_LE(g->window_y + g->window_height, g->scaled_height);
      EXPECT_GE(g->crop.x, -1e-6);
      EXPECT_LE(g->crop.x + g->crop.width, g->window_width + 1e-6);
      EXPECT_LE(g->crop.y + g->crop.height, g->window_height + 1e-6);
      // The file's own bytes.
      std::ifstream file(dir.path() / name, std::ios::binary);
      const std::vector<uint8_t> on_disk((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      EXPECT_EQ(g->bytes, on_disk) << name;

      all.redo_on_cpu(a, slot);
      EXPECT_EQ(a.gpu_sample(slot), nullptr);
      EXPECT_EQ(slot_bytes(a, slot), slot_bytes(b, slot)) << name;
    }
    EXPECT_EQ(a.gpu_samples(), 0);
  }
  // The 12 baseline files, the progressive one, and the cut file's substitute, a JPEG.
  EXPECT_EQ(expected, 14);
  EXPECT_EQ(handed, expected);
  EXPECT_EQ(cuda, 1);
  EXPECT_EQ(hardware, handed - 1);
  EXPECT_EQ(all.stage_times().gpu_samples, 14u);
  EXPECT_EQ(off.stage_times().gpu_samples, 0u);
  EXPECT_EQ(all.epoch_stats().bad, off.epoch_stats().bad);  // the cut file, in both
}

TEST(GpuHandoffTest, HardwareOnlyKeepsWhatOnlyTheCudaPathTakesOnTheCpu) {
  TempDir dir;
  make_folder(dir, 4);
  const std::shared_ptr<const Source> source = open_source(dir.str());
  Loader loader(source, options_for(GpuHandoff::kHardware));
  const int handed =
      for_each_gpu_sample(loader, [](const GpuSample& g, const Batch&, int) { EXPECT_TRUE(g.hardware); });
  EXPECT_EQ(handed, 5);  // the 4 baseline files and the cut file's substitute
}

// decode='auto': the share of the engine's JPEGs left for the GPU (Loader::set_gpu_share).
// Per epoch of 12 baseline files: which ones are left at `share`, by dataset index, and every
// slot made on the CPU (or redone there) equal to a loader without the handoff.
std::vector<uint64_t> left_at_share(const std::shared_ptr<const Source>& source, GpuHandoff handoff, double share,
                                    int64_t epoch) {
  Loader off(source, options_for(GpuHandoff::kOff));
  Loader loader(source, options_for(handoff));
  loader.set_gpu_share(share);
  EXPECT_EQ(loader.gpu_share(), share);
  off.start_epoch(epoch);
  loader.start_epoch(epoch);
  std::vector<uint64_t> left;
  for (Batch a = loader.next(), b = off.next(); a; a = loader.next(), b = off.next()) {
    EXPECT_TRUE(b);
    if (!b) break;
    for (int slot = 0; slot < a.size(); ++slot) {
      if (a.gpu_sample(slot) != nullptr) {
        left.push_back(a.record(slot).index);
        loader.redo_on_cpu(a, slot);
      }
      EXPECT_EQ(slot_bytes(a, slot), slot_bytes(b, slot)) << source->name(a.record(slot).index);
    }
  }
  std::sort(left.begin(), left.end());
  return left;
}

TEST(GpuHandoffTest, UnderAutoTheShareDecidesPerSampleWhichOfTheEnginesJpegsAreLeftAndTheRestAreCpuSamples) {
  TempDir dir;
  make_folder(dir, 12);
  const std::shared_ptr<const Source> source = open_source(dir.str());
  // 1 is every one the engine takes (the 12 and the cut file's substitute), 0 none.
  EXPECT_EQ(left_at_share(source, GpuHandoff::kHardware, 1.0, 0).size(), 13u);
  EXPECT_TRUE(left_at_share(source, GpuHandoff::kHardware, 0.0, 0).empty());
  // Between: a part, the same files for the same share and epoch, others in another epoch,
  // and more at a larger share (a file's draw is its own).
  const std::vector<uint64_t> half = left_at_share(source, GpuHandoff::kHardware, 0.5, 0);
  EXPECT_GT(half.size(), 2u);
  EXPECT_LT(half.size(), 11u);
  EXPECT_EQ(left_at_share(source, GpuHandoff::kHardware, 0.5, 0), half);
  const std::vector<uint64_t> more = left_at_share(source, GpuHandoff::kHardware, 0.8, 0);
  EXPECT_TRUE(std::includes(more.begin(), more.end(), half.begin(), half.end()));
  EXPECT_GT(more.size(), half.size());
  bool differs = false;
  for (int64_t epoch = 1; epoch < 4 && !differs; ++epoch) {
    differs = left_at_share(source, GpuHandoff::kHardware, 0.5, epoch) != half;
  }
  EXPECT_TRUE(differs);
  // decode='gpu' means the GPU: the share is ignored.
  EXPECT_EQ(left_at_share(source, GpuHandoff::kAll, 0.0, 0).size(), 14u);
}

TEST(GpuHandoffTest, AShareOutsideZeroToOneIsRefusedInOneLine) {
  TempDir dir;
  make_folder(dir, 2);
  Loader loader(open_source(dir.str()), options_for(GpuHandoff::kHardware));
  EXPECT_EQ(testing::usage_error_text([&] { loader.set_gpu_share(1.5); }),
            "gpu_share must be in [0, 1] (the share of the engine's JPEGs left for the GPU), got 1.5");
  EXPECT_EQ(testing::usage_error_text([&] { loader.set_gpu_share(std::nan("")); }),
            "gpu_share must be in [0, 1] (the share of the engine's JPEGs left for the GPU), got nan");
  EXPECT_EQ(loader.gpu_share(), 1.0);
}

TEST(GpuHandoffTest, WithoutAnEngineEveryJpegGoesWholeAndAtFullScaleToTheCudaPath) {
  TempDir dir;
  make_folder(dir, 4);
  const std::shared_ptr<const Source> source = open_source(dir.str());
  Loader loader(source, options_for(GpuHandoff::kCudaPath));
  const int handed = for_each_gpu_sample(loader, [](const GpuSample& g, const Batch& batch, int slot) {
    EXPECT_FALSE(g.hardware);
    EXPECT_EQ(g.scale_num, 8);
    EXPECT_EQ(g.window_x, 0);
    EXPECT_EQ(g.window_y, 0);
    EXPECT_EQ(g.window_width, g.scaled_width);
    EXPECT_EQ(g.window_height, g.scaled_height);
    EXPECT_EQ(g.scaled_width, batch.record(slot).source_width);
    EXPECT_EQ(g.scaled_height, batch.record(slot).source_height);
  });
  EXPECT_EQ(handed, 6);  // the 4 baseline files, the progressive one and the cut file's substitute
}

TEST(GpuHandoffTest, AOneToOneCropIsMadeOnTheCpu) {
  TempDir dir;
  make_folder(dir, 4);
  // RandomCrop without a Resize copies pixels: nothing is left for the GPU.
  Loader loader(open_source(dir.str()), options_for(GpuHandoff::kAll, "RandomCrop(64), ToUint8"));
  loader.start_epoch(0);
  for (Batch batch = loader.next(); batch; batch = loader.next()) EXPECT_EQ(batch.gpu_samples(), 0);
}

TEST(GpuHandoffTest, WhatTheGpuCannotFinishIsRefusedNamingIt) {
  TempDir dir;
  make_folder(dir, 2);
  const std::shared_ptr<const Source> source = open_source(dir.str());
  const LoaderOptions jitter =
      options_for(GpuHandoff::kAll, "RandomResizedCrop(64), ColorJitter(brightness=0.4), ToUint8");
  EXPECT_EQ(gpu_handoff_blocker(jitter, *source), "the chain's ColorJitter(brightness=0.4) runs on the CPU only");
  const std::string message = testing::error_text<UsageError>([&] { Loader loader(source, jitter); });
  EXPECT_EQ(message,
            "the GPU cannot finish these samples: the chain's ColorJitter(brightness=0.4) runs on the CPU only");
  EXPECT_EQ(gpu_handoff_blocker(options_for(GpuHandoff::kAll), *source), "");
  LoaderOptions cached = options_for(GpuHandoff::kAll);
  cached.cache_decoded_bytes = 1 << 20;
  EXPECT_EQ(gpu_handoff_blocker(cached, *source), "the decoded cache keeps CPU-decoded images");
  EXPECT_EQ(gpu_handoff_blocker(options_for(GpuHandoff::kAll, "RandomResizedCrop(64)"), *source),
            "the chain's float32 output is written on the CPU (the GPU finishes uint8 batches)");
}

TEST(GpuHandoffTest, RedoOnCpuRefusesASlotWithoutAGpuSample) {
  TempDir dir;
  make_folder(dir, 2);
  Loader loader(open_source(dir.str()), options_for(GpuHandoff::kAll));
  loader.start_epoch(0);
  Batch batch = loader.next();
  int cpu_slot = -1;
  for (int slot = 0; slot < batch.size(); ++slot) {
    if (batch.gpu_sample(slot) == nullptr) cpu_slot = slot;
  }
  ASSERT_GE(cpu_slot, 0);
  const std::string message = testing::error_text<UsageError>([&] { loader.redo_on_cpu(batch, cpu_slot); });
  EXPECT_NE(message.find("has no sample left for the GPU"), std::string::npos) << message;
  EXPECT_NE(testing::error_text<UsageError>([&] { loader.redo_on_cpu(batch, 99); }).find("slot 99"), std::string::npos);
}

TEST(GpuHandoffTest, GpuTapsArePaddedFromTheSlotsGpuSamplesAndRefuseACpuSlot) {
  TempDir dir;
  make_folder(dir, 2);  // one batch of 5: the PNG on the CPU, the rest for the GPU
  Loader loader(open_source(dir.str()), options_for(GpuHandoff::kAll));
  loader.start_epoch(0);
  Batch batch = loader.next();
  std::vector<int> gpu_slots;
  int cpu_slot = -1;
  for (int slot = 0; slot < batch.size(); ++slot) {
    if (batch.gpu_sample(slot) != nullptr) {
      gpu_slots.push_back(slot);
    } else {
      cpu_slot = slot;
    }
  }
  ASSERT_GE(gpu_slots.size(), 2u);
  std::reverse(gpu_slots.begin(), gpu_slots.end());  // in the order asked, not the batch's
  std::vector<const FilterTaps*> columns, rows;
  for (const int slot : gpu_slots) {
    columns.push_back(&batch.gpu_sample(slot)->columns);
    rows.push_back(&batch.gpu_sample(slot)->rows);
  }
  const GpuTaps taps = gpu_taps(batch, gpu_slots);
  const PaddedTaps want_columns = pad_taps(columns), want_rows = pad_taps(rows);
  EXPECT_EQ(taps.columns.out_size, 64);
  EXPECT_EQ(taps.columns.n, static_cast<int>(gpu_slots.size()));
  EXPECT_EQ(taps.columns.index, want_columns.index);
  EXPECT_EQ(taps.columns.weight, want_columns.weight);
  EXPECT_EQ(taps.rows.index, want_rows.index);
  EXPECT_EQ(taps.rows.weight, want_rows.weight);
  ASSERT_GE(cpu_slot, 0);
  const std::vector<int> with_cpu{gpu_slots[0], cpu_slot};
  EXPECT_EQ(testing::usage_error_text([&] { gpu_taps(batch, with_cpu); }),
            "gpu_taps: slot " + std::to_string(cpu_slot) + " of the batch has no sample for the GPU");
  const std::vector<int> past{99};
  EXPECT_EQ(testing::usage_error_text([&] { gpu_taps(batch, past); }),
            "gpu_taps: slot 99 of the batch has no sample for the GPU");
}

}  // namespace gpu_handoff_test
}  // namespace stoker::data
