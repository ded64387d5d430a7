// The GPU JPEG decoder's logic, against the fake libnvjpeg of tests/fake_nvjpeg, which decodes
// on the CPU with libjpeg-turbo ("device memory" is host memory there): every kind of file, at
// every scale, with and without a window, pixel for pixel against stoker's CPU decoder; every
// way off the engine (no engine, refused, failed batch, failed file, unreadable file, wrong
// size); misuse; the description.
#include "data/decode/gpu/gpu_jpeg_decoder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/decode/jpeg_decoder.h"
#include "stoker/core/dynamic_library.h"
#include "stoker/data/encode.h"
#include "support/build_paths.h"
#include "support/test_images.h"

namespace stoker::data::gpu {
namespace {

using enum ChromaSubsampling;

// FAKE_NVJPEG_FAIL for a scope (the fake reads it at each call).
class FakeFailures {
 public:
  explicit FakeFailures(const char* which) { ::setenv("FAKE_NVJPEG_FAIL", which, 1); }
  ~FakeFailures() { ::unsetenv("FAKE_NVJPEG_FAIL"); }
  FakeFailures(const FakeFailures&) = delete;
  FakeFailures& operator=(const FakeFailures&) = delete;
};

// The fake loaded as stoker loads nvJPEG, and its call counter.
class FakeNvjpeg {
 public:
  FakeNvjpeg() {
    NvjpegSearch search;
    search.override_path = testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12";
    std::string why_not;
    nvjpeg_ = NvjpegLibrary::load(search, &why_not);
    if (nvjpeg_ == nullptr) throw std::runtime_error(why_not);
    counter_ = DynamicLibrary::open(search.override_path, &why_not);
    if (counter_ == nullptr) throw std::runtime_error(why_not);
    counter_->get<void()>("fake_nvjpeg_reset")();
  }
  const NvjpegLibrary& library() const { return *nvjpeg_; }
  int calls(const char* function) const { return counter_->get<int(const char*)>("fake_nvjpeg_calls")(function); }

