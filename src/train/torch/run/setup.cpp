#include "train/torch/run/setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "stoker/core/csv_line.h"
#include "stoker/core/error.h"
#include "stoker/core/process.h"
#include "stoker/core/progress_line.h"
#include "stoker/data/exclude_list.h"
#include "stoker/data/gpu_decode.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/open_progress.h"
#include "stoker/monitor/gpu_reader.h"
#include "train/torch/model/initial_weights.h"
#include "train/torch/step/foreach_optimizers.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

// The NVIDIA GPUs NVML sees, e.g. "1 GPU (NVIDIA H100 80GB HBM3)"; "" when none (or no NVML).
std::string nvml_gpus() {
  const auto reader = monitor::GpuReader::open(nullptr);
  if (!reader || reader->gpus().empty()) return "";
  std::string names;
  for (const monitor::GpuInfo& gpu : reader->gpus()) names += (names.empty() ? "" : ", ") + gpu.name;
  const size_t n = reader->gpus().size();
  return fmt::format("{} GPU{} ({})", n, n == 1 ? "" : "s", names);
}

bool is_norm_layer(const torch::nn::Module& module) {
  return module.as<torch::nn::BatchNorm1d>() || module.as<torch::nn::BatchNorm2d>() ||
         module.as<torch::nn::BatchNorm3d>() || module.as<torch::nn::GroupNorm>() ||
         module.as<torch::nn::LayerNorm>() || module.as<torch::nn::InstanceNorm1d>() ||
         module.as<torch::nn::InstanceNorm2d>() || module.as<torch::nn::InstanceNorm3d>();
}

// --auto-augment, --ra-magnitude and --random-erase, as torchvision's reference script adds
// them to its training preset (the automatic augmentation with --interpolation's filter).
void add_augmentation_flags(const TrainConfig& cfg, const data::Source& source, data::TransformSpec* spec) {
  const bool auto_augment = cfg.auto_augment != "none";
  if (!auto_augment && cfg.random_erase == 0) return;
  const std::string asked = auto_augment ? fmt::format("auto_augment {}", cfg.auto_augment)
                                         : fmt::format("random_erase {:g}", cfg.random_erase);
  if (const int features = source.feature_count(); features > 0) {
    throw UsageError(fmt::format("{} augments images, and {} holds feature vectors ({} per sample); set {} to {}",
                                 asked, cfg.data, features, auto_augment ? "auto_augment" : "random_erase",
                                 auto_augment ? "none" : "0"));
  }
  if (auto_augment) {
    if (spec->auto_augment.enabled()) {
      throw UsageError(fmt::format("auto_augment {} and the transforms' {} are both automatic augmentations; give one",
                                   cfg.auto_augment, data::to_string(spec->auto_augment.kind)));
    }
    data::AutoAugmentSpec& a = spec->auto_augment;
    a.interpolation = cfg.interpolation == "bicubic" ? data::Interpolation::kBicubic : data::Interpolation::kBilinear;
    if (cfg.auto_augment == "ta_wide") {
      a.kind = data::AutoAugmentKind::kTrivialAugmentWide;
    } else if (cfg.auto_augment == "ra") {
      a.kind = data::AutoAugmentKind::kRandAugment;
      a.magnitude = cfg.ra_magnitude;
    } else if (cfg.auto_augment == "augmix") {
      a.kind = data::AutoAugmentKind::kAugMix;
      a.severity = cfg.augmix_severity;
    } else {
      a.kind = data::AutoAugmentKind::kAutoAugment;
      a.policy = cfg.auto_augment == "cifar10" ? data::AutoAugmentPolicy::kCifar10
                 : cfg.auto_augment == "svhn"  ? data::AutoAugmentPolicy::kSvhn
                                               : data::AutoAugmentPolicy::kImageNet;
    }
  }
  if (cfg.random_erase > 0) {
    if (spec->erasing.enabled()) {
      throw UsageError(
          fmt::format("random_erase {:g} and the transforms' RandomErasing both erase; give one", cfg.random_erase));
    }
    spec->erasing.p = cfg.random_erase;
  }
  spec->validate();
}

