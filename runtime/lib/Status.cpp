//===- Status.cpp - Success or an error message ---------------------------===//
//
// Out-of-line construction of failed statuses.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/Status.h"

using namespace dpc;

Status Status::error(std::string message) {
  Status status;
  status.failed = true;
  status.message = std::move(message);
  return status;
}
