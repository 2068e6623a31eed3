//===- GradientCompression.h - What a compressed reduction sends -*- C++
//-*-===//
//
// The data-parallel gradient compressions dpc builds
// (-dpc-compress-gradients) and what each costs: the bytes an element of a
// gradient puts on the wire, the passes over memory its encoding makes, and
// the state it keeps between steps. The planner prices a reduction with
// them; the pass builds the same program.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_GRADIENTCOMPRESSION_H
#define DPC_ANALYSIS_COSTMODEL_GRADIENTCOMPRESSION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::dpc {

struct GradientCompression {
  enum class Kind {
    None,
    /// Every sum over the data-parallel group cast to a 16-bit float.
    BFloat16,
    Float16,
    /// Of each all-reduce over it, the largest `ratio` of the entries after
    /// adding the rank's residual (error feedback), all-gathered as values
    /// and i64 indices; reduce-scatters stay dense.
    TopK,
  };
  Kind kind = Kind::None;
  double ratio = 1.0;

  /// Parses a `--grad-compression` value: none, bf16, fp16 or topk:RATIO
  /// with 0 < RATIO <= 1. Fails with `error` saying what `text` is not.
  static FailureOr<GradientCompression> parse(StringRef text,
                                              std::string &error);
  /// Parses the compressions a `--grad-compression` value lets the planner
  /// choose among: one compression (fixed), a comma-separated list, or
  /// `auto`, which is none or bf16 (bf16 keeps every entry with 8 bits of
  /// mantissa and f32's range; fp16 needs loss scaling dpc does not do, and
  /// top-k's ratio is a training hyperparameter, so they are chosen only
  /// when listed).
  static FailureOr<SmallVector<GradientCompression, 2>>
  parseChoices(StringRef text, std::string &error);
  /// The text `parse` reads back.
  std::string str() const;

  bool operator==(const GradientCompression &other) const {
    return kind == other.kind && ratio == other.ratio;
  }

  bool isNone() const { return kind == Kind::None; }
  bool isTopK() const { return kind == Kind::TopK; }

  /// Bytes an element of `elementBytes` sends in a sum over the
  /// data-parallel group, where the collective stays a reduction: the
  /// 16-bit casts halve an f32 one (and leave a 16-bit one as it is).
  double getReducedElementBytes(double elementBytes) const;

  /// Top-k: the entries of each all-reduce of `elements` sent (each a
  /// value and an i64 index).
  double getTopKEntries(double elements) const;

  /// Passes over a reduction's buffer of `elementBytes` elements that the
  /// encoding and decoding make, counted in bytes per element: what they
  /// cost at memory bandwidth.
  double getCodingBytesPerElement(double elementBytes) const;
};

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_GRADIENTCOMPRESSION_H
