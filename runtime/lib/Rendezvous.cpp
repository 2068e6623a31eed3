//===- Rendezvous.cpp - A token-checked key-value store over TCP ----------===//
//
// The server is one thread that polls its listening socket, its clients and
// a wake-up pipe. Every message is a frame: a 4-byte big-endian length, then
// that many bytes. A client's first frame is the job's token, answered "OK"
// or "REFUSED" (and then closed). After it, a frame is 'S', the key's
// length (4 bytes), the key and the value, answered by an empty frame; or
// 'G', the key's length and the key, answered by the value once some client
// has set the key: the server parks the get until then, so clients never
// poll.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/Rendezvous.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace dpc;
using Clock = std::chrono::steady_clock;

namespace {
/// The longest first frame a client may send: a token is short, and a
/// stray client (an HTTP request) must be refused before we buffer it.
constexpr uint32_t kMaxTokenFrame = 1024;
/// The longest frame after the token: a bound on what a buggy client can
/// make the server allocate.
constexpr uint32_t kMaxFrame = 1u << 30;
} // namespace

//===----------------------------------------------------------------------===//
// Frames and sockets
//===----------------------------------------------------------------------===//

static void appendLength(std::string &out, uint32_t length) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((length >> shift) & 0xff));
}

static uint32_t readLength(const char *bytes) {
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length = (length << 8) | static_cast<unsigned char>(bytes[i]);
  return length;
}

static std::string makeFrame(const std::string &payload) {
  std::string frame;
  appendLength(frame, static_cast<uint32_t>(payload.size()));
  return frame + payload;
}

/// 'S' or 'G', the key's length, the key, then `value`.
static std::string makeRequest(char op, const std::string &key,
                               const char *value, size_t valueSize) {
  std::string payload(1, op);
  appendLength(payload, static_cast<uint32_t>(key.size()));
  payload += key;
  payload.append(value, valueSize);
  return makeFrame(payload);
}

static std::string errnoText() { return std::strerror(errno); }

/// "127.0.0.1:4242", "[::1]:4242".
static std::string formatAddress(const sockaddr *address) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  socklen_t length = address->sa_family == AF_INET6 ? sizeof(sockaddr_in6)
                                                    : sizeof(sockaddr_in);
  if (::getnameinfo(address, length, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown address";
  if (address->sa_family == AF_INET6)
    return std::string("[") + host + "]:" + port;
  return std::string(host) + ":" + port;
}

/// The addresses of `host`:`port`, or an error naming them.
static Status resolve(const std::string &host, int port, bool passive,
                      addrinfo *&addresses) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(),
                         &hints, &addresses);
  if (rc != 0)
    return Status::error("cannot resolve " + host + ": " + gai_strerror(rc));
  return Status::success();
}

/// Milliseconds left until `deadline`, rounded up, never negative.
static int millisecondsUntil(Clock::time_point deadline) {
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

//===----------------------------------------------------------------------===//
// TcpStoreServer
//===----------------------------------------------------------------------===//

namespace {
/// One connection the server holds.
struct ServerClient {
  int fd = -1;
  std::string address;
  /// Bytes read and not yet parsed, and bytes not yet written.
  std::string input, output;
  bool authenticated = false;
  /// Close once `output` is written (after a refusal).
  bool closing = false;
  bool closed = false;
  /// Set while a get waits for its key.
  bool parked = false;
  std::string parkedKey;
};
} // namespace

struct TcpStoreServer::Impl {
  std::string token;
  int listenFd = -1;
  /// Written to by the destructor to end the thread's poll.
  int wakeFds[2] = {-1, -1};
  int port = 0;
  std::atomic<int> refused{0};
  std::thread thread;

  // Owned by the thread.
  std::vector<ServerClient> clients;
  std::map<std::string, std::string> values;

  ~Impl();
  void run();
  void accept();
  void readFrom(ServerClient &client);
  void writeTo(ServerClient &client);
  void parse(ServerClient &client);
  void refuse(ServerClient &client);
  void handle(ServerClient &client, const std::string &payload);
};

TcpStoreServer::Impl::~Impl() {
  if (thread.joinable()) {
    char byte = 0;
    (void)!::write(wakeFds[1], &byte, 1);
    thread.join();
  }
  for (ServerClient &client : clients)
    ::close(client.fd);
  for (int fd : {listenFd, wakeFds[0], wakeFds[1]})
    if (fd >= 0)
      ::close(fd);
}

void TcpStoreServer::Impl::run() {
  for (;;) {
    std::vector<pollfd> polled = {{wakeFds[0], POLLIN, 0},
                                  {listenFd, POLLIN, 0}};
    for (ServerClient &client : clients) {
      short events = client.closing ? 0 : POLLIN;
      if (!client.output.empty())
        events |= POLLOUT;
      polled.push_back({client.fd, events, 0});
    }
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      std::fprintf(stderr, "dpc-run: the rendezvous store stopped: %s\n",
                   errnoText().c_str());
      return;
    }
    if (polled[0].revents)
      return;
    // Clients accepted now are polled from the next round on.
    size_t numPolled = clients.size();
    for (size_t i = 0; i < numPolled; ++i) {
      ServerClient &client = clients[i];
      short revents = polled[i + 2].revents;
      if (revents & (POLLIN | POLLHUP | POLLERR))
        readFrom(client);
      if (!client.closed && !client.output.empty())
        writeTo(client);
    }
    if (polled[1].revents & POLLIN)
      accept();
    for (ServerClient &client : clients)
      if (!client.closed && client.closing && client.output.empty())
        client.closed = true;
    auto end = std::remove_if(clients.begin(), clients.end(),
                              [](const ServerClient &client) {
                                if (client.closed)
                                  ::close(client.fd);
                                return client.closed;
                              });
    clients.erase(end, clients.end());
  }
}

