// The table of stoker/data/loader_keys.h and the words made from it.
#include "stoker/data/loader_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace stoker::data {

namespace {

using Defaults = LoaderDefaults;
constexpr double kNoMax = std::numeric_limits<double>::infinity();

constexpr std::array<std::string_view, 1> kPrefetchAliases = {"prefetch"};
constexpr std::array<std::string_view, 1> kMaxBadAliases = {"max_bad"};
constexpr std::array<KeyExtra, 2> kWorkerExtras = {{
    {"auto", "'auto'", "tuned at run time from measured throughput"},
    {"", "0", "one thread, as light as torch's main-process loading"},
}};
constexpr std::array<KeyExtra, 1> kSeedExtras = {{{"", "None", "a random seed, kept in state_dict()"}}};
constexpr std::array<KeyExtra, 1> kShuffleExtras = {{{"", "None", "False, as torch's DataLoader takes it"}}};
constexpr std::array<KeyWord, 2> kOnErrorWords = {{{"substitute", "substitute"}, {"fail", "raise"}}};
constexpr std::array<KeyWord, 2> kCacheWords = {{{"none", ""}, {"decoded", ""}}};
constexpr std::array<KeyWord, 3> kDecodeWords = {{{"cpu", "cpu"}, {"gpu", "gpu"}, {"auto", "auto"}}};  // DecodeMode

std::string bool_text(bool value) { return value ? "true" : "false"; }

std::vector<LoaderKeySpec> make_table() {
  std::vector<LoaderKeySpec> rows;
  const auto row = [&rows](LoaderKey key, KeyType type, std::string_view python, std::string_view flag,
                           std::string_view yaml) -> LoaderKeySpec& {
    LoaderKeySpec& r = rows.emplace_back();
    r.key = key;
    r.type = type;
    r.python = python;
    r.flag = flag;
    r.yaml = yaml;
    return r;
  };
  {
    LoaderKeySpec& r = row(LoaderKey::kBatchSize, KeyType::kInt, "batch_size", "--batch-size", "batch_size");
    r.lo = 1;
    r.hi = 65536;
    r.cli_default = std::to_string(Defaults::batch_size);
    r.python_default = "1";
    r.help = "Samples per batch";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kWorkers, KeyType::kInt, "num_workers", "--workers", "num_workers");
    r.lo = 1;
    r.hi = 1024;
    r.extras = kWorkerExtras;
    r.cli_default = std::to_string(Defaults::workers);
    r.python_default = "'auto'";
    r.help = "Loader worker threads";
  }
  {
    LoaderKeySpec& r =
        row(LoaderKey::kPrefetchFactor, KeyType::kInt, "prefetch_factor", "--prefetch-factor", "prefetch_factor");
    r.aliases = kPrefetchAliases;
    r.lo = 1;
    r.hi = 64;
    r.cli_default = std::to_string(Defaults::prefetch_factor);
    r.python_default = "2";
    r.help = fmt::format(
        "Batches in flight per worker, as in PyTorch (the loader holds prefetch_factor x num_workers, at most {})",
        kMaxBuffers);
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kPinMemory, KeyType::kBool, "pin_memory", "--pin-memory", "pin_memory");
    r.cli_default = bool_text(Defaults::pin_memory);
    r.python_default = "False";
    r.help = "Batches in pinned host memory (faster, asynchronous copies to the GPU)";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kShuffle, KeyType::kBool, "shuffle", "", "");
    r.extras = kShuffleExtras;
    r.python_default = "None";
    r.help = "A new order of the samples every epoch";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kDropLast, KeyType::kBool, "drop_last", "", "");
    r.python_default = "False";
    r.help = "Leave out each epoch's last batch when it is short";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kSeed, KeyType::kInt, "seed", "--seed", "seed");
    r.lo = 0;
    r.hi = std::numeric_limits<uint64_t>::max();
    r.extras = kSeedExtras;
    r.cli_default = std::to_string(Defaults::seed);
    r.python_default = "None";
    r.help = "Seed of the order and the augmentations of every epoch";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kOnError, KeyType::kWord, "on_error", "--on-error", "");
    r.words = kOnErrorWords;
    r.cli_default = "substitute";
    r.python_default = "'substitute'";
    r.help =
        "Bad samples (ones that cannot be read or decoded) are replaced by the next that loads and named in the "
        "epoch's statistics, or end the epoch with their path";
  }
  {
    LoaderKeySpec& r =
        row(LoaderKey::kMaxBadFraction, KeyType::kNumber, "max_bad", "--max-bad-fraction", "max_bad_fraction");
    r.aliases = kMaxBadAliases;
    r.min = 0;
    r.max = 1;
    r.cli_default = fmt::format("{}", Defaults::max_bad_fraction);
    r.python_default = r.cli_default;
    r.help = "Stop when more than this fraction of an epoch's samples fail to load";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kCache, KeyType::kWord, "", "--cache", "cache");
    r.words = kCacheWords;
    r.cli_default = "none";
    r.help = "Keep the training images decoded in RAM after the first epoch (later epochs skip read and decode)";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kCacheMaxGb, KeyType::kNumber, "", "--cache-max-gb", "cache_max_gb");
    r.min = 0;
    r.max = kNoMax;
    r.cli_default = fmt::format("{}", Defaults::cache_max_gb);
    r.help = "Budget of cache decoded in GB (images beyond it decode every epoch); 0 = half the RAM available at start";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kCacheDecodedGb, KeyType::kNumber, "cache_decoded_gb", "--cache-decoded-gb", "");
    r.min = 0;
    r.max = kNoMax;
    r.cli_default = fmt::format("{}", Defaults::cache_decoded_gb);
    r.python_default = "0";
    r.help = "Keep decoded images in RAM up to this many GB: epochs after the first skip read and decode; 0 = off";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kChannelsLast, KeyType::kBool, "channels_last", "", "");
    r.python_default = "False";
    r.help = "Images as NCHW tensors with channels_last strides";
  }
  {
    LoaderKeySpec& r = row(LoaderKey::kDecode, KeyType::kWord, "decode", "--decode", "decode");
    r.words = kDecodeWords;
    r.cli_default = "cpu";
    r.python_default = "'cpu'";
    r.help =
        "Where JPEGs are decoded when batches go to a CUDA device: by the workers (cpu), by nvJPEG on the GPU with "
        "the crop, resize and flips there too (gpu; refused, with why, where it cannot be), or split between the "
        "GPU's JPEG engine and the workers so that neither holds the step up, else by the workers (auto)";
  }
  {
    LoaderKeySpec& r =
        row(LoaderKey::kChunkShuffleGb, KeyType::kNumber, "chunk_shuffle_gb", "--chunk-shuffle-gb", "chunk_shuffle_gb");
    r.min = 0;
    r.max = kNoMax;
    r.cli_default = fmt::format("{}", Defaults::chunk_shuffle_gb);
    r.python_default = r.cli_default;
    r.help =
        "Memory in GB for the decoded chunks kept while a compressed chunked HDF5 dataset (one file, or the files "
        "of a pattern) is shuffled by groups of chunks: the order of the chunks is shuffled, then the rows within "
        "each group of as many as fit here with the groups the rows in flight reach (about a third), so each chunk "
        "is decoded once per epoch; 0 = every row shuffled alike (each row decodes its chunks)";
  }
  return rows;
}

