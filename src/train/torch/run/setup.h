// What a training run is made of, built from a TrainConfig: the device, the data (sources
// and loaders, fed by stoker::data), the model and the optimiser. `stoker train` and
// `stoker doctor` build theirs the same way, so the doctor measures what training runs.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "stoker/core/host_tuning.h"
#include "stoker/data/loader.h"
#include "stoker/train/config.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/parallel/data_parallel.h"
#include "train/torch/step/device_feed.h"
#include "train/torch/step/objective.h"

namespace stoker::train {

struct TrainSetup {
  torch::Device device{torch::kCPU};
  std::shared_ptr<const data::Source> train_source;  // less what --exclude-list names
  std::shared_ptr<const data::Source> val_source;    // null: no validation data
  size_t excluded_samples = 0;                       // left out by --exclude-list
  size_t excluded_unknown = 0;                       // names in that list not in the data
  std::vector<std::string> data_notes;               // the CSV lists' columns left unread, float targets a flip mirrors
  Objective objective;                               // task, loss and outputs (classes or float targets)
  int start_workers = 1;                             // cfg.num_workers, or the tuner's first count for auto
  std::unique_ptr<PinnedAllocator> pinned;           // CUDA with pin_memory; outlives the loaders
  FeedOptions feed;                                  // how batches reach the device (device_feed.h)
  std::unique_ptr<data::Loader> train_loader;
  std::unique_ptr<data::Loader> val_loader;
  // The chains as configured (transform_for), before the device plan moves Normalize to the
  // GPU: what the header prints and what inference_inputs records.
  data::TransformSpec train_chain;
  data::TransformSpec eval_chain;
  std::shared_ptr<Network> model;  // on `device`
  std::string weights_note;        // what --weights loaded (load_initial_weights); "" when not given
  InputShape model_input;          // what `model` was built for
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  HostTuning host;  // the allocator and BLAS settings applied (stoker/core/host_tuning.h)
};

// Validates the config, opens the data and builds everything (UsageError / DataError with
// one clear line for what cannot be). Sets the intra-op threads (set_intra_op_threads) and
// the process's allocator and BLAS for training (tune_host_for_training), and seeds torch
// with cfg.seed. `stoker train` and `stoker doctor` both start here, so they measure the same
// process.
// On CUDA: pinned batch buffers (pin_memory), uint8 batches normalized on the device,
// channels_last for conv nets, TF32 matmuls and cuDNN autotuning.
// In a data-parallel group (`place`), the training loader takes the place's share of each
// epoch, and on CUDA ("auto" or "cuda") the process trains on device cuda:<local_rank>.
// `fitted` (a resumed run's, from its checkpoint): Standardize's statistics, taken instead of
// fitting the training data again, with a note in data_notes; DataError when they are not of
// the data's feature count. Ignored where the chain has no Standardize.
TrainSetup make_setup(const TrainConfig& cfg, const ProcessPlace& place = {}, const FittedStatistics* fitted = nullptr);

// The setup checks of a training run: refuses, in one line (UsageError), what the config asks
// of data that the setup does not have: early stopping or a plateau schedule without
// validation data, a plateau metric of the other task.
void check_run_needs(const TrainConfig& cfg, const TrainSetup& setup);

// The model's parameters split for the optimizer: those of normalization layers (BatchNorm,
// GroupNorm, LayerNorm, InstanceNorm: their weights and biases) and all others, each in the
// model's order.
struct OptimizerGroups {
  std::vector<torch::Tensor> other, norm;
};
OptimizerGroups optimizer_groups(const Network& model);

// cfg's optimizer over `model`: one parameter group with weight_decay, and a second with
// norm_weight_decay (auto: weight_decay) for the normalization layers' parameters when the
// model has any. The learning rate is the step's to set (lr_at). SGD and AdamW update with
// multi-tensor operations (ForeachSgd, ForeachAdamW); RMSprop is libtorch's, with the alpha and
// eps of its optimizer_specs() row.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& cfg, Network& model);

// A second instance of `setup.model`'s architecture, on its device and in its memory format,
// with weights of its own initialisation (the moving average's network, model_ema.h, which
// then copies the model's). Leaves torch's CPU generator as it found it, so a run draws the
// same random numbers with the second instance as without.
std::shared_ptr<Network> another_model(const TrainConfig& cfg, const TrainSetup& setup);

// The optimizer steps the run plans for (the schedule's length): epochs x
// optimizer_steps_per_epoch. max_steps may stop it earlier.
int64_t scheduled_steps(const TrainConfig& cfg, const TrainSetup& setup);
// Optimizer steps in an epoch of the training loader: ceil(batches / accumulation_steps), as
// the epoch's last, partial window steps too.
int64_t optimizer_steps_per_epoch(const TrainConfig& cfg, const TrainSetup& setup);

// What the trained model takes at inference: the evaluation chain with the sizes and the
// Standardize statistics the training loader fitted (recorded in summary.json and the
// safetensors metadata as `inputs`).
data::TransformSpec inference_inputs(const TrainSetup& setup);

// The device cfg.device names ("auto": the first GPU if this libtorch has CUDA); in a group,
// cuda:<local_rank>. Warns loudly on stderr when a GPU was asked for, or is present, and this
// libtorch cannot use it.
torch::Device pick_device(const TrainConfig& cfg, const ProcessPlace& place = {});

// libtorch's intra-op threads: `threads` if > 0, else every CPU this process may use unless
// OMP_NUM_THREADS says otherwise (libtorch's own default can be 1 on VMs).
void set_intra_op_threads(int threads);

// Loader options for `source` per the config (workers, prefetch, seed, transforms).
data::LoaderOptions loader_options(const TrainConfig& cfg, const data::Source& source, bool train, int workers);

// The transform chain of training (`train`) or of validation and inference for `source`,
// float32, before any device plan: cfg.transforms (else the data's default) for training;
// cfg.val_transforms, else data::eval_transform of the training chain, for validation.
// torchvision's preset keys apply on top: interpolation (the resample filter of every chain),
// train_crop_size (the default chain's RandomResizedCrop), val_resize_size / val_crop_size
// (with any of the three sizes, validation is Resize(256 or val_resize_size),
// CenterCrop(224 or val_crop_size)); the augmentation keys are added to the training chain.
// Throws UsageError for a chain that does not parse, a size key with a chain it cannot apply
// to, and image keys with feature vectors.
data::TransformSpec transform_for(const TrainConfig& cfg, const data::Source& source, bool train);

}  // namespace stoker::train
