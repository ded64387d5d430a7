#include "dataset_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "loader_closing.h"
#include "stoker/data/clip_geometry.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader.h"

namespace py = pybind11;

namespace stoker::python {

HeldObject::~HeldObject() {
  if (!Py_IsInitialized()) {  // the interpreter is gone, and the object with it
    (void)object_.release();
    return;
  }
  // Counted where not within a counted call (a read letting go of its slot's last item).
  const ClockedGil gil(PyGILState_Check() == 0 ? times_.get() : nullptr);
  const WorkerPython in_python;  // letting go of an item may collect a DataLoader
  object_ = py::object();
}

namespace {

// A worker thread's Python thread state, made on its first call into Python and kept until the
// thread ends. On a thread that keeps none, pybind11's gil_scoped_acquire makes one and deletes
// it again each time: some 20 us a sample, five times what a Dataset returning a row of an
// array in memory takes for its dataset[i].
class KeptThreadState {
 public:
  KeptThreadState() = default;
  KeptThreadState(const KeptThreadState&) = delete;
  KeptThreadState& operator=(const KeptThreadState&) = delete;
  // Through CPython's PyGILState calls, which pybind11's gil_scoped_acquire finds and reuses:
  // PyGILState_Release keeps the state's count above zero while it clears it, so that a
  // finalizer it runs (a threading.local's) may take and release the GIL (CPython gh-119585;
  // pybind11's own count reaches zero first, and crashed there on Python 3.13).
  ~KeptThreadState() {
    if (state_ == nullptr || !Py_IsInitialized()) return;
    PyEval_RestoreThread(state_);
    PyGILState_Release(PyGILState_UNLOCKED);  // the count to zero: cleared, deleted, the GIL released
  }
  // On a thread without the GIL: makes its state and keeps it, the GIL released.
  void keep() {
    if (state_ != nullptr || PyGILState_Check()) return;
    PyGILState_Ensure();
    state_ = PyEval_SaveThread();
  }

 private:
  PyThreadState* state_ = nullptr;
};
thread_local KeptThreadState kept_thread_state;

// The exception being handled, in one line, as stoker._raised.one_line gives it: "KeyError: 'x'
// (at data.py:33, in __getitem__)". Holding the GIL.
std::string one_line(const py::error_already_set& e) {
  try {
    return py::module_::import("stoker._raised").attr("one_line")(e.value(), e.trace()).cast<std::string>();
  } catch (const py::error_already_set&) {  // its first line alone, as pybind11 gives it
    std::string text = e.what();
    const size_t end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end);
  }
}

std::string type_name(const py::handle& object) {
  return py::str(py::type::handle_of(object).attr("__qualname__")).cast<std::string>();
}

bool is_pil_image(const py::handle& object) {
  const std::string module = py::str(py::type::handle_of(object).attr("__module__")).cast<std::string>();
  return module.rfind("PIL.", 0) == 0 && py::hasattr(object, "tobytes") && py::hasattr(object, "mode");
}

bool is_bytes_like(const py::handle& object) {
  return PyBytes_Check(object.ptr()) || PyByteArray_Check(object.ptr()) || PyMemoryView_Check(object.ptr());
}

// NumPy arrays, torch tensors and whatever else numpy.asarray reads without copying elements
// one by one (a dict or a list would become an array of objects).
bool is_array_like(const py::handle& object) {
  return py::hasattr(object, "__array_interface__") || py::hasattr(object, "__array__") ||
         PyObject_CheckBuffer(object.ptr()) != 0;
}

// A 1-D uint8 array holds an encoded file's bytes, never pixels: what h5py reads from a
// vlen_dtype(np.uint8) dataset (images packed into HDF5), np.frombuffer(data, np.uint8) and
// torchvision.io.read_file return.
bool is_encoded_array(const py::array& a) { return a.ndim() == 1 && a.dtype().kind() == 'u' && a.itemsize() == 1; }

bool is_path(const py::handle& object) { return PyUnicode_Check(object.ptr()) || py::hasattr(object, "__fspath__"); }

// The path's bytes as the file system takes them (os.fsencode).
std::string path_bytes(const py::handle& object) {
  const py::object text = py::reinterpret_steal<py::object>(PyOS_FSPath(object.ptr()));
  if (!text) throw py::error_already_set();
  if (PyBytes_Check(text.ptr())) return text.cast<std::string>();
  const py::object encoded = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(text.ptr()));
  if (!encoded) throw py::error_already_set();
  return encoded.cast<std::string>();
}

// The shape, as "(2, 3)".
std::string shape_text(const py::array& a) {
  std::string text;
  for (py::ssize_t k = 0; k < a.ndim(); ++k) text += (k > 0 ? ", " : "") + std::to_string(a.shape(k));
  return "(" + text + ")";
}

