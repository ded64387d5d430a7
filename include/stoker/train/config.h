// stoker/train/config.h — what a training run is asked to do: one struct, filled from
// defaults, then a YAML file, then command-line flags, then checked once.
//
//   ConfigFlags flags;
//   flags.add_to(train_command);                        // --config FILE and one flag per key
//   ... parse ...
//   TrainConfig config = resolve_train_config(flags);  // defaults, [run's config.yaml], file, flags
//   validate(config);
//   std::fputs(to_yaml(config).c_str(), stdout);        // also saved as <run dir>/config.yaml
//
// One schema (config_keys()) drives the YAML keys, the flags, --help and to_yaml(), so a key
// added to TrainConfig and the schema is everywhere at once (as DALI does with its op schema).
// The input pipeline's keys (batch_size, num_workers, ...) are rows of the loader's own table,
// stoker/data/loader_keys.h, which also serves stoker.DataLoader and stoker bench loader.
// No torch here: this compiles in seconds and is tested without libtorch.
//
// Errors are UsageError, one line naming the key, the value and what is allowed:
//   c.yaml:7: unknown key 'num_worker' — did you mean 'num_workers'?
//   c.yaml:3: key 'epochs' must be an integer (got 'two')
//   --amp must be one of off, bf16, fp16 (got 'fp32')
//   batch_size must be between 1 and 65536 (got 0)
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/data/loader_keys.h"

namespace CLI {
class App;
}  // namespace CLI

