#include "gpu_decode_binding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings.h"
#include "loader_handle.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/gpu_decoder.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/gpu_share.h"
#include "stoker/data/transform.h"

namespace py = pybind11;

namespace stoker::python {
namespace {

// data::GpuDecoder as Python holds it, with the vectors it reuses from batch to batch.
class GpuDecoderHandle {
 public:
  GpuDecoderHandle(const std::vector<std::string>& nvjpeg_dirs, const std::string& transforms, int batch_size) {
    std::string why_not;
    decoder_ = data::GpuDecoder::open(
        nvjpeg_dirs, data::gpu_decoder_options(data::parse_transforms(transforms), batch_size), &why_not);
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

// data::PaddedTaps as (index, weight) arrays of shape (n, out_size, taps).
py::tuple to_arrays(const data::PaddedTaps& p) {
  const std::vector<py::ssize_t> shape{p.n, p.out_size, p.taps};
  py::array_t<int32_t> index(shape);
  py::array_t<float> weight(shape);
  std::copy(p.index.begin(), p.index.end(), index.mutable_data());
  std::copy(p.weight.begin(), p.weight.end(), weight.mutable_data());
  return py::make_tuple(index, weight);
}

// data::encode_jpeg of an (H, W) or (H, W, C) uint8 array: the JPEGs of every kind the GPU
// decoder plans for (the rarer subsamplings, CMYK, progressive), which Pillow cannot all write.
py::bytes encode_jpeg_of(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& pixels, int quality,
                         const std::string& subsampling, bool progressive) {
  const std::optional<data::ChromaSubsampling> named = data::chroma_subsampling_named(subsampling);
  if (!named) {
    std::vector<std::string_view> names;
    for (const data::ChromaSubsamplingDeclaration& d : data::chroma_subsamplings()) names.push_back(d.name);
    throw UsageError(fmt::format("subsampling '{}' is not one of {}", subsampling, fmt::join(names, ", ")));
  }
  if (pixels.ndim() != 2 && !(pixels.ndim() == 3 && (pixels.shape(2) == 3 || pixels.shape(2) == 4))) {
    throw UsageError("encode_jpeg takes a uint8 array of shape (H, W), (H, W, 3) or (H, W, 4)");
  }
  data::Image image;
  image.reshape(static_cast<int>(pixels.shape(1)), static_cast<int>(pixels.shape(0)),
                pixels.ndim() == 2 ? 1 : static_cast<int>(pixels.shape(2)));
  std::copy_n(pixels.data(), image.stride() * static_cast<size_t>(image.height()), image.data());
  data::JpegEncodeOptions options;
  options.quality = quality;
  options.progressive = progressive;
  options.subsampling = *named;
  const std::vector<uint8_t> jpeg = data::encode_jpeg(image, options);
  return py::bytes(reinterpret_cast<const char*>(jpeg.data()), jpeg.size());
}

}  // namespace

py::tuple gpu_taps_of(const data::Batch& batch, const std::vector<int>& slots) {
  const data::GpuTaps taps = data::gpu_taps(batch, slots);
  const py::tuple c = to_arrays(taps.columns), r = to_arrays(taps.rows);
  return py::make_tuple(c[0], c[1], r[0], r[1]);
}

py::list gpu_samples_of(const data::Batch& batch) {
  py::list out;
  for (int slot = 0; slot < batch.size(); ++slot) {
    const data::GpuSample* g = batch.gpu_sample(slot);
    if (g == nullptr) continue;
    out.append(py::make_tuple(slot, g->window_width, g->window_height));
  }
  return out;
}

void bind_gpu_decode(py::module_& m) {
  m.def(
      "filter_taps",
      [](int in_size, double start, double length, int out_size, bool clamp_to_region, bool mirror,
         const std::string& filter) {
        const data::ResampleFilter filters[] = {data::ResampleFilter::kBilinear, data::ResampleFilter::kBicubic};
        const auto named = std::find_if(std::begin(filters), std::end(filters),
                                        [&](data::ResampleFilter f) { return filter == data::to_string(f); });
        if (named == std::end(filters)) {
          throw UsageError(fmt::format("filter must be '{}' or '{}' (got '{}')", data::to_string(filters[0]),
                                       data::to_string(filters[1]), filter));
        }
        if (in_size < 1 || out_size < 1) {
          throw UsageError(
              fmt::format("filter_taps needs in_size and out_size >= 1 (got {} and {})", in_size, out_size));
        }
        data::FilterTaps taps;
        data::filter_taps(in_size, start, length, out_size, clamp_to_region, mirror, *named, &taps);
        const data::FilterTaps* axes[] = {&taps};
        return to_arrays(data::pad_taps(axes));
      },
      "The CPU resampler's taps along one axis (stoker/data/transform.h's filter_taps): (index, weight) of shape "
      "(1, out_size, taps), int32 and float32",
      py::arg("in_size"), py::arg("start"), py::arg("length"), py::arg("out_size"), py::arg("clamp_to_region"),
      py::arg("mirror"), py::arg("filter"));
  m.def("encode_jpeg", &encode_jpeg_of,
        "JPEG bytes of a uint8 array (H, W), (H, W, 3) or (H, W, 4: CMYK) with the chroma subsampling named "
        "('4:4:4', '4:2:2', '4:2:0', '4:4:0', '4:1:1', '4:1:0'), baseline or progressive",
        py::arg("pixels"), py::kw_only(), py::arg("quality") = 90, py::arg("subsampling") = "4:2:0",
        py::arg("progressive") = false);
  m.def(
      "gpu_taps", [](const PyBatch& batch, const std::vector<int>& slots) { return gpu_taps_of(*batch.batch, slots); },
      "The filter taps of the batch's GPU samples at `slots`: (column index, column weight, row index, row weight)",
      py::arg("batch"), py::arg("slots"));
  py::class_<GpuDecoderHandle>(m, "GpuDecoder")
      .def(py::init<const std::vector<std::string>&, const std::string&, int>(), py::arg("nvjpeg_dirs"), py::kw_only(),
           py::arg("transforms"), py::arg("batch_size"),
           "nvJPEG on the CUDA device current now, for a loader running `transforms` in batches of `batch_size` "
           "(data::gpu_decoder_options); RuntimeError with one line when it cannot decode here")
      .def_property_readonly("description", &GpuDecoderHandle::description)
      .def_property_readonly("has_hardware", &GpuDecoderHandle::has_hardware)
      .def("decode", &GpuDecoderHandle::decode, py::arg("batch"), py::arg("slots"), py::arg("destinations"),
           py::arg("pitches"), py::arg("stream"),
           "Decodes the batch's GPU samples at `slots` into `destinations` on `stream`: (on_gpu, reason) per slot");
  py::class_<data::GpuShareTuner>(m, "GpuShareTuner",
                                  "decode='auto': the share of the engine's JPEGs to leave for the GPU, from the "
                                  "host's waits (stoker/data/gpu_share.h)")
      .def(py::init<>())
      .def("observe", &data::GpuShareTuner::observe, py::arg("loader_wait_s"), py::arg("decode_wait_s"),
           py::arg("batch_s"), "One batch handed out: its waits and wall seconds; returns the share to set")
      .def_property_readonly("share", &data::GpuShareTuner::share)
      .def_property_readonly_static("window", [](const py::object&) { return data::GpuShareTuner::kWindow; })
      .def_property_readonly_static("step", [](const py::object&) { return data::GpuShareTuner::kStep; });
}

}  // namespace stoker::python
