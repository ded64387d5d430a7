// stoker/data/source.h — where samples come from: an indexable set of (bytes, targets).
//
// A Source knows how many samples there are, how to fetch sample i's encoded bytes (or raw
// pixels, for IDX), its name for messages, and its targets. Sources are opened once, up
// front, and fail then with a DataError/UsageError naming the path; per-sample failures later
// (file vanished, unreadable) are Status values so the pipeline can substitute the sample.
//
// Thread safety: every const member may be called concurrently from any number of workers.
// Ownership: a Source owns its index (paths, labels) and any memory maps; SampleData returned
// by read() points either into the caller-owned buffer or into the Source's map, valid while
// the Source lives and until the next read() into the same SampleData.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/output_clash.h"
#include "stoker/data/image.h"
#include "stoker/data/path_list.h"
#include "stoker/data/split.h"
#include "stoker/data/target_geometry.h"

namespace stoker::data {

enum class TargetKind {
  kClass,       // one int64 class id per sample
  kRegression,  // target_dim() float32 values per sample
};

// One sample as read from storage.
struct SampleData {
  std::span<const uint8_t> bytes;  // encoded image, or raw pixels when `raw`
  std::vector<uint8_t> storage;    // owned buffer `bytes` may point into (grow-only)
  bool raw = false;                // bytes are raw_height x raw_width x raw_channels uint8
  int raw_width = 0;
  int raw_height = 0;
  int raw_channels = 0;
  // How raw pixels are resampled (image.h): kPremultiplied with raw_channels 4 (RGBA), kNearest
  // with 3. Set by a source for each read; the loader resets it to kAsStored before each.
  PilResample pil_resample = PilResample::kAsStored;
  // > 0: bytes are a feature vector of this many float32 values (host byte order), not pixels,
  // at any address (a row read in place from an .npz member starts at any byte): load them
  // with memcpy, not through a float pointer.
  int feature_count = 0;
  // Keypoints and boxes of this sample, in its image's pixels (target_geometry.h), for sources
  // whose samples have them (Source::has_geometry): the loader moves them with the image.
  GeometryTargets geometry;
  // What the source attaches to this read of the sample, handed to the consumer in the
  // sample's slot of its batch (Batch::extra). Null for sources that attach nothing. A source
  // whose columns() has extra columns attaches Source::extra_of(index): the sample's cells of
  // them; a Python Dataset's source its item's targets (python/src/dataset_source.h). The
  // loader drops it on any thread, without locks held.
  std::shared_ptr<const void> extra;
  // The extra of the sample this read replaces in its batch's slot, handed to read() so that a
  // source may let go of it where that costs least (a Python Dataset's source: under the GIL its
  // read holds, rather than taking the GIL again for it); the loader lets go of what is left.
  std::shared_ptr<const void> retired;
};

// What every cell of a column reads as: kInteger when each is an integer (int64), kNumber
// when each is a number (float32), else kText.
// kArray: every cell a JSON array ("[[40.5, 61], [52, 60.5]]": keypoints, boxes), passed
// through as its text; unlike kText it does not make the list's header name its targets.
enum class ColumnKind { kInteger, kNumber, kText, kArray };

// A column a source passes through to the consumer untouched (a CSV list's captions, ids; a
// WebDataset shard's .txt and .json members).
struct ExtraColumn {
  std::string name;  // the header's name, else "column 3" (counted from 1)
  ColumnKind kind = ColumnKind::kText;
  // kText: where the column first holds a cell that is not a number ("'cat' at list.csv:2"),
  // for messages; "" for the others.
  std::string text_at;
};

// The columns of a source read from a table of samples (a CSV file list, WebDataset shards):
// which holds the paths (or images), which the targets and which pass through. The rules:
// open_file_list, open_web_dataset.
struct SourceColumns {
  std::string path;                  // the column of the samples' paths: its name, as ExtraColumn's
  std::vector<std::string> targets;  // the target columns' names, in order; empty: the list has none
  std::vector<ExtraColumn> extra;    // the columns passed through, in order
  bool header = false;               // the names are a header line's (else "column N")
  // How such a source gets targets, for a command that needs them and finds none
  // (columns_left_unread); "" for a CSV list: a header line naming the target column.
  std::string no_target_hint;
};
// Which frames of a clip a read takes (Source::read_clip): called once with the number of
// frames the clip holds (>= 1), it returns the frame numbers to read, in order, each in
// [0, count) (repeats allowed). The span stays valid until the read returns.
using FramePicker = std::function<std::span<const int>(int count)>;

// Integer targets read from the data (CSV, NumPy) are taken as class ids up to this many
// classes when the task is left to the data; more most likely means quantities stored as
// integers. An explicit classification task allows up to kMaxClasses (face identities).
constexpr int64_t kUsualMaxClasses = 100'000;
constexpr int64_t kMaxClasses = 10'000'000;

// Per-feature sums over float32 feature rows, each shifted by the first row's value (so the
// sums stay small: no cancellation), in double precision: what Standardize's fit needs,
// gathered in one pass (fit_standardize turns them into mean and std). Not thread-safe.
struct FeatureSums {
  explicit FeatureSums(int features = 0);
  void add(const float* row);  // one row of shift.size() values, in order
  // Adds the sums of rows that follow these (another shard of the same features), moved to
  // this shift; the result is what add() over both sets of rows gives, up to rounding.
  void merge(const FeatureSums& later);
  size_t count = 0;
  std::vector<double> shift, sum, sum_sq;
};

class Source {
 public:
  virtual ~Source() = default;

