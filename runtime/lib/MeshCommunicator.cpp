//===- MeshCommunicator.cpp - One rank's collectives over a mesh ----------===//
//
// One Gloo context per group kind, and one for the world, all on one TCP
// device. A worker thread runs the queued requests in order. Collectives
// with a `dim` pack their operands into contiguous per-member blocks, so
// that Gloo's allgather and alltoall move whole blocks; a reduce-scatter is
// an alltoall of the blocks followed by a reduction in group order (the
// bytes a ring reduce-scatter moves, and the interpreter's order of
// summation). Sends are buffered, as the interpreter's mailboxes are: the
// worker copies and posts them, and a second thread waits for Gloo to
// deliver them, so that a ring of sends followed by receives cannot
// deadlock on Gloo's sends, which wait for the matching receive.
//
// Built with exceptions (see CMakeLists.txt): every Gloo call is inside a
// try whose catch turns the exception into a Status naming the request.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/MeshCommunicator.h"
#include "TcpStoreAdapter.h"
#include "dpc/Runtime/SchedulerSlice.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

using namespace dpc;

namespace {
/// The slot prefix of point-to-point messages, apart from those of Gloo's
/// collectives (0x01 to 0x08 in gloo/types.h).
constexpr uint8_t kSendRecvSlotPrefix = 0x40;

/// Collectives of at most this many bytes are latency-bound: they run on
/// their group's second lane and connection, so that one the program
/// waits for at once (a synchronized batch norm's statistics, a loss's
/// count) does not queue behind megabytes of gradient buckets.
constexpr size_t kLatencyBoundBytes = 64 * 1024;

/// This rank's group of one kind (or the world).
struct Group {
  /// World ranks, in group order.
  std::vector<int> members;
  int position = 0;
  /// "group 0: ranks 1, 3", for messages.
  std::string label;
  /// Null for a group of one rank, which needs no connection.
  std::shared_ptr<gloo::Context> context;
  /// The tag of the next collective, so that each has its own slots.
  uint32_t nextTag = 0;
  /// Messages sent to, and received from, each member: the k-th send to a
  /// member matches that member's k-th receive from this rank.
  std::vector<uint32_t> sent, received;
  /// What this rank sent to itself and has not received yet.
  std::deque<std::vector<char>> selfMailbox;

  int size() const { return static_cast<int>(members.size()); }
};

/// A send posted to Gloo and not yet known to be delivered.
struct PendingSend {
  std::vector<char> data;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  /// The start of the message should it fail.
  std::string prefix;
};

/// A queued request, as the worker runs it.
struct Work {
  int64_t ticket = 0;
  std::function<Status()> run;
};

using ReduceFunction = void (*)(void *, const void *, const void *, size_t);

struct Add {
  template <typename T> T operator()(T a, T b) const { return a + b; }
};
struct Maximum {
  template <typename T> T operator()(T a, T b) const { return std::max(a, b); }
};
struct Minimum {
  template <typename T> T operator()(T a, T b) const { return std::min(a, b); }
};
} // namespace

//===----------------------------------------------------------------------===//
// Elements, reductions and blocks
//===----------------------------------------------------------------------===//

static size_t getElementSize(CollectiveElement element) {
  return element == CollectiveElement::F32 ? 4 : 8;
}

/// The product of `shape[begin:end]`.
static size_t product(const std::vector<int64_t> &shape, size_t begin,
                      size_t end) {
  size_t result = 1;
  for (size_t i = begin; i < end; ++i)
    result *= static_cast<size_t>(shape[i]);
  return result;
}

/// `out = combine(a, b)` elementwise; `out` may be `a`.
template <typename T, typename Combine>
static void reduceElements(void *out, const void *a, const void *b,
                           size_t count) {
  T *result = static_cast<T *>(out);
  const T *left = static_cast<const T *>(a);
  const T *right = static_cast<const T *>(b);
  for (size_t i = 0; i < count; ++i)
    result[i] = Combine()(left[i], right[i]);
}

template <typename T>
static ReduceFunction getReduceFunctionFor(CollectiveReduction reduction) {
  switch (reduction) {
  case CollectiveReduction::Max:
    return &reduceElements<T, Maximum>;
  case CollectiveReduction::Min:
    return &reduceElements<T, Minimum>;
  case CollectiveReduction::Sum:
  case CollectiveReduction::Mean:
    break;
  }
  // Mean sums, then divides.
  return &reduceElements<T, Add>;
}

