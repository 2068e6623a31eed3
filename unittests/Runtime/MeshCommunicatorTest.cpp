//===- MeshCommunicatorTest.cpp - Ranks of a mesh over loopback -----------===//
//
// Four ranks forked on this host meet through a TcpStoreServer in the test
// process and run every collective over the groups of a 2x2 mesh; each rank
// checks its results against values computed here from every rank's
// inputs, as the interpreter defines them, and that a small collective
// overtakes a large one of its group kind. Also: the store refuses a wrong
// token and parks a get until its key is set, and a rank that exits early
// makes its peers' collective fail within the timeout instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/MeshCommunicator.h"
#include "dpc/Runtime/LocalRanks.h"
#include "dpc/Runtime/Rendezvous.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <thread>

using namespace dpc;
using namespace std::chrono_literals;

namespace {

constexpr int kWorld = 4;

/// The group kinds of a 2x2 mesh whose rank is 2 * row + column: `dp` runs
/// along the rows, `tp` along the columns; then the whole mesh, and every
/// rank alone.
enum GroupKind { kDp, kTp, kAll, kAlone };
const std::vector<std::vector<std::vector<int>>> kGroups = {
    {{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}, {{0, 1, 2, 3}}, {{0}, {1}, {2}, {3}}};

/// A dense row-major tensor of the expected values.
struct Reference {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

size_t numElements(const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t extent : shape)
    count *= static_cast<size_t>(extent);
  return count;
}

size_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  size_t result = 1;
  for (size_t i = begin; i < end; ++i)
    result *= static_cast<size_t>(shape[i]);
  return result;
}

/// Rank `rank`'s input of case `seed`: small integers, negative ones too,
/// not ordered by rank, and exact in every element type.
Reference makeInput(int rank, int seed, std::vector<int64_t> shape) {
  Reference input{shape, {}};
  for (size_t i = 0; i < numElements(shape); ++i)
    input.values.push_back(
        static_cast<double>((seed * 37 + rank * 11 + int(i) * 5) % 23 - 7));
  return input;
}

const std::vector<int> &getGroup(int kind, int rank) {
  for (const std::vector<int> &group : kGroups[kind])
    if (std::find(group.begin(), group.end(), rank) != group.end())
      return group;
  return kGroups[kind].front();
}

int getPosition(int kind, int rank) {
  const std::vector<int> &group = getGroup(kind, rank);
  return static_cast<int>(std::find(group.begin(), group.end(), rank) -
                          group.begin());
}

/// The inputs of case `seed` of `rank`'s group of `kind`, in group order.
std::vector<Reference> getGroupInputs(int kind, int rank, int seed,
                                      const std::vector<int64_t> &shape) {
  std::vector<Reference> inputs;
  for (int member : getGroup(kind, rank))
    inputs.push_back(makeInput(member, seed, shape));
  return inputs;
}

/// `value` cut along `dim` into `parts` equal blocks.
std::vector<Reference> split(const Reference &value, size_t dim, int parts) {
  size_t outer = product(value.shape, 0, dim);
  size_t rows = static_cast<size_t>(value.shape[dim]) / parts;
  size_t inner = product(value.shape, dim + 1, value.shape.size());
  std::vector<Reference> blocks(parts);
  for (int part = 0; part < parts; ++part) {
    blocks[part].shape = value.shape;
    blocks[part].shape[dim] = static_cast<int64_t>(rows);
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < rows * inner; ++i)
        blocks[part].values.push_back(
            value.values[(o * value.shape[dim] + part * rows) * inner + i]);
  }
  return blocks;
}

Reference concat(const std::vector<Reference> &values, size_t dim) {
  Reference result{values.front().shape, {}};
  result.shape[dim] *= static_cast<int64_t>(values.size());
  size_t outer = product(result.shape, 0, dim);
  for (size_t o = 0; o < outer; ++o)
    for (const Reference &value : values) {
      size_t slice = product(value.shape, dim, value.shape.size());
      for (size_t i = 0; i < slice; ++i)
        result.values.push_back(value.values[o * slice + i]);
    }
  return result;
}

