//===- Status.h - Success or an error message -------------------*- C++ -*-===//
//
// The result of a runtime call that can fail on its inputs (a file, a
// peer): success, or a message for the user. The runtime has no LLVM
// dependency, so it cannot use llvm::Error; and it is built without
// exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_STATUS_H
#define DPC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace dpc {

/// Success, or failure with a message that says what went wrong and where
/// (for files, the message starts with the file's name).
class [[nodiscard]] Status {
public:
  /// A successful status.
  static Status success() { return Status(); }
  /// A failure with `message`.
  static Status error(std::string message);

  bool isSuccess() const { return !failed; }
  bool isError() const { return failed; }
  /// The message of a failure; empty on success.
  const std::string &getMessage() const { return message; }

private:
  Status() = default;

  bool failed = false;
  std::string message;
};

} // namespace dpc

#endif // DPC_RUNTIME_STATUS_H
