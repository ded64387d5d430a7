// The transform registry (data/transform/ops/registry.h) is the one place a transform is
// declared: every name in it parses, describes and reads back; RandomApply takes exactly the
// entries that say it may; the unknown-name message lists exactly its names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "data/transform/ops/registry.h"
#include "data/transform/spec_common.h"
#include "stoker/core/error.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

struct Named {
  const ops::TransformOp* op;
  const ops::OpName* name;
};

std::vector<Named> every_name() {
  std::vector<Named> all;
  for (const ops::TransformOp* op : ops::registry()) {
    for (const ops::OpName& name : op->names) all.push_back({op, &name});
  }
  return all;
}

TEST(TransformRegistryTest, NamesAreUniqueAndEachEntryBuilds) {
  std::set<std::string_view> seen;
  ASSERT_FALSE(ops::registry().empty());
  for (const ops::TransformOp* op : ops::registry()) {
    ASSERT_FALSE(op->names.empty());
    EXPECT_NE(op->build, nullptr) << op->names.begin()->name;
    EXPECT_EQ(op->wrap == ops::Wrap::kNo, op->wrapped_p == nullptr) << op->names.begin()->name;
    if (op->wrap != ops::Wrap::kNo) {
      EXPECT_TRUE(op->wrap_hint.empty()) << op->names.begin()->name;
    }
  }
  for (const auto& [op, name] : every_name()) {
    EXPECT_TRUE(seen.insert(name->name).second) << name->name << " is in the registry twice";
    const ops::FoundOp found = ops::find_op(name->name);
    EXPECT_EQ(found.op, op) << name->name;
    EXPECT_EQ(found.name, name) << name->name;
  }
  EXPECT_EQ(ops::find_op("RandomCutout").op, nullptr);
}

// Each name's example parses alone, describes as a chain naming it (where its entry describes),
// and that description parses back to a spec that describes the same way.
TEST(TransformRegistryTest, EveryNameParsesDescribesAndReadsBack) {
  for (const auto& [op, name] : every_name()) {
    SCOPED_TRACE(std::string(name->example));
    ASSERT_FALSE(name->example.empty()) << name->name << " has no example";
    TransformSpec spec;
    ASSERT_NO_THROW(spec = parse_transforms(name->example));
    const std::string text = spec.describe();
    if (op->describe != nullptr) {
      EXPECT_NE(text.find(name->name), std::string::npos) << text;
    }
    TransformSpec back;
    ASSERT_NO_THROW(back = parse_transforms(text)) << text;
    EXPECT_EQ(back.describe(), text);
    EXPECT_NO_THROW(back.validate());
  }
}

// The example's own parameters are those its name declares: a keyword that is not one of them
// is refused, naming the declared ones.
TEST(TransformRegistryTest, ArgumentsBindToTheDeclaredParameters) {
  for (const auto& [op, name] : every_name()) {
    SCOPED_TRACE(std::string(name->name));
    std::string known;
    for (const std::string_view p : name->params) known += (known.empty() ? "" : ", ") + std::string(p);
    const std::string chain = std::string(name->name) + "(no_such_argument=1)";
    EXPECT_EQ(stoker::testing::usage_error_text([&] { parse_transforms(chain); }),
              std::string(name->name) +
                  " has no argument 'no_such_argument' (known: " + (known.empty() ? "none" : known) + ")");
  }
}

// The transforms RandomApply's refusal names, as it lists them.
std::set<std::string> refusal_list() {
  const std::string message =
      stoker::testing::usage_error_text([] { parse_transforms("RandomApply([Resize((8, 8))])"); });
  const std::string head = "RandomApply takes ";
  EXPECT_EQ(message.rfind(head, 0), 0U) << message;
  const std::string list = message.substr(head.size(), message.find(" (got") - head.size());
  std::set<std::string> names;
  std::string word;
  for (const char c : list + ",") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else {
      if (!word.empty() && word != "or" && word != "a" && word != "colour" && word != "operation") names.insert(word);
      word.clear();
    }
  }
  return names;
}

TEST(TransformRegistryTest, RandomApplyWrapsWhatTheRegistrySays) {
  const std::set<std::string> listed = refusal_list();
  for (const auto& [op, name] : every_name()) {
    if (!name->listed) continue;
    SCOPED_TRACE(std::string(name->example));
    const std::string chain = "RandomApply([" + std::string(name->example) + "], p=0.5)";
    if (op->wrap == ops::Wrap::kNo) {
      EXPECT_EQ(listed.count(std::string(name->name)), 0U) << name->name << " is refused but listed as taken";
      const std::string message = stoker::testing::usage_error_text([&] { parse_transforms(chain); });
      EXPECT_EQ(message.rfind("RandomApply takes ", 0), 0U) << message;
      if (!op->wrap_hint.empty()) {
        EXPECT_NE(message.find(std::string(op->wrap_hint)), std::string::npos) << message;
      }
      continue;
    }
    EXPECT_EQ(listed.count(std::string(name->name)), 1U) << name->name << " is taken but not listed as taken";
    TransformSpec alone = parse_transforms(name->example);
    TransformSpec wrapped;
    ASSERT_NO_THROW(wrapped = parse_transforms(chain));
    const double own = *op->wrapped_p(&alone, name->name);
    const double got = *op->wrapped_p(&wrapped, name->name);
    EXPECT_EQ(got, op->wrap == ops::Wrap::kScaleP ? own * 0.5 : 0.5);
    EXPECT_EQ(parse_transforms(wrapped.describe()).describe(), wrapped.describe());
  }
}