static ReduceFunction getReduceFunction(CollectiveElement element,
                                        CollectiveReduction reduction) {
  switch (element) {
  case CollectiveElement::F32:
    return getReduceFunctionFor<float>(reduction);
  case CollectiveElement::F64:
    return getReduceFunctionFor<double>(reduction);
  case CollectiveElement::I64:
    break;
  }
  return getReduceFunctionFor<int64_t>(reduction);
}

template <typename T>
static void divideAs(void *data, size_t count, int divisor) {
  T *values = static_cast<T *>(data);
  for (size_t i = 0; i < count; ++i)
    values[i] /= static_cast<T>(divisor);
}

/// Turns the sum at `data` into a mean over `divisor` members (integers
/// truncate, as in the interpreter).
static void divide(CollectiveElement element, void *data, size_t count,
                   int divisor) {
  switch (element) {
  case CollectiveElement::F32:
    return divideAs<float>(data, count, divisor);
  case CollectiveElement::F64:
    return divideAs<double>(data, count, divisor);
  case CollectiveElement::I64:
    return divideAs<int64_t>(data, count, divisor);
  }
}

/// Cuts `in` (of `shape`) along `dim` into `parts` equal blocks and lays
/// them out one after the other at `out`.
static void packBlocks(const char *in, const std::vector<int64_t> &shape,
                       size_t dim, int parts, size_t elementSize, char *out) {
  size_t outer = product(shape, 0, dim);
  size_t rows = static_cast<size_t>(shape[dim]);
  size_t rowBytes = product(shape, dim + 1, shape.size()) * elementSize;
  size_t blockRowsBytes = rows / parts * rowBytes;
  for (int part = 0; part < parts; ++part)
    for (size_t o = 0; o < outer; ++o) {
      std::memcpy(out, in + o * rows * rowBytes + part * blockRowsBytes,
                  blockRowsBytes);
      out += blockRowsBytes;
    }
}

/// Concatenates along `dim` the `parts` blocks of `blockShape` laid out one
/// after the other at `in`.
static void unpackBlocks(const char *in, const std::vector<int64_t> &blockShape,
                         size_t dim, int parts, size_t elementSize, char *out) {
  size_t outer = product(blockShape, 0, dim);
  size_t sliceBytes = product(blockShape, dim, blockShape.size()) * elementSize;
  size_t blockBytes = outer * sliceBytes;
  for (size_t o = 0; o < outer; ++o)
    for (int part = 0; part < parts; ++part) {
      std::memcpy(out, in + part * blockBytes + o * sliceBytes, sliceBytes);
      out += sliceBytes;
    }
}

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

static const char *getKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Send:
    return "send";
  case CollectiveKind::Recv:
    return "recv";
  }
  return "collective";
}

/// Gloo's message without its "[file:line] " prefix, and with what a
/// closed connection means for a job.
static std::string describeGlooError(const std::string &message) {
  std::string text = message;
  size_t end = text.find("] ");
  if (!text.empty() && text[0] == '[' && end != std::string::npos)
    text = text.substr(end + 2);
  for (const char *sign :
       {"closed by peer", "Socket closed", "reset by peer", "Broken pipe"})
    if (text.find(sign) != std::string::npos)
      return text + " (a peer rank died or dropped its connections)";
  return text;
}

/// Runs `body` and turns what it throws into a failure starting with
/// `prefix`; `body` may say in `peer` which rank it waits on.
template <typename Body>
static Status catchGlooErrors(const std::string &prefix, Body body) {
  std::string peer;
  try {
    return body(peer);
  } catch (const std::exception &e) {
    return Status::error(prefix + describeGlooError(e.what()) + peer);
  } catch (...) {
    return Status::error(prefix + "an unknown error" + peer);
  }
}

//===----------------------------------------------------------------------===//
// MeshCommunicator::Impl
//===----------------------------------------------------------------------===//

struct MeshCommunicator::Impl {
  MeshCommunicator::Options options;
  std::shared_ptr<gloo::transport::Device> device;
  std::vector<Group> groups;
  /// The same groups over their own connections, for latency-bound
  /// collectives (sends and receives stay on `groups`).
  std::vector<Group> latencyGroups;
  Group world;

