#include "train/torch/parallel/data_parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <net/if.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/mutex.h"
#include "stoker/train/trainer.h"
#include "train/torch/parallel/gloo_group.h"
#include "train/torch/parallel/gradient_reducer.h"
#include "train/torch/run/failure_text.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

std::string env_text(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The integer in variable `name`, or `fallback` when it is unset or empty.
int env_int(const char* name, int fallback) {
  const std::string text = env_text(name);
  if (text.empty()) return fallback;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError(fmt::format("environment variable {}={} must be an integer", name, text));
  }
  return value;
}

// How long a process whose collective failed waits before it reports: a peer that stopped
// has its own message, and the launcher (ours or torchrun) stops the rest of the group when it
// sees that peer exit, so the line the user reads is the cause, not this echo of it.
constexpr std::chrono::seconds kEchoDelay{3};

// Runs a collective step; a failure (a peer that stopped, the timeout) becomes one line.
template <typename F>
void collective(const char* what, const ProcessPlace& place, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    std::this_thread::sleep_for(kEchoDelay);
    throw DataError(
        fmt::format("process {} of {} could not {} ({}); another training process has stopped "
                    "(its message says why) or stopped answering",
                    place.rank, place.world_size, what, reason_of(e)));
  }
}

// "40 s", "3 min".
std::string span(std::chrono::milliseconds d) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return seconds < 120 ? fmt::format("{} s", seconds) : fmt::format("{} min", seconds / 60);
}

// While alive, a thread that says on stderr that this process still waits for its group:
// after notice.first, then every notice.every.
class JoinWatch {
 public:
  JoinWatch(const ProcessPlace& place, std::chrono::milliseconds timeout, JoinNotice notice)
      : thread_([this, place, timeout, notice] { watch(place, timeout, notice); }) {}
  ~JoinWatch() {
    {
      MutexLock lock(mutex_);
      joined_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  JoinWatch(const JoinWatch&) = delete;
  JoinWatch& operator=(const JoinWatch&) = delete;

 private:
  void watch(const ProcessPlace& place, std::chrono::milliseconds timeout, JoinNotice notice) {
    const auto start = std::chrono::steady_clock::now();
    auto next = start + notice.first;
    MutexLock lock(mutex_);
    while (!joined_) {
      if (lock.wait_until(wake_, next)) continue;  // woken (or spuriously): check joined_
      const auto waited =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      std::fprintf(stderr,
                   "process %d of %d: still waiting for the training group at %s:%d after %s; it forms when all %d "
                   "processes have started (check MASTER_ADDR, MASTER_PORT and that every node was launched); "
                   "gives up after %s\n",
                   place.rank, place.world_size, place.master_addr.c_str(), place.master_port, span(waited).c_str(),
                   place.world_size, span(timeout).c_str());
      next += notice.every;
    }
  }

  Mutex mutex_;
  std::condition_variable wake_;
  bool joined_ STOKER_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once the members it reads exist
};

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.starts_with("127.") || address == "::1";
}

// The interfaces GLOO_SOCKET_IFNAME names (comma-separated, as torch reads it); throws
// UsageError listing this machine's interfaces when one of them is not among them.
std::vector<std::string> socket_interfaces_from_env() {
  std::vector<std::string> names;
  const std::string text = env_text("GLOO_SOCKET_IFNAME");
  for (size_t at = 0; at < text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at) names.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  for (const std::string& name : names) {
    if (::if_nametoindex(name.c_str()) != 0) continue;
    std::vector<std::string> present;
    if (struct if_nameindex* list = ::if_nameindex()) {
      for (const struct if_nameindex* i = list; i->if_index != 0; ++i) present.emplace_back(i->if_name);
      ::if_freenameindex(list);
    }
    throw UsageError(
        fmt::format("environment variable GLOO_SOCKET_IFNAME={} names no network interface of this "
                    "machine (it has {}); name the one the nodes reach each other through, or unset it",
                    text, fmt::join(present, ", ")));
  }
  return names;
}

}  // namespace

