#include "gpu_decode_binding.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "loader_handle.h"
#include "stoker/data/gpu_decoder.h"

namespace py = pybind11;

namespace stoker::python {
namespace {

// data::GpuDecoder as Python holds it, with the vectors it reuses from batch to batch.
class GpuDecoderHandle {
 public:
  GpuDecoderHandle(const std::vector<std::string>& nvjpeg_dirs, int channels, int max_batch_size, int preallocate_width,
                   int preallocate_height) {
    std::string why_not;
    decoder_ = data::GpuDecoder::open(nvjpeg_dirs, {channels, max_batch_size, preallocate_width, preallocate_height},
                                      &why_not);
    if (!decoder_) throw std::runtime_error(why_not);
  }

  const std::string& description() const { return decoder_->description(); }
  bool has_hardware() const { return decoder_->has_hardware(); }

  // (on_gpu, reason) per slot: on_gpu False means the device feed makes that slot on the CPU
  // (Loader.redo_on_cpu). Addresses and the stream come as integers.
  py::list decode(const PyBatch& batch, const std::vector<int>& slots, const std::vector<uintptr_t>& destinations,
                  const std::vector<size_t>& pitches, uintptr_t stream) {
    pointers_.clear();
    for (const uintptr_t d : destinations) pointers_.push_back(reinterpret_cast<uint8_t*>(d));
    {
      py::gil_scoped_release released;
      decoder_->decode(*batch.batch, slots, pointers_, pitches, reinterpret_cast<void*>(stream), &outcomes_);
    }
    py::list out;
    for (const data::GpuDecodeOutcome& o : outcomes_) out.append(py::make_tuple(o.on_gpu, o.reason));
    return out;
  }

 private:
  std::unique_ptr<data::GpuDecoder> decoder_;
  std::vector<uint8_t*> pointers_;
  std::vector<data::GpuDecodeOutcome> outcomes_;
};

}  // namespace

py::list gpu_samples_of(const data::Batch& batch) {
  py::list out;
  for (int slot = 0; slot < batch.size(); ++slot) {
    const data::GpuSample* g = batch.gpu_sample(slot);
    if (g == nullptr) continue;
    out.append(py::make_tuple(slot, g->window_width, g->window_height,
                              py::make_tuple(g->crop.x, g->crop.y, g->crop.width, g->crop.height), g->flip, g->vflip,
                              g->clamp_to_region));
  }
  return out;
}

void bind_gpu_decode(py::module_& m) {
  py::class_<GpuDecoderHandle>(m, "GpuDecoder")
      .def(py::init<const std::vector<std::string>&, int, int, int, int>(), py::arg("nvjpeg_dirs"), py::kw_only(),
           py::arg("channels") = 3, py::arg("max_batch_size") = 256, py::arg("preallocate_width") = 0,
           py::arg("preallocate_height") = 0,
           "nvJPEG on the CUDA device current now; RuntimeError with one line when it cannot decode here")
      .def_property_readonly("description", &GpuDecoderHandle::description)
      .def_property_readonly("has_hardware", &GpuDecoderHandle::has_hardware)
      .def("decode", &GpuDecoderHandle::decode, py::arg("batch"), py::arg("slots"), py::arg("destinations"),
           py::arg("pitches"), py::arg("stream"),
           "Decodes the batch's GPU samples at `slots` into `destinations` on `stream`: (on_gpu, reason) per slot");
}

}  // namespace stoker::python
