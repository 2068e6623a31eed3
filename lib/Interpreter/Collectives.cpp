//===- Collectives.cpp - Simulated ranks exchanging values ----------------===//

#include "Collectives.h"
#include "Executor.h"
#include "Kernels.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <chrono>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

FailureOr<std::vector<Tensor>>
CollectiveContext::exchange(int64_t rank, uint64_t sequence,
                            ArrayRef<int64_t> group, Tensor value,
                            std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  auto key = std::make_pair(sequence, group.front());
  Meeting &meeting = meetings[key];
  if (meeting.values.empty())
    meeting.values.resize(group.size());
  size_t position = llvm::find(group, rank) - group.begin();
  meeting.values[position] = std::move(value);
  ++meeting.arrived;
  changed.notify_all();
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  bool complete = changed.wait_until(lock, deadline, [&] {
    return meeting.arrived == group.size() || failedRank.has_value();
  });
  if (!complete || meeting.arrived != group.size()) {
    error = failedRank ? "rank " + std::to_string(*failedRank) +
                             " stopped on an error before this collective"
                       : "the group's other ranks did not arrive within " +
                             std::to_string(int(timeoutSeconds)) + " s";
    return failure();
  }
  std::vector<Tensor> values = meeting.values;
  if (++meeting.left == group.size())
    meetings.erase(key);
  return values;
}

void CollectiveContext::abort(int64_t rank) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!failedRank)
    failedRank = rank;
  changed.notify_all();
}

void CollectiveContext::send(int64_t from, int64_t to, Tensor value) {
  std::lock_guard<std::mutex> lock(mutex);
  mailboxes[{from, to}].push_back(std::move(value));
  changed.notify_all();
}

FailureOr<Tensor> CollectiveContext::receive(int64_t from, int64_t to,
                                             std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  std::deque<Tensor> &box = mailboxes[{from, to}];
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutSeconds);
  bool arrived = changed.wait_until(
      lock, deadline, [&] { return !box.empty() || failedRank.has_value(); });
  if (!arrived || box.empty()) {
    error = failedRank
                ? "rank " + std::to_string(*failedRank) +
                      " stopped on an error before sending here"
                : "rank " + std::to_string(from) + " sent nothing within " +
                      std::to_string(int(timeoutSeconds)) + " s";
    return failure();
  }
  Tensor value = std::move(box.front());
  box.pop_front();
  return value;
}

/// The elementwise reduction of `values` by `kind`, in their order.
static Tensor reduceValues(ArrayRef<Tensor> values, ReductionKind kind) {
  Tensor result = values.front();
  dispatchKind(result.getKind(), [&](auto zero) {
    using T = decltype(zero);
    MutableArrayRef<T> out = result.getData<T>();
    for (const Tensor &value : values.drop_front()) {
      ArrayRef<T> in = value.getData<T>();
      for (size_t i = 0; i < out.size(); ++i) {
        switch (kind) {
        case ReductionKind::sum:
        case ReductionKind::mean:
          out[i] += in[i];
          break;
        case ReductionKind::max:
          out[i] = std::max(out[i], in[i]);
          break;
        case ReductionKind::min:
          out[i] = std::min(out[i], in[i]);
          break;
        }
      }
    }
    if (kind == ReductionKind::mean)
      for (T &element : out)
        element /= static_cast<T>(values.size());
  });
  return result;
}

/// `input` cut along `dim` into `parts` equal blocks.
static SmallVector<Tensor> splitEvenly(const Tensor &input, int64_t dim,
                                       int64_t parts) {
  SmallVector<int64_t> sizes(parts, input.getShape()[dim] / parts);
  return split(input, dim, sizes);
}

static Tensor concatAll(ArrayRef<Tensor> values, int64_t dim) {
  SmallVector<const Tensor *> inputs;
  SmallVector<int64_t> shape(values.front().getShape());
  shape[dim] = 0;
  for (const Tensor &value : values) {
    inputs.push_back(&value);
    shape[dim] += value.getShape()[dim];
  }
  return concat(inputs, dim, shape);
}