// The entries RandomApply may wrap are exactly those with steps (RandomChoice's and
// RandomOrder's members), one step per name, each step once; each step's text is its example's
// description, and evaluation turns each off.
TEST(TransformRegistryTest, StepsAreTheWrappableEntries) {
  std::set<int> steps;
  for (const auto& [op, name] : every_name()) {
    SCOPED_TRACE(std::string(name->name));
    Step step{};
    const bool has_step = ops::step_of(ops::find_op(name->name), &step);
    EXPECT_EQ(has_step, op->wrap != ops::Wrap::kNo);
    if (!has_step) continue;
    EXPECT_NE(op->step_text, nullptr);
    EXPECT_NE(op->for_eval, nullptr);
    EXPECT_TRUE(steps.insert(static_cast<int>(step)).second) << "step " << static_cast<int>(step) << " twice";
    EXPECT_EQ(to_string(step), name->name);
    const TransformSpec spec = parse_transforms(name->example);
    const std::string text = op->step_text(spec, step);
    EXPECT_NE(spec.describe().find(text), std::string::npos) << text;
    const TransformSpec grouped = parse_transforms("RandomOrder([" + std::string(name->example) + "])");
    EXPECT_EQ(grouped.describe(), "none \u00b7 RandomOrder([" + text + "]) \u2192 float32 NCHW");
  }
  EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps));
}

TEST(TransformRegistryTest, UnknownNamesListTheRegistry) {
  std::string known;
  for (const std::string_view name : ops::listed_names()) known += (known.empty() ? "" : ", ") + std::string(name);
  // Far from every name: no suggestion.
  EXPECT_EQ(stoker::testing::usage_error_text([] { parse_transforms("Zzzzzzzz(3)"); }),
            "unknown transform 'Zzzzzzzz' (known: " + known + ")");
  for (const auto& [op, name] : every_name()) {
    const bool in_list = (", " + known + ", ").find(", " + std::string(name->name) + ", ") != std::string::npos;
    EXPECT_EQ(in_list, name->listed) << name->name;
    if (!name->listed || name->name.size() < 6) continue;
    // One letter off: the message suggests the name.
    const std::string typo = std::string(name->name) + "x";
    EXPECT_NE(stoker::testing::usage_error_text([&] {
                parse_transforms(typo);
              }).find("did you mean '" + std::string(name->name) + "'?"),
              std::string::npos)
        << typo;
  }
}

// What the entry's describe writes for `spec`, joined; "" when it has none or writes nothing.
std::string own_part(const ops::TransformOp& op, const TransformSpec& spec) {
  std::vector<std::string> parts;
  if (op.describe != nullptr) op.describe(spec, &parts);
  std::string text;
  for (const std::string& part : parts) text += part;
  return text;
}

// eval_transform() turns off exactly the entries with a for_eval (BoxCrop: makes its margin
// fixed), and keeps the others as they were; what it makes still validates and reads back.
TEST(TransformRegistryTest, EvaluationTurnsOffWhatTheRegistrySays) {
  int turned_off = 0;
  for (const auto& [op, name] : every_name()) {
    SCOPED_TRACE(std::string(name->example));
    const TransformSpec train = parse_transforms(name->example);
    const TransformSpec eval = eval_transform(train);
    if (op->for_eval != nullptr) {
      EXPECT_FALSE(own_part(*op, train).empty()) << "the example should turn " << name->name << " on";
      // BoxCrop evaluates on its own crop with the middle of its margin's range; every other
      // random transform turns off, or into another entry (a random crop into the centre crop).
      const std::string fixed = name->name == "BoxCrop" ? "BoxCrop(margin=0.3, sides=(0.6, 2, 0.6, 0.6))" : "";
      EXPECT_EQ(own_part(*op, eval), fixed) << eval.describe();
      ++turned_off;
    } else {
      EXPECT_EQ(own_part(*op, eval), own_part(*op, train)) << eval.describe();
    }
    EXPECT_NO_THROW(eval.validate()) << eval.describe();
    EXPECT_EQ(parse_transforms(eval.describe()).describe(), eval.describe());
  }
  EXPECT_GE(turned_off, 10);
}

