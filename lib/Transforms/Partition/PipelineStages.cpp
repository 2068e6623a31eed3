//===- PipelineStages.cpp - One program per pipeline stage ----------------===//
//
// The step is a sequence of micro-batches, each a forward and a backward
// over every pipeline position, then the optimizer. A position is a model
// chunk on a stage: with c chunks per stage (an interleaved schedule),
// position k is chunk k / pp of stage k % pp. Each stage's program keeps
// its own ops; what crosses stages goes through send/recv over the `pp`
// axis. Sends are buffered. Each program is reordered by the schedule; the
// messages between two stages must keep their order, and the programs
// must not wait on each other in a cycle: both are checked by running the
// programs' sends and receives.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Partition/PipelineStages.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
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
static constexpr StringLiteral kDataAxis = "dp";
static constexpr StringLiteral kMicroBatchAttr = "dpc.micro_batch";
static constexpr StringLiteral kMessageAttr = "dpc.message";
static constexpr StringLiteral kChunkAttr = "dpc.chunk";
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

bool isBackward(Operation *op) {
  auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return phase && phase.getValue() == Phase::backward;
}

/// Where each op of `func` runs: its stage, or for an op without one the
/// last stage of the values it reads (every stage when it reads none).
/// A backward op that reads no gradient (a forward value recomputed for
/// the backward pass) runs on the latest stage reading it, so that no
/// value flows to a later stage during the backward pass: the forward
/// values it needs were sent there in the forward pass, and its result
/// goes back with the gradients.
DenseMap<Operation *, int64_t> getStages(func::FuncOp func) {
  DenseMap<Operation *, int64_t> stages;
  Block &body = func.getBody().front();
  DenseSet<Operation *> recomputed;
  for (Operation &op : body.without_terminator()) {
    int64_t stage = getStage(&op);
    if (stage == kEveryStage)
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp())
          stage = std::max(stage, stages.lookup(def));
    stages[&op] = stage;
    if (isBackward(&op) && llvm::all_of(op.getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return !def || !isBackward(def) || recomputed.contains(def);
        }))
      recomputed.insert(&op);
  }
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!recomputed.contains(&op) || stages[&op] == kEveryStage)
      continue;
    for (Operation *user : op.getUsers())
      if (isBackward(user) && stages.count(user))
        stages[&op] = std::max(stages[&op], stages[user]);
  }
  return stages;
}

/// An add of scalars outside the micro-batches (such as one term of the
/// squared gradient norm).
bool isScalarSum(Operation *op) {
  auto add = dyn_cast<AddOp>(op);
  return add && cast<ShapedType>(add.getType()).getRank() == 0 &&
         !op->hasAttr(kMicroBatchAttr) &&
         add.getLhs().getType() == add.getType() &&
         add.getRhs().getType() == add.getType();
}

/// Places each add of a left-folded scalar sum (the squared gradient norm,
/// one term per parameter) where its term is made, so that the running sum
/// travels from stage to stage, once per change of stage in the order of
/// the terms, instead of every term of the other stages travelling to the
/// stage of the first. The order of the additions, and so the result, is
/// the single device's.
void placeSumsWithTheirTerms(func::FuncOp entry) {
  DenseMap<Operation *, int64_t> positions = getStages(entry);
  for (Operation &op : entry.getBody().front()) {
    if (!isScalarSum(&op))
      continue;
    Operation *term = cast<AddOp>(op).getRhs().getDefiningOp();
    int64_t position = term ? positions.lookup(term) : kEveryStage;
    if (position != kEveryStage)
      op.setAttr(
          DpcDialect::kStageAttrName,
          IntegerAttr::get(IntegerType::get(op.getContext(), 64), position));
  }
}

/// Whether `a` and `b` compute the same value: pure ops of one kind on the
/// same operands with the same attributes, their micro-batches aside.
bool isSameValue(Operation *a, Operation *b) {
  if (a->getName() != b->getName() || a->getOperands() != b->getOperands() ||
      a->getResultTypes() != b->getResultTypes())
    return false;
  auto attrsOf = [](Operation *op) {
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : op->getAttrs())
      if (attr.getName() != kMicroBatchAttr)
        attrs.push_back(attr);
    return attrs;
  };
  return attrsOf(a) == attrsOf(b);
}

