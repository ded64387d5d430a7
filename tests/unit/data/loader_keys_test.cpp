// The loader's table of options: every row consistent (names unique per front end, defaults
// inside the range, help in no front end's names), its messages, and the advice's words.
#include "stoker/data/loader_keys.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>

namespace stoker::data {
namespace {

// "--prefetch-factor" -> "prefetch_factor": the spelling the trainer's schema compares.
std::string snake(std::string_view name) {
  std::string text(name.substr(name.starts_with("--") ? 2 : 0));
  for (char& c : text) c = c == '-' ? '_' : c;
  return text;
}

// Whether a command-line default text is a value the row takes.
bool cli_value_allowed(const LoaderKeySpec& row, const std::string& text) {
  switch (row.type) {
    case KeyType::kInt: {
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      return error == std::errc() && end == text.data() + text.size() && value >= row.lo && value <= row.hi;
    }
    case KeyType::kNumber: {
      double value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      return error == std::errc() && end == text.data() + text.size() && value >= row.min && value <= row.max;
    }
    case KeyType::kBool:
      return text == "true" || text == "false";
    case KeyType::kWord:
      for (const KeyWord& word : row.words) {
        if (word.cli == text) return true;
      }
      return false;
  }
  return false;
}

// Whether a Python default literal is a value the row takes (the literals the table uses:
// whole numbers, decimals, True/False, quoted words, or an extra such as 'auto' or None).
bool python_value_allowed(const LoaderKeySpec& row, std::string_view text) {
  for (const KeyExtra& extra : row.extras) {
    if (extra.python == text) return true;
  }
  switch (row.type) {
    case KeyType::kInt:
    case KeyType::kNumber:
      return cli_value_allowed(row, std::string(text));
    case KeyType::kBool:
      return text == "True" || text == "False";
    case KeyType::kWord:
      for (const KeyWord& word : row.words) {
        if (!word.python.empty() && "'" + std::string(word.python) + "'" == text) return true;
      }
      return false;
  }
  return false;
}

TEST(LoaderKeys, RowsAreInKeyOrder) {
  const auto rows = loader_keys();
  ASSERT_EQ(rows.size(), static_cast<size_t>(LoaderKey::kChunkShuffleGb) + 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(rows[i].key), i);
    EXPECT_EQ(&loader_key(rows[i].key), &rows[i]);
  }
}

TEST(LoaderKeys, NamesAreUniqueInEachFrontEnd) {
  std::set<std::string> python, flags, yaml;
  for (const LoaderKeySpec& row : loader_keys()) {
    EXPECT_FALSE(row.python.empty() && row.flag.empty() && row.yaml.empty()) << row.help;
    if (!row.python.empty()) {
      EXPECT_TRUE(python.insert(std::string(row.python)).second) << row.python;
    }
    if (!row.yaml.empty()) {
      EXPECT_TRUE(yaml.insert(std::string(row.yaml)).second) << row.yaml;
    }
    // Every name the command line takes for a row: its flag, its YAML key and its aliases.
    std::set<std::string> own;
    if (!row.flag.empty()) {
      EXPECT_TRUE(row.flag.starts_with("--")) << row.flag;
      own.insert(snake(row.flag));
    }
    if (!row.yaml.empty()) own.insert(std::string(row.yaml));
    for (const std::string_view alias : row.aliases) own.insert(std::string(alias));
    for (const std::string& name : own) EXPECT_TRUE(flags.insert(name).second) << name << " names two options";
    if (!row.python.empty()) {
      EXPECT_EQ(find_python_key(row.python), &row);
    }
  }
  EXPECT_EQ(find_python_key("workers"), nullptr);  // a flag, not a keyword
  EXPECT_EQ(find_python_key(""), nullptr);
}

TEST(LoaderKeys, EveryRowHasHelpInNoFrontEndsNames) {
  for (const LoaderKeySpec& row : loader_keys()) {
    EXPECT_FALSE(row.help.empty());
    EXPECT_EQ(row.help.find("--"), std::string_view::npos) << row.help;  // Python's messages show it
    EXPECT_NE(row.help.back(), '.') << row.help;
    EXPECT_EQ(row.type == KeyType::kWord, !row.words.empty()) << row.help;
  }
}

TEST(LoaderKeys, DefaultsAreValuesTheRowTakes) {
  for (const LoaderKeySpec& row : loader_keys()) {
    if (row.type == KeyType::kInt) {
      EXPECT_LE(row.lo, row.hi) << row.help;
    }
    if (row.type == KeyType::kNumber) {
      EXPECT_LE(row.min, row.max) << row.help;
    }
    // A front end that has the option has its default.
    EXPECT_EQ(row.flag.empty() && row.yaml.empty(), row.cli_default.empty()) << row.help;
    EXPECT_EQ(row.python.empty(), row.python_default.empty()) << row.help;
    if (!row.cli_default.empty()) {
      EXPECT_TRUE(cli_value_allowed(row, row.cli_default)) << row.cli_default;
    }
    if (!row.python_default.empty()) {
      EXPECT_TRUE(python_value_allowed(row, row.python_default)) << row.python_default;
    }
  }
  // The typed defaults are the texts'.
  EXPECT_EQ(loader_key(LoaderKey::kWorkers).cli_default, std::to_string(LoaderDefaults::workers));
  EXPECT_EQ(loader_key(LoaderKey::kPinMemory).cli_default, LoaderDefaults::pin_memory ? "true" : "false");
}

TEST(LoaderKeys, RangeMessagesNameTheCallersName) {
  EXPECT_EQ(range_message(LoaderKey::kWorkers, int64_t{1}, "workers"), "");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, int64_t{1024}, "workers"), "");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, int64_t{0}, "workers"), "workers must be between 1 and 1024 (got 0)");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, int64_t{1025}, "--workers"),
            "--workers must be between 1 and 1024 (got 1025)");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, int64_t{-1}, "workers"), "workers must be between 1 and 1024 (got -1)");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, 2.5, "workers"),
            "workers must be a whole number from 1 to 1024 (got 2.5)");
  EXPECT_EQ(range_message(LoaderKey::kWorkers, 3.0, "workers"), "");
  EXPECT_EQ(range_message(LoaderKey::kSeed, std::numeric_limits<int64_t>::max(), "seed"), "");
  EXPECT_EQ(range_message(LoaderKey::kSeed, int64_t{-1}, "seed"), "seed must be >= 0 (got -1)");
  EXPECT_EQ(range_message(LoaderKey::kMaxBadFraction, 1.0, "max_bad_fraction"), "");
  EXPECT_EQ(range_message(LoaderKey::kMaxBadFraction, 1.5, "max_bad_fraction"),
            "max_bad_fraction must be in [0, 1] (got 1.5)");
  EXPECT_NE(range_message(LoaderKey::kMaxBadFraction, std::nan(""), "max_bad_fraction"), "");
  EXPECT_EQ(range_message(LoaderKey::kCacheMaxGb, 1e6, "cache_max_gb"), "");
  EXPECT_EQ(range_message(LoaderKey::kCacheMaxGb, -1.0, "cache_max_gb"), "cache_max_gb must be >= 0 (got -1)");
  EXPECT_NE(range_message(LoaderKey::kCacheMaxGb, std::numeric_limits<double>::infinity(), "cache_max_gb"), "");
}

