// The transform registry: every transform a chain may name, one entry each, in one explicit
// list (registry.cpp) in the order describe() writes them (BoxCrop and the geometry first, the
// output type and layout last; see stoker/data/transform.h). Each entry lives in its own file
// under ops/ and says, in one place, the names a chain calls it by (with lower-case aliases),
// the parameters each name binds, how the bound call sets its part of the TransformSpec, how
// describe() writes that part, how validate() checks it, whether RandomApply may wrap it, what
// evaluation makes of it, whether feature vectors may take it, and at run time its random
// draw, how it moves the targets' points (or that targets cannot follow it) and its run on the
// image. The chain builder looks names up here, the unknown-name message lists the names here,
// and describe(), validate(), eval_transform(), draw_params(), move_targets(),
// check_targets_can_follow() and the sample transformer walk the list; what spans several
// transforms (the geometry a Resize and a crop make together, sizes, channels, feature
// vectors, the source box, the fused resample and the write) stays with them. The list's order
// is the order chains are written in, the draw order (random_params.cpp) and the run order.
//
// Adding a transform: a file under ops/ defining its TransformOp (parameters, build, describe,
// validate, draw, point_map, run, refuses_targets, ...), a line in registry.cpp at its place
// in the draw and run order, its fields in TransformSpec and SampleParams, a test. The list is
// explicit on purpose: these are static libraries, whose linker would drop an object file that
// registers itself and that nothing references.
// Ownership and thread safety: entries are immutable static data, constant-initialised (no
// static-initialisation order to mind), read by any number of threads; nothing here allocates
// or keeps state.
// Errors: an entry's build throws UsageError naming the transform, the argument and the value
// as written; its validate throws UsageError naming the transform, the value and what is
// allowed; describe, draw, point_map and run do not throw; op_of throws std::logic_error for a
// step no entry has (a defect of the list).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "data/transform/chain/calls.h"
#include "point_map.h"
#include "stoker/data/transform.h"

namespace stoker::data {
class StageImage;
}
namespace stoker::data::chain {
struct ChainState;
}

namespace stoker::data::ops {

// A constant list in static storage: an array of any length, or none. Holds no copy.
template <typename T>
class List {
 public:
  constexpr List() = default;
  template <size_t N>
  constexpr List(const T (&items)[N]) : items_(items), size_(N) {}  // NOLINT(google-explicit-constructor)
  constexpr const T* begin() const { return items_; }
  constexpr const T* end() const { return items_ + size_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }

