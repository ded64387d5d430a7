// `stoker check` end to end: the text lines, --json, a fake NVML GPU that libtorch (a CPU
// build here) cannot use, --data on a small image folder, and one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stoker/data/encode.h"
#include "stoker_program.h"
#include "support/build_paths.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

using stoker::testing::expect_one_line_errors;
using stoker::testing::run_command;
using stoker::testing::TempDir;

using testing::kStoker;
constexpr const char* kQuick = " --seconds 0.2";

// Runs stoker with the fake NVML first on the library path, scripted by `script`.
std::string with_fake_nvml(const TempDir& dir, const std::string& script) {
  const std::string path = dir.write_text("nvml.txt", script);
  const std::string lib_dir = std::filesystem::path(testing::fake_nvml_path()).parent_path().string();
  return "LD_LIBRARY_PATH=" + lib_dir + " STOKER_FAKE_NVML_SCRIPT=" + path + " ";
}

bool has_line_starting(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0 || text.find("\n" + prefix) != std::string::npos;
}

TEST(CheckCli, TextReportHasEveryLine) {
  TempDir dir;
  const auto r = run_command(with_fake_nvml(dir, "gpus=0\n") + kStoker + " check" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line_starting(r.out, "CPU      ")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "disk     ")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "GPU      none found (NVML: NVML sees no GPU) · CPU figures only")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "measured cpu")) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "         JPEG decode ")) << r.out;
  EXPECT_NE(r.out.find(" img/s per core · data dir read skipped (no --data given)"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "suggest  amp ")) << r.out;
  EXPECT_NE(r.out.find(" for resnet50 on cpu"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "estimate resnet50 on ImageNet-1k train (1,281,167 images")) << r.out;
  EXPECT_NE(r.out.find("/epoch (input ceiling "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("estimates from microbenchmarks"), std::string::npos) << r.out;
  if (!STOKER_HAS_TORCH) {
    EXPECT_NE(r.out.find("matmul skipped (built without libtorch)"), std::string::npos) << r.out;
  }
}

// The BLAS libtorch calls: named on the measured line, and the reference BLAS (Debian's
// netlib build, put first on the library path here) gets a warning with the fix.
TEST(CheckCli, NamesTheBlasAndWarnsAboutTheReferenceOne) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch: no BLAS is loaded";
  TempDir dir;
  const auto r = run_command(with_fake_nvml(dir, "gpus=0\n") + kStoker + " check --json" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["torch"]["blas"].is_string()) << j["torch"].dump();
  EXPECT_FALSE(j["torch"]["blas_reference"].get<bool>()) << j["torch"].dump();

  const std::string reference_dir = "/usr/lib/x86_64-linux-gnu/blas";
  if (!std::filesystem::exists(reference_dir + "/libblas.so.3")) GTEST_SKIP() << "no reference BLAS installed";
  const std::string env = "LD_LIBRARY_PATH=" + reference_dir + " STOKER_FAKE_NVML_SCRIPT=/nonexistent ";
  const auto text = run_command(env + kStoker + " check" + kQuick);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(" · BLAS reference BLAS (" + reference_dir + "/libblas.so.3"), std::string::npos) << text.out;
  EXPECT_TRUE(has_line_starting(text.out, "warning  libtorch calls the reference BLAS")) << text.out;
  EXPECT_NE(text.out.find("apt-get install libopenblas0-pthread"), std::string::npos) << text.out;
}

TEST(CheckCli, JsonHasEveryFigureOrAReason) {
  TempDir dir;
  const auto r = run_command(with_fake_nvml(dir, "gpus=0\n") + kStoker + " check --json --model resnet18" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "resnet18");
  EXPECT_FALSE(j["cpu"]["model"].get<std::string>().empty());
  EXPECT_GE(j["cpu"]["usable_cores"].get<int>(), 1);
  EXPECT_GT(j["memory"]["total_bytes"].get<double>(), 0);
  EXPECT_GT(j["disk"]["size_bytes"].get<double>(), 0);
  EXPECT_TRUE(j["gpus"].empty());
  EXPECT_EQ(j["nvml"]["skipped"], "NVML sees no GPU");
  EXPECT_GT(j["measured"]["jpeg_decode"]["images_per_s_per_core"].get<double>(), 0);
  EXPECT_TRUE(j["measured"]["data_read"]["bytes_per_s"].is_null());
  EXPECT_EQ(j["measured"]["data_read"]["skipped"], "no --data given");
  EXPECT_TRUE(j["measured"]["h2d"]["pinned"]["gb_per_s"].is_null());
  EXPECT_TRUE(j["measured"]["h2d"]["pinned"]["skipped"].is_string());
  EXPECT_EQ(j["measured"]["matmul"]["device"], "cpu");
  const auto& fp32 = j["measured"]["matmul"]["cpu"]["fp32"];
  if (STOKER_HAS_TORCH) {
    EXPECT_GT(fp32["tflops"].get<double>(), 0) << fp32;
    EXPECT_GT(j["estimate"]["compute_ceiling_images_per_s"].get<double>(), 0);
  } else {
    EXPECT_TRUE(fp32["tflops"].is_null());
    EXPECT_EQ(fp32["skipped"], "built without libtorch");
  }
  EXPECT_TRUE(j["suggest"]["amp"] == "bf16" || j["suggest"]["amp"] == "off") << j["suggest"];
  EXPECT_GE(j["suggest"]["workers"].get<int>(), 1);
  EXPECT_GT(j["estimate"]["epoch_seconds"].get<double>(), 0);
  EXPECT_EQ(j["estimate"]["images"], 1'281'167);
  EXPECT_NE(j["note"].get<std::string>().find("estimates from microbenchmarks"), std::string::npos);
}

