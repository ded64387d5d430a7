// Data parallelism over real Gloo groups, each "process" a thread of this test: two
// processes on halves of a batch take the step one process takes on the whole batch (SGD with
// momentum, with and without gradient accumulation); an overflow in one process's gradients
// makes every process skip the fp16 step; a process that leaves makes the other's next
// collective fail within the timeout instead of hanging; the environment torchrun sets is
// read, and bad values are one line. Dropout is off (eval mode) so every split sees the
// same network.
#include "train/torch/parallel/data_parallel.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <limits>
#include <thread>

#include "param_diff.h"
#include "stoker/core/error.h"
#include "stoker/train/config.h"
#include "support/hang_guard.h"
#include "train/torch/model/models.h"
#include "train/torch/parallel/gloo_group.h"
#include "train/torch/step/step.h"
#include "twin.h"

namespace stoker::train {
namespace {

using stoker::testing::kHangGuard;
using testing::max_difference;

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

ProcessPlace place_of(int rank, int world, int port) {
  ProcessPlace place;
  place.rank = place.local_rank = rank;
  place.world_size = place.local_world_size = world;
  place.master_port = port;
  return place;
}

// Runs body(group) for ranks 0..world-1 at once, each on its own thread with its own group.
void run_group(int world, const std::function<void(DataParallel&)>& body,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const int port = free_port();
  std::vector<std::future<void>> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.push_back(std::async(std::launch::async, [&, rank] {
      DataParallel group(place_of(rank, world, port), timeout);
      body(group);
    }));
  }
  for (auto& rank : ranks) rank.get();  // rethrows a rank's failure
}

using testing::make_twin;
using testing::Twin;

TrainConfig sgd_config(int accumulation_steps, double clip_grad_norm = 0) {
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  cfg.lr = 0.1;
  cfg.accumulation_steps = accumulation_steps;
  cfg.clip_grad_norm = clip_grad_norm;
  return cfg;
}

// Two processes, each on batches of 16 (accumulating `accumulation` of them per step), against
// one process on batches of 32 made of both halves. With `clip_grad_norm` > 0 every step
// clips: the processes must clip the averaged gradients, as the whole batch does.
void expect_two_halves_match_the_whole(int accumulation, double clip_grad_norm = 0) {
  torch::manual_seed(11);
  const int64_t steps = 3, micro = 16;
  const auto x = torch::randn({steps * accumulation * 2 * micro, 1, 8, 8});
  const auto y = torch::randint(0, 10, {x.size(0)}, torch::kInt64);
  // Rank r's k-th batch: rows [2*16*k + 16*r, +16); the whole run's k-th batch: rows [32k, +32).
  const auto rows = [&](int64_t begin, int64_t n) {
    return std::make_pair(x.slice(0, begin, begin + n), y.slice(0, begin, begin + n));
  };

  Twin whole = make_twin(3);
  const TrainConfig whole_cfg = sgd_config(accumulation, clip_grad_norm);
  Stepper alone(whole_cfg, *whole.model, *whole.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  for (int64_t k = 0; k < steps * accumulation; ++k) {
    const auto [bx, by] = rows(2 * micro * k, 2 * micro);
    alone.step(bx, by);
  }

  Twin parts[2] = {make_twin(3), make_twin(99)};  // rank 1 starts elsewhere: the broadcast fixes it
  ASSERT_GT(max_difference(*parts[0].model, *parts[1].model), 1e-3);
  const TrainConfig part_cfg = sgd_config(accumulation, clip_grad_norm);
  run_group(2, [&](DataParallel& group) {
    const int rank = group.place().rank;
    Twin& me = parts[rank];
    group.broadcast_from_leader(*me.model);
    Stepper stepper(part_cfg, *me.model, *me.optimizer, classification_objective(10), torch::kCPU, 100, 10);
    stepper.average_gradients_over(&group);
    for (int64_t k = 0; k < steps * accumulation; ++k) {
      const auto [bx, by] = rows(2 * micro * k + micro * rank, micro);
      const Stepper::Result r = stepper.step(bx, by);
      EXPECT_EQ(r.stepped, (k + 1) % accumulation == 0);
      if (r.stepped) {
        EXPECT_GT(r.sync_s, 0.0);
        EXPECT_EQ(r.clipped, clip_grad_norm > 0);
      }
    }
    EXPECT_EQ(stepper.global_step(), steps);
  });
  EXPECT_EQ(max_difference(*parts[0].model, *parts[1].model), 0.0);  // one step, taken everywhere
  EXPECT_LT(max_difference(*parts[0].model, *whole.model), 1e-5);

  // Not vacuous: training on rank 0's half alone lands elsewhere.
  Twin half = make_twin(3);
  const TrainConfig own_cfg = sgd_config(accumulation, clip_grad_norm);  // the Stepper keeps a reference
  Stepper own(own_cfg, *half.model, *half.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  for (int64_t k = 0; k < steps * accumulation; ++k) {
    const auto [bx, by] = rows(2 * micro * k, micro);
    own.step(bx, by);
  }
  EXPECT_GT(max_difference(*half.model, *whole.model), 1e-4);
}

// Every group test needs Gloo; a build without its headers (pip PyTorch) skips them and checks
// instead that asking for a group says why not (WithoutGloo below).
class DataParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gloo_available()) GTEST_SKIP() << "built without Gloo's headers";
  }
};

