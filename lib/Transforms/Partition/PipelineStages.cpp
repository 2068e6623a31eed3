//===- PipelineStages.cpp - One program per pipeline stage ----------------===//
//
// The step is a sequence of micro-batches, each a forward and a backward
// over every stage, then the optimizer. Each stage's program keeps its own
// ops; what crosses stages goes through send/recv over the `pp` axis. Sends
// are buffered, so a program only ever waits for a value another stage
// makes before it in some valid order of the whole step: reordering each
// program by a schedule keeps that true as long as the messages between
// two stages keep their order, which is checked.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Partition/PipelineStages.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <limits>
#include <map>
#include <queue>
#include <set>

using namespace mlir;
using namespace mlir::dpc;

/// The plan names its pipeline mesh axis so (writePlanMesh).
static constexpr StringLiteral kPipelineAxis = "pp";
static constexpr StringLiteral kMicroBatchAttr = "dpc.micro_batch";
static constexpr StringLiteral kMessageAttr = "dpc.message";
static constexpr int64_t kEveryStage = -1;

bool mlir::dpc::hasPipelineStages(ModuleOp module) {
  return module
      .walk([](Operation *op) {
        // Programs already split per stage are done.
        if (op->hasAttr(DpcDialect::kPipelineStageAttrName))
          return WalkResult::skip();
        auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
        return stage && stage.getInt() > 0 ? WalkResult::interrupt()
                                           : WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {

int64_t getStage(Operation *op) {
  auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
  return stage ? stage.getInt() : kEveryStage;
}

/// Inlines the calls of `entry`, tagging each inlined op with the index of
/// its call among the calls to the same function (its micro-batch).
void inlineCalls(func::FuncOp entry, ModuleOp module) {
  SmallVector<func::CallOp> calls;
  entry.walk([&](func::CallOp call) { calls.push_back(call); });
  DenseMap<Operation *, int64_t> count;
  SetVector<func::FuncOp> inlined;
  for (func::CallOp call : calls) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      continue;
    int64_t microBatch = count[callee]++;
    IRMapping map;
    map.map(callee.getArguments(), call.getOperands());
    OpBuilder builder(call);
    for (Operation &op : callee.getBody().front().without_terminator()) {
      Operation *copy = builder.clone(op, map);
      if (!copy->hasAttr(kMicroBatchAttr))
        copy->setAttr(kMicroBatchAttr, builder.getI64IntegerAttr(microBatch));
    }
    Operation *ret = callee.getBody().front().getTerminator();
    for (auto [result, value] :
         llvm::zip_equal(call.getResults(), ret->getOperands()))
      result.replaceAllUsesWith(map.lookupOrDefault(value));
    call.erase();
    inlined.insert(callee);
  }
  for (func::FuncOp callee : inlined)
    if (SymbolTable::symbolKnownUseEmpty(callee, module))
      callee.erase();
}

/// Where each op of `func` runs: its stage, or for an op without one the
/// last stage of the values it reads (every stage when it reads none).
DenseMap<Operation *, int64_t> getStages(func::FuncOp func) {
  DenseMap<Operation *, int64_t> stages;
  for (Operation &op : func.getBody().front().without_terminator()) {
    int64_t stage = getStage(&op);
    if (stage == kEveryStage)
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp())
          stage = std::max(stage, stages.lookup(def));
    stages[&op] = stage;
  }
  return stages;
}

/// The position of each (phase, micro-batch) unit of work in `schedule` on
/// stage `stage` of `stages`, over `microBatches`.
std::map<std::pair<bool, int64_t>, int64_t> getUnitOrder(StringRef schedule,
                                                         int64_t stage,
                                                         int64_t stages,
                                                         int64_t microBatches) {
  std::map<std::pair<bool, int64_t>, int64_t> order;
  auto add = [&](bool backward, int64_t microBatch) {
    order.emplace(std::make_pair(backward, microBatch), order.size());
  };
  if (schedule == "gpipe") {
    for (int64_t i = 0; i < microBatches; ++i)
      add(false, i);
    for (int64_t i = 0; i < microBatches; ++i)
      add(true, i);
    return order;
  }
  // 1F1B: as many forwards as stages follow this one, then one forward and
  // one backward in turn, then the backwards left.
  int64_t warmup = std::min(stages - 1 - stage, microBatches);
  for (int64_t i = 0; i < warmup; ++i)
    add(false, i);
  for (int64_t i = 0; i + warmup < microBatches; ++i) {
    add(false, i + warmup);
    add(true, i);
  }
  for (int64_t i = microBatches - warmup; i < microBatches; ++i)
    add(true, i);
  return order;
}

/// Reorders the body of `program` by `schedule`, keeping every dependency:
/// ops by their unit's place (ops of no unit as early as they can run,
/// receives of no unit as late).
void schedule(func::FuncOp program, StringRef name, int64_t stage,
              int64_t stages, int64_t microBatches) {
  auto order = getUnitOrder(name, stage, stages, microBatches);
  Block &body = program.getBody().front();
  Operation *terminator = body.getTerminator();
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  // A receive waits with its unit (the forward or backward of a
  // micro-batch); one of no unit (an optimizer value, such as the clipping
  // factor) as late as can be, so that nothing waits for it before the
  // sender could have made it.
  auto keyOf = [&](Operation *op) -> int64_t {
    auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
    auto microBatch = op->getAttrOfType<IntegerAttr>(kMicroBatchAttr);
    int64_t none = isa<RecvOp>(op) ? std::numeric_limits<int64_t>::max() : -1;
    if (!phase || !microBatch || phase.getValue() == Phase::optimizer)
      return none;
    auto it =
        order.find({phase.getValue() == Phase::backward, microBatch.getInt()});
    return it == order.end() ? none : it->second;
  };
  // Kahn's algorithm, smallest (unit, position) first.
  DenseMap<Operation *, int64_t> waiting;
  using Entry = std::pair<std::pair<int64_t, int64_t>, Operation *>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  auto push = [&](Operation *op) { ready.push({{keyOf(op), index[op]}, op}); };
  for (Operation *op : ops) {
    int64_t count = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == &body)
        ++count;
    waiting[op] = count;
    if (count == 0)
      push(op);
  }
  SmallVector<Operation *> scheduled;
  while (!ready.empty()) {
    Operation *op = ready.top().second;
    ready.pop();
    scheduled.push_back(op);
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (user->getBlock() == &body && user != terminator &&
            --waiting[user] == 0)
          push(user);
  }
  for (Operation *op : scheduled)
    op->moveBefore(terminator);
}

/// Moves receives earlier where the order of the sends needs it: a value
/// another stage sends after one this program needs later must not be
/// waited for first (`sendOrder`: the message ids each stage sends here, in
/// order).
void placeReceives(func::FuncOp program,
                   const std::map<int64_t, SmallVector<int64_t>> &sendOrder) {
  Block &body = program.getBody().front();
  DenseMap<int64_t, RecvOp> byMessage;
  for (auto recv : body.getOps<RecvOp>())
    byMessage[recv->getAttrOfType<IntegerAttr>(kMessageAttr).getInt()] = recv;
  for (auto &[from, messages] : sendOrder) {
    Operation *limit = nullptr;
    for (int64_t message : llvm::reverse(messages)) {
      RecvOp recv = byMessage.lookup(message);
      if (!recv)
        continue;
      if (limit && limit->isBeforeInBlock(recv))
        recv->moveBefore(limit);
      limit = recv;
    }
  }
}

} // namespace

