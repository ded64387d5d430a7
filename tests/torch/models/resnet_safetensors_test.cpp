// resnet18/resnet50 are torchvision's models (same names, parameter counts, outputs), and
// safetensors files round-trip bit-identically, reject corrupt or foreign files with a
// DataError, fail to write with a SystemError, and load into torchvision with strict=True.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include "stoker/core/error.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "torchvision_interop.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> parameter_names(const torch::nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& item : m.named_parameters()) names.push_back(item.key());
  return names;
}

std::vector<std::string> buffer_names(const torch::nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& item : m.named_buffers()) names.push_back(item.key());
  return names;
}

// torchvision's named_parameters() order: conv1, bn1, then per block conv_k/bn_k pairs and the
// downsample (conv "0", BN "1") when the block changes width or stride, then fc.
std::vector<std::string> torchvision_parameter_names(const std::vector<int>& blocks, int convs_per_block) {
  std::vector<std::string> names = {"conv1.weight", "bn1.weight", "bn1.bias"};
  for (int layer = 0; layer < 4; ++layer) {
    for (int b = 0; b < blocks[layer]; ++b) {
      const std::string prefix = "layer" + std::to_string(layer + 1) + "." + std::to_string(b) + ".";
      for (int k = 1; k <= convs_per_block; ++k) {
        const std::string n = std::to_string(k);
        for (const auto& suffix : {"conv" + n + ".weight", "bn" + n + ".weight", "bn" + n + ".bias"}) {
          names.push_back(prefix + suffix);
        }
      }
      // resnet18: layers 2-4 change stride and width; resnet50: every first block widens.
      if (b == 0 && (layer > 0 || convs_per_block == 3)) {
        for (const auto& suffix : {"downsample.0.weight", "downsample.1.weight", "downsample.1.bias"}) {
          names.push_back(prefix + suffix);
        }
      }
    }
  }
  names.push_back("fc.weight");
  names.push_back("fc.bias");
  return names;
}

template <typename E>
std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void expect_same_state(const torch::nn::Module& a, const torch::nn::Module& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  const auto ba = a.named_buffers(), bb = b.named_buffers();
  ASSERT_EQ(pa.size(), pb.size());
  ASSERT_EQ(ba.size(), bb.size());
  for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key() << " differs";
  for (const auto& item : ba) EXPECT_TRUE(torch::equal(item.value(), bb[item.key()])) << item.key() << " differs";
}

TEST(ResnetTest, ParameterCountsMatchTorchvision) {
  EXPECT_EQ(parameter_count(*make_model("resnet18", {3, 224, 224}, 1000)), 11'689'512);
  EXPECT_EQ(parameter_count(*make_model("resnet50", {3, 224, 224}, 1000)), 25'557'032);
}

TEST(ResnetTest, NamesFollowTorchvision) {
  const auto r18 = make_model("resnet18", {3, 224, 224}, 1000);
  const auto r50 = make_model("resnet50", {3, 224, 224}, 1000);
  EXPECT_EQ(parameter_names(*r18), torchvision_parameter_names({2, 2, 2, 2}, 2));
  EXPECT_EQ(parameter_names(*r50), torchvision_parameter_names({3, 4, 6, 3}, 3));

  const std::regex bn_buffer(R"(^(bn1|layer[1-4]\.\d+\.(bn[1-3]|downsample\.1))\.)"
                             R"((running_mean|running_var|num_batches_tracked)$)");
  for (const auto* model : {r18.get(), r50.get()}) {
    const auto buffers = buffer_names(*model);
    for (const auto& name : buffers) EXPECT_TRUE(std::regex_match(name, bn_buffer)) << name;
    EXPECT_EQ(buffers.front(), "bn1.running_mean");
    EXPECT_EQ(model->named_buffers()["bn1.num_batches_tracked"].scalar_type(), torch::kLong);
  }
  EXPECT_EQ(buffer_names(*r18).size(), 60u);  // as torchvision: 20 BatchNorms x 3 buffers
  EXPECT_EQ(buffer_names(*r50).size(), 159u);
  EXPECT_NE(r18->named_buffers().find("layer2.0.downsample.1.running_var"), nullptr);
  EXPECT_EQ(r18->named_buffers().find("layer1.0.downsample.1.running_var"), nullptr);
  EXPECT_NE(r50->named_buffers().find("layer1.0.downsample.1.running_var"), nullptr);
}