/// The elementwise reduction of `values` in their order.
Reference reduce(const std::vector<Reference> &values,
                 CollectiveReduction reduction) {
  Reference result = values.front();
  for (size_t v = 1; v < values.size(); ++v)
    for (size_t i = 0; i < result.values.size(); ++i) {
      double &out = result.values[i];
      double in = values[v].values[i];
      switch (reduction) {
      case CollectiveReduction::Sum:
      case CollectiveReduction::Mean:
        out += in;
        break;
      case CollectiveReduction::Max:
        out = std::max(out, in);
        break;
      case CollectiveReduction::Min:
        out = std::min(out, in);
        break;
      }
    }
  if (reduction == CollectiveReduction::Mean)
    for (double &value : result.values)
      value /= static_cast<double>(values.size());
  return result;
}

template <typename T> std::vector<T> toBuffer(const Reference &reference) {
  return std::vector<T>(reference.values.begin(), reference.values.end());
}

/// Appends to `problems` where `actual` differs from `expected`.
template <typename T>
void check(const std::string &what, const std::vector<T> &actual,
           const Reference &expected, std::string &problems) {
  if (actual.size() != expected.values.size()) {
    problems += what + ": " + std::to_string(actual.size()) +
                " elements instead of " +
                std::to_string(expected.values.size()) + "\n";
    return;
  }
  for (size_t i = 0; i < actual.size(); ++i)
    if (static_cast<double>(actual[i]) != expected.values[i]) {
      problems += what + ": element " + std::to_string(i) + " is " +
                  std::to_string(static_cast<double>(actual[i])) +
                  ", expected " + std::to_string(expected.values[i]) + "\n";
      return;
    }
}

template <typename T> CollectiveElement elementOf();
template <> CollectiveElement elementOf<float>() {
  return CollectiveElement::F32;
}
template <> CollectiveElement elementOf<double>() {
  return CollectiveElement::F64;
}
template <> CollectiveElement elementOf<int64_t>() {
  return CollectiveElement::I64;
}

MeshCommunicator::Options makeOptions(int rank, int port,
                                      const std::string &token,
                                      std::chrono::milliseconds timeout) {
  MeshCommunicator::Options options;
  options.rank = rank;
  options.worldSize = kWorld;
  options.storePort = port;
  options.token = token;
  options.groups = kGroups;
  options.timeout = timeout;
  return options;
}

