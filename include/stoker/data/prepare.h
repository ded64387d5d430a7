// stoker/data/prepare.h — rewriting a dataset once so that every later epoch decodes less.
//
// prepare_dataset() copies a dataset directory tree, rewriting each JPEG losslessly with a
// restart marker after every MCU (add_restart_markers in stoker/data/encode.h). stoker's
// decoder then entropy-decodes only the part of an image a random crop needs, instead of
// every row above the crop and every column. The pixels do not change (any decoder, PyTorch's
// included, gives the same ones). Size: each marker adds about 2.5 bytes per MCU, and the
// Huffman tables fitted to each file save more (2,000 synthetic JPEGs came out 2.5 % smaller).
//
// Everything else (PNGs, CSV file lists, IDX files, labels) is copied byte for byte, so a
// file list with relative paths still works. A JPEG libjpeg cannot read cleanly is copied as
// it is (and listed), so it stays the same bad sample it was.
//
// Errors: a missing or unreadable source, an output directory that exists and is not empty
// or lies inside the source, and write failures (disk full) throw stoker::Error naming the
// path. Thread safety: no shared state; it runs `workers` threads of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stoker/data/decode.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"

namespace stoker::data {

struct PrepareOptions {
  int workers = 1;  // threads rewriting files
  // Called now and then from the calling thread with files done so far and the total; while
  // the source is still being listed, with the files found so far and a total of -1.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct PrepareReport {
  struct Kept {
    std::string path;    // relative to the source
    std::string reason;  // why it was copied unchanged
  };
  int64_t files = 0;            // regular files in the tree
  int64_t jpegs_rewritten = 0;  // JPEGs that now carry restart markers
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  std::vector<Kept> kept;  // JPEGs copied unchanged (damaged), at most 100 listed
  int64_t kept_count = 0;
  double seconds = 0;
};

PrepareReport prepare_dataset(const std::string& source, const std::string& output, const PrepareOptions& options = {});

// What preparing would gain for this source and transform, measured rather than guessed: up
// to `max_samples` of its JPEGs (spread over the dataset) are read, rewritten in memory, and
// decoded + transformed as the loader's workers do it, the files as they are and the
// rewritten ones alternately, `rounds` times, on the calling thread. Same crops for both.
// JPEGs that already carry usable restart markers are counted and not measured.
// Thread safety: reads `source` only (Source::read is safe to call from any thread).
struct RestartGain {
  int measured = 0;        // JPEGs measured (0: nothing to gain from, or not JPEG)
  int already_marked = 0;  // JPEGs looked at that a prepared copy would not change
  double plain_s = 0;      // decode + transform seconds per sample, as they are
  double prepared_s = 0;   // the same after the rewrite
  double speedup() const { return prepared_s > 0 ? plain_s / prepared_s : 1.0; }
};
RestartGain measure_restart_gain(const Source& source, const TransformSpec& spec, const DecodeOptions& decode,
                                 int max_samples = 48, int rounds = 3);

}  // namespace stoker::data
