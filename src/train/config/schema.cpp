// The schema table and the text conversions behind stoker/train/config.h.
#include "train/config/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>

#include "stoker/core/error.h"
#include "stoker/core/suggest.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader_keys.h"

namespace stoker::train {

namespace {

// A new optimizer: a row here, OptimizerKind, make_optimizer (setup.cpp) and, if it has a
// momentum, set_momentum (step.cpp).
constexpr std::array<OptimizerSpec, 3> kOptimizerSpecs = {{
    {OptimizerKind::kAdamW, "adamw", "AdamW (decoupled weight decay; onecycle cycles its beta1)", false, false, 0, 0},
    {OptimizerKind::kSgd, "sgd", "SGD (L2 weight decay, momentum, nesterov)", true, true, 0, 0},
    {OptimizerKind::kRmsprop, "rmsprop",
     "RMSprop as torchvision's --opt rmsprop (L2 weight decay, momentum; alpha 0.9, eps 0.0316)", true, false, 0.9,
     0.0316},
}};

}  // namespace

std::span<const OptimizerSpec> optimizer_specs() { return kOptimizerSpecs; }

const OptimizerSpec& optimizer_spec(OptimizerKind kind) {
  for (const OptimizerSpec& spec : kOptimizerSpecs) {
    if (spec.kind == kind) return spec;
  }
  throw std::logic_error(fmt::format("no optimizer_specs() row for OptimizerKind {}", static_cast<int>(kind)));
}

namespace detail {
namespace {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

constexpr std::array<EnumName<AmpMode>, 3> kAmpModes = {
    {{AmpMode::kOff, "off"}, {AmpMode::kBf16, "bf16"}, {AmpMode::kFp16, "fp16"}}};
constexpr std::array<EnumName<ScheduleKind>, 17> kSchedules = {
    {{ScheduleKind::kConstant, "constant"},
     {ScheduleKind::kCosine, "cosine"},
     {ScheduleKind::kStep, "step"},
     {ScheduleKind::kExponential, "exponential"},
     {ScheduleKind::kMultiStep, "multistep"},
     {ScheduleKind::kOneCycle, "onecycle"},
     {ScheduleKind::kPlateau, "plateau"},
     {ScheduleKind::kPolynomial, "polynomial"},
     {ScheduleKind::kCosineRestarts, "cosine_restarts"},
     // PyTorch's class names, as torchvision's --lr-scheduler writes them; to_string gives the
     // ones above.
     {ScheduleKind::kCosine, "cosineannealinglr"},
     {ScheduleKind::kStep, "steplr"},
     {ScheduleKind::kExponential, "exponentiallr"},
     {ScheduleKind::kMultiStep, "multisteplr"},
     {ScheduleKind::kOneCycle, "onecyclelr"},
     {ScheduleKind::kPlateau, "reducelronplateau"},
     {ScheduleKind::kPolynomial, "polynomiallr"},
     {ScheduleKind::kCosineRestarts, "cosineannealingwarmrestarts"}}};

constexpr std::array<EnumName<TaskKind>, 3> kTasks = {
    {{TaskKind::kAuto, "auto"}, {TaskKind::kClassification, "classification"}, {TaskKind::kRegression, "regression"}}};
constexpr std::array<EnumName<LossKind>, 5> kLosses = {{{LossKind::kAuto, "auto"},
                                                        {LossKind::kCrossEntropy, "cross_entropy"},
                                                        {LossKind::kMse, "mse"},
                                                        {LossKind::kL1, "l1"},
                                                        {LossKind::kSmoothL1, "smooth_l1"}}};

std::span<const EnumName<AmpMode>> enum_names(AmpMode) { return kAmpModes; }
// The input pipeline's table spells cache's words (stoker/data/loader_keys.h), in CacheKind's order.
std::span<const EnumName<CacheKind>> enum_names(CacheKind) {
  static const std::array<EnumName<CacheKind>, 2> names = [] {
    const auto words = data::loader_key(data::LoaderKey::kCache).words;
    return std::array<EnumName<CacheKind>, 2>{{{CacheKind::kNone, words[0].cli}, {CacheKind::kDecoded, words[1].cli}}};
  }();
  return names;
}
// And decode's (data::DecodeMode's order is its row's).
std::span<const EnumName<data::DecodeMode>> enum_names(data::DecodeMode) {
  static const std::array<EnumName<data::DecodeMode>, 3> names = [] {
    const auto words = data::loader_key(data::LoaderKey::kDecode).words;
    return std::array<EnumName<data::DecodeMode>, 3>{{{data::DecodeMode::kCpu, words[0].cli},
                                                      {data::DecodeMode::kGpu, words[1].cli},
                                                      {data::DecodeMode::kAuto, words[2].cli}}};
  }();
  return names;
}
std::span<const EnumName<TaskKind>> enum_names(TaskKind) { return kTasks; }
std::span<const EnumName<LossKind>> enum_names(LossKind) { return kLosses; }
// The optimizer table's names (optimizer_specs()), in its order.
std::span<const EnumName<OptimizerKind>> enum_names(OptimizerKind) {
  static const auto names = [] {
    std::array<EnumName<OptimizerKind>, kOptimizerSpecs.size()> out{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = {kOptimizerSpecs[i].kind, kOptimizerSpecs[i].name};
    return out;
  }();
  return names;
}
std::span<const EnumName<ScheduleKind>> enum_names(ScheduleKind) { return kSchedules; }

template <typename E>
std::string enum_text(E value) {
  for (const auto& entry : enum_names(E{})) {
    if (entry.value == value) return std::string(entry.name);
  }
  return fmt::format("<{}>", static_cast<int>(value));  // only for a value cast from an int
}

template <typename E>
std::string enum_list(std::string_view separator) {
  std::string list;
  for (const auto& entry : enum_names(E{})) {
    if (!list.empty()) list += separator;
    list += entry.name;
  }
  return list;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// What to write instead of a value another training script takes for the key.
template <typename E>
std::string_view foreign_value_hint(E, std::string_view) {
  return "";
}
std::string_view foreign_value_hint(OptimizerKind, std::string_view text) {
  if (equals_ignoring_case(text, "sgd_nesterov")) return "; torchvision's --opt sgd_nesterov is --opt sgd --nesterov";
  return "";
}

template <typename E>
E parse_enum(std::string_view text, const std::string& what) {
  for (const auto& entry : enum_names(E{})) {
    if (equals_ignoring_case(text, entry.name)) return entry.value;
  }
  throw UsageError(
      fmt::format("{} must be one of {} (got '{}'){}", what, enum_list<E>(", "), text, foreign_value_hint(E{}, text)));
}

template <typename T>
T parse_integer(std::string_view text, const std::string& what) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  T value{};
  const char* end = digits.data() + digits.size();
  auto [stop, error] = std::from_chars(digits.data(), end, value);
  const bool negative_unsigned = std::is_unsigned_v<T> && !digits.empty() && digits[0] == '-' &&
                                 digits.find_first_not_of("0123456789", 1) == std::string_view::npos;
  if (error == std::errc::result_out_of_range || negative_unsigned) {
    throw UsageError(fmt::format("{} must be an integer from {} to {} (got '{}')", what, std::numeric_limits<T>::min(),
                                 std::numeric_limits<T>::max(), text));
  }
  if (error != std::errc() || stop != end) {
    throw UsageError(fmt::format("{} must be an integer (got '{}')", what, text));
  }
  return value;
}

double parse_number(std::string_view text, const std::string& what) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  double value = 0;
  const char* end = digits.data() + digits.size();
  auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (error != std::errc() || stop != end) {
    throw UsageError(fmt::format("{} must be a number (got '{}')", what, text));
  }
  if (!std::isfinite(value)) {
    throw UsageError(fmt::format("{} must be a finite number (got '{}')", what, text));
  }
  return value;
}

// YAML 1.1 and CLI11 spellings both, since a value can come from either.
bool parse_bool(std::string_view text, const std::string& what) {
  for (const std::string_view yes : {"true", "yes", "on", "1"}) {
    if (equals_ignoring_case(text, yes)) return true;
  }
  for (const std::string_view no : {"false", "no", "off", "0"}) {
    if (equals_ignoring_case(text, no)) return false;
  }
  throw UsageError(fmt::format("{} must be true or false (got '{}')", what, text));
}

std::string number_text(double value) {
  // Shortest text that reads back to the same double, so to_yaml() round-trips exactly.
  std::array<char, 32> buffer{};
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc()) return fmt::format("{}", value);
  return std::string(buffer.data(), end);
}

// The type a Member points at.
template <typename P>
using ValueOf = std::remove_cvref_t<decltype(std::declval<TrainConfig&>().*std::declval<P>())>;

// "Optimizer: adamw: AdamW (...); sgd: ..." from the optimizer table.
std::string optimizer_help() {
  std::string text = "Optimizer: ";
  for (const OptimizerSpec& spec : optimizer_specs()) {
    if (spec.kind != optimizer_specs().front().kind) text += "; ";
    text += fmt::format("{}: {}", spec.name, spec.description);
  }
  return text;
}

}  // namespace

// "sgd or rmsprop": the optimizers whose row has `flag`.
std::string optimizer_names_where(bool OptimizerSpec::*flag) {
  std::vector<std::string_view> names;
  for (const OptimizerSpec& spec : optimizer_specs()) {
    if (spec.*flag) names.push_back(spec.name);
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ");
    text += names[i];
  }
  return text;
}

namespace {

// A key of the input pipeline's table (stoker/data/loader_keys.h): its name, help, aliases and
// range are the table's; `note` says what else it means to the trainer.
Field loader_field(data::LoaderKey key, Member member, std::string_view note = "") {
  const data::LoaderKeySpec& row = data::loader_key(key);
  Field field{std::string(row.yaml), member, data::help_text(row, data::FrontEnd::kCommandLine), {}};
  if (!note.empty()) field.help += "; " + std::string(note);
  std::string flag(row.flag.substr(2));  // "--prefetch-factor" -> "prefetch_factor"
  std::replace(flag.begin(), flag.end(), '-', '_');
  if (flag != row.yaml) field.aliases.push_back(flag);
  field.aliases.insert(field.aliases.end(), row.aliases.begin(), row.aliases.end());
  field.takes_auto = std::any_of(row.extras.begin(), row.extras.end(),
                                 [](const data::KeyExtra& extra) { return extra.cli == "auto"; });
  const std::string hint = field.takes_auto ? "; or auto" : "";
  if (row.type == data::KeyType::kInt && (row.lo > 0 || row.hi < std::numeric_limits<uint64_t>::max())) {
    field.range = Range::between(static_cast<double>(row.lo), static_cast<double>(row.hi), hint);
  } else if (row.type == data::KeyType::kNumber) {
    field.range =
        std::isfinite(row.max) ? Range::in(row.min, row.max, false, false, hint) : Range::at_least(row.min, hint);
  }
  return field;
}

// A new key: a member of TrainConfig and a row here (same order) with its range; validate()
// checks the ranges and keeps the rules across keys.
std::vector<Field> make_fields() {
  using C = TrainConfig;
  return {
      {"model", &C::model, "Model: " + model_names_text(), {}},
      {"data",
       &C::data,
       "Training data: " + data::data_formats_text() +
           "; a quoted pattern names shards ('shards/train-*.tar', 'shards/train-{000000..000146}.tar')",
       {}},
      {"val_data",
       &C::val_data,
       "Validation data, same kinds; empty = the IDX t10k split or an .npz's, .pt's or .h5's x_val or x_test (or "
       "val/test "
       "group), else none",
       {}},
      {"val_split",
       &C::val_split,
       "Hold out this fraction of the training data for validation, in [0, 1), each class in proportion (seeded by "
       "seed); 0 = none. Replaces the data's own test split; not with val_data",
       {},
       false,
       Range::in(0, 1, false, true)},
      {"transforms",
       &C::transforms,
       "Transform chain, torchvision style, e.g. 'RandomResizedCrop(224), "
       "RandomHorizontalFlip()', or 'Standardize' / 'none' for feature vectors; empty = the data's default",
       {}},
      {"val_transforms",
       &C::val_transforms,
       "Validation's transform chain; empty = the training chain made deterministic: RandomResizedCrop(S) -> "
       "Resize(S/0.875), CenterCrop(S), RandomCrop(S, ...) -> CenterCrop(S) (after a Resize(n), either "
       "-> Resize(n), CenterCrop(S)), no flips, ColorJitter or automatic augmentations",
       {}},
      {"auto_augment",
       &C::auto_augment,
       "Automatic augmentation added to the training chain after the flip, as torchvision's --auto-augment: ta_wide "
       "(TrivialAugmentWide), ra (RandAugment), imagenet, cifar10 or svhn (AutoAugment's policies) or augmix (AugMix), "
       "with interpolation's filter as its script; none = off",
       {},
       false,
       Range::one_of({kAutoAugmentNames.begin(), kAutoAugmentNames.end()})},
      {"ra_magnitude",
       &C::ra_magnitude,
       "RandAugment's magnitude with auto_augment ra, 0..30 (torchvision's --ra-magnitude)",
       {},
       false,
       Range::between(0, 30, "; RandAugment has 31 magnitude bins")},
      {"augmix_severity",
       &C::augmix_severity,
       "AugMix's severity with auto_augment augmix, 1..10 (torchvision's --augmix-severity)",
       {},
       false,
       Range::between(1, 10, "; AugMix's magnitudes come from the bins below it, of 10")},
      {"random_erase",
       &C::random_erase,
       "RandomErasing's probability, added to the training chain after Normalize (torchvision's --random-erase; 0.1 "
       "and 0.25 are common); 0 = off",
       {},
       false,
       Range::in(0, 1, false, false)},
      {"ra_sampler",
       &C::ra_sampler,
       "Repeated augmentation, as torchvision's --ra-sampler: an epoch takes each of 1/ra_reps of the samples "
       "ra_reps times in a row, each copy transformed with its own draws (as many samples per epoch as without it, "
       "rounded down to a multiple of 256)",
       {}},
      {"ra_reps",
       &C::ra_reps,
       "Copies of each sample with ra_sampler, 1..64 (torchvision's --ra-reps)",
       {},
       false,
       Range::between(1, 64, "; 3 and 4 are common")},
      {"interpolation",
       &C::interpolation,
       "Resample filter of the training and validation chains and of auto_augment's warps, bilinear or bicubic "
       "(torchvision's --interpolation)",
       {},
       false,
       Range::one_of({"bilinear", "bicubic"})},
      {"train_crop_size",
       &C::train_crop_size,
       "Size of the default chain's RandomResizedCrop (torchvision's --train-crop-size, e.g. 176); 0 = its own (224)",
       {},
       false,
       Range::between(0, 8192, "; 0 = the chain's own")},
      {"val_resize_size",
       &C::val_resize_size,
       "Validation's Resize (torchvision's --val-resize-size, e.g. 232); with it, or either crop size, validation is "
       "Resize(val_resize_size or 256), CenterCrop(val_crop_size or 224) as torchvision's eval preset; 0 = not given",
       {},
       false,
       Range::between(0, 8192, "; 0 = not given")},
      {"val_crop_size",
       &C::val_crop_size,
       "Validation's CenterCrop (torchvision's --val-crop-size); 0 = not given (see val_resize_size)",
       {},
       false,
       Range::between(0, 8192, "; 0 = not given")},
      {"task",
       &C::task,
       "What the targets are: auto (class ids -> classification, float targets -> regression), "
       "classification or regression",
       {}},
      {"loss",
       &C::loss,
       "Loss: auto (cross_entropy for classification, mse for regression), cross_entropy, mse, l1 "
       "or smooth_l1",
       {}},
      {"epochs", &C::epochs, "Passes over the training data", {}, false, Range::at_least(1)},
      loader_field(data::LoaderKey::kBatchSize, &C::batch_size, "an optimizer step sees accumulation_steps batches"),
      {"lr", &C::lr, "Learning rate (the peak, after warmup)", {"learning_rate"}, false, Range::above(0)},
      {"optimizer", &C::optimizer, optimizer_help(), {"opt"}},
      {"weight_decay",
       &C::weight_decay,
       "Weight decay (decoupled for adamw, L2 for the others)",
       {"wd"},
       false,
       Range::at_least(0)},
      {"norm_weight_decay",
       &C::norm_weight_decay,
       "Weight decay of the normalization layers' weights and biases (BatchNorm, GroupNorm, LayerNorm), as "
       "torchvision's --norm-weight-decay (its ResNet and EfficientNet recipes use 0); auto = weight_decay",
       {},
       true},
      {"momentum",
       &C::momentum,
       "Momentum of " + optimizer_names_where(&OptimizerSpec::takes_momentum) + ", in [0, 1)",
       {},
       false,
       Range::in(0, 1, false, true)},
      {"nesterov",
       &C::nesterov,
       "Nesterov momentum (" + optimizer_names_where(&OptimizerSpec::takes_nesterov) + "; needs momentum > 0)",
       {}},
      {"schedule",
       &C::schedule,
       "Learning-rate schedule after warmup: constant, cosine (to lr_min at the end), step (x step_gamma every "
       "step_every_epochs epochs), exponential (x step_gamma every epoch), multistep (x step_gamma at each of "
       "lr_milestones), onecycle (PyTorch's OneCycleLR with lr as max_lr; it warms up itself), plateau "
       "(ReduceLROnPlateau on plateau_metric), polynomial (PolynomialLR: lr x (1 - t/T)^poly_power to 0) or "
       "cosine_restarts (CosineAnnealingWarmRestarts: cosine to lr_min over restart_epochs, then again, each "
       "cycle restart_mult times longer); PyTorch's class names cosineannealinglr, steplr, exponentiallr, "
       "multisteplr, onecyclelr, reducelronplateau, polynomiallr and cosineannealingwarmrestarts name them too. "
       "Epochs count from the warmup's end",
       {"lr_scheduler"}},
      {"warmup_steps",
       &C::warmup_steps,
       "Optimizer steps of warmup before the schedule (see warmup_method)",
       {},
       false,
       Range::at_least(0)},
      {"warmup_epochs",
       &C::warmup_epochs,
       "Warmup as epochs of optimizer steps (torchvision's --lr-warmup-epochs; stoker sets the rate each step, "
       "torchvision's script each epoch); not with warmup_steps",
       {"lr_warmup_epochs"},
       false,
       Range::at_least(0)},
      {"warmup_method",
       &C::warmup_method,
       "Warmup's shape: linear (from lr x warmup_decay up to lr) or constant (lr x warmup_decay throughout), as "
       "torchvision's --lr-warmup-method (whose script defaults to constant)",
       {"lr_warmup_method"},
       false,
       Range::one_of({"linear", "constant"})},
      {"warmup_decay",
       &C::warmup_decay,
       "The fraction of lr the warmup starts at, in [0, 1] (torchvision's --lr-warmup-decay)",
       {"lr_warmup_decay"},
       false,
       Range::in(0, 1, false, false)},
      {"lr_min",
       &C::lr_min,
       "Where the cosine schedule ends, in [0, lr] (torchvision's --lr-min); the bottom of each cosine_restarts cycle "
       "(its eta_min); the plateau schedule's floor (its min_lr)",
       {"min_lr"}},
      {"step_gamma",
       &C::step_gamma,
       "Schedules step, exponential and multistep: multiply lr by this, in (0, 1] ...",
       {"lr_gamma", "gamma"},
       false,
       Range::in(0, 1, true, false)},
      {"step_every_epochs",
       &C::step_every_epochs,
       "... every this many epochs (step; exponential: every epoch)",
       {"lr_step_size"},
       false,
       Range::at_least(1)},
      {"lr_milestones",
       &C::lr_milestones,
       "... at each of these epochs (multistep; MultiStepLR's milestones), increasing, e.g. '30, 60, 80' or a "
       "YAML list",
       {"milestones"}},
      {"pct_start",
       &C::pct_start,
       "onecycle: the share of the run spent rising to lr, in (0, 1)",
       {},
       false,
       Range::in(0, 1, true, true, "; OneCycleLR's default is 0.3")},
      {"div_factor",
       &C::div_factor,
       "onecycle: it starts at lr / div_factor, > 0",
       {},
       false,
       Range::finite_above(0, "; OneCycleLR's default is 25")},
      {"final_div_factor",
       &C::final_div_factor,
       "onecycle: it ends at lr / div_factor / final_div_factor, > 0",
       {},
       false,
       Range::finite_above(0, "; OneCycleLR's default is 10000")},
      {"anneal_strategy",
       &C::anneal_strategy,
       "onecycle: cos or linear between its points",
       {},
       false,
       Range::one_of({"cos", "linear"})},
      {"three_phase",
       &C::three_phase,
       "onecycle: fall back to lr / div_factor over another pct_start of the run before the last fall",
       {}},
      {"cycle_momentum",
       &C::cycle_momentum,
       "onecycle: move the momentum (AdamW's beta1) from max_momentum to base_momentum while the rate rises, and "
       "back while it falls, as OneCycleLR does by default (the momentum key is then not used)",
       {}},
      {"base_momentum", &C::base_momentum, "onecycle: the momentum at the peak rate, in [0, max_momentum]", {}},
      {"max_momentum", &C::max_momentum, "onecycle: the momentum at the lowest rates, in [base_momentum, 1)", {}},
      {"plateau_factor",
       &C::plateau_factor,
       "plateau: multiply lr by this, in (0, 1), when the validation loss has stalled (ReduceLROnPlateau's factor; "
       "lr_min is its floor, its min_lr)",
       {},
       false,
       Range::in(0, 1, true, true, "; ReduceLROnPlateau's default is 0.1")},
      {"plateau_patience",
       &C::plateau_patience,
       "plateau: epochs without a better validation loss that are tolerated; the next one lowers lr (its patience)",
       {},
       false,
       Range::at_least(0)},
      {"plateau_threshold",
       &C::plateau_threshold,
       "plateau: how much lower than the best a loss must be to count as better, >= 0 (its threshold)",
       {},
       false,
       Range::finite_at_least(0, "")},
      {"plateau_threshold_mode",
       &C::plateau_threshold_mode,
       "plateau: rel (threshold is a share of the best) or abs (an amount), as its threshold_mode",
       {},
       false,
       Range::one_of({"rel", "abs"})},
      {"plateau_cooldown",
       &C::plateau_cooldown,
       "plateau: epochs after a lowering before stalls count again",
       {},
       false,
       Range::at_least(0)},
      {"plateau_metric",
       &C::plateau_metric,
       "plateau: the validation figure it watches: val_loss (lower is better), val_top1 (higher is better; "
       "classification) or val_mae (lower; regression), as ReduceLROnPlateau's mode min or max",
       {},
       false,
       Range::one_of({"val_loss", "val_top1", "val_mae"})},
      {"poly_power",
       &C::poly_power,
       "polynomial: the exponent of (1 - t/T), > 0 (PolynomialLR's power)",
       {"power"},
       false,
       Range::finite_above(0, "; PolynomialLR's default is 1, torchvision's segmentation recipe uses 0.9")},
      {"restart_epochs",
       &C::restart_epochs,
       "cosine_restarts: epochs of the first cycle, >= 1 (CosineAnnealingWarmRestarts' T_0)",
       {"t_0"},
       false,
       Range::at_least(1, "; it is the first cycle's length in epochs, CosineAnnealingWarmRestarts' T_0")},
      {"restart_mult",
       &C::restart_mult,
       "cosine_restarts: each cycle is this many times longer than the one before, >= 1 (its T_mult)",
       {"t_mult"},
       false,
       Range::at_least(1, "; 1 keeps every cycle restart_epochs long, 2 doubles each")},
      {"label_smoothing",
       &C::label_smoothing,
       "Cross-entropy label smoothing, in [0, 1)",
       {},
       false,
       Range::in(0, 1, false, true)},
      {"mixup_alpha",
       &C::mixup_alpha,
       "MixUp: blend each batch with itself shifted by one sample, x = λ·x + (1 − λ)·x', targets likewise, "
       "λ ~ Beta(α, α) (torchvision's --mixup-alpha; 0.2 is common). Classification only; 0 = off",
       {},
       false,
       Range::finite_at_least(0, "; 0 turns it off, 0.2 is a common choice")},
      {"cutmix_alpha",
       &C::cutmix_alpha,
       "CutMix: paste a box of the batch shifted by one sample into each image, targets mixed by its area, "
       "λ ~ Beta(α, α) (torchvision's --cutmix-alpha; 1.0 is common). Images only; with mixup_alpha each "
       "batch takes one of the two; 0 = off",
       {},
       false,
       Range::finite_at_least(0, "; 0 turns it off, 1.0 is a common choice")},
      {"clip_grad_norm",
       &C::clip_grad_norm,
       "Clip the gradients' total L2 norm to this before each optimizer step (after accumulation, the "
       "averaging over processes and fp16 unscaling), as torch.nn.utils.clip_grad_norm_; 0 = off",
       {"max_grad_norm"},
       false,
       Range::finite_at_least(0, "; 0 turns clipping off, 1.0 is a common choice")},
      {"early_stopping_patience",
       &C::early_stopping_patience,
       "Stop when validation's figure (top-1 accuracy, or MAE for regression) has not improved for this many "
       "epochs; the best epoch's weights are in model_best.safetensors. Needs validation data; 0 = off",
       {"patience"},
       false,
       Range::at_least(0)},
      {"ema_decay",
       &C::ema_decay,
       "Keep an exponential moving average of the weights with this decay (timm's model_ema, e.g. 0.9998), "
       "updated after each optimizer step; validation judges it and model_ema.safetensors holds it; 0 = off",
       {"model_ema_decay"},
       false,
       Range::in(0, 1, false, true, "; 0 turns the average off, 0.9998 and 0.999 are common choices")},
      {"ema_steps",
       &C::ema_steps,
       "Fold the weights into the moving average every this many optimizer steps (torchvision's "
       "--model-ema-steps), 1..100000, or auto: 1, or 32 with model_ema",
       {"model_ema_steps"},
       true,
       Range::between(1, 100000, "; 1 = every optimizer step, or auto")},
      {"model_ema",
       &C::model_ema,
       "Keep the moving average as torchvision's --model-ema does: each update's decay is 1 - (1 - ema_decay) x "
       "processes x batch_size x accumulation_steps x ema_steps / epochs (ema_decay default 0.99998), and the "
       "average copies the weights until the warmup ends. Without it, ema_decay is each update's decay",
       {}},
      loader_field(data::LoaderKey::kWorkers, &C::num_workers),
      loader_field(data::LoaderKey::kPrefetchFactor, &C::prefetch_factor),
      loader_field(data::LoaderKey::kCache, &C::cache),
      loader_field(data::LoaderKey::kCacheMaxGb, &C::cache_max_gb),
      loader_field(data::LoaderKey::kChunkShuffleGb, &C::chunk_shuffle_gb),
      loader_field(data::LoaderKey::kPinMemory, &C::pin_memory),
      loader_field(data::LoaderKey::kDecode, &C::decode),
      {"persistent_workers", &C::persistent_workers, "Keep the loader's workers between epochs", {}},
      // The alias is a flag without a value (--use-amp = bf16); see ConfigFlags::add_to().
      {"amp", &C::amp, "Mixed precision: off, bf16 or fp16 (--use-amp = bf16)", {"use_amp"}},
      {"accumulation_steps",
       &C::accumulation_steps,
       "Batches whose gradients add up before each optimizer step",
       {"accum_steps"},
       false,
       Range::at_least(1)},
      loader_field(data::LoaderKey::kSeed, &C::seed, "also of the model's initialization"),
      {"threads",
       &C::threads,
       "libtorch intra-op threads, 1..1024; 0 = OMP_NUM_THREADS, else every usable core (on the CPU, "
       "stoker doctor measures whether leaving the loader's cores free is faster)",
       {},
       false,
       Range::between(0, 1024, "; 0 = automatic")},
      {"nproc_per_node",
       &C::nproc_per_node,
       "Training processes on this machine, data parallel (one per GPU): each takes 1/N of every epoch in "
       "batches of batch_size and the gradients are averaged before each optimizer step; 1..1024. Under "
       "torchrun (RANK and WORLD_SIZE set) its processes are used instead",
       {"nproc"},
       false,
       Range::between(1, 1024, "; 1 = this process alone")},
      {"checkpoint_every_steps",
       &C::checkpoint_every_steps,
       "Also checkpoint every N optimizer steps; 0 = at epoch end only (and on SIGINT/SIGTERM)",
       {},
       false,
       Range::at_least(0)},
      {"output_dir", &C::output_dir, "Where run directories are made", {}},
      {"tensorboard",
       &C::tensorboard,
       "TensorBoard event files in the run folder's tb/ (tensorboard --logdir runs/): loss, learning rate, "
       "samples/s and the step-time split per window, validation per epoch, GPU/CPU/RAM per monitor sample",
       {}},
      {"resume",
       &C::resume,
       "Resume from a checkpoint file or a run directory (its latest checkpoint), with the run's config.yaml: "
       "flags given change only their keys",
       {}},
      {"weights",
       &C::weights,
       "Start from these weights, as torchvision's --weights but a file: a .safetensors file (a stoker run's "
       "model.safetensors) or a torch.save'd state_dict (.pth, .pt) with the model's names, such as torchvision's "
       "pretrained ResNet-50; a classifier of another class count keeps its initialisation (fine-tuning). Not read "
       "on --resume",
       {}},
      {"device", &C::device, "Device: auto, cpu, cuda or cuda:N", {}},
      {"max_steps", &C::max_steps, "Stop after this many optimizer steps; 0 = no limit", {}, false, Range::at_least(0)},
      {"flip_negate",
       &C::flip_negate,
       "Float targets a horizontal flip negates, by target column name or index, comma-separated: a head pose's "
       "yaw,roll (a mirrored face turns and tilts the other way); empty = none",
       {}},
      {"exclude_list",
       &C::exclude_list,
       "A file naming training samples to leave out, one per line (what stoker scan -o writes); empty = none",
       {}},
      loader_field(data::LoaderKey::kMaxBadFraction, &C::max_bad_fraction),
  };
}

}  // namespace

std::string range_message(const Field& field, const TrainConfig& config) {
  const Range& r = field.range;
  if (r.kind == Range::Kind::kNone) return "";
  return std::visit(
      [&](auto member) -> std::string {
        using T = ValueOf<decltype(member)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          const T value = config.*member;
          if (field.takes_auto && value == static_cast<T>(kAuto)) return "";
          // Each comparison is written so that NaN fails it.
          const double x = static_cast<double>(value);
          switch (r.kind) {
            case Range::Kind::kAtLeast:
              if (x >= r.min) return "";
              return fmt::format("{} must be >= {} (got {}){}", field.name, r.min, value, r.hint);
            case Range::Kind::kFiniteAtLeast:
              if (x >= r.min && std::isfinite(x)) return "";
              return fmt::format("{} must be a finite number >= {} (got {}){}", field.name, r.min, value, r.hint);
            case Range::Kind::kAbove:
              if (x > r.min) return "";
              return fmt::format("{} must be > {} (got {}){}", field.name, r.min, value, r.hint);
            case Range::Kind::kFiniteAbove:
              if (x > r.min && std::isfinite(x)) return "";
              return fmt::format("{} must be a finite number > {} (got {}){}", field.name, r.min, value, r.hint);
            case Range::Kind::kBetween:
              if (x >= r.min && x <= r.max) return "";
              return fmt::format("{} must be between {} and {} (got {}){}", field.name, r.min, r.max, value, r.hint);
            case Range::Kind::kInterval:
              if ((r.min_open ? x > r.min : x >= r.min) && (r.max_open ? x < r.max : x <= r.max)) return "";
              return fmt::format("{} must be in {}{}, {}{} (got {}){}", field.name, r.min_open ? "(" : "[", r.min,
                                 r.max, r.max_open ? ")" : "]", value, r.hint);
            case Range::Kind::kNone:
            case Range::Kind::kOneOf:
              break;
          }
        } else if constexpr (std::is_same_v<T, std::string>) {
          const std::string& value = config.*member;
          if (r.kind != Range::Kind::kOneOf || std::find(r.words.begin(), r.words.end(), value) != r.words.end()) {
            return "";
          }
          return fmt::format("{} must be one of {} (got '{}'){}", field.name, fmt::join(r.words, ", "), value, r.hint);
        }
        return "";
      },
      field.member);
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = make_fields();
  return table;
}

