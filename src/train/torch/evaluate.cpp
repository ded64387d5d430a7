#include "evaluate.h"

#include "setup.h"

namespace stoker::train {

EvalResult evaluate(Network& model, data::Loader& loader, int64_t classes, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult r;
  double loss_sum = 0, correct1 = 0, correct5 = 0;
  loader.start_epoch(0);
  while (data::Batch batch = loader.next()) {
    const auto x = images_of(batch).to(device);
    const auto y = labels_of(batch).to(device);
    const auto logits = model.forward(x);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct1 += logits.argmax(1).eq(y).sum().item<double>();
    if (classes > 5) {
      const auto top5 = std::get<1>(logits.topk(5, 1));
      correct5 += top5.eq(y.unsqueeze(1)).any(1).sum().item<double>();
    }
    r.samples += batch.size();
  }
  if (r.samples > 0) {
    r.loss = loss_sum / static_cast<double>(r.samples);
    r.top1 = correct1 / static_cast<double>(r.samples);
    if (classes > 5) r.top5 = correct5 / static_cast<double>(r.samples);
  }
  return r;
}

}  // namespace stoker::train