void TcpStoreServer::Impl::accept() {
  for (;;) {
    sockaddr_storage address;
    socklen_t length = sizeof(address);
    int fd = ::accept4(listenFd, reinterpret_cast<sockaddr *>(&address),
                       &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      return; // EAGAIN, or a connection that went away meanwhile.
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    ServerClient client;
    client.fd = fd;
    client.address = formatAddress(reinterpret_cast<sockaddr *>(&address));
    clients.push_back(std::move(client));
  }
}

void TcpStoreServer::Impl::readFrom(ServerClient &client) {
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::recv(client.fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n <= 0) {
      client.closed = true;
      return;
    }
    client.input.append(buffer, static_cast<size_t>(n));
  }
  parse(client);
}

void TcpStoreServer::Impl::writeTo(ServerClient &client) {
  while (!client.output.empty()) {
    ssize_t n = ::send(client.fd, client.output.data(), client.output.size(),
                       MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    if (n <= 0) {
      client.closed = true;
      return;
    }
    client.output.erase(0, static_cast<size_t>(n));
  }
}

/// Handles every complete frame of `client`, stopping at a parked get:
/// what the client sends after it waits for the answer.
void TcpStoreServer::Impl::parse(ServerClient &client) {
  while (!client.closing && !client.closed && !client.parked &&
         client.input.size() >= 4) {
    uint32_t length = readLength(client.input.data());
    if (!client.authenticated && length > kMaxTokenFrame) {
      refuse(client);
      break;
    }
    if (length > kMaxFrame) {
      client.closed = true;
      break;
    }
    if (client.input.size() < 4 + size_t(length))
      break;
    std::string payload = client.input.substr(4, length);
    client.input.erase(0, 4 + size_t(length));
    if (!client.authenticated) {
      // Compare every byte, so that the time taken tells nothing.
      bool same = payload.size() == token.size();
      unsigned char difference = 0;
      for (size_t i = 0; same && i < payload.size(); ++i)
        difference |= payload[i] ^ token[i];
      if (!same || difference != 0) {
        refuse(client);
        break;
      }
      client.authenticated = true;
      client.output += makeFrame("OK");
      continue;
    }
    handle(client, payload);
  }
  if (!client.closed && !client.output.empty())
    writeTo(client);
}

void TcpStoreServer::Impl::refuse(ServerClient &client) {
  ++refused;
  std::fprintf(stderr,
               "dpc-run: refused a rendezvous connection from %s: wrong job "
               "token\n",
               client.address.c_str());
  client.input.clear();
  client.output = makeFrame("REFUSED");
  client.closing = true;
}

void TcpStoreServer::Impl::handle(ServerClient &client,
                                  const std::string &payload) {
  if (payload.size() < 5 ||
      readLength(payload.data() + 1) > payload.size() - 5) {
    client.closed = true;
    return;
  }
  char op = payload[0];
  std::string key = payload.substr(5, readLength(payload.data() + 1));
  if (op == 'G') {
    auto found = values.find(key);
    if (found != values.end()) {
      client.output += makeFrame(found->second);
      return;
    }
    client.parked = true;
    client.parkedKey = key;
    return;
  }
  if (op != 'S') {
    client.closed = true;
    return;
  }
  std::string &value = values[key];
  value = payload.substr(5 + key.size());
  client.output += makeFrame("");
  // Answer the gets that waited for this key; each may have more to say.
  for (ServerClient &other : clients) {
    if (!other.parked || other.parkedKey != key)
      continue;
    other.parked = false;
    other.output += makeFrame(value);
    if (&other != &client)
      parse(other);
  }
}

TcpStoreServer::TcpStoreServer(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

TcpStoreServer::~TcpStoreServer() = default;

Status TcpStoreServer::start(const std::string &host, int port,
                             const std::string &token,
                             std::unique_ptr<TcpStoreServer> &server) {
  std::string where = host + ":" + std::to_string(port);
  addrinfo *addresses = nullptr;
  Status resolved = resolve(host, port, /*passive=*/true, addresses);
  if (resolved.isError())
    return Status::error("cannot serve the rendezvous store on " + where +
                         ": " + resolved.getMessage());
  auto impl = std::make_unique<Impl>();
  impl->token = token;
  std::string error = "no address";
  for (addrinfo *address = addresses; address; address = address->ai_next) {
    int fd = ::socket(address->ai_family,
                      address->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      address->ai_protocol);
    if (fd < 0) {
      error = errnoText();
      continue;
    }
    // A restarted job may reuse the port while old connections linger.
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, address->ai_addr, address->ai_addrlen) != 0 ||
        ::listen(fd, 512) != 0) {
      error = errnoText();
      ::close(fd);
      continue;
    }
    impl->listenFd = fd;
    break;
  }
  ::freeaddrinfo(addresses);
  if (impl->listenFd < 0)
    return Status::error("cannot serve the rendezvous store on " + where +
                         ": " + error);

  sockaddr_storage bound;
  socklen_t length = sizeof(bound);
  if (::getsockname(impl->listenFd, reinterpret_cast<sockaddr *>(&bound),
                    &length) != 0)
    return Status::error("cannot serve the rendezvous store on " + where +
                         ": getsockname: " + errnoText());
  impl->port = ntohs(bound.ss_family == AF_INET6
                         ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                         : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
  if (::pipe2(impl->wakeFds, O_CLOEXEC | O_NONBLOCK) != 0)
    return Status::error("cannot serve the rendezvous store on " + where +
                         ": pipe: " + errnoText());
  Impl *raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  server.reset(new TcpStoreServer(std::move(impl)));
  return Status::success();
}

int TcpStoreServer::getPort() const { return impl->port; }

int TcpStoreServer::getRefusedCount() const { return impl->refused.load(); }

//===----------------------------------------------------------------------===//
// TcpStoreClient
//===----------------------------------------------------------------------===//

struct TcpStoreClient::Impl {
  int fd = -1;
  /// "host:port", for messages.
  std::string where;
  std::chrono::milliseconds timeout{0};
  /// Set once the connection cannot be trusted any more (a get that timed
  /// out may still be answered later).
  std::string broken;
  /// Calls from several threads take turns on the one connection.
  std::mutex mutex;

  ~Impl() {
    if (fd >= 0)
      ::close(fd);
  }
  Status sendAll(const std::string &bytes, Clock::time_point deadline);
  /// Reads one frame; `waitingFor` says what for in errors.
  Status receiveFrame(std::string &payload, Clock::time_point deadline,
                      const std::string &waitingFor);
  Status receiveAll(char *data, size_t size, Clock::time_point deadline,
                    const std::string &waitingFor);
};

Status TcpStoreClient::Impl::sendAll(const std::string &bytes,
                                     Clock::time_point deadline) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd polled = {fd, POLLOUT, 0};
      int ready = ::poll(&polled, 1, millisecondsUntil(deadline));
      if (ready == 0)
        return Status::error("timed out after " +
                             std::to_string(timeout.count()) +
                             " ms writing to the rendezvous store at " + where);
      continue;
    }
    return Status::error("lost the connection to the rendezvous store at " +
                         where + ": " + errnoText());
  }
  return Status::success();
}