ProcessPlace process_place_from_env() {
  ProcessPlace place;
  place.world_size = env_int("WORLD_SIZE", 1);
  if (place.world_size < 1) {
    throw UsageError(fmt::format("environment variable WORLD_SIZE={} must be at least 1", place.world_size));
  }
  if (place.world_size == 1) return place;
  place.rank = env_int("RANK", -1);
  if (place.rank < 0 || place.rank >= place.world_size) {
    throw UsageError(
        fmt::format("environment variable RANK={} must be in [0, {}) when WORLD_SIZE={} (torchrun "
                    "and stoker train --nproc-per-node set both)",
                    env_text("RANK").empty() ? "(unset)" : env_text("RANK"), place.world_size, place.world_size));
  }
  place.local_rank = env_int("LOCAL_RANK", place.rank);
  place.local_world_size = env_int("LOCAL_WORLD_SIZE", place.world_size);
  if (place.local_world_size < 1 || place.local_rank < 0 || place.local_rank >= place.local_world_size) {
    throw UsageError(
        fmt::format("environment variables LOCAL_RANK={} and LOCAL_WORLD_SIZE={} do not fit: need "
                    "0 <= LOCAL_RANK < LOCAL_WORLD_SIZE",
                    place.local_rank, place.local_world_size));
  }
  if (std::string addr = env_text("MASTER_ADDR"); !addr.empty()) place.master_addr = addr;
  place.master_port = env_int("MASTER_PORT", place.master_port);
  if (place.master_port < 1 || place.master_port > 65535) {
    throw UsageError(fmt::format("environment variable MASTER_PORT={} must be a port in 1..65535", place.master_port));
  }
  const std::string agent = env_text("TORCHELASTIC_USE_AGENT_STORE");
  place.agent_store = agent == "True" || agent == "true" || agent == "1";
  place.socket_interfaces = socket_interfaces_from_env();
  return place;
}

struct DataParallel::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveGroup> gloo;
  std::unique_ptr<GradientReducer> reducer;
};

DataParallel::DataParallel(const ProcessPlace& place, std::chrono::milliseconds timeout, JoinNotice notice)
    : place_(place), group_(std::make_unique<Group>()) {
  if (const std::string why = data_parallel_unavailable_reason(); !why.empty()) throw UsageError(why);
  const JoinWatch watch(place, timeout, notice);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(place.master_port);
    options.isServer = place.leader() && !place.agent_store;
    options.numWorkers = static_cast<size_t>(place.world_size);
    options.waitWorkers = false;
    options.timeout = timeout;
    c10::intrusive_ptr<c10d::TCPStore> tcp;
    try {
      tcp = c10::make_intrusive<c10d::TCPStore>(place.master_addr, options);
    } catch (const std::exception& e) {
      if (std::string(e.what()).find("libuv") == std::string::npos) throw;
      compat::use_classic_store(options);  // this torch has no libuv
      tcp = c10::make_intrusive<c10d::TCPStore>(place.master_addr, options);
    }
    // torchrun restarts a failed group with the same store: each attempt keeps its own keys.
    const std::string attempt = env_text("TORCHELASTIC_RESTART_COUNT");
    group_->store = c10::make_intrusive<c10d::PrefixStore>("stoker/attempt_" + (attempt.empty() ? "0" : attempt), tcp);
    // One machine: the loopback device. Several: GLOO_SOCKET_IFNAME names the interfaces, as
    // for torch; else the address this host's name resolves to.
    group_->gloo = make_gloo_group(group_->store, place.rank, place.world_size, timeout, place.socket_interfaces,
                                   is_loopback(place.master_addr));
    group_->reducer = std::make_unique<GradientReducer>(group_->gloo, place.world_size);
  } catch (const std::exception& e) {
    throw DataError(
        fmt::format("process {} of {} could not join the training group at {}:{} ({}); check "
                    "MASTER_ADDR and MASTER_PORT, or that the port is free",
                    place.rank, place.world_size, place.master_addr, place.master_port, reason_of(e)));
  }
}

DataParallel::~DataParallel() = default;

void DataParallel::broadcast_from_leader(Network& model) {
  torch::NoGradGuard no_grad;
  collective("receive rank 0's weights", place_, [&] {
    std::vector<torch::Tensor> tensors = model.parameters();
    for (const torch::Tensor& buffer : model.buffers()) tensors.push_back(buffer);
    for (torch::Tensor& tensor : tensors) {
      std::vector<at::Tensor> one{tensor.data()};
      c10d::BroadcastOptions options;
      options.rootRank = 0;
      group_->gloo->broadcast(one, options)->wait();
    }
  });
}

void DataParallel::attach(Network& model) { group_->reducer->attach(model); }

void DataParallel::arm() { group_->reducer->arm(); }

void DataParallel::average_gradients(Network& model) {
  collective("average the gradients", place_, [&] { group_->reducer->finish(model); });
}

std::vector<double> DataParallel::summed(const char* what, const std::vector<double>& values) {
  std::vector<at::Tensor> tensor{torch::tensor(values, torch::kFloat64)};
  collective(what, place_, [&] { group_->gloo->allreduce(tensor)->wait(); });
  return {tensor[0].data_ptr<double>(), tensor[0].data_ptr<double>() + tensor[0].numel()};
}

void DataParallel::barrier() {
  collective("wait for the other processes", place_, [&] { group_->gloo->barrier()->wait(); });
}

}  // namespace stoker::train
