// `stoker evaluate`: exported weights, rebuilt from their own metadata, scored on a dataset.
#include "stoker/train/evaluation.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/host_tuning.h"
#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"
#include "stoker/core/output_clash.h"
#include "stoker/data/loader.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/source.h"
#include "stoker/train/trainer.h"
#include "train/torch/evaluate/evaluate.h"
#include "train/torch/evaluate/predictions_file.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"
#include "train/torch/run/exported_weights.h"
#include "train/torch/run/run_records.h"
#include "train/torch/run/setup.h"

namespace stoker::train {

namespace {

std::string classes_text(const std::vector<std::string>& names) {
  std::string text = fmt::format("{} classes (", names.size());
  for (size_t i = 0; i < names.size() && i < 4; ++i) text += (i ? ", " : "") + names[i];
  return text + (names.size() > 4 ? ", …)" : ")");
}

// Throws UsageError when `source` holds samples or targets the weights were not trained on.
void check_data_fits(const ExportedWeights& w, const data::Source& source, const std::string& data) {
  const int features = source.feature_count();
  if (features != w.features) {
    const auto what = [](int n) { return n > 0 ? fmt::format("{} features per sample", n) : std::string("images"); };
    throw UsageError(fmt::format("{} holds {}, and the weights {} take {}; give data of the kind they were trained on",
                                 data, what(features), w.path, what(w.features)));
  }
  if (w.objective.classification()) {
    const auto& names = source.class_names();
    const bool fits = source.target_kind() == data::TargetKind::kClass &&
                      names.size() <= static_cast<size_t>(w.objective.outputs) &&
                      (w.class_names.empty() || std::equal(names.begin(), names.end(), w.class_names.begin()));
    if (!fits) {
      throw UsageError(fmt::format(
          "{} has {}, and the weights {} were trained on {}; its classes must be theirs, in the same order, or their "
          "first few",
          data, source.target_kind() == data::TargetKind::kClass ? classes_text(names) : "float targets", w.path,
          classes_text(w.class_names)));
    }
  } else if (source.target_kind() == data::TargetKind::kClass || source.target_dim() != w.objective.outputs) {
    throw UsageError(fmt::format(
        "{} has {}, and the weights {} predict {} float target{}; give data with the same targets", data,
        source.target_kind() == data::TargetKind::kClass ? classes_text(source.class_names())
                                                         : fmt::format("{} float targets", source.target_dim()),
        w.path, w.objective.outputs, w.objective.outputs == 1 ? "" : "s"));
  }
}

// How many samples of each class there were and how many the model called right (recall).
struct ClassRecall {
  std::vector<int64_t> samples, correct;

  explicit ClassRecall(int64_t classes) : samples(classes, 0), correct(classes, 0) {}
  void add(const FedBatch& batch, const torch::Tensor& outputs) {
    const torch::Tensor predicted = outputs.argmax(1).cpu();
    const int64_t* p = predicted.data_ptr<int64_t>();
    const int64_t* labels = batch.host.labels();
    for (int64_t i = 0; i < batch.size(); ++i) {
      ++samples[labels[i]];
      correct[labels[i]] += p[i] == labels[i] ? 1 : 0;
    }
  }
  double recall(size_t c) const { return static_cast<double>(correct[c]) / static_cast<double>(samples[c]); }
  // The classes the data holds, lowest recall first (ties by class id).
  std::vector<size_t> by_recall() const {
    std::vector<size_t> order;
    for (size_t c = 0; c < samples.size(); ++c) {
      if (samples[c] > 0) order.push_back(c);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return recall(a) < recall(b); });
    return order;
  }
};

std::string class_name(const ExportedWeights& w, size_t c) {
  return c < w.class_names.size() ? w.class_names[c] : std::to_string(c);
}

// "classes  recall lowest 6 Shirt 58.1 % (1,000), 2 Pullover 79.0 % (1,000), … · highest 1 Trouser 97.6 % (1,000)"
// (the id is left out where the name is the id)
std::string recall_line(const ExportedWeights& w, const ClassRecall& recall) {
  const std::vector<size_t> order = recall.by_recall();
  const auto one = [&](size_t c) {
    const std::string name = class_name(w, c);
    return fmt::format("{}{} {:.1f} % ({})", name == std::to_string(c) ? "" : std::to_string(c) + " ", name,
                       100 * recall.recall(c), grouped(static_cast<double>(recall.samples[c])));
  };
  std::string line = "classes  recall lowest ";
  const size_t shown = std::min<size_t>(3, order.size());
  for (size_t i = 0; i < shown; ++i) line += (i ? ", " : "") + one(order[i]);
  if (order.size() > shown) line += " · highest " + one(order.back());
  return line;
}

}  // namespace