Status TcpStoreClient::Impl::receiveAll(char *data, size_t size,
                                        Clock::time_point deadline,
                                        const std::string &waitingFor) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::recv(fd, data + done, size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0)
      return Status::error("the rendezvous store at " + where +
                           " closed the connection while this rank waited " +
                           "for " + waitingFor);
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Status::error("lost the connection to the rendezvous store at " +
                           where + " while waiting for " + waitingFor + ": " +
                           errnoText());
    pollfd polled = {fd, POLLIN, 0};
    if (::poll(&polled, 1, millisecondsUntil(deadline)) == 0)
      return Status::error("timed out after " +
                           std::to_string(timeout.count()) +
                           " ms waiting for " + waitingFor +
                           " from the rendezvous store at " + where);
  }
  return Status::success();
}

Status TcpStoreClient::Impl::receiveFrame(std::string &payload,
                                          Clock::time_point deadline,
                                          const std::string &waitingFor) {
  char header[4];
  Status status = receiveAll(header, sizeof(header), deadline, waitingFor);
  if (status.isError())
    return status;
  uint32_t length = readLength(header);
  if (length > kMaxFrame)
    return Status::error("the rendezvous store at " + where +
                         " sent a malformed answer");
  payload.resize(length);
  return receiveAll(&payload[0], length, deadline, waitingFor);
}