TEST(ResnetTest, ForwardGivesLogitsPerClass) {
  torch::manual_seed(1);
  for (const char* name : {"resnet18", "resnet50"}) {
    auto model = make_model(name, {3, 64, 64}, 7);
    const auto logits = model->forward(torch::randn({2, 3, 64, 64}));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 7})) << name;
    EXPECT_TRUE(torch::isfinite(logits).all().item<bool>()) << name;
    // The smallest input, any channel count, non-square.
    auto gray = make_model(name, {1, 32, 40}, 3);
    EXPECT_EQ(gray->forward(torch::randn({2, 1, 32, 40})).sizes(), (std::vector<int64_t>{2, 3})) << name;
  }
}

TEST(ResnetTest, RejectsTooSmallImagesAndUnknownNames) {
  const std::string small = message_of<UsageError>([] { make_model("resnet18", {3, 31, 64}, 10); });
  EXPECT_NE(small.find("resnet18"), std::string::npos) << small;
  EXPECT_NE(small.find("at least 32x32"), std::string::npos) << small;
  EXPECT_NE(small.find("64x31"), std::string::npos) << small;
  const std::string unknown = message_of<UsageError>([] { make_model("resnet34", {3, 224, 224}, 10); });
  EXPECT_NE(unknown.find("mnist_cnn, mlp, resnet18, resnet50"), std::string::npos) << unknown;
}

