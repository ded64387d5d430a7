// A damaged checkpoint is one DataError naming the file, whatever the damage: cut at any of
// 200 places, a byte changed at any of 200 places, not a checkpoint at all. Never a crash and
// never another kind of exception (these tests also run under AddressSanitizer).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {
namespace {

using testing::TempDir;

// A small run's checkpoint: an MLP, AdamW after one step (so the optimiser has state).
std::vector<uint8_t> small_checkpoint(const TempDir& dir) {
  torch::manual_seed(1);
  auto model = make_model("mlp", {1, 8, 8}, 10);
  torch::optim::AdamW optimizer(model->parameters());
  const torch::Tensor loss = model->forward(torch::randn({4, 1, 8, 8})).sum();
  loss.backward();
  optimizer.step();
  CheckpointMeta meta;
  meta.epoch = 2;
  meta.next_batch = 3;
  meta.global_step = 40;
  meta.seed = 7;
  meta.batch_size = 4;
  meta.model = "mlp";
  const std::string path = dir.str() + "/good.pt";
  save_checkpoint(path, *model, optimizer, meta);
  return testing::read_bytes(path);
}

// What loading `path` into a fresh MLP does: "" when it loads, else the DataError's message.
// Any other exception escapes and fails the test.
std::string load_error(const std::string& path) {
  auto model = make_model("mlp", {1, 8, 8}, 10);
  torch::optim::AdamW optimizer(model->parameters());
  try {
    load_checkpoint(path, *model, optimizer);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

void expect_one_line_naming(const std::string& message, const std::string& path, const std::string& what) {
  EXPECT_EQ(message.rfind("checkpoint " + path + " ", 0), 0u) << what << ": " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << what << ": " << message;
}

TEST(CheckpointFileTest, AGoodFileLoadsWithItsMeta) {
  TempDir dir;
  small_checkpoint(dir);
  EXPECT_EQ(load_error(dir.str() + "/good.pt"), "");
  const CheckpointMeta meta = read_checkpoint_meta(dir.str() + "/good.pt");
  EXPECT_EQ(meta.epoch, 2);
  EXPECT_EQ(meta.next_batch, 3);
  EXPECT_EQ(meta.global_step, 40);
  EXPECT_EQ(meta.model, "mlp");
}

TEST(CheckpointFileTest, AFileCutAnywhereIsOneLineNamingIt) {
  TempDir dir;
  const std::vector<uint8_t> good = small_checkpoint(dir);
  ASSERT_GT(good.size(), 1000u);
  const std::string path = dir.str() + "/cut.pt";
  for (size_t k = 0; k < 200; ++k) {
    const size_t length = good.size() * k / 200;
    dir.write("cut.pt", std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length)));
    const std::string message = load_error(path);
    ASSERT_NE(message, "") << "a checkpoint cut to " << length << " of " << good.size() << " bytes loaded";
    expect_one_line_naming(message, path, "cut to " + std::to_string(length));
  }
}

// libtorch checks each record's CRC-32 only in some versions, so a changed byte inside tensor
// data may load; what must not happen is a crash or a message of another kind.
TEST(CheckpointFileTest, AChangedByteLoadsOrIsOneLineNamingIt) {
  TempDir dir;
  const std::vector<uint8_t> good = small_checkpoint(dir);
  const std::string path = dir.str() + "/changed.pt";
  int refused = 0;
  for (size_t k = 0; k < 200; ++k) {
    std::vector<uint8_t> bytes = good;
    const size_t at = (good.size() - 1) * k / 199;
    bytes[at] ^= 0x5a;
    dir.write("changed.pt", bytes);
    const std::string message = load_error(path);
    if (message.empty()) continue;
    ++refused;
    expect_one_line_naming(message, path, "byte " + std::to_string(at) + " changed");
  }
  EXPECT_GT(refused, 0) << "no changed byte was noticed: the test would not see a broken reader";
}

TEST(CheckpointFileTest, WhatIsNotACheckpointIsOneLineNamingIt) {
  TempDir dir;
  torch::manual_seed(2);
  save_safetensors(*make_model("mlp", {1, 8, 8}, 10), dir.str() + "/weights.safetensors");
  dir.write_text("empty.pt", "");
  dir.write_text("text.pt", "not a checkpoint");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty.pt", "is corrupt or not a stoker checkpoint"},
      {"text.pt", "is corrupt or not a stoker checkpoint"},
      {"weights.safetensors", "is corrupt or not a stoker checkpoint"},
      {"missing.pt", "does not exist"},
  };
  for (const auto& [name, expected] : cases) {
    const std::string path = dir.str() + "/" + name;
    const std::string message = load_error(path);
    expect_one_line_naming(message, path, name);
    EXPECT_NE(message.find(expected), std::string::npos) << name << ": " << message;
  }
}

}  // namespace
}  // namespace stoker::train