/// Opens a connected, non-blocking socket to one of `addresses`, or says
/// why none could be reached before `deadline`.
static int connectOnce(addrinfo *addresses, Clock::time_point deadline,
                       std::string &error) {
  for (addrinfo *address = addresses; address; address = address->ai_next) {
    int fd = ::socket(address->ai_family,
                      address->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      address->ai_protocol);
    if (fd < 0) {
      error = errnoText();
      continue;
    }
    int rc = ::connect(fd, address->ai_addr, address->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      // A host that drops packets would hold a blocking connect for
      // minutes; wait no longer than the deadline.
      pollfd polled = {fd, POLLOUT, 0};
      int ready;
      while ((ready = ::poll(&polled, 1, millisecondsUntil(deadline))) < 0 &&
             errno == EINTR)
        ;
      int socketError = ETIMEDOUT;
      socklen_t length = sizeof(socketError);
      if (ready > 0)
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length);
      errno = socketError;
      rc = socketError == 0 ? 0 : -1;
    }
    if (rc == 0) {
      int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      return fd;
    }
    error = errnoText();
    ::close(fd);
  }
  return -1;
}

TcpStoreClient::TcpStoreClient(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

TcpStoreClient::~TcpStoreClient() = default;

Status TcpStoreClient::connect(const std::string &host, int port,
                               const std::string &token,
                               std::chrono::milliseconds timeout,
                               std::unique_ptr<TcpStoreClient> &client) {
  auto impl = std::make_unique<Impl>();
  impl->where = host + ":" + std::to_string(port);
  impl->timeout = timeout;
  auto deadline = Clock::now() + timeout;
  std::string error;
  // The server may not listen yet (node 0's launcher starts it): retry.
  for (;;) {
    addrinfo *addresses = nullptr;
    Status resolved = resolve(host, port, /*passive=*/false, addresses);
    if (resolved.isSuccess()) {
      impl->fd = connectOnce(addresses, deadline, error);
      ::freeaddrinfo(addresses);
      if (impl->fd >= 0)
        break;
    } else {
      error = resolved.getMessage();
    }
    if (Clock::now() >= deadline)
      return Status::error("cannot reach the rendezvous store at " +
                           impl->where + " within " +
                           std::to_string(timeout.count()) + " ms: " + error);
    std::this_thread::sleep_for(std::min<Clock::duration>(
        std::chrono::milliseconds(50), deadline - Clock::now()));
  }

  // The handshake gets its own timeout: connecting may have used most of
  // the first.
  auto handshakeDeadline = Clock::now() + timeout;
  Status status = impl->sendAll(makeFrame(token), handshakeDeadline);
  std::string answer;
  if (status.isSuccess())
    status = impl->receiveFrame(answer, handshakeDeadline,
                                "the answer to the job token");
  if (status.isError())
    return status;
  if (answer == "REFUSED")
    return Status::error("the rendezvous store at " + impl->where +
                         " refused this connection: wrong job token (is "
                         "another job using this port?)");
  if (answer != "OK")
    return Status::error("the rendezvous store at " + impl->where +
                         " sent a malformed answer to the job token");
  client.reset(new TcpStoreClient(std::move(impl)));
  return Status::success();
}

Status TcpStoreClient::set(const std::string &key,
                           const std::vector<char> &value) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (!impl->broken.empty())
    return Status::error(impl->broken);
  auto deadline = Clock::now() + impl->timeout;
  Status status = impl->sendAll(
      makeRequest('S', key, value.data(), value.size()), deadline);
  std::string answer;
  if (status.isSuccess())
    status = impl->receiveFrame(answer, deadline,
                                "the store to take key '" + key + "'");
  if (status.isError())
    impl->broken = status.getMessage();
  return status;
}

Status TcpStoreClient::get(const std::string &key, std::vector<char> &value) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (!impl->broken.empty())
    return Status::error(impl->broken);
  auto deadline = Clock::now() + impl->timeout;
  Status status = impl->sendAll(makeRequest('G', key, nullptr, 0), deadline);
  std::string answer;
  if (status.isSuccess())
    status = impl->receiveFrame(answer, deadline, "key '" + key + "'");
  if (status.isError()) {
    impl->broken = status.getMessage();
    return status;
  }
  value.assign(answer.begin(), answer.end());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

std::string dpc::makeJobToken() {
  unsigned char bytes[16];
  bool filled = false;
  if (std::FILE *file = std::fopen("/dev/urandom", "rb")) {
    filled = std::fread(bytes, 1, sizeof(bytes), file) == sizeof(bytes);
    std::fclose(file);
  }
  if (!filled) {
    // Without /dev/urandom (a bare container), the library's source.
    std::random_device device;
    for (unsigned char &byte : bytes)
      byte = static_cast<unsigned char>(device());
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token.push_back(kDigits[byte >> 4]);
    token.push_back(kDigits[byte & 15]);
  }
  return token;
}
