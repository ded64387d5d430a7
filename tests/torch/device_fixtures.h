// Shared by the device tests: a small photo-like image folder, loader options for a chain,
// and the CUDA gate. The CUDA tests run the same checks as their CPU twins on the first GPU
// and skip themselves (reported as skipped, never as passed) where libtorch has no CUDA
// device, as Debian's CPU-only libtorch has not.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "support/temp_dir.h"
#include "support/test_images.h"
#include "train/torch/torch_compat.h"

namespace stoker::testing {

// 24 PNGs of 40..63 × 32..36 pixels in two classes, a/ and b/.
inline std::shared_ptr<const data::Source> photo_folder(const TempDir& dir) {
  for (int i = 0; i < 24; ++i) {
    const data::Image image = make_photo_like(40 + i, 32 + i % 5, 3, static_cast<uint32_t>(i + 1));
    dir.write((i % 2 ? "a/" : "b/") + std::to_string(i) + ".png", data::encode_png(image));
  }
  return data::open_source(dir.str(), "train");
}

// Batches of 8 in file order from 2 workers, through `chain`.
inline data::LoaderOptions in_order(const std::string& chain) {
  data::LoaderOptions o;
  o.batch_size = 8;
  o.workers = 2;
  o.sampler.shuffle = false;
  o.transform = data::parse_transforms(chain);
  return o;
}

}  // namespace stoker::testing

// First statement of a CUDA test.
#define STOKER_SKIP_WITHOUT_CUDA()                                                        \
  do {                                                                                    \
    if (!::stoker::train::compat::cuda_available())                                       \
      GTEST_SKIP() << "no CUDA device (this libtorch " << TORCH_VERSION << " sees none)"; \
  } while (false)