/// The group of `rank` for the communicating op `op` (its `mesh` and
/// `axes`), in the group's order; fails when the mesh is not the ranks'.
static FailureOr<SmallVector<int64_t>> getGroupOf(Operation *op,
                                                  const RankContext &rank) {
  auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (mesh.getNumDevices() != int64_t(rank.numRanks))
    return op->emitError("runs on mesh ")
           << meshName << " of " << mesh.getNumDevices() << " devices, but "
           << rank.numRanks << " ranks run";
  SmallVector<StringRef> axes;
  for (Attribute axis : op->getAttrOfType<ArrayAttr>("axes"))
    axes.push_back(cast<StringAttr>(axis).getValue());
  return mesh.getGroup(rank.rank, axes);
}

FailureOr<Tensor>
mlir::dpc::interpreter::runPointToPoint(Operation *op, const Tensor *input,
                                        const RankContext &rank) {
  FailureOr<SmallVector<int64_t>> found = getGroupOf(op, rank);
  if (failed(found))
    return failure();
  if (!rank.collectives)
    return op->emitError("needs the ranks of its group to run together "
                         "(interpretRanks)");
  SmallVector<int64_t> group = std::move(*found);
  int64_t size = group.size();
  int64_t position = llvm::find(group, int64_t(rank.rank)) - group.begin();
  int64_t shift = op->getAttrOfType<IntegerAttr>("shift").getInt() % size;
  if (input) {
    rank.collectives->send(rank.rank, group[(position + shift + size) % size],
                           *input);
    return Tensor();
  }
  int64_t from = group[(position - shift + size) % size];
  std::string error;
  FailureOr<Tensor> value = rank.collectives->receive(from, rank.rank, error);
  if (failed(value))
    return op->emitError("rank ") << rank.rank << ": " << error;
  return value;
}

FailureOr<Tensor> mlir::dpc::interpreter::runCollective(Operation *op,
                                                        const Tensor &input,
                                                        const RankContext &rank,
                                                        uint64_t sequence) {
  FailureOr<SmallVector<int64_t>> found = getGroupOf(op, rank);
  if (failed(found))
    return failure();
  SmallVector<int64_t> group = std::move(*found);
  int64_t position = llvm::find(group, int64_t(rank.rank)) - group.begin();

  // A slice needs no peer: every rank holds the whole value.
  if (auto slice = dyn_cast<AllSliceOp>(op))
    return splitEvenly(input, slice.getDimAttr().getInt(),
                       group.size())[position];
  std::vector<Tensor> values;
  if (group.size() == 1) {
    values.push_back(input);
  } else {
    if (!rank.collectives)
      return op->emitError("needs the ranks of its group to run together "
                           "(interpretRanks)");
    std::string error;
    FailureOr<std::vector<Tensor>> exchanged =
        rank.collectives->exchange(rank.rank, sequence, group, input, error);
    if (failed(exchanged))
      return op->emitError("rank ") << rank.rank << ": " << error;
    values = std::move(*exchanged);
  }
  return llvm::TypeSwitch<Operation *, FailureOr<Tensor>>(op)
      .Case([&](AllReduceOp reduce) {
        return reduceValues(values, reduce.getKind());
      })
      .Case([&](ReduceScatterOp scatter) {
        Tensor whole = reduceValues(values, scatter.getKind());
        return splitEvenly(whole, scatter.getDimAttr().getInt(),
                           group.size())[position];
      })
      .Case([&](AllGatherOp gather) {
        return concatAll(values, gather.getDimAttr().getInt());
      })
      .Case([&](AllToAllOp allToAll) {
        int64_t splitDim = allToAll.getSplitDimAttr().getInt();
        std::vector<Tensor> received;
        for (const Tensor &value : values)
          received.push_back(
              splitEvenly(value, splitDim, group.size())[position]);
        return concatAll(received, allToAll.getConcatDimAttr().getInt());
      })
      .Default([&](Operation *) -> FailureOr<Tensor> {
        return op->emitError("is not a collective the interpreter runs");
      });
}
