// When the doctor times a second step at the configured batch: the first one's one-time costs
// (cuDNN's algorithm search at a new shape, first allocations) must not stand for the step.
#include <gtest/gtest.h>

#include "diagnose/doctor/doctor_findings.h"

namespace stoker::diagnose {
namespace {

DoctorFindings::SlowStep first_step(double estimate_s, double first_s) {
  DoctorFindings::SlowStep s;
  s.estimate_s = estimate_s;
  s.first_s = first_s;
  return s;
}

TEST(DoctorSlowStepTest, AGpuTimesASecondStepWhenTheFirstOutlastsTheWindow) {
  // ResNet-50 at batch 128 on an H200: batch 1 said up to 3.8 s, the first step took 5.3 s.
  EXPECT_TRUE(first_step(3.8, 5.3).wants_second_step(/*cuda=*/true, 3));
  // Under the bound but over the window: on a GPU still the algorithm search, not the step.
  EXPECT_TRUE(first_step(10, 6).wants_second_step(true, 3));
}

TEST(DoctorSlowStepTest, TheCpuTimesASecondStepOnlyAboveTheBatchOneBound) {
  // mnist_cnn on 224-px images, 2 cores: a genuinely slow step, within its bound.
  EXPECT_FALSE(first_step(200, 150).wants_second_step(false, 3));
  // Slower than B steps of batch 1 can be only through one-time costs.
  EXPECT_TRUE(first_step(4, 9).wants_second_step(false, 3));
}

TEST(DoctorSlowStepTest, AFirstStepInsideTheWindowIsEnough) {
  EXPECT_FALSE(first_step(3.8, 2.5).wants_second_step(true, 3));
  EXPECT_FALSE(first_step(1, 2.5).wants_second_step(false, 3));
}

}  // namespace
}  // namespace stoker::diagnose
