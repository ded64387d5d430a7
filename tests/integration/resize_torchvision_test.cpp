// Resize before a crop held to torchvision's own code (Debian's python3-torchvision, run by
// /usr/bin/python3) on PIL images: Resize(n) or Resize((h, w)) alone, then CenterCrop,
// RandomCrop (its window inside the resized image, or reaching into the padding) and
// RandomResizedCrop's draw. stoker draws the offsets and the flip; torchvision's
// RandomCrop.forward runs with get_params returning those offsets (and checks they fit the
// image torchvision resized and padded). Pillow rounds to uint8 after each of its two passes
// and stoker once at the end, so the pixels may differ by a grey level or so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/transform.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

// cases.txt, a line per case: channels W H, the Resize (S n | M n max_size | F h w), the crop (none | center
// th tw | random th tw l t r b needed f0 f1 f2 mode i j), the flip. image<k>.bin: its pixels.
constexpr const char* kScript = R"PY(
import sys
import numpy as np
from PIL import Image
import torchvision.transforms as T
import torchvision.transforms.functional as F
folder = sys.argv[1]
with open(folder + "/out.bin", "wb") as out:
    for k, line in enumerate(open(folder + "/cases.txt")):
        f = line.split()
        ch, W, H = int(f[0]), int(f[1]), int(f[2])
        raw = open(folder + "/image%d.bin" % k, "rb").read()
        img = Image.frombytes("RGB" if ch == 3 else "L", (W, H), raw)
        if f[3] == "S":
            resize, rest = T.Resize(int(f[4])), f[5:]
        elif f[3] == "M":
            resize, rest = T.Resize(int(f[4]), max_size=int(f[5])), f[6:]
        else:
            resize, rest = T.Resize([int(f[4]), int(f[5])]), f[6:]
        img = resize(img)
        kind = rest[0]
        if kind == "center":
            img = F.center_crop(img, [int(rest[1]), int(rest[2])])
        elif kind == "random":
            th, tw, l, t, r, b, needed = map(int, rest[1:8])
            fill = [float(x) for x in rest[8:11]]
            mode, i, j = rest[11], int(rest[12]), int(rest[13])
            def get_params(padded, output_size):
                w, h = padded.size
                assert 0 <= i <= h - th and 0 <= j <= w - tw, (padded.size, i, j)
                return i, j, th, tw
            T.RandomCrop.get_params = staticmethod(get_params)
            padding = [l, t, r, b] if l or t or r or b else None
            img = T.RandomCrop((th, tw), padding, bool(needed), fill[0] if ch == 1 else tuple(fill), mode)(img)
        if int(line.split()[-1]):
            img = F.hflip(img)
        out.write(np.asarray(img).tobytes())
)PY";

// Measured against torchvision 0.14 / Pillow 9.4: worst 1, mean 0.13 to 0.19 per case.
constexpr int kWorst = 1;
constexpr double kMean = 0.25;

struct Case {
  int channels, width, height;
  std::string chain;
  uint64_t seed;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({3, 37, 29, "Resize((24, 40))", 0});  // narrower and taller at once
  all.push_back({3, 61, 45, "Resize((20, 16)), CenterCrop(12)", 0});
  all.push_back({1, 45, 61, "Resize(30), CenterCrop((20, 24)), Grayscale", 0});
  all.push_back({3, 80, 37, "Resize(24, max_size=40), CenterCrop(18)", 0});  // 51 x 24 capped to 40 x 18
  for (uint64_t seed = 0; seed < 6; ++seed) {  // windows inside the resized image: one resample
    all.push_back({3, 50, 37, "Resize(24), RandomCrop(20), RandomHorizontalFlip()", seed});
  }
  for (const char* mode : {"constant", "reflect", "edge", "symmetric"}) {
    for (uint64_t seed = 0; seed < 4; ++seed) {  // windows in the padding: resized, then copied
      all.push_back(
          {3, 43, 31,
           std::string("Resize(24), RandomCrop(24, padding=3, fill=(10, 200, 30), padding_mode=") +
               mode + "), RandomHorizontalFlip()",
           seed});
    }
  }
  all.push_back(
      {3, 64, 48, "Resize((30, 30)), RandomCrop(32, pad_if_needed=True, fill=(1, 2, 3))", 2});
  all.push_back({1, 40, 40, "Resize((20, 24)), RandomCrop(16, padding=(2, 1)), Grayscale", 4});
  return all;
}