  // One queue and worker per lane, all guarded by `mutex`. Two lanes per
  // group kind (bulk, then latency-bound) let the collectives of different
  // groups (tensor- and data-parallel), and a small one behind a large
  // one, progress at once; within a lane they run in start order, which
  // every member of a group shares.
  struct Lane {
    std::deque<Work> queue;
    std::thread worker;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Lane> lanes;
  int64_t nextTicket = 0;
  /// Tickets started and not yet run (or skipped after a failure).
  std::set<int64_t> pending;
  /// The first failure; every wait after it reports it.
  bool failed = false;
  std::string failure;
  bool stopping = false;

  /// The lane of the world's operations (barrier, reports).
  size_t getWorldLane() const { return lanes.size() - 1; }
  /// Whether `request` runs on its group's latency-bound lane.
  bool isLatencyBound(const CollectiveRequest &request) const;

  // Sends not yet delivered, guarded by `sendMutex`; the front one is
  // being waited for.
  std::mutex sendMutex;
  std::condition_variable sendsChanged;
  std::deque<std::unique_ptr<PendingSend>> sends;
  bool stoppingSends = false;
  std::thread sendWaiter;

  ~Impl();
  std::string rankLabel() const {
    return "rank " + std::to_string(options.rank);
  }
  int64_t enqueue(size_t lane, std::function<Status()> run);
  Status waitFor(int64_t ticket);
  void runWorker(size_t lane);
  void runSendWaiter();
  /// Records a failure found outside the worker (a send that failed): it
  /// fails every request that has not completed.
  void failPending(const std::string &message);
  Status waitForSends(const std::string &prefix);

  Status execute(const CollectiveRequest &request, bool latencyBound);
  Status runRequest(const CollectiveRequest &request, Group &group,
                    const std::string &prefix, std::string &peer);
  Status runSend(const CollectiveRequest &request, Group &group,
                 const std::string &prefix, std::string &peer);
  Status runRecv(const CollectiveRequest &request, Group &group,
                 std::string &peer);
  /// Every member's `bytes` bytes at `in`, in group order, at `out`.
  void gatherBytes(Group &group, const void *in, void *out, size_t bytes);
  /// Block m of `in` to member m; block m of `out` from member m.
  void exchangeBlocks(Group &group, const char *in, char *out,
                      size_t blockBytes);
  void allReduce(Group &group, CollectiveElement element, void *data,
                 size_t count, ReduceFunction reduce);
};

MeshCommunicator::Impl::~Impl() {
  // Requests still queued are dropped: their buffers may be gone.
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  for (Lane &lane : lanes)
    if (lane.worker.joinable())
      lane.worker.join();
  // Sends already posted are delivered (or fail) before the connections
  // close.
  {
    std::lock_guard<std::mutex> lock(sendMutex);
    stoppingSends = true;
  }
  sendsChanged.notify_all();
  if (sendWaiter.joinable())
    sendWaiter.join();
}

int64_t MeshCommunicator::Impl::enqueue(size_t lane,
                                        std::function<Status()> run) {
  int64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ticket = nextTicket++;
    pending.insert(ticket);
    lanes[lane].queue.push_back({ticket, std::move(run)});
  }
  changed.notify_all();
  return ticket;
}

Status MeshCommunicator::Impl::waitFor(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex);
  if (ticket < 0 || ticket >= nextTicket)
    return Status::error(rankLabel() + ": no collective with ticket " +
                         std::to_string(ticket) + " was started");
  // Every request is bounded by the timeout, so this wait is too.
  changed.wait(lock, [&] { return !pending.count(ticket) || failed; });
  if (failed)
    return Status::error(failure);
  return Status::success();
}

void MeshCommunicator::Impl::runWorker(size_t lane) {
  for (;;) {
    Work work;
    bool skip;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock,
                   [&] { return stopping || !lanes[lane].queue.empty(); });
      if (stopping)
        return;
      work = std::move(lanes[lane].queue.front());
      lanes[lane].queue.pop_front();
      // After a failure the connections may be half used: fail fast.
      skip = failed;
    }
    Status status = skip ? Status::success() : work.run();
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (status.isError() && !failed) {
        failed = true;
        failure = status.getMessage();
      }
      pending.erase(work.ticket);
    }
    changed.notify_all();
  }
}

void MeshCommunicator::Impl::failPending(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failed)
      return;
    failed = true;
    failure = message;
  }
  changed.notify_all();
}

