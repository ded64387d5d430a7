// The decode option on a machine: cpu always; gpu refused in one line naming why and what to
// do (no CUDA batches, no CUDA device, no nvJPEG, and with all of them: stoker train), else on
// the GPU; auto on the CPU where gpu would be refused, with at most one line.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "stoker/data/gpu_decode.h"
#include "stoker/data/gpu_decoder.h"
#include "support/build_paths.h"

namespace stoker::data {
namespace {

const DecodeDevice kCpuBatches{false, true};
const DecodeDevice kCudaBatches{true, true};
const DecodeDevice kNoCudaDevice{true, false};
const NvjpegProbe kFound{true, "nvJPEG 12.3.3 at /x/libnvjpeg.so.12"};
const NvjpegProbe kMissing{false, "nvJPEG not found (tried: libnvjpeg.so.12); install it"};

TEST(DecodeChoiceTest, CpuIsAlwaysTakenQuietly) {
  for (const DecodeDevice& device : {kCpuBatches, kCudaBatches, kNoCudaDevice}) {
    const DecodeChoice choice = choose_decode(DecodeMode::kCpu, device, kMissing, FrontEnd::kPython);
    EXPECT_EQ(choice.use, DecodeMode::kCpu);
    EXPECT_EQ(choice.error, "");
    EXPECT_EQ(choice.note, "");
  }
}

TEST(DecodeChoiceTest, GpuIsRefusedInOneLineSayingWhyAndWhatToDo) {
  EXPECT_EQ(choose_decode(DecodeMode::kGpu, kCpuBatches, kFound, FrontEnd::kPython).error,
            "decode='gpu': GPU decoding needs the batches on a CUDA device (device='cuda'); use decode='cpu'");
  EXPECT_EQ(choose_decode(DecodeMode::kGpu, kCpuBatches, kFound, FrontEnd::kCommandLine).error,
            "--decode gpu: GPU decoding needs the batches on a CUDA device (--device cuda); use --decode cpu");
  EXPECT_EQ(choose_decode(DecodeMode::kGpu, kNoCudaDevice, kFound, FrontEnd::kCommandLine).error,
            "--decode gpu: this process sees no CUDA device; use --decode cpu");
  EXPECT_EQ(choose_decode(DecodeMode::kGpu, kCudaBatches, kMissing, FrontEnd::kPython).error,
            "decode='gpu': nvJPEG not found (tried: libnvjpeg.so.12); install it; use decode='cpu'");
  // Everything there: both front ends decode on the GPU.
  const DecodeChoice train = choose_decode(DecodeMode::kGpu, kCudaBatches, kFound, FrontEnd::kCommandLine);
  EXPECT_EQ(train.use, DecodeMode::kGpu);
  EXPECT_EQ(train.error, "");
  const DecodeChoice python = choose_decode(DecodeMode::kGpu, kCudaBatches, kFound, FrontEnd::kPython);
  EXPECT_EQ(python.use, DecodeMode::kGpu);
  EXPECT_EQ(python.error, "");
  EXPECT_EQ(choose_decode(DecodeMode::kAuto, kCudaBatches, kFound, FrontEnd::kPython).use, DecodeMode::kGpu);
  EXPECT_EQ(choose_decode(DecodeMode::kAuto, kCudaBatches, kFound, FrontEnd::kCommandLine).use, DecodeMode::kGpu);
}

TEST(DecodeChoiceTest, AutoDecodesOnTheCpuWithAtMostOneLine) {
  const DecodeChoice cpu_batches = choose_decode(DecodeMode::kAuto, kCpuBatches, kMissing, FrontEnd::kPython);
  EXPECT_EQ(cpu_batches.use, DecodeMode::kCpu);
  EXPECT_EQ(cpu_batches.note, "");  // nothing to say: the batches are on the CPU
  const std::pair<DecodeDevice, NvjpegProbe> cases[] = {{kNoCudaDevice, kFound}, {kCudaBatches, kMissing}};
  for (const auto& [device, probe] : cases) {
    const DecodeChoice choice = choose_decode(DecodeMode::kAuto, device, probe, FrontEnd::kCommandLine);
    EXPECT_EQ(choice.use, DecodeMode::kCpu);
    EXPECT_EQ(choice.error, "");
    EXPECT_TRUE(choice.note.starts_with("--decode auto: decoding on the CPU: ")) << choice.note;
    EXPECT_EQ(choice.note.find('\n'), std::string::npos);
  }
}

TEST(DecodeChoiceTest, GpuTakesEveryJpegNvjpegTakesAutoOnlyTheEngines) {
  EXPECT_EQ(gpu_handoff_for(DecodeMode::kGpu, true), GpuHandoff::kAll);
  EXPECT_EQ(gpu_handoff_for(DecodeMode::kGpu, false), GpuHandoff::kCudaPath);  // a GPU without the engine
  EXPECT_EQ(gpu_handoff_for(DecodeMode::kAuto, true), GpuHandoff::kHardware);
  EXPECT_EQ(gpu_handoff_for(DecodeMode::kAuto, false), GpuHandoff::kOff);  // the workers decode
}

TEST(DecodeChoiceTest, TheDecoderIsSizedForTheLoadersBatchAndOutput) {
  TransformSpec chain = parse_transforms("RandomResizedCrop(176), Normalize");
  GpuDecoderOptions options = gpu_decoder_options(chain, 512);
  EXPECT_EQ(options.channels, 3);
  EXPECT_EQ(options.max_batch_size, 512);  // the whole batch in one call, over nvJPEG's usual 256
  EXPECT_EQ(options.preallocate_width, 1024);
  EXPECT_EQ(options.preallocate_height, 1024);
  chain = parse_transforms("Resize(600), CenterCrop(600)");
  options = gpu_decoder_options(chain, 8);
  EXPECT_EQ(options.max_batch_size, 8);
  EXPECT_EQ(options.preallocate_width, 1200);  // twice the output's side
  EXPECT_EQ(options.preallocate_height, 1200);
}

TEST(DecodeChoiceTest, TheProbeNamesTheLibraryItFoundOrWhyNot) {
  const NvjpegProbe fake = probe_nvjpeg({testing::fake_nvjpeg_dir()});
  if (!fake.found || fake.text.find(testing::fake_nvjpeg_dir()) == std::string::npos) {
    // A real nvJPEG on this machine comes first; it is tested in nvjpeg_library_test.cpp.
    GTEST_SKIP() << fake.text;
  }
  EXPECT_EQ(fake.text, "nvJPEG 12.99.7 at " + testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12");
}

}  // namespace
}  // namespace stoker::data
