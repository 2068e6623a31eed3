//===- EinsumConverter.cpp - ONNX Einsum as products and reductions -------===//
//
// Einsum becomes the ops the planner already prices and shards: each
// operand's repeated labels (diagonals) a gather, labels no one else needs
// a reduce_sum, and the operands, left to right, one batched dpc.matmul
// each (shared labels still needed later are its batch dimensions, shared
// labels no longer needed its contraction), with transposes and reshapes
// around it.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;

namespace {

/// A label: a letter's code, or kEllipsisBase + i for the i-th of the
/// dimensions an ellipsis stands for (right-aligned across operands).
using Label = int;
constexpr Label kEllipsisBase = 256;

/// One term of the equation as written: its letters, and where its
/// ellipsis is (if it has one).
struct Term {
  std::vector<Label> letters;
  std::optional<size_t> ellipsisAt;
};

/// An operand while it is being reduced: its value and a label per
/// dimension.
struct Labeled {
  Value value;
  std::vector<Label> labels;
};

class EinsumLowering {
public:
  explicit EinsumLowering(NodeContext &node) : node(node) {}

  LogicalResult run();

private:
  LogicalResult parse(StringRef equation);
  FailureOr<Term> parseTerm(StringRef text);
  LogicalResult recordSize(Label label, int64_t size);
  std::string describe(Label label) const;

  Labeled takeDiagonals(Labeled operand);
  Labeled sumOut(Labeled operand, ArrayRef<Label> labels);
  Labeled permute(Labeled operand, ArrayRef<Label> order);
  Labeled contract(Labeled lhs, Labeled rhs,
                   const llvm::SmallDenseSet<Label> &keep);
  /// Whether `label` is needed after operand `index` is folded in.
  bool isNeededAfter(Label label, size_t index) const;

  NodeContext &node;
  std::vector<Labeled> operands;
  std::vector<Label> output;
  std::map<Label, int64_t> sizes;
};

FailureOr<Term> EinsumLowering::parseTerm(StringRef text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (text.substr(i).starts_with("...")) {
      if (term.ellipsisAt) {
        node.emitError() << "term '" << text << "' has two ellipses";
        return failure();
      }
      term.ellipsisAt = term.letters.size();
      i += 2;
    } else if (llvm::isAlpha(c)) {
      term.letters.push_back(Label(c));
    } else if (c != ' ') {
      node.emitError() << "equation character '" << c << "' is neither a "
                       << "letter nor part of '...'";
      return failure();
    }
  }
  return term;
}

LogicalResult EinsumLowering::recordSize(Label label, int64_t size) {
  auto [it, inserted] = sizes.try_emplace(label, size);
  if (inserted || it->second == size || size == 1)
    return success();
  if (it->second == 1) {
    it->second = size;
    return success();
  }
  return node.emitError() << "label " << describe(label) << " has sizes "
                          << it->second << " and " << size;
}

std::string EinsumLowering::describe(Label label) const {
  if (label >= kEllipsisBase)
    return "'...' dimension " + std::to_string(label - kEllipsisBase);
  return std::string("'") + char(label) + "'";
}