// The float targets the training chain's horizontal flip negates (cfg.flip_negate), as
// indices. Float targets with a flip and none named get a note: the flip mirrors the image
// and not them, which is right for an age and wrong for a head pose's yaw.
std::vector<int> flip_negate_for(const TrainConfig& cfg, const data::Source& source, const data::TransformSpec& chain,
                                 std::vector<std::string>* notes) {
  const std::vector<std::string> names =
      cfg.flip_negate.empty() ? std::vector<std::string>{} : split_csv_line(cfg.flip_negate);
  std::vector<int> indices = data::target_indices(source, names, "flip_negate");
  if (!indices.empty() && !chain.hflip.enabled()) {
    throw UsageError(
        fmt::format("flip_negate {} negates targets on a horizontal flip, and the training chain '{}' "
                    "has none; add RandomHorizontalFlip(), or leave flip_negate out",
                    cfg.flip_negate, chain.describe()));
  }
  if (indices.empty() && chain.hflip.enabled() && source.target_kind() == data::TargetKind::kRegression) {
    const data::SourceColumns* columns = source.columns();
    const std::string targets = columns != nullptr && !columns->targets.empty()
                                    ? fmt::format("{}", fmt::join(columns->targets, ", "))
                                    : fmt::format("0 to {}", source.target_dim() - 1);
    notes->push_back(fmt::format(
        "note: RandomHorizontalFlip mirrors the images and not the float targets ({}); where a mirror changes one "
        "(a head pose's yaw and roll), name it: --flip-negate yaw,roll",
        targets));
  }
  return indices;
}

}  // namespace

OptimizerGroups optimizer_groups(const Network& model) {
  OptimizerGroups groups;
  std::set<const void*> in_norm_layers;
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (!is_norm_layer(*module)) continue;
    for (const torch::Tensor& p : module->parameters(/*recurse=*/false)) {
      groups.norm.push_back(p);
      in_norm_layers.insert(p.unsafeGetTensorImpl());
    }
  }
  for (const torch::Tensor& p : model.parameters()) {
    if (in_norm_layers.count(p.unsafeGetTensorImpl()) == 0) groups.other.push_back(p);
  }
  return groups;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& cfg, Network& model) {
  // Two groups whenever the model has normalization layers, whatever norm_weight_decay says,
  // so that a checkpoint resumes with another norm_weight_decay (a group count that differs
  // would not load).
  OptimizerGroups groups = optimizer_groups(model);
  const double norm_decay = cfg.norm_weight_decay == kAuto ? cfg.weight_decay : cfg.norm_weight_decay;
  const auto with_groups = [&](auto options) {
    using Options = decltype(options);
    std::vector<torch::optim::OptimizerParamGroup> list;
    list.emplace_back(groups.other, std::make_unique<Options>(options));
    if (!groups.norm.empty()) {
      Options norm = options;
      norm.weight_decay(norm_decay);
      list.emplace_back(groups.norm, std::make_unique<Options>(norm));
    }
    return list;
  };
  switch (cfg.optimizer) {
    case OptimizerKind::kSgd: {
      const auto options =
          torch::optim::SGDOptions(cfg.lr).momentum(cfg.momentum).nesterov(cfg.nesterov).weight_decay(cfg.weight_decay);
      return std::make_unique<ForeachSgd>(with_groups(options), options);
    }
    case OptimizerKind::kRmsprop: {
      // torch.optim.RMSprop(params, lr, momentum, weight_decay, eps, alpha) as torchvision's train.py builds it.
      const OptimizerSpec& spec = optimizer_spec(OptimizerKind::kRmsprop);
      const auto options = torch::optim::RMSpropOptions(cfg.lr)
                               .momentum(cfg.momentum)
                               .weight_decay(cfg.weight_decay)
                               .eps(spec.eps)
                               .alpha(spec.alpha);
      return std::make_unique<torch::optim::RMSprop>(with_groups(options), options);
    }
    case OptimizerKind::kAdamW:
      break;
  }
  const auto options = torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay);
  return std::make_unique<ForeachAdamW>(with_groups(options), options);
}

