//===- Blocks.h - A rank's blocks of whole tensors --------------*- C++ -*-===//
//
// A rank holds, of each value, the block the manifest gives: cut out of
// the whole tensor at start-up, put back to report or check.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_BLOCKS_H
#define DPC_TOOLS_DPC_RUN_BLOCKS_H

#include "Manifest.h"

#include "llvm/ADT/SmallVector.h"

#include <cstddef>

namespace mlir::dpc::artifact {

/// Calls `copy(globalOffset, blockOffset, bytes)` for every row of the
/// block of `localShape` at `start` in a tensor of `shape`.
template <typename Fn>
void forEachRow(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &localShape,
                const std::vector<int64_t> &start, size_t elementBytes,
                Fn copy) {
  int64_t rank = shape.size();
  if (rank == 0)
    return copy(0, 0, elementBytes);
  llvm::SmallVector<int64_t, 8> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows *= localShape[d];
  size_t rowBytes = localShape.back() * elementBytes;
  llvm::SmallVector<int64_t, 8> index(rank, 0);
  for (int64_t row = 0; row < rows && rowBytes > 0; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (start[d] + index[d]) * strides[d];
    copy(offset * elementBytes, row * rowBytes, rowBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < localShape[d])
        break;
      index[d] = 0;
    }
  }
}

/// `shape` as the IR writes it: 8x16, or "scalar".
std::string formatShape(const std::vector<int64_t> &shape);

/// `tensor` converted to the storage of `spec` (float32, float64 or
/// int64); fails on another shape.
::dpc::Status convertForSpec(const TensorSpec &spec,
                             const ::dpc::HostTensor &tensor,
                             ::dpc::HostTensor &out);

/// Rank `rank`'s block of `global`, dense.
std::vector<std::byte> extractBlock(const TensorSpec &spec,
                                    const ::dpc::HostTensor &global, int rank);

/// Writes rank `rank`'s dense `block` into `global`.
void insertBlock(const TensorSpec &spec, ::dpc::HostTensor &global, int rank,
                 const std::byte *block);

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_BLOCKS_H
