// stoker._stoker.Diagnosis: the diagnosis `stoker train` runs along its loop, fed by a Python
// training loop (stoker.watch). The words are the trainer's: the same verdicts, shares,
// evidence and recommended changes (stoker/diagnose/loop_diagnosis.h), the changes worded in
// Python's names (num_workers=4 where stoker train says --workers 4, from the loader's table
// stoker/data/loader_keys.h). The changes also come as data: epoch_changes(), recommend().
// A watched loop's windows and passes are recorded to the running monitor (recorded_diagnosis.h).
#include <pybind11/stl.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "loader_handle.h"
#include "monitor_handle.h"
#include "recorded_diagnosis.h"
#include "stoker/data/loader_keys.h"
#include "stoker/diagnose/loop_diagnosis.h"
#include "stoker/diagnose/verdict.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// A recommended change as data: the option (its row's names) and value, or the words of a
// change that is not an option; with both front ends' words.
py::dict change_dict(const diagnose::Recommendation& r) {
  py::dict d;
  if (r.option) {
    const data::LoaderKeySpec& row = data::loader_key(r.option->key);
    d["python"] = row.python.empty() ? py::object(py::none()) : py::object(py::str(std::string(row.python)));
    d["flag"] = std::string(row.flag);
    d["value"] = r.option->value;
    d["or_more"] = r.option->or_more;
  } else {
    d["python"] = py::none();
    d["flag"] = py::none();
    d["value"] = py::none();
    d["or_more"] = false;
  }
  d["change"] = diagnose::change_words(r, data::FrontEnd::kPython);
  d["command_line"] = diagnose::change_words(r, data::FrontEnd::kCommandLine);
  d["reason"] = r.reason;
  d["gain"] = r.predicted_gain;
  return d;
}

py::list change_list(const std::vector<diagnose::Recommendation>& changes) {
  py::list list;
  for (const diagnose::Recommendation& r : changes) list.append(change_dict(r));
  return list;
}

// A struct's numbers from a dict's keys (the ones it has); an unknown key is a ValueError.
template <typename Struct>
void fill(Struct* into, const py::dict& from, std::initializer_list<std::pair<const char*, double Struct::*>> numbers,
          std::initializer_list<std::pair<const char*, int64_t Struct::*>> counts,
          std::initializer_list<std::pair<const char*, int Struct::*>> ints) {
  for (const auto& [key, value] : from) {
    const std::string name = py::str(key);
    bool known = false;
    for (const auto& [n, member] : numbers) {
      if (name != n) continue;
      into->*member = py::cast<double>(value);
      known = true;
    }
    for (const auto& [n, member] : counts) {
      if (name != n) continue;
      into->*member = py::cast<int64_t>(value);
      known = true;
    }
    for (const auto& [n, member] : ints) {
      if (name != n) continue;
      into->*member = py::cast<int>(value);
      known = true;
    }
    if (!known) throw py::value_error("recommend: unknown figure '" + name + "'");
  }
}

}  // namespace

