// with_clip_geometry: a row of keypoints and boxes per frame of a path's clips, attached to the
// frames a read picks; clip_frame_names lists a clip's frames without reading them.
#include "stoker/data/clip_geometry.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

// Two clips: fake/v1 of 2 frames, real/v2 of 3.
std::shared_ptr<const Source> two_clips(const TempDir& dir) {
  for (const char* frame : {"fake/v1/a.jpg", "fake/v1/b.jpg", "real/v2/1.jpg", "real/v2/2.jpg", "real/v2/3.jpg"})
    dir.write_text(frame, "x");
  return open_clip_folder(dir.str());
}

Status read_picked(const Source& source, size_t index, std::vector<int> chosen, std::vector<SampleData>* frames) {
  return source.read_clip(
      index, [&](int) { return std::span<const int>(chosen); }, frames);
}

TEST(ClipGeometryTest, EachChosenFrameTakesItsOwnRow) {
  TempDir dir;
  const auto clips = two_clips(dir);
  // One point per frame: (frame number in the listing, 0, 1); one box per frame: (10 x row, ...).
  std::vector<float> points, boxes;
  for (int row = 0; row < 5; ++row) {
    points.insert(points.end(), {static_cast<float>(row), 0, 1});
    boxes.insert(boxes.end(), {10.0f * row, 0, 10.0f * row + 5, 5, 1});
  }
  const auto source = with_clip_geometry(clips, points, 1, boxes, 1, {0, 2, 5});
  ASSERT_TRUE(source->has_geometry());
  std::vector<SampleData> frames;
  ASSERT_TRUE(read_picked(*source, 1, {2, 0, 2}, &frames).ok());
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].geometry.points, (std::vector<float>{4, 0, 1})) << "clip 1's frame 2 is row 4";
  EXPECT_EQ(frames[1].geometry.points, (std::vector<float>{2, 0, 1}));
  EXPECT_EQ(frames[2].geometry.boxes, (std::vector<float>{40, 0, 45, 5, 1}));
  SampleData first;
  ASSERT_TRUE(source->read(1, &first).ok());
  EXPECT_EQ(first.geometry.points, (std::vector<float>{2, 0, 1})) << "read() is the clip's first frame";
}

TEST(ClipGeometryTest, FrameNamesComeWithoutReadingAndLengthsAreChecked) {
  TempDir dir;
  const auto clips = two_clips(dir);
  EXPECT_EQ(clip_frame_names(*clips, 1),
            (std::vector<std::string>{(dir.path() / "real/v2/1.jpg").string(), (dir.path() / "real/v2/2.jpg").string(),
                                      (dir.path() / "real/v2/3.jpg").string()}));
  EXPECT_EQ(usage_error_text([&] {
              with_clip_geometry(clips, std::vector<float>(12), 1, {}, 0, {0, 2, 5});
            }),
            "keypoints: 12 values for 5 frames of 1 points (x, y, visible) each; give 15");
  EXPECT_EQ(usage_error_text([&] {
              with_clip_geometry(clips, {}, 0, {}, 0, {0, 5});
            }),
            "with_clip_geometry: 2 first rows for 2 clips; give 3, from 0");
  EXPECT_EQ(clip_rows_refusal("Videos[3]", "stoker.Boxes", 5, 6),
            "Videos[3] holds stoker.Boxes of 5 rows beside its clip of 6 frames; give one row per frame, (T, 4) with "
            "T = 6");
}

}  // namespace
}  // namespace stoker::data
