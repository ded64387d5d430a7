// GradientReducer: averages a model's gradients over a process group (Gloo: gloo_group.h) in
// buckets, the way torch's DistributedDataParallel does. The parameters (those that require a
// gradient) are packed in reverse order — the order backward completes them — into flat
// buckets of about 25 MB (the first 1 MB, so that sending starts early). The buckets are kept
// from step to step.
//
// Two ways to use it, and both give the same means bit for bit:
//   - finish() alone after backward: packs and sends every bucket, waits, writes the means.
//   - attach() once, then arm() before a backward whose gradients are to be averaged: hooks on
//     the parameters' gradient accumulators send each bucket as soon as its gradients are
//     complete, while backward goes on with earlier layers; finish() then sends what is left
//     (a parameter backward did not reach counts as zeros), waits and writes the means. A
//     backward without arm() (an accumulation micro-step) sends nothing.
// Buckets are sent in order, so every process must arm the same backward passes and reach
// the same parameters (as DDP requires without find_unused_parameters).
//
// Thread safety: the hooks run on autograd's thread during backward; everything else on the
// training loop's thread, not concurrently with a backward. Ownership: the reducer keeps the
// model's parameters and gradient accumulators alive; its destructor removes its hooks.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "train/torch/model/network.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

class GradientReducer {
 public:
  GradientReducer(c10::intrusive_ptr<compat::CollectiveGroup> group, int world_size);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Plans the buckets for `model` and puts a hook on each parameter's gradient accumulator
  // (once per model; attaching another model moves the hooks to it).
  void attach(Network& model);
  // The next backward sends buckets as they complete (needs attach()).
  void arm();
  // Each gradient of `model` becomes its mean over the group. Throws what the collective
  // calls throw (the caller turns it into one line).
  void finish(Network& model);

  // The buckets as planned: the parameter indices (in model.parameters() order, counting
  // those that require a gradient) each holds, in the order they are sent.
  std::vector<std::vector<size_t>> bucket_members() const;
  // Buckets sent since arm() (or the last finish()): all of them once an armed backward has
  // returned.
  size_t sent_count() const;

  struct State;  // opaque: gradient_reducer.cpp

 private:
  void detach();
  std::shared_ptr<State> state_;  // shared with the hooks
};

}  // namespace stoker::train
