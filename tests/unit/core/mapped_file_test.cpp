// MappedFile: a file that shrinks while it is mapped is one line naming it, not a bare SIGBUS.
#include "stoker/core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

using testing::TempDir;

TEST(MappedFileDeathTest, AFileTruncatedWhileMappedIsOneLineNamingIt) {
  // What np.save over the features does to a training run that has them mapped.
  TempDir dir;
  const std::string path = dir.write("features.npy", std::vector<uint8_t>(1 << 16, 7));
  EXPECT_EXIT(
      {
        const MappedFile map(path);
        if (map.bytes()[40000] != 7) std::_Exit(2);
        if (::truncate(path.c_str(), 0) != 0) std::_Exit(3);
        const volatile uint8_t gone = map.bytes()[40000];
        std::_Exit(gone == 0 ? 4 : 5);  // not reached: the read above faults
      },
      ::testing::ExitedWithCode(1),
      "^error: .*features\\.npy changed while it was being read: it is shorter than when it was opened "
      "\\(rewritten or truncated\\?\\); leave data files as they are while stoker reads them, or copy them first\n$");
}

TEST(MappedFileDeathTest, TheLastOfAThousandMapsIsNamedToo) {
  // ImageNet as WebDataset shards: 1,282 files of 1,000 samples (webdataset's own example),
  // every one mapped while the loader runs.
  TempDir dir;
  constexpr int kFiles = 1282;
  std::vector<std::string> paths;
  for (int i = 0; i < kFiles; ++i) {
    paths.push_back(dir.write("shard-" + std::to_string(i) + ".tar", std::vector<uint8_t>(8192, 7)));
  }
  EXPECT_EXIT(
      {
        std::vector<MappedFile> maps;
        for (const std::string& path : paths) maps.emplace_back(path);
        if (::truncate(paths.back().c_str(), 0) != 0) std::_Exit(3);
        const volatile uint8_t gone = maps.back().bytes()[5000];
        std::_Exit(gone == 0 ? 4 : 5);  // not reached: the read above faults
      },
      ::testing::ExitedWithCode(1), "^error: .*shard-1281\\.tar changed while it was being read");
}

TEST(MappedFileDeathTest, OtherBusErrorsGoToTheHandlerThatWasThereBefore) {
  TempDir dir;
  const std::string path = dir.write("x.bin", std::vector<uint8_t>(4096, 1));
  const auto raise_outside_any_map = [&] {
    const MappedFile map(path);
    std::raise(SIGBUS);
    std::_Exit(0);
  };
#if defined(STOKER_UNDER_ASAN)
  // Under AddressSanitizer the handler there before is its own: it reports and exits 1.
  EXPECT_EXIT(raise_outside_any_map(), ::testing::ExitedWithCode(1), "AddressSanitizer: BUS");
#else
  EXPECT_EXIT(raise_outside_any_map(), ::testing::KilledBySignal(SIGBUS), "");  // the default action
#endif
}

}  // namespace
}  // namespace stoker
