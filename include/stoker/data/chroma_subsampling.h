// stoker/data/chroma_subsampling.h — the JPEG chroma subsamplings stoker names, declared once:
// the encoder writes each with its sampling factors (encode_jpeg in stoker/data/encode.h), the
// decoder tells them apart in a file's header by the same factors, and front ends take the
// names ("4:2:0").
//
// Errors: none; chroma_subsampling_named() answers nullopt for a name it does not know.
// Thread safety: the declarations are constant; any thread may read them.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace stoker::data {

// Chroma resolution relative to luma (J:a:b notation): k422 halves it horizontally, k420
// both ways, k440 vertically, k411 quarters it horizontally, k410 quarters it horizontally
// and halves it vertically. The rarer ones exist to test decoders against what cameras and
// old tools write.
enum class ChromaSubsampling { k444, k422, k420, k440, k411, k410 };

struct ChromaSubsamplingDeclaration {
  ChromaSubsampling subsampling;
  std::string_view name;  // J:a:b, "4:2:0"
  // Luma's horizontal and vertical sampling factors in a 3-component file (YCbCr; YCCK's K
  // too) whose Cb and Cr are sampled 1x1.
  int h_samp = 1;
  int v_samp = 1;
};

// Every ChromaSubsampling, in the enum's order.
std::span<const ChromaSubsamplingDeclaration> chroma_subsamplings();

// The subsampling `name` names (exactly: "4:2:0"), or nullopt.
std::optional<ChromaSubsampling> chroma_subsampling_named(std::string_view name);

}  // namespace stoker::data
