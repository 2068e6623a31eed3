//===- SanitizerOptions.cpp - ASan defaults for the fuzz targets ----------===//
//
// LLVM's BumpPtrAllocator poisons its free space when the code that
// inlines it is built with ASan. dpc's code is, MLIR's prebuilt libraries
// are not: memory they hand out from a slab dpc's code poisoned stays
// poisoned, and every read of it would be a false report. User poisoning
// is therefore off; ASan still sees every heap, stack and global error.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
