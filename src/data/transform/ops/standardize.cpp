// Standardize: per-feature (x - mean) / std for feature vectors, with statistics the Loader
// fits on its source when the spec gives none (fit_standardize). What feature vectors may take
// besides is checked for every spec (transform_validate.cpp).
#include <string>
#include <vector>

#include "data/transform/chain/chain_builder.h"
#include "registry.h"

namespace stoker::data::ops {

namespace standardize_op {

constexpr OpName kNames[] = {{"Standardize", {}, "Standardize"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Feature vectors: each feature's (x − mean) / std, with the mean and std fitted on the training data; "
    "`summary.json` and the exported weights' metadata keep them. The default for feature vectors.";

void build(chain::ChainState& state, const chain::Call&, const Args&) { state.spec.features.standardize = true; }

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.features.standardize) parts->emplace_back("Standardize");
}

}  // namespace standardize_op

extern const TransformOp kStandardizeOp;
const TransformOp kStandardizeOp{.names = standardize_op::kNames,
                                 .build = standardize_op::build,
                                 .describe = standardize_op::describe,
                                 .on_features = true,
                                 .doc = standardize_op::kDoc};

}  // namespace stoker::data::ops
