// How stoker finds and loads nvJPEG: the fake libnvjpeg.so.12 of tests/fake_nvjpeg (complete,
// and without nvjpegDecodeBatchedEx), no library at all, the search order, and a real nvJPEG
// where this machine has one (skipped where not).
#include "data/decode/gpu/nvjpeg_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "support/temp_dir.h"

namespace stoker::data::gpu {
namespace {

// Only these folders: no soname through the linker, no toolkit, no override.
NvjpegSearch in_folders(std::vector<std::string> dirs) {
  NvjpegSearch search;
  search.dirs = std::move(dirs);
  return search;
}

void expect_every_function(const NvjpegLibrary& nvjpeg) {
  const NvjpegFunctions& f = nvjpeg.fn();
  const void* resolved[] = {
      reinterpret_cast<const void*>(f.get_property),
      reinterpret_cast<const void*>(f.create_ex),
      reinterpret_cast<const void*>(f.destroy),
      reinterpret_cast<const void*>(f.set_device_memory_padding),
      reinterpret_cast<const void*>(f.jpeg_state_create),
      reinterpret_cast<const void*>(f.jpeg_state_destroy),
      reinterpret_cast<const void*>(f.get_image_info),
      reinterpret_cast<const void*>(f.decode_batched_initialize),
      reinterpret_cast<const void*>(f.decode_batched),
      reinterpret_cast<const void*>(f.decode_batched_ex),
      reinterpret_cast<const void*>(f.decode_batched_pre_allocate),
      reinterpret_cast<const void*>(f.decode_batched_supported_ex),
      reinterpret_cast<const void*>(f.jpeg_stream_create),
      reinterpret_cast<const void*>(f.jpeg_stream_destroy),
      reinterpret_cast<const void*>(f.jpeg_stream_parse),
      reinterpret_cast<const void*>(f.jpeg_stream_get_frame_dimensions),
      reinterpret_cast<const void*>(f.decode_params_create),
      reinterpret_cast<const void*>(f.decode_params_destroy),
      reinterpret_cast<const void*>(f.decode_params_set_output_format),
      reinterpret_cast<const void*>(f.decode_params_set_roi),
      reinterpret_cast<const void*>(f.decode_params_set_scale_factor),
      reinterpret_cast<const void*>(f.decoder_create),
      reinterpret_cast<const void*>(f.decoder_destroy),
      reinterpret_cast<const void*>(f.decoder_state_create),
      reinterpret_cast<const void*>(f.buffer_device_create),
      reinterpret_cast<const void*>(f.buffer_device_destroy),
      reinterpret_cast<const void*>(f.state_attach_device_buffer),
      reinterpret_cast<const void*>(f.decode_jpeg),
      reinterpret_cast<const void*>(f.get_hardware_decoder_info),
  };
  ASSERT_EQ(std::size(resolved), NvjpegLibrary::symbol_names().size());
  for (size_t i = 0; i < std::size(resolved); ++i) {
    EXPECT_NE(resolved[i], nullptr) << NvjpegLibrary::symbol_names()[i];
  }
}

TEST(NvjpegLibraryTest, LoadsTheFakeFromAFolderAndResolvesEveryFunction) {
  std::string why_not;
  const auto nvjpeg = NvjpegLibrary::load(in_folders({testing::fake_nvjpeg_dir()}), &why_not);
  ASSERT_NE(nvjpeg, nullptr) << why_not;
  EXPECT_EQ(nvjpeg->name(), testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12");
  expect_every_function(*nvjpeg);
  EXPECT_EQ(nvjpeg->version(), "12.99.7");  // the fake's own answer: the call reached it
}

TEST(NvjpegLibraryTest, ALibraryWithoutOneFunctionIsNamedWithTheFunction) {
  std::string why_not;
  EXPECT_EQ(NvjpegLibrary::load(in_folders({testing::fake_nvjpeg_partial_dir()}), &why_not), nullptr);
  EXPECT_EQ(why_not.find('\n'), std::string::npos);
  EXPECT_NE(why_not.find("nvJPEG unusable: " + testing::fake_nvjpeg_partial_dir() +
                         "/libnvjpeg.so.12 has no "
                         "nvjpegDecodeBatchedEx"),
            std::string::npos)
      << why_not;
  EXPECT_NE(why_not.find("install"), std::string::npos) << why_not;
}

TEST(NvjpegLibraryTest, AnIncompleteLibraryIsPassedOverForACompleteOne) {
  std::string why_not;
  const auto nvjpeg =
      NvjpegLibrary::load(in_folders({testing::fake_nvjpeg_partial_dir(), testing::fake_nvjpeg_dir()}), &why_not);
  ASSERT_NE(nvjpeg, nullptr) << why_not;
  EXPECT_EQ(nvjpeg->name(), testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12");
}

TEST(NvjpegLibraryTest, NoLibraryIsOneLineNamingWhatWasTriedAndWhatToInstall) {
  testing::TempDir empty;
  NvjpegSearch search = in_folders({empty.str()});
  search.names = {"libnvjpeg-absent.so.99"};
  std::string why_not;
  EXPECT_EQ(NvjpegLibrary::load(search, &why_not), nullptr);
  EXPECT_EQ(why_not, "nvJPEG not found (tried: libnvjpeg-absent.so.99, " + empty.str() +
                         "); install pip's nvidia-nvjpeg-cu12 (or torchvision, which bundles it) or the CUDA "
                         "toolkit's libnvjpeg, or set STOKER_NVJPEG to its path");
}

TEST(NvjpegLibraryTest, TheOverrideIsTheOnlyCandidateAndItsFailureSaysSo) {
  NvjpegSearch search = in_folders({testing::fake_nvjpeg_dir()});
  search.override_path = "/nowhere/libnvjpeg.so.12";
  EXPECT_EQ(NvjpegLibrary::candidates(search), std::vector<std::string>{"/nowhere/libnvjpeg.so.12"});
  std::string why_not;
  EXPECT_EQ(NvjpegLibrary::load(search, &why_not), nullptr);
  EXPECT_TRUE(why_not.starts_with("nvJPEG not loaded from STOKER_NVJPEG=/nowhere/libnvjpeg.so.12 (")) << why_not;
  EXPECT_NE(why_not.find("unset it"), std::string::npos) << why_not;

  search.override_path = testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12";
  EXPECT_NE(NvjpegLibrary::load(search, &why_not), nullptr) << why_not;
}

// An environment variable set (or unset) for a scope, restored after it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* before = std::getenv(name);
    had_ = before != nullptr;
    if (had_) before_ = before;
    set(value);
  }
  ~ScopedEnv() { set(had_ ? before_.c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void set(const char* value) {
    if (value != nullptr) {
      ::setenv(name_, value, 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string before_;
};

TEST(NvjpegLibraryTest, TheStandardSearchGoesOverrideNamesToolkitThenTheCallersFolders) {
  ScopedEnv override_path("STOKER_NVJPEG", nullptr);
  ScopedEnv cuda_home("CUDA_HOME", "/opt/cuda-x");
  ScopedEnv cuda_path("CUDA_PATH", nullptr);
  NvjpegSearch search = NvjpegSearch::standard({"/site/nvidia/nvjpeg/lib", "/site/torchvision.libs"});
  EXPECT_EQ(search.override_path, "");
  EXPECT_EQ(search.names, (std::vector<std::string>{"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11"}));
  EXPECT_EQ(search.dirs, (std::vector<std::string>{"/opt/cuda-x/lib64", "/usr/local/cuda/lib64",
                                                   "/site/nvidia/nvjpeg/lib", "/site/torchvision.libs"}));

  // A folder named twice is searched once.
  cuda_home.set("/usr/local/cuda/");
  cuda_path.set("/usr/local/cuda");
  EXPECT_EQ(NvjpegSearch::standard({"/usr/local/cuda/lib64"}).dirs, std::vector<std::string>{"/usr/local/cuda/lib64"});

  override_path.set("/mine/libnvjpeg.so");
  EXPECT_EQ(NvjpegSearch::standard().override_path, "/mine/libnvjpeg.so");
}

TEST(NvjpegLibraryTest, ANewerSonameInAFolderIsTriedFirst) {
  testing::TempDir dir;
  for (const char* name : {"libnvjpeg.so", "libnvjpeg.so.12", "libnvjpeg.so.13", "libnvjpeg.a", "libother.so"}) {
    dir.write(name, {});
  }
  EXPECT_EQ(NvjpegLibrary::candidates(in_folders({dir.str()})),
            (std::vector<std::string>{dir.str() + "/libnvjpeg.so.13", dir.str() + "/libnvjpeg.so.12",
                                      dir.str() + "/libnvjpeg.so"}));
}

// Where this machine has a real nvJPEG (a CUDA toolkit, or STOKER_NVJPEG naming a wheel's or
// torchvision's copy), it loads and has every function stoker calls.
TEST(NvjpegLibraryTest, ARealNvjpegLoadsWithEveryFunction) {
  std::string why_not;
  const auto nvjpeg = NvjpegLibrary::load(NvjpegSearch::standard(), &why_not);
  if (nvjpeg == nullptr && why_not.starts_with("nvJPEG not found")) GTEST_SKIP() << why_not;
  ASSERT_NE(nvjpeg, nullptr) << why_not;
  expect_every_function(*nvjpeg);
  EXPECT_NE(nvjpeg->version(), "unknown version");
}

}  // namespace
}  // namespace stoker::data::gpu