/// One rank's checks: every collective of the header, in the same order on
/// every rank. Returns what went wrong, or "".
std::string runMeshChecks(int rank, int port, const std::string &token) {
  std::unique_ptr<MeshCommunicator> mesh;
  Status connected =
      MeshCommunicator::connect(makeOptions(rank, port, token, 10s), mesh);
  if (connected.isError())
    return connected.getMessage();
  std::string problems;
  if (mesh->getGroupSize(kAll) != 4 || mesh->getGroupPosition(kDp) != rank / 2)
    problems += "wrong group size or position\n";
  auto run = [&](const CollectiveRequest &request) {
    Status status = mesh->wait(mesh->start(request));
    if (status.isError())
      problems += status.getMessage() + "\n";
  };

  // A collective of `kind` over `group` on case `seed`'s input of `shape`,
  // whose result is `expected`.
  auto runCase = [&](auto zero, const std::string &what, CollectiveKind kind,
                     int group, CollectiveReduction reduction, int seed,
                     std::vector<int64_t> shape, int64_t dim, int64_t concatDim,
                     const Reference &expected) {
    using T = decltype(zero);
    std::vector<T> input = toBuffer<T>(makeInput(rank, seed, shape));
    std::vector<T> output(expected.values.size());
    CollectiveRequest request;
    request.kind = kind;
    request.group = group;
    request.reduction = reduction;
    request.element = elementOf<T>();
    request.input = input.data();
    request.output = output.data();
    request.shape = shape;
    request.dim = dim;
    request.concatDim = concatDim;
    request.name = what;
    run(request);
    check(what, output, expected, problems);
  };

  using R = CollectiveReduction;
  using K = CollectiveKind;
  runCase(float(), "all_reduce sum over dp", K::AllReduce, kDp, R::Sum, 1,
          {2, 3}, 0, 0, reduce(getGroupInputs(kDp, rank, 1, {2, 3}), R::Sum));
  runCase(double(), "all_reduce mean over tp", K::AllReduce, kTp, R::Mean, 2,
          {3}, 0, 0, reduce(getGroupInputs(kTp, rank, 2, {3}), R::Mean));
  runCase(int64_t(), "all_reduce max over all", K::AllReduce, kAll, R::Max, 3,
          {4}, 0, 0, reduce(getGroupInputs(kAll, rank, 3, {4}), R::Max));
  runCase(float(), "all_reduce min over all", K::AllReduce, kAll, R::Min, 4,
          {2, 2}, 0, 0, reduce(getGroupInputs(kAll, rank, 4, {2, 2}), R::Min));
  runCase(double(), "all_reduce mean alone", K::AllReduce, kAlone, R::Mean, 5,
          {3}, 0, 0, makeInput(rank, 5, {3}));

  runCase(float(), "reduce_scatter sum along 1 over all", K::ReduceScatter,
          kAll, R::Sum, 6, {2, 8}, 1, 0,
          split(reduce(getGroupInputs(kAll, rank, 6, {2, 8}), R::Sum), 1,
                4)[getPosition(kAll, rank)]);
  runCase(double(), "reduce_scatter mean along 0 over tp", K::ReduceScatter,
          kTp, R::Mean, 7, {4, 2}, 0, 0,
          split(reduce(getGroupInputs(kTp, rank, 7, {4, 2}), R::Mean), 0,
                2)[getPosition(kTp, rank)]);

  runCase(double(), "all_gather along 1 over tp", K::AllGather, kTp, R::Sum, 8,
          {2, 3}, 1, 0, concat(getGroupInputs(kTp, rank, 8, {2, 3}), 1));
  runCase(int64_t(), "all_gather along 0 over dp", K::AllGather, kDp, R::Sum, 9,
          {2, 2}, 0, 0, concat(getGroupInputs(kDp, rank, 9, {2, 2}), 0));

  // Member m's block `position`, for every m, concatenated.
  auto allToAll = [&](int group, int seed, std::vector<int64_t> shape,
                      size_t splitDim, size_t concatDim) {
    std::vector<Reference> blocks;
    for (const Reference &input : getGroupInputs(group, rank, seed, shape))
      blocks.push_back(
          split(input, splitDim,
                static_cast<int>(
                    getGroup(group, rank).size()))[getPosition(group, rank)]);
    return concat(blocks, concatDim);
  };
  runCase(float(), "all_to_all split 0 concat 1 over all", K::AllToAll, kAll,
          R::Sum, 10, {4, 3}, 0, 1, allToAll(kAll, 10, {4, 3}, 0, 1));
  runCase(int64_t(), "all_to_all split 1 concat 1 over all", K::AllToAll, kAll,
          R::Sum, 16, {2, 8}, 1, 1, allToAll(kAll, 16, {2, 8}, 1, 1));
  runCase(double(), "all_to_all split 1 concat 0 over tp", K::AllToAll, kTp,
          R::Sum, 17, {3, 4, 2}, 1, 0, allToAll(kTp, 17, {3, 4, 2}, 1, 0));

  // Sends and receives around a group: every rank sends before it
  // receives, so sends must not wait for their receiver.
  auto runShift = [&](auto zero, const std::string &what, int group,
                      int64_t shift, int seed) {
    using T = decltype(zero);
    std::vector<T> input = toBuffer<T>(makeInput(rank, seed, {5}));
    std::vector<T> output(5);
    CollectiveRequest send;
    send.kind = K::Send;
    send.group = group;
    send.element = elementOf<T>();
    send.input = input.data();
    send.shape = {5};
    send.shift = shift;
    send.name = what + " send";
    CollectiveRequest recv = send;
    recv.kind = K::Recv;
    recv.input = nullptr;
    recv.output = output.data();
    recv.name = what + " recv";
    mesh->start(send);
    run(recv);
    const std::vector<int> &members = getGroup(group, rank);
    int size = static_cast<int>(members.size());
    int from = static_cast<int>(
        ((getPosition(group, rank) - shift) % size + size) % size);
    check(what, output, makeInput(members[from], seed, {5}), problems);
  };
  runShift(double(), "shift 1 over all", kAll, 1, 11);
  runShift(int64_t(), "shift -1 over tp", kTp, -1, 12);
  runShift(float(), "shift 1 alone", kAlone, 1, 13);

  // Two collectives on different group kinds started before waiting: they
  // progress independently, each waited for by its own ticket.
  {
    std::vector<float> first = toBuffer<float>(makeInput(rank, 14, {3}));
    std::vector<float> second = toBuffer<float>(makeInput(rank, 15, {2}));
    std::vector<float> firstOut(3), secondOut(4);
    CollectiveRequest reduceRequest;
    reduceRequest.group = kDp;
    reduceRequest.input = first.data();
    reduceRequest.output = firstOut.data();
    reduceRequest.shape = {3};
    CollectiveRequest gatherRequest;
    gatherRequest.kind = K::AllGather;
    gatherRequest.group = kTp;
    gatherRequest.input = second.data();
    gatherRequest.output = secondOut.data();
    gatherRequest.shape = {2};
    int64_t firstTicket = mesh->start(reduceRequest);
    int64_t secondTicket = mesh->start(gatherRequest);
    for (int64_t ticket : {secondTicket, firstTicket})
      if (Status status = mesh->wait(ticket); status.isError())
        problems += status.getMessage() + "\n";
    check("async all_reduce", firstOut,
          reduce(getGroupInputs(kDp, rank, 14, {3}), R::Sum), problems);
    check("async all_gather", secondOut,
          concat(getGroupInputs(kTp, rank, 15, {2}), 0), problems);
    if (mesh->wait(firstTicket).isError())
      problems += "waiting again for a completed ticket failed\n";
  }

  // A latency-bound collective does not queue behind a bulk one of its
  // group kind: dp position 0 starts a 256 KiB all-reduce, then a 12-byte
  // one, and waits for the small one first; its peer starts the bulk one
  // only after the small one is done. On one queue per group kind that
  // would deadlock (until the timeout).
  {
    std::vector<float> bulk = toBuffer<float>(makeInput(rank, 18, {65536}));
    std::vector<float> small = toBuffer<float>(makeInput(rank, 19, {3}));
    CollectiveRequest bulkRequest;
    bulkRequest.group = kDp;
    bulkRequest.input = bulkRequest.output = bulk.data();
    bulkRequest.shape = {65536};
    bulkRequest.name = "bulk all_reduce";
    CollectiveRequest smallRequest = bulkRequest;
    smallRequest.input = smallRequest.output = small.data();
    smallRequest.shape = {3};
    smallRequest.name = "small all_reduce";
    bool first = getPosition(kDp, rank) == 0;
    int64_t bulkTicket = first ? mesh->start(bulkRequest) : -1;
    if (Status status = mesh->wait(mesh->start(smallRequest)); status.isError())
      problems += status.getMessage() + "\n";
    if (!first)
      bulkTicket = mesh->start(bulkRequest);
    if (Status status = mesh->wait(bulkTicket); status.isError())
      problems += status.getMessage() + "\n";
    check("small all_reduce beside a bulk one", small,
          reduce(getGroupInputs(kDp, rank, 19, {3}), R::Sum), problems);
    check("bulk all_reduce beside a small one", bulk,
          reduce(getGroupInputs(kDp, rank, 18, {65536}), R::Sum), problems);
  }

  // The world.
  Status status = mesh->barrier();
  if (status.isError())
    problems += status.getMessage() + "\n";
  std::vector<double> sums = {double(rank), 1.0};
  status = mesh->allReduceWorld(sums.data(), sums.size());
  if (status.isError() || sums != std::vector<double>{6.0, 4.0})
    problems += "allReduceWorld: " + status.getMessage() + "\n";
  std::vector<std::string> gathered;
  status = mesh->allGatherWorld(std::string(rank, char('a' + rank)), gathered);
  if (status.isError() ||
      gathered != std::vector<std::string>{"", "b", "cc", "ddd"})
    problems += "allGatherWorld: " + status.getMessage() + "\n";
  return problems;
}

