//===- CpuFeaturesTest.cpp - Instruction-set extensions -------------------===//

#include "dpc/Runtime/CpuFeatures.h"

#include <gtest/gtest.h>

namespace {

TEST(CpuFeaturesTest, ReadsWholeMacroNames) {
  // __AVX512FP16__ does not define __AVX512F__; a value after the name is
  // allowed.
  std::string macros = "#define __SSE2__ 1\n#define __AVX512FP16__ 1\n"
                       "#define __FMA__ 1\n#define __AVX2__\n"
                       "#define NOT__AVX__ 1\n";
  std::vector<std::string> expected = {"avx2", "fma", "avx512fp16"};
  EXPECT_EQ(dpc::getCpuFeaturesFromMacros(macros), expected);
  EXPECT_TRUE(dpc::getCpuFeaturesFromMacros("").empty());
}

TEST(CpuFeaturesTest, ChecksTheNamesItReads) {
  std::vector<std::string> all = dpc::getCpuFeaturesFromMacros(
      "#define __AVX__ 1\n#define __AVX512F__ 1\n#define __SSE4_2__ 1\n");
  ASSERT_EQ(all.size(), 3u);
#if defined(__x86_64__)
  for (const std::string &name : all)
    EXPECT_TRUE(dpc::hasCpuFeature(name).has_value()) << name;
#endif
  EXPECT_FALSE(dpc::hasCpuFeature("no-such-extension").has_value());
}

#if defined(__x86_64__)
TEST(CpuFeaturesTest, EveryX86CpuOfThisCenturyHasSse3) {
  EXPECT_EQ(dpc::hasCpuFeature("sse3"), std::optional<bool>(true));
}
#endif

} // namespace