/// Whether `reshard` gathers ZeRO-1/2's block of a master's compute copy
/// over the data axis: of a view (not the block itself) and nothing else.
/// The copy is held whole all step; ZeRO-3's gathers, in contrast, are
/// made again for every pass so that no whole parameter lives long.
bool gathersCopyOverData(ReshardOp reshard, int64_t zeroStage) {
  if ((zeroStage != 1 && zeroStage != 2) ||
      isa<BlockArgument>(reshard.getInput()))
    return false;
  ShardingAttr from = getSharding(reshard.getInput());
  ShardingAttr to = reshard.getSharding();
  if (!from || from.isPartial() || to.isPartial() ||
      from.getRank() != to.getRank())
    return false;
  bool gathered = false;
  for (unsigned dim = 0; dim < from.getRank(); ++dim) {
    SmallVector<StringRef> axes = from.getDimAxes(dim);
    gathered |= llvm::is_contained(axes, kDataAxis);
    llvm::erase(axes, kDataAxis);
    if (axes != to.getDimAxes(dim))
      return false;
  }
  return gathered;
}

/// Values every micro-batch makes alike from the parameters, that another
/// stage reads (a tied table's bf16 copy, cast from the step's argument on
/// the stage that keeps the table) or that ZeRO-1/2 gather (a master
/// block's bf16 copy), are made once, by the first micro-batch, and so
/// sent and gathered once per step rather than once per micro-batch: the
/// later micro-batches' ops (and the ops they are made from) are replaced
/// by the first's.
void shareStepValues(func::FuncOp entry, int64_t zeroStage) {
  DenseMap<Operation *, int64_t> positions = getStages(entry);
  Block &body = entry.getBody().front();
  // Ops made from the parameters (and constants) alone.
  DenseSet<Value> ofParameters;
  for (BlockArgument arg : entry.getArguments())
    if (entry.getArgAttr(arg.getArgNumber(), DpcDialect::kParamAttrName))
      ofParameters.insert(arg);
  SmallVector<Operation *> candidates;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0 || op.getNumResults() == 0 || !isPure(&op) ||
        !llvm::all_of(op.getOperands(), [&](Value operand) {
          return ofParameters.contains(operand) ||
                 matchPattern(operand, m_Constant());
        }))
      continue;
    ofParameters.insert(op.result_begin(), op.result_end());
    candidates.push_back(&op);
  }
  // Those worth sharing, and the ops they are made from.
  DenseSet<Operation *> shared;
  for (Operation *op : llvm::reverse(candidates)) {
    int64_t position = positions.lookup(op);
    auto reshard = dyn_cast<ReshardOp>(op);
    bool worth =
        (reshard && gathersCopyOverData(reshard, zeroStage)) ||
        llvm::any_of(op->getUsers(), [&](Operation *user) {
          return shared.contains(user) || positions.lookup(user) != position;
        });
    if (worth)
      shared.insert(op);
  }
  SmallVector<Operation *> made;
  for (Operation *op : candidates) {
    if (!shared.contains(op) || !op->hasAttr(kMicroBatchAttr))
      continue;
    auto same = llvm::find_if(
        made, [&](Operation *first) { return isSameValue(first, op); });
    if (same == made.end()) {
      made.push_back(op);
      continue;
    }
    op->replaceAllUsesWith((*same)->getResults());
    op->erase();
  }
}

/// Places each scalar computed outside the micro-batches (a clipping
/// factor's casts, the optimizer's bias corrections) on the stage of its
/// readers when they all run on one stage: the scalar it is computed from
/// crosses once instead of one derived scalar per reader. Sums placed with
/// their terms stay.
void placeScalarsWithTheirReaders(func::FuncOp entry, int64_t stages) {
  DenseMap<Operation *, int64_t> positions = getStages(entry);
  Block &body = entry.getBody().front();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (op.hasAttr(kMicroBatchAttr) || isScalarSum(&op) || !isPure(&op) ||
        op.getNumResults() == 0 || positions[&op] == kEveryStage ||
        !llvm::all_of(op.getResultTypes(), [](Type type) {
          auto shaped = dyn_cast<ShapedType>(type);
          return shaped && shaped.hasRank() && shaped.getRank() == 0;
        }))
      continue;
    std::optional<int64_t> reader;
    bool oneStage = true;
    for (Operation *user : op.getUsers()) {
      auto it = positions.find(user);
      if (it == positions.end() || it->second == kEveryStage) {
        oneStage = false;
        break;
      }
      if (reader && *reader % stages != it->second % stages)
        oneStage = false;
      reader = reader ? std::min(*reader, it->second) : it->second;
    }
    if (!oneStage || !reader || *reader % stages == positions[&op] % stages)
      continue;
    positions[&op] = *reader;
    op.setAttr(
        DpcDialect::kStageAttrName,
        IntegerAttr::get(IntegerType::get(op.getContext(), 64), *reader));
  }
}