TEST(LoaderKeys, WordsAreEachFrontEndsSpelling) {
  EXPECT_EQ(word_message(LoaderKey::kOnError, "fail", FrontEnd::kCommandLine, "--on-error"), "");
  EXPECT_EQ(word_message(LoaderKey::kOnError, "raise", FrontEnd::kPython, "on_error"), "");
  EXPECT_EQ(word_message(LoaderKey::kOnError, "raise", FrontEnd::kCommandLine, "--on-error"),
            "--on-error must be one of substitute, fail (got 'raise')");
  EXPECT_EQ(values_text(loader_key(LoaderKey::kOnError), FrontEnd::kCommandLine), "substitute or fail");
  EXPECT_EQ(values_text(loader_key(LoaderKey::kOnError), FrontEnd::kPython), "'substitute' or 'raise'");
}

TEST(LoaderKeys, HelpCarriesTheValues) {
  const LoaderKeySpec& workers = loader_key(LoaderKey::kWorkers);
  EXPECT_EQ(help_text(workers, FrontEnd::kCommandLine),
            "Loader worker threads, 1..1024, or auto (tuned at run time from measured throughput)");
  EXPECT_EQ(values_text(workers, FrontEnd::kPython),
            "1..1024, or 'auto' (tuned at run time from measured throughput), or 0 (one thread, as light as "
            "torch's main-process loading)");
  EXPECT_EQ(help_text(loader_key(LoaderKey::kMaxBadFraction), FrontEnd::kCommandLine),
            "Stop when more than this fraction of an epoch's samples fail to load, in [0, 1]");
  // A seed takes any whole number the type holds: no range to state.
  EXPECT_EQ(values_text(loader_key(LoaderKey::kSeed), FrontEnd::kCommandLine), "");
}

TEST(LoaderKeys, AutoWorkersStartAtHalfTheCoresUpToFour) {
  EXPECT_EQ(auto_workers(0), 1);
  EXPECT_EQ(auto_workers(1), 1);
  EXPECT_EQ(auto_workers(3), 1);
  EXPECT_EQ(auto_workers(4), 2);
  EXPECT_EQ(auto_workers(8), 4);
  EXPECT_EQ(auto_workers(256), 4);
}

TEST(LoaderKeys, BuffersInFlightStayWithinTheLoadersLimit) {
  EXPECT_EQ(buffers_in_flight(4, 2), 8);
  EXPECT_EQ(buffers_in_flight(1, 1), 2);  // one being filled while the consumer holds one
  EXPECT_EQ(buffers_in_flight(64, 1024), kMaxBuffers);
  EXPECT_EQ(buffers_in_flight(64, 64), kMaxBuffers);
}

TEST(LoaderKeys, AdviceIsWordedByEachFrontEnd) {
  const OptionChange workers{LoaderKey::kWorkers, "4"};
  EXPECT_EQ(option_words(workers, FrontEnd::kCommandLine), "--workers 4");
  EXPECT_EQ(option_words(workers, FrontEnd::kPython), "num_workers=4");
  const OptionChange deeper{LoaderKey::kPrefetchFactor, "4", true};
  EXPECT_EQ(option_words(deeper, FrontEnd::kCommandLine), "--prefetch-factor 4 (or more)");
  EXPECT_EQ(option_words(deeper, FrontEnd::kPython), "prefetch_factor=4 (or more)");
  const OptionChange cache{LoaderKey::kCache, "decoded", false, 3.04};
  EXPECT_EQ(option_words(cache, FrontEnd::kCommandLine), "--cache decoded");
  EXPECT_EQ(option_words(cache, FrontEnd::kPython), "cache_decoded_gb=4");  // rounded up: 3 would not hold it
  const OptionChange fail{LoaderKey::kOnError, "fail"};
  EXPECT_EQ(option_words(fail, FrontEnd::kCommandLine), "--on-error fail");
  EXPECT_EQ(option_words(fail, FrontEnd::kPython), "on_error='raise'");
  const OptionChange pinned{LoaderKey::kPinMemory, "true"};
  EXPECT_EQ(option_words(pinned, FrontEnd::kPython), "pin_memory=True");
}

}  // namespace
}  // namespace stoker::data
