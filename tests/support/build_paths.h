// The programs and libraries of the build a test program belongs to, found from the running
// test program itself (BUILD/tests/<program>). No absolute build path is compiled into a test,
// so a clone in another folder compiles to the same objects and the compiler cache serves it.
#pragma once

#include <string>

namespace stoker::testing {

// BUILD/`relative`, e.g. build_path("src/stoker").
std::string build_path(const std::string& relative);

// The fake libnvidia-ml.so.1 of tests/fake_nvml/.
inline std::string fake_nvml_path() { return build_path("tests/fake_nvml/libnvidia-ml.so.1"); }

// The library of tests/slow_listing/, preloaded to make listing folders slow.
inline std::string slow_listing_path() { return build_path("tests/slow_listing/libslow_listing.so"); }

// The folders of the fake libnvjpeg.so.12 of tests/fake_nvjpeg/: every function, or all but
// nvjpegDecodeBatchedEx.
inline std::string fake_nvjpeg_dir() { return build_path("tests/fake_nvjpeg/complete"); }
inline std::string fake_nvjpeg_partial_dir() { return build_path("tests/fake_nvjpeg/partial"); }

}  // namespace stoker::testing
