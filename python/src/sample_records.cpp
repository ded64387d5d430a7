#include "sample_records.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <array>

#include "bindings.h"

namespace py = pybind11;

namespace stoker::python {

py::dict records_of(const data::Batch& batch, const data::Source& source, const data::TransformSpec& spec,
                    const data::ClipOptions& clip) {
  py::list index, path, size, box, hflip, vflip, grayscale, angle, affine, color, color_order, erase, frames;
  for (int s = 0; s < batch.size(); ++s) {
    const data::SampleRecord& r = batch.record(s);
    const data::SampleParams& p = r.params;
    index.append(r.index);
    path.append(fs_str(source.name(r.index)));
    if (clip.enabled()) {  // each frame's size and crop: frames may differ; zeros for a substitute of zeros
      py::list sizes, boxes;
      for (size_t k = 0; k < static_cast<size_t>(clip.frames); ++k) {
        const bool made = k < r.frame_boxes.size();
        const data::CropRect f = made ? r.frame_boxes[k] : data::CropRect{0, 0, 0, 0};
        const std::array<int, 2> wh = made ? r.frame_sizes[k] : std::array<int, 2>{0, 0};
        sizes.append(py::make_tuple(wh[0], wh[1]));
        boxes.append(py::make_tuple(f.x, f.y, f.width, f.height));
      }
      size.append(sizes);
      box.append(boxes);
    } else {
      size.append(py::make_tuple(r.source_width, r.source_height));
      const data::CropRect b =
          r.source_width > 0 ? data::source_box(spec, p, r.source_width, r.source_height) : data::CropRect{0, 0, 0, 0};
      box.append(py::make_tuple(b.x, b.y, b.width, b.height));
    }
    hflip.append(p.flip);
    vflip.append(p.vflip);
    grayscale.append(p.grayscale);
    angle.append(p.rotate ? p.angle : 0.0f);
    const auto m = data::affine_forward(p, spec.out_width, spec.out_height);
    affine.append(py::make_tuple(py::make_tuple(m[0], m[1], m[2]), py::make_tuple(m[3], m[4], m[5])));
    // py::tuple on both sides: pybind11 3's make_tuple types each tuple by its elements.
    color.append(p.jitter_skipped ? py::tuple(py::make_tuple(1.0, 1.0, 1.0, 0.0))
                                  : py::tuple(py::make_tuple(p.brightness, p.contrast, p.saturation, p.hue)));
    const std::array<int, 4> order = p.jitter_skipped ? std::array<int, 4>{0, 1, 2, 3} : p.jitter_order;
    color_order.append(py::make_tuple(order[0], order[1], order[2], order[3]));
    erase.append(p.erase ? py::tuple(py::make_tuple(p.erase_top, p.erase_left, p.erase_height, p.erase_width))
                         : py::tuple(py::make_tuple(0, 0, 0, 0)));
    if (clip.enabled()) {  // a substitute for a clip that could not be loaded at all: zeros
      py::list chosen;
      for (int k = 0; k < clip.frames; ++k) {
        chosen.append(r.clip_frames > 0 ? data::chosen_frame(clip, r.clip_start, r.clip_frames, k) : 0);
      }
      frames.append(chosen);
    }
  }
  return py::dict(py::arg("index") = index, py::arg("path") = path, py::arg("source_size") = size, py::arg("box") = box,
                  py::arg("hflip") = hflip, py::arg("vflip") = vflip, py::arg("grayscale") = grayscale,
                  py::arg("angle") = angle, py::arg("affine") = affine, py::arg("color") = color,
                  py::arg("color_order") = color_order, py::arg("erase") = erase, py::arg("frames") = frames);
}

py::list geometry_of(const data::Batch& batch) {
  py::list out(batch.size());
  for (int s = 0; s < batch.size(); ++s) {
    const data::GeometryTargets& g = batch.geometry(s);
    py::array_t<float> points({static_cast<py::ssize_t>(g.points.size() / 3), py::ssize_t{3}});
    std::copy(g.points.begin(), g.points.end(), points.mutable_data());
    py::array_t<float> boxes({static_cast<py::ssize_t>(g.boxes.size() / 5), py::ssize_t{5}});
    std::copy(g.boxes.begin(), g.boxes.end(), boxes.mutable_data());
    py::object mask = py::none();
    if (!g.mask.empty()) {
      py::array_t<uint8_t> moved({static_cast<py::ssize_t>(g.mask_height), static_cast<py::ssize_t>(g.mask_width)});
      std::copy(g.mask.begin(), g.mask.end(), moved.mutable_data());
      mask = std::move(moved);
    }
    out[static_cast<size_t>(s)] = py::make_tuple(std::move(points), std::move(boxes), std::move(mask));
  }
  return out;
}

}  // namespace stoker::python
