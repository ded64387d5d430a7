// Transform stage alone (Google Benchmark): SampleTransformer::run on a decoded 400x350 RGB
// image, the crop sizes RandomResizedCrop(224) draws on ImageNet-like images, with and
// without ColorJitter, to float32 NCHW / uint8 NHWC. Per-sample time is the figure; compare
// builds side by side (docs/BENCHMARKS.md, "Transform cost").
//   build/bench/stoker_transform_bench [--benchmark_filter=...] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

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

// args: crop side in source pixels, 1 = ColorJitter, 1 = uint8 NHWC output.
void BM_Transform(benchmark::State& state) {
  const int side = static_cast<int>(state.range(0));
  std::string text = "RandomResizedCrop(224), RandomHorizontalFlip(0.5), ";
  if (state.range(1) != 0) text += "ColorJitter(0.4, 0.4, 0.4), ";
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
  for (auto _ : state) {
    transformer.run(out.data(), image, params.crop, params, spec);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Transform)
    ->ArgNames({"crop", "jitter", "uint8"})
    ->Args({300, 0, 0})
    ->Args({200, 0, 0})
    ->Args({360, 0, 0})
    ->Args({300, 1, 0})
    ->Args({300, 0, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