/// A running store with a fresh token.
struct Store {
  std::string token = makeJobToken();
  std::unique_ptr<TcpStoreServer> server;

  Status start() {
    return TcpStoreServer::start("127.0.0.1", 0, token, server);
  }
};

TEST(MeshCommunicatorTest, CollectivesOverA2x2Mesh) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();
  std::fflush(nullptr);
  std::vector<std::string> results;
  Status status = runLocalRanks(
      kWorld, 20s,
      [&](int rank, std::string &result) {
        result = runMeshChecks(rank, port, store.token);
        return true;
      },
      results);
  ASSERT_TRUE(status.isSuccess()) << status.getMessage();
  for (int rank = 0; rank < kWorld; ++rank)
    EXPECT_EQ(results[rank], "") << "rank " << rank;
  EXPECT_EQ(store.server->getRefusedCount(), 0);
}

TEST(MeshCommunicatorTest, RankThatExitsFailsItsPeersCollective) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();
  std::fflush(nullptr);
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> results;
  Status status = runLocalRanks(
      kWorld, 15s,
      [&](int rank, std::string &result) {
        std::unique_ptr<MeshCommunicator> mesh;
        Status connected = MeshCommunicator::connect(
            makeOptions(rank, port, store.token, 3s), mesh);
        if (connected.isSuccess())
          connected = mesh->barrier();
        if (connected.isError()) {
          result = "setup: " + connected.getMessage();
          return true;
        }
        if (rank == 3) {
          // Gone while the others wait on it.
          std::this_thread::sleep_for(300ms);
          return true;
        }
        std::vector<float> data(16, 1.0f);
        CollectiveRequest request;
        request.group = kAll;
        request.input = data.data();
        request.output = data.data();
        request.shape = {16};
        request.name = "dpc.all_reduce at exit.mlir:7";
        Status reduced = mesh->wait(mesh->start(request));
        result = reduced.isError() ? reduced.getMessage() : "succeeded";
        return true;
      },
      results);
  ASSERT_TRUE(status.isSuccess()) << status.getMessage();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 12s);
  bool toldDeath = false;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string &message = results[rank];
    EXPECT_EQ(message.rfind("rank " + std::to_string(rank) +
                                ": dpc.all_reduce at exit.mlir:7 (group 2: "
                                "ranks 0, 1, 2, 3) failed: ",
                            0),
              0u)
        << message;
    toldDeath |= message.find("a peer rank died") != std::string::npos;
  }
  EXPECT_TRUE(toldDeath) << results[0] << "\n"
                         << results[1] << "\n"
                         << results[2];
}