 private:
  const T* items_ = nullptr;
  size_t size_ = 0;
};

// One name a chain may call a transform by.
struct OpName {
  std::string_view name{};          // as written in a chain; case-sensitive, as torchvision's
  List<std::string_view> params{};  // bound as Python binds them: by position in this order, or by keyword
  // One call of it alone that parses, away from torchvision's defaults where it has any, so
  // that describe() writes it (the registry's test parses, describes and wraps each).
  std::string_view example{};
  bool listed = true;  // false: an alias (uint8 for ToUint8) that the unknown-name message leaves out
};

// The call's arguments bound to its name's params, in their order; null where not given.
using Args = std::vector<const chain::Value*>;

// What RandomApply([T], p) does with T.
enum class Wrap {
  kNo,      // refused (wrap_hint says what to use instead, if anything)
  kApplyP,  // T's apply_p (wrapped_p) becomes p: T runs on a share p of the samples
  kScaleP,  // T has a p of its own (wrapped_p), drawn per sample as RandomApply's is: the two multiply
};

// What a draw knows of the sample beyond the spec: the size of its image, in pixels (0 x 0
// when nothing was decoded): the source's, or after BoxCrop its crop's; and the keypoints and
// boxes BoxCrop crops around, in the source's pixels (null: none).
struct DrawContext {
  int width = 0;
  int height = 0;
  const GeometryTargets* targets = nullptr;
};

// The types of TransformOp's point_map and run (documented there), for entries that set them
// through traits (probability_op.h).
using PointMapFn = PointMap (*)(const TransformSpec& spec, const SampleParams& params);
using RunFn = void (*)(const TransformSpec& spec, const SampleParams& params, const Step* step, StageImage& image);

struct TransformOp {
  List<OpName> names{};  // the first is the transform's own name
  // Runs before the arguments are bound: what the call takes for the whole chain, which only
  // one call may (a geometry, an automatic augmentation), refused naming the other call. Null:
  // nothing.
  void (*claim)(chain::ChainState& state, const chain::Call& call) = nullptr;
  // Sets the transform's part of state->spec (and any claim in `state`) from the bound call;
  // `call.name` says which of `names` was used.
  void (*build)(chain::ChainState& state, const chain::Call& call, const Args& args) = nullptr;
  // Appends the transform's part of `spec` to a chain's text, in torchvision's notation with
  // its defaults left out, so that it parses back; nothing when it is off. Null: none to
  // write (the output type and layout are describe()'s tail).
  void (*describe)(const TransformSpec& spec, std::vector<std::string>* parts) = nullptr;
  // Throws UsageError when the transform's part of `spec` is out of range. Null: nothing to
  // check beyond what validate() checks for every spec.
  void (*validate)(const TransformSpec& spec) = nullptr;
  // Draws the transform's random parameters for one sample into `params`, as torchvision's
  // get_params draws them, when its part of `spec` is on (draws.h: inside RandomApply or
  // RandomChoice, first whether it runs). draw_params() calls every entry's draw in the
  // registry's order, which is the draw order (random_params.cpp). Null: draws nothing.
  void (*draw)(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) = nullptr;
  // How the transform moved the output's points for the sample `params` describes
  // (point_map.h), for the targets that follow the image (sample_geometry.cpp walks the
  // entries in run order); the identity when it did not run for the sample. Null: it moves
  // none (not geometric, or the crop and resize, which the source box covers).
  PointMapFn point_map = nullptr;
  // Runs the transform on the sample's image between the geometry and the write
  // (stage_image.h), as drawn in `params`, for `step` (one of `steps`; null for an entry
  // without), doing nothing when it does not run for the sample. The sample transformer walks
  // the entries in run order (for_each_in_run_order). Null: it runs elsewhere (the geometry,
  // Pad and the flips in the fused resample, Grayscale, Normalize, the output type and layout in
  // the write, RandomErasing on the output) or only through another entry (RandomApply).
  RunFn run = nullptr;
  // How check_targets_can_follow() names the transform when targets cannot follow it as `spec`
  // sets it (its warp is drawn per pixel or per operation); null when they can. Null: always.
  const char* (*refuses_targets)(const TransformSpec& spec) = nullptr;
  Wrap wrap = Wrap::kNo;
  // kApplyP, kScaleP: the probability RandomApply sets or scales, in `spec`, for `name`.
  double* (*wrapped_p)(TransformSpec* spec, std::string_view name) = nullptr;
  // kNo: appended to RandomApply's refusal after "; " (empty: nothing), e.g. "use RandomGrayscale(p)".
  std::string_view wrap_hint{};
  // kApplyP, kScaleP: the chain step each of `names` is (one per name, in their order), which
  // RandomChoice and RandomOrder pick or reorder, and the step as a chain writes it alone
  // (without RandomApply; empty when it is off), which they describe their members by.
  List<Step> steps{};
  std::string (*step_text)(const TransformSpec& spec, Step step) = nullptr;
  // What eval_transform() makes of the transform's part of `eval`, a copy of `train`: a random
  // augmentation turns itself off (off_in_eval), a random crop becomes its centre crop. Null:
  // kept as in training.
  void (*for_eval)(const TransformSpec& train, TransformSpec* eval) = nullptr;
  // Feature vectors may take it ('none', Standardize, Grayscale). Every other transform that
  // describe() writes is an image transform, which validate() refuses on feature vectors.
  bool on_features = false;
  // The GPU finishes it after nvJPEG (decode='gpu', stoker/data/gpu_sample.h): the geometries
  // that resample a box of the source, the flips, Normalize and the output's type and layout.
  // A chain with any other transform on decodes on the CPU (gpu_finishing_blocker()).
  bool on_gpu = false;
  // What the transform does, in words, for the data reference (docs/reference/data.md, which
  // `stoker help data --markdown` writes from this registry): torchvision's semantics it keeps,
  // what is tested against torchvision, what it refuses. Markdown, one paragraph; the registry's
  // test checks that every entry has one.
  std::string_view doc{};
};

// A for_eval that resets the TransformSpec member `Part` to its default, i.e. off.
template <auto Part>
void off_in_eval(const TransformSpec& /*train*/, TransformSpec* eval) {
  eval->*Part = {};
}

// The entries whose Wrap is not kNo, as RandomApply's, RandomChoice's and RandomOrder's messages
// name them (the registry's test checks that the two agree).
inline constexpr std::string_view kWrappable =
    "ColorJitter, GaussianBlur, RandomRotation, RandomAffine, RandomPerspective, ElasticTransform or a colour "
    "operation (RandomInvert, RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, "
    "RandomEqualize)";

// Every entry, in the order describe() writes them.
List<const TransformOp*> registry();

// The entry a chain's `name` calls, with the OpName matched; {nullptr, nullptr} when none.
struct FoundOp {
  const TransformOp* op = nullptr;
  const OpName* name = nullptr;
};
FoundOp find_op(std::string_view name);

// The step `found` (an entry and one of its names) is; false for an entry without steps.
bool step_of(const FoundOp& found, Step* step);

// The entry whose steps include `step`, the one RandomChoice and RandomOrder name by it.
const TransformOp& op_of(Step step);

// Calls visit(op, step) for every entry in registry order, the order a sample runs them in:
// `step` null for an entry without steps, else once per step of the entry, each a step of it;
// a RandomOrder's members one after another at the place of the first of them, in the order
// drawn (params.order).
template <typename Visit>
void for_each_in_run_order(const TransformSpec& spec, const SampleParams& params, Visit&& visit) {
  bool order_done = false;
  for (const TransformOp* op : registry()) {
    if (op->steps.empty()) visit(*op, static_cast<const Step*>(nullptr));
    for (const Step& step : op->steps) {
      if (!spec.order.has(step)) {
        visit(*op, &step);
      } else if (!order_done) {
        order_done = true;
        for (int k = 0; k < params.order_size; ++k) {
          const auto member = static_cast<Step>(params.order[static_cast<size_t>(k)]);
          visit(op_of(member), &member);
        }
      }
    }
  }
}

// The names the unknown-name message lists: every listed name, in registry order.
std::vector<std::string_view> listed_names();

// Throws UsageError for a transform named `name` that is not in the registry: "unknown
// transform 'X' (known: ...)", with "; did you mean 'Y'?" when one is close.
[[noreturn]] void throw_unknown_transform(std::string_view name);

}  // namespace stoker::data::ops