void MeshCommunicator::Impl::runSendWaiter() {
  for (;;) {
    PendingSend *send;
    {
      std::unique_lock<std::mutex> lock(sendMutex);
      sendsChanged.wait(lock, [&] { return stoppingSends || !sends.empty(); });
      if (sends.empty())
        return;
      send = sends.front().get();
    }
    Status status = catchGlooErrors(send->prefix, [&](std::string &) {
      send->buffer->waitSend(options.timeout);
      return Status::success();
    });
    if (status.isError())
      failPending(status.getMessage());
    {
      std::lock_guard<std::mutex> lock(sendMutex);
      sends.pop_front();
    }
    sendsChanged.notify_all();
  }
}

Status MeshCommunicator::Impl::waitForSends(const std::string &prefix) {
  {
    std::unique_lock<std::mutex> lock(sendMutex);
    // The waiter gives each send up to the timeout, and after a failure
    // the rest end at once: twice the timeout bounds the whole.
    auto bound = options.timeout * 2;
    if (!sendsChanged.wait_for(lock, bound, [&] { return sends.empty(); }))
      return Status::error(prefix +
                           "the sends before it were not delivered within " +
                           std::to_string(bound.count()) + " ms");
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (failed)
    return Status::error(failure);
  return Status::success();
}

void MeshCommunicator::Impl::gatherBytes(Group &group, const void *in,
                                         void *out, size_t bytes) {
  if (group.size() == 1) {
    std::memcpy(out, in, bytes);
    return;
  }
  gloo::AllgatherOptions gather(group.context);
  gather.setInput(static_cast<char *>(const_cast<void *>(in)), bytes);
  gather.setOutput(static_cast<char *>(out), bytes * group.size());
  gather.setTag(group.nextTag++);
  gather.setTimeout(options.timeout);
  gloo::allgather(gather);
}

void MeshCommunicator::Impl::exchangeBlocks(Group &group, const char *in,
                                            char *out, size_t blockBytes) {
  size_t bytes = blockBytes * group.size();
  if (group.size() == 1) {
    std::memcpy(out, in, bytes);
    return;
  }
  gloo::AlltoallOptions exchange(group.context);
  exchange.setInput(const_cast<char *>(in), bytes);
  exchange.setOutput(out, bytes);
  exchange.setTag(group.nextTag++);
  exchange.setTimeout(options.timeout);
  gloo::alltoall(exchange);
}

template <typename T>
static void allReduceAs(const std::shared_ptr<gloo::Context> &context,
                        void *data, size_t count, ReduceFunction reduce,
                        uint32_t tag, std::chrono::milliseconds timeout) {
  // The ring algorithm of the options API: reduce-scatter, then
  // all-gather, every step bounded by the timeout.
  gloo::AllreduceOptions reduceOptions(context);
  reduceOptions.setOutput(static_cast<T *>(data), count);
  reduceOptions.setReduceFunction(reduce);
  reduceOptions.setTag(tag);
  reduceOptions.setTimeout(timeout);
  gloo::allreduce(reduceOptions);
}

void MeshCommunicator::Impl::allReduce(Group &group, CollectiveElement element,
                                       void *data, size_t count,
                                       ReduceFunction reduce) {
  if (group.size() == 1 || count == 0)
    return;
  uint32_t tag = group.nextTag++;
  switch (element) {
  case CollectiveElement::F32:
    return allReduceAs<float>(group.context, data, count, reduce, tag,
                              options.timeout);
  case CollectiveElement::F64:
    return allReduceAs<double>(group.context, data, count, reduce, tag,
                               options.timeout);
  case CollectiveElement::I64:
    return allReduceAs<int64_t>(group.context, data, count, reduce, tag,
                                options.timeout);
  }
}

/// Why `request` cannot run on a group of `size`, or "".
static std::string validate(const CollectiveRequest &request, int size) {
  int64_t rank = static_cast<int64_t>(request.shape.size());
  for (int64_t extent : request.shape)
    if (extent < 0)
      return "a negative extent in its shape";
  bool needsInput = request.kind != CollectiveKind::Recv;
  bool needsOutput = request.kind != CollectiveKind::Send;
  if ((needsInput && !request.input) || (needsOutput && !request.output))
    return "a missing buffer";
  bool hasDim = request.kind == CollectiveKind::ReduceScatter ||
                request.kind == CollectiveKind::AllGather ||
                request.kind == CollectiveKind::AllToAll;
  if (hasDim && (request.dim < 0 || request.dim >= rank))
    return "dimension " + std::to_string(request.dim) + " of a rank-" +
           std::to_string(rank) + " operand";
  if (request.kind == CollectiveKind::AllToAll &&
      (request.concatDim < 0 || request.concatDim >= rank))
    return "concatenation dimension " + std::to_string(request.concatDim) +
           " of a rank-" + std::to_string(rank) + " operand";
  if ((request.kind == CollectiveKind::ReduceScatter ||
       request.kind == CollectiveKind::AllToAll) &&
      request.shape[request.dim] % size != 0)
    return "dimension " + std::to_string(request.dim) + " of extent " +
           std::to_string(request.shape[request.dim]) +
           " does not split into " + std::to_string(size) + " blocks";
  return "";
}

bool MeshCommunicator::Impl::isLatencyBound(
    const CollectiveRequest &request) const {
  bool pointToPoint = request.kind == CollectiveKind::Send ||
                      request.kind == CollectiveKind::Recv;
  size_t bytes = product(request.shape, 0, request.shape.size()) *
                 getElementSize(request.element);
  // Every member decides alike: the shapes are the same on each.
  return !pointToPoint && bytes <= kLatencyBoundBytes;
}

Status MeshCommunicator::Impl::execute(const CollectiveRequest &request,
                                       bool latencyBound) {
  std::string name =
      request.name.empty() ? getKindName(request.kind) : request.name;
  if (request.group < 0 || request.group >= static_cast<int>(groups.size()))
    return Status::error(rankLabel() + ": " + name + " failed: no group kind " +
                         std::to_string(request.group));
  Group &group = (latencyBound ? latencyGroups : groups)[request.group];
  std::string prefix =
      rankLabel() + ": " + name + " (" + group.label + ") failed: ";
  std::string problem = validate(request, group.size());
  if (!problem.empty())
    return Status::error(prefix + problem);
  return catchGlooErrors(prefix, [&](std::string &peer) {
    return runRequest(request, group, prefix, peer);
  });
}

Status MeshCommunicator::Impl::runRequest(const CollectiveRequest &request,
                                          Group &group,
                                          const std::string &prefix,
                                          std::string &peer) {
  size_t elementSize = getElementSize(request.element);
  size_t count = product(request.shape, 0, request.shape.size());
  size_t bytes = count * elementSize;
  int size = group.size();
  const char *input = static_cast<const char *>(request.input);
  char *output = static_cast<char *>(request.output);
  size_t dim = static_cast<size_t>(request.dim);
  // Every member has the same shape (the programs are SPMD), so every
  // member skips an empty exchange alike.
  if (count == 0 && request.kind != CollectiveKind::Send &&
      request.kind != CollectiveKind::Recv)
    return Status::success();

  switch (request.kind) {
  case CollectiveKind::AllReduce:
    if (output != input)
      std::memmove(output, input, bytes);
    allReduce(group, request.element, output, count,
              getReduceFunction(request.element, request.reduction));
    if (request.reduction == CollectiveReduction::Mean)
      divide(request.element, output, count, size);
    return Status::success();
  case CollectiveKind::ReduceScatter: {
    std::vector<char> packed(bytes), received(bytes);
    packBlocks(input, request.shape, dim, size, elementSize, packed.data());
    size_t blockBytes = bytes / size;
    exchangeBlocks(group, packed.data(), received.data(), blockBytes);
    ReduceFunction reduce =
        getReduceFunction(request.element, request.reduction);
    std::memcpy(output, received.data(), blockBytes);
    for (int member = 1; member < size; ++member)
      reduce(output, output, received.data() + member * blockBytes,
             count / size);
    if (request.reduction == CollectiveReduction::Mean)
      divide(request.element, output, count / size, size);
    return Status::success();
  }
  case CollectiveKind::AllGather: {
    // Blocks along the outermost dimension are already the output's.
    if (product(request.shape, 0, dim) == 1) {
      gatherBytes(group, input, output, bytes);
      return Status::success();
    }
    std::vector<char> gathered(bytes * size);
    gatherBytes(group, input, gathered.data(), bytes);
    unpackBlocks(gathered.data(), request.shape, dim, size, elementSize,
                 output);
    return Status::success();
  }
  case CollectiveKind::AllToAll: {
    std::vector<char> packed(bytes), received(bytes);
    packBlocks(input, request.shape, dim, size, elementSize, packed.data());
    exchangeBlocks(group, packed.data(), received.data(), bytes / size);
    std::vector<int64_t> blockShape = request.shape;
    blockShape[dim] /= size;
    unpackBlocks(received.data(), blockShape,
                 static_cast<size_t>(request.concatDim), size, elementSize,
                 output);
    return Status::success();
  }
  case CollectiveKind::Send:
    return runSend(request, group, prefix, peer);
  case CollectiveKind::Recv:
    return runRecv(request, group, peer);
  }
  return Status::error(prefix + "an unknown kind of collective");
}

/// `shift` as a forward distance in a group of `size`.
static int normalizeShift(int64_t shift, int size) {
  return static_cast<int>(((shift % size) + size) % size);
}

Status MeshCommunicator::Impl::runSend(const CollectiveRequest &request,
                                       Group &group, const std::string &prefix,
                                       std::string &peer) {
  size_t bytes = product(request.shape, 0, request.shape.size()) *
                 getElementSize(request.element);
  const char *input = static_cast<const char *>(request.input);
  int shift = normalizeShift(request.shift, group.size());
  if (shift == 0) {
    group.selfMailbox.emplace_back(input, input + bytes);
    return Status::success();
  }
  int to = (group.position + shift) % group.size();
  std::string toRank = "rank " + std::to_string(group.members[to]);
  peer = " (sending to " + toRank + ")";
  // A copy, so that the caller may reuse its buffer once wait() returns,
  // before the peer has received.
  auto send = std::make_unique<PendingSend>();
  send->data.assign(input, input + bytes);
  send->data.reserve(1);
  send->prefix = prefix + "the send to " + toRank + ": ";
  send->buffer = group.context->createUnboundBuffer(send->data.data(), bytes);
  send->buffer->send(to,
                     gloo::Slot::build(kSendRecvSlotPrefix, group.sent[to]++));
  {
    std::lock_guard<std::mutex> lock(sendMutex);
    sends.push_back(std::move(send));
  }
  sendsChanged.notify_all();
  return Status::success();
}

Status MeshCommunicator::Impl::runRecv(const CollectiveRequest &request,
                                       Group &group, std::string &peer) {
  size_t bytes = product(request.shape, 0, request.shape.size()) *
                 getElementSize(request.element);
  int shift = normalizeShift(request.shift, group.size());
  if (shift == 0) {
    // The queue runs in order, so the send came first or never.
    if (group.selfMailbox.empty())
      throw gloo::Exception("this rank sent nothing to itself before");
    std::vector<char> message = std::move(group.selfMailbox.front());
    group.selfMailbox.pop_front();
    if (message.size() != bytes)
      throw gloo::Exception("this rank sent itself " +
                            std::to_string(message.size()) +
                            " bytes, but receives " + std::to_string(bytes));
    std::memcpy(request.output, message.data(), bytes);
    return Status::success();
  }
  int from = (group.position - shift + group.size()) % group.size();
  peer = " (receiving from rank " + std::to_string(group.members[from]) + ")";
  char empty;
  void *target = bytes ? request.output : &empty;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer =
      group.context->createUnboundBuffer(target, bytes);
  buffer->recv(from,
               gloo::Slot::build(kSendRecvSlotPrefix, group.received[from]++));
  buffer->waitRecv(options.timeout);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// MeshCommunicator
//===----------------------------------------------------------------------===//

/// "group 0: ranks 1, 3".
static std::string makeLabel(int kind, const std::vector<int> &members) {
  std::string label = "group " + std::to_string(kind) + ": ranks ";
  for (size_t i = 0; i < members.size(); ++i)
    label += (i ? ", " : "") + std::to_string(members[i]);
  return label;
}

/// Finds `rank`'s group among `partition` (a group kind) and checks that
/// the member lists cover the `worldSize` ranks once each.
static Status findGroup(const std::vector<std::vector<int>> &partition,
                        int kind, int rank, int worldSize, Group &group,
                        size_t &index) {
  std::string where = "group kind " + std::to_string(kind);
  std::vector<int> seen(worldSize, 0);
  bool found = false;
  for (size_t i = 0; i < partition.size(); ++i)
    for (size_t position = 0; position < partition[i].size(); ++position) {
      int member = partition[i][position];
      if (member < 0 || member >= worldSize)
        return Status::error(where + " names rank " + std::to_string(member) +
                             " of a world of " + std::to_string(worldSize));
      if (seen[member]++)
        return Status::error(where + " names rank " + std::to_string(member) +
                             " twice");
      if (member == rank) {
        found = true;
        index = i;
        group.members = partition[i];
        group.position = static_cast<int>(position);
      }
    }
  if (!found)
    return Status::error(where + " has no group with rank " +
                         std::to_string(rank));
  group.label = makeLabel(kind, group.members);
  group.sent.assign(group.members.size(), 0);
  group.received.assign(group.members.size(), 0);
  return Status::success();
}

/// Connects `group` through the keys under `prefix`.
static void connectGroup(Group &group, const std::string &prefix,
                         gloo::rendezvous::Store &store,
                         std::shared_ptr<gloo::transport::Device> &device,
                         std::chrono::milliseconds timeout) {
  if (group.size() == 1)
    return;
  gloo::rendezvous::PrefixStore prefixed(prefix, store);
  auto context =
      std::make_shared<gloo::rendezvous::Context>(group.position, group.size());
  // Before connecting: the rendezvous and every later operation wait this
  // long for peers.
  context->setTimeout(timeout);
  context->connectFullMesh(prefixed, device);
  group.context = std::move(context);
}

MeshCommunicator::MeshCommunicator(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

MeshCommunicator::~MeshCommunicator() = default;

Status
MeshCommunicator::connect(const Options &options,
                          std::unique_ptr<MeshCommunicator> &communicator) {
  std::string rankLabel = "rank " + std::to_string(options.rank);
  if (options.worldSize < 1 || options.rank < 0 ||
      options.rank >= options.worldSize)
    return Status::error(rankLabel + ": not a rank of a world of " +
                         std::to_string(options.worldSize));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::vector<size_t> indices(options.groups.size());
  impl->groups.resize(options.groups.size());
  for (size_t kind = 0; kind < options.groups.size(); ++kind) {
    Status found =
        findGroup(options.groups[kind], static_cast<int>(kind), options.rank,
                  options.worldSize, impl->groups[kind], indices[kind]);
    if (found.isError())
      return Status::error(rankLabel + ": " + found.getMessage());
  }
  impl->latencyGroups = impl->groups;
  for (int rank = 0; rank < options.worldSize; ++rank)
    impl->world.members.push_back(rank);
  impl->world.position = options.rank;
  impl->world.label = "world";

  if (options.worldSize > 1) {
    std::unique_ptr<TcpStoreClient> client;
    Status joined =
        TcpStoreClient::connect(options.storeHost, options.storePort,
                                options.token, options.timeout, client);
    if (joined.isError())
      return Status::error(rankLabel +
                           ": cannot join the job: " + joined.getMessage());
    // Every rank connects the contexts in the same order, so that the
    // members of each meet.
    std::string connecting = "its device on " + options.hostname;
    Status connected = catchGlooErrors("", [&](std::string &) {
      TcpStoreAdapter store(*client);
      gloo::transport::tcp::attr attr;
      attr.hostname = options.hostname;
      // The device's event loop thread, which receives every message,
      // inherits the short slice; this thread takes its own back.
      bool shortSlice = setSchedulerSlice(kCommunicationSliceNs);
      impl->device = gloo::transport::tcp::CreateDevice(attr);
      if (shortSlice)
        setSchedulerSlice(0);
      for (size_t kind = 0; kind < impl->groups.size(); ++kind) {
        Group &group = impl->groups[kind];
        connecting = group.label;
        std::string name = "dpc/group" + std::to_string(kind) + "/" +
                           std::to_string(indices[kind]);
        connectGroup(group, name, store, impl->device, options.timeout);
        connectGroup(impl->latencyGroups[kind], name + "/latency", store,
                     impl->device, options.timeout);
      }
      connecting = impl->world.label;
      connectGroup(impl->world, "dpc/world", store, impl->device,
                   options.timeout);
      return Status::success();
    });
    if (connected.isError()) {
      std::string message = rankLabel + ": cannot connect to its peers (" +
                            connecting + "): " + connected.getMessage();
      if (message.find("waiting for key") != std::string::npos)
        message += "; a rank of the group has not started or cannot reach "
                   "the store";
      return Status::error(message);
    }
  }
  impl->world.sent.assign(options.worldSize, 0);
  impl->world.received.assign(options.worldSize, 0);

  Impl *raw = impl.get();
  // Two lanes per group kind, and the world's.
  impl->lanes = std::vector<Impl::Lane>(2 * impl->groups.size() + 1);
  for (size_t lane = 0; lane < impl->lanes.size(); ++lane)
    impl->lanes[lane].worker = std::thread([raw, lane] {
      setSchedulerSlice(kCommunicationSliceNs);
      raw->runWorker(lane);
    });
  impl->sendWaiter = std::thread([raw] {
    setSchedulerSlice(kCommunicationSliceNs);
    raw->runSendWaiter();
  });
  communicator.reset(new MeshCommunicator(std::move(impl)));
  return Status::success();
}

int MeshCommunicator::getRank() const { return impl->options.rank; }

int MeshCommunicator::getWorldSize() const { return impl->options.worldSize; }

int MeshCommunicator::getGroupPosition(int group) const {
  if (group < 0 || group >= static_cast<int>(impl->groups.size()))
    return -1;
  return impl->groups[group].position;
}

int MeshCommunicator::getGroupSize(int group) const {
  if (group < 0 || group >= static_cast<int>(impl->groups.size()))
    return 0;
  return impl->groups[group].size();
}

int64_t MeshCommunicator::start(CollectiveRequest request) {
  Impl *raw = impl.get();
  // Lanes: the groups' bulk ones, their latency-bound ones, the world's
  // (which also reports an unknown group kind).
  bool known =
      request.group >= 0 && size_t(request.group) < impl->groups.size();
  bool latencyBound = known && impl->isLatencyBound(request);
  size_t lane =
      !known ? impl->getWorldLane()
             : size_t(request.group) + (latencyBound ? impl->groups.size() : 0);
  return impl->enqueue(lane, [raw, latencyBound, request = std::move(request)] {
    return raw->execute(request, latencyBound);
  });
}

Status MeshCommunicator::wait(int64_t ticket) { return impl->waitFor(ticket); }

Status MeshCommunicator::barrier() {
  Impl *raw = impl.get();
  // Everything started before, in every lane, first.
  int64_t last;
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    last = impl->nextTicket - 1;
  }
  for (int64_t ticket = 0; ticket <= last; ++ticket)
    if (Status status = impl->waitFor(ticket); status.isError())
      return status;
  int64_t ticket = impl->enqueue(impl->getWorldLane(), [raw] {
    std::string prefix = raw->rankLabel() + ": the barrier (world) failed: ";
    // A barrier also means that what this rank sent has arrived.
    Status delivered = raw->waitForSends(prefix);
    if (delivered.isError())
      return delivered;
    if (raw->world.size() == 1)
      return Status::success();
    return catchGlooErrors(prefix, [&](std::string &) {
      gloo::BarrierOptions barrierOptions(raw->world.context);
      barrierOptions.setTag(raw->world.nextTag++);
      barrierOptions.setTimeout(raw->options.timeout);
      gloo::barrier(barrierOptions);
      return Status::success();
    });
  });
  return impl->waitFor(ticket);
}

Status MeshCommunicator::allReduceWorld(double *data, size_t count) {
  Impl *raw = impl.get();
  int64_t ticket = impl->enqueue(impl->getWorldLane(), [raw, data, count] {
    return catchGlooErrors(raw->rankLabel() + ": the world all-reduce failed: ",
                           [&](std::string &) {
                             raw->allReduce(raw->world, CollectiveElement::F64,
                                            data, count,
                                            &reduceElements<double, Add>);
                             return Status::success();
                           });
  });
  return impl->waitFor(ticket);
}

Status MeshCommunicator::allGatherWorld(const std::string &bytes,
                                        std::vector<std::string> &gathered) {
  Impl *raw = impl.get();
  int64_t ticket = impl->enqueue(impl->getWorldLane(), [raw, &bytes,
                                                        &gathered] {
    return catchGlooErrors(
        raw->rankLabel() + ": the world all-gather failed: ",
        [&](std::string &) {
          // Sizes first, then every rank's bytes padded to the longest.
          size_t size = raw->world.size();
          int64_t length = static_cast<int64_t>(bytes.size());
          std::vector<int64_t> lengths(size);
          raw->gatherBytes(raw->world, &length, lengths.data(), sizeof(length));
          size_t longest = static_cast<size_t>(
              *std::max_element(lengths.begin(), lengths.end()));
          std::vector<char> padded(longest), all(longest * size);
          std::copy(bytes.begin(), bytes.end(), padded.begin());
          if (longest > 0)
            raw->gatherBytes(raw->world, padded.data(), all.data(), longest);
          gathered.clear();
          for (size_t rank = 0; rank < size; ++rank)
            gathered.emplace_back(all.data() + rank * longest,
                                  static_cast<size_t>(lengths[rank]));
          return Status::success();
        });
  });
  return impl->waitFor(ticket);
}
