// BoxCrop(margin, sides, fill): each sample cropped around its own box or keypoints, with a
// margin drawn per sample, before the rest of the chain (BoxCropSpec, stoker/data/transform.h;
// the geometry in data/transform/box_crop.h).
#include "data/transform/box_crop.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace box_crop_op {

using chain::Value;

constexpr std::string_view kParams[] = {"margin", "sides", "fill", "union"};
constexpr OpName kNames[] = {{"BoxCrop", kParams, "BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2, 0.6, 0.6))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Crops each sample around its own box before the rest of the chain, as head-pose and face models train "
    "(Hopenet, 6DRepNet): the box is the sample's first box (`boxes=`, `stoker.Boxes`), else the extent of its "
    "visible keypoints (`keypoints=`, `.pts`, `stoker.Keypoints`). With the box's width w and height h and a margin "
    "k, `margin` a number or a range (min, max) drawn uniformly per sample, the box's left edge moves out by "
    "`sides[0]`·k·w, its top by `sides[1]`·k·h, its right by `sides[2]`·k·w and its bottom by `sides[3]`·k·h "
    "(`sides` one factor for all four, or (left, top, right, bottom); default 1), and each edge is truncated toward "
    "zero to a whole pixel, as `int()` does in those recipes. Hopenet's crop is `BoxCrop(margin=(0.2, 0.4), "
    "sides=(0.6, 2, 0.6, 0.6))` (Hopenet's code measures the right and bottom margins on the box already widened on "
    "the left and top, so its right and bottom edges lie a little further out); widening the box by a factor s on "
    "every side is `BoxCrop(margin=(s - 1) / 2)`. "
    "Past the image the crop holds `fill` (default 0, black, as PIL's `crop`). The rest of the chain takes the crop "
    "as its image, `Resize((224, 224))` after it as PIL's resize of the crop, and keypoints and boxes follow; the "
    "`box` of `return_params` is the source's region that became the output. Only the crop's part of the image is "
    "decoded, at a reduced scale where the output allows. A sample without a box (no box and no visible finite "
    "keypoint, a NaN box, one without area, or a crop wholly outside the image) is a bad sample, named with the "
    "reason. On clips (`frames_per_clip`), each chosen frame is cropped around its own box (`stoker.Boxes` (T, 4) "
    "or `stoker.Keypoints` (T, P, 2) beside a Dataset's frames, or `boxes=` / `keypoints=` with a row per frame) "
    "with the clip's one margin; a frame without a "
    "usable box takes the nearest chosen frame's, and a clip without any is a bad sample; the crops differ in size, "
    "and the rest of the chain takes each frame's crop as a frame of its own size, with the clip's one set of draws "
    "([Clips](#clips)). `union=True` crops every frame of a clip around one box instead, the union of its chosen "
    "frames' usable boxes, steadier where the face moves little (a mouth for lip reading). Data without keypoints or "
    "boxes is refused, and so is `stoker train`, which reads neither. Evaluation takes the middle of the margin's "
    "range.";

// margin: a number (fixed) or (min, max).
void set_margin(const chain::Call& call, const Value& v, BoxCropSpec* box) {
  if (v.kind == Value::Kind::kTuple) {
    const auto [lo, hi] = chain::to_range(call, "margin", v);
    box->margin_min = lo;
    box->margin_max = hi;
  } else {
    box->margin_min = box->margin_max = chain::to_number(call, "margin", v);
  }
}

// sides: one factor, or (left, top, right, bottom).
void set_sides(const chain::Call& call, const Value& v, BoxCropSpec* box) {
  if (v.kind != Value::Kind::kTuple) {
    const double s = chain::to_number(call, "sides", v);
    box->sides = {s, s, s, s};
  } else if (v.items.size() == 1) {
    const double s = chain::to_number(call, "sides", v.items[0]);
    box->sides = {s, s, s, s};
  } else if (v.items.size() == 4) {
    for (size_t k = 0; k < 4; ++k) box->sides[k] = chain::to_number(call, "sides", v.items[k]);
  } else {
    throw UsageError(fmt::format(
        "{} sides must be one factor or four, (left, top, right, bottom) (got '{}'); Hopenet's are (0.6, 2, 0.6, 0.6)",
        call.name, v.text));
  }
}

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  BoxCropSpec& box = state.spec.box_crop;
  box = BoxCropSpec{};
  box.on = true;
  if (args[0]) set_margin(call, *args[0], &box);
  if (args[1]) set_sides(call, *args[1], &box);
  if (args[2]) box.fill = chain::to_channels(call, "fill", *args[2]);
  if (args[3]) box.union_box = chain::to_bool(call, "union", *args[3]);
}

// Evaluation crops every sample the same way: the middle of the margin's range.
void for_eval(const TransformSpec& train, TransformSpec* eval) {
  const BoxCropSpec& box = train.box_crop;
  if (!box.enabled()) return;
  // Rounded to 9 decimals, so that (0.2 + 0.4) / 2 reads 0.3.
  const double middle = std::nearbyint((box.margin_min + box.margin_max) / 2 * 1e9) / 1e9;
  eval->box_crop.margin_min = eval->box_crop.margin_max = middle;
}

std::string sides_text(const std::array<double, 4>& s) {
  if (s[0] == s[1] && s[1] == s[2] && s[2] == s[3]) return fmt::format("{}", s[0]);
  return fmt::format("({}, {}, {}, {})", s[0], s[1], s[2], s[3]);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const BoxCropSpec& box = spec.box_crop;
  if (!box.enabled()) return;
  const BoxCropSpec defaults;
  std::vector<std::string> args;
  if (box.margin_min != box.margin_max) {
    args.push_back(fmt::format("margin=({}, {})", box.margin_min, box.margin_max));
  } else if (box.margin_min != 0) {
    args.push_back(fmt::format("margin={}", box.margin_min));
  }
  if (box.sides != defaults.sides) args.push_back("sides=" + sides_text(box.sides));
  if (box.fill != defaults.fill) {
    args.push_back(fmt::format("fill={}", box.fill[0] == box.fill[1] && box.fill[1] == box.fill[2]
                                              ? fmt::format("{}", box.fill[0])
                                              : spec::triple_text(box.fill)));
  }
  if (box.union_box) args.push_back("union=True");
  parts->push_back(fmt::format("BoxCrop({})", fmt::join(args, ", ")));
}

void validate(const TransformSpec& spec) {
  const BoxCropSpec& box = spec.box_crop;
  if (!box.enabled()) return;
  if (!(box.margin_min >= 0 && box.margin_min <= box.margin_max && std::isfinite(box.margin_max))) {
    const std::string got = box.margin_min == box.margin_max ? fmt::format("{}", box.margin_min)
                                                             : fmt::format("({}, {})", box.margin_min, box.margin_max);
    throw UsageError(fmt::format(
        "BoxCrop margin must be a finite k >= 0 or a range 0 <= min <= max (got {}); Hopenet's is (0.2, 0.4)", got));
  }
  for (const double s : box.sides) {
    if (!(s >= 0 && std::isfinite(s))) {
      throw UsageError(
          fmt::format("BoxCrop sides must be finite factors >= 0 (got {}); Hopenet's are (0.6, 2, 0.6, 0.6)",
                      sides_text(box.sides)));
    }
  }
  spec::check_fill("BoxCrop", box.fill);
}

// One uniform for a margin range, none for a fixed margin; the crop for the source's size from
// the sample's targets (none without them: the loader names the sample).
void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) {
  const BoxCropSpec& box = spec.box_crop;
  if (!box.enabled()) return;
  const double margin = box.margin_min < box.margin_max ? rng.uniform(box.margin_min, box.margin_max) : box.margin_min;
  params->subject_margin = margin;
  const BoxCropRegion region = box_crop_region(box, context.targets, margin, context.width, context.height);
  params->subject = region.fault == BoxCropFault::kNone ? region.crop : CropRect{};
}

}  // namespace box_crop_op

extern const TransformOp kBoxCropOp;
const TransformOp kBoxCropOp{.names = box_crop_op::kNames,
                             .build = box_crop_op::build,
                             .describe = box_crop_op::describe,
                             .validate = box_crop_op::validate,
                             .draw = box_crop_op::draw,
                             .for_eval = box_crop_op::for_eval,
                             .doc = box_crop_op::kDoc};

}  // namespace stoker::data::ops
