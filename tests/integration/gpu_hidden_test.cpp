// The integration tests check what stoker does on the CPU: bit-identical resumes, the CPU
// figures of `stoker check`, verdicts of CPU runs. On a machine with a GPU, the stoker they
// start would pick it (--device auto) and those checks would test something else, so every
// process this binary starts sees no CUDA device. NVML is not affected (the monitor's tests
// script their own). What only a GPU can check: the Cuda* tests and bench/gpu_acceptance.sh.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class HideGpus : public ::testing::Environment {
 public:
  void SetUp() override { setenv("CUDA_VISIBLE_DEVICES", "", 1); }
};

const ::testing::Environment* const kHideGpus = ::testing::AddGlobalTestEnvironment(new HideGpus);

TEST(IntegrationEnvironment, StokerStartedHereSeesNoCudaDevice) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  ASSERT_NE(visible, nullptr);
  EXPECT_STREQ(visible, "");
}

}  // namespace
