//===- GradientCompression.cpp - What a compressed reduction sends --------===//

#include "dpc/Analysis/CostModel/GradientCompression.h"

#include "llvm/ADT/StringExtras.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace mlir::dpc;

static constexpr const char *kNotACompression =
    "is not a compression: none, bf16, fp16 or topk:RATIO with 0 < RATIO <= "
    "1";

FailureOr<GradientCompression> GradientCompression::parse(StringRef text,
                                                          std::string &error) {
  GradientCompression compression;
  if (text == "none")
    return compression;
  if (text == "bf16" || text == "fp16") {
    compression.kind = text == "bf16" ? Kind::BFloat16 : Kind::Float16;
    return compression;
  }
  StringRef ratio = text;
  double value = 0;
  // `!(value <= 1)` refuses NaN too.
  if (ratio.consume_front("topk:") && !ratio.getAsDouble(value) && value > 0 &&
      value <= 1) {
    compression.kind = Kind::TopK;
    compression.ratio = value;
    return compression;
  }
  error = kNotACompression;
  if (text == "auto" || text.contains(','))
    error += " (a choice among them is the planner's to make: -dpc-plan)";
  return failure();
}

FailureOr<SmallVector<GradientCompression, 2>>
GradientCompression::parseChoices(StringRef text, std::string &error) {
  SmallVector<GradientCompression, 2> choices;
  if (text == "auto") {
    choices.push_back(GradientCompression());
    choices.push_back(GradientCompression());
    choices.back().kind = Kind::BFloat16;
    return choices;
  }
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    FailureOr<GradientCompression> compression = parse(item, error);
    if (failed(compression)) {
      error = items.size() > 1
                  ? "holds '" + item.str() + "', which " + kNotACompression
                  : std::string(kNotACompression);
      error += " (or a comma-separated list of them for the planner to "
               "choose from, or auto: none or bf16)";
      return failure();
    }
    if (!llvm::is_contained(choices, *compression))
      choices.push_back(*compression);
  }
  return choices;
}

std::string GradientCompression::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::BFloat16:
    return "bf16";
  case Kind::Float16:
    return "fp16";
  case Kind::TopK: {
    // The shortest text that parses back to the same ratio.
    char digits[32];
    auto [end, status] = std::to_chars(digits, digits + sizeof(digits), ratio);
    (void)status;
    return "topk:" + std::string(digits, end);
  }
  }
  llvm_unreachable("unknown gradient compression");
}

double GradientCompression::getReducedElementBytes(double elementBytes) const {
  if (kind == Kind::BFloat16 || kind == Kind::Float16)
    return std::min(elementBytes, 2.0);
  return elementBytes;
}

double GradientCompression::getTopKEntries(double elements) const {
  return kind == Kind::TopK ? std::clamp(std::ceil(ratio * elements), 1.0,
                                         std::max(1.0, elements))
                            : elements;
}

double
GradientCompression::getCodingBytesPerElement(double elementBytes) const {
  switch (kind) {
  case Kind::None:
    return 0.0;
  case Kind::BFloat16:
  case Kind::Float16:
    // A cast to 16 bits before the sum and back after it.
    return elementBytes > 2.0 ? 2.0 * (elementBytes + 2.0) : 0.0;
  case Kind::TopK:
    // The residual added (three passes), the selection (an i64 index per
    // element written and read, the values gathered), the sent entries
    // scattered into zeros and subtracted (four), the gathered entries
    // scattered into the dense sum (one). Its comparisons are not counted.
    return 9.0 * elementBytes + 16.0;
  }
  llvm_unreachable("unknown gradient compression");
}