// A uint8 array's layout as an image: height, width, channels and whether it is (C, H, W);
// false when it is no such array.
struct ArrayImage {
  int height = 0, width = 0, channels = 0;
  bool channels_first = false;
};
bool array_image(const py::array& a, ArrayImage* out, std::string* why) {
  if (a.dtype().kind() != 'u' || a.itemsize() != 1) {
    *why = fmt::format("an array of {}, not uint8", py::str(a.dtype()).cast<std::string>());
    return false;
  }
  const auto channels_ok = [](py::ssize_t c) { return c == 1 || c == 3 || c == 4; };
  if (a.ndim() == 2) {
    *out = {static_cast<int>(a.shape(0)), static_cast<int>(a.shape(1)), 1, false};
  } else if (a.ndim() == 3 && channels_ok(a.shape(2))) {
    *out = {static_cast<int>(a.shape(0)), static_cast<int>(a.shape(1)), static_cast<int>(a.shape(2)), false};
  } else if (a.ndim() == 3 && channels_ok(a.shape(0))) {
    *out = {static_cast<int>(a.shape(1)), static_cast<int>(a.shape(2)), static_cast<int>(a.shape(0)), true};
  } else {
    *why = fmt::format("a uint8 array of shape {}, not (H, W), (H, W, C) or (C, H, W) with C 1, 3 or 4", shape_text(a));
    return false;
  }
  if (out->height < 1 || out->width < 1) {
    *why = "an empty array";
    return false;
  }
  return true;
}

// Copies the array's pixels into out as raw (H, W, C) samples, dropping an alpha channel.
void copy_pixels(const py::array& contiguous, const ArrayImage& image, data::SampleData* out) {
  const int kept = image.channels == 4 ? 3 : image.channels;
  const auto pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  out->storage.resize(pixels * static_cast<size_t>(kept));
  const auto* in = static_cast<const uint8_t*>(contiguous.data());
  uint8_t* to = out->storage.data();
  if (!image.channels_first && kept == image.channels) {
    std::memcpy(to, in, out->storage.size());
  } else {
    const auto c = static_cast<size_t>(image.channels);
    for (size_t p = 0; p < pixels; ++p) {
      for (size_t k = 0; k < static_cast<size_t>(kept); ++k) {
        to[p * static_cast<size_t>(kept) + k] = image.channels_first ? in[k * pixels + p] : in[p * c + k];
      }
    }
  }
  out->bytes = out->storage;
  out->raw = true;
  out->raw_width = image.width;
  out->raw_height = image.height;
  out->raw_channels = kept;
}

void copy_bytes(const py::handle& object, data::SampleData* out) {
  const py::buffer_info info = py::reinterpret_borrow<py::buffer>(object).request();
  const auto* begin = static_cast<const uint8_t*>(info.ptr);
  out->storage.assign(begin, begin + info.size * info.itemsize);
  out->bytes = out->storage;
  out->raw = false;
}

}  // namespace

// Where an item's image is read once the GIL is released: a file by its open descriptor (owned,
// closed with this) or by its name; neither when the image was copied into the sample already.
class FileToRead {
 public:
  FileToRead() = default;
  FileToRead(const FileToRead&) = delete;
  FileToRead& operator=(const FileToRead&) = delete;
  ~FileToRead() { clear(); }

  void clear() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    name_.clear();
  }
  // The file's name (for messages, and to open it by when `fd` is -1) and its descriptor.
  void set(std::string name, int fd = -1) {
    clear();
    name_ = std::move(name);
    fd_ = fd;
  }
  bool empty() const { return fd_ < 0 && name_.empty(); }
  const std::string& name() const { return name_; }
  Status read(data::SampleData* out) const {
    return fd_ >= 0 ? data::read_open_file(fd_, out) : data::read_whole_file(name_, out);
  }

 private:
  std::string name_;
  int fd_ = -1;
};