namespace stoker::train {

// Every model the trainer builds (train/torch/model/models.cpp), in the order messages list them.
// resnet* and efficientnet_b* carry torchvision's module names, so their weights load there.
// auto_augment's values: torchvision's reference-script names.
inline constexpr std::array<std::string_view, 7> kAutoAugmentNames = {"none",    "ta_wide", "ra",    "imagenet",
                                                                      "cifar10", "svhn",    "augmix"};
inline constexpr std::array<std::string_view, 12> kModelNames = {"mnist_cnn",       "mlp",
                                                                 "resnet18",        "resnet50",
                                                                 "efficientnet_b0", "efficientnet_b1",
                                                                 "efficientnet_b2", "efficientnet_b3",
                                                                 "efficientnet_b4", "efficientnet_b5",
                                                                 "efficientnet_b6", "efficientnet_b7"};

// "mnist_cnn, mlp, resnet18, ..." for messages and --help.
std::string model_names_text();

// Mixed precision. There is no "auto": PyTorch scripts' bare --amp means bf16 on CPU and fp16
// on CUDA; here the mode is always named (--amp off|bf16|fp16), and --use-amp (no value) is
// bf16, which needs no loss scaling on either device.
enum class AmpMode { kOff, kBf16, kFp16 };
enum class OptimizerKind { kAdamW, kSgd, kRmsprop };

// The optimizer table: one row per OptimizerKind, read by --help (and so
// docs/reference/train-options.md), validation, make_optimizer and the momentum cycling.
struct OptimizerSpec {
  OptimizerKind kind;
  std::string_view name;         // as --opt takes it
  std::string_view description;  // its update, for --help
  bool takes_momentum;           // the momentum key applies (and onecycle's cycle_momentum moves it)
  bool takes_nesterov;
  // RMSprop's smoothing constant and the epsilon added to its denominator: torchvision's
  // train.py's (alpha 0.9, eps 0.0316, from TensorFlow's defaults); 0 for the others.
  double alpha;
  double eps;
};
std::span<const OptimizerSpec> optimizer_specs();
const OptimizerSpec& optimizer_spec(OptimizerKind kind);
enum class ScheduleKind {
  kConstant,
  kCosine,
  kStep,
  kExponential,
  kMultiStep,
  kOneCycle,
  kPlateau,
  kPolynomial,
  kCosineRestarts
};
// What the targets are. kAuto: the data says (class ids -> classification; float targets,
// e.g. a CSV with `path,yaw,pitch,roll` -> regression).
enum class TaskKind { kAuto, kClassification, kRegression };
// kAuto: cross-entropy for classification, MSE for regression.
enum class LossKind { kAuto, kCrossEntropy, kMse, kL1, kSmoothL1 };
// kDecoded: the training images' full-resolution decodes stay in RAM after the first epoch.
enum class CacheKind { kNone, kDecoded };

// The value of an integer key set to "auto" (num_workers).
constexpr int kAuto = -1;

struct TrainConfig {
  std::string model = "mnist_cnn";                         // one of kModelNames
  std::string data = "/usr/share/datasets/fashion-mnist";  // image folder, IDX dir or CSV
  std::string exclude_list;  // a file of sample names left out of `data` (stoker scan -o); "" = none
  std::string val_data;      // "" = the IDX t10k split when data is IDX, else none
  double val_split = 0;      // > 0: hold out this fraction of `data` for validation instead
  std::string transforms;    // torchvision-style chain; "" = the model's default
  // Float targets a horizontal flip negates, comma-separated target column names or indices
  // (a head pose's "yaw,roll"); "" = none.
  std::string flip_negate;
  std::string val_transforms;  // validation's chain; "" = data::eval_transform(transforms)
  // torchvision's reference flags, added to the training chain: --auto-augment ta_wide | ra |
  // imagenet | cifar10 | svhn | augmix (none = off; bilinear, as its script), --ra-magnitude,
  // --augmix-severity and --random-erase (RandomErasing's p).
  std::string auto_augment = "none";
  int ra_magnitude = 9;
  int augmix_severity = 3;
  double random_erase = 0;
  // torchvision's --ra-sampler and --ra-reps: repeated augmentation (data::SamplerOptions).
  bool ra_sampler = false;
  int ra_reps = 3;
  // torchvision's preset flags (--interpolation, --train-crop-size, --val-resize-size,
  // --val-crop-size). interpolation: the resample filter of the chains, bilinear or bicubic.
  // train_crop_size > 0: the default chain's RandomResizedCrop size. With any of the three
  // sizes, validation is Resize(val_resize_size, default 256), CenterCrop(val_crop_size,
  // default 224), as the script's eval preset; 0 = not given.
  std::string interpolation = "bilinear";
  int train_crop_size = 0;
  int val_resize_size = 0;
  int val_crop_size = 0;
  TaskKind task = TaskKind::kAuto;
  LossKind loss = LossKind::kAuto;  // checked against the task once the data is open
  int epochs = 2;
  int batch_size = data::LoaderDefaults::batch_size;
  double lr = 1e-3;
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  double weight_decay = 0.01;
  double norm_weight_decay = kAuto;  // of normalization layers' parameters; kAuto = weight_decay
  double momentum = 0.9;             // sgd and rmsprop (optimizer_spec().takes_momentum)
  bool nesterov = false;             // sgd only; needs momentum > 0
  ScheduleKind schedule = ScheduleKind::kConstant;
  int warmup_steps = 0;   // warmup before any schedule
  int warmup_epochs = 0;  // torchvision's --lr-warmup-epochs: warmup_steps = this x optimizer steps per epoch
  // The warmup's shape, as torchvision's --lr-warmup-method and --lr-warmup-decay (PyTorch's
  // LinearLR and ConstantLR stepped per optimizer step): at step s of W, linear gives
  // lr x (warmup_decay + (1 - warmup_decay) x s / W), constant gives lr x warmup_decay.
  std::string warmup_method = "linear";
  double warmup_decay = 0.01;
  double lr_min = 0;           // where cosine ends (torchvision's --lr-min); cosine_restarts' eta_min; plateau's floor
  double step_gamma = 0.1;     // schedule step: lr *= step_gamma ...
  int step_every_epochs = 30;  // ... every this many epochs
  std::string lr_milestones;   // schedule multistep: the epochs at which lr *= step_gamma, "30, 60, 80"
  // schedule onecycle: PyTorch's OneCycleLR over the run with lr as its max_lr, from
  // lr / div_factor up to lr over pct_start of the steps, then down to that / final_div_factor
  // (three_phase: back to lr / div_factor first), annealed by anneal_strategy (cos or linear);
  // with cycle_momentum, SGD's momentum or AdamW's beta1 moves the other way between
  // max_momentum and base_momentum.
  double pct_start = 0.3;
  double div_factor = 25;
  double final_div_factor = 1e4;
  std::string anneal_strategy = "cos";
  bool three_phase = false;
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  // schedule plateau: PyTorch's ReduceLROnPlateau on the validation loss (mode min) after each
  // epoch: lr x plateau_factor (not below lr_min) once the loss has not beaten its best by
  // plateau_threshold (rel: a share of the best; abs: an amount) for more than
  // plateau_patience epochs, then plateau_cooldown epochs before it counts again.
  double plateau_factor = 0.1;
  int plateau_patience = 10;
  double plateau_threshold = 1e-4;
  std::string plateau_threshold_mode = "rel";
  int plateau_cooldown = 0;
  // What the plateau watches: val_loss (lower is better), val_top1 (higher; classification) or
  // val_mae (lower; regression), as ReduceLROnPlateau's mode min or max on that figure.
  std::string plateau_metric = "val_loss";
  // schedule polynomial: PyTorch's PolynomialLR over the steps after the warmup,
  // lr x (1 - t / T)^poly_power, down to 0 at the last step (torchvision's segmentation recipe
  // uses 0.9).
  double poly_power = 1.0;
  // schedule cosine_restarts: PyTorch's CosineAnnealingWarmRestarts at fractional epochs (its
  // scheduler.step(epoch + i / iters)): cosine from lr to lr_min over restart_epochs epochs
  // (T_0), then again over restart_epochs x restart_mult (T_mult), and so on.
  int restart_epochs = 10;
  int restart_mult = 1;
  double label_smoothing = 0;
  double mixup_alpha = 0;           // > 0: MixUp each batch with λ ~ Beta(α, α); classification only
  double cutmix_alpha = 0;          // > 0: CutMix each batch (images); with mixup_alpha, one of the two per batch
  double clip_grad_norm = 0;        // > 0: clip the gradients' total L2 norm to this before each optimizer step
  int early_stopping_patience = 0;  // > 0: stop after this many epochs without a better validation figure
  double ema_decay = 0;             // in (0, 1): keep an exponential moving average of the weights; 0 = off
  int ema_steps =
      kAuto;  // fold the weights into the average every this many optimizer steps; kAuto: 1, or 32 with model_ema
  // torchvision's --model-ema: keep the average as its reference script does (see AveragePlan).
  bool model_ema = false;
  // The input pipeline's keys: stoker/data/loader_keys.h declares their ranges and defaults.
  int num_workers = data::LoaderDefaults::workers;              // kAuto: tuned at run time (stoker/diagnose/tune.h)
  int prefetch_factor = data::LoaderDefaults::prefetch_factor;  // batches in flight per worker
  CacheKind cache = CacheKind::kNone;
  double cache_max_gb = data::LoaderDefaults::cache_max_gb;          // cache decoded: its budget; 0 = half the free RAM
  double chunk_shuffle_gb = data::LoaderDefaults::chunk_shuffle_gb;  // LoaderOptions::chunk_shuffle_bytes, in GB
  bool pin_memory = data::LoaderDefaults::pin_memory;
  data::DecodeMode decode = data::DecodeMode::kCpu;  // where JPEGs are decoded (stoker/data/gpu_decode.h)
  bool persistent_workers = true;
  AmpMode amp = AmpMode::kOff;
  int accumulation_steps = 1;
  uint64_t seed = data::LoaderDefaults::seed;
  int threads = 0;                 // libtorch intra-op threads; 0 = OMP_NUM_THREADS if set, else every usable core
  int nproc_per_node = 1;          // training processes on this machine (data parallel); 1 = this one
  int checkpoint_every_steps = 0;  // 0 = only at epoch end (and on SIGINT/SIGTERM)
  std::string output_dir = "runs";
  bool tensorboard = true;      // TensorBoard event files in the run folder's tb/
  std::string resume;           // checkpoint path or run dir; "" = start fresh
  std::string weights;          // starting weights (.safetensors or a state_dict .pth); "" = initialised
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  int64_t max_steps = 0;        // 0 = no limit (for quick runs and tests)
  double max_bad_fraction = data::LoaderDefaults::max_bad_fraction;  // of an epoch's samples that may fail to load

