//===- InPlaceUpdates.cpp - Results written over the arguments ------------===//

#include "dpc/Target/CPU/InPlaceUpdates.h"

#include "ElementwiseFormulas.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Target/CPU/BufferPlan.h"

using namespace mlir;
using namespace mlir::dpc;

/// The role attribute and name of a parameter, state or optimizer state.
static std::optional<std::pair<StringRef, StringRef>>
getStateKey(DictionaryAttr attrs) {
  if (!attrs)
    return std::nullopt;
  for (StringRef role : {DpcDialect::kParamAttrName, DpcDialect::kStateAttrName,
                         DpcDialect::kOptStateAttrName})
    if (auto name = attrs.getAs<StringAttr>(role))
      return std::make_pair(role, name.getValue());
  return std::nullopt;
}

/// The value whose storage holds `value` (through reshapes, waits and
/// contiguous slices).
static Value getStorageRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isView(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

SmallVector<std::optional<unsigned>>
mlir::dpc::getUpdatedArguments(func::FuncOp func) {
  llvm::DenseMap<std::pair<StringRef, StringRef>, unsigned> argumentsByKey;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto key = getStateKey(func.getArgAttrDict(i)))
      argumentsByKey[*key] = i;

  SmallVector<std::optional<unsigned>> updates(func.getNumResults());
  SmallVector<unsigned> claims(func.getNumArguments(), 0);
  for (unsigned j = 0; j < func.getNumResults(); ++j) {
    auto key = getStateKey(func.getResultAttrDict(j));
    if (!key)
      continue;
    auto it = argumentsByKey.find(*key);
    if (it == argumentsByKey.end() ||
        func.getArgumentTypes()[it->second] != func.getResultTypes()[j])
      continue;
    updates[j] = it->second;
    ++claims[it->second];
  }

  Operation *terminator = func.getBody().front().getTerminator();
  SmallVector<Value> roots;
  for (Value value : terminator->getOperands())
    roots.push_back(getStorageRoot(value));
  for (auto [j, update] : llvm::enumerate(updates)) {
    if (!update)
      continue;
    BlockArgument argument = func.getArgument(*update);
    auto storedIn = dyn_cast<BlockArgument>(roots[j]);
    bool readAtTheEnd = llvm::any_of(llvm::enumerate(roots), [&](auto root) {
      return root.index() != j && root.value() == argument;
    });
    if (claims[*update] > 1 || (storedIn && storedIn != argument) ||
        readAtTheEnd)
      update.reset();
  }
  return updates;
}

bool mlir::dpc::canWriteInPlace(Value value, BlockArgument argument,
                                const ProgramOrder &order,
                                llvm::function_ref<bool(Operation *)> isFused) {
  Operation *writer = value.getDefiningOp();
  int64_t writes = order.getPosition(writer);
  // The argument and its views, each with whether it starts at the
  // argument's first element (a slice does not).
  SmallVector<std::pair<Value, bool>> stored{{argument, true}};
  while (!stored.empty()) {
    auto [view, aligned] = stored.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (isView(user)) {
        stored.push_back(
            {user->getResult(0), aligned && !isContiguousSlice(user)});
        continue;
      }
      int64_t reads = order.getReadPosition(user);
      if (reads < writes)
        continue;
      // Read while the result is written: only the writer's own loop,
      // each element before it is overwritten.
      bool sameElement =
          reads == writes && aligned && (user == writer || isFused(user)) &&
          hasScalarFormula(writer) && user->getNumResults() == 1 &&
          cast<ShapedType>(view.getType()).getShape() ==
              cast<ShapedType>(user->getResult(0).getType()).getShape();
      if (!sameElement)
        return false;
    }
  }
  return true;
}