namespace {

// An unloaded PIL image whose encoded bytes stoker decodes as PIL would: a JPEG, PNG, WebP,
// BMP, PNM, TIFF or GIF from
// Image.open(...) that nothing has loaded, drafted, converted or moved off its first frame
// (open_clip's CsvDataset without its transforms returns one), and not a 16-bit grey PNG. PIL
// decodes its bytes the same way on load (neither applies an EXIF orientation). False for any other image, and for
// every image while the script has PIL load truncated files (ImageFile.LOAD_TRUNCATED_IMAGES), which stoker reads as
// damaged.
bool is_unloaded_pil_file(const py::handle& pil) {
  if (py::module_::import("PIL.ImageFile").attr("LOAD_TRUNCATED_IMAGES").cast<bool>()) return false;
  const py::object format = pil.attr("format");
  if (format.is_none()) return false;
  const auto kind = format.cast<std::string>();
  if (kind != "JPEG" && kind != "PNG" && kind != "WEBP" && kind != "BMP" && kind != "PPM" && kind != "TIFF" &&
      kind != "GIF") {
    return false;
  }
  // Pillow modes stoker's decoders give as Pillow does (a CMYK or YCbCr TIFF, say, is refused by
  // stoker's TIFF decoder: its pixels are taken from PIL instead).
  if (kind != "JPEG" && kind != "PNG") {
    const auto mode = pil.attr("mode").cast<std::string>();
    if (mode != "RGB" && mode != "RGBA" && mode != "RGBX" && mode != "L" && mode != "LA" && mode != "P" &&
        mode != "1") {
      return false;
    }
  }
  // A 16-bit grey PNG opens as mode I (I;16 in Pillow 10 on): PIL loads and converts it by its
  // own rule (Pillow 9.4's clips each value at 255, as stoker's decoder does for its path).
  if (pil.attr("mode").cast<std::string>().rfind('I', 0) == 0) return false;
  // Loaded (or made in memory): Pillow 11 (Debian 13's) keeps the pixels in `_im` (its `im`
  // property asserts them there), Pillow 9 (Debian 12's) in `im`.
  const char* pixels = py::hasattr(pil, "_im") ? "_im" : "im";
  if (!py::getattr(pil, pixels, py::none()).is_none()) return false;
  if (py::len(py::getattr(pil, "tile", py::list())) == 0) return false;
  if (py::len(py::getattr(pil, "decoderconfig", py::tuple())) != 0) return false;  // draft() or reduce
  return !py::hasattr(pil, "tell") || pil.attr("tell")().cast<long>() == 0;
}

// Takes an unloaded PIL image (is_unloaded_pil_file) from where PIL would read it, which
// Image.open puts at its start: the bytes of an io.BytesIO, copied into `out` now; a file
// object's descriptor, duplicated into `file` and read later, without the GIL (the file PIL
// holds open, even when its name has since been removed or replaced); else the file's name.
// False when the image is none of these.
bool take_unloaded_pil(const py::handle& pil, data::SampleData* out, FileToRead* file) {
  const py::object fp = py::getattr(pil, "fp", py::none());
  const py::module_ io = py::module_::import("io");
  if (py::isinstance(fp, io.attr("BytesIO"))) {
    const py::object view = fp.attr("getbuffer")();  // no copy; held until released below
    copy_bytes(view, out);
    view.attr("release")();
    return true;
  }
  const py::object name = py::getattr(pil, "filename", py::none());
  std::string path = PyBytes_Check(name.ptr()) || is_path(name) ? path_bytes(name) : "";  // "" from a file object
  // A file of the file system: open() in binary mode, or its raw FileIO; not another object
  // with a fileno() (a tar or zip member's view of its archive, read from elsewhere than byte 0).
  const bool buffered = py::type::handle_of(fp).is(io.attr("BufferedReader")) &&
                        py::type::handle_of(fp.attr("raw")).is(io.attr("FileIO"));
  if (buffered || py::type::handle_of(fp).is(io.attr("FileIO"))) {
    const int fd = ::fcntl(fp.attr("fileno")().cast<int>(), F_DUPFD_CLOEXEC, 0);
    if (fd >= 0) {
      file->set(path.empty() ? "its open file" : std::move(path), fd);
      return true;
    }
  }
  if (path.empty()) return false;
  file->set(std::move(path));  // no descriptor (or none to spare): the file by its name
  return true;
}

// A PIL image as raw pixels: L and RGB as they are; with `keep_modes`, 1 as L and P as its
// palette indices (torchvision's ToTensor's and PILToTensor's one channel), else any other mode
// converted to RGB.
// With `rgba`, an RGBA image is copied as it is (four channels).
void copy_pil(const py::handle& pil, data::SampleData* out, bool keep_modes, bool rgba = false) {
  py::object image = py::reinterpret_borrow<py::object>(pil);
  std::string mode = image.attr("mode").cast<std::string>();
  if (keep_modes && (mode == "1" || mode == "P")) {
    if (mode == "1") image = image.attr("convert")("L");
    mode = "L";  // P's bytes are its indices, one a pixel
  }
  if (mode != "L" && mode != "RGB" && !(rgba && mode == "RGBA")) image = image.attr("convert")("RGB");
  const py::tuple size = image.attr("size");
  const py::bytes pixels = image.attr("tobytes")();
  const std::string_view view = pixels;
  out->storage.assign(view.begin(), view.end());
  out->bytes = out->storage;
  out->raw = true;
  out->raw_width = size[0].cast<int>();
  out->raw_height = size[1].cast<int>();
  out->raw_channels = mode == "L" ? 1 : rgba && mode == "RGBA" ? 4 : 3;
}

// A PIL image of mode RGBA or LA as RGBA pixels to be resampled premultiplied, one of mode P or
// 1 as RGB pixels to be resampled nearest, as PIL resizes those modes (data::PilResample);
// false, nothing copied, for any other mode.
bool copy_pil_resampled(const py::handle& pil, data::SampleData* out) {
  const std::string mode = pil.attr("mode").cast<std::string>();
  const bool alpha = mode == "RGBA" || mode == "LA";
  if (!alpha && mode != "P" && mode != "1") return false;
  copy_pil(pil.attr("convert")(alpha ? "RGBA" : "RGB"), out, false, alpha);
  out->pil_resample = alpha ? data::PilResample::kPremultiplied : data::PilResample::kNearest;
  return true;
}

// What an item's image is: a file (read later, without the GIL), or pixels or bytes copied
// into `out` now. Throws std::invalid_argument with what the image is and what is allowed.
// With `keep_modes`, a PIL image keeps its mode's channels (copy_pil); a palette file that
// Image.open returned is read by PIL (its indices), not decoded to colours.
// With `resample_modes`, one of mode RGBA, LA, P or 1 is copied to be resampled as PIL resamples
// its mode (copy_pil_resampled).
void take_image(const py::handle& image, data::SampleData* out, FileToRead* file, bool keep_modes = false,
                bool resample_modes = false) {
  file->clear();
  out->pil_resample = data::PilResample::kAsStored;
  if (is_path(image)) return file->set(path_bytes(image));
  if (is_bytes_like(image)) return copy_bytes(image, out);
  if (is_pil_image(image)) {
    if (resample_modes && copy_pil_resampled(image, out)) return;
    const bool indices = keep_modes && image.attr("mode").cast<std::string>() == "P";
    if (indices || !is_unloaded_pil_file(image) || !take_unloaded_pil(image, out, file)) {
      copy_pil(image, out, keep_modes);
    }
    return;
  }
  std::string why = "a " + type_name(image);
  if (is_array_like(image)) {
    const py::array array = py::array::ensure(image, py::array::c_style);
    if (array && is_encoded_array(array)) return copy_bytes(array, out);
    ArrayImage layout;
    if (array && array_image(array, &layout, &why)) return copy_pixels(array, layout, out);
  }
  throw std::invalid_argument(why);
}

// Splits an item into its image and its target: the one object after the image, or the
// tuple of all of them; None for an item that is the image alone.
std::pair<py::object, py::object> image_and_target(const py::object& item) {
  if (!py::isinstance<py::tuple>(item) && !py::isinstance<py::list>(item)) return {item, py::none()};
  const auto parts = py::reinterpret_borrow<py::sequence>(item);
  const size_t n = parts.size();
  if (n == 0) throw std::invalid_argument("an empty " + type_name(item));
  if (n == 1) return {parts[0], py::none()};
  if (n == 2) return {parts[0], parts[1]};
  py::tuple rest(n - 1);
  for (size_t k = 1; k < n; ++k) rest[k - 1] = parts[k];
  return {parts[0], std::move(rest)};
}

// The keys of a dict, as their reprs joined: "'image', 'label'".
std::string key_list(const std::vector<py::handle>& keys) {
  std::string text;
  for (const py::handle key : keys) text += (text.empty() ? "" : ", ") + py::repr(key).cast<std::string>();
  return text;
}

// Splits a dict item into its image, the value under `image_key`, and its target, a dict of
// its other values in the item's order. Returns "" or why the item is not such a dict: another
// type, or keys other than `keys` (the first item's, in any order).
std::string split_dict(const py::object& item, const py::object& image_key, const py::tuple& keys, py::object* image,
                       py::object* target) {
  py::dict values;
  if (PyDict_Check(item.ptr())) {
    values = py::reinterpret_borrow<py::dict>(item);
  } else if (py::hasattr(item, "keys") && py::hasattr(item, "__getitem__")) {
    values = py::dict(item);  // a Mapping of another type, read as dict() reads it
  } else {
    return fmt::format("the item is a {}; expected a dict with the image under {}, as the first item", type_name(item),
                       py::repr(image_key).cast<std::string>());
  }
  std::vector<py::handle> missing, added;
  for (const py::handle key : keys) {
    if (!values.contains(key)) missing.push_back(key);
  }
  if (!missing.empty() || values.size() != keys.size()) {
    for (const auto& [key, value] : values) {
      if (PySequence_Contains(keys.ptr(), key.ptr()) != 1) added.push_back(key);
    }
    std::string why = "the item's keys differ from the first item's (";
    if (!missing.empty()) why += "missing " + key_list(missing) + (added.empty() ? "" : "; ");
    if (!added.empty()) why += "not in the first: " + key_list(added);
    return why + ")";
  }
  *image = values[image_key];
  *target = py::reinterpret_steal<py::object>(PyDict_Copy(values.ptr()));
  if (!*target || PyDict_DelItem(target->ptr(), image_key.ptr()) != 0) throw py::error_already_set();
  return "";
}

// Calls visit(kind, wrapper) for each stoker.Keypoints, Boxes and Mask in `target` ("keypoints",
// "boxes", "mask"), inside tuples, lists and dict values, depth first, in order: restore() in
// stoker/_geometry.py walks the same way.
template <typename Visit>
void for_each_geometry(const py::handle& target, const Visit& visit, int depth = 0) {
  if (depth > 16) return;
  if (py::hasattr(target, "__stoker_geometry__")) {
    visit(target.attr("__stoker_geometry__").cast<std::string>(), target);
  } else if (py::isinstance<py::tuple>(target) || py::isinstance<py::list>(target)) {
    for (const py::handle part : target) for_each_geometry(part, visit, depth + 1);
  } else if (py::isinstance<py::dict>(target)) {
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(target))
      for_each_geometry(value, visit, depth + 1);
  }
}