torch::Device pick_device(const TrainConfig& cfg, const ProcessPlace& place) {
  if (cfg.device == "cpu") return torch::kCPU;
  if (compat::cuda_available()) {
    if (place.world_size > 1 && (cfg.device == "auto" || cfg.device == "cuda")) {
      const int devices = static_cast<int>(torch::cuda::device_count());
      if (place.local_rank >= devices) {
        throw UsageError(
            fmt::format("process {} needs GPU cuda:{}, and this machine has {} GPU{}; use "
                        "--nproc-per-node {} at most",
                        place.rank, place.local_rank, devices, devices == 1 ? "" : "s", devices));
      }
      return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(place.local_rank));
    }
    return cfg.device == "auto" ? torch::Device(torch::kCUDA) : torch::Device(cfg.device);
  }
  // No CUDA in this libtorch. Loud when a GPU was asked for, or is there and goes unused.
  const std::string gpus = nvml_gpus();
  std::vector<std::string> reasons;
  if (cfg.device != "auto") reasons.push_back("device " + cfg.device + " was asked for");
  if (!gpus.empty()) reasons.push_back("NVML sees " + gpus);
  if (!reasons.empty() && place.leader()) {  // once for a data-parallel group
    std::fprintf(
        stderr, "%s\n",
        fmt::format(
            "⚠ WARNING: {}, but this libtorch ({}) has no CUDA device; training runs on the CPU{}",
            fmt::join(reasons, "; "), compat::torch_version(),
            gpus.empty() ? "" : " — build stoker against a CUDA PyTorch (docs/guide/install.md: Offline GPU node)")
            .c_str());
  }
  return torch::kCPU;
}

void set_intra_op_threads(int threads) {
  // libtorch's default can be 1 (it counts physical cores, and some VMs report one); use
  // every CPU the process may run on unless OMP_NUM_THREADS says otherwise.
  if (threads > 0) {
    torch::set_num_threads(threads);
  } else if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    torch::set_num_threads(usable_cores());
  }
}

data::LoaderOptions loader_options(const TrainConfig& cfg, const data::Source& source, bool train, int workers) {
  data::LoaderOptions options;
  options.batch_size = train ? cfg.batch_size : std::max(cfg.batch_size, 256);
  options.workers = workers;
  // PyTorch's prefetch_factor counts batches per worker; the loader's prefetch is the total.
  options.prefetch = data::buffers_in_flight(cfg.prefetch_factor, workers);
  options.sampler.seed = cfg.seed;
  options.sampler.shuffle = train;
  options.run_ahead = train;  // evaluation restarts epoch 0 each time: nothing to run ahead into
  options.max_bad_fraction = cfg.max_bad_fraction;
  options.chunk_shuffle_bytes = static_cast<size_t>(cfg.chunk_shuffle_gb * 1e9);
  options.transform = transform_for(cfg, source, train);
  return options;
}

data::TransformSpec transform_for(const TrainConfig& cfg, const data::Source& source, bool train) {
  // A chain that does not parse names the key it came from: "val_transforms: unknown transform ...".
  const auto parse = [](const char* key, const std::string& text) {
    try {
      data::TransformSpec spec = data::parse_transforms(text);
      spec.dtype = data::DType::kFloat32;
      if (spec.box_crop.enabled()) {
        throw UsageError(
            "BoxCrop crops each sample around its keypoints or boxes, which stoker train does not read; crop the "
            "images beforehand, or train from Python with stoker.DataLoader(keypoints=... or boxes=...)");
      }
      return spec;
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", key, e.what()));
    }
  };
  const bool val_sizes = cfg.train_crop_size > 0 || cfg.val_resize_size > 0 || cfg.val_crop_size > 0;
  if (val_sizes || cfg.interpolation != "bilinear") {
    if (const int features = source.feature_count(); features > 0) {
      throw UsageError(
          fmt::format("interpolation and the crop sizes resample images, and {} holds feature vectors ({} "
                      "per sample); leave them out",
                      cfg.data, features));
    }
  }
  const bool own_val = !train && !cfg.val_transforms.empty();
  if (own_val && (cfg.val_resize_size > 0 || cfg.val_crop_size > 0)) {
    throw UsageError(
        fmt::format("val_resize_size and val_crop_size make the validation chain, and val_transforms '{}' "
                    "is given; write the sizes in it, or leave val_transforms out",
                    cfg.val_transforms));
  }
  data::TransformSpec spec = own_val                  ? parse("val_transforms", cfg.val_transforms)
                             : cfg.transforms.empty() ? parse("default transforms", default_transforms(source))
                                                      : parse("transforms", cfg.transforms);
  if (cfg.interpolation == "bicubic") spec.resample = data::ResampleFilter::kBicubic;
  if (own_val) return spec;
  if (cfg.train_crop_size > 0) {
    if (!cfg.transforms.empty()) {
      throw UsageError(
          fmt::format("train_crop_size {} sizes the default chain's RandomResizedCrop, and transforms '{}' "
                      "is given; write the size in it",
                      cfg.train_crop_size, cfg.transforms));
    }
    if (spec.geometry != data::Geometry::kRandomResizedCrop) {
      throw UsageError(
          fmt::format("train_crop_size {} sizes a RandomResizedCrop, and the default chain for {} is '{}'; "
                      "give transforms instead",
                      cfg.train_crop_size, cfg.data, spec.describe()));
    }
    spec.out_width = spec.out_height = cfg.train_crop_size;
  }
  if (train) {
    add_augmentation_flags(cfg, source, &spec);
    return spec;
  }
  data::TransformSpec eval = data::eval_transform(spec);
  if (val_sizes) {  // torchvision's eval preset: Resize(val_resize_size), CenterCrop(val_crop_size)
    eval.geometry = data::Geometry::kResizeCenterCrop;
    eval.resize = data::ResizeSpec{};
    eval.resize.shorter = cfg.val_resize_size > 0 ? cfg.val_resize_size : 256;
    eval.out_width = eval.out_height = cfg.val_crop_size > 0 ? cfg.val_crop_size : 224;
    eval.validate();
  }
  return eval;
}

