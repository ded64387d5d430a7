// `stoker bench loader`: the input pipeline alone at full speed, and `stoker bench generate`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "checksum.h"
#include "commands.h"
#include "format.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/progress_line.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/synthetic.h"

namespace stoker::cli {

namespace {

struct BenchArgs {
  std::string data;
  int synthetic = 0;
  std::string cache_dir;
  // The loader's options: their flags, ranges and defaults are the loader's table's
  // (stoker/data/loader_keys.h), except workers, one per core unless given.
  int workers = 0;
  bool workers_given = false;  // else one per core
  int batch_size = data::LoaderDefaults::batch_size;
  int prefetch_factor = data::LoaderDefaults::prefetch_factor;
  int epochs = 0;      // 0 = 1, or unlimited when --seconds is given
  double seconds = 0;  // 0 = no time limit
  int size = 224;
  std::string transforms;
  std::string split = "train";
  uint64_t seed = data::LoaderDefaults::seed;
  std::string on_error = "substitute";
  double max_bad = data::LoaderDefaults::max_bad_fraction;
  int64_t max_pixels = 89'478'485;
  bool no_crop_window = false;
  bool no_restart_splicing = false;
  bool no_dct_scaling = false;
  double cache_decoded_gb = data::LoaderDefaults::cache_decoded_gb;  // > 0: keep decoded images in RAM
  double chunk_shuffle_gb = data::LoaderDefaults::chunk_shuffle_gb;
  bool no_run_ahead = false;
  double step_ms = 0;       // > 0: the consumer holds each batch this long, as a training step would
  int frames_per_clip = 0;  // > 0: samples are clips of this many frames (data/clip.h)
  int frame_step = 1;
  bool json = false;
};

struct BenchResult {
  uint64_t images = 0;
  uint64_t batches = 0;
  int epochs = 0;
  double seconds = 0;
  Checksum checksum;
  std::vector<data::BadSample> bad;
  uint64_t bad_count = 0;
  std::vector<double> epoch_images_per_sec;  // complete epochs only
  // From start_epoch until next() returned the epoch's first batch, per epoch.
  std::vector<double> first_batch_seconds;
};

std::string prepare_data(const BenchArgs& args, bool* generated) {
  if (!args.data.empty() && args.synthetic > 0) {
    throw UsageError("give either --data DIR or --synthetic N, not both");
  }
  if (args.data.empty() && args.synthetic <= 0) {
    throw UsageError(
        "no dataset: give --data PATH (image folder, IDX dir, CSV list or feature table, .npz/.npy/.h5) or "
        "--synthetic N to generate N JPEGs");
  }
  if (!args.data.empty()) return args.data;
  const std::string dir = args.cache_dir.empty() ? data::default_synthetic_dir(args.synthetic) : args.cache_dir;
  data::SyntheticOptions options;
  options.images = args.synthetic;
  ProgressLine line;
  options.progress = [&line, &dir](int done, int total) {
    line.update([&] {
      return fmt::format("generating {} / {} synthetic JPEGs into {}, {:.0f} s", grouped(done), grouped(total), dir,
                         line.seconds());
    });
  };
  *generated = data::ensure_synthetic_dataset(dir, options);
  return dir;
}

// The loader's options as given, each checked against the loader's table and named by its flag.
void check_loader_args(const BenchArgs& args) {
  using data::LoaderKey;
  const auto flag = [](LoaderKey key) { return data::loader_key(key).flag; };
  for (const std::string& message : {
           !args.workers_given
               ? std::string()
               : data::range_message(LoaderKey::kWorkers, int64_t{args.workers}, flag(LoaderKey::kWorkers)),
           data::range_message(LoaderKey::kBatchSize, int64_t{args.batch_size}, flag(LoaderKey::kBatchSize)),
           data::range_message(LoaderKey::kPrefetchFactor, int64_t{args.prefetch_factor},
                               flag(LoaderKey::kPrefetchFactor)),
           data::word_message(LoaderKey::kOnError, args.on_error, data::FrontEnd::kCommandLine,
                              flag(LoaderKey::kOnError)),
           data::range_message(LoaderKey::kMaxBadFraction, args.max_bad, flag(LoaderKey::kMaxBadFraction)),
           data::range_message(LoaderKey::kCacheDecodedGb, args.cache_decoded_gb, flag(LoaderKey::kCacheDecodedGb)),
           data::range_message(LoaderKey::kChunkShuffleGb, args.chunk_shuffle_gb, flag(LoaderKey::kChunkShuffleGb)),
       }) {
    if (!message.empty()) throw UsageError(message);
  }
  if (args.seconds < 0 || !std::isfinite(args.seconds)) {
    throw UsageError(fmt::format("--seconds must be >= 0 (got {})", args.seconds));
  }
  if (args.epochs < 0) throw UsageError(fmt::format("--epochs must be >= 0 (got {})", args.epochs));
  if (args.step_ms < 0 || !std::isfinite(args.step_ms)) {
    throw UsageError(fmt::format("--step-ms must be >= 0 (got {})", args.step_ms));
  }
  if (!args.transforms.empty()) data::parse_transforms(args.transforms);  // the chain is checked again with its source
}

data::LoaderOptions loader_options(const BenchArgs& args, const data::Source& source) {
  data::LoaderOptions options;
  options.batch_size = args.batch_size;
  options.workers = args.workers_given
                        ? args.workers
                        : std::min(cpu_count(), static_cast<int>(data::loader_key(data::LoaderKey::kWorkers).hi));
  options.prefetch = data::buffers_in_flight(args.prefetch_factor, options.workers);
  options.sampler.seed = args.seed;
  options.transform =
      data::parse_transforms(!args.transforms.empty() ? args.transforms : data::default_transforms(source, args.size));
  options.decode.max_pixels = args.max_pixels;
  options.decode.crop_window = !args.no_crop_window;
  options.decode.restart_splicing = !args.no_restart_splicing;
  options.decode.dct_scaling = !args.no_dct_scaling;
  options.cache_decoded_bytes = static_cast<size_t>(args.cache_decoded_gb * 1e9);
  options.chunk_shuffle_bytes = static_cast<size_t>(args.chunk_shuffle_gb * 1e9);
  options.on_error = args.on_error == "fail" ? data::OnError::kFail : data::OnError::kSubstitute;
  options.max_bad_fraction = args.max_bad;
  options.run_ahead = !args.no_run_ahead;
  options.clip.frames = args.frames_per_clip;
  options.clip.step = args.frame_step;
  return options;
}

BenchResult run_loader(data::Loader& loader, const BenchArgs& args) {
  BenchResult result;
  const int epochs = args.epochs > 0 ? args.epochs : (args.seconds > 0 ? 1'000'000 : 1);
  const bool features = loader.options().transform.features.enabled();
  std::fprintf(stderr, "bench loader: %s with %d worker%s, %s\n", loader.source().describe().c_str(),
               loader.options().workers, loader.options().workers == 1 ? "" : "s",
               args.seconds > 0 ? fmt::format("for {:g} s", args.seconds).c_str()
                                : fmt::format("{} epoch{}", epochs, epochs == 1 ? "" : "s").c_str());
  ProgressLine line;
  Stopwatch clock;
  bool out_of_time = false;
  for (int epoch = 0; epoch < epochs && !out_of_time; ++epoch) {
    Stopwatch epoch_clock;
    loader.start_epoch(epoch);
    uint64_t epoch_images = 0;
    bool first = true;
    while (data::Batch batch = loader.next()) {
      if (first) result.first_batch_seconds.push_back(ns_to_seconds(epoch_clock.elapsed_ns()));
      first = false;
      if (args.step_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(args.step_ms));
      epoch_images += static_cast<uint64_t>(batch.size());
      result.checksum.update(batch.data(), batch.bytes());
      result.checksum.update(batch.targets(), sizeof(float) * static_cast<size_t>(batch.size() * batch.target_dim()));
      result.images += static_cast<uint64_t>(batch.size());
      ++result.batches;
      line.update([&] {
        return fmt::format("bench loader: epoch {}, {} {}, {}/s, {:.0f} s", epoch + 1,
                           grouped(static_cast<double>(result.images)), features ? "samples" : "images",
                           grouped(static_cast<double>(result.images) / std::max(1e-9, line.seconds())),
                           line.seconds());
      });
      if (args.seconds > 0 && ns_to_seconds(clock.elapsed_ns()) >= args.seconds) {
        out_of_time = true;
        break;
      }
    }
    if (!out_of_time) {
      result.epoch_images_per_sec.push_back(static_cast<double>(epoch_images) /
                                            std::max(1e-9, ns_to_seconds(epoch_clock.elapsed_ns())));
    }
    const data::EpochStats stats = loader.epoch_stats();
    result.bad_count += stats.bad;
    for (const auto& bad : stats.bad_samples) {
      if (result.bad.size() < 1000) result.bad.push_back(bad);
    }
    ++result.epochs;
  }
  line.clear();
  result.seconds = ns_to_seconds(clock.elapsed_ns());
  return result;
}

std::vector<double> first_batch_ms(const BenchResult& r) {
  std::vector<double> ms;
  for (double s : r.first_batch_seconds) ms.push_back(s * 1e3);
  return ms;
}

// Images decoded per sample: a clip's frames, else one.
double frames_per_sample(const data::Loader& loader) { return std::max(1, loader.options().clip.frames); }

void print_json(const BenchArgs& args, const std::string& data_dir, const data::Loader& loader, const BenchResult& r) {
  const data::StageTimes t = loader.stage_times();
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& b : r.bad) bad.push_back({{"path", b.name}, {"reason", b.reason}});
  nlohmann::json out = {
      {"data", data_dir},
      {"source", loader.source().describe()},
      {"transforms", loader.options().transform.describe()},
      {"images_per_sec", r.seconds > 0 ? r.images / r.seconds : 0.0},
      {"frames_per_clip", loader.options().clip.frames},
      {"frames_per_sec", r.seconds > 0 ? r.images * frames_per_sample(loader) / r.seconds : 0.0},
      {"mb_per_sec", r.seconds > 0 ? t.bytes_read / 1e6 / r.seconds : 0.0},
      {"images", r.images},
      {"batches", r.batches},
      {"epochs", r.epochs},
      {"seconds", r.seconds},
      {"workers", loader.options().workers},
      {"batch_size", loader.options().batch_size},
      {"prefetch_factor", args.prefetch_factor},
      {"prefetch", loader.options().prefetch},
      {"crop_window", !args.no_crop_window},
      {"restart_splicing", !args.no_restart_splicing},
      {"dct_scaling", !args.no_dct_scaling},
      {"peak_rss_mb", peak_rss_bytes() / 1e6},
      {"bad_count", r.bad_count},
      {"bad_samples", bad},
      {"checksum", fmt::format("{:016x}", r.checksum.value())},
      {"epoch_images_per_sec", r.epoch_images_per_sec},
      {"epoch_first_batch_ms", first_batch_ms(r)},
      {"run_ahead", loader.options().run_ahead},
      {"cache",
       {{"budget_gb", loader.cache_stats().budget / 1e9},
        {"entries", loader.cache_stats().entries},
        {"gb", loader.cache_stats().bytes / 1e9},
        {"hits", t.cache_hits}}},
      {"jpeg_samples", t.jpeg_samples},
      {"spliced_samples", t.spliced_samples},
      {"stages",
       {{"read", t.read},
        {"decode", t.decode},
        {"transform", t.transform},
        {"wait_free_buffer", t.wait_free_buffer},
        {"consumer_wait", t.consumer_wait}}},
  };
  std::printf("%s\n", dump_json(out, 2).c_str());
}

void print_human(const data::Loader& loader, const BenchResult& r) {
  const data::StageTimes t = loader.stage_times();
  const auto& options = loader.options();
  const double worker_total = t.read + t.decode + t.transform + t.wait_free_buffer;
  const bool features = options.transform.features.enabled();
  const char* per_s = features ? "samples/s" : options.clip.enabled() ? "clips/s" : "img/s";
  std::printf("%s %s\n", features ? "data    " : "images  ", loader.source().describe().c_str());
  std::printf("pipeline %s · batch %d · %d worker%s · %d batches in flight\n", options.transform.describe().c_str(),
              options.batch_size, options.workers, options.workers == 1 ? "" : "s", options.prefetch);
  const std::string clips =
      options.clip.enabled()
          ? fmt::format(" · {} frames/s", grouped(r.seconds > 0 ? r.images * frames_per_sample(loader) / r.seconds : 0))
          : "";
  std::printf("result   %s %s%s · %s/s read · peak RSS %s · %s %s in %.1f s (%d epoch%s)\n",
              grouped(r.seconds > 0 ? r.images / r.seconds : 0).c_str(), per_s, clips.c_str(),
              megabytes(r.seconds > 0 ? t.bytes_read / r.seconds : 0).c_str(), megabytes(peak_rss_bytes()).c_str(),
              grouped(static_cast<double>(r.images)).c_str(),
              features                 ? "samples"
              : options.clip.enabled() ? "clips"
                                       : "images",
              r.seconds, r.epochs, r.epochs == 1 ? "" : "s");
  std::printf(
      "stages   read %s · decode %s · transform %s · wait for free buffer %s"
      " · consumer waited %.1f s\n",
      share(t.read, worker_total).c_str(), share(t.decode, worker_total).c_str(),
      share(t.transform, worker_total).c_str(), share(t.wait_free_buffer, worker_total).c_str(), t.consumer_wait);
  if (t.jpeg_samples > 0) {
    if (t.spliced_samples > 0) {
      std::printf("jpeg     %s of %s decodes read only their crop's restart intervals\n",
                  grouped(static_cast<double>(t.spliced_samples)).c_str(),
                  grouped(static_cast<double>(t.jpeg_samples)).c_str());
    } else if (options.decode.crop_window && options.cache_decoded_bytes == 0) {
      std::printf(
          "jpeg     no restart markers: crops decode every row above them "
          "(`stoker prepare` adds markers, losslessly)\n");
    }
  }
  if (r.epoch_images_per_sec.size() > 1) {
    std::string rates;
    for (size_t e = 0; e < r.epoch_images_per_sec.size() && e < 8; ++e) {
      rates += fmt::format("{}{}: {} {}", e ? " · " : "", e + 1, grouped(r.epoch_images_per_sec[e]), per_s);
    }
    std::printf("epochs   %s\n", rates.c_str());
    std::string waits;
    for (size_t e = 0; e < r.first_batch_seconds.size() && e < 8; ++e) {
      waits += fmt::format("{}{}: {:.1f} ms", e ? " · " : "", e + 1, r.first_batch_seconds[e] * 1e3);
    }
    std::printf("first    batch of each epoch waited for %s%s\n", waits.c_str(),
                options.run_ahead ? "" : " (--no-run-ahead)");
  }
  if (const data::CacheStats cache = loader.cache_stats(); cache.budget > 0) {
    std::printf("cache    %s images decoded in RAM, %.2f GB of %.2f GB%s · %s samples served from it\n",
                grouped(static_cast<double>(cache.entries)).c_str(), cache.bytes / 1e9, cache.budget / 1e9,
                cache.full ? " (full)" : "", grouped(static_cast<double>(t.cache_hits)).c_str());
  }
  if (r.bad_count == 0) {
    std::printf("bad      none\n");
  } else {
    std::printf("bad      %s samples replaced:\n", grouped(static_cast<double>(r.bad_count)).c_str());
    const size_t shown = std::min<size_t>(r.bad.size(), 20);
    for (size_t i = 0; i < shown; ++i) {
      std::printf("         %s (%s)\n", r.bad[i].name.c_str(), r.bad[i].reason.c_str());
    }
    if (r.bad.size() > shown) std::printf("         ... and %zu more\n", r.bad.size() - shown);
  }
  std::printf("checksum %016llx\n", static_cast<unsigned long long>(r.checksum.value()));
}

int bench_loader(const BenchArgs& args) {
  check_loader_args(args);  // before a --synthetic dataset is made
  bool generated = false;
  const std::string data_dir = prepare_data(args, &generated);
  if (generated && !args.json) {
    std::printf("generated %d synthetic JPEGs in %s\n", args.synthetic, data_dir.c_str());
  }
  const data::ClipOptions clip{args.frames_per_clip, args.frame_step};
  clip.validate();  // before a folder is read as clips
  std::shared_ptr<const data::Source> source = data::open_source_showing_progress(data_dir, args.split, clip.enabled());
  std::unique_ptr<data::Loader> made;
  {
    ProgressLine line;  // a Standardize fit over a feature file without its sums takes seconds
    data::run_with_progress_line(
        data_dir, [&] { made = std::make_unique<data::Loader>(source, loader_options(args, *source)); }, line);
  }
  data::Loader& loader = *made;
  const BenchResult result = run_loader(loader, args);
  if (args.json) {
    print_json(args, data_dir, loader, result);
  } else {
    print_human(loader, result);
  }
  return 0;
}

int bench_generate(const BenchArgs& args) {
  if (args.synthetic <= 0) throw UsageError("bench generate needs --synthetic N (N >= 1)");
  bool generated = false;
  const std::string dir = prepare_data(args, &generated);
  std::printf("%s %d synthetic JPEGs in %s\n", generated ? "generated" : "reusing", args.synthetic, dir.c_str());
  return 0;
}

// "--prefetch-factor,--prefetch_factor,--prefetch": the key's flag, its YAML key and aliases as
// flags, each with '-' and with '_' (as stoker train takes them).
std::string flag_names(const data::LoaderKeySpec& row) {
  std::vector<std::string> names;
  const auto add = [&names](std::string_view snake_or_dashed) {
    std::string name(snake_or_dashed);
    for (const char join : {'-', '_'}) {
      std::replace(name.begin(), name.end(), join == '-' ? '_' : '-', join);
      if (std::find(names.begin(), names.end(), "--" + name) == names.end()) names.push_back("--" + name);
    }
  };
  add(row.flag.substr(2));
  if (!row.yaml.empty()) add(row.yaml);
  for (const std::string_view alias : row.aliases) add(alias);
  return fmt::format("{}", fmt::join(names, ","));
}

// A flag of the loader's table: its names, help and default are the table's.
template <typename T>
void add_loader_option(CLI::App* app, data::LoaderKey key, T& value) {
  const data::LoaderKeySpec& row = data::loader_key(key);
  app->add_option(flag_names(row), value, data::help_text(row, data::FrontEnd::kCommandLine))->capture_default_str();
}

}  // namespace

