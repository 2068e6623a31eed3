//===- Literal.cpp - Compile-time tensors of the importer -----------------===//

#include "Literal.h"

#include <cmath>
#include <cstring>

using namespace mlir::dpc::onnx_import;
using ::dpc::DType;
using ::dpc::HostTensor;

static bool isFloatType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

/// IEEE half to float, for decoding f16 initializers.
static double halfToDouble(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f,
      mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -value : value;
}

static double bfloatToDouble(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

Literal Literal::fromTensor(const HostTensor &tensor) {
  Literal literal;
  literal.dtype = tensor.dtype;
  literal.shape = tensor.shape;
  int64_t n = tensor.getNumElements();
  auto pushInts = [&](auto *data) { literal.ints.assign(data, data + n); };
  switch (tensor.dtype) {
  case DType::F32:
    literal.floats.assign(tensor.getData<float>(), tensor.getData<float>() + n);
    break;
  case DType::F64:
    literal.floats.assign(tensor.getData<double>(),
                          tensor.getData<double>() + n);
    break;
  case DType::F16:
    for (int64_t i = 0; i < n; ++i)
      literal.floats.push_back(halfToDouble(tensor.getData<uint16_t>()[i]));
    break;
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i)
      literal.floats.push_back(bfloatToDouble(tensor.getData<uint16_t>()[i]));
    break;
  case DType::I64:
    pushInts(tensor.getData<int64_t>());
    break;
  case DType::I32:
    pushInts(tensor.getData<int32_t>());
    break;
  case DType::I16:
    pushInts(tensor.getData<int16_t>());
    break;
  case DType::I8:
    pushInts(tensor.getData<int8_t>());
    break;
  case DType::U8:
    pushInts(tensor.getData<uint8_t>());
    break;
  case DType::Bool:
    for (int64_t i = 0; i < n; ++i)
      literal.ints.push_back(tensor.getData<uint8_t>()[i] != 0);
    break;
  }
  return literal;
}

Literal Literal::ofInts(std::vector<int64_t> values, std::vector<int64_t> shape,
                        DType dtype) {
  Literal literal;
  literal.dtype = dtype;
  literal.shape = std::move(shape);
  literal.ints = std::move(values);
  return literal;
}

Literal Literal::ofFloats(std::vector<double> values,
                          std::vector<int64_t> shape, DType dtype) {
  Literal literal;
  literal.dtype = dtype;
  literal.shape = std::move(shape);
  literal.floats = std::move(values);
  return literal;
}

bool Literal::isFloat() const { return isFloatType(dtype); }

int64_t Literal::getNumElements() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

double Literal::getFloat(int64_t i) const {
  return isFloat() ? floats[i] : static_cast<double>(ints[i]);
}

int64_t Literal::getInt(int64_t i) const {
  return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
}

std::vector<int64_t> Literal::getInts() const {
  std::vector<int64_t> values;
  for (int64_t i = 0, n = getNumElements(); i < n; ++i)
    values.push_back(getInt(i));
  return values;
}

Literal Literal::withShape(std::vector<int64_t> newShape) const {
  Literal literal = *this;
  literal.shape = std::move(newShape);
  return literal;
}

std::vector<int64_t>
mlir::dpc::onnx_import::getStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::optional<std::vector<int64_t>>
mlir::dpc::onnx_import::broadcastShapes(const std::vector<int64_t> &a,
                                        const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    result[i] = x == 1 ? y : x;
  }
  return result;
}

/// Index into `shape` (right-aligned within `resultShape`) of the element
/// that broadcasts to result element `flat`.
static int64_t getBroadcastIndex(int64_t flat,
                                 const std::vector<int64_t> &resultShape,
                                 const std::vector<int64_t> &shape) {
  size_t offset = resultShape.size() - shape.size();
  std::vector<int64_t> resultStrides = getStrides(resultShape);
  std::vector<int64_t> strides = getStrides(shape);
  int64_t index = 0;
  for (size_t d = 0; d < resultShape.size(); ++d) {
    int64_t coordinate = (flat / resultStrides[d]) % resultShape[d];
    if (d >= offset && shape[d - offset] != 1)
      index += coordinate * strides[d - offset];
  }
  return index;
}

