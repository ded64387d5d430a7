#include "batch_arrays.h"

#include <utility>

#include "bindings.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// What a capsule owns until a framework takes it: the DLPack record, the batch it views and
// the shape and strides it points to.
struct Exported {
  DLManagedTensor tensor{};
  std::shared_ptr<const data::Batch> batch;
  std::vector<int64_t> shape, strides;
};

void delete_exported(DLManagedTensor* tensor) { delete static_cast<Exported*>(tensor->manager_ctx); }

// A capsule no framework consumed still owns its record; a consumed one is renamed
// "used_dltensor" and its deleter is the consumer's to call.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

DLDataType dl_type(data::DType dtype) {
  switch (dtype) {
    case data::DType::kUint8:
      return {kDLUInt, 8, 1};
    case data::DType::kFloat16:
      return {kDLFloat, 16, 1};
    case data::DType::kFloat32:
      break;
  }
  return {kDLFloat, 32, 1};
}

}  // namespace

BatchArray::BatchArray(std::shared_ptr<const data::Batch> batch, const void* data, DLDataType dtype,
                       std::vector<int64_t> shape, std::vector<int64_t> strides)
    : batch_(std::move(batch)), data_(data), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)) {}

py::capsule BatchArray::dlpack() const {
  auto exported = std::make_unique<Exported>();
  exported->batch = batch_;
  exported->shape = shape_;
  exported->strides = strides_;
  DLTensor& t = exported->tensor.dl_tensor;
  t.data = const_cast<void*>(data_);  // the consumer's to write to while it holds the batch
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(exported->shape.size());
  t.dtype = dtype_;
  t.shape = exported->shape.data();
  t.strides = exported->strides.data();
  t.byte_offset = 0;
  exported->tensor.manager_ctx = exported.get();
  exported->tensor.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&exported->tensor, "dltensor", capsule_destructor);
  if (capsule == nullptr) throw py::error_already_set();
  exported.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::tuple BatchArray::dlpack_device() const { return py::make_tuple(static_cast<int>(kDLCPU), 0); }

BatchArray inputs_of(const std::shared_ptr<const data::Batch>& batch, bool features) {
  const std::vector<int64_t> shape = batch->shape();
  const DLDataType dtype = dl_type(batch->dtype());
  const int64_t n = shape[0];
  if (features) {  // (N, 1, 1, F) or (N, F, 1, 1) in the loader: F values per sample
    const int64_t f = shape[1] * shape[2] * shape[3];
    return BatchArray(batch, batch->data(), dtype, {n, f}, {f, 1});
  }
  // One frame's (C, H, W), in (C, H, W) memory or (H, W, C) memory (channels_last strides).
  const int64_t k = batch->frames();
  const size_t at = k > 0 ? 2 : 1;
  const bool nchw = batch->layout() == data::Layout::kNCHW;
  const int64_t c = shape[nchw ? at : at + 2], h = shape[nchw ? at + 1 : at], w = shape[nchw ? at + 2 : at + 1];
  const std::vector<int64_t> image = nchw ? std::vector<int64_t>{h * w, w, 1} : std::vector<int64_t>{1, w * c, c};
  const int64_t frame = c * h * w;
  if (k == 0) return BatchArray(batch, batch->data(), dtype, {n, c, h, w}, {frame, image[0], image[1], image[2]});
  return BatchArray(batch, batch->data(), dtype, {n, k, c, h, w}, {k * frame, frame, image[0], image[1], image[2]});
}

BatchArray labels_of(const std::shared_ptr<const data::Batch>& batch) {
  return BatchArray(batch, batch->labels(), {kDLInt, 64, 1}, {batch->size()}, {1});
}

BatchArray targets_of(const std::shared_ptr<const data::Batch>& batch) {
  const int64_t d = batch->target_dim();
  if (d == 1) return BatchArray(batch, batch->targets(), {kDLFloat, 32, 1}, {batch->size()}, {1});
  return BatchArray(batch, batch->targets(), {kDLFloat, 32, 1}, {batch->size(), d}, {d, 1});
}

void bind_batch_arrays(py::module_& m) {
  py::class_<BatchArray>(m, "BatchArray",
                         "One array of a loader batch, for torch.utils.dlpack.from_dlpack (no copy). The batch's "
                         "buffer returns to the loader when the last tensor made from it is gone.")
      // stream, max_version, dl_device, copy: whatever a consumer passes (host memory needs none).
      .def("__dlpack__", [](const BatchArray& a, const py::args&, const py::kwargs&) { return a.dlpack(); })
      .def("__dlpack_device__", &BatchArray::dlpack_device)
      .def_property_readonly("shape", [](const BatchArray& a) { return py::tuple(py::cast(a.shape())); });
}

}  // namespace stoker::python
