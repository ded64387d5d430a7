#include "open_progress_lines.h"

#include <pybind11/pybind11.h>

#include "stoker/core/progress_line.h"
#include "stoker/data/open_progress.h"

namespace py = pybind11;

namespace stoker::python {

void write_stderr_line(const std::string& line) {
  const py::gil_scoped_acquire gil;
  try {
    const py::object err = py::module_::import("sys").attr("stderr");
    err.attr("write")(line + "\n");
    err.attr("flush")();
  } catch (const py::error_already_set&) {
    // A closed or replaced stderr: the line is lost, the opening goes on.
  }
}

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips) {
  const py::gil_scoped_release release;  // taken back by write_line for a line, and once the open has ended
  ProgressLine line(write_stderr_line);
  return data::open_with_progress_line(
      path, [&] { return clips ? data::open_clip_source(path, split) : data::open_source(path, split); }, line);
}

}  // namespace stoker::python
