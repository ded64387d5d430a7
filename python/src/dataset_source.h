// A map-style Dataset object of the script's (anything with __len__ and __getitem__) as a
// stoker Source: the loader's workers call dataset[i] and do the rest without the GIL.
//
// An item is `image` or `(image, target, ...)`. The image is a path (str or os.PathLike),
// encoded bytes (bytes, bytearray, memoryview), a uint8 array (NumPy, or anything
// numpy.asarray takes, such as a CPU torch tensor) of shape (H, W), (H, W, C) or (C, H, W)
// with C 1, 3 or 4 (an alpha channel is dropped), or a PIL image (converted to RGB unless it
// is L or RGB already, or keeping its mode's channels: keep_modes; a JPEG, PNG, WebP, BMP, PNM,
// TIFF or GIF (of a mode stoker's decoders read: 1, L, LA, P, RGB, RGBA) that Image.open(...)
// returned and nothing has loaded,
// drafted or moved off its first frame is decoded by stoker from its encoded bytes: read, as a
// path is, from the file PIL holds open, which may have been removed or replaced since, or by
// its name where PIL holds no file descriptor; copied from the io.BytesIO it was opened from;
// not a 16-bit grey PNG, PNM or TIFF, mode I, which PIL loads and converts to RGB, clipping at 255).
// What follows the image is the sample's target: the one object after it, or the tuple of all
// of them; it travels with the sample to the consumer (SampleData::extra, read back with
// targets_of) and is collated there, in Python. The stoker.Keypoints and stoker.Boxes in it
// are read into SampleData::geometry, moved with the image, and put back in their places by
// the consumer.
//
// A source of feature tensors (`feature_shape` given) reads items `features` or `(features,
// target, ...)` instead: a float16, float32 or float64 array-like (NumPy, a CPU torch tensor)
// of that shape, read as float32 feature values (SampleData::feature_count). An item of another
// shape or dtype is a bad sample naming both.
//
// A source of passed-through items (`passthrough`: stoker.DataLoader's for a Dataset whose
// images are arrays or tensors it already decoded or transformed, with no transforms= given)
// reads the image slot as it is: the sample's one float32 feature is 0, and what travels to
// the consumer is the tuple (image, target, index). With `stack` (a callable), the worker that
// writes a batch's last item calls stack([(image, target, index), ...]) for the whole batch
// (finish_batch), with the GIL, and the batch carries what it returns (finished_of) unless that
// is None or it raised; the consumer collates the images itself otherwise, as torch's
// default_collate does (stoker/_passthrough.py). Nothing is decoded, resized or transformed.
//
// A source of dict items (`image_key` given) reads the image (clip, features) under that key
// and makes the target a dict of the item's other values, in its order; an item whose keys
// are not `item_keys` (the first item's, in any order), or that is no dict (a Mapping of
// another type is read as dict() reads it), is a bad sample naming the difference. The
// consumer puts the batched image back under its key (stoker/_dict_items.py).
//
// A source of clips (`clips`, holds_clips) reads items `clip` or `(clip, target, ...)`: a
// list or tuple item whose first element is a clip is the latter, any other item a clip
// alone. A clip is a list or tuple of frames, each an image as above, or an array-like of 4
// dimensions whose first is the frames (uint8 (T, H, W, C) or (T, C, H, W)). read_clip reads
// the frames it is asked for (dataset[i] is called once); frame f of item i is named
// "f of Name[i]".
//
// Threads: read() holds the GIL for dataset[i], for copying an in-memory image out, and for
// letting go of the item its slot held before (SampleData::retired: one GIL round a sample,
// not two); a path's file, and an unloaded PIL image's, is read without it. name() and describe() never
// take the GIL (the loader calls them under its own lock). on_worker_start runs the script's
// worker_init_fn(worker_id) on the worker's thread, and gives the thread a Python thread state
// it keeps until it ends. The loader that owns this source must be destroyed, and its epochs
// started and awaited, with the GIL released (LoaderHandle does), or a worker waiting for the
// GIL would wait for ever. Its Python calls mark the thread (WorkerPython, loader_closing.h): a
// DataLoader a garbage collection lets go of there is closed elsewhere.
//
// Items from worker processes (`items`, stoker.DataLoader's dataset_processes): read() and
// read_clip() call items(i, wait) instead of dataset[i]. It returns (item, None), (None,
// reason) for an item whose dataset[i] raised there (a bad sample with that reason), None for
// an index the processes do not deliver (a substitute's: dataset[i] is called here), Ellipsis
// for an index past the end of an iterable-style Dataset's stream (Status::past_end: the
// loader ends the epoch there), or False while the item has not come within `wait` seconds;
// it waits with the GIL released. items raising (a worker process died) fails the epoch with
// its one line. With `item_runs` as well, a worker that claims a run of samples (cheap_reads:
// feature tensors, and passed-through items) reads them with read_run: under one GIL hold,
// item_runs(indices, wait) answers a list of items(i, ...)'s answers for as many of the run's
// indices as have come, in order (False while the first has not), until each has its answer.
// With `passthrough`, an item_runs answer that is none of these (a Chunk: the processes
// batched the chunk the item is in, stoker/_blocks.py) is what travels to the consumer as it
// is, in place of (image, target, index): the consumer finds the sample's row in it by the
// index its slot was claimed for.
//
// Errors: dataset[i] raising, or an item of another kind, makes sample i bad (substituted and
// named as any unreadable file is: the reason is the exception's one line); a worker_init_fn
// that raises fails the epoch with its message.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "python_call_clock.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"