void add_bench_commands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* bench = app.add_subcommand("bench", "Measure parts of stoker in isolation");
  bench->require_subcommand(1);

  CLI::App* loader = bench->add_subcommand("loader", "Run the input pipeline alone at full speed");
  loader->add_option("--data", args->data,
                     "Data as stoker train takes it: " + data::data_formats_brief() +
                         ", or a quoted pattern of shards ('emb/x_*.npy', 'shards/train-*.tar')");
  loader->add_option("--synthetic", args->synthetic, "Generate N ImageNet-like JPEGs and use them");
  add_loader_option(loader, data::LoaderKey::kCacheDecodedGb, args->cache_decoded_gb);
  loader->add_option("--cache-dir", args->cache_dir, "Where --synthetic puts its images");
  const data::LoaderKeySpec& workers = data::loader_key(data::LoaderKey::kWorkers);
  CLI::Option* workers_option =
      loader->add_option(flag_names(workers), args->workers,
                         fmt::format("{}, {}..{} (default: one per core)", workers.help, workers.lo, workers.hi));
  add_loader_option(loader, data::LoaderKey::kBatchSize, args->batch_size);
  add_loader_option(loader, data::LoaderKey::kPrefetchFactor, args->prefetch_factor);
  loader->add_option("--epochs", args->epochs, "Epochs to run (default 1, or until --seconds)");
  loader->add_option("--seconds", args->seconds, "Stop after this many seconds");
  loader->add_option("--size", args->size, "Output size for the default transforms")->capture_default_str();
  loader->add_option("--transforms", args->transforms,
                     "Transform chain, torchvision notation (default: the data's own — IDX: none, "
                     "Grayscale, Normalize; feature vectors: Standardize — else "
                     "RandomResizedCrop(size), RandomHorizontalFlip(0.5), Normalize)");
  loader->add_option("--split", args->split, "Split to read: " + data::split_help_text())->capture_default_str();
  add_loader_option(loader, data::LoaderKey::kSeed, args->seed);
  add_loader_option(loader, data::LoaderKey::kOnError, args->on_error);
  add_loader_option(loader, data::LoaderKey::kMaxBadFraction, args->max_bad);
  add_loader_option(loader, data::LoaderKey::kChunkShuffleGb, args->chunk_shuffle_gb);
  loader->add_option("--max-pixels", args->max_pixels, "Refuse larger images (decompression bombs)")
      ->capture_default_str();
  loader->add_flag("--no-crop-window", args->no_crop_window, "Decode whole images (for comparison)");
  loader->add_flag("--no-restart-splicing", args->no_restart_splicing,
                   "Ignore restart markers (decode every row above the crop)");
  loader->add_flag("--no-dct-scaling", args->no_dct_scaling, "Decode at full resolution");
  loader->add_flag("--no-run-ahead", args->no_run_ahead,
                   "Start each epoch from nothing instead of from the batches workers made ahead while the "
                   "previous one ended (for comparison)");
  loader
      ->add_option("--step-ms", args->step_ms,
                   "Hold each batch this many milliseconds before taking the next, as a training step "
                   "would (0 = take them as fast as they come)")
      ->capture_default_str();
  loader
      ->add_option("--frames-per-clip", args->frames_per_clip,
                   "Samples are clips of this many frames: a folder DATA/<class>/<clip>/<frames> or a CSV list of "
                   "frames (0: single images)")
      ->capture_default_str();
  loader->add_option("--frame-step", args->frame_step, "With --frames-per-clip: the distance between chosen frames")
      ->capture_default_str();
  loader->add_flag("--json", args->json, "Print one JSON object");
  loader->callback([args, exit_code, workers_option] {
    args->workers_given = workers_option->count() > 0;
    *exit_code = bench_loader(*args);
  });

  CLI::App* generate = bench->add_subcommand("generate", "Generate the synthetic JPEG dataset only");
  generate->add_option("--synthetic", args->synthetic, "Number of images")->required();
  generate->add_option("--cache-dir", args->cache_dir, "Target directory");
  generate->callback([args, exit_code] { *exit_code = bench_generate(*args); });
}

}  // namespace stoker::cli
