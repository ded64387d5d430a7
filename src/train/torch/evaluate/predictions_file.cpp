#include "train/torch/evaluate/predictions_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "stoker/core/csv_line.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"

namespace stoker::train {

namespace {

// The predictions file and its .tmp beside it, each a new name or a regular file (never a
// device, a FIFO or a symlink, which the rename would replace).
const std::string& checked(const std::string& path) {
  check_output_file(path, "predictions file");
  check_output_file(path + ".tmp", "predictions file's temporary");
  return path;
}

}  // namespace

PredictionsFile::PredictionsFile(const std::string& path, const ExportedWeights& w, const data::Source& source)
    : path_(checked(path)), tmp_(path + ".tmp"), out_(tmp_), weights_(w), source_(source) {
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

void PredictionsFile::add(const FedBatch& batch, const torch::Tensor& outputs) {
  const torch::Tensor out = outputs.cpu().contiguous();
  const uint64_t* indices = batch.host.indices();
  const int64_t n = batch.size();
  if (weights_.objective.classification()) {
    const auto [confidence, predicted] = torch::softmax(out, 1).max(1);
    const float* p = confidence.data_ptr<float>();
    const int64_t* c = predicted.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      out_ << csv_cell(source_.name(indices[i])) << "," << class_text(batch.host.labels()[i]) << "," << class_text(c[i])
           << "," << fmt::format("{:.6f}", p[i]) << "\n";
    }
  } else {
    const int64_t per_sample = weights_.objective.outputs;
    const float* predicted = out.data_ptr<float>();
    const float* targets = batch.host.targets();
    for (int64_t i = 0; i < n; ++i) {
      out_ << csv_cell(source_.name(indices[i]));
      for (int64_t t = 0; t < per_sample; ++t) out_ << "," << fmt::format("{:g}", targets[i * per_sample + t]);
      for (int64_t t = 0; t < per_sample; ++t) out_ << "," << fmt::format("{:g}", predicted[i * per_sample + t]);
      out_ << "\n";
    }
  }
  rows_ += n;
}

void PredictionsFile::finish() {
  out_.close();
  std::error_code ec;
  if (!out_) {
    std::filesystem::remove(tmp_, ec);
    throw SystemError("writing predictions file " + path_ + " failed (disk full?)");
  }
  replace_file(tmp_, path_, "predictions file");
}

std::string PredictionsFile::class_text(int64_t id) const {
  return id >= 0 && static_cast<size_t>(id) < weights_.class_names.size() ? csv_cell(weights_.class_names[id])
                                                                          : std::to_string(id);
}

}  // namespace stoker::train