const Field* find_field(std::string_view name) {
  for (const Field& field : fields()) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

std::string suggest_key(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Field& field : fields()) {
    // An alias or the other spelling of one (workers, learning-rate) means its key.
    for (const std::string& alias : field.aliases) {
      if (edit_distance(name, alias) == 0) return field.name;
    }
    names.push_back(field.name);
  }
  return std::string(closest(name, names));
}

bool is_bool(const Field& field) { return std::holds_alternative<bool TrainConfig::*>(field.member); }

bool is_string(const Field& field) { return std::holds_alternative<std::string TrainConfig::*>(field.member); }

std::string expected_phrase(const Field& field) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = ValueOf<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (field.range.kind == Range::Kind::kOneOf)
            return fmt::format("one of {}", fmt::join(field.range.words, ", "));
          return "a string";
        } else if constexpr (std::is_same_v<T, bool>) {
          return "true or false";
        } else if constexpr (std::is_same_v<T, double>) {
          return "a number";
        } else if constexpr (std::is_integral_v<T>) {
          return "an integer";
        } else {
          return "one of " + enum_list<T>(", ");
        }
      },
      field.member);
}

std::string type_name(const Field& field) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = ValueOf<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (field.range.kind == Range::Kind::kOneOf) return fmt::format("{{{}}}", fmt::join(field.range.words, ","));
          return "TEXT";
        } else if constexpr (std::is_same_v<T, bool>) {
          return "";  // a flag
        } else if constexpr (std::is_same_v<T, double>) {
          return "FLOAT";
        } else if constexpr (std::is_integral_v<T>) {
          return "INT";
        } else {
          return "{" + enum_list<T>(",") + "}";
        }
      },
      field.member);
}