 private:
  std::unique_ptr<NvjpegLibrary> nvjpeg_;
  std::unique_ptr<DynamicLibrary> counter_;
};

std::vector<uint8_t> photo_jpeg(int width, int height, ChromaSubsampling subsampling, bool progressive = false,
                                int channels = 3) {
  const Image image = testing::make_photo_like(width, height, channels, static_cast<uint32_t>(width * 31 + height));
  return encode_jpeg(image, {.quality = 90,
                             .progressive = progressive,
                             .subsampling = subsampling,
                             .color_space = channels == 1 ? JpegColorSpace::kGray : JpegColorSpace::kAuto});
}

DecodeRequest request_for(int channels, CropRect crop = {}, int target_width = 0, int target_height = 0) {
  DecodeRequest request;
  request.channels = channels;
  request.crop = crop;
  request.target_width = target_width;
  request.target_height = target_height;
  request.filter_support = 2;
  return request;
}

// A file, its request, and the device memory (here host memory) its pixels go to, with a
// pitch wider than the row so that rows landing at the wrong place show.
struct Sample {
  std::string name;
  std::vector<uint8_t> bytes;
  DecodeRequest request;
  DecodePlan plan;
  std::vector<uint8_t> buffer;
  size_t pitch = 0;
};

Sample gpu_sample(std::string name, std::vector<uint8_t> bytes, const DecodeRequest& request,
                  const DecodeOptions& options = {}) {
  Sample s{std::move(name), std::move(bytes), request, {}, {}, 0};
  s.plan = DecodePlanner(options).plan(s.bytes, request);
  return s;
}

std::vector<GpuDecodeItem> items_of(std::vector<Sample>& samples, int channels) {
  std::vector<GpuDecodeItem> items;
  for (Sample& s : samples) {
    GpuDecodeItem item;
    item.bytes = s.bytes;
    item.plan = s.plan;
    s.pitch = static_cast<size_t>(std::max(item.width(), 1)) * channels + 5;
    s.buffer.assign(s.pitch * static_cast<size_t>(std::max(item.height(), 1)), 0xAB);
    item.destination = s.buffer.data();
    item.pitch = s.pitch;
    items.push_back(item);
  }
  return items;
}

// What the CPU decoder gives for the sample's window: its whole image at the plan's scale,
// cut to the window (decoding the window alone may widen it to whole blocks).
Image cpu_window(const Sample& s, const DecodeOptions& options = {}) {
  JpegDecoder cpu;
  DecodeOptions whole = options;
  whole.crop_window = false;
  whole.dct_scaling = s.plan.window.scale_num != 8;  // the CUDA path's plans are at full scale
  DecodedImage out;
  const Status status = cpu.decode(s.bytes, s.request, whole, &out);
  EXPECT_TRUE(status.ok()) << s.name << ": " << status.reason();
  EXPECT_EQ(out.scale_num, s.plan.window.scale_num) << s.name;
  const DecodeWindow& w = s.plan.window;
  return testing::crop_image(out.image, w.cols.begin, w.rows.begin, w.cols.end - w.cols.begin,
                             w.rows.end - w.rows.begin);
}

// Bytes of the sample's buffer that differ from the CPU decoder's window.
int64_t differing_bytes(const Sample& s, const Image& expected) {
  int64_t differ = 0;
  for (int y = 0; y < expected.height(); ++y) {
    const uint8_t* got = s.buffer.data() + static_cast<size_t>(y) * s.pitch;
    for (size_t x = 0; x < expected.stride(); ++x) differ += got[x] != expected.row(y)[x];
  }
  return differ;
}

std::unique_ptr<GpuJpegDecoder> make_decoder(const FakeNvjpeg& fake, int channels = 3, int max_batch_size = 16) {
  std::string why_not;
  GpuDecoderOptions options;
  options.channels = channels;
  options.max_batch_size = max_batch_size;
  options.preallocate_width = 224;
  options.preallocate_height = 224;
  auto decoder = GpuJpegDecoder::create(fake.library(), options, &why_not);
  EXPECT_NE(decoder, nullptr) << why_not;
  return decoder;
}

std::vector<GpuDecodeResult> gpu_decode(GpuJpegDecoder& decoder, std::vector<Sample>& samples) {
  const std::vector<GpuDecodeItem> items = items_of(samples, decoder.options().channels);
  std::vector<GpuDecodeResult> results;
  decoder.decode(items, nullptr, &results);
  return results;
}

// Every kind of file the GPU takes, whole and windowed, at every scale, odd sizes included.
std::vector<Sample> every_kind(int channels) {
  const CropRect crop{10.5, 7.25, 60, 40};
  return {
      gpu_sample("4:2:0 whole", photo_jpeg(97, 61, k420), request_for(channels)),
      gpu_sample("4:2:0 at 1/2", photo_jpeg(97, 61, k420), request_for(channels, {}, 48, 30)),
      gpu_sample("4:2:2 at 1/4", photo_jpeg(97, 61, k422), request_for(channels, {}, 24, 15)),
      gpu_sample("4:4:4 at 1/8", photo_jpeg(97, 61, k444), request_for(channels, {}, 12, 7)),
      gpu_sample("4:4:0 window", photo_jpeg(101, 67, k440), request_for(channels, crop)),
      gpu_sample("4:2:0 window at 1/2", photo_jpeg(101, 67, k420), request_for(channels, crop, 30, 20)),
      gpu_sample("4:2:2 window at 1/4", photo_jpeg(160, 120, k422), request_for(channels, {33, 21, 100, 80}, 25, 20)),
      gpu_sample("gray window", photo_jpeg(90, 70, k444, false, 1), request_for(channels, crop)),
      gpu_sample("progressive", photo_jpeg(97, 61, k420, true), request_for(channels, crop, 30, 20)),
      gpu_sample("4:1:1", photo_jpeg(97, 61, k411), request_for(channels)),
      gpu_sample("4:1:0", photo_jpeg(97, 61, k410), request_for(channels, crop)),
  };
}

void expect_like_the_cpu(const std::vector<Sample>& samples, const std::vector<GpuDecodeResult>& results) {
  ASSERT_EQ(results.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!results[i].on_gpu()) continue;
    EXPECT_EQ(differing_bytes(samples[i], cpu_window(samples[i])), 0) << samples[i].name;
  }
}

TEST(GpuJpegDecoderTest, DecodesEveryKindOfFileAsTheCpuDecoderDoes) {
  for (int channels : {3, 1}) {
    SCOPED_TRACE(channels);
    FakeNvjpeg fake;
    auto decoder = make_decoder(fake, channels);
    ASSERT_NE(decoder, nullptr);
    std::vector<Sample> samples = every_kind(channels);
    const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
    ASSERT_EQ(results.size(), samples.size());
    int engine = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      EXPECT_EQ(results[i].backend, samples[i].plan.backend) << samples[i].name;
      EXPECT_EQ(results[i].reason, "") << samples[i].name;
      engine += samples[i].plan.backend == DecodeBackend::kHardware;
    }
    EXPECT_EQ(engine, 8);  // the planner's choice, which the fake's engine agrees with
    expect_like_the_cpu(samples, results);
    EXPECT_EQ(fake.calls("nvjpegDecodeBatchedEx"), 1);  // the engine's items in one call
    EXPECT_EQ(fake.calls("nvjpegJpegStreamParse"), static_cast<int>(samples.size()));
    EXPECT_EQ(fake.calls("nvjpegDecodeJpeg"), 3);
  }
}