namespace stoker::python {

class FileToRead;  // dataset_source.cpp's: a file an item names, read without the GIL

// A Python object whose last owner may be any thread: it takes the GIL to let go of it (and,
// once the interpreter is gone, lets go of nothing). With `times`, that is one of the worker
// threads' Python calls (a sample's item, let go of where the loader reuses its slot), counted
// there.
class HeldObject {
 public:
  explicit HeldObject(pybind11::object object, std::shared_ptr<PythonCallTimes> times = nullptr)
      : object_(std::move(object)), times_(std::move(times)) {}
  ~HeldObject();
  HeldObject(const HeldObject&) = delete;
  HeldObject& operator=(const HeldObject&) = delete;

  // With the GIL held.
  const pybind11::object& get() const { return object_; }

 private:
  pybind11::object object_;
  std::shared_ptr<PythonCallTimes> times_;
};

class DatasetSource final : public data::Source {
 public:
  // `dataset`: the object; `worker_init_fn`: None or a callable (stoker.DataLoader's gives the
  // thread its get_worker_info() answer, then calls the script's: stoker/_worker_info.py);
  // `name`: how messages name it ("FaceClips"); `class_names`: the dataset's classes, if it has
  // them. With the GIL held.
  // `has_geometry`: targets hold stoker.Keypoints / stoker.Boxes (stoker/targets.py), whose
  // values are read into SampleData::geometry and move with the image. `feature_shape`: the
  // shape of every item's feature tensor, for a Dataset of feature vectors; empty for images.
  // `image_key`: None for items (image, target, ...), else the key of a dict item's image, and
  // `item_keys` the first item's keys. `items`: None, or the callable that delivers the items of
  // worker processes (above). `sample_names`: how messages and bad samples name each item (a
  // folder's file paths, as bytes), or empty: `name[index]`; more or fewer names than items
  // throw UsageError. `passthrough`: items passed through (above). `first_size`: (width,
  // height, channels) of the first item's image where it is a uint8 array, else empty: what
  // fixed_shape() says, so that a chain that neither resizes nor crops ("none", Normalize alone)
  // can batch images of one size; an item of another size is then a bad sample naming both.
  // `stack`: None, or with `passthrough` the callable that batches a whole batch's items (above).
  DatasetSource(pybind11::object dataset, pybind11::object worker_init_fn, std::string name,
                std::vector<std::string> class_names, bool has_geometry, bool clips = false,
                std::vector<int64_t> feature_shape = {}, pybind11::object image_key = pybind11::none(),
                pybind11::tuple item_keys = pybind11::tuple(), pybind11::object items = pybind11::none(),
                const std::vector<std::string>& sample_names = {}, bool passthrough = false,
                std::vector<int> first_size = {}, pybind11::object stack = pybind11::none(),
                pybind11::object item_runs = pybind11::none());