  // The samples, ids 0 to size() - 1. Fixed, except a source whose owner changes it between
  // epochs (a Dataset object's, read at each pass's start): the Loader plans each epoch on
  // the size it has when the epoch starts.
  virtual size_t size() const = 0;
  // Human name of sample i for messages and bad-sample lists (a path, or "file[idx]").
  virtual std::string name(size_t index) const = 0;
  // Sample i as a message line shows it: name(i), except a clip named by all its frames (a CSV
  // list's "a.jpg|b.jpg|...", a video's thousands of paths), shown by its first and last frame
  // and their count, "a.jpg|...|z.jpg (300 frames)". Bad-sample lists and exclude lists keep
  // name(i). Default: name(i).
  virtual std::string shown_name(size_t index) const { return name(index); }
  // Short description, e.g. "image folder /data/train: 1,281,167 images in 1,000 classes".
  virtual std::string describe() const = 0;

  virtual TargetKind target_kind() const = 0;
  // Number of float targets per sample (1 for kClass).
  virtual int target_dim() const { return 1; }
  // Class names indexed by class id (empty for regression).
  virtual const std::vector<std::string>& class_names() const = 0;
  // kClass: class id of sample i. kRegression: undefined.
  virtual int64_t label(size_t index) const = 0;
  // kRegression: writes target_dim() floats. kClass: writes the label as one float.
  virtual void targets(size_t index, float* out) const = 0;

  // Fetches sample i. A failure reason is short and lower case ("file not found").
  // Status::past_end() says the source has no sample i, nor any after it, this epoch (a
  // stream whose length is known once it ends): the Loader ends the epoch at the first such
  // index (loader.h, "Epoch ends").
  virtual Status read(size_t index, SampleData* out) const = 0;

  // Reads of a run of samples at once: where reads_runs(), a worker that claims a run of
  // several samples (cheap_reads) reads them all with one read_run call before it decodes and
  // writes them one by one. read_run reads samples indices[0], [1], ... into outs[k] and
  // statuses[k] as read() does, each outs[k].retired let go of as read() lets it go, and
  // returns how many it read, a prefix of them (the rest are read with read() then). Any
  // thread, as read(); must not throw. Default: false, and read() of each in turn.
  virtual bool reads_runs() const { return false; }
  virtual size_t read_run(std::span<const uint64_t> indices, std::span<SampleData> outs,
                          std::span<Status> statuses) const;