std::string_view word_of(const KeyWord& word, FrontEnd front) {
  return front == FrontEnd::kPython ? word.python : word.cli;
}

std::string_view extra_of(const KeyExtra& extra, FrontEnd front) {
  return front == FrontEnd::kPython ? extra.python : extra.cli;
}

// "a or b", "a, b or c"; Python's words quoted.
std::string word_list(const LoaderKeySpec& row, FrontEnd front) {
  std::vector<std::string> words;
  for (const KeyWord& word : row.words) {
    if (word_of(word, front).empty()) continue;
    words.push_back(front == FrontEnd::kPython ? fmt::format("'{}'", word_of(word, front))
                                               : std::string(word_of(word, front)));
  }
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  }
  return text;
}

bool whole_type_range(const LoaderKeySpec& row) {
  return row.lo == 0 && row.hi == std::numeric_limits<uint64_t>::max();
}

}  // namespace

std::span<const LoaderKeySpec> loader_keys() {
  static const std::vector<LoaderKeySpec> table = make_table();
  return table;
}

const LoaderKeySpec& loader_key(LoaderKey key) { return loader_keys()[static_cast<size_t>(key)]; }

const LoaderKeySpec* find_python_key(std::string_view python) {
  for (const LoaderKeySpec& row : loader_keys()) {
    if (!python.empty() && row.python == python) return &row;
  }
  return nullptr;
}