void set_field(const Field& field, std::string_view text, const std::string& what, TrainConfig* config) {
  std::visit(
      [&](auto member) {
        auto& value = config->*member;
        using T = ValueOf<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          value = std::string(text);
        } else if constexpr (std::is_same_v<T, bool>) {
          value = parse_bool(text, what);
        } else if constexpr (std::is_same_v<T, double>) {
          if (field.takes_auto && text == "auto") {
            value = kAuto;
          } else {
            value = parse_number(text, what);
            // The stored sentinel (-1) is not a number a user may give.
            if (field.takes_auto && value < 0) {
              throw UsageError(fmt::format("{} must be a number >= 0, or auto (got '{}')", what, text));
            }
          }
        } else if constexpr (std::is_integral_v<T>) {
          if (!field.takes_auto) {
            value = parse_integer<T>(text, what);
          } else if (text == "auto") {
            value = static_cast<T>(kAuto);
          } else {
            // Numbers as usual, but the stored sentinel (-1) is not a number a user may give.
            const bool digits = !text.empty() && text.find_first_not_of("+-0123456789") == std::string_view::npos;
            if (!digits) throw UsageError(fmt::format("{} must be an integer or auto (got '{}')", what, text));
            value = parse_integer<T>(text, what);
            if (value == static_cast<T>(kAuto)) {
              throw UsageError(fmt::format("{} must be at least 1, or auto (got '{}')", what, text));
            }
          }
        } else {
          static_assert(std::is_enum_v<T>);
          value = parse_enum<T>(text, what);
        }
      },
      field.member);
}

std::string field_text(const Field& field, const TrainConfig& config) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = config.*member;
        using T = ValueOf<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return field.takes_auto && value == kAuto ? std::string("auto") : number_text(value);
        } else if constexpr (std::is_integral_v<T>) {
          return field.takes_auto && value == static_cast<T>(kAuto) ? std::string("auto") : std::to_string(value);
        } else {
          return enum_text(value);
        }
      },
      field.member);
}

}  // namespace detail

std::string to_string(AmpMode mode) { return detail::enum_text(mode); }
std::string to_string(OptimizerKind kind) { return detail::enum_text(kind); }
std::string to_string(ScheduleKind kind) { return detail::enum_text(kind); }
std::string to_string(TaskKind kind) { return detail::enum_text(kind); }
std::string to_string(LossKind kind) { return detail::enum_text(kind); }
std::string to_string(CacheKind kind) { return detail::enum_text(kind); }

std::string model_names_text() {
  std::string text;
  for (const std::string_view name : kModelNames) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

}  // namespace stoker::train
