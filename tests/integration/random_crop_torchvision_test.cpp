// RandomCrop and the 1:1 CenterCrop held to torchvision's own code (Debian's
// python3-torchvision, run by /usr/bin/python3) on PIL images: for each case stoker draws the
// crop offset and the flip, torchvision's RandomCrop.forward runs with get_params returning
// that offset (it checks the offset fits the image torchvision padded), and the pixels must
// be equal: padding, pad_if_needed, fill and the four padding modes are copies, not maths.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
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

// argv: folder. cases.txt: one case a line; image<k>.bin: its interleaved pixels.
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
        ch, W, H, th, tw, l, t, r, b, needed = map(int, f[:10])
        fill = [float(x) for x in f[10:13]]
        mode, i, j, flip, center = f[13], int(f[14]), int(f[15]), int(f[16]), int(f[17])
        raw = open(folder + "/image%d.bin" % k, "rb").read()
        img = Image.frombytes("RGB" if ch == 3 else "L", (W, H), raw)
        if center:
            img = F.center_crop(img, [th, tw])
        else:
            def get_params(padded, output_size):
                w, h = padded.size
                assert 0 <= i <= h - th and 0 <= j <= w - tw, (padded.size, i, j)
                return i, j, th, tw
            T.RandomCrop.get_params = staticmethod(get_params)
            padding = [l, t, r, b] if l or t or r or b else None
            img = T.RandomCrop((th, tw), padding, bool(needed), fill[0] if ch == 1 else tuple(fill), mode)(img)
        if flip:
            img = F.hflip(img)
        out.write(np.asarray(img).tobytes())
)PY";

struct Case {
  int channels, width, height;
  std::string chain;
  uint64_t seed;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (uint64_t seed = 0; seed < 12; ++seed) {  // CIFAR's recipe, offsets all over
    all.push_back({3, 32, 32, "RandomCrop(32, padding=4), RandomHorizontalFlip()", seed});
  }
  for (const char* mode : {"constant", "edge", "reflect", "symmetric"}) {
    const std::string m = mode;
    for (uint64_t seed = 0; seed < 3; ++seed) {
      all.push_back(
          {3, 7, 5, "RandomCrop(8, padding=9, fill=(10, 20, 30), padding_mode=" + m + ")", seed});
      all.push_back(
          {3, 7, 5,
           "RandomCrop((12, 16), padding=(1, 2, 3, 0), pad_if_needed=True, padding_mode=" + m +
               "), RandomHorizontalFlip()",
           seed});
      all.push_back({1, 9, 6,
                     "RandomCrop(6, padding=(2, 1), fill=100, padding_mode=" + m + "), Grayscale",
                     seed});
    }
  }
  all.push_back(
      {3, 20, 4, "RandomCrop(10, pad_if_needed=True, fill=7.5)", 1});  // fill truncated, as PIL's
  all.push_back({3, 7, 5, "CenterCrop((8, 4), resize=False)", 0});
  all.push_back({3, 30, 33, "CenterCrop(31, resize=False)", 0});
  all.push_back({1, 6, 9, "CenterCrop((3, 9), resize=False), Grayscale", 0});
  return all;
}

TEST(RandomCropTorchvisionTest, PixelsEqualTorchvisionsOnTheSameImage) {
  if (const std::string missing = testing::torchvision_missing(); !missing.empty())
    GTEST_SKIP() << missing;
  testing::TempDir dir;
  const std::vector<Case> all = cases();
  std::string lines;
  std::vector<std::vector<uint8_t>> expected;
  for (size_t k = 0; k < all.size(); ++k) {
    const Case& c = all[k];
    SCOPED_TRACE(c.chain);
    const TransformSpec spec = parse_transforms(c.chain + ", ToUint8, NHWC");
    const Image image =
        testing::make_photo_like(c.width, c.height, c.channels, static_cast<uint32_t>(k + 1));
    dir.write("image" + std::to_string(k) + ".bin",
              std::vector<uint8_t>(image.data(), image.data() + image.stride() * image.height()));
    SampleRng rng(c.seed, 0, k);
    const SampleParams params = draw_params(spec, c.width, c.height, rng);
    ASSERT_GT(params.crop.width, 0);
    std::vector<uint8_t> out(spec.sample_bytes());
    SampleTransformer().run(out.data(), image, params.crop, params, spec);
    expected.push_back(out);
    const PadSpec& pad = spec.pad;
    std::ostringstream line;
    line << c.channels << ' ' << c.width << ' ' << c.height << ' ' << spec.out_height << ' '
         << spec.out_width << ' ' << pad.left << ' ' << pad.top << ' ' << pad.right << ' '
         << pad.bottom << ' ' << pad.if_needed << ' ' << pad.fill[0] << ' ' << pad.fill[1] << ' '
         << pad.fill[2] << ' ' << to_string(pad.mode) << ' ' << params.crop.y << ' '
         << params.crop.x << ' ' << params.flip << ' ' << (spec.geometry == Geometry::kCenterCrop)
         << '\n';
    lines += line.str();
  }
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
    EXPECT_EQ(expected[k],
              std::vector<uint8_t>(
                  theirs.begin() + static_cast<std::ptrdiff_t>(offset),
                  theirs.begin() + static_cast<std::ptrdiff_t>(offset + expected[k].size())));
    offset += expected[k].size();
  }
  EXPECT_EQ(offset, theirs.size());
}

}  // namespace
}  // namespace stoker::data
