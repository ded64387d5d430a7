// The data reference, written from the declarations: the formats (stoker/data/formats.h), the
// transform registry (data/transform/ops/registry.h), the split names (stoker/data/split.h) and
// the loader options (stoker/data/loader_keys.h), with the hand-written sections between them
// (data_reference_text.h). `stoker help data --markdown` prints the page that
// docs/reference/data.md holds (a test compares the two); `stoker help data` a summary for the
// terminal.
//
// Thread safety: pure functions of immutable declarations. Errors: none expected; a registry
// example that no longer parses throws its UsageError (the registry's test catches it first).
#pragma once

#include <string>

namespace stoker::cli {

// The command that regenerates docs/reference/data.md; the page's first line names it.
inline constexpr const char* kDataReferenceCommand = "./build/src/stoker help data --markdown > docs/reference/data.md";

// docs/reference/data.md, whole.
std::string data_reference_markdown();

// The formats and every transform's call, one line each, and where the page is.
std::string data_reference_summary();

}  // namespace stoker::cli
