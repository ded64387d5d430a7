// stoker._stoker.Source and .Loader: the C++ input pipeline as the Python DataLoader uses it.
// Argument checks with Python's names live in stoker/data_loader.py; what reaches here is
// checked again by the C++ (UsageError → ValueError).
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <thread>
#include <utility>

#include "bindings.h"
#include "dataset_source.h"
#include "extra_columns.h"
#include "gpu_decode_binding.h"
#include "loader_closing.h"
#include "loader_handle.h"
#include "open_progress_lines.h"
#include "sample_records.h"
#include "stoker/core/mutex.h"
#include "stoker/core/progress_line.h"
#include "stoker/core/rng.h"
#include "stoker/data/clip_geometry.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/sampler.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "worker_signals.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Batch memory from a Python callable: allocate(bytes) -> (address, owner). The loader asks
// for its buffers on the consumer's thread (its constructor, set_prefetch); they go when its
// last batch does, on whatever thread drops it. The DataLoader passes torch's pinned memory.
class PythonAllocator final : public data::BufferAllocator {
 public:
  explicit PythonAllocator(py::object allocate) : allocate_(std::move(allocate)) {}
  ~PythonAllocator() override {
    py::gil_scoped_acquire gil;
    allocate_ = py::object();
  }
  void* allocate(size_t bytes) override {
    py::gil_scoped_acquire gil;
    py::tuple got = allocate_(bytes);
    auto* address = reinterpret_cast<void*>(got[0].cast<uintptr_t>());
    MutexLock lock(mutex_);
    owners_.emplace(address, got[1]);
    return address;
  }
  void deallocate(void* pointer, size_t /*bytes*/) override {
    if (!Py_IsInitialized()) return;  // the interpreter is gone and took the memory with it
    py::gil_scoped_acquire gil;
    py::object owner;
    {
      MutexLock lock(mutex_);
      auto it = owners_.find(pointer);
      if (it == owners_.end()) return;
      owner = std::move(it->second);
      owners_.erase(it);
    }
  }
  const char* name() const override { return "pinned (torch)"; }

 private:
  py::object allocate_;
  Mutex mutex_;
  std::map<void*, py::object> owners_ STOKER_GUARDED_BY(mutex_);
};

}  // namespace

LoaderHandle::LoaderHandle(std::shared_ptr<data::Source> source, data::LoaderOptions options, py::object allocate,
                           bool records, bool gpu_required)
    : features_(source->feature_count() > 0),
      classes_(source->target_kind() == data::TargetKind::kClass),
      dataset_targets_(dynamic_cast<const DatasetSource*>(source.get()) != nullptr),
      extra_columns_(source->columns() != nullptr ? source->columns()->extra : std::vector<data::ExtraColumn>{}),
      records_(records),
      geometry_(source->has_geometry()) {
  if (!allocate.is_none()) {
    allocator_ = std::make_shared<PythonAllocator>(std::move(allocate));
    options.allocator = allocator_.get();
  }
  if (options.gpu_handoff != data::GpuHandoff::kOff) {
    // The GPU finishes uint8 batches: a float32 chain without Normalize (ToTensor's x / 255) is
    // written as uint8 and scaled by the device feed, as it normalises (mean 0, std 1).
    data::TransformSpec& t = options.transform;
    if (t.dtype == data::DType::kFloat32 && !t.normalize.enabled()) {
      t.normalize = {.on = true, .mean = {0, 0, 0}, .std = {1, 1, 1}};
      t.dtype = data::DType::kUint8;
    }
    if (const std::string blocker = data::gpu_handoff_blocker(options, *source); !blocker.empty()) {
      if (gpu_required) throw UsageError("decode='gpu': " + blocker + "; use decode='cpu' or 'auto'");
      gpu_note_ = "decode='auto': decoding on the CPU: " + blocker;
      options.gpu_handoff = data::GpuHandoff::kOff;
    }
  }
  {
    // Standardize fitted over a feature file without its sums takes seconds: the line on
    // sys.stderr, as an open's, with the GIL released while the loader is made.
    const std::string described = source->describe();  // "arrays x.h5 (x, y): 125,000 samples × 16 features"
    const std::string path = described.substr(0, described.find(": "));
    const py::gil_scoped_release release;
    ProgressLine line(write_stderr_line);
    data::run_with_progress_line(
        path, [&] { loader_ = std::make_unique<data::Loader>(std::move(source), std::move(options)); }, line);
  }
  if (!loader_->fit_note().empty()) write_stderr_line(loader_->fit_note());
  live_handles().insert(this);
}

std::set<LoaderHandle*>& LoaderHandle::live_handles() {
  static auto* live = new std::set<LoaderHandle*>();  // never destroyed: the interpreter may outlive statics
  return *live;
}

LoaderHandle::~LoaderHandle() {
  live_handles().erase(this);
  close();
}

