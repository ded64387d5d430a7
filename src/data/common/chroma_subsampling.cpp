#include "stoker/data/chroma_subsampling.h"

#include <array>

namespace stoker::data {

namespace {

constexpr std::array<ChromaSubsamplingDeclaration, 6> kDeclarations{{
    {ChromaSubsampling::k444, "4:4:4", 1, 1},
    {ChromaSubsampling::k422, "4:2:2", 2, 1},
    {ChromaSubsampling::k420, "4:2:0", 2, 2},
    {ChromaSubsampling::k440, "4:4:0", 1, 2},
    {ChromaSubsampling::k411, "4:1:1", 4, 1},
    {ChromaSubsampling::k410, "4:1:0", 4, 2},
}};

// In the enum's order, as chroma_subsamplings() promises.
constexpr bool in_enum_order() {
  for (size_t i = 0; i < kDeclarations.size(); ++i) {
    if (static_cast<size_t>(kDeclarations[i].subsampling) != i) return false;
  }
  return true;
}
static_assert(in_enum_order());

}  // namespace

std::span<const ChromaSubsamplingDeclaration> chroma_subsamplings() { return kDeclarations; }

std::optional<ChromaSubsampling> chroma_subsampling_named(std::string_view name) {
  for (const ChromaSubsamplingDeclaration& d : kDeclarations) {
    if (d.name == name) return d.subsampling;
  }
  return std::nullopt;
}

}  // namespace stoker::data