// A Keypoints' or Boxes' values, as float32.
py::array_t<float> geometry_values(const py::handle& wrapper) {
  const auto values = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(wrapper.attr("_values"));
  if (!values) throw std::invalid_argument("a " + type_name(wrapper) + " whose values are not an array");
  return values;
}

// Appends the values of the stoker.Keypoints and stoker.Boxes in `target` to *out, and its
// stoker.Mask (one at most), in for_each_geometry's order.
void collect_geometry(const py::handle& target, data::GeometryTargets* out) {
  for_each_geometry(target, [out](const std::string& kind, const py::handle& wrapper) {
    if (kind == "mask") {
      const auto mask = py::array_t<uint8_t, py::array::c_style>::ensure(wrapper.attr("_values"));
      if (!mask || mask.ndim() != 2) throw std::invalid_argument("a Mask whose values are not a 2-D uint8 array");
      if (!out->mask.empty()) throw std::invalid_argument("a target with two masks; give one per sample");
      out->mask.assign(mask.data(), mask.data() + mask.size());
      out->mask_height = static_cast<int>(mask.shape(0));
      out->mask_width = static_cast<int>(mask.shape(1));
      return;
    }
    const py::array_t<float> values = geometry_values(wrapper);
    std::vector<float>& to = kind == "boxes" ? out->boxes : out->points;
    to.insert(to.end(), values.data(), values.data() + values.size());
  });
}