TEST(GpuJpegDecoderTest, DescribesTheEngineAndTheCudaPath) {
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(decoder->description(), "nvJPEG 12.99.7: hardware engine (7 engines) + CUDA path");
  EXPECT_TRUE(decoder->has_hardware());
  EXPECT_EQ(fake.calls("nvjpegDecodeBatchedPreAllocate"), 1);
}

TEST(GpuJpegDecoderTest, WithoutAnEngineTheCudaPathTakesFullScaleWindowsAndTheCpuTheScaledOnes) {
  FakeFailures no_engine("create_hardware");
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(decoder->description(),
            "nvJPEG 12.99.7: CUDA path only: this GPU has no JPEG engine (architecture mismatch (status 7))");
  EXPECT_FALSE(decoder->has_hardware());
  std::vector<Sample> samples = every_kind(3);
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (s.plan.backend == DecodeBackend::kCuda) {
      EXPECT_EQ(results[i].backend, DecodeBackend::kCuda) << s.name;
      EXPECT_EQ(results[i].reason, "") << s.name;
    } else if (s.plan.window.scale_num == 8) {
      EXPECT_EQ(results[i].backend, DecodeBackend::kCuda) << s.name;
      EXPECT_EQ(results[i].reason, "no JPEG engine on this GPU: decoded on the CUDA path") << s.name;
    } else {
      EXPECT_EQ(results[i].backend, DecodeBackend::kCpu) << s.name;
      EXPECT_EQ(results[i].reason, "no JPEG engine on this GPU and nvJPEG's CUDA path does not scale") << s.name;
    }
  }
  expect_like_the_cpu(samples, results);  // windows through the CUDA path's ROI
  EXPECT_EQ(fake.calls("nvjpegDecodeBatchedEx"), 0);
}

TEST(GpuJpegDecoderTest, AFailedBatchIsRetriedFileByFileOnTheEngine) {
  FakeFailures batches_fail("batched");
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = every_kind(3);
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(results[i].backend, samples[i].plan.backend) << samples[i].name;
    EXPECT_EQ(results[i].reason, "") << samples[i].name;
  }
  expect_like_the_cpu(samples, results);
  EXPECT_EQ(fake.calls("nvjpegDecodeBatchedEx"), 1 + 8);
}

