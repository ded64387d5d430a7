// run_training: a training run from its config to its exported weights. Builds the setup and
// checks it (setup.h), opens the run folder (run_directory.h), starts the monitor, the
// diagnosis and the records, runs the loop (train_loop.h) and exports the weights
// (weights_export.h).
#include "stoker/train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "stoker/core/process.h"
#include "stoker/diagnose/loop_diagnosis.h"
#include "stoker/monitor/sampler.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/parallel/data_parallel.h"
#include "train/torch/run/run_directory.h"
#include "train/torch/run/run_records.h"
#include "train/torch/run/setup.h"
#include "train/torch/run/tensorboard_log.h"
#include "train/torch/run/train_loop.h"
#include "train/torch/run/weights_export.h"
#include "train/torch/step/gpu_memory.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

std::string torch_description() {
  return "libtorch " + compat::torch_version() + (compat::cuda_available() ? " (CUDA)" : " (CPU)");
}

namespace {

// How long a data-parallel process waits for the others (joining, every all-reduce) before
// it gives up with an error: torch's default. The leader's data setup and each validation
// pass happen while the others wait.
constexpr std::chrono::minutes kGroupTimeout{30};

}  // namespace

int run_training(const TrainConfig& cfg, const TrainUi& shown) {
  const ProcessPlace place = process_place_from_env();
  std::unique_ptr<DataParallel> group;
  if (place.world_size > 1) group = std::make_unique<DataParallel>(place, kGroupTimeout);
  const bool leader = place.leader();
  TrainUi ui = shown;
  ui.progress = ui.progress && leader;
  ui.json_summary = ui.json_summary && leader;

  // In a group the leader opens the data first, so a mistake in it is reported once, by one
  // process (the launcher stops the others); the rest start when it has.
  if (group && !leader) group->barrier();
  std::optional<Resumption> resumption = open_resumption(cfg, place);
  const FittedStatistics* fitted =
      resumption && resumption->checkpoint->meta().standardize ? &*resumption->checkpoint->meta().standardize : nullptr;
  TrainSetup setup = make_setup(cfg, place, fitted);
  check_run_needs(cfg, setup);
  // The moving average of the weights: the leader's, which validates and saves it (every
  // process takes the same steps, so the others would hold the same one).
  std::optional<ModelEma> ema;
  const AveragePlan average = average_plan(cfg, place.world_size, optimizer_steps_per_epoch(cfg, setup));
  if (leader && average.on) ema.emplace(another_model(cfg, setup), *setup.model, average);
  const RunStart start = open_run(cfg, setup, std::move(resumption), place, ema ? &*ema : nullptr);
  if (group && leader) group->barrier();
  if (group) group->broadcast_from_leader(*setup.model);  // one starting point, whatever each process drew
  if (leader) print_run_header(cfg, setup, start, average, place);

  monitor::SamplerOptions monitor_options;
  monitor_options.pid = ::getpid();
  // The CUDA ordinal as NVML's index: the same unless CUDA_VISIBLE_DEVICES reorders them.
  const int gpu_index = setup.device.is_cuda() ? std::max<int>(0, setup.device.index()) : -1;
  GpuMemoryPeak gpu_memory_peak;  // outlives the sampler's thread, which feeds it
  monitor::Sampler monitor(monitor_options);
  if (gpu_index >= 0) gpu_memory_peak.attach(monitor, gpu_index);
  std::optional<TensorBoardLog> tensorboard;  // the leader's, in the run folder's tb/
  if (leader && cfg.tensorboard) {
    tensorboard.emplace(start.run_dir, start.global_step);
    tensorboard->attach(monitor);
  }
  monitor.start();
  // The processes on this machine share its cores: the diagnosis counts this one's share.
  diagnose::LoopDiagnosis diagnosis(setup.train_loader.get(), &monitor, rank_cores(place.local_world_size), gpu_index,
                                    cfg.num_workers == kAuto, cfg.prefetch_factor, cfg.data);
  const data::TransformSpec inputs = inference_inputs(setup);  // what feeding the trained model takes
  const WeightsMetadata metadata(cfg, setup, inputs);
  std::optional<RunRecords> records;  // the leader's run folder; none in the other processes
  if (leader) {
    records.emplace(cfg, start.run_dir, start.resumed);
    records->set_process(torch::get_num_threads(), setup.host);
    records->set_inputs(inputs);
  }
  TrainLoop loop(RunParts{cfg, ui, setup, start, monitor, diagnosis, gpu_memory_peak, metadata, gpu_index, group.get(),
                          ema ? &*ema : nullptr, records ? &*records : nullptr, tensorboard ? &*tensorboard : nullptr});
  const int exit_code = loop.run();
  monitor.stop();
  if (!leader) return exit_code;
  return export_run(cfg, ui.json_summary, setup, start, metadata, ema ? &*ema : nullptr, *records, loop.best_summary(),
                    tensorboard ? &*tensorboard : nullptr, loop.stepper().global_step(), exit_code);
}

}  // namespace stoker::train