  friend bool operator==(const TrainConfig&, const TrainConfig&) = default;
};

// Optimizer steps of warmup: warmup_steps, or warmup_epochs epochs of `steps_per_epoch`.
int64_t warmup_steps_of(const TrainConfig& config, int64_t steps_per_epoch);

// lr_milestones as numbers, in the order given ("30, 60, 80", "30,60,80" or "30 60 80"); throws
// UsageError naming the value for anything else.
std::vector<int> lr_milestones_of(const TrainConfig& config);

// The moving average of the weights a run keeps, from ema_decay, ema_steps and model_ema.
//  - stoker's own (ema_decay > 0, model_ema off): every ema_steps (default 1) optimizer steps,
//    average <- d x average + (1 - d) x weights with d = min(ema_decay, (1 + n) / (10 + n)) after
//    n updates (timm's and TensorFlow's ramp).
//  - torchvision's (model_ema on): every ema_steps (default 32) steps, with its script's decay,
//    1 - min(1, (1 - ema_decay) x processes x batch_size x accumulation_steps x ema_steps /
//    epochs) (ema_decay default 0.99998), no ramp, and the average is a copy of the weights
//    while the warmup lasts.
struct AveragePlan {
  bool on = false;
  double decay = 0;             // of each update
  int every_steps = 1;          // optimizer steps between updates
  bool ramp = true;             // d = min(decay, (1 + n) / (10 + n))
  int64_t copy_until_step = 0;  // updates of optimizer steps before this copy the weights
};
AveragePlan average_plan(const TrainConfig& config, int processes, int64_t steps_per_epoch);

// One key of the schema, in schema order: the YAML key (snake_case; the flag is --name with
// '-' for '_'), its --help text, and the default as text ("" for an empty string).
struct ConfigKey {
  std::string name;
  std::string help;
  std::string default_text;
};
const std::vector<ConfigKey>& config_keys();

// Applies the keys present in the YAML map at `path` onto *config; keys not in the file keep
// their values. Throws UsageError for a missing or unreadable file ("config file X does not
// exist"), invalid YAML, a top level that is not a map, an unknown key (with a did-you-mean),
// a key given twice, or a value of the wrong type ("<file>:<line>: key 'epochs' must be an
// integer (got 'two')"). Ranges are validate()'s job. An empty file changes nothing.
void apply_yaml_file(const std::string& path, TrainConfig* config);

// The command-line side: `--config FILE` (-c) and one flag per key, accepting --batch-size and
// --batch_size alike (the underscore spellings are hidden from --help), plus the aliases
// --workers, --prefetch, --max-bad, --learning-rate, --accum-steps and --use-amp/--use_amp (no value =
// --amp bf16). Booleans are flags: --pin-memory, --no-pin-memory, --pin-memory=false. Values
// are kept as text and only keys the user gave are applied, so apply() after the YAML file
// lets flags override the file and nothing else. A flag given twice: the last one wins.
//
// add_to() binds callbacks to this object: it must outlive the app's parse(), and cannot be
// copied or moved.
class ConfigFlags {
 public:
  ConfigFlags() = default;
  ConfigFlags(const ConfigFlags&) = delete;
  ConfigFlags& operator=(const ConfigFlags&) = delete;