TEST(MeshCommunicatorTest, SilentRankTimesOutAndFailuresStick) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();
  std::fflush(nullptr);
  std::vector<std::string> results;
  Status status = runLocalRanks(
      kWorld, 15s,
      [&](int rank, std::string &result) {
        std::unique_ptr<MeshCommunicator> mesh;
        Status connected = MeshCommunicator::connect(
            makeOptions(rank, port, store.token, 1500ms), mesh);
        if (connected.isError()) {
          result = "setup: " + connected.getMessage();
          return true;
        }
        if (rank == 3) {
          // Alive, but never joins the collective.
          std::this_thread::sleep_for(2500ms);
          return true;
        }
        std::vector<double> data(8, 1.0);
        CollectiveRequest request;
        request.group = kAll;
        request.element = CollectiveElement::F64;
        request.input = data.data();
        request.output = data.data();
        request.shape = {8};
        request.name = "dpc.all_reduce at hang.mlir:3";
        Status first = mesh->wait(mesh->start(request));
        // A later collective fails at once, with the first failure.
        request.group = kTp;
        auto started = std::chrono::steady_clock::now();
        Status second = mesh->wait(mesh->start(request));
        bool fast = std::chrono::steady_clock::now() - started < 500ms;
        result = first.getMessage() + "\n" +
                 (second.getMessage() == first.getMessage() && fast
                      ? "sticky"
                      : "second: " + second.getMessage());
        return true;
      },
      results);
  ASSERT_TRUE(status.isSuccess()) << status.getMessage();
  bool timedOut = false;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string &message = results[rank];
    EXPECT_EQ(message.rfind("rank " + std::to_string(rank) +
                                ": dpc.all_reduce at hang.mlir:3 (group 2: "
                                "ranks 0, 1, 2, 3) failed: ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("\nsticky"), std::string::npos) << message;
    timedOut |= message.find("Timed out waiting 1500ms") != std::string::npos;
  }
  EXPECT_TRUE(timedOut) << results[0] << "\n"
                        << results[1] << "\n"
                        << results[2];
}