LogicalResult EinsumLowering::parse(StringRef equation) {
  auto [inputsText, outputText] = equation.split("->");
  bool explicitOutput = equation.contains("->");
  SmallVector<StringRef> termTexts;
  inputsText.split(termTexts, ',');
  if (termTexts.size() != node.getNumInputs())
    return node.emitError()
           << "equation '" << equation << "' has " << termTexts.size()
           << " terms for " << node.getNumInputs() << " inputs";

  std::vector<Term> terms;
  size_t ellipsisRank = 0;
  for (auto [i, text] : llvm::enumerate(termTexts)) {
    FailureOr<Term> term = parseTerm(text);
    Value value = succeeded(term) ? node.getInput(i) : Value();
    if (!value)
      return failure();
    size_t rank = getShapeOf(value).size();
    size_t covered = rank - std::min(rank, term->letters.size());
    if (term->letters.size() > rank || (!term->ellipsisAt && covered != 0))
      return node.emitError() << "term '" << text << "' does not match input "
                              << i << " of rank " << rank;
    ellipsisRank = std::max(ellipsisRank, covered);
    terms.push_back(*term);
    operands.push_back({value, {}});
  }
  for (auto [term, operand] : llvm::zip_equal(terms, operands)) {
    ArrayRef<int64_t> shape = getShapeOf(operand.value);
    size_t covered = shape.size() - term.letters.size();
    for (size_t i = 0; i < term.letters.size(); ++i) {
      if (term.ellipsisAt && i == *term.ellipsisAt)
        for (size_t j = 0; j < covered; ++j)
          operand.labels.push_back(kEllipsisBase + ellipsisRank - covered + j);
      operand.labels.push_back(term.letters[i]);
    }
    if (term.ellipsisAt && *term.ellipsisAt == term.letters.size())
      for (size_t j = 0; j < covered; ++j)
        operand.labels.push_back(kEllipsisBase + ellipsisRank - covered + j);
    for (auto [label, size] : llvm::zip_equal(operand.labels, shape))
      if (failed(recordSize(label, size)))
        return failure();
  }

  if (!explicitOutput) {
    // Implicit output: the ellipsis, then the letters used once, sorted.
    for (size_t j = 0; j < ellipsisRank; ++j)
      output.push_back(kEllipsisBase + j);
    std::map<Label, int> uses;
    for (const Term &term : terms)
      for (Label letter : term.letters)
        ++uses[letter];
    for (auto [letter, count] : uses)
      if (count == 1)
        output.push_back(letter);
    return success();
  }
  FailureOr<Term> outputTerm = parseTerm(outputText);
  if (failed(outputTerm))
    return failure();
  for (size_t i = 0; i <= outputTerm->letters.size(); ++i) {
    if (outputTerm->ellipsisAt && i == *outputTerm->ellipsisAt)
      for (size_t j = 0; j < ellipsisRank; ++j)
        output.push_back(kEllipsisBase + j);
    if (i == outputTerm->letters.size())
      break;
    Label letter = outputTerm->letters[i];
    if (!sizes.count(letter))
      return node.emitError()
             << "output label " << describe(letter) << " is in no input term";
    if (llvm::is_contained(output, letter))
      return node.emitError()
             << "output label " << describe(letter) << " appears twice";
    output.push_back(letter);
  }
  return success();
}

Labeled EinsumLowering::permute(Labeled operand, ArrayRef<Label> order) {
  if (ArrayRef(operand.labels) == order)
    return operand;
  SmallVector<int64_t> permutation;
  for (Label label : order)
    permutation.push_back(llvm::find(operand.labels, label) -
                          operand.labels.begin());
  return {node.createTranspose(operand.value, permutation),
          std::vector<Label>(order.begin(), order.end())};
}

Labeled EinsumLowering::takeDiagonals(Labeled operand) {
  for (size_t q = 1; q < operand.labels.size(); ++q) {
    size_t p =
        llvm::find(operand.labels, operand.labels[q]) - operand.labels.begin();
    if (p == q)
      continue;
    // Move the pair last, merge it, and pick positions i * (n + 1).
    Label label = operand.labels[q];
    std::vector<Label> others;
    SmallVector<int64_t> permutation;
    for (auto [i, other] : llvm::enumerate(operand.labels))
      if (i != p && i != q) {
        others.push_back(other);
        permutation.push_back(i);
      }
    permutation.push_back(p);
    permutation.push_back(q);
    Value moved = node.createTranspose(operand.value, permutation);
    int64_t n = sizes[label];
    SmallVector<int64_t> merged(getShapeOf(moved).drop_back(2));
    merged.push_back(n * n);
    Value flat = node.createReshape(moved, merged);
    std::vector<int64_t> diagonal(n);
    for (int64_t i = 0; i < n; ++i)
      diagonal[i] = i * (n + 1);
    Value indices = node.getImporter().materialize(
        Literal::ofInts(diagonal, {n}, ::dpc::DType::I64), node.getLoc());
    merged.back() = n;
    auto type = RankedTensorType::get(merged, getElementTypeOf(flat));
    Value picked = GatherOp::create(node.getBuilder(), node.getLoc(), type,
                                    flat, indices, int64_t(merged.size() - 1));
    others.push_back(label);
    return takeDiagonals({picked, others});
  }
  return operand;
}