TEST(DataParallelWithoutGlooTest, AskingForAGroupIsOneLineSayingWhatIsMissing) {
  if (gloo_available()) GTEST_SKIP() << "this build has Gloo";
  ProcessPlace place;
  place.world_size = 2;
  try {
    DataParallel group(place, std::chrono::seconds(5));
    FAIL() << "a group formed without Gloo";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("--nproc-per-node"), std::string::npos) << message;
    EXPECT_NE(message.find("libgloo-dev"), std::string::npos) << message;
  }
}

TEST_F(DataParallelTest, TwoProcessesOnHalvesTakeTheStepOfTheWholeBatch) { expect_two_halves_match_the_whole(1); }

TEST_F(DataParallelTest, AccumulationWindowsAverageOnceAtTheirEnd) { expect_two_halves_match_the_whole(2); }

TEST_F(DataParallelTest, ClippingSeesTheAveragedGradients) { expect_two_halves_match_the_whole(2, 0.01); }

TEST_F(DataParallelTest, GradientsOverSeveralBucketsAreAveragedStepAfterStep) {
  // An MLP on 128×128 inputs: fc1's weight alone (33.5 MB) fills more than a 25 MB bucket, so
  // the gradients go in several; the group's kept buckets serve the second step's other values.
  torch::manual_seed(5);
  std::shared_ptr<Network> models[2] = {make_model("mlp", {1, 128, 128}, 10), make_model("mlp", {1, 128, 128}, 10)};
  constexpr int kSteps = 2;
  std::vector<torch::Tensor> grads[kSteps][2], expected[kSteps];  // [step][rank][parameter], [step][parameter]
  for (int step = 0; step < kSteps; ++step) {
    for (const torch::Tensor& p : models[0]->parameters()) {
      grads[step][0].push_back(torch::randn(p.sizes()) + step);
      grads[step][1].push_back(torch::randn(p.sizes()) * 3);
      expected[step].push_back((grads[step][0].back() + grads[step][1].back()) * 0.5);
    }
  }
  run_group(2, [&](DataParallel& group) {
    const int rank = group.place().rank;
    std::vector<torch::Tensor> params = models[rank]->parameters();
    for (int step = 0; step < kSteps; ++step) {
      for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[step][rank][i].clone();
      group.average_gradients(*models[rank]);
      for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_TRUE(torch::equal(params[i].grad(), expected[step][i]))
            << "rank " << rank << " step " << step << " parameter " << i;
      }
    }
  });
}

TEST_F(DataParallelTest, AnOverflowInOneProcessSkipsTheStepInAll) {
  torch::manual_seed(12);
  const auto x = torch::randn({16, 1, 8, 8});
  const auto y = torch::randint(0, 10, {16}, torch::kInt64);
  Twin parts[2] = {make_twin(4), make_twin(4)};
  TrainConfig cfg = sgd_config(1);
  cfg.amp = AmpMode::kFp16;  // on the CPU: the scaler on fp32 math
  run_group(2, [&](DataParallel& group) {
    const int rank = group.place().rank;
    Twin& me = parts[rank];
    Stepper stepper(cfg, *me.model, *me.optimizer, classification_objective(10), torch::kCPU, 100, 10);
    stepper.average_gradients_over(&group);
    EXPECT_FALSE(stepper.step(x, y).skipped);
    // Rank 1 alone sees an infinite input; both must skip.
    auto bad = x.clone();
    if (rank == 1) bad[0][0][0][0] = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(stepper.step(bad, y).skipped) << "rank " << rank;
    EXPECT_EQ(stepper.scaler()->state().skipped, 1);
    EXPECT_FALSE(stepper.step(x, y).skipped);
  });
  EXPECT_EQ(max_difference(*parts[0].model, *parts[1].model), 0.0);
}

TEST_F(DataParallelTest, AgreementAndSums) {
  run_group(3, [](DataParallel& group) {
    const int rank = group.place().rank;
    EXPECT_TRUE(group.any(rank == 2));
    EXPECT_FALSE(group.any(false));
    const std::vector<double> sums = group.sum({1.0, static_cast<double>(rank)});
    EXPECT_EQ(sums, (std::vector<double>{3.0, 3.0}));
    group.barrier();
  });
}

