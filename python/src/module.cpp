// stoker._stoker: the C++ input pipeline, monitor and diagnosis for Python. It links no
// libtorch and no CUDA: batches leave as DLPack capsules and the Python layer (the stoker
// package) hands them to whichever torch the user has.
#include "bindings.h"
#include "stoker/core/error.h"

namespace py = pybind11;

namespace stoker::python {

void bind_errors(py::module_& m) {
  // A bad argument is Python's ValueError; a bad sample or file is stoker.DataError; a
  // failing system call is OSError. The message is stoker's one line.
  static py::exception<DataError> data_error(m, "DataError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DataError& e) {
      data_error(e.what());
    } catch (const SystemError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
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
}