static LogicalResult splitStep(ModuleOp module, func::FuncOp entry,
                               StringRef scheduleName);

LogicalResult mlir::dpc::splitPipelineStages(ModuleOp module,
                                             StringRef scheduleName) {
  if (scheduleName != "gpipe" && scheduleName != "1f1b")
    return emitError(module.getLoc(), "pipeline schedule '")
           << scheduleName << "' is not built: gpipe or 1f1b";
  // The steps: planned functions nobody calls (the training step, and the
  // forward-backward function when the step inlined it).
  DenseSet<StringRef> called;
  module.walk([&](func::CallOp call) { called.insert(call.getCallee()); });
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool planned = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      planned |= bool(func.getArgAttr(i, DpcDialect::kShardingAttrName));
    if (planned && !called.contains(func.getSymName()) &&
        !func->hasAttr(DpcDialect::kPipelineStageAttrName))
      entries.push_back(func);
  }
  if (entries.empty())
    return emitError(module.getLoc(), "has no planned step function");
  for (func::FuncOp entry : entries)
    if (failed(splitStep(module, entry, scheduleName)))
      return failure();
  return success();
}

/// Splits one step function, `entry`.
static LogicalResult splitStep(ModuleOp module, func::FuncOp entry,
                               StringRef scheduleName) {
  auto sharding =
      entry.getArgAttrOfType<ShardingAttr>(0, DpcDialect::kShardingAttrName);
  MeshOp mesh = sharding ? lookupMesh(sharding, module) : MeshOp();
  std::optional<int64_t> stages =
      mesh ? mesh.getAxisSize(kPipelineAxis) : std::nullopt;
  if (!stages)
    return entry.emitError("runs on pipeline stages, but its mesh has no '")
           << kPipelineAxis << "' axis";

  inlineCalls(entry, module);
  DenseMap<Operation *, int64_t> stageOf = getStages(entry);
  int64_t microBatches = 1;
  for (auto &[op, stage] : stageOf) {
    if (stage >= *stages)
      return op->emitOpError("runs on pipeline stage ")
             << stage << " of a mesh with " << *stages << " stages";
    if (auto mb = op->getAttrOfType<IntegerAttr>(kMicroBatchAttr))
      microBatches = std::max(microBatches, mb.getInt() + 1);
  }
  MLIRContext *context = module.getContext();
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  auto axes =
      ArrayAttr::get(context, {StringAttr::get(context, kPipelineAxis)});
  SmallVector<Operation *> original;
  for (Operation &op : entry.getBody().front().without_terminator())
    original.push_back(&op);
  // Each value crossing to another stage is one message per reader stage.
  std::map<std::pair<Operation *, std::pair<unsigned, int64_t>>, int64_t>
      messages;
  auto readersOf = [&](Value value) {
    std::set<int64_t> readers;
    for (Operation *user : value.getUsers())
      if (auto it = stageOf.find(user); it != stageOf.end())
        readers.insert(it->second);
    return readers;
  };

  OpBuilder moduleBuilder(entry);
  SmallVector<func::FuncOp> programs;
  for (int64_t s = 0; s < *stages; ++s) {
    auto program = cast<func::FuncOp>(moduleBuilder.clone(*entry));
    program.setSymName((entry.getSymName() + ".stage" + Twine(s)).str());
    program->setAttr(DpcDialect::kPipelineStageAttrName,
                     IntegerAttr::get(IntegerType::get(context, 64), s));
    Block &body = program.getBody().front();
    SmallVector<Operation *> copies;
    for (Operation &op : body.without_terminator())
      copies.push_back(&op);
    DenseMap<Operation *, int64_t> copyStage;
    for (auto [op, copy] : llvm::zip_equal(original, copies))
      copyStage[copy] = stageOf[op];
    for (auto [op, copy] : llvm::zip_equal(original, copies)) {
      int64_t t = stageOf[op];
      for (auto [i, result] : llvm::enumerate(op->getResults())) {
        std::set<int64_t> readers = readersOf(result);
        auto message = [&](int64_t to) {
          return messages
              .try_emplace({op, {unsigned(i), to}}, int64_t(messages.size()))
              .first->second;
        };
        auto tag = [&](Operation *made, int64_t to) {
          for (StringRef name : {StringRef(DpcDialect::kPhaseAttrName),
                                 StringRef(kMicroBatchAttr)})
            if (Attribute attr = op->getAttr(name))
              made->setAttr(name, attr);
          made->setAttr(DpcDialect::kStageAttrName,
                        IntegerAttr::get(IntegerType::get(context, 64), s));
          made->setAttr(
              kMessageAttr,
              IntegerAttr::get(IntegerType::get(context, 64), message(to)));
        };
        if (t == s) {
          // Sent right after it is made, to each other stage reading it.
          OpBuilder builder(copy->getContext());
          builder.setInsertionPointAfter(copy);
          for (int64_t to : readers) {
            if (to == s || to == kEveryStage)
              continue;
            auto send = SendOp::create(builder, copy->getLoc(),
                                       copy->getResult(i), meshRef, axes,
                                       builder.getI64IntegerAttr(to - s));
            tag(send, to);
          }
        } else if (t != kEveryStage && readers.count(s)) {
          OpBuilder builder(copy);
          auto recv =
              RecvOp::create(builder, copy->getLoc(), result.getType(), meshRef,
                             axes, builder.getI64IntegerAttr(s - t));
          tag(recv, s);
          if (ShardingAttr layout = getSharding(result))
            recv->setAttr(DpcDialect::kShardingAttrName,
                          builder.getArrayAttr({layout}));
          copy->getResult(i).replaceUsesWithIf(recv, [&](OpOperand &use) {
            return copyStage.lookup(use.getOwner()) == s;
          });
        }
      }
    }
    // The results this stage computes.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    llvm::BitVector foreign(ret.getNumOperands());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      Operation *def = value.getDefiningOp();
      int64_t t = def ? copyStage.lookup(def) : kEveryStage;
      if (t != s && t != kEveryStage && !isa_and_nonnull<RecvOp>(def))
        foreign.set(i);
    }
    SmallVector<Value> kept;
    for (auto [i, value] : llvm::enumerate(ret.getOperands()))
      if (!foreign.test(i))
        kept.push_back(value);
    ret->setOperands(kept);
    if (failed(program.eraseResults(foreign)))
      return program.emitError("cannot drop the results of other stages");
    // Other stages' ops, now unread, go.
    for (Operation *copy : llvm::reverse(copies)) {
      int64_t t = copyStage[copy];
      if ((t != s && t != kEveryStage) || (copy->use_empty() && isPure(copy))) {
        if (!copy->use_empty())
          return copy->emitOpError("of stage ")
                 << t << " is still read on stage " << s;
        copy->erase();
      }
    }
    schedule(program, scheduleName, s, *stages, microBatches);
    programs.push_back(program);
  }

  // Receives follow the order of the sends, which must be kept.
  std::map<std::pair<int64_t, int64_t>, SmallVector<int64_t>> sent, received;
  for (auto [s, program] : llvm::enumerate(programs))
    for (auto send : program.getBody().front().getOps<SendOp>())
      sent[{int64_t(s), int64_t(s) + send.getShift()}].push_back(
          send->getAttrOfType<IntegerAttr>(kMessageAttr).getInt());
  for (auto [s, program] : llvm::enumerate(programs)) {
    std::map<int64_t, SmallVector<int64_t>> toHere;
    for (auto &[pair, messages] : sent)
      if (pair.second == int64_t(s))
        toHere[pair.first] = messages;
    placeReceives(program, toHere);
  }
  for (auto [s, program] : llvm::enumerate(programs)) {
    program.walk([&](Operation *op) {
      auto message = op->getAttrOfType<IntegerAttr>(kMessageAttr);
      if (!message)
        return;
      int64_t shift = op->getAttrOfType<IntegerAttr>("shift").getInt();
      if (isa<RecvOp>(op))
        received[{int64_t(s) - shift, int64_t(s)}].push_back(message.getInt());
      op->removeAttr(kMessageAttr);
    });
  }
  for (auto &[pair, order] : sent)
    if (received[pair] != order)
      return emitError(entry.getLoc(), "the ")
             << scheduleName << " schedule would reorder the values stage "
             << pair.first << " sends to stage " << pair.second;
  for (func::FuncOp program : programs)
    program.walk([](Operation *op) { op->removeAttr(kMicroBatchAttr); });
  entry.erase();
  return success();
}