  // Width/height/channels every sample has, if the source guarantees one (IDX); else 0s.
  virtual void fixed_shape(int* width, int* height, int* channels) const { *width = *height = *channels = 0; }
  // Whether a sample costs little to read (feature vectors, raw images of a fixed shape): the
  // loader's workers then claim runs of them at once. Default: feature_count() > 0 or a fixed shape.
  virtual bool cheap_reads() const {
    int width = 0, height = 0, channels = 0;
    fixed_shape(&width, &height, &channels);
    return feature_count() > 0 || width > 0;
  }
  // Values per sample when the source holds feature vectors (.npz/.npy/.h5/numeric CSV), else 0.
  virtual int feature_count() const { return 0; }
  // The shape of one sample's feature values, whose product is feature_count(): (T, D) for
  // the rows of an (N, T, D) array, as torch batches them. Default: (feature_count()), or ()
  // for a source of images.
  virtual std::vector<int64_t> feature_shape() const {
    return feature_count() > 0 ? std::vector<int64_t>{feature_count()} : std::vector<int64_t>{};
  }
  // The transform chain that suits this data when none is given, in parse_transforms'
  // notation; "" = none in particular (encoded images: the caller's crop/resize default).
  // IDX: none, Grayscale, Fashion-MNIST's mean and std; feature vectors: Standardize; NumPy
  // uint8 images: none (Grayscale for one channel).
  virtual std::string default_transforms() const { return ""; }
  // True when class ids were read as numbers from the data (CSV lists and tables, NumPy
  // arrays), so they may as well be quantities; false for folder names and IDX labels.
  virtual bool targets_are_numbers() const { return false; }
  // kClass with ids read as numbers: throws DataError (naming the data, the value and what
  // to do) when an id is negative or the ids would make more than `max_classes` classes, as
  // regression targets stored as integers do. The trainer calls it once the task is known
  // (--task regression reads such ids as numbers instead). Default: nothing to check.
  virtual void check_class_ids(int64_t /*max_classes*/) const {}
  // True when samples carry keypoints or boxes (SampleData::geometry) that must follow the
  // transforms: the loader refuses a chain they cannot follow and reads every sample afresh
  // (no decoded cache). Default: false.
  virtual bool has_geometry() const { return false; }
  // Called once on each worker thread, with its id (0, 1, ...), before it reads a sample
  // (a Python Dataset runs the script's worker_init_fn there). Default: nothing.
  virtual void on_worker_start(int /*worker_id*/) const {}
  // A hint that sample i will be read soon: in-memory sources start fetching it into the
  // cache (workers call it a few samples ahead within a claimed run). Default: nothing.
  virtual void prefetch(size_t /*index*/) const {}
  // A hint of the order the next reads come in: kInOrder for one pass over every sample
  // (the opening checks, fit_standardize, an unshuffled epoch: Loader::start_epoch), kShuffled
  // for shuffled epochs (the state a source starts in). Sources
  // that read a memory-mapped file pass it to the kernel's readahead, which matters once the
  // file is larger than RAM. Default: nothing.
  enum class ReadOrder { kInOrder, kShuffled };
  virtual void expect_reads(ReadOrder /*order*/) const {}
  // How many consecutive samples are read at the cost of one (the rows of one chunk of a
  // chunked HDF5 dataset, all decompressed to read any of them): a sample of the rows
  // (Standardize's fit) takes whole runs of them. Default: 1.
  virtual size_t rows_read_together() const { return 1; }
  // The bands of consecutive samples decoded together, when the source can keep decoded bands
  // for every thread (keep_bands): a compressed chunked HDF5 dataset's bands of chunks, the
  // bands of each file of a pattern in turn, a held-out part's rows of each band. band_starts()
  // gives where each begins (0 first, ascending; the last ends at size()), band_bytes() the
  // most bytes one takes decoded. None (the default: mapped files, views that pick rows out of
  // order, sources of other kinds): band_bytes() 0, band_starts() empty, and the loader
  // shuffles every row alike.
  virtual size_t band_bytes() const { return 0; }
  virtual std::vector<uint64_t> band_starts() const { return {}; }
  // Keeps up to `bands` decoded bands (band_bytes() each at most) for all threads while the
  // reads are shuffled, so that an epoch shuffled by band groups (sampler.h) decodes each band
  // once; 0 (the default): none. The bands of every file of a pattern share that room. Thread-safe.
  // Default: nothing.
  virtual void keep_bands(size_t /*bands*/) const {}
  // The feature sums of every sample, in order, when the source gathered them while it
  // checked its values on opening (arrays of float features; shards of one dataset combine
  // their files' sums), so that fit_standardize need not read a file larger than RAM a second
  // time. Default: nullptr (fit_standardize reads).
  virtual const FeatureSums* feature_sums() const { return nullptr; }
  // The file, and the dataset in it, whose rows in order are this source's samples one to one
  // (an HDF5 dataset), for caches of what is computed from those rows (Standardize's fit
  // cache: fit_cache.h). Default: nullopt, as for views of a source (a split, a subset), whose
  // samples are not the file's rows.
  struct RowsOrigin {
    std::string path;     // absolute
    std::string dataset;  // its name in the file
  };
  virtual std::optional<RowsOrigin> rows_origin() const { return std::nullopt; }
  // The columns of a table of samples (a CSV file list, WebDataset shards), or nullptr for
  // other sources. A source without target columns (columns()->targets empty) is a kClass source with no class names
  // whose labels are all 0: what it holds for each sample is its extra columns.
  virtual const SourceColumns* columns() const { return nullptr; }
  // Sample i's cells of columns()->extra: a pointer to columns()->extra.size() string_views,
  // in column order, as raw bytes (a caption need not be UTF-8), valid while the returned
  // pointer (which shares ownership of the cells) is held. read() attaches the same as
  // SampleData::extra; the loader asks for it for a sample it takes from its decoded cache,
  // which it does not read. Null for sources without extra columns (the default). Any thread.
  virtual std::shared_ptr<const void> extra_of(size_t /*index*/) const { return nullptr; }
  // Whether the source makes something of each whole batch (finish_batch). Default: false.
  virtual bool finishes_batches() const { return false; }
  // What the source makes of a whole batch (a Python Dataset's images stacked into one tensor),
  // which Batch::finished() gives: called, where finishes_batches(), on the worker thread that
  // wrote the batch's last sample, with no loader lock held, before the batch is handed out, with
  // each slot's extra (SampleData::extra, slot order; null for a slot past an epoch's end). Null:
  // nothing (the consumer does without it). Must not throw.
  virtual std::shared_ptr<const void> finish_batch(std::span<const std::shared_ptr<const void>> /*extras*/) const {
    return nullptr;
  }

