// stoker/data/loader_keys.h — the input pipeline's options, declared once: one row per option
// with its name in each front end (stoker.DataLoader's keyword, the command line's flag,
// stoker train's YAML key), its type, the values it takes, its defaults and its help.
//
// Everything that takes these options reads this table: stoker train's config schema (range,
// help, aliases), its validation, the Loader's own checks, `stoker bench loader`'s flags, the
// Python extension (stoker._stoker.loader_keys(), which stoker.DataLoader validates with) and
// the diagnosis, whose advice names an option by its row (OptionChange) and is worded by each
// front end from the row's names: `--workers 4` on the command line, `num_workers=4` in Python.
//
// The names differ where the front ends always have: Python keeps torch's DataLoader keywords
// (num_workers, max_bad), the command line keeps its short flags (--workers). A front end that
// lacks an option has "" for its name (the trainer has no shuffle: it shuffles training data
// and not validation data). Defaults differ too: stoker.DataLoader's are torch's
// (batch_size=1, prefetch_factor=2), the command line's are LoaderDefaults.
//
// Thread safety: the table is immutable (built on first use); every function is pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace stoker::data {

enum class LoaderKey {
  kBatchSize,
  kWorkers,
  kPrefetchFactor,
  kPinMemory,
  kShuffle,
  kDropLast,
  kSeed,
  kOnError,
  kMaxBadFraction,
  kCache,           // stoker train: none or decoded
  kCacheMaxGb,      // stoker train: the decoded cache's budget; 0 = half the RAM
  kCacheDecodedGb,  // Python and bench loader: the decoded cache's budget; 0 = off
  kChannelsLast,
  kDecode,          // where JPEGs are decoded when batches go to a CUDA device: DecodeMode
  kChunkShuffleGb,  // a compressed chunked HDF5 dataset shuffled by band groups in this much memory
};

// kDecode's values, in the order of its row's words (stoker/data/gpu_decode.h decides what
// each means on a given machine).
enum class DecodeMode { kCpu, kGpu, kAuto };

enum class KeyType { kInt, kNumber, kBool, kWord };

// The front end that words an option: its name and its values' spelling.
enum class FrontEnd { kCommandLine, kPython };

// One of the words a kWord row takes, as each front end spells it (on_error: fail / raise).
struct KeyWord {
  std::string_view cli;
  std::string_view python;
};

// A value a row takes besides its range (workers: auto), as each front end writes it ("" = not
// there: Python's num_workers=0 is one thread, the command line refuses 0), and what it means.
struct KeyExtra {
  std::string_view cli;     // "auto"
  std::string_view python;  // a Python literal: "'auto'", "0", "None"
  std::string_view meaning;
};

// The command line's defaults (stoker train, stoker bench loader), typed, for the structs that
// hold the options (TrainConfig, LoaderOptions); the table's default texts are written from them.
struct LoaderDefaults {
  static constexpr int batch_size = 64;
  static constexpr int workers = 2;
  static constexpr int prefetch_factor = 4;
  static constexpr bool pin_memory = true;
  static constexpr uint64_t seed = 0;
  static constexpr double max_bad_fraction = 0.01;
  static constexpr double cache_max_gb = 0;
  static constexpr double cache_decoded_gb = 0;
  static constexpr double chunk_shuffle_gb = 0.5;
};

// The most batch buffers a Loader holds (LoaderOptions::prefetch, Loader::set_prefetch).
inline constexpr int kMaxBuffers = 1024;

struct LoaderKeySpec {
  LoaderKey key{};
  std::string_view python;  // stoker.DataLoader's keyword; "" = not one of its arguments
  std::string_view flag;    // the command line's flag, "--workers"; "" = none
  std::string_view yaml;    // stoker train's config key; "" = none
  // Other names the command line takes, snake_case ("prefetch" for --prefetch); the YAML key
  // (as --num-workers, --num_workers) is always taken as a flag too.
  std::span<const std::string_view> aliases;
  KeyType type{};
  uint64_t lo = 0, hi = 0;           // kInt: the whole numbers lo..hi
  double min = 0, max = 0;           // kNumber: [min, max], finite; max = infinity: no upper bound
  std::span<const KeyWord> words;    // kWord: the values, in the order messages list them
  std::span<const KeyExtra> extras;  // values besides the range
  std::string cli_default;           // as the command line writes it ("2", "true"); "" = none
  std::string_view python_default;   // a Python literal ("'auto'", "1"); "" = not an argument
  std::string help;                  // what the option does, in no front end's names
};

// Every row, in LoaderKey order.
std::span<const LoaderKeySpec> loader_keys();
const LoaderKeySpec& loader_key(LoaderKey key);
// The row with this Python keyword, or nullptr.
const LoaderKeySpec* find_python_key(std::string_view python);

// The values a row takes, in `front`'s spelling: "1..1024, or auto (tuned at run time from
// measured throughput)", "in [0, 1]", "none or decoded", "'substitute' or 'raise'"; "" for a
// bool or a number without an upper bound (its help says what its values mean).
std::string values_text(const LoaderKeySpec& row, FrontEnd front);
// The help with the values: "Loader worker threads, 1..1024, or auto (tuned ...)".
std::string help_text(const LoaderKeySpec& row, FrontEnd front);

// "" when `value` is in the row's range, else one line naming `name` (the caller's name for
// the option: a flag, a key, a member): "workers must be between 1 and 1024 (got 0)",
// "max_bad_fraction must be in [0, 1] (got 1.5)", "cache_max_gb must be >= 0 (got -1)".
// NaN is in no range. Extras (auto) are the caller's to handle before.
std::string range_message(LoaderKey key, int64_t value, std::string_view name);
std::string range_message(LoaderKey key, double value, std::string_view name);
// "" when `word` is one of a kWord row's, else "--on-error must be one of substitute, fail
// (got 'ignore')".
std::string word_message(LoaderKey key, std::string_view word, FrontEnd front, std::string_view name);

// Where `workers auto` starts on `cores` CPUs: half of them, at least 1 and at most 4 (the
// tuner then moves it from the measured waits).
int auto_workers(int cores);

// The batch buffers for PyTorch's per-worker prefetch_factor: prefetch_factor x workers, at
// least 2 (one being filled while the consumer holds one) and at most kMaxBuffers.
int buffers_in_flight(int prefetch_factor, int workers);

// The batches a Python script may keep beyond those in flight (LoaderOptions::
// buffers_for_consumer): torch's prefetch_factor does not count what the script holds, and a
// script that keeps the first batch it looked at holds one besides the one it is working on.
inline constexpr int kBuffersForConsumer = 2;

// Advice on one option, named by its row: the diagnosis makes it, each front end words it.
struct OptionChange {
  LoaderKey key{};
  std::string value;     // as the command line writes it: "4", "decoded"
  bool or_more = false;  // the value is a floor: "(or more)"
  // kCache: the RAM the cache takes, in GB. Python sets its cache by that budget
  // (cache_decoded_gb=N, rounded up), the command line by its word (--cache decoded).
  double gb = 0;
};

// "--workers 4", "--prefetch-factor 4 (or more)", "--cache decoded" (kCommandLine);
// "num_workers=4", "prefetch_factor=4 (or more)", "cache_decoded_gb=2" (kPython).
std::string option_words(const OptionChange& change, FrontEnd front);

}  // namespace stoker::data
