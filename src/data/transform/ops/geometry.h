// What the geometry transforms (Resize, RandomResizedCrop, RandomCrop, CenterCrop, none)
// share beyond the chain state: the one geometry a chain has, the resample filter that a
// Resize and a RandomResizedCrop ask for together, and the parts of their draws that a Resize
// before the crop adds (geometry_draw.cpp). Which geometry the chain makes is settled once every call is applied
// (chain_builder.cpp), since a Resize changes what the crop after it means.
//
// Errors: UsageError naming the call and the value as written. Thread safety: a free function
// on its arguments.
#pragma once

#include <string>

#include "data/transform/chain/calls.h"
#include "registry.h"
#include "stoker/data/transform.h"

namespace stoker::data::chain {
struct ChainState;
}

namespace stoker::data::ops {

// Claims the chain's one geometry for `call` (ChainState::claim_geometry): the crops' claim.
void claim_geometry(chain::ChainState& state, const chain::Call& call);

// stoker resamples with Pillow's antialiased filters, bilinear (torchvision's default on a
// PIL image) or bicubic; the arguments that ask for one (either may be null: not given) are
// accepted, others refused. One resample makes the output, so a Resize and a
// RandomResizedCrop after it share their filter: asking for two is refused.
void set_resampling(chain::ChainState& state, const chain::Call& call, const chain::Value* interpolation,
                    const chain::Value* antialias);

// RandomCrop's and Pad's padding arguments, as torchvision's: `padding` an int for every side,
// (left/right, top/bottom) or (left, top, right, bottom); `fill` one value or one per channel;
// `mode` constant, edge, reflect or symmetric. Each may be null (not given: pad's is kept).
void set_padding(const chain::Call& call, const chain::Value* padding, const chain::Value* fill,
                 const chain::Value* mode, PadSpec* pad);
// ", padding=4, fill=..., padding_mode=reflect": the padding arguments that differ from
// torchvision's defaults (pad_if_needed aside), each after ", ".
std::string padding_text(const PadSpec& pad);
// Sides in 0..spec::kMaxSize and the fill in [0, 255], naming `transform`.
void check_padding(const char* transform, const PadSpec& pad);

// The geometry's draw. Each geometry entry draws the geometries it describes (RandomResizedCrop
// kRandomResizedCrop, RandomCrop kRandomCrop, CenterCrop kResizeCenterCrop and kCenterCrop,
// none kNone), so one entry draws for a chain: true when `geometry` is the chain's and the
// source has pixels (without, the sample keeps draw_params's crop, the whole source).
bool draws_geometry(const TransformSpec& spec, const DrawContext& context, Geometry geometry);
// A rectangle of the resized_w x resized_h image as one of the width x height source.
CropRect to_source(const CropRect& r, int width, int height, int resized_w, int resized_h);
// A 1:1 window's draw (RandomCrop, the 1:1 CenterCrop; SampleParams says what it sets):
// `window` places it in the source as resized by spec.resize, width x height (params->crop in
// the padded image's coordinates, pad_x and pad_y, which start at 0; crop width 0 when the
// padded image is smaller than the window); a window inside the resized image then becomes
// the box of the source it covers, resampled in one pass, and one reaching into the padding
// keeps the resized size, the whole image being resized first.
using WindowDraw = void (*)(const TransformSpec& spec, int width, int height, SampleRng& rng, SampleParams* params);
void draw_window(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params,
                 WindowDraw window);

}  // namespace stoker::data::ops
