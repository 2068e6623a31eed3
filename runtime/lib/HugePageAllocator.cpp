//===- HugePageAllocator.cpp - Large blocks on huge pages -----------------===//

#include "dpc/Runtime/HugePageAllocator.h"

#include <sys/mman.h>

void *dpc::allocateBlock(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  if (bytes < kHugePage)
    return std::malloc(bytes ? bytes : 1);
  size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < bytes)
    return nullptr;
  void *block = std::aligned_alloc(kHugePage, rounded);
  // Advice only: without huge pages the block works as any other.
  if (block)
    (void)::madvise(block, rounded, MADV_HUGEPAGE);
  return block;
}