std::string values_text(const LoaderKeySpec& row, FrontEnd front) {
  std::string text;
  switch (row.type) {
    case KeyType::kInt:
      if (!whole_type_range(row)) text = fmt::format("{}..{}", row.lo, row.hi);
      break;
    case KeyType::kNumber:
      if (std::isfinite(row.max)) text = fmt::format("in [{}, {}]", row.min, row.max);
      break;
    case KeyType::kWord:
      text = word_list(row, front);
      break;
    case KeyType::kBool:
      break;
  }
  for (const KeyExtra& extra : row.extras) {
    if (extra_of(extra, front).empty()) continue;
    text += fmt::format("{}{} ({})", text.empty() ? "" : ", or ", extra_of(extra, front), extra.meaning);
  }
  return text;
}

std::string help_text(const LoaderKeySpec& row, FrontEnd front) {
  const std::string values = values_text(row, front);
  if (values.empty()) return row.help;
  return fmt::format("{}{} {}", row.help, row.type == KeyType::kWord ? ":" : ",", values);
}

std::string range_message(LoaderKey key, int64_t value, std::string_view name) {
  const LoaderKeySpec& row = loader_key(key);
  if (value >= 0 && static_cast<uint64_t>(value) >= row.lo && static_cast<uint64_t>(value) <= row.hi) return "";
  if (row.hi == std::numeric_limits<uint64_t>::max()) {
    return fmt::format("{} must be >= {} (got {})", name, row.lo, value);
  }
  return fmt::format("{} must be between {} and {} (got {})", name, row.lo, row.hi, value);
}

std::string range_message(LoaderKey key, double value, std::string_view name) {
  const LoaderKeySpec& row = loader_key(key);
  if (row.type == KeyType::kInt) {
    // A whole number given as a double (a JSON or Python number): the integer check, exactly.
    if (value == std::floor(value) && value >= -9.2e18 && value <= 9.2e18) {
      return range_message(key, static_cast<int64_t>(value), name);
    }
    return fmt::format("{} must be a whole number from {} to {} (got {})", name, row.lo, row.hi, value);
  }
  // Each comparison is written so that NaN fails it.
  if (value >= row.min && value <= row.max && std::isfinite(value)) return "";
  if (!std::isfinite(row.max)) return fmt::format("{} must be >= {} (got {})", name, row.min, value);
  return fmt::format("{} must be in [{}, {}] (got {})", name, row.min, row.max, value);
}

std::string word_message(LoaderKey key, std::string_view word, FrontEnd front, std::string_view name) {
  const LoaderKeySpec& row = loader_key(key);
  std::string list;
  for (const KeyWord& w : row.words) {
    if (word_of(w, front).empty()) continue;
    if (word_of(w, front) == word) return "";
    list += (list.empty() ? "" : ", ") + std::string(word_of(w, front));
  }
  return fmt::format("{} must be one of {} (got '{}')", name, list, word);
}

int auto_workers(int cores) { return std::max(1, std::min(4, cores / 2)); }

int buffers_in_flight(int prefetch_factor, int workers) {
  const int64_t buffers = static_cast<int64_t>(prefetch_factor) * workers;
  return static_cast<int>(std::clamp<int64_t>(buffers, 2, kMaxBuffers));
}

std::string option_words(const OptionChange& change, FrontEnd front) {
  const LoaderKeySpec& row = loader_key(change.key);
  const std::string more = change.or_more ? " (or more)" : "";
  if (front == FrontEnd::kCommandLine || (row.python.empty() && change.key != LoaderKey::kCache)) {
    return fmt::format("{} {}{}", row.flag, change.value, more);
  }
  if (change.key == LoaderKey::kCache) {
    // Python turns the cache on by its budget: the GB it takes, rounded up.
    return fmt::format("{}={:.0f}{}", loader_key(LoaderKey::kCacheDecodedGb).python,
                       std::max(1.0, std::ceil(change.gb)), more);
  }
  if (row.type == KeyType::kWord) {
    for (const KeyWord& word : row.words) {
      if (word.cli == change.value) return fmt::format("{}='{}'{}", row.python, word.python, more);
    }
  }
  if (row.type == KeyType::kBool) {
    return fmt::format("{}={}{}", row.python, change.value == "true" ? "True" : "False", more);
  }
  return fmt::format("{}={}{}", row.python, change.value, more);
}

}  // namespace stoker::data