// A clip's collect_geometry: each stoker.Keypoints (T, P, 3) and stoker.Boxes (T, 5) in
// `target` holds a row per frame of the clip's `count`; frame k of (*frames) gets row chosen[k]
// of each, in for_each_geometry's order. Throws std::invalid_argument, a line naming the item `at`,
// for another number of rows, one image's Keypoints or a Mask (clip_geometry.h).
void collect_clip_geometry(const py::handle& target, const std::string& at, size_t count, std::span<const int> chosen,
                           std::vector<data::SampleData>* frames) {
  for_each_geometry(target, [&](const std::string& kind, const py::handle& wrapper) {
    if (kind == "mask") throw std::invalid_argument(data::clip_mask_refusal(at));
    const py::array_t<float> values = geometry_values(wrapper);
    const auto rows = static_cast<size_t>(values.ndim() > 0 ? values.shape(0) : 0);
    if (kind == "keypoints" && values.ndim() != 3)
      throw std::invalid_argument(data::clip_points_refusal(at, rows, count));
    if (rows != count) {
      throw std::invalid_argument(
          data::clip_rows_refusal(at, kind == "boxes" ? "stoker.Boxes" : "stoker.Keypoints", rows, count));
    }
    const size_t row = static_cast<size_t>(values.size()) / count;
    for (size_t k = 0; k < chosen.size(); ++k) {
      std::vector<float>& to = kind == "boxes" ? (*frames)[k].geometry.boxes : (*frames)[k].geometry.points;
      const float* from = values.data() + static_cast<size_t>(chosen[k]) * row;
      to.insert(to.end(), from, from + row);
    }
  });
}

// Copies a feature tensor of `shape` into out as float32 values. Throws std::invalid_argument
// with what it is instead.
void take_features(const py::handle& features, const std::vector<int64_t>& shape, data::SampleData* out) {
  std::string what = "a " + type_name(features);
  if (is_array_like(features)) {
    const py::array array = py::reinterpret_borrow<py::object>(features);  // raises what numpy.asarray does
    if (array.dtype().kind() != 'f') {
      what = "an array of " + py::str(array.dtype()).cast<std::string>();
    } else if (!std::equal(shape.begin(), shape.end(), array.shape(), array.shape() + array.ndim())) {
      what = "an array of shape " + shape_text(array);
    } else {
      const auto values = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
      if (!values) throw py::error_already_set();
      out->storage.resize(static_cast<size_t>(values.size()) * sizeof(float));
      std::memcpy(out->storage.data(), values.data(), out->storage.size());
      out->bytes = out->storage;
      out->raw = false;
      out->feature_count = static_cast<int>(values.size());
      return;
    }
  }
  std::string expected;
  for (size_t k = 0; k < shape.size(); ++k) expected += (k > 0 ? ", " : "") + std::to_string(shape[k]);
  throw std::invalid_argument(
      fmt::format("the features are {}; expected a float array of shape ({}), as the first item's", what, expected));
}

constexpr const char* kAllowedImages =
    "a path, encoded bytes (bytes, or a 1-D uint8 array), a uint8 array ((H, W), (H, W, C) or (C, H, W)) or a PIL "
    "image";

// A clip item's clip and target: (clip, target, ...) when the item is a list or tuple whose
// first element is a clip, else the item is the clip alone.
std::pair<py::object, py::object> clip_and_target(const py::object& item) {
  const bool split = (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item)) && py::len(item) > 0 &&
                     is_clip(py::reinterpret_borrow<py::sequence>(item)[0]);
  if (!split) return {item, py::none()};
  return image_and_target(item);
}

}  // namespace

DatasetSource::DatasetSource(py::object dataset, py::object worker_init_fn, std::string name,
                             std::vector<std::string> class_names, bool has_geometry, bool clips,
                             std::vector<int64_t> feature_shape, py::object image_key, py::tuple item_keys,
                             py::object items, const std::vector<std::string>& sample_names, bool passthrough,
                             std::vector<int> first_size, py::object stack, py::object item_runs)
    : has_geometry_(has_geometry),
      dict_items_(!image_key.is_none()),
      passthrough_(passthrough),
      dataset_(std::make_shared<HeldObject>(std::move(dataset))),
      image_key_(std::make_shared<HeldObject>(std::move(image_key))),
      item_keys_(std::make_shared<HeldObject>(std::move(item_keys))),
      worker_init_fn_(std::make_shared<HeldObject>(std::move(worker_init_fn))),
      items_(std::make_shared<HeldObject>(std::move(items))),
      stack_(std::make_shared<HeldObject>(std::move(stack))),
      stacks_(passthrough && !stack_->get().is_none()),
      item_runs_(std::make_shared<HeldObject>(std::move(item_runs))),
      runs_(!item_runs_->get().is_none() && !items_->get().is_none() && !clips),
      name_(std::move(name)),
      class_names_(std::move(class_names)),
      size_(py::len(dataset_->get())),
      clips_(clips),
      feature_shape_(passthrough ? std::vector<int64_t>{1} : std::move(feature_shape)),
      first_size_(std::move(first_size)) {
  if (items_->get().is_none()) counted_ = call_times_;
  if (!first_size_.empty() && first_size_.size() != 3) {
    throw UsageError(
        fmt::format("{}: first_size holds {} values; expected (width, height, channels)", name_, first_size_.size()));
  }
  if (!sample_names.empty()) {
    if (sample_names.size() != size_.load()) {
      throw UsageError(fmt::format("{}: {} sample names for {} items", name_, sample_names.size(), size_.load()));
    }
    sample_name_ends_.reserve(sample_names.size());
    for (const std::string& n : sample_names) {
      sample_names_ += n;
      sample_name_ends_.push_back(sample_names_.size());
    }
  }
  if (feature_shape_.empty()) return;
  int64_t count = 1;
  for (const int64_t n : feature_shape_) count *= n;
  if (count < 1 || count > (int64_t{1} << 24)) {
    throw UsageError(
        fmt::format("{}'s features hold {} values; stoker reads 1 to 16,777,216 per sample", name_, count));
  }
  feature_count_ = static_cast<int>(count);
}