  // len(dataset) when the source was made, or as resize() last set it.
  size_t size() const override { return size_.load(std::memory_order_relaxed); }
  // The size the next epoch plans: stoker.DataLoader reads len(dataset) at each pass's start
  // and sets it here, before start_epoch (Source::size). Any thread; a worker still reading
  // the last epoch picks its substitutes within the new size.
  void resize(size_t size) { size_.store(size, std::memory_order_relaxed); }
  std::string name(size_t index) const override;
  std::string describe() const override;
  data::TargetKind target_kind() const override { return data::TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return class_names_; }
  int feature_count() const override { return feature_count_; }
  // The first item's image size (first_size), not a guarantee: the loader checks each sample's.
  void fixed_shape(int* width, int* height, int* channels) const override;
  // dataset[i] is a Python call: samples are claimed one at a time, so that the workers share a
  // batch's calls, except for feature tensors (cheap to copy, as before passthrough existed),
  // and for passed-through items that worker processes deliver (item_runs: read in runs).
  bool cheap_reads() const override { return feature_count_ > 0 && (!passthrough_ || runs_); }
  // With item_runs (not for clips): a run's items taken under one GIL hold (above).
  bool reads_runs() const override { return runs_; }
  size_t read_run(std::span<const uint64_t> indices, std::span<data::SampleData> outs,
                  std::span<Status> statuses) const override;
  std::vector<int64_t> feature_shape() const override { return feature_shape_; }
  // A Dataset's feature tensors come as its items hold them: no Standardize.
  std::string default_transforms() const override { return feature_count_ > 0 ? "none" : ""; }
  int64_t label(size_t) const override { return 0; }  // the targets travel as Python objects
  void targets(size_t, float* out) const override { out[0] = 0; }
  Status read(size_t index, data::SampleData* out) const override;
  bool has_geometry() const override { return has_geometry_; }
  bool finishes_batches() const override { return stacks_; }
  // `stack`'s batch of the items in `extras`, a HeldObject; null where a slot has no item, or
  // `stack` returned None or raised (the consumer collates then, and raises the line).
  std::shared_ptr<const void> finish_batch(std::span<const std::shared_ptr<const void>> extras) const override;
  void on_worker_start(int worker_id) const override;
  bool holds_clips() const override { return clips_; }
  Status read_clip(size_t index, const data::FramePicker& pick, std::vector<data::SampleData>* frames) const override;
  std::string frame_name(size_t index, int frame) const override;
  // Whether an image keeps the channels of its mode, as torchvision's ToTensor and PILToTensor
  // give them (image_channels): 0, every image becomes RGB (a PIL image of another mode is
  // converted; for a chain that makes every image one mode: Grayscale, _convert_to_rgb); 1 or 3,
  // every image must have that many (`first_image` says which item set it: "Faces[0]'s image is
  // a PIL image of mode L"), a PIL image of mode 1 read as L and of mode P as its palette
  // indices, and an image of another count fails the epoch in one line naming both, as
  // torch's default_collate fails the batch; a path or encoded bytes is decoded to that many.
  // With channels 0 and `resample_modes` (a chain that converts to RGB after resizing, as
  // open_clip's), a PIL image of mode RGBA or LA comes as RGBA pixels resampled premultiplied,
  // one of mode P or 1 as RGB pixels resampled nearest (data::PilResample), as PIL resizes them
  // before the conversion; loaded by PIL, under the GIL.
  // Any thread; the next image read follows it.
  void keep_modes(int channels, std::string first_image, bool resample_modes = false);
  // What keep_modes set last (0 until it is called). Any thread.
  int kept_channels() const { return keep_channels_.load(std::memory_order_relaxed); }
  // The worker threads' Python calls since the source was made (python_call_clock.h): dataset[i],
  // `stack` where it batches, and letting go of an item; not counted with dataset_processes
  // (`items`). Any thread.
  const PythonCallTimes& call_times() const { return *call_times_; }

 private:
  // Throws std::runtime_error (the epoch fails) where `image`, pixels (not a path or encoded
  // bytes), has other than `keep` channels. With the GIL held.
  void check_channels(const pybind11::handle& image, int keep) const;
  // An item's image (its clip with `clip`, or its features) and its target; "" or why it is
  // not an item of the first item's kind. With the GIL held.
  std::string split(const pybind11::object& item, bool clip, pybind11::object* image, pybind11::object* target) const;
  // What `items` delivered for item `index`, None without `items`: it calls items(index, wait)
  // until that is not False (not come within `wait` seconds), each call a WorkerPython scope of
  // its own, so that a fork waits for no worker that waits for an item. Throws
  // std::runtime_error where `items` raised. With the GIL held.
  pybind11::object delivered(size_t index) const;
  // delivered() for a run: item_runs(indices, wait)'s list, for a prefix of `indices`, at least
  // the first. Throws std::runtime_error where it raised. With the GIL held.
  pybind11::list delivered_run(std::span<const uint64_t> indices) const;
  // Sample `index` from what delivered() gave for it into `out`, the file it names into `file`
  // (read afterwards, without the GIL). With the GIL held.
  Status take(size_t index, const pybind11::object& delivered, data::SampleData* out, FileToRead* file) const;
  // A passed-through sample into `out`: one 0.0f feature, and `carried` (its (image, target,
  // index), or the Chunk it is a row of) as its extra. With the GIL held.
  void take_passed(pybind11::object carried, data::SampleData* out) const;
  // Item `index`: what delivered() gave, else dataset[index]; sets *bad to the reason where it
  // is a bad sample. With the GIL held.
  pybind11::object item(size_t index, const pybind11::object& delivered, std::string* bad) const;