  void add_to(CLI::App* app);
  // Throws UsageError naming the flag for a value of the wrong type ("--epochs must be an
  // integer (got 'two')").
  void apply(TrainConfig* config) const;
  // "" when --config was not given.
  const std::string& config_file() const { return config_file_; }

 private:
  struct Given {
    std::string key;
    std::string flag;  // the spelling the user typed, for messages
    std::string text;
  };
  void record(const std::string& key, const std::string& flag, const std::string& text);

  std::string config_file_;
  std::vector<Given> given_;  // one per key given, the last value given for it
};

// What `stoker train` runs: the defaults, then, when resuming (`resume` set by the flags or
// the --config file), the run's own config.yaml beside the checkpoint, then the --config
// file, then the flags given. So `--resume DIR` alone continues the run as it was started,
// and a flag given with it (--epochs 10) changes that key only. Without a config.yaml beside
// the checkpoint, the flags and file alone (the trainer then checks model, batch size and
// seed against the checkpoint). Throws what apply_yaml_file and ConfigFlags::apply throw.
TrainConfig resolve_train_config(const ConfigFlags& flags);

// The checkpoint a --resume value names: <folder>/checkpoint.pt for a run folder, else the
// file itself. The run's folder (its config.yaml, metrics, weights) is the one holding it.
std::string resumed_checkpoint(const std::string& resume);

// Range and consistency checks on the final config (after file and flags). Throws UsageError
// naming the key, e.g. "momentum must be in [0, 1) (got 1.5)".
void validate(const TrainConfig& config);

// The task/loss pairing (validate() calls it with the configured task; the trainer again once
// the data has decided an auto task). Throws UsageError, e.g. "loss mse is for regression; a
// classification task takes loss cross_entropy (or auto)".
void check_task_and_loss(TaskKind task, LossKind loss, double label_smoothing);

// The config as YAML, every key in schema order, one `key: value` line each; apply_yaml_file()
// on it gives back the same config.
std::string to_yaml(const TrainConfig& config);

std::string to_string(AmpMode mode);
std::string to_string(OptimizerKind kind);
std::string to_string(ScheduleKind kind);
std::string to_string(TaskKind kind);
std::string to_string(LossKind kind);
std::string to_string(CacheKind kind);

}  // namespace stoker::train
