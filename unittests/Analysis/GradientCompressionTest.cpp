//===- GradientCompressionTest.cpp - Parsing and pricing compressions -----===//

#include "dpc/Analysis/CostModel/GradientCompression.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

std::vector<std::string> getChoices(StringRef text) {
  std::string error;
  FailureOr<SmallVector<GradientCompression, 2>> choices =
      GradientCompression::parseChoices(text, error);
  if (failed(choices))
    return {"error: " + error};
  std::vector<std::string> names;
  for (const GradientCompression &compression : *choices)
    names.push_back(compression.str());
  return names;
}

TEST(GradientCompression, ChoicesAreListedOrAuto) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(getChoices("topk:0.05"), Names{"topk:0.05"});
  // auto keeps every entry: none or bf16.
  EXPECT_EQ(getChoices("auto"), (Names{"none", "bf16"}));
  // In the order given, each once.
  EXPECT_EQ(getChoices("fp16,none,topk:0.1,fp16,topk:0.10"),
            (Names{"fp16", "none", "topk:0.1"}));
  EXPECT_EQ(getChoices("int8"),
            Names{"error: is not a compression: none, bf16, fp16 or "
                  "topk:RATIO with 0 < RATIO <= 1 (or a comma-separated list "
                  "of them for the planner to choose from, or auto: none or "
                  "bf16)"});
  EXPECT_EQ(getChoices("none,,bf16").front().rfind("error: holds '', which", 0),
            0u);
  EXPECT_EQ(getChoices("none,auto").front().rfind("error: holds 'auto'", 0),
            0u);
}

TEST(GradientCompression, OneCompressionIsNotAChoice) {
  // The pass builds one compression: a choice is the planner's.
  std::string error;
  EXPECT_TRUE(failed(GradientCompression::parse("auto", error)));
  EXPECT_NE(error.find("the planner's to make"), std::string::npos);
  EXPECT_TRUE(failed(GradientCompression::parse("none,bf16", error)));
  FailureOr<GradientCompression> topK =
      GradientCompression::parse("topk:0.25", error);
  ASSERT_TRUE(succeeded(topK));
  EXPECT_TRUE(topK->isTopK());
  EXPECT_EQ(topK->ratio, 0.25);
  EXPECT_EQ(topK->str(), "topk:0.25");
}

TEST(GradientCompression, WhatAnElementSends) {
  std::string error;
  GradientCompression bf16 = *GradientCompression::parse("bf16", error);
  EXPECT_EQ(bf16.getReducedElementBytes(4.0), 2.0);
  // A 16-bit gradient is sent as it is, with no casts.
  EXPECT_EQ(bf16.getReducedElementBytes(2.0), 2.0);
  EXPECT_EQ(bf16.getCodingBytesPerElement(2.0), 0.0);
  EXPECT_EQ(bf16.getCodingBytesPerElement(4.0), 12.0);
  GradientCompression topK = *GradientCompression::parse("topk:0.01", error);
  EXPECT_EQ(topK.getTopKEntries(1000.0), 10.0);
  EXPECT_EQ(topK.getTopKEntries(1001.0), 11.0);
  // At least one entry of a nonempty buffer.
  EXPECT_EQ(topK.getTopKEntries(3.0), 1.0);
}

} // namespace