  // Clips (stoker/data/clip.h). True when each sample is a clip: an ordered list of frames,
  // read with read_clip (a loader without ClipOptions refuses such a source). Default: false.
  virtual bool holds_clips() const { return false; }
  // Reads frames of sample `index`: calls pick(count) once with the frames the sample holds and
  // reads the frames it returns into (*frames)[0], [1], ... (resized to as many; grow-only
  // storage as read()'s). What the source attaches to the sample is in (*frames)[0].extra. A
  // failure reason names the frame (frame_name). Default: the sample as a clip of one frame
  // (read()).
  virtual Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const;
  // Frame `frame` of sample `index` for messages, which put the word "frame" before it: its
  // path, or "3 of Clips[12]". Default: name(index).
  virtual std::string frame_name(size_t index, int /*frame*/) const { return name(index); }
};

// Sample i's cells of its source's extra columns, from an `extra` that Source::extra_of (or
// SampleData::extra, or Batch::extra of such a source's batch) gave; nullptr for null.
inline const std::string_view* extra_cells(const std::shared_ptr<const void>& extra) {
  return static_cast<const std::string_view*>(extra.get());
}

// The largest sample file read_whole_file reads: more than an image of DecodeOptions'
// default max_pixels holds at 8 bytes a pixel (16-bit RGBA, uncompressed), with room for
// metadata. A larger file is refused before it is read (a small image padded to gigabytes).
inline constexpr uint64_t kMaxSampleFileBytes = uint64_t{1} << 30;

// Reads the file `path` into out->storage (grow-only) and points out->bytes at it: the
// per-sample I/O of the sources of files. Fails with a short reason ("file not found",
// "permission denied", "is a directory", "read error: ...", a file over kMaxSampleFileBytes).
Status read_whole_file(const std::string& path, SampleData* out);
// read_whole_file of a file already open: the regular file `fd` refers to, from its first byte
// (pread: the descriptor's offset is neither used nor moved), with the same checks and reasons.
// The descriptor stays open, the caller's to close. Safe from any thread.
Status read_open_file(int fd, SampleData* out);

// `source.feature_sums()` when they cover every sample and every feature of it, else nullptr
// (a source that gathered none, or a view of fewer rows than its sums hold).
const FeatureSums* complete_feature_sums(const Source& source);

// root/<class>/<image>, classes sorted by name -> ids 0..n-1 (torchvision ImageFolder).
// Files are listed recursively below each class folder; names ending in kImageExtensions (any
// case) are samples, other files are counted in describe() and skipped. Throws DataError
// for a missing/unreadable/empty root or no images, naming the path.
std::unique_ptr<Source> open_image_folder(const std::string& root);

// `source` with keypoints and boxes for every sample, held in memory: `points` is
// size() x points_per_sample x (x, y, visible), `boxes` size() x boxes_per_sample x (x1, y1,
// x2, y2, valid), in each image's pixels (target_geometry.h). Throws UsageError when a
// length does not match.
std::shared_ptr<const Source> with_geometry(std::shared_ptr<const Source> source, std::vector<float> points,
                                            int points_per_sample, std::vector<float> boxes, int boxes_per_sample);
// Clips in folders: root/<class>/<clip>/<frame>, classes sorted by name -> ids 0..n-1 (as
// open_image_folder's), each folder right below a class folder one sample (a clip) and its
// frames the kImageExtensions files (any case) directly in it. Clips and frames are in name
// order with runs of digits compared as numbers (frame_2 before frame_10). Other files, and
// folders inside a clip, are counted in describe() and skipped. Throws DataError naming the
// path for a missing/unreadable/empty root, an image in a class folder outside any clip
// folder, a clip folder without frames, or no clips.
std::unique_ptr<Source> open_clip_folder(const std::string& root);

// Image files listed in memory, with their class ids: what torchvision's ImageFolder and
// DatasetFolder objects hold (`samples`, `classes`). `description` names the list in
// describe() ("ImageFolder object of /data/train"). Throws UsageError when the lists differ in
// length, are empty, or an id is outside [0, class_names.size()).
std::unique_ptr<Source> open_image_list(std::string description, PathList paths, std::vector<int64_t> labels,
                                        std::vector<std::string> class_names);
std::unique_ptr<Source> open_image_list(std::string description, const std::vector<std::string>& paths,
                                        std::vector<int64_t> labels, std::vector<std::string> class_names);

// Images a caller holds in memory as one uint8 array (a Python Dataset's: torchvision's
// CIFAR10, MNIST, SVHN ...), with a class id per image.
struct MemoryImages {
  std::string origin;               // describe() starts with it: "CIFAR10 object (CIFAR10.data, CIFAR10.targets)"
  std::string item;                 // sample names are "<item>[row]": "CIFAR10.data[4]"
  std::span<const uint8_t> pixels;  // count images in C order, (H, W, C) each, or (C, H, W) where channels_first
  size_t count = 0;
  int height = 0, width = 0, channels = 0;  // channels 1 or 3
  bool channels_first = false;
  std::vector<int64_t> labels;  // one per image of the array, each in [0, class_names.size())
  std::vector<std::string> class_names;
  std::optional<std::vector<size_t>> rows;  // the samples, as rows of the array (a Subset's indices); all when unset
  // Keeps `pixels` alive while the source lives, and their size unchanged: channels-last images are
  // read where they lie, never copied (a read sees their values as they are then); channels-first
  // ones are transposed into the source once, and `owner` is let go.
  std::shared_ptr<const void> owner;
};

// A source over `images`. Throws UsageError naming `images.origin` when the sizes disagree, there
// are no samples, a row is past the array's end, or a label is outside the class names.
std::unique_ptr<Source> open_memory_images(MemoryImages images);

// The samples of `parts` one after another, the parts shared (a Python ConcatDataset's, each
// part's source held by whoever made it too); `what` names the whole ("ConcatDataset") in
// describe() and in the DataError naming the first part that holds another kind of sample
// (targets, image shape, class names: concat_source.h). Thread safety: as the parts'.
std::unique_ptr<Source> concat_parts(std::vector<std::shared_ptr<const Source>> parts, const std::string& what);

// The image files the sources read and decode themselves, by their name's extension (any
// case): torchvision's IMG_EXTENSIONS, what its ImageFolder lists. What a file holds is told
// from its bytes, not from this (a WebP named .jpg decodes as WebP).
inline constexpr std::array<std::string_view, 9> kImageExtensions = {"jpg", "jpeg", "png",  "ppm", "bmp",
                                                                     "pgm", "tif",  "tiff", "webp"};

// Whether the sources read and decode the file at `path` themselves: its name ends in one of
// kImageExtensions. An ImageFolder object's other files are opened by its loader.
bool decodes_image_file(std::string_view path);

// `list`'s paths (a source open_image_list or open_image_folder made; shared, not copied) with
// other class ids and class names: an ImageFolder object's samples relabelled. `list` is left
// as it is, and may be let go before the new source. Throws UsageError when `list` is no such
// source, the ids are not one per path, or an id is outside [0, class_names.size()).
std::unique_ptr<Source> relabel_image_list(const Source& list, std::vector<int64_t> labels,
                                           std::vector<std::string> class_names);

// A CSV file list: one sample per row, the path of its image file first, then its targets
// and any other columns ("path,label,caption"). Paths are relative to `root` (default: the
// CSV's directory). A path cell may list a clip's frames in order, separated by '|'
// ("v1/0001.jpg|v1/0002.jpg|v1/0003.jpg", each relative to `root` as a single path is): a
// list with such a cell holds clips (holds_clips; rows of one path are clips of one frame),
// named by their cell, and read() reads a clip's first frame. Cells are separated by commas,
// or by tabs in a .tsv (cell_separator in formats.h; open_clip's CsvDataset(sep="\t") lists).
// Fields may be double-quoted ("a, b" and "" for a quote; a separator inside quotes is part of
// the field); a row is one line (a quoted field cannot hold a line break); surrounding spaces
// are trimmed; blank lines are skipped.
//   - Header: the first line is a header when none of its fields is a number and its first
//     field does not look like a path (it has no '/' or '\' and no file extension such as .jpg).
//     So a list whose first path has neither, and whose first row has no number, needs a header.
//   - Kinds: a column whose cells are all integers holds integers, all numbers: numbers, else
//     text ("42" in a column of captions is text). A column of numbers with an empty cell is a
//     DataError naming file, line and column; an empty cell of text is "".
//   - Targets: with a header, the columns named label, labels, target, targets, y or class (any
//     case; the names a feature table's target goes by), and a header that names none over
//     columns that all hold numbers makes them all targets ("path,yaw,pitch,roll"); without a
//     header, every column of numbers after the path. The other columns pass through
//     (columns()->extra, SampleData::extra): "path,caption,id" has no target column at all.
//   - One integer target per row -> class ids (checked by check_class_ids once the task is
//     known, so ages or prices stored as integers can still be read as quantities); otherwise
//     (floats, or several targets) -> regression.
// The rules that decide the header and each column's role: src/data/source/list_columns.h.
// Throws DataError naming the file and line for a first row of one cell (naming the other
// separator when the line holds it: a comma-separated .tsv), a row with fewer or more cells
// than the first (a missing cell; an unquoted comma, or tab in a .tsv), a quote left open at
// the end of a line, a target that is not a finite number, and a list without rows.
std::unique_ptr<Source> open_file_list(const std::string& csv_path, const std::string& root = "");

// For a command that reads only the samples' paths and targets (`command`: "stoker train"):
// throws UsageError when `source` is a table of samples (columns()) without a target column,
// naming `path`, its columns and how to mark one; else returns the line that says which of its
// columns the command leaves unread ("ignoring columns caption, id of list.csv: stoker train
// uses path and label"), or "" for none (and for sources without columns()).
std::string columns_left_unread(const Source& source, const std::string& path, const std::string& command);

// What a command reads when it opens `data` (named `what` in messages: "--data"): the path
// itself and the file open_source() takes beside it (a features .npy's targets: y.npy beside
// x.npy), for check_output_apart (stoker/core/output_clash.h). Looks at the disk; never throws.
std::vector<CommandInput> data_inputs(const std::string& data, const std::string& what);

// The float targets named by `given` (flip_negate: a CSV list's target column names, "yaw",
// or indices, "0"), as indices below source.target_dim(). Throws UsageError naming `option`,
// the value and the targets there are, for a name or index the source does not have and for a
// source of class ids.
std::vector<int> target_indices(const Source& source, const std::vector<std::string>& given, std::string_view option);
// The same checks for targets given as indices (LoaderOptions' flip_negate): each below
// source.target_dim(), of a source of float targets; throws UsageError as target_indices does.
void check_target_indices(const Source& source, const std::vector<int>& indices, std::string_view option);

// A WebDataset shard: an uncompressed tar file (ustar, GNU or pax) whose consecutive members
// sharing a key are one sample ("000123.jpg", "000123.cls", "000123.txt"). The sample's image
// is its member of an image extension (kImageExtensions, .pbm, .pnm), read in place from the file's memory map; its
// class id the integer text of its .cls member (numbered classes, as CSV lists have: shards combine), or none when no
// sample of the shard has one (columns()->targets empty, labels 0). Its text members (last suffix txt, text,
// transcript, json or jsn: "txt", "caption.txt") are columns()->extra, named by their extension in name order, read in
// place; a sample without one that other samples of the shard have is a bad sample (read() fails naming the member).
// Samples without an image (captions alone) are skipped and counted in describe(); other
// members are not read. Several shards are a pattern: 'shards/train-*.tar'. Throws DataError
// naming the file for a damaged or truncated archive, an image without a .cls member in a
// shard whose other images have one, a .cls that is not an integer, or a shard without images.
std::unique_ptr<Source> open_web_dataset(const std::string& path);

// IDX (MNIST/Fashion-MNIST): an idx3-ubyte image file and an idx1-ubyte label file, plain
// (memory-mapped) or .gz (inflated into memory once). Throws DataError for bad magic,
// mismatched counts or truncated files, naming the file.
std::unique_ptr<Source> open_idx(const std::string& images_path, const std::string& labels_path);

// NumPy arrays: an .npz archive (np.savez / np.savez_compressed) or an .npy file of features
// whose targets lie in a sibling .npy (x.npy -> y.npy, X_train.npy -> y_train.npy,
// train_features.npy -> train_labels.npy or train_targets.npy).
//   - The features of an .npy and of a stored (np.savez) member are read in place from the
//     file's memory map, row by row as samples are read (converted to float32 unless they are
//     float32 already), so they need not fit in RAM; compressed members and Fortran-ordered
//     arrays are converted into memory once. Targets are always held in memory. The file
//     must not be rewritten while the source lives (as with np.load(mmap_mode='r')).
//   - In an .npz, the features are the array named x, X, features, data, inputs or images and
//     the targets y, Y, labels, targets, label or target, with the suffixes split_suffixes(split)
//     gives (split.h), tried in order: kTrain prefers x_train / y_train over plain x / y; kVal
//     reads x_val, x_valid or x_validation; kTest x_test (Keras's mnist.npz layout); kHeldOut
//     the validation arrays, else the test ones; kValidationFile those, else plain x / y. A lone
//     .npy is kTrain's or kValidationFile's; other splits throw DataError (one split there).
//   - uint8 arrays of shape (N, H, W), (N, H, W, C) or (N, C, H, W) with C 1 or 3 are images
//     (raw pixels, like IDX); any other bool/int/float array is N feature vectors (dimensions
//     after the first flattened), kept as float32.
//   - Integer or bool targets of shape (N,) are class ids 0..K-1 (checked by check_class_ids
//     once the task is known); float targets of shape (N,) or (N, T) are regression targets.
// Throws DataError naming the file and the array for unreadable files, missing arrays, row
// counts that differ, non-finite values and unsupported dtypes.
std::unique_ptr<Source> open_arrays(const std::string& path, Split split = Split::kTrain);

// An HDF5 file (.h5, .hdf5; h5py's f.create_dataset("x", data=X)) read like an .npz: the
// datasets named as open_arrays says for `split`, at the root or, when the root has none, as
// plain x / y inside a group named by a suffix of the split without its '_' (train; val, valid
// or validation; test).
// "feats.h5:emb/resnet" looks in the group emb/resnet instead of the root. The rules for
// images, class ids and regression targets are the .npz's. Integer datasets of 1..8 bytes and
// float datasets of 2, 4 or 8 bytes (float16 read as float32), either byte order, contiguous
// or chunked (gzip/shuffle filters). Contiguous feature datasets (h5py's default without
// chunks or compression) are read in place from the file's map like an .npy's; chunked ones,
// and all targets, are read whole into memory. Throws DataError naming the
// file and the dataset for a file that is not HDF5, a group it lacks, missing datasets
// (listing what the group holds), bool/enum, string, compound or other dataset types, and
// what open_arrays refuses. When stoker was built without the HDF5 library, every call
// throws DataError saying so.
std::unique_ptr<Source> open_hdf5(const std::string& path, Split split = Split::kTrain);

// A torch.save file (.pt, .pth) of tensors: a dict named like an .npz's arrays
// (torch.save({"x": x, "y": y}, path), with the same split suffixes; a dict of TensorDatasets
// keyed "train", "val", "test" reads as x_train, y_train ...) or a (features, targets) tuple or
// list (kTrain or kValidationFile only). The rules for images, class ids and regression
// targets are the .npz's; the feature tensor is read in place from the file's map (torch
// stores tensors uncompressed), the targets into memory. Only the pickle torch.save writes for
// tensors and containers is read: nothing in the file is executed. Throws DataError naming the
// file and the tensor for a file in the pre-1.6 (non-zip) format, a lone tensor, missing
// tensors (listing those found), non-contiguous tensors ("save x.contiguous()"), dtypes other
// than bool/int/uint8/float16/32/64/bfloat16 (complex: "convert with x.float()") and what
// open_arrays refuses.
std::unique_ptr<Source> open_torch_file(const std::string& path, Split split = Split::kTrain);

// A CSV table of numbers (tabs between the cells of a .tsv, as open_file_list reads), one
// sample per row: the features and one target column, named label, target, y, class, labels or
// targets in an optional header line (any case), else the last column. Integer targets are
// class ids, others regression targets. Throws DataError naming file, line and column for a
// non-number, an empty cell or a short row.
std::unique_ptr<Source> open_feature_table(const std::string& csv_path);

// True for a CSV or TSV whose first data row is all numbers (a feature table, not a file list).
bool is_feature_table(const std::string& csv_path);

// Opens `path` by what it is: a directory with idx files (train-images-idx3-ubyte[.gz] ...),
// an .npz/.npy file (open_arrays), a .pt/.pth file (open_torch_file), an .h5/.hdf5 file or
// "file.h5:group" (open_hdf5), a .csv or .tsv feature table or file list, or an image folder.
// `split` is a user's word (split.h: "train", "val", "test" or "t10k"), checked by check_split
// first, so a split the data does not hold is a UsageError, never another split's samples. A
// `path` that names no existing path is a pattern: WebDataset's brace lists
// ("train-{000000..000146}.tar", "{a,b}") expanded in their order, each name required to
// exist, then * ? [ (glob(3)): the files it matches, in name order, each opened as above, are
// one source (the shards of one dataset;
// concat_source.h says what they must share); one that matches nothing throws DataError.
// Throws what the opener throws, and DataError naming the path and the free memory when data
// that is held in RAM (tables, compressed or chunked arrays) does not fit there.
std::unique_ptr<Source> open_source(const std::string& path, const std::string& split = "train");

// open_source for a loader of clips (ClipOptions::frames > 0): the same, except that a folder
// is read as clips (open_clip_folder), not images. Kinds that hold no clips open as
// open_source opens them (the Loader then refuses them, saying what they hold).
std::unique_ptr<Source> open_clip_source(const std::string& path, const std::string& split = "train");

// open_source for a Split: kTrain, kVal and kTest are checked as their names are;
// kHeldOut and kValidationFile, the trainer's readings (split.h), are not: kValidationFile of a
// folder is the folder, and kHeldOut is for data that has_held_out_split.
std::unique_ptr<Source> open_source(const std::string& path, Split split);

// The user splits `path` offers, by name, in split_declarations()' order: "train" always
// (whether its files are there is open_source's to say); "val" and "test" where the data holds
// them: IDX t10k-* files ("test"; IDX has no "val"), arrays, datasets or tensors named with
// the split's suffixes (x_val, x_test), an HDF5 group or a .pt dict entry named for it. An
// image folder, a CSV list or table, WebDataset shards and a lone .npy hold one split:
// "train". For a pattern, the splits every file it names offers. Reads what it must (an
// archive's directory, an HDF5 file's names, a .pt file's pickle), and may be called from any
// thread. Throws DataError for a path that does not exist, a pattern that matches nothing and
// what reading the file throws.
std::vector<std::string> splits_of(const std::string& path);

// Returns when `split` is "train" (at no cost: `path` is not read) or another name (or alias)
// splits_of lists for `path`. Else throws UsageError, one line naming the split, the path and
// its kind, the splits it offers and what to do: for a one-split path, give the validation (or
// test) data's own path, naming a sibling folder or file that holds it (data/train given,
// data/val there); for a word that names no split, the names stoker reads (and the path's,
// when it can be read). Throws what splits_of throws for a known name. Any thread.
void check_split(const std::string& path, const std::string& split);

// The transform chain `stoker train`, `stoker bench loader` and the Python DataLoader use when
// none is given: source.default_transforms() where the data has one (IDX, feature vectors,
// NumPy images), else "RandomResizedCrop(image_size), RandomHorizontalFlip(0.5), Normalize".
std::string default_transforms(const Source& source, int image_size = 224);

// `source` (a kClass source with targets_are_numbers()) seen as a regression: each integer
// target becomes one float target, everything else is passed through. For `--task
// regression` on integer targets (ages, counts). Throws UsageError for other sources.
std::shared_ptr<const Source> integers_as_regression(std::shared_ptr<const Source> source);

// `source`'s first `count` samples, each as `source` reads it: the rest of a pass a resumed loader
// continues on data that grew since (rows appended to an .h5 file), planned over the samples it
// began with. Standardize fits over them (the inner source's sums and fit cache are of all its
// rows). Thread safety: as `source`'s. Throws UsageError where `count` is 0 or more than it holds.
std::shared_ptr<const Source> first_rows(std::shared_ptr<const Source> source, size_t count);

// The class ids of a kClass source that none of its samples has (an empty class folder, an
// IDX label of 255 among ten classes), ascending; empty for other sources. Reads every label.
std::vector<int64_t> classes_without_samples(const Source& source);

// classes_without_samples() said in words, "1 of 3 classes has no sample ('cow')" (up to five
// names, then the last), with `sample` for "sample" ("training sample"); empty where every class
// has one. How `stoker train` and the Python package's loader warn of them.
std::string classes_without_samples_text(const Source& source, std::string_view sample = "sample");

// Leaving listed samples out (`--exclude-list`): stoker/data/exclude_list.h.

// A validation part held out of training data: views of one source, sharing its class names.
struct HeldOut {
  std::shared_ptr<const Source> train;
  std::shared_ptr<const Source> val;
};

// Holds out `fraction` (0 < fraction < 1) of `source`'s samples for validation, chosen by a
// shuffle seeded with `seed` (the same split on every machine and every resume): per class
// for class ids, so each class keeps its share (scikit-learn's train_test_split with
// stratify=y; a class of n samples gives round(fraction * n)), over all samples otherwise.
// Both parts keep the source's order. Throws UsageError for a fraction out of range or a
// part that would be empty.
HeldOut hold_out(std::shared_ptr<const Source> source, double fraction, uint64_t seed);

// True when `path` (or every file a pattern matches) offers a "val" or "test" split
// (splits_of): then open_source(path, Split::kHeldOut) opens its val split, else its test
// split. Throws what splits_of throws.
bool has_held_out_split(const std::string& path);

}  // namespace stoker::data
