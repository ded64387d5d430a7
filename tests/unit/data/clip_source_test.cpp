// Clips at the source: which frames a sample takes (pick_frames), clip folders and CSV lists
// of frames, and the views that pass clips through.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "data/source/clip_files.h"
#include "stoker/core/error.h"
#include "stoker/data/clip.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::error_text;
using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

ClipOptions clip_of(int frames, int step, bool random_start) {
  ClipOptions clip;
  clip.frames = frames;
  clip.step = step;
  clip.random_start = random_start;
  return clip;
}

TEST(PickFramesTest, TrainingDrawsEveryStartThatFitsAndNoOther) {
  const ClipOptions clip = clip_of(4, 3, true);  // span 10
  std::map<int, int> starts;
  std::vector<int> chosen;
  for (uint64_t stream = 0; stream < 3000; ++stream) {
    SampleRng rng(7, 0, stream);
    const int start = pick_frames(clip, 14, rng, &chosen);
    ++starts[start];
    EXPECT_EQ(chosen, (std::vector<int>{start, start + 3, start + 6, start + 9}));
  }
  ASSERT_EQ(starts.size(), 5u) << "starts 0..4 of a 14-frame clip spanning 10";
  EXPECT_EQ(starts.begin()->first, 0);
  EXPECT_EQ(starts.rbegin()->first, 4);
  for (const auto& [start, times] : starts) EXPECT_GT(times, 450) << "start " << start << " drawn uniformly";
}

TEST(PickFramesTest, TrainingDrawsOnceFromTheSampleStream) {
  const ClipOptions clip = clip_of(2, 1, true);
  SampleRng rng(1, 2, 3), same(1, 2, 3);
  std::vector<int> chosen;
  pick_frames(clip, 10, rng, &chosen);
  EXPECT_EQ(chosen.front(), static_cast<int>(same.below(9)));
  EXPECT_EQ(rng.next_u64(), same.next_u64()) << "exactly one draw";
}

TEST(PickFramesTest, EvaluationTakesTheCentreAndDrawsNothing) {
  std::vector<int> chosen;
  SampleRng rng(1, 0, 0), untouched(1, 0, 0);
  EXPECT_EQ(pick_frames(clip_of(3, 2, false), 10, rng, &chosen), 2);  // span 5, starts 0..5
  EXPECT_EQ(chosen, (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(pick_frames(clip_of(3, 1, false), 3, rng, &chosen), 0);
  EXPECT_EQ(chosen, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(rng.next_u64(), untouched.next_u64());
}

TEST(PickFramesTest, AShortClipRepeatsItsLastFrame) {
  std::vector<int> chosen;
  SampleRng rng(1, 0, 0);
  EXPECT_EQ(pick_frames(clip_of(4, 2, true), 4, rng, &chosen), 0);
  EXPECT_EQ(chosen, (std::vector<int>{0, 2, 3, 3}));
  EXPECT_EQ(pick_frames(clip_of(3, 1, false), 1, rng, &chosen), 0);
  EXPECT_EQ(chosen, (std::vector<int>{0, 0, 0}));
}

TEST(ClipOptionsTest, OutOfRangeValuesAreNamed) {
  EXPECT_NE(usage_error_text([] { clip_of(-1, 1, true).validate(); }).find("frames_per_clip must be in [0, 1024]"),
            std::string::npos);
  EXPECT_NE(usage_error_text([] { clip_of(4, 0, true).validate(); }).find("frame_step must be in [1, 1024] ("),
            std::string::npos);
  EXPECT_EQ(usage_error_text([] { clip_of(0, 1, true).validate(); }), "<no UsageError>");
}

TEST(NaturalOrderTest, DigitsCompareAsNumbers) {
  std::vector<std::string> names{"f10.jpg", "f2.jpg", "f02.jpg", "f1.jpg", "g.jpg", "f.jpg", "f2a.jpg", "f100.jpg"};
  std::sort(names.begin(), names.end(), natural_less);
  EXPECT_EQ(names, (std::vector<std::string>{"f.jpg", "f1.jpg", "f2.jpg", "f02.jpg", "f2a.jpg", "f10.jpg", "f100.jpg",
                                             "g.jpg"}));
}

TEST(ClipFolderTest, ClipFoldersAreSamplesWithTheirFramesInNameOrder) {
  TempDir dir;
  for (const char* frame : {"frame_10.jpg", "frame_2.jpg", "frame_1.png"})
    dir.write_text(std::string("real/v2/") + frame, "x");
  dir.write_text("real/v2/notes.txt", "x");
  dir.write_text("real/v10/a.jpg", "ab");
  dir.write_text("fake/v1/a.JPG", "abc");
  dir.write_text("fake/v1/b.jpeg", "abcd");
  const auto source = open_clip_folder(dir.str());
  ASSERT_TRUE(source->holds_clips());
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->class_names(), (std::vector<std::string>{"fake", "real"}));
  EXPECT_EQ(source->name(0), (dir.path() / "fake/v1").string());
  EXPECT_EQ(source->name(1), (dir.path() / "real/v2").string()) << "v2 before v10";
  EXPECT_EQ(source->label(2), 1);
  EXPECT_EQ(source->frame_name(1, 0), (dir.path() / "real/v2/frame_1.png").string());
  EXPECT_EQ(source->frame_name(1, 2), (dir.path() / "real/v2/frame_10.jpg").string());
  EXPECT_NE(source->describe().find("3 clips of 6 frames in 2 classes (1 other files"), std::string::npos)
      << source->describe();

  std::vector<int> asked;
  const std::vector<int> chosen{1, 0, 1};
  std::vector<SampleData> frames;
  ASSERT_TRUE(source
                  ->read_clip(
                      0,
                      [&](int count) {
                        asked.push_back(count);
                        return std::span<const int>(chosen);
                      },
                      &frames)
                  .ok());
  EXPECT_EQ(asked, (std::vector<int>{2}));
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].bytes.size(), 4u);  // b.jpeg
  EXPECT_EQ(frames[1].bytes.size(), 3u);
  EXPECT_EQ(frames[2].bytes.size(), 4u);
  SampleData first;
  ASSERT_TRUE(source->read(0, &first).ok());
  EXPECT_EQ(first.bytes.size(), 3u) << "read() gives a clip's first frame";
}

