#include "train/torch/step/objective.h"

#include <fmt/format.h>

#include <algorithm>

#include "stoker/core/error.h"

namespace stoker::train {

namespace nnf = torch::nn::functional;

torch::Tensor Objective::targets_of(const data::Batch& batch) const {
  if (classification()) {
    return torch::from_blob(const_cast<int64_t*>(batch.labels()), {batch.size()}, torch::kInt64);
  }
  return torch::from_blob(const_cast<float*>(batch.targets()), {batch.size(), batch.target_dim()}, torch::kFloat32);
}

torch::Tensor Objective::random_targets(int64_t n, const torch::TensorOptions& options) const {
  if (classification()) return torch::randint(0, std::max<int64_t>(1, outputs), {n}, options.dtype(torch::kInt64));
  return torch::randn({n, outputs}, options.dtype(torch::kFloat32));
}

torch::Tensor Objective::loss_of(const torch::Tensor& output, const torch::Tensor& target, bool sum) const {
  const torch::Tensor out = output.to(torch::kFloat32);
  // The options' reduction is a variant of tag types, so the ternary is spelled out.
  const auto reduced = [&](auto options) {
    if (sum) return options.reduction(torch::kSum);
    return options.reduction(torch::kMean);
  };
  switch (loss) {
    case LossKind::kMse:
      return nnf::mse_loss(out, target, reduced(nnf::MSELossFuncOptions()));
    case LossKind::kL1:
      return nnf::l1_loss(out, target, reduced(nnf::L1LossFuncOptions()));
    case LossKind::kSmoothL1:
      return nnf::smooth_l1_loss(out, target, reduced(nnf::SmoothL1LossFuncOptions()));
    case LossKind::kAuto:
    case LossKind::kCrossEntropy:
      break;
  }
  auto options = nnf::CrossEntropyFuncOptions().label_smoothing(label_smoothing);
  if (sum) options.reduction(torch::kSum);
  return nnf::cross_entropy(out, target, options);
}

Objective classification_objective(int64_t classes, double label_smoothing) {
  Objective o;
  o.outputs = classes;
  o.label_smoothing = label_smoothing;
  return o;
}

namespace {

std::string targets_text(const data::Source& source) {
  if (source.target_kind() == data::TargetKind::kClass) {
    return fmt::format("class labels ({} classes)", source.class_names().size());
  }
  return fmt::format("{} float target{} per sample", source.target_dim(), source.target_dim() == 1 ? "" : "s");
}

}  // namespace

Objective make_objective(const TrainConfig& cfg, const data::Source& train, const data::Source* val) {
  const bool has_classes = train.target_kind() == data::TargetKind::kClass;
  if (cfg.task == TaskKind::kRegression && has_classes) {
    throw UsageError(
        fmt::format("task regression needs float targets, and {} has {}; give a CSV file list "
                    "'path,target[,target...]' with float targets, or task classification",
                    cfg.data, targets_text(train)));
  }
  if (cfg.task == TaskKind::kClassification && !has_classes) {
    throw UsageError(
        fmt::format("task classification needs class ids, and {} has {}; give one integer "
                    "class id per row, or task regression",
                    cfg.data, targets_text(train)));
  }
  Objective o;
  o.task = has_classes ? TaskKind::kClassification : TaskKind::kRegression;
  check_task_and_loss(o.task, cfg.loss, cfg.label_smoothing);
  o.loss = cfg.loss != LossKind::kAuto ? cfg.loss : has_classes ? LossKind::kCrossEntropy : LossKind::kMse;
  o.outputs = has_classes ? static_cast<int64_t>(train.class_names().size()) : train.target_dim();
  o.label_smoothing = cfg.label_smoothing;
  if (!has_classes && (cfg.mixup_alpha > 0 || cfg.cutmix_alpha > 0)) {
    throw UsageError(
        fmt::format("{} {:g} mixes class targets, and {} has {}; MixUp and CutMix apply to "
                    "classification only: set mixup_alpha and cutmix_alpha to 0",
                    cfg.mixup_alpha > 0 ? "mixup_alpha" : "cutmix_alpha",
                    cfg.mixup_alpha > 0 ? cfg.mixup_alpha : cfg.cutmix_alpha, cfg.data, targets_text(train)));
  }
  if (val != nullptr) {
    // Class ids must mean the same classes: the validation classes are the training ones or
    // their first few (a CSV's classes are 0..its largest id; a folder may lack the last).
    const auto& tn = train.class_names();
    const auto& vn = val->class_names();
    const bool same = val->target_kind() == train.target_kind() &&
                      (has_classes ? vn.size() <= tn.size() && std::equal(vn.begin(), vn.end(), tn.begin())
                                   : val->target_dim() == train.target_dim());
    if (!same) {
      throw UsageError(fmt::format("validation data {} has {}, and the training data {} has {}; they must match",
                                   cfg.val_data.empty() ? cfg.data : cfg.val_data, targets_text(*val), cfg.data,
                                   targets_text(train)));
    }
  }
  return o;
}

}  // namespace stoker::train
