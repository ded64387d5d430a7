// stoker/data/clip_geometry.h — per-frame keypoints and boxes of clips read from paths (a
// folder of clip folders, a CSV list of clips): a row of each per frame of every clip, held in
// memory and attached to the frames a read picks, as a Python Dataset's stoker.Keypoints
// (T, P, 3) and stoker.Boxes (T, 5) are (python/src/dataset_source.h).
//
// Rows are in the listing's frame order: clip 0's frames in order, then clip 1's, ...; clip i
// has rows first_row[i] .. first_row[i + 1], one per frame it holds.
//
// Thread safety: the view is immutable after construction (reads from any thread); the
// functions are pure.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

// `source` (a clip source, Source::holds_clips) with `points` (rows x points_per_frame x (x, y,
// visible)) and `boxes` (rows x boxes_per_frame x (x1, y1, x2, y2, valid)) for its frames;
// `first_row` has size() + 1 entries, from 0 to rows. read_clip gives each chosen frame its
// row's values (SampleData::geometry); read() (a clip's first frame) the clip's first row. A
// clip that holds another number of frames than its rows when read is a bad sample
// (clip_rows_refusal). Throws UsageError when a length does not match or the source holds no
// clips.
std::shared_ptr<const Source> with_clip_geometry(std::shared_ptr<const Source> source, std::vector<float> points,
                                                 int points_per_frame, std::vector<float> boxes, int boxes_per_frame,
                                                 std::vector<size_t> first_row);

// The frames of clip `index` of a clip source, by frame_name (their paths for clip folders and
// CSV lists), without reading any: read_clip with a picker that takes none.
std::vector<std::string> clip_frame_names(const Source& source, size_t index);

// The one line for a clip `at` ("Videos[3]", a clip folder's path) whose `what` ("stoker.Boxes",
// "keypoints"; a name with "oxes" in it is boxes) holds `rows` rows beside its `frames` frames:
// both counts and what is allowed ("... holds stoker.Boxes of 5 rows beside its clip of 6
// frames; give one row per frame, (T, 4) with T = 6").
std::string clip_rows_refusal(const std::string& at, const std::string& what, size_t rows, size_t frames);

// The one line for a clip `at` whose stoker.Keypoints are one image's `points` points, (P, 2)
// or (P, 3), not a row of them per frame of its `frames`.
std::string clip_points_refusal(const std::string& at, size_t points, size_t frames);

// The one line for a clip `at` that holds a stoker.Mask: masks follow single images only; it
// says what to do instead.
std::string clip_mask_refusal(const std::string& at);

}  // namespace stoker::data
