// The parts of the extension module stoker._stoker, one function per part (module.cpp calls
// them in this order).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <vector>

#include "stoker/data/gpu_sample.h"

namespace stoker::python {

// Bytes from the file system (a path, a class folder's name) as Python's str, the way
// os.fsdecode makes it: bytes that are not UTF-8 become surrogate escapes, so nothing is lost
// and os.fsencode gives them back.
pybind11::str fs_str(std::string_view bytes);
pybind11::list fs_strs(const std::vector<std::string>& bytes);

// LoaderOptions::gpu_handoff as Python spells it: 'off', 'hardware', 'all', 'cuda_path'
// (loader_binding.cpp). handoff_of throws UsageError naming the words for another.
data::GpuHandoff handoff_of(const std::string& text);
const char* handoff_name(data::GpuHandoff handoff);

void bind_errors(pybind11::module_& m);          // module.cpp
void bind_batch_arrays(pybind11::module_& m);    // batch_arrays.cpp
void bind_loader(pybind11::module_& m);          // loader_binding.cpp
void bind_monitor(pybind11::module_& m);         // monitor_binding.cpp
void bind_diagnosis(pybind11::module_& m);       // diagnosis_binding.cpp
void bind_loader_keys(pybind11::module_& m);     // loader_keys_binding.cpp
void bind_gpu_decode(pybind11::module_& m);      // gpu_decode_binding.cpp
void bind_folder_samples(pybind11::module_& m);  // folder_samples.cpp
void bind_memory_images(pybind11::module_& m);   // memory_images.cpp

}  // namespace stoker::python
