#include "train/torch/evaluate/evaluate.h"

#include <numeric>

#include "train/common/metrics.h"

namespace stoker::train {

double EvalResult::mean_mae() const {
  if (mae.empty()) return -1;
  return std::accumulate(mae.begin(), mae.end(), 0.0) / static_cast<double>(mae.size());
}

EvalResult evaluate(Network& model, data::Loader& loader, const Objective& objective, const FeedOptions& feed_options,
                    const EvalBatchSink& sink) {
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult r;
  const bool classes = objective.classification();
  const bool binary = classes && objective.outputs == 2;
  const bool top5 = classes && objective.outputs > 5;
  double loss_sum = 0, correct1 = 0, correct5 = 0;
  torch::Tensor abs_error_sum = torch::zeros({classes ? 0 : objective.outputs}, torch::kFloat64);
  std::vector<float> scores;
  std::vector<int64_t> labels;
  loader.start_epoch(0);
  DeviceFeed feed(loader, objective, feed_options);
  while (FedBatch batch = feed.next()) {
    const auto& y = batch.targets;
    const auto out = model.forward(batch.images).to(torch::kFloat32);
    if (sink) sink(batch, out);
    loss_sum += objective.loss_of(out, y, /*sum=*/true).item<double>();
    if (classes) {
      correct1 += out.argmax(1).eq(y).sum().item<double>();
      if (top5) correct5 += std::get<1>(out.topk(5, 1)).eq(y.unsqueeze(1)).any(1).sum().item<double>();
      if (binary) {
        const auto p1 = torch::softmax(out, 1).select(1, 1).cpu().contiguous();
        scores.insert(scores.end(), p1.data_ptr<float>(), p1.data_ptr<float>() + p1.numel());
        labels.insert(labels.end(), batch.host.labels(), batch.host.labels() + batch.size());
      }
    } else {
      abs_error_sum += (out - y).abs().sum(0).to(torch::kCPU, torch::kFloat64);
    }
    r.samples += batch.size();
  }
  if (r.samples == 0) return r;
  const double n = static_cast<double>(r.samples);
  // Regression losses are summed over targets too (reduction sum); report them per sample
  // and target, as the training loss (reduction mean) is.
  r.loss = loss_sum / (classes ? n : n * static_cast<double>(objective.outputs));
  if (classes) {
    r.top1 = correct1 / n;
    if (top5) r.top5 = correct5 / n;
    if (binary) r.auc = roc_auc(scores, labels);
  } else {
    for (int64_t t = 0; t < objective.outputs; ++t) r.mae.push_back(abs_error_sum[t].item<double>() / n);
  }
  return r;
}

}  // namespace stoker::train