Labeled EinsumLowering::sumOut(Labeled operand, ArrayRef<Label> labels) {
  SmallVector<int64_t> dims;
  std::vector<Label> kept;
  for (auto [i, label] : llvm::enumerate(operand.labels)) {
    if (llvm::is_contained(labels, label))
      dims.push_back(i);
    else
      kept.push_back(label);
  }
  if (dims.empty())
    return operand;
  return {node.createReduce<ReduceSumOp>(operand.value, dims, false), kept};
}

bool EinsumLowering::isNeededAfter(Label label, size_t index) const {
  if (llvm::is_contained(output, label))
    return true;
  for (size_t i = index + 1; i < operands.size(); ++i)
    if (llvm::is_contained(operands[i].labels, label))
      return true;
  return false;
}

Labeled EinsumLowering::contract(Labeled lhs, Labeled rhs,
                                 const llvm::SmallDenseSet<Label> &keep) {
  std::vector<Label> batch, contracted, left, right;
  for (Label label : lhs.labels) {
    if (!llvm::is_contained(rhs.labels, label))
      left.push_back(label);
    else if (keep.contains(label))
      batch.push_back(label);
    else
      contracted.push_back(label);
  }
  for (Label label : rhs.labels)
    if (!llvm::is_contained(lhs.labels, label))
      right.push_back(label);
  auto sizesOf = [&](ArrayRef<Label> labels) {
    SmallVector<int64_t> result;
    for (Label label : labels)
      result.push_back(sizes[label]);
    return result;
  };
  auto concat = [](std::initializer_list<ArrayRef<Label>> parts) {
    std::vector<Label> result;
    for (ArrayRef<Label> part : parts)
      llvm::append_range(result, part);
    return result;
  };
  SmallVector<int64_t> batchShape = sizesOf(batch);
  int64_t l = product(sizesOf(left)), k = product(sizesOf(contracted)),
          r = product(sizesOf(right));
  auto withBatch = [&](int64_t rows, int64_t columns) {
    SmallVector<int64_t> shape = batchShape;
    shape.append({rows, columns});
    return shape;
  };
  Value a = node.createReshape(
      permute(lhs, concat({batch, left, contracted})).value, withBatch(l, k));
  Value b = node.createReshape(
      permute(rhs, concat({batch, contracted, right})).value, withBatch(k, r));
  auto type =
      RankedTensorType::get(withBatch(l, r), getElementTypeOf(lhs.value));
  Value matrix = MatmulOp::create(node.getBuilder(), node.getLoc(), type, a, b);
  std::vector<Label> labels = concat({batch, left, right});
  return {node.createReshape(matrix, sizesOf(labels)), labels};
}

LogicalResult EinsumLowering::run() {
  if (failed(parse(node.getString("equation", ""))))
    return failure();
  if (operands.size() > 1 &&
      !isa<FloatType>(getElementTypeOf(operands[0].value)))
    return node.emitError() << "only floating-point operands can be "
                            << "multiplied (dpc.matmul), not "
                            << getElementTypeOf(operands[0].value);
  // Each operand: broadcast to its labels' sizes, its diagonals taken, and
  // its labels that no other operand nor the output has summed out.
  for (auto [i, operand] : llvm::enumerate(operands)) {
    SmallVector<int64_t> full;
    for (Label label : operand.labels)
      full.push_back(sizes[label]);
    operand.value = node.createBroadcast(operand.value, full);
    operand = takeDiagonals(operand);
    std::vector<Label> alone;
    for (Label label : operand.labels) {
      bool elsewhere = llvm::is_contained(output, label);
      for (auto [j, other] : llvm::enumerate(operands))
        elsewhere |= j != i && llvm::is_contained(other.labels, label);
      if (!elsewhere)
        alone.push_back(label);
    }
    operand = sumOut(operand, alone);
  }
  Labeled result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    llvm::SmallDenseSet<Label> keep;
    for (Label label :
         llvm::concat<const Label>(result.labels, operands[i].labels))
      if (isNeededAfter(label, i))
        keep.insert(label);
    result = contract(result, operands[i], keep);
  }
  result = permute(result, output);
  if (!result.value)
    return failure();
  node.setOutput(0, result.value);
  return success();
}

LogicalResult convertEinsum(NodeContext &node) {
  if (!node.hasAttr("equation"))
    return node.emitError() << "has no equation";
  return EinsumLowering(node).run();
}

} // namespace

void mlir::dpc::onnx_import::addEinsumConverter(OpConverterMap &converters) {
  converters["Einsum"] = convertEinsum;
}
