// TransformSpec::describe(): a spec as the chain that makes it, in torchvision's notation, with
// torchvision's defaults left out: each registry entry's piece (ops/registry.h), in registry
// order, then the output type and layout. Its text parses back to the same spec
// (parse_transforms).
#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "spec_common.h"
#include "stoker/data/transform.h"

namespace stoker::data {

namespace spec {

std::string size_text(int height, int width) {
  return height == width ? fmt::format("{}", height) : fmt::format("({}, {})", height, width);
}

const char* geometry_name(Geometry geometry) {
  switch (geometry) {
    case Geometry::kRandomResizedCrop:
      return "RandomResizedCrop";
    case Geometry::kResizeCenterCrop:
    case Geometry::kCenterCrop:
      return "CenterCrop";
    case Geometry::kRandomCrop:
      return "RandomCrop";
    case Geometry::kNone:
      break;
  }
  return "output";
}

std::string range_text(double lo, double hi) {
  return lo == -hi && hi >= 0 ? fmt::format("{}", hi) : fmt::format("({}, {})", lo, hi);
}

std::string applied_text(const std::string& transform, double apply_p) {
  return apply_p == 1 ? transform : fmt::format("RandomApply([{}], p={})", transform, apply_p);
}

std::string triple_text(const std::array<float, 3>& v) { return fmt::format("({}, {}, {})", v[0], v[1], v[2]); }

bool grouped(const TransformSpec& spec, Step step) { return spec.choice.has(step) || spec.order.has(step); }

void push_step(std::vector<std::string>* parts, const TransformSpec& spec, Step step, const std::string& text,
               double apply_p) {
  if (!text.empty() && !grouped(spec, step)) parts->push_back(applied_text(text, apply_p));
}

}  // namespace spec

std::string TransformSpec::describe() const {
  std::vector<std::string> parts;
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->describe != nullptr) op->describe(*this, &parts);
  }
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += fmt::format(" {} ", spec::kMiddleDot);
    text += part;
  }
  return fmt::format("{} {} {} {}", text, spec::kArrow, to_string(dtype), to_string(layout));
}

}  // namespace stoker::data
