#include "stoker/core/dynamic_library.h"

#include <gtest/gtest.h>

#include <string>

#include "support/build_paths.h"

namespace stoker {
namespace {

TEST(DynamicLibraryTest, MissingLibraryIsNullWithReasonNamingIt) {
  std::string error;
  const std::string name = "/nonexistent/libstoker-missing.so.1";
  EXPECT_EQ(DynamicLibrary::open(name, &error), nullptr);
  EXPECT_NE(error.find(name), std::string::npos) << error;
  // A null error pointer is allowed.
  EXPECT_EQ(DynamicLibrary::open(name, nullptr), nullptr);
}

TEST(DynamicLibraryTest, ResolvesPresentSymbolsAndNullsAbsentOnes) {
  std::string error;
  auto lib = DynamicLibrary::open(testing::fake_nvml_path(), &error);
  ASSERT_NE(lib, nullptr) << error;
  EXPECT_EQ(lib->name(), testing::fake_nvml_path());
  EXPECT_NE(lib->symbol("nvmlInit_v2"), nullptr);
  EXPECT_EQ(lib->symbol("nvmlNoSuchFunction"), nullptr);
  auto* live_samples = lib->get<int()>("fake_nvml_live_gpm_samples");
  ASSERT_NE(live_samples, nullptr);
  EXPECT_EQ(live_samples(), 0);
}

}  // namespace
}  // namespace stoker
