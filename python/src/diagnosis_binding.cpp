// stoker._stoker.Diagnosis: the diagnosis `stoker train` runs along its loop, fed by a Python
// training loop (stoker.watch). The words are the trainer's: the same verdicts, shares,
// evidence and recommended changes (stoker/diagnose/loop_diagnosis.h).
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "loader_handle.h"
#include "monitor_handle.h"
#include "stoker/diagnose/loop_diagnosis.h"

namespace py = pybind11;

namespace stoker::python {

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
  py::class_<diagnose::LoopDiagnosis>(m, "Diagnosis")
      // loader: a stoker Loader whose stage clocks are the evidence, or None (another loader);
      // monitor: the Monitor whose GPU and CPU figures are read, or None.
      .def(py::init([](LoaderHandle* loader, MonitorHandle* monitor, int cores, int gpu_index, bool auto_workers,
                       int prefetch_factor, std::string dataset) {
             return std::make_unique<diagnose::LoopDiagnosis>(
                 loader != nullptr ? &loader->loader() : nullptr, monitor != nullptr ? &monitor->sampler() : nullptr,
                 cores, gpu_index, auto_workers, prefetch_factor, std::move(dataset));
           }),
           py::arg("loader"), py::arg("monitor"), py::arg("cores"), py::arg("gpu_index") = -1,
           py::arg("auto_workers") = false, py::arg("prefetch_factor") = 0, py::arg("dataset") = "",
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("start_epoch", &diagnose::LoopDiagnosis::start_epoch)
      .def("after_step", &diagnose::LoopDiagnosis::after_step, py::arg("wait"), py::arg("copy"), py::arg("compute"),
           py::arg("samples"))
      .def("epoch_report", &diagnose::LoopDiagnosis::epoch_report)
      .def_property_readonly("epoch_window", [](const diagnose::LoopDiagnosis& d) {
        const diagnose::StepWindow& w = d.epoch_window();
        return py::dict(py::arg("wait") = w.wait_s, py::arg("copy") = w.copy_s, py::arg("compute") = w.compute_s,
                        py::arg("steps") = w.steps, py::arg("samples") = w.samples);
      });
}

}  // namespace stoker::python
