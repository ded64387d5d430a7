// `stoker evaluate`: exported weights, rebuilt from their own metadata, scored on a dataset.
#include "stoker/train/evaluation.h"

#include <fmt/format.h>

#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "evaluate.h"
#include "models.h"
#include "run_records.h"
#include "safetensors.h"
#include "setup.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/host_tuning.h"
#include "stoker/core/numbers.h"
#include "stoker/data/loader.h"
#include "stoker/train/trainer.h"

namespace stoker::train {

namespace {

namespace fs = std::filesystem;

// The file to read: `given`, or in a run folder its best weights, else its last.
std::string weights_file(const std::string& given) {
  std::error_code ec;
  if (fs::is_directory(given, ec)) {
    for (const char* name : {"model_best.safetensors", "model.safetensors"}) {
      const fs::path path = fs::path(given) / name;
      if (fs::exists(path, ec)) return path.string();
    }
    throw DataError(given + " holds neither model_best.safetensors nor model.safetensors; give the folder of a "
                            "finished stoker train run, or a .safetensors file it wrote");
  }
  if (!fs::exists(given, ec)) {
    throw DataError("weights " + given + " do not exist; give a .safetensors file that stoker train wrote, or its run folder");
  }
  return given;
}

// What the weights' metadata says about feeding and scoring them.
struct Weights {
  std::string path;
  std::string model;
  Objective objective;
  std::vector<std::string> class_names;  // empty for regression
  data::TransformSpec inputs;            // the evaluation chain, with Standardize's statistics
  int features = 0;                      // per sample; 0 for images
  std::string note;                      // " · best val acc 91.2 % at epoch 3", " · moving average …"
};

Weights read_weights(const std::string& path) {
  const std::map<std::string, std::string> m = read_safetensors_metadata(path);
  const auto need = [&](const char* key) -> const std::string& {
    const auto it = m.find(key);
    if (it == m.end()) {
      throw DataError(fmt::format("{} has no '{}' in its metadata, so stoker train did not write it; give the "
                                  "model.safetensors, model_best.safetensors or model_ema.safetensors of a run",
                                  path, key));
    }
    return it->second;
  };
  const auto text_or = [&](const char* key, const std::string& otherwise) {
    const auto it = m.find(key);
    return it == m.end() ? otherwise : it->second;
  };
  Weights w;
  w.path = path;
  w.model = need("model");
  try {
    const bool classes = need("task") == to_string(TaskKind::kClassification);
    w.objective.task = classes ? TaskKind::kClassification : TaskKind::kRegression;
    w.objective.outputs = std::stoll(need("outputs"));
    // Files from before the loss was recorded were trained with the task's default.
    const std::string loss = text_or("loss", to_string(classes ? LossKind::kCrossEntropy : LossKind::kMse));
    w.objective.loss = classes ? LossKind::kCrossEntropy : LossKind::kMse;
    for (const LossKind kind : {LossKind::kCrossEntropy, LossKind::kMse, LossKind::kL1, LossKind::kSmoothL1}) {
      if (to_string(kind) == loss) w.objective.loss = kind;
    }
    w.objective.label_smoothing = std::stod(text_or("label_smoothing", "0"));
    w.class_names = nlohmann::json::parse(need("class_names")).get<std::vector<std::string>>();
    const nlohmann::json inputs = nlohmann::json::parse(need("inputs"));
    w.inputs = data::parse_transforms(inputs.at("transform").get<std::string>());
    w.inputs.dtype = data::DType::kFloat32;
    if (!inputs.at("features").is_null()) w.features = inputs.at("features").get<int>();
    if (const auto& standardize = inputs.at("standardize"); !standardize.is_null()) {
      w.inputs.feature_mean = standardize.at("mean").get<std::vector<float>>();
      w.inputs.feature_std = standardize.at("std").get<std::vector<float>>();
    }
    if (m.count("ema_decay")) {
      w.note = fmt::format(" · moving average (decay {:g}, {} updates)", std::stod(m.at("ema_decay")),
                           grouped(std::stod(text_or("ema_updates", "0"))));
    }
    if (m.count("best_epoch")) {
      const double value = std::stod(need("best_value"));
      const bool mae = need("best_metric").ends_with("val_mae");
      w.note += fmt::format(" · best epoch {} (val {} {})", need("best_epoch"), mae ? "MAE" : "acc",
                            mae ? fmt::format("{:.4g}", value) : fmt::format("{:.1f} %", 100 * value));
    }
  } catch (const UsageError& e) {
    throw DataError(fmt::format("{}: its metadata's input chain does not parse ({})", path, e.what()));
  } catch (const std::exception& e) {  // nlohmann's and std::sto*'s
    throw DataError(fmt::format("{}: its metadata is not what stoker train writes ({})", path, e.what()));
  }
  return w;
}

std::string classes_text(const std::vector<std::string>& names) {
  std::string text = fmt::format("{} classes (", names.size());
  for (size_t i = 0; i < names.size() && i < 4; ++i) text += (i ? ", " : "") + names[i];
  return text + (names.size() > 4 ? ", …)" : ")");
}

// Throws UsageError when `source` holds samples or targets the weights were not trained on.
void check_data_fits(const Weights& w, const data::Source& source, const std::string& data) {
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
    throw UsageError(fmt::format("{} has {}, and the weights {} predict {} float target{}; give data with the same targets",
                                 data,
                                 source.target_kind() == data::TargetKind::kClass
                                     ? classes_text(source.class_names())
                                     : fmt::format("{} float targets", source.target_dim()),
                                 w.path, w.objective.outputs, w.objective.outputs == 1 ? "" : "s"));
  }
}

// A CSV cell: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// One row per sample: "sample,target,predicted,confidence" (class names where the data has
// them; confidence is the predicted class's softmax probability), or for regression
// "sample,target_0,…,predicted_0,…".
class PredictionsFile {
 public:
  PredictionsFile(const std::string& path, const Weights& w, const data::Source& source)
      : path_(path), tmp_(path + ".tmp"), out_(tmp_), weights_(w), source_(source) {
    if (!out_) throw UsageError("cannot write predictions file " + path + ": " + std::strerror(errno));
    if (w.objective.classification()) {
      out_ << "sample,target,predicted,confidence\n";
    } else {
      out_ << "sample";
      for (const char* side : {"target", "predicted"}) {
        for (int64_t t = 0; t < w.objective.outputs; ++t) out_ << "," << side << "_" << t;
      }
      out_ << "\n";
    }
  }

