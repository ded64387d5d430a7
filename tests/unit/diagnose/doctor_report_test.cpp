// The doctor's text report: what it says about the CUDA feed's configuration.
#include <gtest/gtest.h>

#include <string>

#include "diagnose/doctor/doctor_findings.h"

namespace stoker::diagnose {
namespace doctor_report_test {

DoctorFindings cuda_findings() {
  DoctorFindings f;
  f.model = "resnet18";
  f.device = "cuda:0";
  f.cuda = true;
  f.batch_size = 256;
  f.cores = 16;
  f.configured_workers = 16;
  f.loader.push_back({16, 9000, {}});
  f.model_runs.push_back({"as configured", 256, 12000, ""});
  return f;
}

std::string report(const DoctorFindings& f) {
  ::testing::internal::CaptureStdout();
  print_doctor_text(f, {}, std::nullopt);
  return ::testing::internal::GetCapturedStdout();
}

TEST(DoctorReportTest, GpuDecodingIsNamedWithWhatTheLoaderAloneLeavesOut) {
  DoctorFindings f = cuda_findings();
  EXPECT_EQ(report(f).find("decode       "), std::string::npos);
  f.gpu_decoder = "nvJPEG 13.0.1: hardware engine (7 engines) + CUDA path";
  EXPECT_NE(report(f).find("decode       JPEGs on the GPU (nvJPEG 13.0.1: hardware engine (7 engines) + CUDA path): "
                           "the loader alone leaves them undecoded, together decodes them\n"),
            std::string::npos);
}

// Together cannot beat the slower side alone; measured so, the machine's load changed between
// the probes: on 2 shared cores one run read the model alone at 127 samples/s and together at
// 182, the run before at 617 and 172, and each ranked its changes from those figures.
TEST(DoctorReportTest, TogetherFasterThanTheSlowerSideAloneIsCalledUnreliable) {
  DoctorFindings f;
  f.model = "mlp";
  f.device = "cpu";
  f.batch_size = 32;
  f.cores = 2;
  f.configured_workers = 1;
  f.loader.push_back({1, 677, {}});
  f.model_runs.push_back({"as configured", 32, 127, ""});
  f.joint.workers = 1;
  f.joint.window = {0.0, 0.0, 1.0, 10, 182, -1, ""};  // 182 samples/s
  const std::string note =
      "note         together measured 143 % of the slower side alone, which it cannot reach: the machine's load "
      "changed between the probes; run stoker doctor again on a quieter machine before acting on these figures\n";
  EXPECT_NE(report(f).find(note), std::string::npos) << report(f);
  f.joint.window.samples = 120;  // below the model alone: consistent
  EXPECT_EQ(report(f).find("which it cannot reach"), std::string::npos) << report(f);
}

}  // namespace doctor_report_test
}  // namespace stoker::diagnose
