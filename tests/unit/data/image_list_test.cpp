#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/path_list.h"
#include "stoker/data/source.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

std::unique_ptr<Source> three_images() {
  return open_image_list("ImageFolder object of /data", {"/data/a/0.png", "/data/a/1.png", "/data/b/0.png"}, {0, 0, 1},
                         {"a", "b"});
}

TEST(ImageListTest, RelabelledKeepsThePathsAndTakesTheNewIdsAndClasses) {
  auto list = three_images();
  auto relabelled = relabel_image_list(*list, {2, 1, 0}, {"a", "b", "c"});
  list.reset();  // the new source shares the paths: it outlives the one it came from
  ASSERT_EQ(relabelled->size(), 3u);
  EXPECT_EQ(relabelled->name(0), "/data/a/0.png");
  EXPECT_EQ(relabelled->name(2), "/data/b/0.png");
  EXPECT_EQ(relabelled->label(0), 2);
  EXPECT_EQ(relabelled->label(2), 0);
  EXPECT_EQ(relabelled->class_names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(relabelled->describe(), "ImageFolder object of /data: 3 images in 3 classes");
}

TEST(ImageListTest, RelabelRefusesAnotherCountAndIdsOutOfRangeLeavingTheList) {
  auto list = three_images();
  EXPECT_EQ(stoker::testing::usage_error_text([&] {
              relabel_image_list(*list, {0, 1}, {"a", "b"});
            }),
            "ImageFolder object of /data: 3 paths and 2 class ids; give one class id per path");
  EXPECT_EQ(stoker::testing::usage_error_text([&] {
              relabel_image_list(*list, {0, 2, 1}, {"a", "b"});
            }),
            "ImageFolder object of /data: sample 1 (/data/a/1.png) has class id 2, and there are 2 classes (ids 0 "
            "to 1)");
  EXPECT_EQ(list->label(1), 0);  // left as it was
}

TEST(ImageListTest, APathListHoldsEachPathInOrderAndTheListMadeOfItNamesThem) {
  PathList paths;
  for (const char* path : {"/data/a/0.png", "", "/data/b/\xff.jpg"}) paths.push_back(path);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0], "/data/a/0.png");
  EXPECT_EQ(paths[1], "");
  EXPECT_EQ(paths[2], "/data/b/\xff.jpg");
  auto list = open_image_list("ImageFolder object of /data", std::move(paths), {0, 1, 1}, {"a", "b"});
  EXPECT_EQ(list->name(2), "/data/b/\xff.jpg");
  EXPECT_EQ(list->label(2), 1);
}

// torchvision's IMG_EXTENSIONS, in any case; not .gif or .pbm, which its ImageFolder skips.
TEST(ImageListTest, TheFilesDecodedAreTorchvisionsImageExtensionsInAnyCase) {
  for (const char* path :
       {"a.jpg", "/d/b.JPEG", "c.PnG", "/d.x/.jpg", "a.bmp", "/d/a.jpg.webp", "x.Tif", "x.tiff", "y.ppm", "z.PGM"}) {
    EXPECT_TRUE(decodes_image_file(path)) << path;
  }
  for (const char* path : {"a.gif", "b.pbm", "/d/a.webp.txt", "/d.jpg/x", "jpg", "a.jpgx", ""}) {
    EXPECT_FALSE(decodes_image_file(path)) << path;
  }
}

}  // namespace
}  // namespace stoker::data
