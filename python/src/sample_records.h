// What stoker.DataLoader(return_params=True) adds to each batch: how each sample was made
// (stoker/data/loader.h's SampleRecord), as lists Python turns into tensors.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/data/clip.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"

namespace stoker::python {

// A dict of lists, one entry per sample: "index" (the dataset index whose data made it),
// "path" (its name), "source_size" ((width, height)), "box" ((x, y, width, height) of the
// source that became the output: data::source_box), "hflip", "vflip", "grayscale" (bools),
// "angle" (RandomRotation's, degrees counter-clockwise), "affine" (RandomAffine's forward 2x3
// matrix in output pixels, origin at the top-left corner; the identity without one),
// "color" ((brightness, contrast, saturation, hue) factors; (1, 1, 1, 0) without ColorJitter),
// "color_order" (the order ColorJitter applied them in, drawn per sample: indices into "color",
// as torchvision's ColorJitter.get_params' fn_idx; (0, 1, 2, 3) without ColorJitter),
// "erase" ((top, left, height, width) of RandomErasing's box; zeros without one); with clips
// (`clip` enabled), "frames" (the K frame numbers each clip's sample was made of, as
// data::pick_frames chose them; empty without clips). A clip's draws are one for all its
// frames, except "source_size" and "box", one per frame ((N, K, 2), (N, K, 4)): frames may
// differ in size, and each has its own crop. With the GIL held.
pybind11::dict records_of(const data::Batch& batch, const data::Source& source, const data::TransformSpec& spec,
                          const data::ClipOptions& clip);

// Each sample's keypoints, boxes and mask once moved (Batch::geometry): a list of (points,
// boxes, mask): float32 arrays of shape (P, 3) and (B, 5), and a uint8 array (H, W) or None.
// With the GIL held.
pybind11::list geometry_of(const data::Batch& batch);

}  // namespace stoker::python
