// A DatasetFolder's (path, class id) samples read in C++, in one pass over the list with no
// Python call per sample (python/stoker/_datasets.py, FolderSamples): the image list the engine
// reads, the digest a mid-pass state_dict records of them, and a relabel of that image list.
// A long pass (millions of samples on a loaded machine) says how far it is on sys.stderr.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings.h"
#include "open_progress_lines.h"
#include "stoker/core/digest.h"
#include "stoker/core/numbers.h"
#include "stoker/core/progress_line.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/path_list.h"
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

// "reading ImageFolder object of /data/train: 412,000 of 1,281,167 samples, 1 s; about 2 s left"
std::string samples_progress_text(const std::string& what, size_t done, size_t total, double seconds) {
  std::string line = fmt::format("reading {}: {} of {} samples, {:.0f} s", what, grouped(static_cast<double>(done)),
                                 grouped(static_cast<double>(total)), std::floor(seconds));
  if (done > 0 && total > done) {
    const double left = seconds * static_cast<double>(total - done) / static_cast<double>(done);
    line += fmt::format("; about {:.0f} s left", std::ceil(left));
  }
  return line;
}

// A pass over samples that says how far it is on sys.stderr, by the rule an open's lines keep
// (data::OpenProgress::line_due): a line once the pass has run a second, then one every
// ProgressLine::kLogEverySeconds. The clock is read once every kEvery samples.
class SamplesProgress {
 public:
  SamplesProgress(std::string what, size_t total) : what_(std::move(what)), total_(total), line_(write_stderr_line) {
    progress_.mark_checked();
  }
  // `done` samples are read.
  void at(size_t done) {
    if (done % kEvery != 0 || !progress_.line_due()) return;
    line_.update([&] { return samples_progress_text(what_, done, total_, progress_.seconds()); });
  }
  static constexpr size_t kEvery = 256;

 private:
  std::string what_;
  size_t total_;
  data::OpenProgress progress_;
  ProgressLine line_;
};

// Calls each(i, path bytes, class id) for the samples in order, until it returns false;
// `progress`, where given, is told each sample's index before it is read. A path or a target
// may run Python code (a path-like object's __fspath__, a target's __index__), as may writing a
// progress line: the list is read again at each sample, and each sample held while it is read.
template <typename Each>
void for_each_sample(const py::sequence& samples, Each&& each, SamplesProgress* progress = nullptr) {
  const auto fast = py::reinterpret_steal<py::object>(PySequence_Fast(samples.ptr(), "samples: a sequence"));
  if (!fast) throw py::error_already_set();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast.ptr()); ++i) {
    if (progress != nullptr) progress->at(static_cast<size_t>(i));
    if (i >= PySequence_Fast_GET_SIZE(fast.ptr())) break;
    const auto sample = py::reinterpret_borrow<py::object>(PySequence_Fast_ITEMS(fast.ptr())[i]);
    py::object path, target, keep;
    if (PyTuple_Check(sample.ptr()) && PyTuple_GET_SIZE(sample.ptr()) >= 2) {
      path = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(sample.ptr(), 0));
      target = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(sample.ptr(), 1));
    } else {  // a list [path, class] a script made
      path = sample[py::int_(0)];
      target = sample[py::int_(1)];
    }
    const std::string_view bytes = path_bytes(path.ptr(), keep);
    if (!each(static_cast<size_t>(i), bytes, class_id(target.ptr()))) return;
  }
}

// The image list of a DatasetFolder's (path, class id) samples (data::open_image_list), read in
// one pass; where a file is one the engine does not decode (data::decodes_image_file), the index
// of the first such sample instead (an int), for the folder's loader to open them.
py::object folder_image_list(std::string description, const py::sequence& samples, std::vector<std::string> classes) {
  const size_t n = py::len(samples);
  data::PathList paths;
  std::vector<int64_t> labels;
  labels.reserve(n);
  std::optional<size_t> other;
  SamplesProgress progress(description, n);
  for_each_sample(
      samples,
      [&](size_t i, std::string_view path, int64_t id) {
        if (!data::decodes_image_file(path)) {
          other = i;
          return false;
        }
        if (i == 0) paths.reserve(n, n * (path.size() + 8));  // room for paths of about the first's length
        paths.push_back(path);
        labels.push_back(id);
        return true;
      },
      &progress);
  if (other) return py::int_(*other);
  return py::cast(std::shared_ptr<data::Source>(
      data::open_image_list(std::move(description), std::move(paths), std::move(labels), std::move(classes))));
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
  py::tuple extensions(data::kImageExtensions.size());
  for (size_t i = 0; i < data::kImageExtensions.size(); ++i) {
    extensions[i] = py::str("." + std::string(data::kImageExtensions[i]));
  }
  // The files the engine decodes, by extension (data::kImageExtensions: torchvision's IMG_EXTENSIONS).
  m.attr("IMAGE_EXTENSIONS") = extensions;
  m.def("samples_digest", &samples_digest,
        "A digest (32 hex digits, stoker/core/digest.h) of (path, class id) samples in order: each path's "
        "os.fsencode bytes, a NUL, its int(class) as 8 little-endian bytes",
        py::arg("samples"));
  m.def("folder_image_list", &folder_image_list,
        "The image_list source of (path, class id) `samples` read in one pass, a long pass saying how far it is on "
        "sys.stderr; where the engine does not decode a sample's file, the index of the first such sample",
        py::arg("description"), py::arg("samples"), py::arg("classes"));
  m.def("relabelled_as", &relabelled_as,
        "`list` (an image_list source) with the class ids of (path, class id) `samples` that name its paths in its "
        "order (relabel_image_list); None where they do not",
        py::arg("list"), py::arg("samples"), py::arg("classes"));
}

}  // namespace stoker::python