/// One unit of work: the forward or backward of a micro-batch on a chunk.
struct Unit {
  bool backward;
  int64_t microBatch, chunk;
  bool operator<(const Unit &other) const {
    return std::tie(backward, microBatch, chunk) <
           std::tie(other.backward, other.microBatch, other.chunk);
  }
};

/// The position of each unit of work in `schedule` on stage `stage` of
/// `stages`, over `microBatches` and `chunks` chunks per stage.
std::map<Unit, int64_t> getUnitOrder(StringRef schedule, int64_t stage,
                                     int64_t stages, int64_t microBatches,
                                     int64_t chunks) {
  std::map<Unit, int64_t> order;
  auto add = [&](bool backward, int64_t microBatch, int64_t chunk) {
    order.emplace(Unit{backward, microBatch, chunk}, order.size());
  };
  if (schedule == "gpipe") {
    for (int64_t i = 0; i < microBatches; ++i)
      for (int64_t c = 0; c < chunks; ++c)
        add(false, i, c);
    for (int64_t i = 0; i < microBatches; ++i)
      for (int64_t c = chunks - 1; c >= 0; --c)
        add(true, i, c);
    return order;
  }
  // 1F1B (Megatron-LM's, interleaved when chunks > 1): a number of
  // warm-up forwards, then one forward and one backward in turn, then the
  // backwards left. The k-th forward of this stage runs micro-batch
  // (k / (pp * chunks)) * pp + k % pp on chunk (k / pp) % chunks; the
  // backwards take the chunks in reverse.
  int64_t total = microBatches * chunks;
  int64_t warmup =
      chunks == 1
          ? std::min(stages - 1 - stage, microBatches)
          : std::min((stages - 1 - stage) * 2 + (chunks - 1) * stages, total);
  auto unit = [&](int64_t k, bool backward) {
    int64_t group = k / (stages * chunks), inGroup = k % (stages * chunks);
    int64_t chunk = inGroup / stages;
    add(backward, group * stages + inGroup % stages,
        backward ? chunks - 1 - chunk : chunk);
  };
  for (int64_t k = 0; k < warmup; ++k)
    unit(k, false);
  for (int64_t k = 0; k + warmup < total; ++k) {
    unit(k + warmup, false);
    unit(k, true);
  }
  for (int64_t k = std::max<int64_t>(total - warmup, 0); k < total; ++k)
    unit(k, true);
  return order;
}