int run_evaluation(const EvaluateOptions& options) {
  for (const std::string& message :
       {data::range_message(data::LoaderKey::kBatchSize, int64_t{options.batch_size}, "batch_size"),
        data::range_message(data::LoaderKey::kWorkers, int64_t{options.workers}, "workers")}) {
    if (!message.empty()) throw UsageError(message);
  }
  TrainConfig device_choice;
  device_choice.device = options.device;
  validate(device_choice);  // the device's text, checked as `stoker train` checks it
  const std::string weights_file = exported_weights_file(options.weights);
  if (!options.predictions.empty()) {
    std::vector<CommandInput> inputs = data::data_inputs(options.data, "--data");
    inputs.push_back({weights_file, "the weights"});
    check_output_apart(options.predictions, "--predictions", inputs);
    check_output_apart(options.predictions + ".tmp", "--predictions' temporary file", inputs);
  }
  const ExportedWeights w = read_exported_weights(weights_file);
  std::shared_ptr<const data::Source> source =
      data::open_source_showing_progress(options.data, data::Split::kValidationFile);
  const std::string column_note = data::columns_left_unread(*source, options.data, "stoker evaluate");
  if (!w.objective.classification() && source->target_kind() == data::TargetKind::kClass &&
      source->targets_are_numbers()) {
    source = data::integers_as_regression(source);  // as --task regression trained on them
  }
  check_data_fits(w, *source, options.data);

  const torch::Device device = pick_device(device_choice);
  set_intra_op_threads(0);
  tune_host_for_training();

  data::LoaderOptions loader_options;
  loader_options.batch_size = options.batch_size;
  loader_options.workers = options.workers;
  loader_options.prefetch = std::max(2, 2 * options.workers);
  loader_options.sampler.shuffle = false;
  loader_options.run_ahead = false;  // one pass
  loader_options.transform = w.inputs;
  const bool conv_net = w.model != "mlp";
  std::unique_ptr<PinnedAllocator> pinned;
  if (device.is_cuda()) pinned = std::make_unique<PinnedAllocator>();
  loader_options.allocator = pinned.get();
  const FeedOptions feed = plan_device_feed(device, conv_net, &loader_options);
  data::Loader loader(source, loader_options);

  const data::TransformSpec& spec = loader.options().transform;
  std::shared_ptr<Network> model =
      make_model(w.model, {spec.channels, spec.out_height, spec.out_width}, w.objective.outputs);
  load_safetensors(*model, w.path);
  model->to(device);
  if (feed.channels_last) to_channels_last(*model);

  if (!column_note.empty()) std::fprintf(stderr, "%s\n", column_note.c_str());
  if (!options.json) {
    std::printf(
        "weights  %s · %s · %s%s\n", w.path.c_str(), w.model.c_str(),
        w.objective.classification()
            ? fmt::format("classification, {} classes", w.objective.outputs).c_str()
            : fmt::format("regression, {} target{}", w.objective.outputs, w.objective.outputs == 1 ? "" : "s").c_str(),
        w.note.c_str());
    std::printf("data     %s\n", source->describe().c_str());
    std::printf("inputs   %s\n", w.inputs.describe().c_str());
    std::printf("device   %s · %s\n", device.str().c_str(), torch_description().c_str());
    std::fflush(stdout);
  }

  std::optional<PredictionsFile> predictions;
  if (!options.predictions.empty()) predictions.emplace(options.predictions, w, *source);
  std::optional<ClassRecall> recall;
  if (w.objective.classification()) recall.emplace(w.objective.outputs);
  Stopwatch clock;
  const EvalResult r =
      evaluate(*model, loader, w.objective, feed, [&](const FedBatch& batch, const torch::Tensor& out) {
        if (predictions) predictions->add(batch, out);
        if (recall) recall->add(batch, out);
      });
  const double seconds = ns_to_seconds(clock.elapsed_ns());
  if (predictions) predictions->finish();

  using nlohmann::json;
  if (options.json) {
    json result = {{"weights", w.path},
                   {"model", w.model},
                   {"data", options.data},
                   {"samples", r.samples},
                   {"loss", r.samples ? json(r.loss) : json(nullptr)},
                   {"top1", r.top1 >= 0 ? json(r.top1) : json(nullptr)},
                   {"top5", r.top5 >= 0 ? json(r.top5) : json(nullptr)},
                   {"auc", r.auc >= 0 ? json(r.auc) : json(nullptr)},
                   {"mae", r.mae.empty() ? json(nullptr) : json(r.mae)},
                   {"seconds", seconds},
                   {"samples_per_sec", seconds > 0 ? r.samples / seconds : 0.0},
                   {"predictions", predictions ? json(options.predictions) : json(nullptr)},
                   {"per_class", nullptr}};
    if (recall) {  // the classes the data holds, in class order
      json per_class = json::array();
      for (size_t c = 0; c < recall->samples.size(); ++c) {
        if (recall->samples[c] == 0) continue;
        per_class.push_back(
            {{"class", c}, {"name", class_name(w, c)}, {"samples", recall->samples[c]}, {"recall", recall->recall(c)}});
      }
      result["per_class"] = per_class;
    }
    std::printf("%s\n", dump_json(result).c_str());
    return 0;
  }
  std::string figures = format_eval(r);  // "val acc 91.2 % (top-5 …)", "val loss … · MAE …"
  if (figures.starts_with("val ")) figures = figures.substr(4);
  if (w.objective.classification()) figures += fmt::format(" · loss {:.4f}", r.loss);
  std::printf("result   %s · %s samples in %.1f s (%s samples/s)\n", figures.c_str(),
              grouped(static_cast<double>(r.samples)).c_str(), seconds,
              grouped(seconds > 0 ? r.samples / seconds : 0.0).c_str());
  if (recall) std::printf("%s\n", recall_line(w, *recall).c_str());
  if (predictions) {
    std::printf("saved    %s (%s rows)\n", options.predictions.c_str(),
                grouped(static_cast<double>(predictions->rows())).c_str());
  }
  return 0;
}

}  // namespace stoker::train
