// The parts of the extension module stoker._stoker, one function per part (module.cpp calls
// them in this order).
#pragma once

#include <pybind11/pybind11.h>

namespace stoker::python {

void bind_errors(pybind11::module_& m);        // module.cpp
void bind_batch_arrays(pybind11::module_& m);  // batch_arrays.cpp
void bind_loader(pybind11::module_& m);        // loader_binding.cpp
void bind_monitor(pybind11::module_& m);       // monitor_binding.cpp
void bind_diagnosis(pybind11::module_& m);     // diagnosis_binding.cpp
void bind_loader_keys(pybind11::module_& m);   // loader_keys_binding.cpp

}  // namespace stoker::python