// Feature vectors take the entries marked on_features; any other that describes itself is
// refused with one line naming it: a geometry by its name, another as describe() writes it.
TEST(TransformRegistryTest, FeatureVectorsRefuseImageTransforms) {
  for (const auto& [op, name] : every_name()) {
    SCOPED_TRACE(std::string(name->example));
    TransformSpec spec = parse_transforms(name->example);
    const std::string own = own_part(*op, spec);
    const bool geometry = spec.geometry != Geometry::kNone;
    spec.features.length = 12;
    spec.out_width = 12;
    spec.out_height = 1;
    spec.channels = 1;
    const std::string message = stoker::testing::usage_error_text([&] { spec.validate(); });
    const bool refused = message.find(
                             " is an image transform, and the data holds feature vectors (12 per "
                             "sample); feature vectors take 'Standardize' or 'none'") != std::string::npos;
    if (op->on_features) {
      EXPECT_FALSE(refused) << message;
    } else if (!own.empty()) {
      EXPECT_TRUE(refused) << message;
      EXPECT_EQ(message.rfind(geometry ? spec::geometry_name(spec.geometry) : own, 0), 0U) << message;
    }
  }
}

// Every entry says what it does, for the data reference page (stoker help data --markdown): in
// sentences, one paragraph.
TEST(TransformRegistryTest, EveryEntryHasItsReferenceText) {
  for (const ops::TransformOp* op : ops::registry()) {
    const std::string_view name = op->names.begin()->name;
    if (op->doc.empty()) {
      ADD_FAILURE() << name << " has no doc";
      continue;
    }
    EXPECT_GE(op->doc.size(), 40U) << name << ": " << op->doc;
    EXPECT_EQ(op->doc.find('\n'), std::string_view::npos) << name << ": its doc is one paragraph";
    EXPECT_EQ(op->doc.back(), '.') << name << ": its doc ends a sentence";
  }
}

// describe() writes the transforms in registry order: each piece of a chain with many of them
// belongs to an entry at or after the previous piece's.
TEST(TransformRegistryTest, DescribeFollowsRegistryOrder) {
  const TransformSpec spec = parse_transforms(
      "Normalize, RandomErasing, RandomInvert(0.5), GaussianBlur(3), RandomGrayscale(0.2), ColorJitter(0.4), "
      "RandAugment, RandomAffine(5), RandomApply([RandomRotation(5)]), RandomVerticalFlip(), "
      "RandomHorizontalFlip(), RandomResizedCrop(64), Resize(80), Grayscale, Float16, NHWC");
  std::string text = spec.describe();
  text = text.substr(0, text.find(" \u2192 "));
  std::vector<size_t> order;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(" \u00b7 ", start), text.size());
    std::string part = text.substr(start, end - start);
    if (part.rfind("RandomApply([", 0) == 0) part = part.substr(13);
    const std::string name = part.substr(0, part.find('('));
    size_t index = 0;
    for (const ops::TransformOp* op : ops::registry()) {
      bool here = false;
      for (const ops::OpName& n : op->names) here = here || n.name == name;
      if (here) break;
      ++index;
    }
    ASSERT_LT(index, ops::registry().size()) << name;
    order.push_back(index);
    start = end + std::string(" \u00b7 ").size();
  }
  EXPECT_EQ(order.size(), 14U) << text;
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << text;
}

// draw_params() calls the entries' draws in registry order, so that order is the draw order
// random_params.cpp documents (a determinism contract): the entries that draw, in order.
TEST(TransformRegistryTest, EntriesDrawInTheDocumentedOrder) {
  std::vector<std::string_view> drawing;
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->draw != nullptr) drawing.push_back(op->names.begin()->name);
  }
  const std::vector<std::string_view> documented = {"BoxCrop",
                                                    "RandomResizedCrop",
                                                    "RandomCrop",
                                                    "CenterCrop",
                                                    "none",
                                                    "RandomHorizontalFlip",
                                                    "RandomVerticalFlip",
                                                    "RandomChoice",
                                                    "RandomOrder",
                                                    "RandomRotation",
                                                    "RandomAffine",
                                                    "RandomPerspective",
                                                    "ElasticTransform",
                                                    "TrivialAugmentWide",
                                                    "ColorJitter",
                                                    "RandomGrayscale",
                                                    "GaussianBlur",
                                                    "RandomInvert",
                                                    "RandomErasing"};
  EXPECT_EQ(drawing, documented);
}

// Each step (what RandomApply, RandomChoice and RandomOrder take) belongs to one entry, which
// op_of finds; the entries that move targets' points run their flips before their warps.
TEST(TransformRegistryTest, EveryStepHasItsEntryAndFlipsMapBeforeWarps) {
  for (int s = 0; s < kSteps; ++s) {
    const auto step = static_cast<Step>(s);
    const ops::TransformOp& op = ops::op_of(step);
    EXPECT_NE(std::find(op.steps.begin(), op.steps.end(), step), op.steps.end()) << to_string(step);
  }
  std::vector<std::string_view> mapping;
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->point_map != nullptr) mapping.push_back(op->names.begin()->name);
  }
  const std::vector<std::string_view> expected = {"RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation",
                                                  "RandomAffine", "RandomPerspective"};
  EXPECT_EQ(mapping, expected);
}

}  // namespace
}  // namespace stoker::data
