// What the geometry transforms (Resize, RandomResizedCrop, RandomCrop, CenterCrop, none)
// share beyond the chain state: the one geometry a chain has, and the resample filter that a
// Resize and a RandomResizedCrop ask for together. Which geometry the chain makes is settled once every call is applied
// (chain_builder.cpp), since a Resize changes what the crop after it means.
//
// Errors: UsageError naming the call and the value as written. Thread safety: a free function
// on its arguments.
#pragma once

#include "data/transform/chain/calls.h"

namespace stoker::data::chain {
struct ChainState;
}

namespace stoker::data::ops {

// Claims the chain's one geometry for `call` (ChainState::claim_geometry): the crops' claim.
void claim_geometry(chain::ChainState& state, const chain::Call& call);

// stoker resamples with Pillow's antialiased filters, bilinear (torchvision's default on a
// PIL image) or bicubic; the arguments that ask for one (either may be null: not given) are
// accepted, others refused. One resample makes the output, so a Resize and a
// RandomResizedCrop after it share their filter: asking for two is refused.
void set_resampling(chain::ChainState& state, const chain::Call& call, const chain::Value* interpolation,
                    const chain::Value* antialias);

}  // namespace stoker::data::ops