std::string DatasetSource::split(const py::object& item, bool clip, py::object* image, py::object* target) const {
  if (dict_items_) {
    return split_dict(item, image_key_->get(), py::reinterpret_borrow<py::tuple>(item_keys_->get()), image, target);
  }
  std::tie(*image, *target) = clip ? clip_and_target(item) : image_and_target(item);
  return "";
}

namespace {

// call(argument, wait) until it answers other than False (nothing came within `wait` seconds),
// each call a WorkerPython scope of its own, so that a fork waits for no worker that waits for
// an item. Throws std::runtime_error with its line where it raised. With the GIL held.
py::object wait_for_items(const py::object& call, const py::object& argument) {
  constexpr double kWaitS = 0.05;  // the longest a fork waits for a worker that waits for an item
  for (;;) {
    const WorkerPython in_python;
    py::object got;
    try {
      got = call(argument, kWaitS);
    } catch (py::error_already_set& e) {  // the processes cannot deliver: their line, without its type
      throw std::runtime_error(py::str(e.value()).cast<std::string>());
    }
    if (got.ptr() != Py_False) return got;
  }
}

}  // namespace

py::object DatasetSource::delivered(size_t index) const {
  if (items_->get().is_none()) return py::none();
  return wait_for_items(items_->get(), py::int_(index));
}

py::list DatasetSource::delivered_run(std::span<const uint64_t> indices) const {
  py::list wanted(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) wanted[k] = py::int_(indices[k]);
  return wait_for_items(item_runs_->get(), wanted).cast<py::list>();
}

py::object DatasetSource::item(size_t index, const py::object& delivered, std::string* bad) const {
  if (delivered.is_none()) return dataset_->get()[py::int_(index)];  // no processes, or not one they deliver
  const auto pair = delivered.cast<py::tuple>();
  if (!pair[1].is_none()) *bad = pair[1].cast<std::string>();
  return pair[0];
}

std::string DatasetSource::name(size_t index) const {
  // A Dataset that grew past its names (resize) names the rest by index.
  if (index < sample_name_ends_.size()) {
    const size_t begin = index == 0 ? 0 : sample_name_ends_[index - 1];
    return sample_names_.substr(begin, sample_name_ends_[index] - begin);
  }
  return fmt::format("{}[{}]", name_, index);
}

void DatasetSource::fixed_shape(int* width, int* height, int* channels) const {
  if (first_size_.empty() || clips_) return Source::fixed_shape(width, height, channels);
  *width = first_size_[0];
  *height = first_size_[1];
  *channels = first_size_[2];
}

std::string DatasetSource::describe() const { return fmt::format("{} object: {} samples", name_, size()); }

void DatasetSource::take_passed(py::object carried, data::SampleData* out) const {
  out->storage.resize(sizeof(float));  // one 0.0f feature
  std::fill(out->storage.begin(), out->storage.end(), uint8_t{0});
  out->bytes = out->storage;
  out->raw = false;
  out->feature_count = 1;
  out->extra = std::make_shared<const HeldObject>(std::move(carried), counted_);
}

Status DatasetSource::take(size_t index, const py::object& delivered, data::SampleData* out, FileToRead* file) const {
  if (delivered.ptr() == Py_Ellipsis) return Status::past_end();  // a stream that ended before it
  const WorkerPython in_python;
  if (passthrough_ && !delivered.is_none() && !PyTuple_Check(delivered.ptr())) {  // a row of a Chunk
    take_passed(delivered, out);
    return Status::ok_status();
  }
  try {
    std::string bad;
    const py::object item = this->item(index, delivered, &bad);
    if (!bad.empty()) return Status::failure(bad);
    py::object image, target;
    if (const std::string why = split(item, false, &image, &target); !why.empty()) return Status::failure(why);
    if (passthrough_) {  // the image travels with the target
      take_passed(py::make_tuple(image, target, index), out);
      return Status::ok_status();
    }
    if (feature_count_ > 0) {
      take_features(image, feature_shape_, out);
    } else {
      const int keep = keep_channels_.load(std::memory_order_relaxed);
      if (keep > 0) check_channels(image, keep);
      take_image(image, out, file, keep > 0, keep == 0 && resample_modes_.load(std::memory_order_relaxed));
    }
    if (has_geometry_) collect_geometry(target, &out->geometry);
    out->extra = std::make_shared<const HeldObject>(std::move(target), counted_);
  } catch (py::error_already_set& e) {
    return Status::failure("raised " + one_line(e));
  } catch (const std::invalid_argument& e) {
    if (feature_count_ > 0) return Status::failure(e.what());
    return Status::failure(fmt::format("the image is {}; expected {}", e.what(), kAllowedImages));
  }
  return Status::ok_status();
}

Status DatasetSource::read(size_t index, data::SampleData* out) const {
  FileToRead file;
  {
    const ClockedGil gil(counted_.get());
    const py::object delivered = this->delivered(index);
    out->retired.reset();  // the slot's last item, let go of under this GIL
    if (Status status = take(index, delivered, out, &file); !status.ok() || file.empty()) return status;
  }
  return file.read(out);
}

