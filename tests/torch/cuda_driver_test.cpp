// DriverStream's refusals: a missing or incomplete CUDA driver is one line, never a crash. (A
// stream on a real driver needs a GPU: the pending GPU checks run stoker train --decode gpu.)
#include "train/torch/step/cuda_driver.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker::train {
namespace cuda_driver_test {

TEST(DriverStreamTest, AMissingDriverIsOneLineNamingWhatToInstall) {
  std::string why_not;
  EXPECT_EQ(DriverStream::open("/nonexistent/libcuda.so.1", &why_not), nullptr);
  EXPECT_TRUE(why_not.starts_with("the CUDA driver could not be opened (/nonexistent/libcuda.so.1")) << why_not;
  EXPECT_TRUE(why_not.ends_with("); install the NVIDIA driver")) << why_not;
  EXPECT_EQ(why_not.find('\n'), std::string::npos);
}

TEST(DriverStreamTest, ALibraryWithoutTheDriversFunctionsIsRefusedNamingTheFirstMissing) {
  std::string why_not;
  EXPECT_EQ(DriverStream::open("libm.so.6", &why_not), nullptr);
  EXPECT_EQ(why_not, "the CUDA driver libm.so.6 has no cuStreamCreate; install a newer NVIDIA driver");
}

}  // namespace cuda_driver_test
}  // namespace stoker::train
