#include "stoker/monitor/sampler.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "monitor/host/proc_stat.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/mutex.h"
#include "stoker/monitor/gpu_reader.h"
#include "stoker/monitor/host_reader.h"

namespace stoker::monitor {

struct Sampler::State {
  SamplerOptions options;
  HostReader host;
  std::unique_ptr<GpuReader> gpu;
  std::string gpu_status;
  std::vector<GpuInfo> no_gpus;
  std::vector<SampleSink> sinks;
  std::vector<bool> sink_enabled;
  int64_t start_ns = now_ns();
  int64_t last_pcie_ns = -1;

  mutable Mutex mutex;
  std::condition_variable wake;
  Sample latest STOKER_GUARDED_BY(mutex);
  std::atomic<uint64_t> published{0};  // raised after `latest` is written; > 0: it has been
  SummaryRecorder recorder STOKER_GUARDED_BY(mutex);
  bool stop_requested STOKER_GUARDED_BY(mutex) = false;
  std::thread thread;

  explicit State(SamplerOptions o) : options(std::move(o)), host(options.proc_root) {}

  Sample take() {
    Sample s;
    const int64_t t = now_ns();
    s.seconds = ns_to_seconds(t - start_ns);
    s.unix_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    host.sample(&s.host, t);
    if (gpu) {
      const bool pcie = last_pcie_ns < 0 || ns_to_seconds(t - last_pcie_ns) >= options.pcie_interval_s;
      if (pcie) last_pcie_ns = t;
      gpu->sample(&s.gpus, t, host.watched_pids(), pcie);
    }
    return s;
  }

  void publish(const Sample& s) {
    {
      MutexLock lock(mutex);
      latest = s;
      recorder.add(s);
    }
    published.fetch_add(1, std::memory_order_release);
    for (size_t i = 0; i < sinks.size(); ++i) {
      if (!sink_enabled[i]) continue;
      try {
        sinks[i](s);
      } catch (const std::exception& e) {
        sink_enabled[i] = false;
        std::fprintf(stderr, "stoker monitor: a log stopped: %s\n", e.what());
      }
    }
  }

  void run() {
    const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(options.interval_s * 1e9));
    auto next = SteadyClock::now();
    for (;;) {
      publish(take());
      next += interval;
      const auto now = SteadyClock::now();
      if (next < now) next = now + interval;  // fell behind (suspended): do not burst
      MutexLock lock(mutex);
      while (!stop_requested && lock.wait_until(wake, next)) {
      }
      if (stop_requested) return;
    }
  }
};

Sampler::Sampler(SamplerOptions options) {
  if (!(options.interval_s >= 0.05)) {
    throw UsageError(fmt::format("interval must be >= 0.05 s (got {}); try --interval 1", options.interval_s));
  }
  if (!(options.pcie_interval_s > 0)) {
    throw UsageError(fmt::format("pcie interval must be > 0 s (got {})", options.pcie_interval_s));
  }
  state_ = std::make_unique<State>(std::move(options));
  State& s = *state_;
  if (s.options.pid > 0) s.host.watch(s.options.pid);
  if (!s.options.gpu) {
    s.gpu_status = "no GPU: GPU sampling off";
  } else {
    std::string why;
    s.gpu = GpuReader::open(&why, s.options.nvml_library);
    if (!s.gpu) {
      s.gpu_status = "no GPU: " + why;
    } else if (s.gpu->gpus().empty()) {
      s.gpu_status = "no GPU: NVML found no devices";
    } else {
      const auto& gpus = s.gpu->gpus();
      s.gpu_status = fmt::format("{} GPU{} ({}{}) · {}", gpus.size(), gpus.size() == 1 ? "" : "s", gpus[0].name,
                                 gpus.size() > 1 ? fmt::format(" ×{}", gpus.size()) : "", s.gpu->versions());
    }
  }
}

Sampler::~Sampler() { stop(); }

void Sampler::add_sink(SampleSink sink) {
  state_->sinks.push_back(std::move(sink));
  state_->sink_enabled.push_back(true);
}

void Sampler::watch(pid_t pid) {
  state_->options.pid = pid;
  state_->host.watch(pid);
}

void Sampler::start() {
  if (state_->thread.joinable()) return;
  {
    MutexLock lock(state_->mutex);
    state_->stop_requested = false;
  }
  state_->thread = std::thread([s = state_.get()] { s->run(); });
}

void Sampler::stop() {
  if (!state_ || !state_->thread.joinable()) return;
  {
    MutexLock lock(state_->mutex);
    state_->stop_requested = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

Sample Sampler::sample_once() {
  Sample s = state_->take();
  state_->publish(s);
  return s;
}

uint64_t Sampler::samples_published() const { return state_->published.load(std::memory_order_acquire); }

bool Sampler::has_sample() const { return samples_published() > 0; }

Sample Sampler::latest() const {
  MutexLock lock(state_->mutex);
  return state_->latest;
}

Summary Sampler::summary() const {
  MutexLock lock(state_->mutex);
  return state_->recorder.summary();
}

const std::string& Sampler::gpu_status() const { return state_->gpu_status; }

const std::vector<GpuInfo>& Sampler::gpus() const { return state_->gpu ? state_->gpu->gpus() : state_->no_gpus; }

bool Sampler::watched_alive() const {
  // The HostReader belongs to the sampler thread; this check reads /proc on its own.
  return host::process_running(state_->options.proc_root, state_->options.pid);
}

}  // namespace stoker::monitor