TEST(ClipFolderTest, LayoutMistakesAreNamed) {
  TempDir loose;
  loose.write_text("real/v1/a.jpg", "x");
  loose.write_text("real/b.jpg", "x");
  EXPECT_NE(
      error_text([&] { open_clip_folder(loose.str()); }).find("real/b.jpg lies in a class folder, outside any clip"),
      std::string::npos);
  TempDir empty_clip;
  empty_clip.write_text("real/v1/a.jpg", "x");
  empty_clip.write_text("real/v2/readme.txt", "x");
  EXPECT_NE(error_text([&] { open_clip_folder(empty_clip.str()); }).find("real/v2 holds no frames"), std::string::npos);
  TempDir flat;
  flat.write_text("a.jpg", "x");
  EXPECT_NE(error_text([&] { open_clip_folder(flat.str()); }).find("has no class folders"), std::string::npos);
}

TEST(ClipFolderTest, OpenClipSourceReadsAFolderAsClipsAndOpenSourceAsImages) {
  TempDir dir;
  dir.write_text("real/v1/a.jpg", "x");
  dir.write_text("real/v1/b.jpg", "x");
  EXPECT_TRUE(open_clip_source(dir.str())->holds_clips());
  const auto images = open_source(dir.str());
  EXPECT_FALSE(images->holds_clips());
  EXPECT_EQ(images->size(), 2u);
}

TEST(ClipListTest, PathCellsListFramesRelativeToTheList) {
  TempDir dir;
  dir.write_text("v1/0001.jpg", "a");
  dir.write_text("v1/0002.jpg", "bb");
  dir.write_text("one.jpg", "ccc");
  dir.write_text("clips.csv", "path,label\nv1/0001.jpg|v1/0002.jpg,1\none.jpg,0\n");
  const auto source = open_source((dir.path() / "clips.csv").string());
  ASSERT_TRUE(source->holds_clips());
  EXPECT_NE(source->describe().find("2 clips"), std::string::npos) << source->describe();
  EXPECT_EQ(source->frame_name(0, 1), (dir.path() / "v1/0002.jpg").string());
  EXPECT_EQ(source->name(0), (dir.path() / "v1/0001.jpg").string() + "|" + (dir.path() / "v1/0002.jpg").string());
  std::vector<SampleData> frames;
  const std::vector<int> chosen{1, 1};
  int told = 0;
  ASSERT_TRUE(source
                  ->read_clip(
                      0,
                      [&](int count) {
                        told = count;
                        return std::span<const int>(chosen);
                      },
                      &frames)
                  .ok());
  EXPECT_EQ(told, 2);
  EXPECT_EQ(frames[0].bytes.size(), 2u);
  ASSERT_TRUE(source
                  ->read_clip(
                      1,
                      [&](int count) {
                        told = count;
                        return std::span<const int>(chosen.data(), 1);
                      },
                      &frames)
                  .ok());
  EXPECT_EQ(told, 1) << "a row of one path is a clip of one frame";
  EXPECT_EQ(frames[0].bytes.size(), 3u);

  dir.write_text("images.csv", "one.jpg,0\nv1/0001.jpg,1\n");
  EXPECT_FALSE(open_source((dir.path() / "images.csv").string())->holds_clips());
  dir.write_text("gap.csv", "one.jpg||v1/0001.jpg,0\n");
  EXPECT_NE(error_text([&] {
              open_source((dir.path() / "gap.csv").string());
            }).find("gap.csv:1: frame 2 of the path cell 'one.jpg||v1/0001.jpg' is empty"),
            std::string::npos);
}