TEST(GpuJpegDecoderTest, FilesTheEngineFailsOnGoToTheCudaPathOrTheCpu) {
  FakeFailures engine_fails("batched_all");
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = every_kind(3);
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (s.plan.backend == DecodeBackend::kCuda) continue;
    const std::string failed = "the engine failed on it (execution failed (status 6))";
    if (s.plan.window.scale_num == 8) {
      EXPECT_EQ(results[i].backend, DecodeBackend::kCuda) << s.name;
      EXPECT_EQ(results[i].reason, failed + ": decoded on the CUDA path") << s.name;
    } else {
      EXPECT_EQ(results[i].backend, DecodeBackend::kCpu) << s.name;
      EXPECT_EQ(results[i].reason, failed + " and nvJPEG's CUDA path does not scale") << s.name;
    }
  }
  expect_like_the_cpu(samples, results);
}

// The planner reads the header and looks for the end-of-image marker; damage inside the data
// is found by decoding. Such a file fails the engine's batch, then alone, then the CUDA path,
// and goes to the CPU; the rest of the batch is decoded.
TEST(GpuJpegDecoderTest, ADamagedFileThePlannerPassedCostsOnlyItself) {
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<uint8_t> damaged = photo_jpeg(97, 61, k420);
  damaged.resize(damaged.size() * 6 / 10);
  damaged.insert(damaged.end(), {0xFF, 0xD9});
  std::vector<Sample> samples = {
      gpu_sample("good", photo_jpeg(97, 61, k420), request_for(3)),
      gpu_sample("cut, with an end marker", damaged, request_for(3)),
      gpu_sample("good window", photo_jpeg(101, 67, k444), request_for(3, {10, 10, 50, 40})),
  };
  ASSERT_EQ(samples[1].plan.backend, DecodeBackend::kHardware) << "the planner should pass it";
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  EXPECT_EQ(results[0].backend, DecodeBackend::kHardware);
  EXPECT_EQ(results[2].backend, DecodeBackend::kHardware);
  EXPECT_EQ(results[1].backend, DecodeBackend::kCpu);
  EXPECT_EQ(results[1].reason,
            "the engine failed on it (execution failed (status 6)); nvJPEG failed on it: execution failed (status 6)");
  expect_like_the_cpu(samples, results);
}

TEST(GpuJpegDecoderTest, AFileNvjpegCannotParseGoesToTheCpu) {
  FakeFailures second_parse_fails("parse:1");
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = {
      gpu_sample("first", photo_jpeg(97, 61, k420), request_for(3)),
      gpu_sample("unparsable", photo_jpeg(97, 61, k420), request_for(3)),
      gpu_sample("progressive", photo_jpeg(97, 61, k420, true), request_for(3)),
  };
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  EXPECT_EQ(results[0].backend, DecodeBackend::kHardware);
  EXPECT_EQ(results[1].backend, DecodeBackend::kCpu);
  EXPECT_EQ(results[1].reason, "nvJPEG refused it: bad JPEG (status 3)");
  EXPECT_EQ(results[2].backend, DecodeBackend::kCuda);
  expect_like_the_cpu(samples, results);
}

TEST(GpuJpegDecoderTest, AFileTheCudaPathFailsOnGoesToTheCpu) {
  FakeFailures cuda_path_fails("decode_jpeg");
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = {gpu_sample("progressive", photo_jpeg(97, 61, k420, true), request_for(3))};
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  EXPECT_EQ(results[0].backend, DecodeBackend::kCpu);
  EXPECT_EQ(results[0].reason, "nvJPEG failed on it: execution failed (status 6)");
}