size_t DatasetSource::read_run(std::span<const uint64_t> indices, std::span<data::SampleData> outs,
                               std::span<Status> statuses) const {
  if (!runs_) return Source::read_run(indices, outs, statuses);
  const size_t n = indices.size();
  std::vector<FileToRead> files(n);
  size_t done = 0;
  {
    const ClockedGil gil(counted_.get());
    {
      const WorkerPython in_python;  // one scope for them all: each of its own would take the fork gate's lock
      for (data::SampleData& out : outs) out.retired.reset();  // the slots' last items, let go of under this GIL
    }
    try {
      while (done < n) {
        const py::list answers = delivered_run(indices.subspan(done));  // waits outside any scope (delivered())
        const WorkerPython in_python;
        for (size_t k = 0; k < answers.size() && done < n; ++k, ++done) {
          statuses[done] = take(indices[done], answers[k], &outs[done], &files[done]);
        }
      }
    } catch (const std::runtime_error&) {  // the processes cannot deliver: read() on its own says so
    }
  }
  for (size_t k = 0; k < done; ++k) {
    if (statuses[k].ok() && !files[k].empty()) statuses[k] = files[k].read(&outs[k]);
  }
  return done;
}

Status DatasetSource::read_clip(size_t index, const data::FramePicker& pick,
                                std::vector<data::SampleData>* frames) const {
  if (!clips_) return Source::read_clip(index, pick, frames);
  std::vector<FileToRead> files;  // of the frames given as files, read without the GIL
  std::vector<int> numbers;       // the chosen frames' numbers in the clip, for a message
  {
    const ClockedGil gil(counted_.get());
    const py::object delivered = this->delivered(index);
    if (delivered.ptr() == Py_Ellipsis) return Status::past_end();  // a stream that ended before it
    const WorkerPython in_python;
    int frame = 0;            // the frame being taken, for a message
    bool in_targets = false;  // past the frames: a failure is the targets'
    try {
      std::string bad;
      const py::object item = this->item(index, delivered, &bad);
      if (!bad.empty()) return Status::failure(bad);
      py::object clip, target;
      if (const std::string why = split(item, true, &clip, &target); !why.empty()) return Status::failure(why);
      if (!is_clip(clip)) {
        return Status::failure(
            fmt::format("the clip is a {}; expected a list or tuple of frames ({}), a NumPy array of paths or a "
                        "uint8 array of frames (T, H, W, C)",
                        type_name(clip), kAllowedImages));
      }
      const size_t count = py::len(clip);
      if (count == 0) return Status::failure("the clip has no frames");
      const std::span<const int> chosen = pick(static_cast<int>(count));
      numbers.assign(chosen.begin(), chosen.end());
      frames->resize(chosen.size());
      files = std::vector<FileToRead>(chosen.size());
      const int keep = keep_channels_.load(std::memory_order_relaxed);
      for (size_t k = 0; k < chosen.size(); ++k) {
        frame = chosen[k];
        const py::object image = clip[py::int_(frame)];
        if (keep > 0) check_channels(image, keep);
        take_image(image, &(*frames)[k], &files[k], keep > 0,
                   keep == 0 && resample_modes_.load(std::memory_order_relaxed));
        (*frames)[k].geometry.clear();
      }
      in_targets = true;
      if (has_geometry_) collect_clip_geometry(target, name(index), count, chosen, frames);
      frames->front().extra = std::make_shared<const HeldObject>(std::move(target), counted_);
    } catch (py::error_already_set& e) {
      return Status::failure("raised " + one_line(e));
    } catch (const std::invalid_argument& e) {
      if (in_targets) return Status::failure(e.what());
      return Status::failure(
          fmt::format("frame {}: the image is {}; expected {}", frame_name(index, frame), e.what(), kAllowedImages));
    }
  }
  for (size_t k = 0; k < files.size(); ++k) {
    if (files[k].empty()) continue;
    if (Status status = files[k].read(&(*frames)[k]); !status.ok()) {
      // Named as a frame that fails to decode is ("frame 6 of Videos[1]"), with its path.
      return Status::failure(
          fmt::format("frame {} ({}): {}", frame_name(index, numbers[k]), files[k].name(), status.reason()));
    }
  }
  return Status::ok_status();
}

void DatasetSource::keep_modes(int channels, std::string first_image, bool resample_modes) {
  if (channels != 0 && channels != 1 && channels != 3) {
    throw UsageError(fmt::format("keep_modes: {} channels; 0 (every image to RGB), 1 or 3", channels));
  }
  const std::lock_guard<std::mutex> lock(first_image_mutex_);
  first_image_ = std::move(first_image);
  keep_channels_.store(channels, std::memory_order_relaxed);
  resample_modes_.store(resample_modes, std::memory_order_relaxed);
}

void DatasetSource::check_channels(const py::handle& image, int keep) const {
  std::string what;
  bool decoded = false;
  const int channels = image_channels(image, &what, &decoded);
  // A file or encoded bytes are decoded to the chain's channels; not an image: take_image names it.
  if (decoded || channels < 0 || channels == keep) return;
  std::string first;
  {
    const std::lock_guard<std::mutex> lock(first_image_mutex_);
    first = first_image_;
  }
  throw std::runtime_error(fmt::format(
      "its image is {} ({}) where {} ({} channel{}): torch's default_collate cannot stack them either; give the "
      "Dataset's images one mode (image.convert(\"RGB\") or .convert(\"L\") where it opens them), or begin "
      "transforms with Grayscale(num_output_channels=3) or open_clip's _convert_to_rgb",
      what,
      channels > 0 ? fmt::format("{} channel{}", channels, channels == 1 ? "" : "s") : "a mode stoker does not carry",
      first, keep, keep == 1 ? "" : "s"));
}