TEST(ClipListTest, APathCellNamingAFolderIsTheClipOfItsFrames) {
  // Videos kept as a folder of frames each, listed with their labels: `videos/v1,1`.
  TempDir dir;
  dir.write_text("videos/v1/frame_10.jpg", "ccc");
  dir.write_text("videos/v1/frame_2.jpg", "bb");
  dir.write_text("videos/v1/frame_1.png", "a");
  dir.write_text("videos/v1/boxes.npy", "not a frame");
  dir.write_text("videos/v2/only.jpg", "dddd");
  dir.write_text("clips.csv", "video,label\nvideos/v1,1\nvideos/v2/,0\n");
  const auto source = open_source((dir.path() / "clips.csv").string());
  ASSERT_TRUE(source->holds_clips()) << "a folder's row is a clip even of one frame";
  EXPECT_NE(source->describe().find("2 clips"), std::string::npos) << source->describe();
  const std::string v1 = (dir.path() / "videos/v1").string();
  EXPECT_EQ(source->name(0), v1 + "/frame_1.png|" + v1 + "/frame_2.jpg|" + v1 + "/frame_10.jpg")
      << "its .jpg, .jpeg and .png files, in name order with numbers compared as numbers";
  EXPECT_EQ(source->frame_name(1, 0), (dir.path() / "videos/v2/only.jpg").string());
  EXPECT_EQ(source->label(0), 1);

  dir.write_text("videos/empty/notes.txt", "x");
  dir.write_text("empty.csv", "videos/v1,1\nvideos/empty,0\n");
  const std::string empty = error_text([&] { open_source((dir.path() / "empty.csv").string()); });
  EXPECT_NE(empty.find("empty.csv:2: the folder " + (dir.path() / "videos/empty").string() +
                       " holds no frames (image files, .jpg, .png, .webp, ..., in it)"),
            std::string::npos)
      << empty;
}

TEST(ClipListTest, AMissingFrameIsNamed) {
  TempDir dir;
  dir.write_text("a.jpg", "a");
  dir.write_text("clips.csv", "a.jpg|gone.jpg,0\n");
  const auto source = open_source((dir.path() / "clips.csv").string());
  std::vector<SampleData> frames;
  const std::vector<int> chosen{0, 1};
  const Status status = source->read_clip(
      0, [&](int) { return std::span<const int>(chosen); }, &frames);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.reason(), "frame " + (dir.path() / "gone.jpg").string() + ": file not found");
}

TEST(ClipListTest, ShardsAndViewsPassClipsThrough) {
  TempDir dir;
  dir.write_text("a.jpg", "a");
  dir.write_text("b.jpg", "bb");
  dir.write_text("part-0.csv", "a.jpg|b.jpg,0\n");
  dir.write_text("part-1.csv", "b.jpg|a.jpg,1\na.jpg|a.jpg,1\n");
  std::shared_ptr<const Source> shards = open_source((dir.path() / "part-*.csv").string());
  ASSERT_TRUE(shards->holds_clips());
  EXPECT_EQ(shards->frame_name(1, 1), (dir.path() / "a.jpg").string());
  const HeldOut parts = hold_out(shards, 0.34, 1);
  EXPECT_TRUE(parts.train->holds_clips());
  EXPECT_TRUE(parts.val->holds_clips());
  std::vector<SampleData> frames;
  const std::vector<int> second{1};
  for (size_t i = 0; i < parts.train->size(); ++i) {
    ASSERT_TRUE(parts.train
                    ->read_clip(
                        i, [&](int) { return std::span<const int>(second); }, &frames)
                    .ok());
    EXPECT_EQ(frames[0].bytes.size(), parts.train->frame_name(i, 1).ends_with("b.jpg") ? 2u : 1u);
  }
  dir.write_text("part-2.csv", "a.jpg,1\n");
  EXPECT_NE(error_text([&] {
              open_source((dir.path() / "part-*.csv").string());
            }).find("differ in their samples: clips and single images"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