TrainSetup make_setup(const TrainConfig& cfg, const ProcessPlace& place, const FittedStatistics* fitted) {
  validate(cfg);
  TrainSetup s;
  s.device = pick_device(cfg, place);
  if (cfg.amp == AmpMode::kFp16 && s.device.is_cpu()) {
    throw UsageError("amp fp16 needs a CUDA device; on the CPU use --amp bf16 or --amp off");
  }
  // --decode: gpu refused in one line where it cannot be, auto on the CPU there with at most
  // one line (plan_gpu_decode says the rest once the chain is known).
  const data::DecodeChoice decode =
      data::choose_decode(cfg.decode, {cfg.device.starts_with("cuda") || s.device.is_cuda(), s.device.is_cuda()},
                          data::FrontEnd::kCommandLine);
  if (!decode.error.empty()) throw UsageError(decode.error);
  if (!decode.note.empty() && place.leader()) std::fprintf(stderr, "%s\n", decode.note.c_str());

  // The leader shows how far a long listing or index is; the group's other processes open quietly.
  const auto open = [&place](const std::string& path, data::Split split) {
    return place.leader() ? data::open_source_showing_progress(path, split) : data::open_source(path, split);
  };
  s.train_source = open(cfg.data, data::Split::kTrain);
  if (!cfg.exclude_list.empty()) {
    data::Excluded left = data::exclude_listed(s.train_source, cfg.exclude_list, cfg.data);
    s.train_source = std::move(left.source);
    s.excluded_samples = left.excluded;
    s.excluded_unknown = left.unknown;
  }
  // A CSV list's columns besides the path and the targets (captions, ids) are left unread.
  if (std::string line = data::columns_left_unread(*s.train_source, cfg.data, "stoker train"); !line.empty()) {
    s.data_notes.push_back(std::move(line));
  }
  if (!cfg.val_data.empty()) {
    s.val_source = open(cfg.val_data, data::Split::kValidationFile);
    if (std::string line = data::columns_left_unread(*s.val_source, cfg.val_data, "stoker train"); !line.empty()) {
      s.data_notes.push_back(std::move(line));
    }
  } else if (cfg.val_split == 0 && data::has_held_out_split(cfg.data)) {
    s.val_source = open(cfg.data, data::Split::kHeldOut);
  }
  for (const auto* source : {&s.train_source, &s.val_source}) {
    if (*source && (*source)->holds_clips()) {
      throw UsageError(
          (*source)->describe() +
          " holds clips (samples of several frames), and stoker train's models take single images; "
          "train a clip model from Python: stoker.DataLoader(data, frames_per_clip=K) (docs/guide/own-data.md, "
          "Clips)");
    }
  }
  if (cfg.task == TaskKind::kRegression) {  // integer targets that are quantities (ages, counts)
    const auto integer_targets = [](const data::Source& source) {
      return source.target_kind() == data::TargetKind::kClass && source.targets_are_numbers();
    };
    if (integer_targets(*s.train_source)) {
      s.train_source = data::integers_as_regression(s.train_source);
      if (s.val_source && integer_targets(*s.val_source)) s.val_source = data::integers_as_regression(s.val_source);
    }
  }
  // Integer ids read from the data are classes only if they can be: never negative, and at
  // most 100,000 unless --task classification says there really are that many.
  const int64_t max_classes = cfg.task == TaskKind::kClassification ? data::kMaxClasses : data::kUsualMaxClasses;
  for (const data::Source* source : {s.train_source.get(), s.val_source.get()}) {
    if (source != nullptr && source->target_kind() == data::TargetKind::kClass) source->check_class_ids(max_classes);
  }
  if (cfg.val_split > 0) {  // after the checks: the split is by the classes they accept
    data::HeldOut parts = data::hold_out(s.train_source, cfg.val_split, cfg.seed);
    s.train_source = std::move(parts.train);
    s.val_source = std::move(parts.val);
  }
  s.objective = make_objective(cfg, *s.train_source, s.val_source.get());
  if (const int features = s.train_source->feature_count(); features > 0 && cfg.model != "mlp") {
    throw UsageError(fmt::format("model {} takes images, and {} holds feature vectors ({} per sample); use --model mlp",
                                 cfg.model, cfg.data, features));
  }
  if (const int features = s.train_source->feature_count(); features > 0 && cfg.cutmix_alpha > 0) {
    throw UsageError(
        fmt::format("cutmix_alpha {:g} pastes a box between images, and {} holds feature vectors ({} per "
                    "sample); use mixup_alpha for feature vectors, or set cutmix_alpha to 0",
                    cfg.cutmix_alpha, cfg.data, features));
  }
  if (s.val_source && s.val_source->feature_count() != s.train_source->feature_count()) {
    throw UsageError(
        fmt::format("validation data {} has {} features per sample, and the training data {} has {}; "
                    "they must match",
                    cfg.val_data.empty() ? cfg.data : cfg.val_data, s.val_source->feature_count(), cfg.data,
                    s.train_source->feature_count()));
  }

  const int cores = rank_cores(place.local_world_size);
  s.start_workers = cfg.num_workers == kAuto ? data::auto_workers(cores) : cfg.num_workers;
  const bool conv_net = cfg.model != "mlp";
  if (s.device.is_cuda()) {
    compat::enable_cuda_fast_math();
    if (cfg.pin_memory) s.pinned = std::make_unique<PinnedAllocator>();
  }
  data::LoaderOptions train_options = loader_options(cfg, *s.train_source, true, s.start_workers);
  train_options.sampler.rank = place.rank;
  train_options.sampler.world_size = place.world_size;
  train_options.sampler.repetitions = cfg.ra_sampler ? cfg.ra_reps : 1;
  train_options.target_geometry.flip_negate =
      flip_negate_for(cfg, *s.train_source, train_options.transform, &s.data_notes);
  s.train_chain = train_options.transform;
  s.eval_chain = transform_for(cfg, s.val_source ? *s.val_source : *s.train_source, false);
  train_options.allocator = s.pinned.get();
  if (cfg.cache == CacheKind::kDecoded) {
    train_options.cache_decoded_bytes =
        static_cast<size_t>(cfg.cache_max_gb > 0 ? cfg.cache_max_gb * 1e9 : free_ram_bytes() / 2);
  }
  s.feed = plan_device_feed(s.device, conv_net, &train_options);
  if (decode.use == data::DecodeMode::kGpu) {
    GpuDecodePlan gpu = plan_gpu_decode(cfg.decode, s.device, train_options, *s.train_source);
    if (!gpu.note.empty() && place.leader()) std::fprintf(stderr, "%s\n", gpu.note.c_str());
    train_options.gpu_handoff = gpu.handoff;
    s.feed.gpu_decode = std::move(gpu.stage);
  }
  if (data::FeatureSpec& features = train_options.transform.features; fitted != nullptr && features.standardize) {
    const size_t count = static_cast<size_t>(s.train_source->feature_count());
    if (fitted->mean.size() != count || fitted->std.size() != count) {
      throw DataError(
          fmt::format("the checkpoint's Standardize statistics are of {} features and {} has {}; resume "
                      "on the data the run trained on",
                      fitted->mean.size(), cfg.data, count));
    }
    features.mean = fitted->mean;
    features.std = fitted->std;
    s.data_notes.push_back(
        "note: Standardize's mean and std are the checkpoint's, fitted when the run began; the data is not fitted "
        "again");
  }
  const auto make_train_loader = [&] {
    s.train_loader = std::make_unique<data::Loader>(s.train_source, train_options);
  };
  if (place.leader()) {  // Standardize fitted over a feature file without its sums takes seconds: a line
    ProgressLine line;
    data::run_with_progress_line(cfg.data, make_train_loader, line);
  } else {
    make_train_loader();
  }
  if (!s.train_loader->fit_note().empty()) s.data_notes.push_back("note: " + s.train_loader->fit_note());
  if (s.val_source) {
    data::LoaderOptions val_options = loader_options(cfg, *s.val_source, false, s.start_workers);
    // Standardized with the training data's statistics, as a fitted scaler would be.
    val_options.transform.features.mean = s.train_loader->options().transform.features.mean;
    val_options.transform.features.std = s.train_loader->options().transform.features.std;
    val_options.allocator = s.pinned.get();
    plan_device_feed(s.device, conv_net, &val_options);  // the same plan: same mean and std
    s.val_loader = std::make_unique<data::Loader>(s.val_source, val_options);
  }

  set_intra_op_threads(cfg.threads);
  s.host = tune_host_for_training();

  torch::manual_seed(cfg.seed);
  const data::TransformSpec& spec = s.train_loader->options().transform;
  s.model_input = {spec.channels, spec.out_height, spec.out_width};
  s.model = make_model(cfg.model, s.model_input, s.objective.outputs);
  if (!cfg.weights.empty()) {
    s.weights_note = cfg.resume.empty() ? load_initial_weights(*s.model, cfg.model, cfg.weights)
                                        : "not read: the checkpoint's weights are resumed";
  }
  s.model->to(s.device);
  if (s.feed.channels_last) to_channels_last(*s.model);
  s.optimizer = make_optimizer(cfg, *s.model);
  return s;
}

