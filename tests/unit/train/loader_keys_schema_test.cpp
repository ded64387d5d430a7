// stoker train's keys of the input pipeline are the loader's table's rows: the same name,
// help, range, aliases and default, and validate() refuses what the table refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "stoker/core/error.h"
#include "stoker/data/loader_keys.h"
#include "stoker/train/config.h"
#include "train/config/schema.h"

namespace stoker::train {
namespace {

using data::KeyType;
using data::LoaderKeySpec;

std::string default_text(const std::string& key) {
  for (const ConfigKey& k : config_keys()) {
    if (k.name == key) return k.default_text;
  }
  return "<no key " + key + ">";
}

TEST(LoaderKeysSchema, TheTrainersLoaderKeysAreTheTablesRows) {
  int rows = 0;
  for (const LoaderKeySpec& row : data::loader_keys()) {
    if (row.yaml.empty()) continue;
    ++rows;
    SCOPED_TRACE(std::string(row.yaml));
    const detail::Field* field = detail::find_field(row.yaml);
    ASSERT_NE(field, nullptr);
    EXPECT_TRUE(field->help.starts_with(data::help_text(row, data::FrontEnd::kCommandLine))) << field->help;
    EXPECT_EQ(default_text(std::string(row.yaml)), row.cli_default);
    // The flag advice names is one the trainer takes.
    std::string flag(row.flag.substr(2));
    std::replace(flag.begin(), flag.end(), '-', '_');
    EXPECT_TRUE(flag == field->name || std::count(field->aliases.begin(), field->aliases.end(), flag) == 1);
    for (const std::string_view alias : row.aliases) {
      EXPECT_EQ(std::count(field->aliases.begin(), field->aliases.end(), std::string(alias)), 1) << alias;
    }
    const bool takes_auto = std::any_of(row.extras.begin(), row.extras.end(),
                                        [](const data::KeyExtra& extra) { return extra.cli == "auto"; });
    EXPECT_EQ(field->takes_auto, takes_auto);
    const detail::Range& range = field->range;
    if (row.type == KeyType::kInt && row.hi < std::numeric_limits<uint64_t>::max()) {
      EXPECT_EQ(range.kind, detail::Range::Kind::kBetween);
      EXPECT_EQ(range.min, static_cast<double>(row.lo));
      EXPECT_EQ(range.max, static_cast<double>(row.hi));
    } else if (row.type == KeyType::kNumber && std::isfinite(row.max)) {
      EXPECT_EQ(range.kind, detail::Range::Kind::kInterval);
      EXPECT_EQ(range.min, row.min);
      EXPECT_EQ(range.max, row.max);
      EXPECT_FALSE(range.min_open || range.max_open);
    } else if (row.type == KeyType::kNumber) {
      EXPECT_EQ(range.kind, detail::Range::Kind::kAtLeast);
      EXPECT_EQ(range.min, row.min);
    } else if (row.type == KeyType::kWord) {
      std::string words;
      for (const data::KeyWord& word : row.words) words += (words.empty() ? "" : ",") + std::string(word.cli);
      EXPECT_EQ(detail::type_name(*field), "{" + words + "}");
    } else {
      EXPECT_EQ(range.kind, detail::Range::Kind::kNone);
    }
  }
  // batch_size, num_workers, prefetch_factor, pin_memory, seed, max_bad_fraction, cache, cache_max_gb, decode,
  // chunk_shuffle_gb
  EXPECT_EQ(rows, 10);
}

// validate() takes each int key's edges and refuses one past them, with the table's numbers.
TEST(LoaderKeysSchema, ValidateFollowsTheTablesRanges) {
  const auto message = [](auto set) -> std::string {
    TrainConfig c;
    set(&c);
    try {
      validate(c);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  const LoaderKeySpec& batch = data::loader_key(data::LoaderKey::kBatchSize);
  EXPECT_EQ(message([&](TrainConfig* c) { c->batch_size = static_cast<int>(batch.hi); }), "");
  EXPECT_EQ(message([&](TrainConfig* c) { c->batch_size = static_cast<int>(batch.hi) + 1; }),
            "batch_size must be between 1 and 65536 (got 65537)");
  const LoaderKeySpec& workers = data::loader_key(data::LoaderKey::kWorkers);
  EXPECT_EQ(message([&](TrainConfig* c) { c->num_workers = static_cast<int>(workers.hi); }), "");
  EXPECT_EQ(message([](TrainConfig* c) { c->num_workers = kAuto; }), "");
  EXPECT_EQ(message([&](TrainConfig* c) { c->num_workers = static_cast<int>(workers.hi) + 1; }),
            "num_workers must be between 1 and 1024 (got 1025); or auto");
  const LoaderKeySpec& prefetch = data::loader_key(data::LoaderKey::kPrefetchFactor);
  EXPECT_EQ(message([&](TrainConfig* c) { c->prefetch_factor = static_cast<int>(prefetch.hi); }), "");
  EXPECT_EQ(message([&](TrainConfig* c) { c->prefetch_factor = static_cast<int>(prefetch.hi) + 1; }),
            "prefetch_factor must be between 1 and 64 (got 65)");
}

}  // namespace
}  // namespace stoker::train
