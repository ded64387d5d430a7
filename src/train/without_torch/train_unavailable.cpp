// Built instead of src/train/torch/ when CMake found no libtorch: `stoker train`,
// `stoker doctor` and `stoker evaluate` explain.
#include "stoker/core/error.h"
#include "stoker/train/doctor.h"
#include "stoker/train/evaluation.h"
#include "stoker/train/trainer.h"

namespace stoker::train {

namespace {

std::string unavailable_text(const char* what) {
  return std::string("this stoker was built without libtorch, so it cannot ") + what +
         "; install libtorch-dev (scripts/install_deps.sh does) or configure with "
         "-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') "
         "and rebuild";
}

[[noreturn]] void unavailable(const char* what) { throw UsageError(unavailable_text(what)); }

}  // namespace

int run_training(const TrainConfig&, const TrainUi&) { unavailable("train"); }

int run_doctor(const TrainConfig&, const DoctorOptions&) { unavailable("measure a model"); }

int run_evaluation(const EvaluateOptions&) { unavailable("evaluate a model"); }

std::string torch_description() { return "not built with libtorch"; }

std::string data_parallel_unavailable_reason() { return unavailable_text("train"); }

}  // namespace stoker::train
