//===- TcpStoreAdapter.h - A Gloo store over a TcpStoreClient ---*- C++ -*-===//
//
// Gloo contexts find each other through a gloo::rendezvous::Store; this one
// forwards to the job's token-checked TcpStore. Gloo expects a store to
// throw, so only files built with exceptions include this header.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LIB_TCPSTOREADAPTER_H
#define DPC_RUNTIME_LIB_TCPSTOREADAPTER_H

#include "dpc/Runtime/Rendezvous.h"

#include <gloo/common/error.h>
#include <gloo/rendezvous/store.h>

namespace dpc {

/// A Gloo store backed by `client`, which must outlive it. Wrap it in a
/// gloo::rendezvous::PrefixStore per context so that contexts do not mix
/// their keys.
class TcpStoreAdapter : public gloo::rendezvous::Store {
public:
  explicit TcpStoreAdapter(TcpStoreClient &client) : client(client) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    check(client.set(key, data));
  }

  /// Waits for the key, as Gloo's stores do: connectFullMesh gets keys
  /// that other ranks may not have set yet.
  std::vector<char> get(const std::string &key) override {
    std::vector<char> value;
    check(client.get(key, value));
    return value;
  }

  void wait(const std::vector<std::string> &keys) override {
    for (const std::string &key : keys)
      get(key);
  }

  /// The client's own timeout bounds the wait: the communicator gives the
  /// client and its contexts the same one.
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &) override {
    wait(keys);
  }

private:
  static void check(const Status &status) {
    if (status.isError())
      throw gloo::IoException(status.getMessage());
  }

  TcpStoreClient &client;
};

} // namespace dpc

#endif // DPC_RUNTIME_LIB_TCPSTOREADAPTER_H