  bool has_geometry_;
  bool dict_items_;
  bool passthrough_;
  std::shared_ptr<HeldObject> dataset_;
  std::shared_ptr<HeldObject> image_key_;
  std::shared_ptr<HeldObject> item_keys_;
  std::shared_ptr<HeldObject> worker_init_fn_;
  std::shared_ptr<HeldObject> items_;
  std::shared_ptr<HeldObject> stack_;
  bool stacks_;  // stack_ is a callable
  std::shared_ptr<HeldObject> item_runs_;
  bool runs_;  // reads_runs()
  std::string name_;
  // sample_names, end to end, and where each ends in it (empty: none given).
  std::string sample_names_;
  std::vector<size_t> sample_name_ends_;
  std::vector<std::string> class_names_;
  std::atomic<size_t> size_{0};
  bool clips_ = false;
  std::vector<int64_t> feature_shape_;
  int feature_count_ = 0;
  std::vector<int> first_size_;
  std::atomic<int> keep_channels_{0};        // keep_modes
  std::atomic<bool> resample_modes_{false};  // keep_modes
  mutable std::mutex first_image_mutex_;
  std::string first_image_;  // guarded by first_image_mutex_
  std::shared_ptr<PythonCallTimes> call_times_ = std::make_shared<PythonCallTimes>();
  // call_times_ where the worker threads call dataset[i] (no `items`), else null.
  std::shared_ptr<PythonCallTimes> counted_;
};

// The targets the batch's samples carried from a DatasetSource (None where a sample carried
// none), as a list. With the GIL held.
pybind11::list targets_of(const data::Batch& batch);
// What DatasetSource::finish_batch made of `batch` (its `stack`'s batch of images), or None. With the GIL.
pybind11::object finished_of(const data::Batch& batch);

// True for what a clip item holds its frames in: a list, a tuple, an array-like of 4
// dimensions, or a NumPy array of 1 dimension of str or objects (the frames' paths). With the
// GIL held.
bool is_clip(const pybind11::handle& object);

// What dataset[i]'s image would be read as ("a path", "encoded bytes", "a uint8 array (H, W,
// 3)", ...), or a one-line reason it cannot be (its type or dtype or shape, and what is
// allowed; a path of a kind of data stoker reads as a dataset, such as an .h5 file): the
// DataLoader checks the first item with it up front. With the GIL held.
std::string describe_image(const pybind11::handle& image, bool* ok);

// The channels torchvision's ToTensor gives `image` (1 for a PIL image of mode L, 1 or P and a
// uint8 array (H, W) or with C 1; 3 for RGB; 3 for a path or encoded bytes, which stoker decodes
// to RGB as ImageFolder's default loader converts to RGB); 0 for an image stoker's chain does
// not carry as it is (a PIL image of another mode: LA, RGBA, F, I;16, CMYK...; a 4-channel
// array); -1 for no image. `what` says what it is: "a PIL image of mode LA"; `decoded`, where
// given, whether it is a file or encoded bytes stoker decodes. With the GIL held.
int image_channels(const pybind11::handle& image, std::string* what, bool* decoded = nullptr);

// The encoded bytes of a PIL image stoker decodes itself (a JPEG, PNG, ... that Image.open returned
// and nothing has loaded: see take_image), read from where PIL would read them (its BytesIO, the
// file it holds open, else its file's name); nullopt where stoker copies the image's pixels, or
// the file cannot be read. With the GIL held (the file is read holding it).
std::optional<std::string> unloaded_pil_bytes(const pybind11::handle& image);

}  // namespace stoker::python