/// Reorders the body of `program` by `schedule`, keeping every dependency:
/// ops by their unit's place (ops of no unit as early as they can run,
/// receives of no unit as late).
void schedule(func::FuncOp program, StringRef name, int64_t stage,
              int64_t stages, int64_t microBatches, int64_t chunks) {
  auto order = getUnitOrder(name, stage, stages, microBatches, chunks);
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
    auto chunk = op->getAttrOfType<IntegerAttr>(kChunkAttr);
    int64_t none = isa<RecvOp>(op) ? std::numeric_limits<int64_t>::max() : -1;
    // Ops of every stage (constants) have no chunk: they run when they can.
    if (!phase || !microBatch || !chunk || phase.getValue() == Phase::optimizer)
      return none;
    auto it = order.find(Unit{phase.getValue() == Phase::backward,
                              microBatch.getInt(), chunk.getInt()});
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

/// Runs the programs' sends and receives: fails naming a pair of stages
/// whose messages would arrive out of order, or the stages that would wait
/// on each other forever.
static LogicalResult checkMessages(ArrayRef<func::FuncOp> programs,
                                   StringRef scheduleName, Location loc) {
  // Per program, its messages in order: (message, is a receive, peer).
  struct Message {
    int64_t id;
    bool receive;
    int64_t peer;
  };
  SmallVector<SmallVector<Message>> sequences;
  int64_t stages = programs.size();
  for (auto [s, constProgram] : llvm::enumerate(programs)) {
    func::FuncOp program = constProgram;
    SmallVector<Message> &sequence = sequences.emplace_back();
    program.walk([&](Operation *op) {
      auto message = op->getAttrOfType<IntegerAttr>(kMessageAttr);
      if (!message)
        return;
      int64_t shift = op->getAttrOfType<IntegerAttr>("shift").getInt();
      bool receive = isa<RecvOp>(op);
      int64_t peer =
          ((int64_t(s) + (receive ? -shift : shift)) % stages + stages) %
          stages;
      sequence.push_back({message.getInt(), receive, peer});
    });
  }
  // Sends are buffered: a program runs until a receive whose message is
  // not yet sent; messages between a pair arrive in the order sent.
  std::map<std::pair<int64_t, int64_t>, std::queue<int64_t>> inFlight;
  SmallVector<size_t> next(stages, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t s = 0; s < stages; ++s) {
      while (next[s] < sequences[s].size()) {
        const Message &message = sequences[s][next[s]];
        if (!message.receive) {
          inFlight[{s, message.peer}].push(message.id);
        } else {
          std::queue<int64_t> &queue = inFlight[{message.peer, s}];
          if (queue.empty())
            break;
          if (queue.front() != message.id)
            return emitError(loc, "the ")
                   << scheduleName << " schedule would reorder the values "
                   << "stage " << message.peer << " sends to stage " << s;
          queue.pop();
        }
        ++next[s];
        progress = true;
      }
    }
  }
  SmallVector<int64_t> waiting;
  for (int64_t s = 0; s < stages; ++s)
    if (next[s] < sequences[s].size())
      waiting.push_back(s);
  if (waiting.empty())
    return success();
  InFlightDiagnostic diag = emitError(loc, "the ")
                            << scheduleName << " schedule would deadlock: ";
  llvm::interleaveComma(waiting, diag, [&](int64_t s) {
    diag << "stage " << s << " waits for stage " << sequences[s][next[s]].peer;
  });
  return failure();
}

static LogicalResult splitStep(ModuleOp module, func::FuncOp entry,
                               StringRef scheduleName, int64_t chunks);

LogicalResult mlir::dpc::splitPipelineStages(ModuleOp module,
                                             StringRef scheduleName,
                                             int64_t chunks) {
  if (scheduleName != "gpipe" && scheduleName != "1f1b" &&
      scheduleName != "interleaved-1f1b")
    return emitError(module.getLoc(), "pipeline schedule '")
           << scheduleName << "' is not built: gpipe, 1f1b or interleaved-1f1b";
  if ((scheduleName == "interleaved-1f1b") != (chunks > 1))
    return emitError(module.getLoc(), "the ")
           << scheduleName << " schedule cannot run a plan of " << chunks
           << " model chunk" << (chunks == 1 ? "" : "s")
           << " per stage: interleaved-1f1b runs several, gpipe and 1f1b one";
  // The steps: planned functions nobody calls (the training step, and the
  // forward-backward function when the step inlined it).
  DenseSet<StringRef> called;
  module.walk([&](func::CallOp call) { called.insert(call.getCallee()); });
  SmallVector<func::FuncOp> entries;
  // (A sharding the user fixed on an argument of the model's own function
  // does not make it planned: every argument of a planned one has one.)
  for (auto func : module.getOps<func::FuncOp>()) {
    if (isPlanned(func) && !called.contains(func.getSymName()) &&
        !func->hasAttr(DpcDialect::kPipelineStageAttrName))
      entries.push_back(func);
  }
  if (entries.empty())
    return emitError(module.getLoc(), "has no planned step function");
  for (func::FuncOp entry : entries)
    if (failed(splitStep(module, entry, scheduleName, chunks)))
      return failure();
  return success();
}