Literal
mlir::dpc::onnx_import::foldBroadcast(const Literal &input,
                                      const std::vector<int64_t> &shape) {
  Literal result;
  result.dtype = input.dtype;
  result.shape = shape;
  int64_t n = result.getNumElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t source = getBroadcastIndex(i, shape, input.shape);
    if (input.isFloat())
      result.floats.push_back(input.floats[source]);
    else
      result.ints.push_back(input.ints[source]);
  }
  return result;
}

/// Rounds `value` to what an element of `dtype` can hold.
static double roundToType(double value, DType dtype) {
  if (dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16)
    return static_cast<float>(value);
  return value;
}

/// Wraps `value` into the range of the integer type `dtype`.
static int64_t wrapToType(int64_t value, DType dtype) {
  switch (dtype) {
  case DType::I32:
    return static_cast<int32_t>(value);
  case DType::I16:
    return static_cast<int16_t>(value);
  case DType::I8:
    return static_cast<int8_t>(value);
  case DType::U8:
    return static_cast<uint8_t>(value);
  case DType::Bool:
    return value != 0;
  default:
    return value;
  }
}

std::optional<Literal> mlir::dpc::onnx_import::foldBinary(
    const Literal &lhs, const Literal &rhs,
    const std::function<double(double, double)> &floatOp,
    const std::function<int64_t(int64_t, int64_t)> &intOp,
    std::optional<DType> resultType) {
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(lhs.shape, rhs.shape);
  if (!shape)
    return std::nullopt;
  Literal result;
  result.dtype = resultType.value_or(lhs.dtype);
  result.shape = *shape;
  int64_t n = result.getNumElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = getBroadcastIndex(i, *shape, lhs.shape);
    int64_t b = getBroadcastIndex(i, *shape, rhs.shape);
    if (lhs.isFloat()) {
      double value = floatOp(lhs.floats[a], rhs.floats[b]);
      if (result.isFloat())
        result.floats.push_back(roundToType(value, result.dtype));
      else
        result.ints.push_back(static_cast<int64_t>(value));
    } else {
      result.ints.push_back(
          wrapToType(intOp(lhs.ints[a], rhs.ints[b]), result.dtype));
    }
  }
  return result;
}

Literal mlir::dpc::onnx_import::foldScatter(const Literal &data,
                                            const std::vector<int64_t> &targets,
                                            const Literal &updates,
                                            const std::string &reduction) {
  auto combine = [&](auto current, auto update) {
    if (reduction == "add")
      return current + update;
    if (reduction == "mul")
      return current * update;
    if (reduction == "max")
      return std::max(current, update);
    if (reduction == "min")
      return std::min(current, update);
    return update;
  };
  Literal result = data;
  for (size_t i = 0; i < targets.size(); ++i) {
    int64_t target = targets[i];
    if (result.isFloat())
      result.floats[target] =
          combine(result.floats[target], updates.getFloat(i));
    else
      result.ints[target] = combine(result.ints[target], updates.getInt(i));
  }
  return result;
}

std::optional<Literal> mlir::dpc::onnx_import::foldWhere(
    const Literal &condition, const Literal &onTrue, const Literal &onFalse) {
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(condition.shape, onTrue.shape);
  if (shape)
    shape = broadcastShapes(*shape, onFalse.shape);
  if (!shape)
    return std::nullopt;
  Literal result;
  result.dtype = onTrue.dtype;
  result.shape = *shape;
  for (int64_t i = 0, n = result.getNumElements(); i < n; ++i) {
    bool take = condition.getInt(getBroadcastIndex(i, *shape, condition.shape));
    const Literal &source = take ? onTrue : onFalse;
    int64_t index = getBroadcastIndex(i, *shape, source.shape);
    if (result.isFloat())
      result.floats.push_back(source.floats[index]);
    else
      result.ints.push_back(source.ints[index]);
  }
  return result;
}

