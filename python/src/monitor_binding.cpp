// stoker._stoker.Monitor: stoker::monitor's sampler thread inside the Python process (GPU
// through NVML, CPU, RAM), with its CSV or JSON-lines log (and the watched loops' CSV beside
// it), its TensorBoard event file and its summary.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "bindings.h"
#include "monitor_handle.h"
#include "stoker/core/user_files.h"
#include "stoker/monitor/sinks.h"
#include "stoker/report/loop_records.h"
#include "stoker/report/monitor_events.h"

namespace py = pybind11;

namespace stoker::python {

MonitorHandle::MonitorHandle(double interval_s, const std::string& log_path, bool gpu, const std::string& nvml_library,
                             const std::string& tensorboard_folder) {
  monitor::SamplerOptions options;
  options.interval_s = interval_s;
  options.pid = ::getpid();
  options.gpu = gpu;
  options.nvml_library = nvml_library;
  sampler_ = std::make_unique<monitor::Sampler>(options);
  const auto gpus = static_cast<int>(sampler_->gpus().size());
  const std::string loops_path = log_path.empty() ? "" : report::loops_csv_path(log_path);
  // Both paths refused before either file is made or emptied.
  if (!loops_path.empty()) check_output_file(loops_path, "the watched loops' file beside the log");
  if (log_path.size() >= 6 && log_path.compare(log_path.size() - 6, 6, ".jsonl") == 0) {
    auto log = std::make_shared<monitor::JsonlLog>(log_path, sampler_->gpus(), sampler_->gpu_status());
    sampler_->add_sink([log](const monitor::Sample& s) { log->write(s); });
  } else if (!log_path.empty()) {
    auto log = std::make_shared<monitor::CsvLog>(log_path, gpus);
    sampler_->add_sink([log](const monitor::Sample& s) { log->write(s); });
  }
  if (!loops_path.empty()) loops_ = std::make_unique<report::LoopsCsv>(loops_path);
  if (!tensorboard_folder.empty()) {
    tensorboard_ = std::make_shared<report::EventFile>(tensorboard_folder);
    sampler_->add_sink(report::monitor_events_sink(
        tensorboard_,
        [](const std::string& reason) {
          std::fprintf(stderr, "stoker.monitor: TensorBoard logging stopped: %s; monitoring goes on\n", reason.c_str());
        },
        run_step_));
  }
}

void bind_monitor(py::module_& m) {
  m.def("rank_log_path", &report::rank_log_path, py::arg("log"), py::arg("rank"),
        "The log rank `rank` writes when each rank is given `log`: run.csv, run.rank1.csv, ...");
  m.def("loops_csv_path", &report::loops_csv_path, py::arg("log"),
        "The watched loops' file beside the monitor log `log`: run.loops.csv for run.csv or run.jsonl");
  py::class_<MonitorHandle>(m, "Monitor")
      .def(py::init<double, const std::string&, bool, const std::string&, const std::string&>(), py::arg("interval"),
           py::arg("log") = "", py::arg("gpu") = true, py::arg("nvml_library") = "", py::arg("tensorboard") = "")
      .def_property_readonly("tensorboard_file", [](MonitorHandle& h) { return h.tensorboard_file(); })
      .def_property_readonly(
          "step", [](MonitorHandle& h) { return h.run_step().now(); },
          "The step the run has reached: its start, or the count of the loop watched without a name (else "
          "of the training stoker.DataLoader)")
      .def(
          "resume_at", [](MonitorHandle& h, int64_t steps) { h.run_step().resume_at(steps); }, py::arg("steps"),
          "The run resumes after `steps` steps (a resumed loader's place); a smaller count changes nothing")
      .def(
          "reach", [](MonitorHandle& h, int64_t steps) { h.run_step().reach(steps); }, py::arg("steps"),
          "The loop counting the run's steps (a training stoker.DataLoader where no loop is watched without a "
          "name) has finished `steps`; a smaller count changes nothing")
      .def("start", [](MonitorHandle& h) { h.sampler().start(); })
      .def("stop",
           [](MonitorHandle& h) {
             py::gil_scoped_release released;  // joins the sampler thread
             h.sampler().stop();
           })
      .def_property_readonly("gpu_status", [](MonitorHandle& h) { return h.sampler().gpu_status(); })
      .def_property_readonly("samples", [](MonitorHandle& h) { return h.sampler().samples_published(); })
      .def("status_line",
           [](MonitorHandle& h) -> std::string {
             return h.sampler().has_sample() ? monitor::format_status_line(h.sampler().latest()) : "";
           })
      .def("summary",
           [](MonitorHandle& h) { return monitor::format_summary(h.sampler().summary(), h.sampler().gpu_status()); });
}

}  // namespace stoker::python