std::shared_ptr<Network> another_model(const TrainConfig& cfg, const TrainSetup& setup) {
  const torch::Tensor rng = compat::cpu_rng_state();  // the initialisation draws from it
  std::shared_ptr<Network> other = make_model(cfg.model, setup.model_input, setup.objective.outputs);
  compat::set_cpu_rng_state(rng);
  other->to(setup.device);
  if (setup.feed.channels_last) to_channels_last(*other);
  return other;
}

int64_t scheduled_steps(const TrainConfig& cfg, const TrainSetup& setup) {
  return static_cast<int64_t>(cfg.epochs) * optimizer_steps_per_epoch(cfg, setup);
}

int64_t optimizer_steps_per_epoch(const TrainConfig& cfg, const TrainSetup& setup) {
  // An epoch's last, partial accumulation window steps the optimizer too (finish_window).
  const int64_t batches = setup.train_loader->batches_per_epoch();
  return (batches + cfg.accumulation_steps - 1) / cfg.accumulation_steps;
}

data::TransformSpec inference_inputs(const TrainSetup& setup) {
  data::TransformSpec spec = setup.eval_chain;
  const data::TransformSpec& fitted = setup.train_loader->options().transform;
  spec.features.length = fitted.features.length;
  spec.features.mean = fitted.features.mean;
  spec.features.std = fitted.features.std;
  if (spec.geometry == data::Geometry::kNone) {  // the source's size, filled in by the loader
    spec.out_width = fitted.out_width;
    spec.out_height = fitted.out_height;
    spec.channels = fitted.channels;
  }
  return spec;
}

