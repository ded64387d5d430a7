// One consumer at a time: a Loader's consumer calls made from two threads at once fail loudly
// on the later one, at once, instead of deadlocking or splitting the epoch between them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "support/counting_source.h"
#include "support/hang_guard.h"

namespace stoker::data {
namespace {
namespace one_consumer {

using stoker::testing::CountingSource;
using stoker::testing::kHangGuard;
using stoker::testing::kNoLimit;
using stoker::testing::kSide;

LoaderOptions consumer_options(int workers) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 11;
  o.transform = parse_transforms("Grayscale, ToUint8");
  return o;
}

bool is_one_consumer_error(const UsageError& e) {
  return std::string(e.what()).find("one consumer at a time") != std::string::npos;
}

// True when every sample of `batch` holds the pixels its index encodes (nothing torn or mixed).
bool batch_is_whole(const Batch& batch) {
  const auto* pixels = static_cast<const uint8_t*>(batch.data());
  for (int s = 0; s < batch.size(); ++s) {
    const uint64_t index = batch.indices()[s];
    for (int p = 0; p < kSide * kSide; ++p) {
      if (pixels[s * kSide * kSide + p] != static_cast<uint8_t>(index * 7 + p * 3)) return false;
    }
  }
  return true;
}

TEST(LoaderConsumerTest, ACallFromASecondThreadWhileOneWaitsFailsAtOnce) {
  const auto source = std::make_shared<CountingSource>(40);
  source->limit_reads(0);  // nothing can be read: a next() waits until the limit is raised
  Loader loader(source, consumer_options(2));
  loader.start_epoch(0);
  std::atomic<bool> got{false};
  std::thread waiting([&] {
    for (;;) {  // the probes below hold the loader for an instant: one may be in when this comes
      try {
        Batch batch = loader.next();
        got = static_cast<bool>(batch);
        return;
      } catch (const UsageError&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  });
  // Until the other thread is inside next(), a call from here is an ordinary one (the batch is
  // not ready); once it is, every consumer call throws.
  const auto started = std::chrono::steady_clock::now();
  bool refused = false;
  while (!refused && std::chrono::steady_clock::now() - started < kHangGuard) {
    try {
      Batch ignored;
      EXPECT_FALSE(loader.next_within(0.0, &ignored));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const UsageError& e) {
      EXPECT_TRUE(is_one_consumer_error(e)) << e.what();
      refused = true;
    }
  }
  ASSERT_TRUE(refused) << "the other thread's next() never got in the way";
  for (const auto& call :
       std::vector<std::pair<std::string, std::function<void()>>>{{"start_epoch", [&] { loader.start_epoch(1); }},
                                                                  {"next", [&] { (void)loader.next(); }},
                                                                  {"state", [&] { (void)loader.state(); }},
                                                                  {"set_workers", [&] { loader.set_workers(3); }},
                                                                  {"set_prefetch", [&] { loader.set_prefetch(4); }}}) {
    const auto before = std::chrono::steady_clock::now();
    try {
      call.second();
      ADD_FAILURE() << call.first << "() from a second thread did not throw";
    } catch (const UsageError& e) {
      EXPECT_TRUE(is_one_consumer_error(e)) << e.what();
      EXPECT_NE(std::string(e.what()).find("Loader::" + call.first + "()"), std::string::npos) << e.what();
    }
    // A call that waited would wait until limit_reads below, for ever: the hang guard tells.
    EXPECT_LT(std::chrono::steady_clock::now() - before, kHangGuard) << call.first << " waited";
  }
  source->limit_reads(kNoLimit);
  waiting.join();
  EXPECT_TRUE(got) << "the first consumer's next() lost its batch to the refused calls";
  EXPECT_EQ(loader.state().next_batch, 1);
}

TEST(LoaderConsumerTest, ThreadsHammeringOneLoaderGetWholeBatchesOrTheErrorAndNeverHang) {
  // Four threads call start_epoch / next_within / state on one loader as fast as they can, for
  // many rounds. Each call either works or throws the one-consumer error; no batch is torn, no
  // batch of an epoch comes twice from one start, and the whole run ends.
  const auto source = std::make_shared<CountingSource>(48);
  Loader loader(source, consumer_options(2));
  loader.start_epoch(0);  // so that a next() before any thread's start_epoch is not a misuse
  std::atomic<int> refusals{0}, batches{0}, other_errors{0}, torn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 300; ++round) {
        try {
          switch ((round + t) % 3) {
            case 0:
              loader.start_epoch((round / 3) % 4);
              break;
            case 1: {
              Batch batch;
              if (loader.next_within(0.002, &batch) && batch) {
                ++batches;
                if (!batch_is_whole(batch)) ++torn;
              }
              break;
            }
            default:
              (void)loader.state();
          }
        } catch (const UsageError& e) {
          if (is_one_consumer_error(e)) {
            ++refusals;
          } else {
            ++other_errors;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(other_errors.load(), 0);
  EXPECT_GT(batches.load(), 0);
  // After the storm, the loader is whole: a fresh epoch gives every sample once.
  loader.start_epoch(9);
  std::multiset<uint64_t> seen;
  while (Batch batch = loader.next()) {
    EXPECT_TRUE(batch_is_whole(batch));
    seen.insert(batch.indices(), batch.indices() + batch.size());
  }
  EXPECT_EQ(seen.size(), 48u);
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 48u);
  RecordProperty("refusals", refusals.load());
}

}  // namespace one_consumer
}  // namespace
}  // namespace stoker::data
