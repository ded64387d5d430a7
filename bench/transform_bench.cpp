// Transform stage alone (Google Benchmark): SampleTransformer::run on a decoded 400x350 RGB
// image, the crop sizes RandomResizedCrop(224) draws on ImageNet-like images, with and
// without ColorJitter, to float32 NCHW / uint8 NHWC. Per-sample time is the figure; compare
// builds side by side (docs/lab/benchmarks-log.md, "Transform cost"). BM_AugmentOp: each automatic
// augmentation operation alone on a 224x224 RGB uint8 image (nearest and bilinear for the
// geometric ones); BM_Transform's 4th argument adds TrivialAugmentWide (1) or AugMix (2), drawn per sample.
//   build/bench/stoker_transform_bench [--benchmark_filter=...] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "data/transform/auto_augment.h"
#include "stoker/core/rng.h"
#include "stoker/data/transform.h"

namespace {

using stoker::data::CropRect;
using stoker::data::Image;

Image photo(int width, int height) {
  Image image;
  image.reshape(width, height, 3);
  uint32_t x = 7;
  for (int y = 0; y < height; ++y) {
    uint8_t* row = image.row(y);
    for (int i = 0; i < width * 3; ++i) {
      x = x * 1664525u + 1013904223u;
      row[i] = static_cast<uint8_t>((i / 3 + y) / 3 + (x >> 28));
    }
  }
  return image;
}

// args: crop side in source pixels, 1 = ColorJitter, 1 = uint8 NHWC output, 1 = TrivialAugmentWide,
// 2 = AugMix (its defaults: 3 chains of 1..3 operations).
void BM_Transform(benchmark::State& state) {
  const int side = static_cast<int>(state.range(0));
  std::string text = "RandomResizedCrop(224), RandomHorizontalFlip(0.5), ";
  if (state.range(1) != 0) text += "ColorJitter(0.4, 0.4, 0.4), ";
  if (state.range(3) == 1) text += "TrivialAugmentWide(interpolation=bilinear), ";
  if (state.range(3) == 2) text += "AugMix, ";
  text += state.range(2) != 0 ? "ToUint8, NHWC" : "Normalize";
  const stoker::data::TransformSpec spec = stoker::data::parse_transforms(text);
  const Image image = photo(400, 350);
  stoker::data::SampleParams params;
  params.crop = CropRect{31.5, 20.25, static_cast<double>(side), side * 0.9};
  params.flip = true;
  params.brightness = 1.2;
  params.contrast = 0.9;
  params.saturation = 1.1;
  stoker::data::SampleTransformer transformer;
  std::vector<uint8_t> out(spec.sample_bytes());
  uint64_t sample = 0;
  for (auto _ : state) {
    if (spec.auto_augment.enabled()) {  // a new operation per sample, as the loader draws them
      stoker::SampleRng rng(1, 0, sample++);
      stoker::data::draw_auto_augment(spec.auto_augment, 224, 224, rng, &params);
    }
    transformer.run(out.data(), image, params.crop, params, spec);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
// args: the AugmentOp, 1 = bilinear.
void BM_AugmentOp(benchmark::State& state) {
  constexpr int kSide = 224;
  const auto op = static_cast<stoker::data::AugmentOp>(state.range(0));
  stoker::data::AutoAugmentSpec spec;
  spec.interpolation =
      state.range(1) != 0 ? stoker::data::Interpolation::kBilinear : stoker::data::Interpolation::kNearest;
  const Image image = photo(kSide, kSide);
  std::vector<uint8_t> planes(static_cast<size_t>(kSide) * kSide * 3);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x)
        planes[(static_cast<size_t>(c) * kSide + y) * kSide + x] = image.row(y)[x * 3 + c];
    }
  }
  const float magnitude = op == stoker::data::AugmentOp::kPosterize    ? 4.0f
                          : op == stoker::data::AugmentOp::kSolarize   ? 128.0f
                          : op == stoker::data::AugmentOp::kRotate     ? 30.0f
                          : op == stoker::data::AugmentOp::kTranslateX ? 20.0f
                          : op == stoker::data::AugmentOp::kTranslateY ? 20.0f
                                                                       : 0.3f;
  std::vector<uint8_t> image_planes;
  std::vector<uint8_t> scratch;
  for (auto _ : state) {
    image_planes = planes;
    stoker::data::apply_augment_op(op, magnitude, spec, &image_planes, &scratch, kSide, kSide, 3);
    benchmark::DoNotOptimize(image_planes.data());
  }
  state.SetLabel(stoker::data::augment_op_name(op));
}
BENCHMARK(BM_AugmentOp)
    ->ArgNames({"op", "bilinear"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, {0}})
    ->ArgsProduct({{1, 2, 3, 4, 5}, {1}})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Transform)
    ->ArgNames({"crop", "jitter", "uint8", "augment"})
    ->Args({300, 0, 0, 0})
    ->Args({200, 0, 0, 0})
    ->Args({360, 0, 0, 0})
    ->Args({300, 1, 0, 0})
    ->Args({300, 0, 1, 0})
    ->Args({300, 0, 0, 1})
    ->Args({300, 0, 0, 2})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
