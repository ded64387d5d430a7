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

}  // namespace doctor_report_test
}  // namespace stoker::diagnose