  void add(const FedBatch& batch, const torch::Tensor& outputs) {
    const torch::Tensor out = outputs.cpu().contiguous();
    const uint64_t* indices = batch.host.indices();
    const int64_t n = batch.size();
    if (weights_.objective.classification()) {
      const auto [confidence, predicted] = torch::softmax(out, 1).max(1);
      const float* p = confidence.data_ptr<float>();
      const int64_t* c = predicted.data_ptr<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        out_ << csv_cell(source_.name(indices[i])) << "," << class_text(batch.host.labels()[i]) << ","
             << class_text(c[i]) << "," << fmt::format("{:.6f}", p[i]) << "\n";
      }
    } else {
      const int64_t outputs_per_sample = weights_.objective.outputs;
      const float* predicted = out.data_ptr<float>();
      const float* targets = batch.host.targets();
      for (int64_t i = 0; i < n; ++i) {
        out_ << csv_cell(source_.name(indices[i]));
        for (int64_t t = 0; t < outputs_per_sample; ++t) out_ << "," << fmt::format("{:g}", targets[i * outputs_per_sample + t]);
        for (int64_t t = 0; t < outputs_per_sample; ++t) out_ << "," << fmt::format("{:g}", predicted[i * outputs_per_sample + t]);
        out_ << "\n";
      }
    }
    rows_ += n;
  }

  // Moves the finished file into place; throws SystemError when it could not be written.
  void finish() {
    out_.close();
    std::error_code ec;
    if (!out_) {
      fs::remove(tmp_, ec);
      throw SystemError("writing predictions file " + path_ + " failed (disk full?)");
    }
    fs::rename(tmp_, path_, ec);
    if (ec) throw SystemError("cannot move " + tmp_ + " to " + path_ + ": " + ec.message());
  }
  int64_t rows() const { return rows_; }

 private:
  std::string class_text(int64_t id) const {
    return id >= 0 && static_cast<size_t>(id) < weights_.class_names.size() ? csv_cell(weights_.class_names[id])
                                                                           : std::to_string(id);
  }

  std::string path_, tmp_;
  std::ofstream out_;
  const Weights& weights_;
  const data::Source& source_;
  int64_t rows_ = 0;
};

}  // namespace

int run_evaluation(const EvaluateOptions& options) {
  if (options.batch_size < 1) {
    throw UsageError(fmt::format("batch_size must be >= 1 (got {})", options.batch_size));
  }
  if (options.workers < 1 || options.workers > 1024) {
    throw UsageError(fmt::format("workers must be in 1..1024 (got {})", options.workers));
  }
  TrainConfig device_choice;
  device_choice.device = options.device;
  validate(device_choice);  // the device's text, checked as `stoker train` checks it
  const Weights w = read_weights(weights_file(options.weights));
  std::shared_ptr<const data::Source> source = data::open_source(options.data, "val");
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
  loader_options.transform = w.inputs;
  const bool conv_net = w.model != "mlp";
  std::unique_ptr<PinnedAllocator> pinned;
  if (device.is_cuda()) pinned = std::make_unique<PinnedAllocator>();
  loader_options.allocator = pinned.get();
  const FeedOptions feed = plan_device_feed(device, conv_net, &loader_options);
  data::Loader loader(source, loader_options);

  const data::TransformSpec& spec = loader.options().transform;
  std::shared_ptr<Network> model = make_model(w.model, {spec.channels, spec.out_height, spec.out_width}, w.objective.outputs);
  load_safetensors(*model, w.path);
  model->to(device);
  if (feed.channels_last) to_channels_last(*model);

  if (!options.json) {
    std::printf("weights  %s · %s · %s%s\n", w.path.c_str(), w.model.c_str(),
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
  Stopwatch clock;
  const EvalResult r = evaluate(*model, loader, w.objective, feed, [&](const FedBatch& batch, const torch::Tensor& out) {
    if (predictions) predictions->add(batch, out);
  });
  const double seconds = ns_to_seconds(clock.elapsed_ns());
  if (predictions) predictions->finish();

  using nlohmann::json;
  if (options.json) {
    const json result = {{"weights", w.path},
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
                         {"predictions", predictions ? json(options.predictions) : json(nullptr)}};
    std::printf("%s\n", result.dump().c_str());
    return 0;
  }
  std::string figures = format_eval(r);  // "val acc 91.2 % (top-5 …)", "val loss … · MAE …"
  if (figures.starts_with("val ")) figures = figures.substr(4);
  if (w.objective.classification()) figures += fmt::format(" · loss {:.4f}", r.loss);
  std::printf("result   %s · %s samples in %.1f s (%s samples/s)\n", figures.c_str(),
              grouped(static_cast<double>(r.samples)).c_str(), seconds,
              grouped(seconds > 0 ? r.samples / seconds : 0.0).c_str());
  if (predictions) {
    std::printf("saved    %s (%s rows)\n", options.predictions.c_str(),
                grouped(static_cast<double>(predictions->rows())).c_str());
  }
  return 0;
}

}  // namespace stoker::train