void check_run_needs(const TrainConfig& cfg, const TrainSetup& setup) {
  if (cfg.early_stopping_patience > 0 && !setup.val_loader) {
    throw UsageError(
        fmt::format("early_stopping_patience {} needs validation data, and {} has none of its own; give --val-data, or "
                    "--val-split 0.1 to hold out part of it, or set early_stopping_patience 0",
                    cfg.early_stopping_patience, cfg.data));
  }
  if (cfg.schedule == ScheduleKind::kPlateau && !setup.val_loader) {
    throw UsageError(fmt::format(
        "schedule plateau lowers the rate when the validation loss stalls, and {} has no validation data of its own; "
        "give --val-data, or --val-split 0.1 to hold out part of it, or choose another schedule",
        cfg.data));
  }
  if (cfg.schedule == ScheduleKind::kPlateau && cfg.plateau_metric != "val_loss" &&
      setup.objective.classification() != (cfg.plateau_metric == "val_top1")) {
    throw UsageError(fmt::format("plateau_metric {} is a {} figure, and this run's task is {}; use {} or val_loss",
                                 cfg.plateau_metric, cfg.plateau_metric == "val_top1" ? "classification" : "regression",
                                 to_string(setup.objective.task),
                                 setup.objective.classification() ? "val_top1" : "val_mae"));
  }
}

}  // namespace stoker::train
