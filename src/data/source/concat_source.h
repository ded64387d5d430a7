// Several sources of one dataset (its shards: emb_000.npy, emb_001.npy …; a ConcatDataset's parts) seen as one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

// The samples of `parts` one after another, in the order given; `pattern` names them in
// describe(). The parts must agree on what a sample is: targets (kind and count), feature
// count or fixed image shape, default transforms, and class names (numbered classes may
// differ in how many ids a shard happens to hold: the union is 0 … the largest). Throws
// DataError naming the first part that differs and how. Thread safety: as the parts'.
std::unique_ptr<Source> concat_sources(std::vector<std::unique_ptr<Source>> parts, const std::string& pattern);

// A ConcatDataset's parts: concat_parts (stoker/data/source.h), the same class.

}  // namespace stoker::data