void bind_diagnosis(py::module_& m) {
  m.def(
      "classify",
      [](double wait, double copy, double compute) {
        diagnose::StepWindow w;
        w.wait_s = wait;
        w.copy_s = copy;
        w.compute_s = compute;
        return diagnose::verdict_name(diagnose::classify(w));
      },
      "The verdict on steps that spent these seconds waiting, copying and computing: 'input-bound (high)', ...",
      py::arg("wait"), py::arg("copy"), py::arg("compute"));
  m.def(
      "recommend",
      [](const py::dict& window, const py::dict& pipeline) {
        using diagnose::PipelineEvidence;
        using diagnose::StepWindow;
        StepWindow w;
        fill<StepWindow>(&w, window,
                         {{"wait", &StepWindow::wait_s},
                          {"copy", &StepWindow::copy_s},
                          {"compute", &StepWindow::compute_s},
                          {"gpu_util_percent", &StepWindow::gpu_util_percent}},
                         {{"steps", &StepWindow::steps}, {"samples", &StepWindow::samples}}, {});
        PipelineEvidence p;
        fill<PipelineEvidence>(&p, pipeline,
                               {{"read", &PipelineEvidence::read_s},
                                {"decode", &PipelineEvidence::decode_s},
                                {"transform", &PipelineEvidence::transform_s},
                                {"busy_worker", &PipelineEvidence::busy_worker_s},
                                {"cpu_percent", &PipelineEvidence::cpu_percent},
                                {"decoded_bytes", &PipelineEvidence::decoded_bytes},
                                {"free_ram_bytes", &PipelineEvidence::free_ram_bytes}},
                               {{"samples", &PipelineEvidence::samples},
                                {"dataset_samples", &PipelineEvidence::dataset_samples},
                                {"jpeg_samples", &PipelineEvidence::jpeg_samples},
                                {"spliced_samples", &PipelineEvidence::spliced_samples}},
                               {{"workers", &PipelineEvidence::workers},
                                {"prefetch_factor", &PipelineEvidence::prefetch_factor},
                                {"cores", &PipelineEvidence::cores}});
        if (!pipeline.contains("busy_worker")) p.busy_worker_s = p.read_s + p.decode_s + p.transform_s;
        const std::vector<diagnose::Recommendation> changes = diagnose::recommend(diagnose::classify(w), w, p);
        return py::make_tuple(change_list(changes), diagnose::format_changes(changes, data::FrontEnd::kPython));
      },
      "The changes stoker train would recommend for a window of steps (wait, copy, compute: seconds; steps, "
      "samples) and its loader's figures (workers, prefetch_factor, cores, read, decode, transform, busy_worker: "
      "worker seconds; samples, cpu_percent, decoded_bytes, dataset_samples, free_ram_bytes, jpeg_samples, "
      "spliced_samples): (a list of dicts, the 'try: ...' line in Python's words)",
      py::arg("window"), py::arg("pipeline"));
  py::class_<RecordedDiagnosis>(m, "Diagnosis")
      // loader: a stoker Loader whose stage clocks are the evidence, or None (another loader);
      // monitor: the Monitor whose GPU and CPU figures are read, or None.
      .def(py::init([](LoaderHandle* loader, MonitorHandle* monitor, int cores, int gpu_index, bool auto_workers,
                       int prefetch_factor, std::string dataset) {
             return std::make_unique<RecordedDiagnosis>(
                 loader != nullptr ? &loader->loader() : nullptr, monitor != nullptr ? &monitor->sampler() : nullptr,
                 cores, gpu_index, auto_workers, prefetch_factor, std::move(dataset), data::FrontEnd::kPython);
           }),
           py::arg("loader"), py::arg("monitor"), py::arg("cores"), py::arg("gpu_index") = -1,
           py::arg("auto_workers") = false, py::arg("prefetch_factor") = 0, py::arg("dataset") = "",
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("set_decoded_cache_possible", &diagnose::LoopDiagnosis::set_decoded_cache_possible, py::arg("possible"),
           "Whether the loader's data can take the decoded cache (not a Dataset object's own items); default True")
      .def("set_reads_in_python", &diagnose::LoopDiagnosis::set_reads_in_python, py::arg("in_python"),
           py::arg("processes") = 0, py::arg("stream") = false,
           "Whether the loader's reads are a Dataset object's __getitem__ (named dataset[i]), the worker "
           "processes calling it (dataset_processes), and whether they run an iterable-style Dataset's __iter__ "
           "instead (named __iter__); default False, 0, False")
      .def("set_monitor", &RecordedDiagnosis::set_monitor_handle,
           "The Monitor (or None) and NVML GPU index the next steps read and record to", py::arg("monitor"),
           py::arg("gpu_index"), py::keep_alive<1, 2>())
      .def("record_as", &RecordedDiagnosis::record_as, py::arg("loop"), py::arg("rank"),
           "Records the next passes, as loop `loop` ('' unnamed) of rank `rank`, to the monitor's TensorBoard "
           "event file (per window) and loops CSV (per pass)")
      .def("resume_steps_at", &RecordedDiagnosis::resume_steps_at, py::arg("steps"),
           "The TensorBoard step the windows go on from where no step was counted yet (a resumed loop's "
           "epoch * batches per epoch + first batch); later, nothing")
      .def("start_epoch", &diagnose::LoopDiagnosis::start_epoch)
      .def("after_step", &RecordedDiagnosis::step, py::arg("wait"), py::arg("copy"), py::arg("compute"),
           py::arg("samples"))
      .def("end_pass", &RecordedDiagnosis::end_pass, py::arg("epoch"),
           "The pass numbered `epoch` ended: the rest of its window and its row are recorded")
      .def("epoch_report", &diagnose::LoopDiagnosis::epoch_report)
      .def_property_readonly(
          "epoch_verdict", [](const RecordedDiagnosis& d) { return diagnose::verdict_name(d.epoch_verdict()); },
          "The verdict epoch_report() prints: 'input-bound (high)', 'compute-bound', ...")
      .def_property_readonly("epoch_judged", &diagnose::LoopDiagnosis::epoch_judged,
                             "False for a pass too short to judge with no window before it: no changes to add")
      .def(
          "epoch_changes", [](const RecordedDiagnosis& d) { return change_list(d.epoch_changes()); },
          "The changes of epoch_report()'s 'try:' line, as dicts (python, flag, value, or_more, change, "
          "command_line, reason, gain)")
      .def_property_readonly("epoch_window", [](const RecordedDiagnosis& d) {
        const diagnose::StepWindow& w = d.epoch_window();
        return py::dict(py::arg("wait") = w.wait_s, py::arg("copy") = w.copy_s, py::arg("compute") = w.compute_s,
                        py::arg("steps") = w.steps, py::arg("samples") = w.samples);
      });
}

}  // namespace stoker::python
