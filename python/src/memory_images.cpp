// A Dataset's images held as one uint8 NumPy array (torchvision's CIFAR10, MNIST, SVHN ...:
// python/stoker/_memory_datasets.py) as an engine source, data::open_memory_images: the array
// is kept, not copied, and read in C++ with no Python call per sample.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "stoker/core/digest.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// A reference to a Python object that a source keeps, let go of holding the GIL (the source may
// be let go of on any thread), or not at all once the interpreter is gone.
struct KeptObject {
  explicit KeptObject(py::object o) : object(std::move(o)) {}
  KeptObject(const KeptObject&) = delete;
  KeptObject& operator=(const KeptObject&) = delete;
  ~KeptObject() {
    if (!Py_IsInitialized()) {
      (void)object.release();
      return;
    }
    const py::gil_scoped_acquire gil;
    object = py::object();
  }
  py::object object;
};

std::shared_ptr<data::Source> memory_images(std::string origin, std::string item, const py::array& pixels,
                                            bool channels_first, std::vector<int64_t> labels,
                                            std::vector<std::string> class_names,
                                            std::optional<std::vector<size_t>> rows) {
  const bool contiguous = (pixels.flags() & py::array::c_style) != 0;
  if (!pixels.dtype().is(py::dtype::of<uint8_t>()) || !contiguous || (pixels.ndim() != 3 && pixels.ndim() != 4)) {
    throw UsageError(origin +
                     ": the pixels must be a C-contiguous uint8 array (N, H, W), (N, H, W, C) or (N, C, H, W)");
  }
  data::MemoryImages m;
  m.origin = std::move(origin);
  m.item = std::move(item);
  m.count = static_cast<size_t>(pixels.shape(0));
  const bool grey = pixels.ndim() == 3;
  m.channels = grey ? 1 : static_cast<int>(pixels.shape(channels_first ? 1 : 3));
  m.height = static_cast<int>(pixels.shape(grey || !channels_first ? 1 : 2));
  m.width = static_cast<int>(pixels.shape(grey ? 2 : channels_first ? 3 : 2));
  m.channels_first = channels_first && !grey;
  m.pixels = {static_cast<const uint8_t*>(pixels.data()), static_cast<size_t>(pixels.nbytes())};
  m.labels = std::move(labels);
  m.class_names = std::move(class_names);
  m.rows = std::move(rows);
  m.owner = std::make_shared<const KeptObject>(pixels);
  return std::shared_ptr<data::Source>(data::open_memory_images(std::move(m)));
}

// The samples' pixels and class ids in order: each row's bytes, then its class id as 8
// little-endian bytes (python/stoker/_memory_datasets.py, MemorySamples.digest).
std::string memory_images_digest(const py::array& pixels, const std::vector<int64_t>& labels,
                                 std::optional<std::vector<size_t>> rows) {
  const auto count = static_cast<size_t>(pixels.shape(0));
  if (labels.size() != count) throw UsageError("memory_images_digest: one class id per image");
  const size_t row_bytes = count == 0 ? 0 : static_cast<size_t>(pixels.nbytes()) / count;
  const auto* bytes = static_cast<const uint8_t*>(pixels.data());
  const size_t samples = rows ? rows->size() : count;
  Digest d;
  for (size_t i = 0; i < samples; ++i) {
    const size_t row = rows ? (*rows)[i] : i;
    if (row >= count) throw UsageError("memory_images_digest: a row past the array's end");
    unsigned char id[8];
    for (int b = 0; b < 8; ++b) id[b] = static_cast<unsigned char>(static_cast<uint64_t>(labels[row]) >> (8 * b));
    d.update(bytes + row * row_bytes, row_bytes);
    d.update(id, sizeof id);
  }
  return d.hex();
}

}  // namespace

void bind_memory_images(py::module_& m) {
  m.def("memory_images", &memory_images,
        "A source over `pixels`, a C-contiguous uint8 array (N, H, W), (N, H, W, C) or (N, C, H, W) with "
        "channels_first, kept and read in place (channels-first: transposed once), one class id per image in "
        "`labels`; `rows`: the samples as rows of the array (a Subset's), or None for all (data::open_memory_images)",
        py::arg("origin"), py::arg("item"), py::arg("pixels"), py::arg("channels_first"), py::arg("labels"),
        py::arg("class_names"), py::arg("rows") = py::none());
  m.def("memory_images_digest", &memory_images_digest,
        "A digest (32 hex digits, stoker/core/digest.h) of the samples' pixels and class ids in order: each row's "
        "bytes of the C-contiguous `pixels`, then its class id as 8 little-endian bytes",
        py::arg("pixels"), py::arg("labels"), py::arg("rows") = py::none());
}

}  // namespace stoker::python
