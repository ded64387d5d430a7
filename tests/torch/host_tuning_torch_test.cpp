// The BLAS half of stoker/core/host_tuning.h, in a process that has libtorch and therefore
// whichever libblas.so.3 the system points at (OpenBLAS on Debian with libopenblas0-pthread).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "stoker/core/host_tuning.h"

namespace stoker {
namespace {

struct OpenBlasProbe {
  int (*parallel)() = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  int (*threads)() = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  void (*set)(int) = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  bool found() const { return parallel != nullptr && threads != nullptr && set != nullptr; }
};

TEST(HostTuningTorchTest, PthreadsOpenBlasRunsOneThreadBesideLibtorchsPool) {
  unsetenv("OPENBLAS_NUM_THREADS");
  unsetenv("GOTO_NUM_THREADS");
  (void)torch::ones({4, 4}).mm(torch::ones({4, 4}));  // the BLAS is loaded and initialised
  const OpenBlasProbe blas;
  if (!blas.found()) GTEST_SKIP() << "libtorch's BLAS here is not OpenBLAS";
  if (blas.parallel() != 1) GTEST_SKIP() << "OpenBLAS here is not the pthreads build";
  blas.set(2);  // as on a 2-core machine at start
  const HostTuning t = tune_host_for_training();
  EXPECT_EQ(blas.threads(), 1);
  EXPECT_EQ(t.blas, "OpenBLAS 1 thread");
  EXPECT_EQ(t.blas_reason, "was 2 threads; its own pool fights libtorch's OpenMP threads");
}

TEST(HostTuningTorchTest, OpenBlasThreadsFromTheEnvironmentAreKept) {
  const OpenBlasProbe blas;
  if (!blas.found()) GTEST_SKIP() << "libtorch's BLAS here is not OpenBLAS";
  setenv("OPENBLAS_NUM_THREADS", "2", 1);
  blas.set(2);
  const HostTuning t = tune_host_for_training();
  EXPECT_EQ(blas.threads(), 2);
  EXPECT_EQ(t.blas, "OpenBLAS 2 threads");
  EXPECT_EQ(t.blas_reason, "OPENBLAS_NUM_THREADS");
  unsetenv("OPENBLAS_NUM_THREADS");
}

}  // namespace
}  // namespace stoker