TEST(CheckCli, FakeNvmlGpuShowsWithTorchFiguresSkipped) {
  TempDir dir;
  const std::string env =
      with_fake_nvml(dir, "gpus=1\ndriver=580.159\nname0=Fake H100\nmem_total0=85899345920\nmem_used0=1000000000\n");
  const auto json_run = run_command(env + kStoker + " check --json" + kQuick);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const nlohmann::json j = nlohmann::json::parse(json_run.out);
  if (j["torch"]["cuda_devices"] != 0) GTEST_SKIP() << "libtorch sees a real CUDA device here";
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["name"], "Fake H100");
  EXPECT_EQ(j["gpus"][0]["memory_total_bytes"], 85899345920.0);
  EXPECT_EQ(j["gpus"][0]["driver"], "580.159");
  EXPECT_TRUE(j["gpus"][0]["compute_capability"].is_null());
  EXPECT_TRUE(j["gpus"][0]["skipped"].is_string());
  EXPECT_TRUE(j["measured"]["matmul"]["cuda"]["bf16"]["tflops"].is_null());
  EXPECT_TRUE(j["measured"]["matmul"]["cuda"]["bf16"]["skipped"].is_string());
  EXPECT_TRUE(j["measured"]["h2d"]["pageable"]["gb_per_s"].is_null());
  EXPECT_EQ(j["suggest"]["device"], "cpu");

  const auto text = run_command(env + kStoker + " check" + kQuick);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(has_line_starting(text.out, "GPU0     Fake H100 · 80.0 GiB · driver 580.159 · libtorch skipped ("))
      << text.out;
  EXPECT_NE(text.out.find(" · GPU matmul and H2D skipped ("), std::string::npos) << text.out;
}

TEST(CheckCli, DataDirIsReadAndCounted) {
  TempDir dir;
  const auto jpeg = data::encode_jpeg(stoker::testing::make_photo_like(64, 48));
  for (const char* name : {"set/cat/1.jpg", "set/cat/2.jpg", "set/dog/3.jpg", "set/dog/4.jpg"}) dir.write(name, jpeg);
  const std::string env = with_fake_nvml(dir, "gpus=0\n");
  const auto text = run_command(env + kStoker + " check --data " + dir.str() + "/set" + kQuick);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(" · data dir read "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("/s ("), std::string::npos) << "a rate with its page-cache note\n" << text.out;
  EXPECT_NE(text.out.find("disk     " + std::filesystem::canonical(dir.path() / "set").string()), std::string::npos)
      << text.out;
  EXPECT_TRUE(has_line_starting(text.out, "estimate resnet50 on this data (4 images): ")) << text.out;
  EXPECT_NE(text.out.find(" · restart markers in 0 of 4 sampled JPEGs (crops decode every row above them; "
                          "`stoker prepare` adds them losslessly)"),
            std::string::npos)
      << text.out;

  const auto json_run = run_command(env + kStoker + " check --json --data " + dir.str() + "/set" + kQuick);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const nlohmann::json j = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(j["dataset"]["images"], 4);
  EXPECT_EQ(j["measured"]["data_read"]["files"], 4);
  EXPECT_EQ(j["measured"]["data_read"]["bytes"], 4 * jpeg.size());
  EXPECT_TRUE(j["measured"]["data_read"]["all_read"].get<bool>());
  EXPECT_GT(j["measured"]["data_read"]["bytes_per_s"].get<double>(), 0);
  EXPECT_EQ(j["estimate"]["images_from"], "--data");
  EXPECT_EQ(j["dataset"]["jpegs_sampled"], 4);
  EXPECT_EQ(j["dataset"]["jpegs_with_restart_markers"], 0);

  // A prepared copy: every sampled JPEG has them, and no advice.
  dir.write("prepared/cat/1.jpg", data::add_restart_markers(jpeg));
  dir.write("prepared/dog/2.jpg", data::add_restart_markers(jpeg));
  const auto prepared = run_command(env + kStoker + " check --data " + dir.str() + "/prepared" + kQuick);
  ASSERT_EQ(prepared.exit_code, 0) << prepared.err;
  EXPECT_NE(prepared.out.find(" · restart markers in 2 of 2 sampled JPEGs\n"), std::string::npos) << prepared.out;
}

TEST(CheckCli, DataThatIsNotADatasetStillGetsTheReadFigure) {
  TempDir dir;
  dir.write_text("notes/readme.txt", "not images");
  const auto r =
      run_command(with_fake_nvml(dir, "gpus=0\n") + kStoker + " check --json --data " + dir.str() + "/notes" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["measured"]["data_read"]["bytes_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["dataset"]["images"].is_null());
  EXPECT_TRUE(j["dataset"]["skipped"].is_string());
  EXPECT_TRUE(j["estimate"]["epoch_seconds"].is_null());
  EXPECT_TRUE(j["estimate"]["skipped"].is_string());
}

TEST(CheckCli, BadOptionsAreOneLineWithExit2) {
  const std::vector<stoker::testing::ExpectedError> cases = {
      {"check --data /nonexistent-stoker-check", 2, "data directory /nonexistent-stoker-check does not exist"},
      {"check --seconds 0", 2, "--seconds must be > 0 (got 0)"},
      {"check --seconds -1", 2, "--seconds must be > 0 (got -1)"},
      {"check --model vgg16", 2,
       "unknown model 'vgg16' for --model (known: resnet50, resnet18, mnist_cnn, mlp, efficientnet_b0, "
       "efficientnet_b1, "},
      {"check --bogus", 2, "--bogus"},
  };
  expect_one_line_errors(kStoker + " ", cases);
}

}  // namespace
}  // namespace stoker
