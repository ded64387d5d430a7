// A DatasetFolder's (path, class id) samples read in C++, in one pass over the list with no
// Python call per sample (python/stoker/_datasets.py, FolderSamples): the digest a mid-pass
// state_dict records of them, and a relabel of the image list they were read into.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.h"
#include "stoker/core/digest.h"
#include "stoker/data/source.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// A path's bytes as os.fsencode gives them (a str's UTF-8 where it has no surrogate escape); a
// path-like object (pathlib.Path) is its os.fspath. `keep` holds what the bytes live in.
std::string_view path_bytes(PyObject* path, py::object& keep) {
  if (PyUnicode_Check(path)) {
    Py_ssize_t size = 0;
    if (const char* utf8 = PyUnicode_AsUTF8AndSize(path, &size); utf8 != nullptr) {
      return {utf8, static_cast<size_t>(size)};
    }
    PyErr_Clear();  // surrogate escapes: the file system's encoding writes them back as bytes
    keep = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(path));
    if (!keep) throw py::error_already_set();
    path = keep.ptr();
  } else if (!PyBytes_Check(path)) {
    keep = py::reinterpret_steal<py::object>(PyOS_FSPath(path));
    if (!keep) throw py::error_already_set();
    py::object inner;
    const std::string_view bytes = path_bytes(keep.ptr(), inner);
    if (inner) keep = inner;
    return bytes;
  }
  return {PyBytes_AS_STRING(path), static_cast<size_t>(PyBytes_GET_SIZE(path))};
}

int64_t class_id(PyObject* target) {
  auto number = py::reinterpret_steal<py::object>(PyNumber_Long(target));  // int(target), as the source reads it
  if (!number) throw py::error_already_set();
  const int64_t id = PyLong_AsLongLong(number.ptr());
  if (id == -1 && PyErr_Occurred()) throw py::error_already_set();
  return id;
}

// Calls each(i, path bytes, class id) for the samples in order.
template <typename Each>
void for_each_sample(const py::sequence& samples, Each&& each) {
  const auto fast = py::reinterpret_steal<py::object>(PySequence_Fast(samples.ptr(), "samples: a sequence"));
  if (!fast) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* sample = PySequence_Fast_ITEMS(fast.ptr())[i];
    py::object path, target, keep;
    if (PyTuple_Check(sample) && PyTuple_GET_SIZE(sample) >= 2) {
      path = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(sample, 0));
      target = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(sample, 1));
    } else {  // a list [path, class] a script made
      path = py::reinterpret_borrow<py::object>(sample)[py::int_(0)];
      target = py::reinterpret_borrow<py::object>(sample)[py::int_(1)];
    }
    if (!each(static_cast<size_t>(i), path_bytes(path.ptr(), keep), class_id(target.ptr()))) return;
  }
}

// Each sample: its path's bytes, a NUL (no path holds one), its class id as 8 little-endian bytes.
std::string samples_digest(const py::sequence& samples) {
  Digest d;
  for_each_sample(samples, [&](size_t, std::string_view path, int64_t id) {
    unsigned char bytes[9] = {0};
    for (int b = 0; b < 8; ++b) bytes[b + 1] = static_cast<unsigned char>(static_cast<uint64_t>(id) >> (8 * b));
    d.update(path);
    d.update(bytes, sizeof bytes);
    return true;
  });
  return d.hex();
}

// `list` (an image list) with the class ids of `samples`, where they name its paths in its
// order; None where they do not.
py::object relabelled_as(const data::Source& list, const py::sequence& samples, std::vector<std::string> classes) {
  if (py::len(samples) != list.size()) return py::none();
  std::vector<int64_t> labels(list.size());
  bool same = true;
  for_each_sample(samples, [&](size_t i, std::string_view path, int64_t id) {
    labels[i] = id;
    return same = path == list.name(i);
  });
  if (!same) return py::none();
  return py::cast(std::shared_ptr<data::Source>(data::relabel_image_list(list, std::move(labels), std::move(classes))));
}

}  // namespace

void bind_folder_samples(py::module_& m) {
  m.def("samples_digest", &samples_digest,
        "A digest (32 hex digits, stoker/core/digest.h) of (path, class id) samples in order: each path's "
        "os.fsencode bytes, a NUL, its int(class) as 8 little-endian bytes",
        py::arg("samples"));
  m.def("relabelled_as", &relabelled_as,
        "`list` (an image_list source) with the class ids of (path, class id) `samples` that name its paths in its "
        "order (relabel_image_list); None where they do not",
        py::arg("list"), py::arg("samples"), py::arg("classes"));
}

}  // namespace stoker::python
