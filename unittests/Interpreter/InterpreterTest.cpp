//===- InterpreterTest.cpp - The interpreter's C++ API --------------------===//
//
// interpret() and interpretRanks() on a parsed module: results, precision,
// per-rank arguments, and the diagnostics for mismatched arguments.
//
//===----------------------------------------------------------------------===//

#include "dpc/Interpreter/Interpreter.h"
#include "dpc/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

constexpr const char *kProgram = R"mlir(
func.func @scale(%x: tensor<3xf32> {dpc.input = "x"},
                 %s: tensor<f32> {dpc.param = "s"}) -> tensor<3xf32> {
  %y = dpc.mul %x, %s : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
)mlir";

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    module = parseSourceString<ModuleOp>(kProgram, &context);
    // Diagnostics are collected rather than printed.
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diagnostic) {
          messages.push_back(diagnostic.str());
          return success();
        });
  }

  func::FuncOp getFunction() {
    return module->lookupSymbol<func::FuncOp>("scale");
  }

  static HostTensor makeF32(std::vector<int64_t> shape,
                            std::vector<float> values) {
    HostTensor tensor(DType::F32, std::move(shape));
    for (size_t i = 0; i < values.size(); ++i)
      tensor.getData<float>()[i] = values[i];
    return tensor;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> messages;
};

TEST_F(InterpreterTest, RunsAFunction) {
  ASSERT_TRUE(module);
  std::vector<HostTensor> arguments = {makeF32({3}, {1, 2, 3}),
                                       makeF32({}, {0.5})};
  FailureOr<std::vector<HostTensor>> results =
      interpret(getFunction(), arguments);
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ(results->size(), 1u);
  const HostTensor &y = (*results)[0];
  EXPECT_EQ(y.dtype, DType::F32);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(y.getData<float>()[2], 1.5f);
}

TEST_F(InterpreterTest, Fp64ReturnsDoubles) {
  HostTensor x(DType::F64, {3});
  for (int i = 0; i < 3; ++i)
    x.getData<double>()[i] = 1.0 / 3.0;
  InterpreterOptions options;
  options.precision = Precision::F64;
  FailureOr<std::vector<HostTensor>> results =
      interpret(getFunction(), {x, makeF32({}, {3})}, options);
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ((*results)[0].dtype, DType::F64);
  EXPECT_EQ((*results)[0].getData<double>()[0], 1.0 / 3.0 * 3.0);
}

TEST_F(InterpreterTest, RanksRunOnTheirOwnArguments) {
  std::vector<std::vector<HostTensor>> perRank;
  for (float rank : {0.0f, 1.0f, 2.0f})
    perRank.push_back({makeF32({3}, {1, 1, 1}), makeF32({}, {rank})});
  FailureOr<std::vector<std::vector<HostTensor>>> results =
      interpretRanks(getFunction(), perRank);
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ(results->size(), 3u);
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_EQ((*results)[rank][0].getData<float>()[0],
              static_cast<float>(rank));
}

TEST_F(InterpreterTest, MismatchedArgumentsAreDiagnosed) {
  FailureOr<std::vector<HostTensor>> results =
      interpret(getFunction(), {makeF32({2}, {1, 2}), makeF32({}, {1})});
  EXPECT_TRUE(failed(results));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "argument #0 ('x'): expected tensor<3xf32>, got "
                         "tensor<2xf32>");

  messages.clear();
  EXPECT_TRUE(failed(interpret(getFunction(), {makeF32({3}, {1, 2, 3})})));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "expects 2 arguments, got 1");
}

TEST(ArgumentMismatch, NamesBothTypes) {
  MLIRContext context;
  Type type = RankedTensorType::get({2, 3}, Float32Type::get(&context));
  HostTensor ints(DType::I64, {2, 3});
  EXPECT_EQ(getArgumentMismatch(type, ints, Precision::F32),
            std::optional<std::string>(
                "expected tensor<2x3xf32>, got tensor<2x3xi64>"));
  HostTensor doubles(DType::F64, {2, 3});
  EXPECT_TRUE(getArgumentMismatch(type, doubles, Precision::F32));
  EXPECT_FALSE(getArgumentMismatch(type, doubles, Precision::F64));
}

} // namespace
