//===- Npy.h - NumPy .npy and .npz files ------------------------*- C++ -*-===//
//
// Reads and writes host tensors as NumPy files: `.npy` (format versions
// 1.0, 2.0 and 3.0, C order) and `.npz` (a zip of `.npy` entries, stored
// or deflated). Every problem with a file, including a truncated or
// garbled one, is a Status naming the file, never a crash.
//
// NumPy has no bfloat16, so bf16 tensors cannot be written; callers widen
// them to float32 first.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_NPY_H
#define DPC_RUNTIME_NPY_H

#include "dpc/Runtime/HostTensor.h"
#include "dpc/Runtime/Status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace dpc {

/// The `.npy` file name of the tensor `name` in an input or output
/// directory: '%' becomes "%25" and '/' becomes "%2F" (as python/dpc's
/// `npy_name`), then ".npy" is appended.
std::string getNpyFileName(const std::string &name);

/// The NumPy descr of `dtype` ("<f4", "|b1", ...); null for bf16.
const char *getNpyDescr(DType dtype);

/// Parses the `size` bytes at `bytes` as a `.npy` file; `source` names it
/// in error messages.
Status parseNpy(const void *bytes, size_t size, const std::string &source,
                HostTensor &tensor);

/// Encodes `tensor` as a `.npy` file (version 1.0, or 2.0 when the header
/// needs it) into `bytes`.
Status serializeNpy(const HostTensor &tensor, std::string &bytes);

/// Reads the `.npy` file at `path`.
Status readNpyFile(const std::string &path, HostTensor &tensor);

/// Writes `tensor` to `path` as `.npy`, atomically.
Status writeNpyFile(const std::string &path, const HostTensor &tensor);

/// Reads every entry of the `.npz` file at `path`, in archive order. The
/// name of a tensor is its entry name without ".npy" (as `numpy.load`
/// gives it).
Status readNpzFile(const std::string &path, std::vector<NamedTensor> &tensors);

/// Writes `tensors` to `path` as an uncompressed `.npz`, atomically.
Status writeNpzFile(const std::string &path,
                    const std::vector<NamedTensor> &tensors);

} // namespace dpc

#endif // DPC_RUNTIME_NPY_H
