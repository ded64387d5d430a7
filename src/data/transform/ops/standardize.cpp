// Standardize: per-feature (x - mean) / std for feature vectors, with statistics the Loader
// fits on its source when the spec gives none (fit_standardize). What feature vectors may take
// besides is checked for every spec (transform_validate.cpp).
#include <fmt/format.h>

#include <limits>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "registry.h"

namespace stoker::data::ops {

namespace standardize_op {

constexpr std::string_view kParams[] = {"fit_rows"};
constexpr OpName kNames[] = {{"Standardize", kParams, "Standardize(fit_rows=None)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Feature vectors: each feature's (x − mean) / std, with the mean and std fitted on the training data; "
    "`summary.json` and the exported weights' metadata keep them. The default for feature vectors. Where opening "
    "the data gathered no sums (a chunked or compressed `.h5`, whose every row would be decompressed before the "
    "first batch), the fit reads `fit_rows` rows (262,144 by default): whole chunks, evenly spread over the file, "
    "the same ones on every run, and its progress line says so. A sample of a file written in class order is "
    "off where its chunks are few: on 500,000 rows of 512 embeddings in 100 classes, in h5py's automatic chunks "
    "of 3,907 rows, the default sample (68 of 128 chunks) puts each feature's mean within a median 1.7% of a std "
    "(at most 8%) of the full fit's and its std within 1.3% (at most 10%); 131,072 rows (34 chunks): 5% (at most "
    "23%) and 4% (at most 33%). `Standardize(fit_rows=None)` fits over every row. Such a fit is kept in "
    "`$XDG_CACHE_HOME/stoker` (default `~/.cache/stoker`), keyed by the file's path, size and modification time, "
    "the dataset and `fit_rows`: the next run over the same rows reads it and says so in one line; "
    "`STOKER_FIT_CACHE=0` fits every time. A resumed `stoker train` takes the mean and std from its checkpoint. "
    "Other data is fitted over every row.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  state.spec.features.standardize = true;
  if (args[0] == nullptr) return;
  state.spec.features.fit_rows =
      chain::is_none(*args[0]) ? 0 : chain::to_int(call, "fit_rows", *args[0], 1, std::numeric_limits<int>::max());
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (!spec.features.standardize) return;
  const int64_t rows = spec.features.fit_rows;
  parts->emplace_back(rows == kStandardizeFitRows ? std::string("Standardize")
                      : rows <= 0                 ? std::string("Standardize(fit_rows=None)")
                                                  : fmt::format("Standardize(fit_rows={})", rows));
}

}  // namespace standardize_op

extern const TransformOp kStandardizeOp;
const TransformOp kStandardizeOp{.names = standardize_op::kNames,
                                 .build = standardize_op::build,
                                 .describe = standardize_op::describe,
                                 .on_features = true,
                                 .doc = standardize_op::kDoc};

}  // namespace stoker::data::ops