TEST_F(DataParallelTest, AProcessThatLeavesMakesTheOthersFailNotHang) {
  const auto start = std::chrono::steady_clock::now();
  std::promise<void> left;
  std::shared_future<void> gone = left.get_future().share();
  std::string error;
  run_group(
      2,
      [&](DataParallel& group) {
        if (group.place().rank == 1) {
          left.set_value();  // leaves: its group is destroyed when the body returns
          return;
        }
        gone.wait();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        try {
          group.any(true);
        } catch (const DataError& e) {
          error = e.what();
        }
      },
      std::chrono::minutes(5));  // longer than the hang guard: only a found departure ends it before
  EXPECT_NE(error.find("process 0 of 2 could not agree with the others"), std::string::npos) << error;
  EXPECT_NE(error.find("another training process has stopped"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, kHangGuard);
}

TEST_F(DataParallelTest, AProcessWaitingForItsGroupSaysSoAndGivesUpWithOneLine) {
  // Process 1 of 2 whose process 0 never starts (a node not launched, a wrong MASTER_ADDR):
  // it says on stderr that it waits, then gives up at the timeout with one line.
  JoinNotice notice;
  notice.first = std::chrono::milliseconds(300);
  notice.every = std::chrono::milliseconds(500);
  const int port = free_port();
  const auto start = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  std::string error;
  try {
    DataParallel group(place_of(1, 2, port), std::chrono::seconds(3), notice);
  } catch (const DataError& e) {
    error = e.what();
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  // The first notice comes 300 ms in; a loaded machine may print it a second later ("after 1 s").
  EXPECT_NE(said.find("process 1 of 2: still waiting for the training group at 127.0.0.1:" + std::to_string(port) +
                      " after "),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(" s; it forms when all 2 processes have started"), std::string::npos) << said;
  EXPECT_NE(said.find("gives up after 3 s\n"), std::string::npos) << said;
  EXPECT_NE(error.find("process 1 of 2 could not join the training group at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, kHangGuard);
}

TEST_F(DataParallelTest, AGroupThatFormsAtOnceSaysNothing) {
  ::testing::internal::CaptureStderr();
  run_group(2, [](DataParallel& group) { group.barrier(); });
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("still waiting"), std::string::npos);
}

class EnvironmentTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                             "TORCHELASTIC_USE_AGENT_STORE", "GLOO_SOCKET_IFNAME"}) {
      ::unsetenv(name);
    }
  }
};

TEST_F(EnvironmentTest, TorchrunsVariablesAreRead) {
  EXPECT_EQ(process_place_from_env().world_size, 1);  // nothing set: alone
  ::setenv("WORLD_SIZE", "8", 1);
  ::setenv("RANK", "5", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("LOCAL_WORLD_SIZE", "4", 1);
  ::setenv("MASTER_ADDR", "node0", 1);
  ::setenv("MASTER_PORT", "29611", 1);
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  const ProcessPlace place = process_place_from_env();
  EXPECT_EQ(place.rank, 5);
  EXPECT_EQ(place.world_size, 8);
  EXPECT_EQ(place.local_rank, 1);
  EXPECT_EQ(place.local_world_size, 4);
  EXPECT_EQ(place.master_addr, "node0");
  EXPECT_EQ(place.master_port, 29611);
  EXPECT_TRUE(place.agent_store);
  EXPECT_FALSE(place.leader());
  EXPECT_TRUE(place.socket_interfaces.empty());
  ::setenv("GLOO_SOCKET_IFNAME", "lo,lo", 1);  // torch's list form; every machine has lo
  EXPECT_EQ(process_place_from_env().socket_interfaces, (std::vector<std::string>{"lo", "lo"}));
}

TEST_F(EnvironmentTest, BadValuesAreOneLineNamingTheVariable) {
  const struct {
    std::vector<std::pair<const char*, const char*>> env;
    std::string expected;
  } cases[] = {
      {{{"WORLD_SIZE", "two"}}, "environment variable WORLD_SIZE=two must be an integer"},
      {{{"WORLD_SIZE", "2"}}, "environment variable RANK=(unset) must be in [0, 2) when WORLD_SIZE=2"},
      {{{"WORLD_SIZE", "2"}, {"RANK", "2"}}, "environment variable RANK=2 must be in [0, 2)"},
      {{{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "2"}},
       "LOCAL_RANK=3 and LOCAL_WORLD_SIZE=2 do not fit"},
      {{{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "70000"}},
       "environment variable MASTER_PORT=70000 must be a port in 1..65535"},
      {{{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"GLOO_SOCKET_IFNAME", "lo,nope0"}},
       "environment variable GLOO_SOCKET_IFNAME=lo,nope0 names no network interface of this machine (it has lo"},
  };
  for (const auto& c : cases) {
    TearDown();
    for (const auto& [name, value] : c.env) ::setenv(name, value, 1);
    try {
      process_place_from_env();
      ADD_FAILURE() << "no error for " << c.expected;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace stoker::train
