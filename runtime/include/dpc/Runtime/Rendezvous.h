//===- Rendezvous.h - A token-checked key-value store over TCP --*- C++ -*-===//
//
// Ranks of a job meet through a small key-value store served over TCP by
// the launcher of node 0 (the role torchrun's TCPStore plays). Every
// connection must first present the job's token; a connection that does
// not (a stray client, another job on the same port) is refused and
// logged, and never sees or changes a key.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_RENDEZVOUS_H
#define DPC_RUNTIME_RENDEZVOUS_H

#include "dpc/Runtime/Status.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace dpc {

/// Serves the store on a thread until destroyed.
class TcpStoreServer {
public:
  /// Listens on `host`:`port` (0: any free port; getPort says which).
  static Status start(const std::string &host, int port,
                      const std::string &token,
                      std::unique_ptr<TcpStoreServer> &server);
  ~TcpStoreServer();
  int getPort() const;
  /// How many connections were refused for a wrong token.
  int getRefusedCount() const;

private:
  struct Impl;
  explicit TcpStoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// A client of a TcpStoreServer.
class TcpStoreClient {
public:
  /// Connects, retrying until `timeout` (the server may start later), and
  /// presents `token`; fails with a clear message when refused.
  static Status connect(const std::string &host, int port,
                        const std::string &token,
                        std::chrono::milliseconds timeout,
                        std::unique_ptr<TcpStoreClient> &client);
  ~TcpStoreClient();

  Status set(const std::string &key, const std::vector<char> &value);
  /// Waits (up to the timeout) for `key` to be set.
  Status get(const std::string &key, std::vector<char> &value);

private:
  struct Impl;
  explicit TcpStoreClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// A fresh random token for a job (hex, from /dev/urandom).
std::string makeJobToken();

} // namespace dpc

#endif // DPC_RUNTIME_RENDEZVOUS_H