Literal mlir::dpc::onnx_import::foldCast(const Literal &input, DType dtype) {
  Literal result;
  result.dtype = dtype;
  result.shape = input.shape;
  for (int64_t i = 0, n = input.getNumElements(); i < n; ++i) {
    if (result.isFloat())
      result.floats.push_back(roundToType(input.getFloat(i), dtype));
    else if (dtype == DType::Bool)
      result.ints.push_back(input.getFloat(i) != 0.0);
    else
      // Float to integer truncates toward zero, as static_cast does.
      result.ints.push_back(
          wrapToType(input.isFloat() ? static_cast<int64_t>(input.floats[i])
                                     : input.ints[i],
                     dtype));
  }
  return result;
}

std::optional<Literal>
mlir::dpc::onnx_import::foldConcat(const std::vector<Literal> &inputs,
                                   int64_t axis) {
  Literal result;
  result.dtype = inputs.front().dtype;
  result.shape = inputs.front().shape;
  result.shape[axis] = 0;
  for (const Literal &input : inputs) {
    if (input.shape.size() != result.shape.size())
      return std::nullopt;
    for (size_t d = 0; d < input.shape.size(); ++d)
      if (static_cast<int64_t>(d) != axis &&
          input.shape[d] != inputs.front().shape[d])
        return std::nullopt;
    result.shape[axis] += input.shape[axis];
  }
  // Copy blocks of the trailing dimensions, input by input.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= result.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (const Literal &input : inputs) {
      int64_t block = input.getNumElements() / std::max<int64_t>(outer, 1);
      for (int64_t i = o * block; i < (o + 1) * block; ++i) {
        if (result.isFloat())
          result.floats.push_back(input.getFloat(i));
        else
          result.ints.push_back(input.getInt(i));
      }
    }
  return result;
}

std::optional<Literal>
mlir::dpc::onnx_import::foldGather(const Literal &data, const Literal &indices,
                                   int64_t axis) {
  Literal result;
  result.dtype = data.dtype;
  result.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  result.shape.insert(result.shape.end(), indices.shape.begin(),
                      indices.shape.end());
  result.shape.insert(result.shape.end(), data.shape.begin() + axis + 1,
                      data.shape.end());
  int64_t outer = 1, inner = 1, size = data.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d)
    inner *= data.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0, n = indices.getNumElements(); k < n; ++k) {
      int64_t index = indices.getInt(k);
      if (index < 0)
        index += size;
      if (index < 0 || index >= size)
        return std::nullopt;
      for (int64_t i = 0; i < inner; ++i) {
        int64_t source = (o * size + index) * inner + i;
        if (data.isFloat())
          result.floats.push_back(data.floats[source]);
        else
          result.ints.push_back(data.ints[source]);
      }
    }
  return result;
}

Literal mlir::dpc::onnx_import::foldSlice(
    const Literal &input, const std::vector<int64_t> &start,
    const std::vector<int64_t> &step, const std::vector<int64_t> &resultShape) {
  Literal result;
  result.dtype = input.dtype;
  result.shape = resultShape;
  std::vector<int64_t> inStrides = getStrides(input.shape);
  std::vector<int64_t> outStrides = getStrides(resultShape);
  for (int64_t i = 0, n = result.getNumElements(); i < n; ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < resultShape.size(); ++d) {
      int64_t coordinate = (i / outStrides[d]) % resultShape[d];
      source += (start[d] + coordinate * step[d]) * inStrides[d];
    }
    if (input.isFloat())
      result.floats.push_back(input.floats[source]);
    else
      result.ints.push_back(input.ints[source]);
  }
  return result;
}

Literal
mlir::dpc::onnx_import::foldTranspose(const Literal &input,
                                      const std::vector<int64_t> &permutation) {
  Literal result;
  result.dtype = input.dtype;
  for (int64_t dim : permutation)
    result.shape.push_back(input.shape[dim]);
  std::vector<int64_t> inStrides = getStrides(input.shape);
  std::vector<int64_t> outStrides = getStrides(result.shape);
  for (int64_t i = 0, n = result.getNumElements(); i < n; ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < permutation.size(); ++d)
      source +=
          ((i / outStrides[d]) % result.shape[d]) * inStrides[permutation[d]];
    if (input.isFloat())
      result.floats.push_back(input.floats[source]);
    else
      result.ints.push_back(input.ints[source]);
  }
  return result;
}
