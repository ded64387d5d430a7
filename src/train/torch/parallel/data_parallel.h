// Data-parallel training over processes (one per GPU, or several on one CPU machine): every
// process holds the same model, trains on its share of each epoch (the sampler's rank r of
// W, stoker/data/sampler.h) and, before each optimiser step, the gradients are averaged over
// the processes, so all of them take the same step. That is torch's
// DistributedDataParallel, with its overlap of communication and backward: buckets of
// gradients are sent while backward computes earlier layers (gradient_reducer.h). Gloo
// carries it: CPU tensors directly, CUDA tensors through the host.
//
// Who is who comes from the variables torchrun sets: RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, and TORCHELASTIC_USE_AGENT_STORE (True: the
// launcher holds the rendezvous store; otherwise rank 0 serves it). `stoker train
// --nproc-per-node N` sets the same for the processes it starts.
//
// Every collective call below must be made by every process of the group, in the same order;
// a process that stops makes the others' next call fail (DataError), not hang forever: the
// group's timeout bounds every wait. Not thread-safe: the training loop's thread only.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "train/torch/model/network.h"

namespace stoker::train {

// This process's place in the group; world_size 1 = training alone.
struct ProcessPlace {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        // on this machine: the CUDA device it trains on
  int local_world_size = 1;  // processes on this machine (they share its cores)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool agent_store = false;  // torchrun's agent serves the store at master_addr:master_port
  // GLOO_SOCKET_IFNAME: the network interfaces Gloo sends through (several machines); empty:
  // the loopback device for a loopback master_addr, else the one this host's name resolves to.
  std::vector<std::string> socket_interfaces;

  bool leader() const { return rank == 0; }
};

// Reads the place from the environment: world_size 1 when WORLD_SIZE is unset (or 1).
// Throws UsageError naming the variable for a value that does not parse or does not fit
// (RANK outside [0, WORLD_SIZE), a port outside 1..65535, a GLOO_SOCKET_IFNAME that names no
// interface of this machine).
ProcessPlace process_place_from_env();

// When a process still waiting for the group to form says so on stderr: first after `first`,
// then every `every`, until it has joined or given up.
struct JoinNotice {
  std::chrono::milliseconds first = std::chrono::seconds(10);
  std::chrono::milliseconds every = std::chrono::seconds(60);
};

class DataParallel {
 public:
  // Joins the group: connects to (rank 0: serves) the rendezvous store and sets up Gloo;
  // returns once all world_size processes have joined. `timeout` bounds that and every later
  // collective. Throws DataError with one line when the group cannot form. A join that takes
  // longer than notice.first is reported on stderr (a peer that never starts, a wrong
  // MASTER_ADDR), so a process waiting for its group is never silent.
  DataParallel(const ProcessPlace& place, std::chrono::milliseconds timeout, JoinNotice notice = {});
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  const ProcessPlace& place() const { return place_; }

  // Rank 0's parameters and buffers, copied into every process's model (after the model is
  // made, or loaded from a checkpoint).
  void broadcast_from_leader(Network& model);

  // Each parameter's gradient becomes the mean of that gradient over the processes. A
  // parameter without a gradient here counts as zeros (and gets the mean). When the backward
  // before it was armed, buckets already sent during it are only waited for.
  void average_gradients(Network& model);

  // Overlap: hooks on `model`'s gradient accumulators (once), then arm() before each backward
  // whose gradients average_gradients will average (not before accumulation micro-steps).
  void attach(Network& model);
  void arm();

  // The element-wise sum of `values` over the processes (float64; every process passes as
  // many values).
  std::vector<double> sum(const std::vector<double>& values) { return summed("add up the figures", values); }

  // True when `flag` is true in any process.
  bool any(bool flag) { return summed("agree with the others", {flag ? 1.0 : 0.0})[0] > 0; }

  // Returns once every process has called it.
  void barrier();

 private:
  // sum(); `what` names the step in the error when it fails.
  std::vector<double> summed(const char* what, const std::vector<double>& values);

  struct Group;
  ProcessPlace place_;
  std::unique_ptr<Group> group_;
};

}  // namespace stoker::train
