// stoker._stoker: the C++ input pipeline, monitor and diagnosis for Python. It links no
// libtorch and no CUDA: batches leave as DLPack capsules and the Python layer (the stoker
// package) hands them to whichever torch the user has.
#include "bindings.h"
#include "stoker/core/error.h"

namespace py = pybind11;

namespace stoker::python {

py::str fs_str(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::list fs_strs(const std::vector<std::string>& bytes) {
  py::list out(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) out[i] = fs_str(bytes[i]);
  return out;
}

namespace {

// Sets Python's error to `type` with stoker's message, its bytes kept as fs_str keeps them.
void set_error(PyObject* type, const char* message) { PyErr_SetObject(type, fs_str(message).ptr()); }

}  // namespace

void bind_errors(py::module_& m) {
  // A bad argument is Python's ValueError; a bad sample or file is stoker.DataError; a
  // failing system call is OSError. The message is stoker's one line.
  static py::exception<DataError> data_error(m, "DataError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      set_error(PyExc_ValueError, e.what());
    } catch (const DataError& e) {
      set_error(data_error.ptr(), e.what());
    } catch (const SystemError& e) {
      set_error(PyExc_OSError, e.what());
    }
  });
}

}  // namespace stoker::python

PYBIND11_MODULE(_stoker, m) {
  m.doc() = "stoker's C++ input pipeline, monitor and diagnosis (no libtorch; batches leave through DLPack)";
  stoker::python::bind_errors(m);
  stoker::python::bind_batch_arrays(m);
  stoker::python::bind_loader(m);
  stoker::python::bind_monitor(m);
  stoker::python::bind_diagnosis(m);
  stoker::python::bind_loader_keys(m);
  stoker::python::bind_gpu_decode(m);
  stoker::python::bind_folder_samples(m);
  stoker::python::bind_memory_images(m);
}