TEST(MeshCommunicatorTest, MissingRankFailsConnect) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();
  std::fflush(nullptr);
  std::vector<std::string> results;
  Status status = runLocalRanks(
      kWorld, 15s,
      [&](int rank, std::string &result) {
        if (rank == 3)
          return true;
        std::unique_ptr<MeshCommunicator> mesh;
        Status connected = MeshCommunicator::connect(
            makeOptions(rank, port, store.token, 1000ms), mesh);
        result = connected.isError() ? connected.getMessage() : "connected";
        return true;
      },
      results);
  ASSERT_TRUE(status.isSuccess()) << status.getMessage();
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_EQ(results[rank].rfind("rank " + std::to_string(rank) +
                                      ": cannot connect to its peers (group ",
                                  0),
              0u)
        << results[rank];
  // Rank 1 waits for its dp peer, rank 3, by name.
  EXPECT_NE(results[1].find("key 'dpc/group0/1/"), std::string::npos)
      << results[1];
}

TEST(RendezvousTest, WrongTokenIsRefused) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();

  testing::internal::CaptureStderr();
  std::unique_ptr<TcpStoreClient> stray;
  Status refused =
      TcpStoreClient::connect("127.0.0.1", port, "0123456789abcdef", 2s, stray);
  std::string logged = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(refused.isError());
  EXPECT_NE(refused.getMessage().find("refused this connection: wrong job "
                                      "token"),
            std::string::npos)
      << refused.getMessage();
  EXPECT_EQ(store.server->getRefusedCount(), 1);
  EXPECT_NE(logged.find("dpc-run: refused a rendezvous connection from "
                        "127.0.0.1:"),
            std::string::npos)
      << logged;
  EXPECT_NE(logged.find(": wrong job token\n"), std::string::npos) << logged;

  // The right token still gets in.
  std::unique_ptr<TcpStoreClient> client;
  Status joined =
      TcpStoreClient::connect("127.0.0.1", port, store.token, 2s, client);
  ASSERT_TRUE(joined.isSuccess()) << joined.getMessage();
  ASSERT_TRUE(client->set("key", {'v', '\0', 'w'}).isSuccess());
  std::vector<char> value;
  ASSERT_TRUE(client->get("key", value).isSuccess());
  EXPECT_EQ(value, (std::vector<char>{'v', '\0', 'w'}));
  EXPECT_EQ(store.server->getRefusedCount(), 1);
}

TEST(RendezvousTest, GetWaitsForItsKeyAndTimesOutNamingIt) {
  Store store;
  ASSERT_TRUE(store.start().isSuccess());
  int port = store.server->getPort();
  std::unique_ptr<TcpStoreClient> getter, setter;
  ASSERT_TRUE(
      TcpStoreClient::connect("127.0.0.1", port, store.token, 2s, getter)
          .isSuccess());
  ASSERT_TRUE(
      TcpStoreClient::connect("127.0.0.1", port, store.token, 2s, setter)
          .isSuccess());
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    (void)setter->set("late", {'x'});
  });
  std::vector<char> value;
  Status got = getter->get("late", value);
  later.join();
  ASSERT_TRUE(got.isSuccess()) << got.getMessage();
  EXPECT_EQ(value, std::vector<char>{'x'});

  std::unique_ptr<TcpStoreClient> impatient;
  ASSERT_TRUE(
      TcpStoreClient::connect("127.0.0.1", port, store.token, 200ms, impatient)
          .isSuccess());
  Status missing = impatient->get("nobody/sets/this", value);
  ASSERT_TRUE(missing.isError());
  EXPECT_NE(missing.getMessage().find("key 'nobody/sets/this'"),
            std::string::npos)
      << missing.getMessage();
}

TEST(RendezvousTest, ClientRetriesUntilTimeout) {
  // Nothing listens on a port just released: connecting fails after the
  // timeout, saying where it tried.
  int port;
  {
    Store store;
    ASSERT_TRUE(store.start().isSuccess());
    port = store.server->getPort();
  }
  auto started = std::chrono::steady_clock::now();
  std::unique_ptr<TcpStoreClient> client;
  Status status =
      TcpStoreClient::connect("127.0.0.1", port, "token", 300ms, client);
  ASSERT_TRUE(status.isError());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
  EXPECT_NE(status.getMessage().find("127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << status.getMessage();
}

TEST(RendezvousTest, JobTokensAreFreshHex) {
  std::string first = makeJobToken(), second = makeJobToken();
  EXPECT_EQ(first.size(), 32u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(first, second);
}

} // namespace
