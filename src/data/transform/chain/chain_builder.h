// The second step of parse_transforms(): calls (calls.h) applied to a TransformSpec. The chain
// always runs in the fixed order of stoker/data/transform.h, so the order of the calls does not
// matter; what does is that each thing is said once. What each name does is its entry in the
// transform registry (data/transform/ops/registry.h); this builder looks the names up there,
// keeps each to one call, and settles what several calls decide together (the geometry a
// Resize and a crop make, a Pad before a RandomCrop, the output type PILToTensor and a dtype
// make).
//
// Errors: UsageError, one line: an unknown transform (with the known ones and the closest), a
// transform given twice, an argument that does not bind or convert, two calls that set the
// same thing, and whatever TransformSpec::validate() refuses.
// Thread safety: free functions on their arguments; a ChainState belongs to one build.
#pragma once

#include <array>
#include <set>
#include <string>
#include <vector>

#include "calls.h"
#include "stoker/data/transform.h"

namespace stoker::data::chain {

// What a chain's calls have said so far: the spec they set, and which call claimed what the
// builder settles at the end (finish in chain_builder.cpp) or allows only once.
struct ChainState {
  TransformSpec spec;
  std::set<std::string> seen;     // the names applied, each once (RandomApply aside)
  std::string geometry_by;        // the crop (or none) given
  std::string dtype_by;           // the call that set the output type
  std::string resample_by;        // the call that set an interpolation
  std::string uint8_by;           // PILToTensor / ToImage: uint8 output unless a dtype is set
  std::string layout_by;          // the call that set the layout
  std::string auto_augment_by;    // the automatic augmentation given
  ResizeSpec resize;              // Resize's, applied by finish
  std::string resize_by;          // the Resize call as written
  std::array<int, 2> crop{0, 0};  // CenterCrop (height, width)
  bool crop_resizes = false;      // CenterCrop's resize=True (stoker's: Resize(size) first)
  PadSpec pad;                    // Pad's, applied by finish
  std::string pad_by;             // the Pad call as written

  // Nothing asked for, nothing done: no geometry (output = source size, filled in by the
  // pipeline), no flip, no jitter, no Normalize; float32 NCHW like ToTensor.
  ChainState();

  // Records `call` as the chain's one geometry; throws UsageError naming both when another
  // call claimed it first.
  void claim_geometry(const Call& call);
  // Records `call` as what sets the output type to `dtype`; throws UsageError when another did.
  void claim_dtype(const Call& call, DType dtype);
};

// Applies one call to `state`: looks its name up in the registry, refuses a second call of a
// name (RandomApply excepted), binds the arguments to the name's parameters and runs the
// transform's build. RandomApply applies the transform it wraps through here.
void apply_call(ChainState& state, const Call& call);

// The spec `calls` describe: nothing asked for, nothing done (no geometry, no flip, no
// Normalize; float32 NCHW).
TransformSpec build_spec(const std::vector<Call>& calls);

}  // namespace stoker::data::chain
