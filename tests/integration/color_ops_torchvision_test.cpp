// The single-operation colour transforms (RandomInvert, RandomPosterize, RandomSolarize,
// RandomAdjustSharpness, RandomAutocontrast, RandomEqualize) held to torchvision's own classes
// (Debian's python3-torchvision, run by /usr/bin/python3): the same chain text, with p=1.0,
// through stoker's whole sample path (parse, draw, transform, uint8 output) and through
// torchvision's Compose on the same image, as a uint8 tensor and as a PIL image: equal but for
// Autocontrast's rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/transform.h"
#include "support/byte_difference.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

constexpr int kColorW = 41;
constexpr int kColorH = 27;

// argv: folder W H. cases.txt: per line the channels and a chain in torchvision's notation;
// image1.bin / image3.bin: the image's planes. Writes each case's result, as planes, to
// tensor.bin (on the uint8 tensor) and pil.bin (on the PIL image).
constexpr const char* kColorScript = R"PY(
import sys, torch, numpy as np
from PIL import Image
from torchvision.transforms import *
folder, W, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(folder + "/tensor.bin", "wb") as tensor_out, open(folder + "/pil.bin", "wb") as pil_out:
    for line in open(folder + "/cases.txt"):
        ch, chain = line.split(" ", 1)
        ch = int(ch)
        raw = bytearray(open(folder + "/image%d.bin" % ch, "rb").read())
        img = torch.frombuffer(raw, dtype=torch.uint8).reshape(ch, H, W).clone()
        compose = eval("Compose([" + chain + "])")
        tensor_out.write(compose(img).contiguous().numpy().tobytes())
        pil = Image.fromarray(img.permute(1, 2, 0).numpy() if ch == 3 else img[0].numpy())
        out = np.asarray(compose(pil))
        pil_out.write(np.ascontiguousarray(out.transpose(2, 0, 1) if ch == 3 else out).tobytes())
)PY";

// Written in stoker's order of the operations, so that torchvision's Compose runs them in it.
const std::vector<std::string> kChains = {
    "RandomInvert(p=1.0)",
    "RandomPosterize(3, p=1.0)",
    "RandomPosterize(0, p=1.0)",
    "RandomSolarize(128, p=1.0)",
    "RandomSolarize(200.5, p=1.0)",
    "RandomAdjustSharpness(2, p=1.0)",
    "RandomAdjustSharpness(0, p=1.0)",
    "RandomAdjustSharpness(0.3, p=1.0)",
    "RandomAutocontrast(p=1.0)",
    "RandomEqualize(p=1.0)",
    "RandomInvert(p=1.0), RandomPosterize(5, p=1.0), RandomSolarize(100, p=1.0), RandomAdjustSharpness(3, p=1.0), "
    "RandomAutocontrast(p=1.0), RandomEqualize(p=1.0)",
};

// A photo-like image with a narrow range, so that Autocontrast and Equalize have work to do.
Image test_image(int channels) {
  Image image = testing::make_photo_like(kColorW, kColorH, channels, 11);
  for (int y = 0; y < kColorH; ++y) {
    uint8_t* row = image.row(y);
    for (int i = 0; i < kColorW * channels; ++i) row[i] = static_cast<uint8_t>(40 + row[i] * 150 / 255);
  }
  return image;
}

// stoker's sample for `chain`: no geometry, uint8 NCHW output, parameters drawn (p=1: all run).
std::vector<uint8_t> stoker_sample(const std::string& chain, int channels) {
  TransformSpec spec = parse_transforms("none, " + chain + (channels == 1 ? ", Grayscale" : "") + ", ToUint8");
  spec.out_width = kColorW;
  spec.out_height = kColorH;
  SampleRng rng(1, 0, 0);
  const SampleParams params = draw_params(spec, kColorW, kColorH, rng);
  DecodedImage decoded;
  decoded.image = test_image(channels);
  decoded.crop = {0, 0, kColorW, kColorH};
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer().run(out.data(), decoded, params, spec);
  return out;
}

TEST(ColorOpsTorchvisionTest, EachMatchesTorchvisionsClassOnTheSameImage) {
  if (const std::string missing = testing::torchvision_missing(); !missing.empty()) GTEST_SKIP() << missing;
  testing::TempDir dir;
  const auto file = [&](const std::string& name) { return (dir.path() / name).string(); };
  dir.write("image1.bin", testing::to_planes(test_image(1)));
  dir.write("image3.bin", testing::to_planes(test_image(3)));
  {
    std::ofstream cases(file("cases.txt"));
    for (const int channels : {3, 1}) {
      for (const std::string& chain : kChains) cases << channels << ' ' << chain << '\n';
    }
  }
  std::ofstream(file("script.py")) << kColorScript;
  const auto run = testing::run_command("/usr/bin/python3 " + file("script.py") + " " + dir.str() + " " +
                                        std::to_string(kColorW) + " " + std::to_string(kColorH));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<uint8_t> tensor = testing::read_bytes(file("tensor.bin"));
  const std::vector<uint8_t> pil = testing::read_bytes(file("pil.bin"));
  ASSERT_EQ(tensor.size(), pil.size());

  size_t offset = 0;
  for (const int channels : {3, 1}) {
    for (const std::string& chain : kChains) {
      SCOPED_TRACE(::testing::Message() << channels << " channel(s): " << chain);
      const std::vector<uint8_t> ours = stoker_sample(chain, channels);
      ASSERT_LE(offset + ours.size(), tensor.size());
      const testing::ByteDifference t = testing::byte_difference(ours, tensor, offset);
      const testing::ByteDifference p = testing::byte_difference(ours, pil, offset);
      if (chain.find("Autocontrast") == std::string::npos) {
        EXPECT_EQ(t.differing, 0) << "worst " << t.worst;
        EXPECT_EQ(p.differing, 0) << "worst " << p.worst << " (PIL)";
      } else {
        // Autocontrast scales by 255 / (max - min) in float: torch rounds the product its own
        // way on a few elements (measured 4 of 3,321), Pillow builds its lookup table in its
        // own steps (122 of 3,321), one grey level either way.
        EXPECT_LE(t.worst, 1);
        EXPECT_LE(t.differing, static_cast<int>(ours.size() / 500)) << t.differing << " elements differ";
        EXPECT_LE(p.worst, 1) << " (PIL)";
        EXPECT_LE(p.differing, static_cast<int>(ours.size() / 20)) << p.differing << " elements differ from PIL";
      }
      offset += ours.size();
    }
  }
  EXPECT_EQ(offset, tensor.size());
}

}  // namespace
}  // namespace stoker::data