TEST(ResizeTorchvisionTest, PixelsAgreeWithTorchvisionOnTheSameImage) {
  if (const std::string missing = testing::torchvision_missing(); !missing.empty())
    GTEST_SKIP() << missing;
  testing::TempDir dir;
  const std::vector<Case> all = cases();
  std::string lines;
  std::vector<std::vector<uint8_t>> expected;
  int resampled_windows = 0, padded_windows = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    const Case& c = all[k];
    SCOPED_TRACE(c.chain);
    const TransformSpec spec = parse_transforms(c.chain + ", ToUint8, NHWC");
    ASSERT_TRUE(spec.resize.enabled());
    const Image image =
        testing::make_photo_like(c.width, c.height, c.channels, static_cast<uint32_t>(k + 1));
    dir.write("image" + std::to_string(k) + ".bin",
              std::vector<uint8_t>(image.data(), image.data() + image.stride() * image.height()));
    SampleRng rng(c.seed, 0, k);
    const SampleParams params = draw_params(spec, c.width, c.height, rng);
    ASSERT_GT(params.crop.width, 0);
    std::vector<uint8_t> out(spec.sample_bytes());
    SampleTransformer().run(out.data(), image, resampled_region(params, c.width, c.height), params,
                            spec);
    expected.push_back(out);

    std::ostringstream line;
    line << c.channels << ' ' << c.width << ' ' << c.height << ' ';
    const ResizeSpec& r = spec.resize;
    if (r.max_size > 0) {
      line << "M " << r.shorter << ' ' << r.max_size << ' ';
    } else if (r.shorter > 0) {
      line << "S " << r.shorter << ' ';
    } else {
      line << "F " << r.height << ' ' << r.width << ' ';
    }
    if (spec.geometry == Geometry::kRandomCrop) {
      // The offsets torchvision needs are in the resized, padded image: the same draws made
      // for a RandomCrop of an image that size (the crop is drawn first, then the flip).
      TransformSpec at_resized = spec;
      at_resized.resize = ResizeSpec{};
      const auto [rw, rh] = resized_size(spec.resize, c.width, c.height);
      SampleRng same(c.seed, 0, k);
      const SampleParams window = draw_params(at_resized, rw, rh, same);
      EXPECT_EQ(window.flip, params.flip);
      (params.copy ? padded_windows : resampled_windows) += 1;
      const PadSpec& pad = spec.pad;
      line << "random " << spec.out_height << ' ' << spec.out_width << ' ' << pad.left << ' '
           << pad.top << ' ' << pad.right << ' ' << pad.bottom << ' ' << pad.if_needed << ' '
           << pad.fill[0] << ' ' << pad.fill[1] << ' ' << pad.fill[2] << ' ' << to_string(pad.mode)
           << ' ' << window.crop.y << ' ' << window.crop.x;
    } else if (spec.resize.shorter == 0 && spec.resize.width == spec.out_width &&
               spec.resize.height == spec.out_height) {
      line << "none";
    } else {
      line << "center " << spec.out_height << ' ' << spec.out_width;
    }
    line << ' ' << params.flip << '\n';
    lines += line.str();
  }
  // Both ways of making a RandomCrop after a Resize were exercised.
  EXPECT_GT(resampled_windows, 0);
  EXPECT_GT(padded_windows, 0);
  dir.write_text("cases.txt", lines);
  dir.write_text("script.py", kScript);
  const auto run =
      testing::run_command("/usr/bin/python3 " + dir.str() + "/script.py " + dir.str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(dir.str() + "/out.bin", std::ios::binary);
  const std::vector<uint8_t> theirs{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
  size_t offset = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    SCOPED_TRACE(all[k].chain + " seed " + std::to_string(all[k].seed));
    ASSERT_LE(offset + expected[k].size(), theirs.size());
    int worst = 0;
    double sum = 0;
    for (size_t i = 0; i < expected[k].size(); ++i) {
      const int d = std::abs(static_cast<int>(expected[k][i]) - theirs[offset + i]);
      worst = std::max(worst, d);
      sum += d;
    }
    const double mean = sum / static_cast<double>(expected[k].size());
    EXPECT_LE(worst, kWorst) << "mean " << mean;
    EXPECT_LE(mean, kMean) << "worst " << worst;
    offset += expected[k].size();
  }
  EXPECT_EQ(offset, theirs.size());
}

}  // namespace
}  // namespace stoker::data
