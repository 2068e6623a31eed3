//===- HugePageAllocator.h - Large blocks on huge pages ---------*- C++ -*-===//
//
// A step of a model makes hundreds of tensors as large as its parameters,
// each written once. Faulting them in 4 KiB pages costs more than the
// arithmetic on them (the interpreter on resnet18's AdamW step in fp64:
// 9.1 s, 6.4 s on huge pages), so blocks of 2 MiB and more are aligned to
// huge pages and marked for the kernel to back them with such (where
// transparent huge pages are set to `madvise`). Runtime code is built with
// exceptions and the compiler without: failure throws or aborts to match.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_HUGEPAGEALLOCATOR_H
#define DPC_RUNTIME_HUGEPAGEALLOCATOR_H

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace dpc {

/// `bytes` of memory, on huge pages from 2 MiB on; null when there is none.
void *allocateBlock(size_t bytes);

template <typename T> class HugePageAllocator {
public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}

  T *allocate(size_t count) {
    void *block = count > size_t(-1) / sizeof(T)
                      ? nullptr
                      : allocateBlock(count * sizeof(T));
    if (!block)
      outOfMemory();
    return static_cast<T *>(block);
  }
  void deallocate(T *block, size_t) { std::free(block); }

  [[noreturn]] static void outOfMemory() {
#if __cpp_exceptions
    throw std::bad_alloc();
#else
    std::fputs("out of memory\n", stderr);
    std::abort();
#endif
  }

  template <typename U> bool operator==(const HugePageAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const HugePageAllocator<U> &) const {
    return false;
  }
};

} // namespace dpc

#endif // DPC_RUNTIME_HUGEPAGEALLOCATOR_H
