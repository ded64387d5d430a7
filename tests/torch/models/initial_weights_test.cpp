// Starting weights (--weights): torchvision's own state_dict files (torch.save by Debian's
// python3-torch, skipped without it) load into stoker's ResNet-18 and compute torchvision's
// outputs; a classifier of another class count keeps its initialisation; a colour first
// convolution is summed for grey inputs; torchvision's checkpoint and a DDP state_dict read the
// same; another architecture and a pre-1.6 file are refused with the model unchanged; a stoker
// export loads back.
#include "train/torch/model/initial_weights.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/state_dict.h"
#include "support/error_text.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "torch/param_diff.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {
namespace {

using stoker::testing::run_command;
using stoker::testing::TempDir;
using testing::max_difference;

constexpr const char* kWriteStateDicts = R"PY(
import sys, torch, torchvision
d = sys.argv[1]
torch.manual_seed(0)
m = torchvision.models.resnet18()
m.train()
with torch.no_grad():  # running statistics away from 0 and 1, so buffers matter
    m(torch.randn(4, 3, 64, 64) * 2 + 0.5)
    m(torch.randn(4, 3, 64, 64))
m.eval()
x = torch.randn(2, 3, 64, 64)
with torch.no_grad():
    y = m(x)
torch.save(m.state_dict(), d + "/rn18.pth")
torch.save({"model": m.state_dict(), "epoch": 3, "args": {"lr": 0.1}}, d + "/checkpoint.pth")
torch.save({"module." + k: v for k, v in m.state_dict().items()}, d + "/ddp.pth")
torch.save({"x": x, "y": y, "conv1": m.conv1.weight.detach()}, d + "/io.pt")
torch.save(m.state_dict(), d + "/legacy.pth", _use_new_zipfile_serialization=False)
)PY";

torch::Tensor stored(const std::vector<data::StoredTensor>& tensors, const std::string& name) {
  for (const auto& t : tensors) {
    if (t.name == name) return torch::from_blob(const_cast<float*>(t.floats.data()), t.shape, torch::kFloat32).clone();
  }
  ADD_FAILURE() << name << " not in the file";
  return {};
}

// The script runs once for the suite's tests (one process per suite: cmake/TestSuites.cmake),
// which only read its files.
class TorchvisionWeightsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    missing_ = stoker::testing::torchvision_missing();
    if (!missing_.empty()) return;
    dir_ = std::make_unique<TempDir>();
    const auto r = run_command("/usr/bin/python3 -c '" + std::string(kWriteStateDicts) + "' " + dir_->str());
    written_ = r.exit_code == 0;
    error_ = r.err;
    if (written_) io_ = data::read_state_dict(dir_->str() + "/io.pt");
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void SetUp() override {
    if (!missing_.empty()) GTEST_SKIP() << missing_;
    ASSERT_TRUE(written_) << error_;
  }
  static std::string file(const std::string& name) { return dir_->str() + "/" + name; }
  static inline std::string missing_, error_;
  static inline bool written_ = false;
  static inline std::unique_ptr<TempDir> dir_;
  static inline std::vector<data::StoredTensor> io_;
};

TEST_F(TorchvisionWeightsTest, ResNet18ComputesTorchvisionsOutputs) {
  auto model = make_model("resnet18", {3, 64, 64}, 1000);
  EXPECT_EQ(load_initial_weights(*model, "resnet18", file("rn18.pth")), "122 tensors");  // 62 parameters, 60 buffers
  model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor y = model->forward(stored(io_, "x"));
  EXPECT_LT((y - stored(io_, "y")).abs().max().item<double>(), 1e-4);
}

TEST_F(TorchvisionWeightsTest, AnotherClassCountKeepsItsClassifierAndGreyInputsSumTheColours) {
  torch::manual_seed(3);
  auto model = make_model("resnet18", {1, 64, 64}, 10);
  const torch::Tensor fc_before = model->named_parameters()["fc.weight"].detach().clone();
  EXPECT_EQ(load_initial_weights(*model, "resnet18", file("rn18.pth")),
            "120 tensors · fc.weight, fc.bias left as initialised (1000 classes there, 10 here) · conv1.weight summed "
            "over RGB for 1-channel inputs");
  EXPECT_TRUE(torch::equal(model->named_parameters()["fc.weight"], fc_before));
  EXPECT_TRUE(torch::allclose(model->named_parameters()["conv1.weight"], stored(io_, "conv1").sum(1, true)));
  // torchvision's checkpoint ({"model": ...}) and a DDP state_dict ("module.") are the same weights.
  for (const char* other : {"checkpoint.pth", "ddp.pth"}) {
    torch::manual_seed(3);
    auto again = make_model("resnet18", {1, 64, 64}, 10);
    load_initial_weights(*again, "resnet18", file(other));
    EXPECT_EQ(max_difference(*again, *model), 0) << other;
  }
}

TEST_F(TorchvisionWeightsTest, AnotherArchitectureIsRefusedAndTheModelUnchanged) {
  torch::manual_seed(4);
  auto model = make_model("resnet50", {3, 64, 64}, 10);
  torch::manual_seed(4);
  auto untouched = make_model("resnet50", {3, 64, 64}, 10);
  EXPECT_EQ(stoker::testing::usage_error_text([&] { load_initial_weights(*model, "resnet50", file("rn18.pth")); }),
            "weights " + file("rn18.pth") +
                ": layer1.0.conv1.weight is (64, 64, 3, 3) there and (64, 64, 1, 1) in resnet50; these weights are for "
                "another model or another input size");
  EXPECT_EQ(max_difference(*model, *untouched), 0);
  // A file in the format before PyTorch 1.6: the line says how to save it again.
  EXPECT_EQ(
      stoker::testing::error_text<DataError>([&] { load_initial_weights(*model, "resnet50", file("legacy.pth")); }),
      file("legacy.pth") +
          " is not a torch.save zip archive (PyTorch 1.6 and later write one; for an older file, "
          "torch.save(torch.load(\"" +
          file("legacy.pth") + "\"), \"new.pth\") and give new.pth)");
}

// No Python needed: a stoker export (an mlp's model.safetensors) starts another run's model,
// and one with a tensor too few is refused naming it.
TEST(InitialWeightsTest, AStokerExportLoadsBackAndAShortFileIsRefused) {
  TempDir dir;
  torch::manual_seed(5);
  auto trained = make_model("mlp", {1, 8, 8}, 10);
  save_safetensors(*trained, dir.str() + "/model.safetensors");
  torch::manual_seed(6);
  auto fresh = make_model("mlp", {1, 8, 8}, 10);
  ASSERT_GT(max_difference(*fresh, *trained), 0);
  load_initial_weights(*fresh, "mlp", dir.str() + "/model.safetensors");
  EXPECT_EQ(max_difference(*fresh, *trained), 0);

  NamedTensors some;
  for (const auto& item : trained->named_parameters()) some.emplace_back(item.key(), item.value());
  const std::string dropped = some.front().first;
  some.erase(some.begin());
  save_safetensors(some, dir.str() + "/short.safetensors");
  const std::string message =
      stoker::testing::usage_error_text([&] { load_initial_weights(*fresh, "mlp", dir.str() + "/short.safetensors"); });
  EXPECT_NE(message.find("do not fit mlp: 1 of the model's tensors are not in the file (first: " + dropped + ")"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace stoker::train