std::string DatasetSource::frame_name(size_t index, int frame) const {
  return fmt::format("{} of {}[{}]", frame, name_, index);
}

void DatasetSource::on_worker_start(int worker_id) const {
  kept_thread_state.keep();
  py::gil_scoped_acquire gil;
  const WorkerPython in_python;
  if (worker_init_fn_->get().is_none()) return;
  try {
    worker_init_fn_->get()(worker_id);
  } catch (py::error_already_set& e) {
    throw std::runtime_error("worker_init_fn(" + std::to_string(worker_id) + ") raised " + one_line(e));
  }
}

std::shared_ptr<const void> DatasetSource::finish_batch(std::span<const std::shared_ptr<const void>> extras) const {
  const ClockedGil gil(counted_.get());
  const WorkerPython in_python;
  try {
    py::list items(extras.size());
    for (size_t s = 0; s < extras.size(); ++s) {
      const auto* held = static_cast<const HeldObject*>(extras[s].get());
      if (held == nullptr) return nullptr;
      items[s] = held->get();
    }
    py::object stacked = stack_->get()(items);
    if (stacked.is_none()) return nullptr;
    return std::make_shared<const HeldObject>(std::move(stacked));
  } catch (py::error_already_set&) {  // the consumer collates the batch again and raises the line
    return nullptr;
  }
}

py::object finished_of(const data::Batch& batch) {
  const auto* held = static_cast<const HeldObject*>(batch.finished().get());
  return held != nullptr ? held->get() : py::none();
}

py::list targets_of(const data::Batch& batch) {
  py::list targets(batch.size());
  for (int s = 0; s < batch.size(); ++s) {
    const auto* held = static_cast<const HeldObject*>(batch.extra(s).get());
    targets[static_cast<size_t>(s)] = held != nullptr ? held->get() : py::none();
  }
  return targets;
}

bool is_clip(const py::handle& object) {
  if (py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object)) return true;
  if (!is_array_like(object) || !py::hasattr(object, "ndim")) return false;
  const py::object ndim = object.attr("ndim");
  if (!PyLong_Check(ndim.ptr())) return false;
  if (ndim.cast<int>() == 4) return true;
  // A NumPy array of frames' paths (or of other objects), as `frames[np.linspace(...)]` picks them.
  if (ndim.cast<int>() != 1 || !py::hasattr(object, "dtype")) return false;
  const py::object dtype = object.attr("dtype");
  if (!py::hasattr(dtype, "kind")) return false;
  const py::object kind = dtype.attr("kind");
  return py::isinstance<py::str>(kind) && (kind.cast<std::string>() == "U" || kind.cast<std::string>() == "O");
}

std::string describe_image(const py::handle& image, bool* ok) {
  *ok = true;
  if (is_path(image)) {
    const std::string path = path_bytes(image);
    const data::DataFormat* format = data::format_of_file(path);
    if (format == nullptr) return "a path";
    *ok = false;
    return fmt::format("the path {} ({}: a dataset stoker reads by itself, not an image)", path, format->brief);
  }
  if (is_bytes_like(image)) return "encoded bytes";
  if (is_pil_image(image)) return "a PIL image";
  std::string why = "a " + type_name(image);
  if (is_array_like(image)) {
    const py::array array = py::array::ensure(image, py::array::c_style);
    if (array && is_encoded_array(array)) return "encoded bytes (a 1-D uint8 array)";
    ArrayImage layout;
    if (array && array_image(array, &layout, &why)) {
      return fmt::format("a uint8 array ({})", layout.channels_first ? "C, H, W" : "H, W, C");
    }
  }
  *ok = false;
  return fmt::format("{}; expected {}", why, kAllowedImages);
}

int image_channels(const py::handle& image, std::string* what, bool* decoded) {
  bool is_file = false;
  if (decoded == nullptr) decoded = &is_file;
  *decoded = false;
  if (is_path(image)) {
    *what = "a path (decoded to RGB)";
    *decoded = true;
    return 3;
  }
  if (is_bytes_like(image)) {
    *what = "encoded bytes (decoded to RGB)";
    *decoded = true;
    return 3;
  }
  if (is_pil_image(image)) {
    const auto mode = image.attr("mode").cast<std::string>();
    *what = "a PIL image of mode " + mode;
    if (mode == "L" || mode == "1" || mode == "P") return 1;
    return mode == "RGB" ? 3 : 0;
  }
  if (is_array_like(image)) {
    const py::array array = py::array::ensure(image, py::array::c_style);
    if (array && is_encoded_array(array)) {
      *what = "encoded bytes (decoded to RGB)";
      *decoded = true;
      return 3;
    }
    ArrayImage layout;
    std::string why;
    if (array && array_image(array, &layout, &why)) {
      *what = "a uint8 array of shape " + shape_text(array);
      return layout.channels == 4 ? 0 : layout.channels;
    }
  }
  *what = "a " + type_name(image);
  return -1;
}

std::optional<std::string> unloaded_pil_bytes(const py::handle& image) {
  if (!is_pil_image(image) || !is_unloaded_pil_file(image)) return std::nullopt;
  data::SampleData out;
  FileToRead file;
  if (!take_unloaded_pil(image, &out, &file)) return std::nullopt;
  if (!file.empty() && !file.read(&out).ok()) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(out.bytes.data()), out.bytes.size());
}

}  // namespace stoker::python