/// Splits one step function, `entry`.
static LogicalResult splitStep(ModuleOp module, func::FuncOp entry,
                               StringRef scheduleName, int64_t chunks) {
  auto sharding =
      entry.getArgAttrOfType<ShardingAttr>(0, DpcDialect::kShardingAttrName);
  MeshOp mesh = sharding ? lookupMesh(sharding, module) : MeshOp();
  std::optional<int64_t> stages =
      mesh ? mesh.getAxisSize(kPipelineAxis) : std::nullopt;
  if (!stages)
    return entry.emitError("runs on pipeline stages, but its mesh has no '")
           << kPipelineAxis << "' axis";

  inlineCalls(entry, module);
  auto plan = module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
  auto zeroStage = plan ? plan.getAs<IntegerAttr>("zero_stage") : IntegerAttr();
  shareStepValues(entry, zeroStage ? zeroStage.getInt() : 0);
  placeSumsWithTheirTerms(entry);
  placeScalarsWithTheirReaders(entry, *stages);
  // Each op's pipeline position, and the stage that runs it.
  DenseMap<Operation *, int64_t> stageOf = getStages(entry);
  auto deviceOf = [&](int64_t position) {
    return position == kEveryStage ? kEveryStage : position % *stages;
  };
  int64_t microBatches = 1;
  for (auto &[op, position] : stageOf) {
    if (position >= *stages * chunks)
      return op->emitOpError("runs on pipeline position ")
             << position << " of a mesh with " << *stages << " stages of "
             << chunks << " chunk" << (chunks == 1 ? "" : "s");
    if (auto mb = op->getAttrOfType<IntegerAttr>(kMicroBatchAttr))
      microBatches = std::max(microBatches, mb.getInt() + 1);
  }
  if (chunks > 1 && microBatches % *stages != 0)
    return entry.emitError("the interleaved-1f1b schedule needs micro-batches "
                           "in whole rounds of the ")
           << *stages << " stages, but the step has " << microBatches;
  MLIRContext *context = module.getContext();
  auto i64 = [&](int64_t value) {
    return IntegerAttr::get(IntegerType::get(context, 64), value);
  };
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  auto axes =
      ArrayAttr::get(context, {StringAttr::get(context, kPipelineAxis)});
  SmallVector<Operation *> original;
  for (Operation &op : entry.getBody().front().without_terminator())
    original.push_back(&op);
  // Each value crossing to another stage is one message per reader stage.
  std::map<std::pair<Operation *, std::pair<unsigned, int64_t>>, int64_t>
      messages;
  // The pipeline positions reading `value`.
  // The id of the message carrying `sender`'s value `index` (a result, or
  // for the step itself an argument) to stage `to`.
  auto getMessage = [&](Operation *sender, unsigned index, int64_t to) {
    return messages.try_emplace({sender, {index, to}}, int64_t(messages.size()))
        .first->second;
  };
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
    program->setAttr(DpcDialect::kPipelineStageAttrName, i64(s));
    Block &body = program.getBody().front();
    SmallVector<Operation *> copies;
    for (Operation &op : body.without_terminator())
      copies.push_back(&op);
    // Each copy's stage; its chunk is kept until the schedule is built.
    DenseMap<Operation *, int64_t> copyStage;
    for (auto [op, copy] : llvm::zip_equal(original, copies)) {
      int64_t position = stageOf[op];
      copyStage[copy] = deviceOf(position);
      if (position != kEveryStage) {
        copy->setAttr(DpcDialect::kStageAttrName, i64(deviceOf(position)));
        copy->setAttr(kChunkAttr, i64(position / *stages));
      }
    }
    for (auto [op, copy] : llvm::zip_equal(original, copies)) {
      int64_t t = deviceOf(stageOf[op]);
      for (auto [i, result] : llvm::enumerate(op->getResults())) {
        // The stages reading the value, each with the first chunk that
        // does.
        std::map<int64_t, int64_t> readers;
        for (int64_t position : readersOf(result))
          if (position != kEveryStage)
            readers.try_emplace(deviceOf(position), position / *stages);
        auto message = [&](int64_t to) {
          return getMessage(op, unsigned(i), to);
        };
        auto tag = [&](Operation *made, int64_t to, int64_t chunk) {
          for (StringRef name : {StringRef(DpcDialect::kPhaseAttrName),
                                 StringRef(kMicroBatchAttr)})
            if (Attribute attr = op->getAttr(name))
              made->setAttr(name, attr);
          made->setAttr(DpcDialect::kStageAttrName, i64(s));
          made->setAttr(kChunkAttr, i64(chunk));
          made->setAttr(kMessageAttr, i64(message(to)));
        };
        if (t == s) {
          // Sent right after it is made, to each other stage reading it.
          OpBuilder builder(copy->getContext());
          builder.setInsertionPointAfter(copy);
          for (auto [to, chunk] : readers) {
            if (to == s)
              continue;
            auto send = SendOp::create(builder, copy->getLoc(),
                                       copy->getResult(i), meshRef, axes,
                                       builder.getI64IntegerAttr(to - s));
            tag(send, to, stageOf[op] / *stages);
          }
        } else if (t != kEveryStage && readers.count(s)) {
          OpBuilder builder(copy);
          auto recv =
              RecvOp::create(builder, copy->getLoc(), result.getType(), meshRef,
                             axes, builder.getI64IntegerAttr(s - t));
          tag(recv, s, readers[s]);
          if (ShardingAttr layout = getSharding(result))
            recv->setAttr(DpcDialect::kShardingAttrName,
                          builder.getArrayAttr({layout}));
          copy->getResult(i).replaceUsesWithIf(recv, [&](OpOperand &use) {
            return copyStage.lookup(use.getOwner()) == s;
          });
        }
      }
    }
    // A parameter several stages read (a table tied to the output
    // projection) is the first reader's, which updates it: that stage
    // sends it to the others as the step begins, so that no stage reads a
    // copy of it that the update never reaches.
    for (BlockArgument arg : entry.getArguments()) {
      if (!entry.getArgAttr(arg.getArgNumber(), DpcDialect::kParamAttrName))
        continue;
      std::map<int64_t, int64_t> readers;
      for (int64_t position : readersOf(arg))
        if (position != kEveryStage)
          readers.try_emplace(deviceOf(position), position / *stages);
      if (readers.size() < 2)
        continue;
      auto [owner, ownerChunk] = *readers.begin();
      Value copy = body.getArgument(arg.getArgNumber());
      OpBuilder builder = OpBuilder::atBlockBegin(&body);
      // (With the first micro-batch's forward pass of the chunk that
      // reads it first, so that the schedule places it there.)
      auto tag = [&](Operation *made, int64_t to, int64_t chunk) {
        made->setAttr(DpcDialect::kPhaseAttrName,
                      PhaseAttr::get(context, Phase::forward));
        made->setAttr(kMicroBatchAttr, i64(0));
        made->setAttr(DpcDialect::kStageAttrName, i64(s));
        made->setAttr(kChunkAttr, i64(chunk));
        made->setAttr(kMessageAttr, i64(getMessage(entry.getOperation(),
                                                   arg.getArgNumber(), to)));
      };
      if (s == owner) {
        for (auto [to, chunk] : readers)
          if (to != s) {
            auto send = SendOp::create(builder, entry.getLoc(), copy, meshRef,
                                       axes, builder.getI64IntegerAttr(to - s));
            tag(send, to, ownerChunk);
          }
      } else if (readers.count(s)) {
        auto recv =
            RecvOp::create(builder, entry.getLoc(), copy.getType(), meshRef,
                           axes, builder.getI64IntegerAttr(s - owner));
        tag(recv, s, readers[s]);
        if (ShardingAttr layout = getSharding(arg))
          recv->setAttr(DpcDialect::kShardingAttrName,
                        builder.getArrayAttr({layout}));
        copy.replaceUsesWithIf(recv, [&](OpOperand &use) {
          return copyStage.lookup(use.getOwner()) == s;
        });
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
    schedule(program, scheduleName, s, *stages, microBatches, chunks);
    programs.push_back(program);
  }

  // Receives follow the order of the sends, which must be kept.
  std::map<std::pair<int64_t, int64_t>, SmallVector<int64_t>> sent;
  for (auto [s, program] : llvm::enumerate(programs))
    for (auto send : program.getBody().front().getOps<SendOp>())
      sent[{int64_t(s), deviceOf(int64_t(s) + send.getShift() + *stages)}]
          .push_back(send->getAttrOfType<IntegerAttr>(kMessageAttr).getInt());
  for (auto [s, program] : llvm::enumerate(programs)) {
    std::map<int64_t, SmallVector<int64_t>> toHere;
    for (auto &[pair, messages] : sent)
      if (pair.second == int64_t(s))
        toHere[pair.first] = messages;
    placeReceives(program, toHere);
  }
  if (failed(checkMessages(programs, scheduleName, entry.getLoc())))
    return failure();
  for (func::FuncOp program : programs)
    program.walk([](Operation *op) {
      for (StringRef name : {kMicroBatchAttr, kChunkAttr, kMessageAttr})
        op->removeAttr(name);
    });
  entry.erase();
  return success();
}