TEST(SafetensorsTest, ModelRoundTripIsBitIdentical) {
  testing::TempDir dir;
  torch::manual_seed(2);
  auto saved = make_model("resnet18", {3, 64, 64}, 10);
  make_batch_norms_nontrivial(*saved, 3);
  const std::string path = dir.str() + "/model.safetensors";
  save_safetensors(*saved, path, {{"model", "resnet18"}});

  torch::manual_seed(3);
  auto loaded = make_model("resnet18", {3, 64, 64}, 10);
  EXPECT_FALSE(torch::equal(loaded->named_parameters()["conv1.weight"], saved->named_parameters()["conv1.weight"]));
  load_safetensors(*loaded, path);
  expect_same_state(*saved, *loaded);
  EXPECT_EQ(loaded->named_buffers()["bn1.num_batches_tracked"].item<int64_t>(), 2);

  const auto metadata = read_safetensors_metadata(path);
  EXPECT_EQ(metadata.at("format"), "pt");
  EXPECT_EQ(metadata.at("model"), "resnet18");
  // Layout: header length little-endian, header padded to 8, no temp file left behind.
  const std::string bytes = testing::read_text(path);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ(header % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(SafetensorsTest, TensorsOfEveryDtypeRoundTrip) {
  testing::TempDir dir;
  torch::manual_seed(4);
  const NamedTensors tensors = {
      {"f32", torch::randn({3, 5})},
      {"f32_transposed", torch::randn({4, 6}).t()},  // non-contiguous: written in logical order
      {"f64", torch::randn({2}, torch::kFloat64)},
      {"f16", torch::randn({7}).to(torch::kFloat16)},
      {"bf16", torch::randn({3, 1}).to(torch::kBFloat16)},
      {"i64", torch::arange(5, torch::kInt64)},
      {"i32", torch::arange(3, torch::kInt32)},
      {"u8", torch::arange(9, torch::kUInt8)},
      {"bool", torch::tensor({true, false, true})},
      {"scalar", torch::tensor(3.5)},
      {"empty", torch::empty({0, 4})},
  };
  const std::string path = dir.str() + "/t.safetensors";
  save_safetensors(tensors, path);
  const auto read = read_safetensors(path);
  ASSERT_EQ(read.size(), tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const auto& back = read.at(name);
    EXPECT_EQ(back.scalar_type(), tensor.scalar_type()) << name;
    EXPECT_EQ(back.sizes(), tensor.sizes()) << name;
    EXPECT_TRUE(torch::equal(back, tensor)) << name;
  }
  EXPECT_THROW(save_safetensors(NamedTensors{{"a", torch::ones(1)}, {"a", torch::ones(1)}}, path), UsageError);
}

TEST(SafetensorsTest, CorruptOrTruncatedFilesAreDataErrors) {
  testing::TempDir dir;
  torch::manual_seed(5);
  auto model = make_model("mnist_cnn", {1, 28, 28}, 10);
  const std::string good = dir.str() + "/good.safetensors";
  save_safetensors(*model, good);
  const std::string bytes = testing::read_text(good);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<uint8_t>(bytes[i]);

  struct Case {
    std::string what;
    std::string bytes;
    std::string expected;
  };
  std::string huge_length = bytes;
  huge_length[6] = '\x7f';
  std::string bad_json = bytes;
  bad_json[8] = '[';
  std::string bad_offsets = bytes;
  const size_t first = bad_offsets.find("\"data_offsets\":[0,");
  ASSERT_NE(first, std::string::npos);
  bad_offsets.replace(first, 18, "\"data_offsets\":[4,");
  const std::vector<Case> cases = {
      {"empty", "", "fewer than the 8-byte header length"},
      {"5 bytes", bytes.substr(0, 5), "fewer than the 8-byte header length"},
      {"header cut", bytes.substr(0, 8 + header / 2), "exceeds"},
      {"data truncated", bytes.substr(0, bytes.size() - 10), "truncated"},
      {"trailing bytes", bytes + "xyz", "3 bytes follow the last tensor"},
      {"huge header length", huge_length, "header length"},
      {"header not JSON", bad_json, "not valid JSON"},
      {"offsets wrong", bad_offsets, "bytes of data for shape"},
      {"not safetensors at all", "GIF89a this is not a tensor file at all, no", "header length"},
  };
  torch::manual_seed(6);
  auto target = make_model("mnist_cnn", {1, 28, 28}, 10);
  const auto before = target->named_parameters()["fc2.weight"].clone();
  for (const auto& c : cases) {
    const std::string path = dir.str() + "/bad.safetensors";
    write_bytes(path, c.bytes);
    const std::string message = message_of<DataError>([&] { load_safetensors(*target, path); });
    EXPECT_NE(message.find(path + " is not a safetensors file: "), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": " << message;
  }
  EXPECT_TRUE(torch::equal(target->named_parameters()["fc2.weight"], before)) << "a failed load changed the model";
  const std::string missing = message_of<DataError>([&] { load_safetensors(*target, dir.str() + "/nope"); });
  EXPECT_NE(missing.find("No such file or directory"), std::string::npos) << missing;
}

TEST(SafetensorsTest, NameOrShapeMismatchIsDataError) {
  testing::TempDir dir;
  auto model = make_model("resnet18", {3, 64, 64}, 10);
  const std::string path = dir.str() + "/m.safetensors";

  NamedTensors renamed;
  for (const auto& item : model->named_parameters()) {
    if (item.key() != "fc.bias") renamed.emplace_back(item.key(), item.value());
  }
  for (const auto& item : model->named_buffers()) renamed.emplace_back(item.key(), item.value());
  renamed.emplace_back("head.bias", torch::zeros(10));
  save_safetensors(renamed, path);
  const std::string names = message_of<DataError>([&] { load_safetensors(*model, path); });
  EXPECT_NE(names.find("missing 'fc.bias'"), std::string::npos) << names;
  EXPECT_NE(names.find("unexpected 'head.bias'"), std::string::npos) << names;

  save_safetensors(*model, path);
  auto other = make_model("resnet18", {3, 64, 64}, 5);
  const std::string shape = message_of<DataError>([&] { load_safetensors(*other, path); });
  EXPECT_NE(shape.find("tensor 'fc.weight'"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[10, 512]"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[5, 512]"), std::string::npos) << shape;

  auto mnist = make_model("mnist_cnn", {3, 64, 64}, 10);
  EXPECT_THROW(load_safetensors(*mnist, path), DataError);
}

TEST(SafetensorsTest, WriteFailureIsSystemErrorAndKeepsPreviousFile) {
  testing::TempDir dir;
  auto model = make_model("resnet18", {3, 64, 64}, 10);
  const std::string nowhere = dir.str() + "/no/such/dir/m.safetensors";
  const std::string message = message_of<SystemError>([&] { save_safetensors(*model, nowhere); });
  EXPECT_NE(message.find(nowhere), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;

  // A file-size limit stands in for a full disk: write() fails part-way (EFBIG, as ENOSPC would).
  const std::string path = dir.str() + "/m.safetensors";
  save_safetensors(NamedTensors{{"previous", torch::ones(4)}}, path);
  const std::string previous = testing::read_text(path);
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 1 << 20;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string full = message_of<SystemError>([&] { save_safetensors(*model, path); });
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(full.find(path), std::string::npos) << full;
  EXPECT_NE(full.find("File too large"), std::string::npos) << full;
  EXPECT_EQ(testing::read_text(path), previous);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1) << "temp file left behind";
}

TEST(ResnetSafetensorsInteropTest, TorchvisionLoadsExportStrictlyAndComputesTheSameOutput) {
  if (const std::string missing = torchvision_missing(); !missing.empty()) GTEST_SKIP() << missing;
  expect_torchvision_matches({{"resnet18", 122}, {"resnet50", 320}}, /*seed=*/8);
}

}  // namespace
}  // namespace stoker::train