// A plan the engine disagrees with (here a progressive file planned as if it were baseline):
// full scale goes to the CUDA path, window included; a scale to the CPU.
TEST(GpuJpegDecoderTest, AFileTheEngineRefusesGoesToTheCudaPathOrTheCpu) {
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  const std::vector<uint8_t> progressive = photo_jpeg(101, 67, k420, true);
  JpegDecoder cpu;
  JpegLayout layout;
  cpu.read_layout(progressive, &layout);
  layout.progressive = false;
  std::vector<Sample> samples = {
      gpu_sample("refused window", progressive, request_for(3, {10.5, 7.25, 60, 40})),
      gpu_sample("refused at 1/2", progressive, request_for(3, {10.5, 7.25, 60, 40}, 30, 20)),
  };
  for (Sample& s : samples) s.plan = plan_decode(layout, s.request, {});
  ASSERT_EQ(samples[0].plan.backend, DecodeBackend::kHardware);
  ASSERT_EQ(samples[1].plan.window.scale_num, 4);
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  EXPECT_EQ(results[0].backend, DecodeBackend::kCuda);
  EXPECT_EQ(results[0].reason, "the engine refused it: decoded on the CUDA path");
  EXPECT_EQ(results[1].backend, DecodeBackend::kCpu);
  EXPECT_EQ(results[1].reason, "the engine refused it and nvJPEG's CUDA path does not scale");
  expect_like_the_cpu(samples, results);
  EXPECT_EQ(fake.calls("nvjpegDecodeBatchedEx"), 0);
}

// nvJPEG writes the size it reads, whatever the plan says: a file that is not the size it
// was planned with would overrun its destination, so it is not decoded.
TEST(GpuJpegDecoderTest, AFileOfAnotherSizeThanPlannedIsNotDecoded) {
  FakeNvjpeg fake;
  auto decoder = make_decoder(fake);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = {gpu_sample("planned 97x61", photo_jpeg(97, 61, k420), request_for(3))};
  samples[0].bytes = photo_jpeg(120, 80, k420);
  const std::vector<GpuDecodeResult> results = gpu_decode(*decoder, samples);
  EXPECT_EQ(results[0].backend, DecodeBackend::kCpu);
  EXPECT_EQ(results[0].reason, "nvJPEG reads it as 120x80 at scale 8/8, planned as 97x61");
  EXPECT_EQ(samples[0].buffer, std::vector<uint8_t>(samples[0].buffer.size(), 0xAB));  // untouched
}

TEST(GpuJpegDecoderTest, MisuseThrowsBeforeAnythingIsDecoded) {
  FakeNvjpeg fake;
  std::string why_not;
  GpuDecoderOptions options;
  options.channels = 2;
  EXPECT_THROW(GpuJpegDecoder::create(fake.library(), options, &why_not), std::invalid_argument);
  options = {};
  options.max_batch_size = 0;
  EXPECT_THROW(GpuJpegDecoder::create(fake.library(), options, &why_not), std::invalid_argument);

  auto decoder = make_decoder(fake, 3, 2);
  ASSERT_NE(decoder, nullptr);
  std::vector<Sample> samples = {gpu_sample("a", photo_jpeg(64, 48, k420), request_for(3))};
  std::vector<GpuDecodeItem> items = items_of(samples, 3);
  std::vector<GpuDecodeResult> results;
  const auto throws = [&](std::vector<GpuDecodeItem> wrong) {
    EXPECT_THROW(decoder->decode(wrong, nullptr, &results), std::invalid_argument);
  };
  throws({items[0], items[0], items[0]});  // over max_batch_size 2
  GpuDecodeItem item = items[0];
  item.plan.backend = DecodeBackend::kCpu;
  throws({item});
  item = items[0];
  item.destination = nullptr;
  throws({item});
  item = items[0];
  item.pitch = 64 * 3 - 1;
  throws({item});
  EXPECT_EQ(fake.calls("nvjpegJpegStreamParse"), 0);
  decoder->decode(items, nullptr, &results);
  EXPECT_EQ(results[0].backend, DecodeBackend::kHardware);
}

TEST(GpuJpegDecoderTest, NoUsableGpuIsOneLineFromCreate) {
  FakeFailures everything("all");
  FakeNvjpeg fake;
  std::string why_not;
  EXPECT_EQ(GpuJpegDecoder::create(fake.library(), {}, &why_not), nullptr);
  EXPECT_EQ(why_not, "nvJPEG could not start: architecture mismatch (status 7)");
}

}  // namespace
}  // namespace stoker::data::gpu