std::optional<OwnedLoader> LoaderHandle::take_loader() {
  if (loader_ == nullptr) return std::nullopt;
  OwnedLoader owned{allocator_, std::move(loader_)};
  if (leave_in_fork(made_in_, owned)) return std::nullopt;
  return owned;
}

namespace {

// Waits, with the GIL released, until no thread is inside a call on a loader (LoaderHandle::
// without_gil): such a call returns within 0.1 s (next()'s wait) once its loader is taken.
void wait_for_calls(const std::vector<std::shared_ptr<std::atomic<int>>>& calls) {
  for (const auto& c : calls) {
    while (c->load(std::memory_order_acquire) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

template <class F>
void LoaderHandle::without_gil(F&& f) {
  std::atomic<int>& calls = *calls_;
  calls.fetch_add(1, std::memory_order_acq_rel);
  PyThreadState* state = PyEval_SaveThread();
  try {
    f();
  } catch (...) {
    calls.fetch_sub(1, std::memory_order_acq_rel);
    PyEval_RestoreThread(state);
    throw;
  }
  calls.fetch_sub(1, std::memory_order_acq_rel);
  PyEval_RestoreThread(state);  // not in a destructor: at finalization this may end the thread
}

void LoaderHandle::close() {
  std::optional<OwnedLoader> owned = take_loader();  // with the GIL held, as close_all() takes it
  if (!owned) return;
  if (WorkerPython::active()) {
    // A garbage collection inside a worker's Python call let go of this loader, maybe inside one
    // of its own workers: another thread joins them (loader_closing.h).
    close_elsewhere(std::move(*owned));
    return;
  }
  py::gil_scoped_release released;
  wait_for_calls({calls_});  // another thread's next() may be using the loader
  owned->loader.reset();
}

namespace {

// The loaders take_all() took at exit, until close_all() closes them; read and changed with the
// GIL held. Never destroyed: the interpreter may outlive statics.
struct TakenAtExit {
  pid_t made_in = getpid();
  std::vector<OwnedLoader> loaders;
  std::vector<std::shared_ptr<std::atomic<int>>> calls;  // of every handle live then
};

TakenAtExit& taken_at_exit() {
  static auto* taken = new TakenAtExit();
  if (taken->made_in != getpid()) {  // a child forked after a take_all(): the parent's loaders are left as they are
    for (OwnedLoader& o : taken->loaders) leave_in_fork(taken->made_in, o);
    taken->loaders.clear();
    taken->calls.clear();
    taken->made_in = getpid();
  }
  return *taken;
}

}  // namespace

void LoaderHandle::take_all() {
  TakenAtExit& taken = taken_at_exit();
  for (LoaderHandle* handle : live_handles()) {
    if (std::optional<OwnedLoader> o = handle->take_loader()) taken.loaders.push_back(std::move(*o));
    taken.calls.push_back(handle->calls_);
  }
}

void LoaderHandle::close_all() {
  take_all();
  TakenAtExit& taken = taken_at_exit();
  std::vector<OwnedLoader> owned;
  owned.swap(taken.loaders);
  std::vector<std::shared_ptr<std::atomic<int>>> calls;
  calls.swap(taken.calls);
  py::gil_scoped_release released;
  wait_for_calls(calls);  // a daemon thread's next() may be using a loader
  for (OwnedLoader& o : owned) o.loader.reset();
  finish_closing();
}

data::Loader& LoaderHandle::loader() {
  if (!loader_) throw std::runtime_error("this stoker loader was closed (the interpreter is exiting)");
  return *loader_;
}

void LoaderHandle::start_epoch(int64_t epoch, int64_t first_batch, std::optional<std::vector<uint64_t>> order,
                               std::optional<std::vector<int>> batch_sizes, const py::object& on_order) {
  data::Loader& l = loader();
  data::Loader::OrderListener listener;
  if (!on_order.is_none()) {
    listener = [&on_order](std::span<const uint64_t> unclaimed) {
      py::gil_scoped_acquire gil;
      py::list ids(unclaimed.size());
      for (size_t k = 0; k < unclaimed.size(); ++k) ids[k] = py::int_(unclaimed[k]);
      on_order(ids);
    };
  }
  without_gil([&] {
    if (order && batch_sizes) {
      l.start_epoch_in_batches(epoch, std::move(*order), *batch_sizes, first_batch, listener);
    } else if (order) {
      l.start_epoch(epoch, std::move(*order), first_batch, listener);
    } else {
      l.start_epoch(epoch, first_batch, listener);
    }
  });
}

void LoaderHandle::reseed(uint64_t seed, int64_t seed_epoch) {
  data::Loader& l = loader();
  without_gil([&] { l.reseed(seed, seed_epoch); });
}

std::optional<PyBatch> LoaderHandle::next(double timeout) {
  data::Batch batch;
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    data::Loader& l = loader();  // closed meanwhile (at exit, by close_all): raises
    bool ready = false;
    without_gil([&] { ready = l.next_within(0.1, &batch); });
    // Closed meanwhile (close_all at exit): its batch is dropped, so that a daemon thread runs
    // no more of the script's loop (stoker/_exit.py parks it).
    (void)loader();
    if (ready) break;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
    if (timeout > 0 && waited.count() >= timeout) {
      PyErr_SetString(PyExc_RuntimeError, fmt::format("DataLoader timed out after {:g} seconds waiting for a batch "
                                                      "(timeout={:g}); raise timeout, or 0 waits for as long as "
                                                      "it takes",
                                                      waited.count(), timeout)
                                              .c_str());
      throw py::error_already_set();
    }
  }
  if (!batch) return std::nullopt;
  // The batch's buffer is freed through the allocator when the loader's last batch goes, maybe
  // after this handle: each batch keeps the allocator alive until it is gone itself. In a forked
  // child the batch is left as it is, as the loader is (delete_batch).
  auto shared = std::shared_ptr<data::Batch>(new data::Batch(std::move(batch)),
                                             [allocator = allocator_, made_in = made_in_](const data::Batch* b) {
                                               delete_batch(made_in, b);
                                               (void)allocator;
                                             });
  return PyBatch{
      shared->epoch(),
      shared->index(),
      shared->size(),
      inputs_of(shared, features_),
      classes_ ? labels_of(shared) : targets_of(shared),
      std::vector<uint64_t>(shared->indices(), shared->indices() + shared->size()),
      dataset_targets_ ? py::object(targets_of(*shared)) : py::object(py::none()),
      dataset_targets_ ? finished_of(*shared) : py::object(py::none()),
      extra_columns_.empty() ? py::object(py::none()) : py::object(extra_columns_of(*shared, extra_columns_)),
      records_
          ? py::object(records_of(*shared, loader_->source(), loader_->options().transform, loader_->options().clip))
          : py::object(py::none()),
      geometry_ ? py::object(geometry_of(*shared)) : py::object(py::none()),
      shared->gpu_samples() > 0 ? py::object(gpu_samples_of(*shared)) : py::object(py::none()),
      shared};
}

namespace {

constexpr std::pair<data::GpuHandoff, const char*> kHandoffNames[] = {{data::GpuHandoff::kOff, "off"},
                                                                      {data::GpuHandoff::kHardware, "hardware"},
                                                                      {data::GpuHandoff::kAll, "all"},
                                                                      {data::GpuHandoff::kCudaPath, "cuda_path"}};

}  // namespace

data::GpuHandoff handoff_of(const std::string& text) {
  for (const auto& [handoff, name] : kHandoffNames) {
    if (text == name) return handoff;
  }
  throw UsageError("gpu_handoff must be 'off', 'hardware', 'all' or 'cuda_path' (got '" + text + "')");
}

const char* handoff_name(data::GpuHandoff handoff) {
  for (const auto& [h, name] : kHandoffNames) {
    if (h == handoff) return name;
  }
  return "off";  // every GpuHandoff is in the table
}

namespace {

data::OnError on_error_of(const std::string& text) {
  if (text == "substitute") return data::OnError::kSubstitute;
  if (text == "raise") return data::OnError::kFail;
  throw UsageError("on_error must be 'substitute' or 'raise' (got '" + text + "')");
}

}  // namespace

void bind_loader(py::module_& m) {
  m.def("data_formats_brief", &data::data_formats_brief, "The kinds of data stoker reads, in a few words each");
  m.def("open_progress_line",
        py::overload_cast<const std::string&, uint64_t, uint64_t, uint64_t, bool, double>(&data::open_progress_text),
        "A progress line of an open: a listing or an index", py::arg("path"), py::arg("files"), py::arg("parts_done"),
        py::arg("parts"), py::arg("shards"), py::arg("seconds"));
  py::class_<data::Source, std::shared_ptr<data::Source>>(m, "Source")
      .def(py::init([](const std::string& path, const std::string& split, bool clips) {
             return std::shared_ptr<data::Source>(open_showing_progress(path, split, clips));
           }),
           "Opens `path`; a long open says what it does on sys.stderr (data::OpenProgress::line_due)", py::arg("path"),
           py::arg("split") = "train", py::arg("clips") = false)
      .def_static(
          "dataset",
          [](py::object dataset, py::object worker_init_fn, std::string name, std::vector<std::string> classes,
             bool has_geometry, bool clips, std::vector<int64_t> feature_shape, py::object image_key,
             py::tuple item_keys, py::object items, const std::vector<std::string>& sample_names, bool passthrough,
             std::vector<int> first_size, py::object stack, py::object item_runs) {
            return std::shared_ptr<data::Source>(std::make_shared<DatasetSource>(
                std::move(dataset), std::move(worker_init_fn), std::move(name), std::move(classes), has_geometry, clips,
                std::move(feature_shape), std::move(image_key), std::move(item_keys), std::move(items), sample_names,
                passthrough, std::move(first_size), std::move(stack), std::move(item_runs)));
          },
          "A map-style Dataset object whose items are (image, target, ...), (clip, target, ...) with clips, or "
          "(features, target, ...) with feature_shape, or dicts holding one of those under image_key "
          "(dataset_source.h); items: None, or the callable delivering worker processes' items; sample_names: each "
          "item's name in messages (a folder's file paths as bytes), or empty; passthrough: the image slot travels as "
          "it is, with the target, as (image, target, index); first_size: (width, height, channels) of the first "
          "item's uint8 array image, or empty; stack: None, or with passthrough stack(items) -> a batch's images, "
          "called on the worker that writes the batch's last item (Batch.finished); item_runs: None, or with items "
          "the callable delivering a run of items at once (item_runs(indices, wait))",
          py::arg("dataset"), py::arg("worker_init_fn"), py::arg("name"), py::arg("classes"),
          py::arg("has_geometry") = false, py::arg("clips") = false, py::arg("feature_shape") = std::vector<int64_t>{},
          py::arg("image_key") = py::none(), py::arg("item_keys") = py::tuple(), py::arg("items") = py::none(),
          py::arg("sample_names") = std::vector<std::string>{}, py::arg("passthrough") = false,
          py::arg("first_size") = std::vector<int>{}, py::arg("stack") = py::none(), py::arg("item_runs") = py::none())
      .def_static(
          "concat",
          [](std::vector<std::shared_ptr<data::Source>> parts, const std::string& what) {
            std::vector<std::shared_ptr<const data::Source>> shared(parts.begin(), parts.end());
            return std::shared_ptr<data::Source>(data::concat_parts(std::move(shared), what));
          },
          "The samples of `parts` one after another (a ConcatDataset's, data::concat_parts); `what` names the whole",
          py::arg("parts"), py::arg("what"))
      .def_static(
          "first_rows",
          [](std::shared_ptr<data::Source> source, size_t count) -> std::shared_ptr<data::Source> {
            return std::const_pointer_cast<data::Source>(data::first_rows(std::move(source), count));
          },
          "`source`'s first `count` samples (data::first_rows)", py::arg("source"), py::arg("count"))
      .def_static(
          "with_geometry",
          [](std::shared_ptr<data::Source> source, const py::array_t<float, py::array::c_style>& points,
             int points_per_sample, const py::array_t<float, py::array::c_style>& boxes, int boxes_per_sample) {
            std::vector<float> point_values(points.data(), points.data() + points.size());
            std::vector<float> box_values(boxes.data(), boxes.data() + boxes.size());
            return std::const_pointer_cast<data::Source>(data::with_geometry(std::move(source), std::move(point_values),
                                                                             points_per_sample, std::move(box_values),
                                                                             boxes_per_sample));
          },
          "`source` with keypoints (x, y, visible) and boxes (x1, y1, x2, y2, valid) for every sample",
          py::arg("source"), py::arg("points"), py::arg("points_per_sample"), py::arg("boxes"),
          py::arg("boxes_per_sample"))
      .def_static(
          "with_clip_geometry",
          [](std::shared_ptr<data::Source> source, const py::array_t<float, py::array::c_style>& points,
             int points_per_frame, const py::array_t<float, py::array::c_style>& boxes, int boxes_per_frame,
             std::vector<size_t> first_row) {
            std::vector<float> point_values(points.data(), points.data() + points.size());
            std::vector<float> box_values(boxes.data(), boxes.data() + boxes.size());
            return std::const_pointer_cast<data::Source>(
                data::with_clip_geometry(std::move(source), std::move(point_values), points_per_frame,
                                         std::move(box_values), boxes_per_frame, std::move(first_row)));
          },
          "`source`, a clip source, with keypoints (x, y, visible) and boxes (x1, y1, x2, y2, valid) for every frame "
          "(clip_geometry.h)",
          py::arg("source"), py::arg("points"), py::arg("points_per_frame"), py::arg("boxes"),
          py::arg("boxes_per_frame"), py::arg("first_row"))
      .def(
          "clip_frames",
          [](const data::Source& s, size_t i) {
            if (i >= s.size()) throw py::index_error("clip index out of range");
            return fs_strs(data::clip_frame_names(s, i));
          },
          "Clip i's frames, by name (their paths for a path's clips), in order; none is read", py::arg("index"))
      .def("__len__", &data::Source::size)
      .def(
          "resize",
          [](data::Source& s, size_t size) {
            auto* dataset = dynamic_cast<DatasetSource*>(&s);
            if (dataset == nullptr) throw UsageError("resize: only a Dataset object's source follows its len()");
            dataset->resize(size);
          },
          "A Dataset object's source: the size its next epoch plans (its len() at the pass's start)", py::arg("size"))
      .def(
          "keep_modes",
          [](data::Source& s, int channels, std::string first_image, bool resample_modes) {
            auto* dataset = dynamic_cast<DatasetSource*>(&s);
            if (dataset == nullptr) throw UsageError("keep_modes: only a Dataset object's source keeps images' modes");
            dataset->keep_modes(channels, std::move(first_image), resample_modes);
          },
          "A Dataset object's source: 0, every image to RGB; 1 or 3, every image keeps its mode's channels, which "
          "must be these; resample_modes: with 0, RGBA and LA images resampled premultiplied, P and 1 nearest, as "
          "PIL resizes them before a conversion to RGB (dataset_source.h)",
          py::arg("channels"), py::arg("first_image"), py::arg("resample_modes") = false)
      .def_property_readonly(
          "kept_channels",
          [](const data::Source& s) {
            const auto* dataset = dynamic_cast<const DatasetSource*>(&s);
            return dataset == nullptr ? 0 : dataset->kept_channels();
          },
          "A Dataset object's source: what keep_modes set last (0: every image to RGB, or never set); 0 for "
          "any other source")
      .def_property_readonly(
          "call_times",
          [](const data::Source& s) -> py::object {
            const auto* dataset = dynamic_cast<const DatasetSource*>(&s);
            if (dataset == nullptr) return py::none();
            const PythonCallTimes& t = dataset->call_times();
            auto seconds = [](const std::atomic<int64_t>& ns) { return static_cast<double>(ns.load()) / 1e9; };
            return py::make_tuple(t.calls.load(), seconds(t.entry_wait_ns), seconds(t.inside_ns), seconds(t.cpu_ns),
                                  seconds(t.run_wait_ns));
          },
          "A Dataset object's source: the worker threads' Python calls so far (python_call_clock.h): (calls, seconds "
          "waiting to enter, seconds inside, CPU seconds inside, seconds inside waiting for a core); None for any "
          "other source")
      .def("describe", [](const data::Source& s) { return fs_str(s.describe()); })
      .def("name", [](const data::Source& s, size_t i) { return fs_str(s.name(i)); })
      .def("shown_name", [](const data::Source& s, size_t i) { return fs_str(s.shown_name(i)); })
      .def_property_readonly("class_names", [](const data::Source& s) { return fs_strs(s.class_names()); })
      .def_property_readonly(
          "classes_without_samples",
          [](const data::Source& s) { return fs_str(data::classes_without_samples_text(s)); },
          "'1 of 3 classes has no sample ('cow')', or '' where every class has one; reads every label")
      .def_property_readonly("is_classification",
                             [](const data::Source& s) { return s.target_kind() == data::TargetKind::kClass; })
      .def_property_readonly("target_dim", &data::Source::target_dim)
      .def_property_readonly("feature_count", &data::Source::feature_count)
      .def_property_readonly("feature_shape", &data::Source::feature_shape)
      .def_property_readonly("columns", &columns_info)
      .def("column_cells", &column_cells, "Every sample's cell of extra column `column` (a str each)",
           py::arg("column"))
      .def_property_readonly("holds_clips", &data::Source::holds_clips)
      .def_property_readonly("default_transforms", [](const data::Source& s) { return data::default_transforms(s); })
      .def("check_class_ids", &data::Source::check_class_ids)
      .def("names",
           [](const data::Source& s) {
             py::list names(s.size());
             for (size_t i = 0; i < s.size(); ++i) names[i] = fs_str(s.name(i));
             return names;
           })
      .def("all_targets", [](const data::Source& s) -> py::list {
        py::list out(s.size());
        const int dim = s.target_dim();
        std::vector<float> values(static_cast<size_t>(dim));
        for (size_t i = 0; i < s.size(); ++i) {
          if (s.target_kind() == data::TargetKind::kClass) {
            out[i] = py::int_(s.label(i));
            continue;
          }
          s.targets(i, values.data());
          out[i] = dim == 1 ? py::object(py::float_(values[0])) : py::object(py::cast(values));
        }
        return out;
      });
  m.def("rank_seed", &rank_seed, "The seed of a rank's sample streams under a script's sampler (stoker/core/rng.h)",
        py::arg("seed"), py::arg("rank"));
  py::class_<data::SamplerOptions>(m, "SamplerOptions",
                                   "A loader's sampler options (stoker/data/sampler.h), for plan_epoch's band_groups")
      .def_property_readonly("bands",
                             [](const data::SamplerOptions& s) { return s.band_starts ? s.band_starts->size() : 0; })
      .def_readonly("group_bands", &data::SamplerOptions::group_bands);
  m.def(
      "plan_epoch",
      [](uint64_t size, int batch_size, bool shuffle, bool drop_last, uint64_t seed, int rank, int world_size,
         int64_t epoch, const data::SamplerOptions* band_groups) {
        data::SamplerOptions o;
        if (band_groups != nullptr) {
          o.band_starts = band_groups->band_starts;
          o.group_bands = band_groups->group_bands;
        }
        o.shuffle = shuffle;
        o.drop_last = drop_last;
        o.seed = seed;
        o.rank = rank;
        o.world_size = world_size;
        return data::plan_epoch(size, batch_size, o, epoch).indices;
      },
      "The sample ids one rank visits in an epoch, in order (stoker/data/sampler.h)", py::arg("size"), py::kw_only(),
      py::arg("batch_size"), py::arg("shuffle"), py::arg("drop_last"), py::arg("seed"), py::arg("rank"),
      py::arg("world_size"), py::arg("epoch"), py::arg("band_groups") = py::none());
  m.def(
      "target_indices",
      [](const data::Source& source, const std::vector<std::string>& given, const std::string& option) {
        return data::target_indices(source, given, option);
      },
      "The float targets `given` names (target column names or indices), as indices", py::arg("source"),
      py::arg("given"), py::arg("option"));
  m.attr("max_clip_frames") = data::ClipOptions::kMaxFrames;
  m.attr("max_frame_step") = data::ClipOptions::kMaxStep;
  m.attr("default_max_pixels") = data::DecodeOptions{}.max_pixels;  // Pillow's MAX_IMAGE_PIXELS
  m.def(
      "clip_source_refusal",
      [](int frames, const data::Source& source) {
        data::ClipOptions clip;
        clip.frames = frames;
        return fs_str(clip.source_refusal(source.holds_clips(), source.describe()));
      },
      "Empty when frames_per_clip=`frames` suits `source`, else the line refusing it", py::arg("frames"),
      py::arg("source"));
  m.def("clip_rows_refusal", &data::clip_rows_refusal,
        "The line for a clip `at` whose `what` (stoker.Boxes, keypoints) holds `rows` rows beside `frames` frames",
        py::arg("at"), py::arg("what"), py::arg("rows"), py::arg("frames"));
  m.def("clip_points_refusal", &data::clip_points_refusal,
        "The line for a clip `at` whose stoker.Keypoints are one image's `points` points", py::arg("at"),
        py::arg("points"), py::arg("frames"));
  m.def("clip_mask_refusal", &data::clip_mask_refusal, "The line for a clip `at` that holds a stoker.Mask",
        py::arg("at"));
  m.def(
      "is_clip", [](const py::handle& object) { return is_clip(object); },
      "Whether a clip item holds its frames in `object`: a list, a tuple or a 4-dimensional array", py::arg("object"));
  m.def(
      "before_fork", [] { before_fork(); },
      "os.register_at_fork's before: waits until no worker is inside dataset[i] (loader_closing.h)");
  m.def("forks_that_gave_up_waiting", &forks_that_gave_up_waiting,
        "How many forks went ahead with a worker still inside dataset[i] (before_fork's 10 s timeout)");
  m.def(
      "after_fork_in_parent", [] { after_fork(false); }, "os.register_at_fork's after_in_parent");
  m.def(
      "after_fork_in_child", [] { after_fork(true); }, "os.register_at_fork's after_in_child");
  m.def("shield_worker_from_group_signals", &shield_worker_from_group_signals,
        "In a dataset_processes worker: SIGTERM and SIGINT end it only from `manager` (the loader's process), and "
        "it ends with its parent (worker_signals.h)",
        py::arg("manager"), py::arg("parent"));
  m.def(
      "unloaded_pil_bytes",
      [](const py::handle& image) -> py::object {
        const std::optional<std::string> bytes = unloaded_pil_bytes(image);
        return bytes ? py::object(py::bytes(*bytes)) : py::object(py::none());
      },
      "The encoded bytes stoker decodes a PIL image from, or None where it copies its pixels", py::arg("image"));
  m.def(
      "image_channels",
      [](const py::handle& image) {
        std::string what;
        const int channels = image_channels(image, &what);
        return py::make_tuple(channels, std::move(what));
      },
      "(the channels torchvision's ToTensor gives the image, what it is): 0 for one stoker does not carry as it "
      "is, -1 for no image (dataset_source.h)",
      py::arg("image"));
  m.def(
      "describe_image",
      [](const py::handle& image) {
        bool ok = false;
        std::string text = describe_image(image, &ok);
        return py::make_tuple(ok, std::move(text));
      },
      "(True, what it is) for an image a Dataset may return, else (False, why not)", py::arg("image"));

  py::class_<PyBatch>(m, "Batch")
      .def_readonly("epoch", &PyBatch::epoch)
      .def_readonly("index", &PyBatch::index)
      .def_readonly("size", &PyBatch::size)
      .def_readonly("inputs", &PyBatch::inputs)
      .def_readonly("targets", &PyBatch::targets)
      .def_readonly("indices", &PyBatch::indices)
      .def_readonly("items", &PyBatch::items)
      .def_readonly("finished", &PyBatch::finished)
      .def_readonly("columns", &PyBatch::columns)
      .def_readonly("params", &PyBatch::params)
      .def_readonly("geometry", &PyBatch::geometry)
      .def_readonly("gpu", &PyBatch::gpu);

  py::class_<LoaderHandle>(m, "Loader")
      .def(py::init([](std::shared_ptr<data::Source> source, int batch_size, int workers, int prefetch, bool shuffle,
                       bool drop_last, uint64_t seed, int rank, int world_size, const std::string& transforms,
                       bool channels_last, bool normalize_in_consumer, const std::string& on_error, double max_bad,
                       double cache_decoded_bytes, bool run_ahead, bool return_params,
                       std::vector<std::pair<int, int>> flip_pairs, std::vector<int> flip_negate, py::object allocate,
                       int frames_per_clip, int frame_step, const std::string& clip_start,
                       const std::string& gpu_handoff, bool gpu_required, int64_t max_pixels,
                       const std::string& max_pixels_named, double chunk_shuffle_bytes) {
             data::LoaderOptions o;
             o.decode.max_pixels = max_pixels;
             o.decode.max_pixels_named = max_pixels_named;
             o.batch_size = batch_size;
             o.workers = workers;
             o.prefetch = prefetch;
             o.buffers_for_consumer = data::kBuffersForConsumer;
             o.sampler.shuffle = shuffle;
             o.sampler.drop_last = drop_last;
             o.sampler.seed = seed;
             o.sampler.rank = rank;
             o.sampler.world_size = world_size;
             o.transform = data::parse_transforms(transforms);
             if (channels_last) o.transform.layout = data::Layout::kNHWC;
             if (normalize_in_consumer) data::normalize_in_consumer(&o.transform);
             o.on_error = on_error_of(on_error);
             o.max_bad_fraction = max_bad;
             o.cache_decoded_bytes = static_cast<size_t>(cache_decoded_bytes);
             o.chunk_shuffle_bytes = static_cast<size_t>(chunk_shuffle_bytes);
             o.run_ahead = run_ahead;
             o.words = data::FrontEnd::kPython;
             o.target_geometry.flip_pairs = std::move(flip_pairs);
             o.target_geometry.flip_negate = std::move(flip_negate);
             o.clip.frames = frames_per_clip;
             o.clip.step = frame_step;
             if (clip_start != "random" && clip_start != "center") {
               throw UsageError("clip_start must be 'random' or 'center' (got '" + clip_start + "')");
             }
             o.clip.random_start = clip_start == "random";
             o.gpu_handoff = handoff_of(gpu_handoff);
             return std::make_unique<LoaderHandle>(std::move(source), std::move(o), std::move(allocate), return_params,
                                                   gpu_required);
           }),
           py::arg("source"), py::kw_only(), py::arg("batch_size"), py::arg("workers"), py::arg("prefetch"),
           py::arg("shuffle"), py::arg("drop_last"), py::arg("seed"), py::arg("rank"), py::arg("world_size"),
           py::arg("transforms"), py::arg("channels_last"), py::arg("normalize_in_consumer"), py::arg("on_error"),
           py::arg("max_bad"), py::arg("cache_decoded_bytes"), py::arg("run_ahead") = true,
           py::arg("return_params") = false, py::arg("flip_pairs") = std::vector<std::pair<int, int>>{},
           py::arg("flip_negate") = std::vector<int>{}, py::arg("allocate") = py::none(),
           py::arg("frames_per_clip") = 0, py::arg("frame_step") = 1, py::arg("clip_start") = "random",
           py::arg("gpu_handoff") = "off", py::arg("gpu_required") = false,
           py::arg("max_pixels") = data::DecodeOptions{}.max_pixels,
           py::arg("max_pixels_named") = data::DecodeOptions{}.max_pixels_named,
           py::arg("chunk_shuffle_bytes") = data::LoaderOptions{}.chunk_shuffle_bytes)
      .def_property_readonly("gpu_note", &LoaderHandle::gpu_note)
      .def_property_readonly(
          "band_groups",
          [](LoaderHandle& h) {
            return h.loader().options().sampler;  // a copy: its band starts are shared, not copied
          },
          "The loader's SamplerOptions, for plan_epoch's band_groups: the bands and bands per group of an order "
          "shuffled by band groups (stoker/data/sampler.h; none: every row shuffled alike)")
      .def(
          "redo_on_cpu", [](LoaderHandle& h, PyBatch& batch, int slot) { h.loader().redo_on_cpu(*batch.batch, slot); },
          "Makes the batch's GPU sample at `slot` on the CPU, into its host buffer (nvJPEG refused or failed on it)",
          py::arg("batch"), py::arg("slot"))
      .def("start_epoch", &LoaderHandle::start_epoch, py::arg("epoch"), py::arg("first_batch") = 0,
           py::arg("order") = py::none(), py::arg("batch_sizes") = py::none(), py::arg("on_order") = py::none())
      .def_property_readonly("batch_capacity", [](LoaderHandle& h) { return h.loader().batch_capacity(); })
      .def("reseed", &LoaderHandle::reseed,
           "Epochs started from now on draw with `seed`, counting from `seed_epoch` (Loader::reseed); what ran ahead "
           "with other draws is made again",
           py::arg("seed"), py::arg("seed_epoch"))
      .def_property_readonly("seed", [](LoaderHandle& h) { return h.loader().seed(); })
      .def_property_readonly("seed_epoch", [](LoaderHandle& h) { return h.loader().seed_epoch(); })
      .def(
          "draws_epoch", [](LoaderHandle& h, int64_t epoch) { return h.loader().draws_epoch(epoch); },
          "The epoch whose draws `epoch` takes under the seed now (Loader::reseed)", py::arg("epoch"))
      .def("next", &LoaderHandle::next, py::arg("timeout") = 0.0)
      .def("close", &LoaderHandle::close)
      .def_static("take_all", &LoaderHandle::take_all,
                  "At exit: every loader's calls raise from now on; its workers run until close_all()")
      .def_static("close_all", &LoaderHandle::close_all,
                  "Closes every loader, and waits for those let go of inside a worker's Python call (at exit)")
      .def("__len__", [](LoaderHandle& h) { return h.loader().batches_per_epoch(); })
      .def_property_readonly("samples_per_epoch", [](LoaderHandle& h) { return h.loader().samples_per_epoch(); })
      .def_property_readonly("transforms",
                             [](LoaderHandle& h) { return fs_str(h.loader().options().transform.describe()); })
      .def_property_readonly("normalize",
                             [](LoaderHandle& h) -> py::object {
                               const data::TransformSpec& t = h.loader().options().transform;
                               if (!t.normalize.enabled()) return py::none();
                               const size_t c = static_cast<size_t>(t.channels);
                               const data::NormalizeSpec& n = t.normalize;
                               return py::make_tuple(std::vector<float>(n.mean.begin(), n.mean.begin() + c),
                                                     std::vector<float>(n.std.begin(), n.std.begin() + c));
                             })
      .def_property_readonly("resample",
                             [](LoaderHandle& h) { return data::to_string(h.loader().options().transform.resample); })
      .def_property_readonly("out_size",
                             [](LoaderHandle& h) {
                               const data::TransformSpec& t = h.loader().options().transform;
                               return py::make_tuple(t.out_width, t.out_height);
                             })
      .def_property_readonly("dtype",
                             [](LoaderHandle& h) { return data::to_string(h.loader().options().transform.dtype); })
      .def_property(
          "workers", [](LoaderHandle& h) { return h.loader().workers(); },
          [](LoaderHandle& h, int workers) { h.loader().set_workers(workers); })
      .def_property(
          "prefetch", [](LoaderHandle& h) { return h.loader().prefetch(); },
          [](LoaderHandle& h, int prefetch) { h.loader().set_prefetch(prefetch); })
      .def_property(
          "gpu_share", [](LoaderHandle& h) { return h.loader().gpu_share(); },
          [](LoaderHandle& h, double share) { h.loader().set_gpu_share(share); },
          "gpu_handoff='hardware': the share of the engine's JPEGs the workers leave for the GPU, in [0, 1]")
      .def("epoch_stats",
           [](LoaderHandle& h) {
             const data::EpochStats s = h.loader().epoch_stats();
             py::list bad;
             for (const data::BadSample& b : s.bad_samples) {
               bad.append(py::make_tuple(b.index, fs_str(b.name), fs_str(b.reason)));
             }
             return py::dict(py::arg("epoch") = s.epoch, py::arg("samples") = s.samples, py::arg("bad") = s.bad,
                             py::arg("bad_samples") = bad, py::arg("short_clips") = s.short_clips);
           })
      .def("stage_times", [](LoaderHandle& h) {
        const data::StageTimes t = h.loader().stage_times();
        return py::dict(py::arg("read") = t.read, py::arg("decode") = t.decode, py::arg("transform") = t.transform,
                        py::arg("wait_free_buffer") = t.wait_free_buffer, py::arg("consumer_wait") = t.consumer_wait,
                        py::arg("samples") = t.samples, py::arg("gpu_samples") = t.gpu_samples);
      });
}

}  // namespace stoker::python
