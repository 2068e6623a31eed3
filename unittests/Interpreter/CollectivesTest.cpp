//===- CollectivesTest.cpp - Simulated ranks running collectives ----------===//
//
// Four ranks on a 2x2 mesh run every collective; each result is checked
// against the definition written out here: the groups (ranks differing
// only along the named axes, the first axis major), the reduction, the
// blocks. A rank that fails ends its peers with a message, not a hang.
//
//===----------------------------------------------------------------------===//

#include "dpc/InitAllDialects.h"
#include "dpc/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace mlir::dpc;

namespace {

// Rank r sits at (dp, tp) = (r / 2, r % 2).
constexpr const char *kProgram = R"mlir(
dpc.mesh @grid ["dp"=2, "tp"=2]
func.func @collectives(%x: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x4xf32>,
        tensor<4x1xf32>, tensor<2x2xf32>, tensor<2x1xf32>) {
  %0 = dpc.all_reduce %x over @grid ["tp"] <sum> : tensor<2x2xf32>
  %1 = dpc.all_reduce %x over @grid ["dp", "tp"] <max> : tensor<2x2xf32>
  %2 = dpc.reduce_scatter %x over @grid ["dp"] <mean> dim 0
      : tensor<2x2xf32> -> tensor<1x2xf32>
  %3 = dpc.all_gather %x over @grid ["tp"] dim 1
      : tensor<2x2xf32> -> tensor<2x4xf32>
  %4 = dpc.all_to_all %x over @grid ["tp"] split 1 concat 0
      : tensor<2x2xf32> -> tensor<4x1xf32>
  %5 = dpc.all_reduce %x over @grid ["tp", "dp"] <min> : tensor<2x2xf32>
  %6 = dpc.all_slice %x over @grid ["tp"] dim 1
      : tensor<2x2xf32> -> tensor<2x1xf32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x4xf32>,
        tensor<4x1xf32>, tensor<2x2xf32>, tensor<2x1xf32>
}
)mlir";

class Collectives : public ::testing::Test {
protected:
  Collectives() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    module = parseSourceString<ModuleOp>(kProgram, &context);
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diagnostic) {
          messages.push_back(diagnostic.str());
          return success();
        });
  }

  func::FuncOp getFunction() {
    return module->lookupSymbol<func::FuncOp>("collectives");
  }

  /// Rank r's input: element (i, j) is 10 r + 2 i + j + 1.
  static float input(int rank, int i, int j) {
    return 10.0f * rank + 2.0f * i + j + 1.0f;
  }

  std::vector<std::vector<HostTensor>> inputs(int ranks) {
    std::vector<std::vector<HostTensor>> perRank;
    for (int rank = 0; rank < ranks; ++rank) {
      HostTensor x(DType::F32, {2, 2});
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          x.getData<float>()[2 * i + j] = input(rank, i, j);
      perRank.push_back({x});
    }
    return perRank;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> messages;
};

TEST_F(Collectives, EveryCollectiveFollowsItsDefinition) {
  FailureOr<std::vector<std::vector<HostTensor>>> results =
      interpretRanks(getFunction(), inputs(4));
  ASSERT_TRUE(succeeded(results)) << (messages.empty() ? "" : messages[0]);
  for (int rank = 0; rank < 4; ++rank) {
    int dp = rank / 2, tp = rank % 2;
    const std::vector<HostTensor> &out = (*results)[rank];
    auto at = [&](int result, int i, int j) {
      const HostTensor &t = out[result];
      return t.getData<float>()[i * t.shape[1] + j];
    };
    // Groups: over tp the ranks of this dp row, over dp those of this tp
    // column; over (dp, tp) and (tp, dp) all four.
    int tpGroup[2] = {2 * dp, 2 * dp + 1}, dpGroup[2] = {tp, 2 + tp};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(at(0, i, j),
                  input(tpGroup[0], i, j) + input(tpGroup[1], i, j));
        EXPECT_EQ(at(1, i, j), input(3, i, j));
        EXPECT_EQ(at(5, i, j), input(0, i, j));
      }
    // The mean over the dp group, row `dp` of it (this rank's block).
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(at(2, 0, j),
                (input(dpGroup[0], dp, j) + input(dpGroup[1], dp, j)) / 2);
    // The tp group's values side by side along dimension 1.
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(at(3, i, j), input(tpGroup[j / 2], i, j % 2));
    // Block `tp` of dimension 1 from each member, stacked along dimension 0.
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(at(4, i, 0), input(tpGroup[i / 2], i % 2, tp));
    // Its own block `tp` of dimension 1, taken from its own value.
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(at(6, i, 0), input(rank, i, tp));
  }
}

// Each rank sends two values to its neighbour along pp and receives the
// two its other neighbour sent, in order.
constexpr const char *kPointToPoint = R"mlir(
dpc.mesh @grid ["pp"=2, "dp"=2]
func.func @pass(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  dpc.send %x over @grid ["pp"] shift 1 : tensor<2x2xf32>
  %n = dpc.neg %x : tensor<2x2xf32>
  dpc.send %n over @grid ["pp"] shift -1 : tensor<2x2xf32>
  %a = dpc.recv over @grid ["pp"] shift 1 : tensor<2x2xf32>
  %b = dpc.recv over @grid ["pp"] shift -1 : tensor<2x2xf32>
  return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}
)mlir";

TEST_F(Collectives, SendAndRecvPassValuesAlongAGroup) {
  module = parseSourceString<ModuleOp>(kPointToPoint, &context);
  ASSERT_TRUE(module) << (messages.empty() ? "" : messages[0]);
  auto func = module->lookupSymbol<func::FuncOp>("pass");
  FailureOr<std::vector<std::vector<HostTensor>>> results =
      interpretRanks(func, inputs(4));
  ASSERT_TRUE(succeeded(results)) << (messages.empty() ? "" : messages[0]);
  for (int rank = 0; rank < 4; ++rank) {
    // Rank r sits at (pp, dp) = (r / 2, r % 2); its neighbour along pp,
    // either way round a group of two, is r xor 2.
    int peer = rank ^ 2;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ((*results)[rank][0].getData<float>()[2 * i + j],
                  input(peer, i, j));
        EXPECT_EQ((*results)[rank][1].getData<float>()[2 * i + j],
                  -input(peer, i, j));
      }
  }
}

TEST_F(Collectives, AFailingSenderStopsItsReceiver) {
  module = parseSourceString<ModuleOp>(kPointToPoint, &context);
  ASSERT_TRUE(module);
  std::vector<std::vector<HostTensor>> perRank = inputs(4);
  perRank[0][0] = HostTensor(DType::F32, {3});
  EXPECT_TRUE(failed(
      interpretRanks(module->lookupSymbol<func::FuncOp>("pass"), perRank)));
  bool stopped = std::any_of(
      messages.begin(), messages.end(), [](const std::string &message) {
        return message.find("rank 0 stopped on an error before sending "
                            "here") != std::string::npos;
      });
  EXPECT_TRUE(stopped);
}

TEST_F(Collectives, ThePermutedMeshGroupsItsOwnDevices) {
  // With devices = [3, 2, 1, 0], the device at (dp, tp) is 3 - 2 dp - tp:
  // rank 0 sits at (1, 1), and its tp group is ranks 1 and 0, in that order.
  std::string program = kProgram;
  std::string axes = "[\"dp\"=2, \"tp\"=2]";
  program.replace(program.find(axes), axes.size(),
                  axes + " devices = [3, 2, 1, 0]");
  module = parseSourceString<ModuleOp>(program, &context);
  ASSERT_TRUE(module) << (messages.empty() ? "" : messages[0]);
  FailureOr<std::vector<std::vector<HostTensor>>> results =
      interpretRanks(getFunction(), inputs(4));
  ASSERT_TRUE(succeeded(results));
  const HostTensor &gathered = (*results)[0][3];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(gathered.getData<float>()[i * 4 + j],
                input(j < 2 ? 1 : 0, i, j % 2));
}

TEST_F(Collectives, TheMeshMustHaveOneDevicePerRank) {
  EXPECT_TRUE(failed(interpretRanks(getFunction(), inputs(3))));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("runs on mesh @grid of 4 devices, but 3 ranks "
                             "run"),
            std::string::npos)
      << messages[0];
}

TEST_F(Collectives, AFailingRankStopsItsPeers) {
  std::vector<std::vector<HostTensor>> perRank = inputs(4);
  // Rank 2 gets an argument of the wrong shape and stops before its first
  // collective; the others, waiting there, stop too.
  perRank[2][0] = HostTensor(DType::F32, {3});
  EXPECT_TRUE(failed(interpretRanks(getFunction(), perRank)));
  bool peerStopped = std::any_of(
      messages.begin(), messages.end(), [](const std::string &message) {
        return message.find("rank 2 stopped on an error before this "
                            "collective") != std::string::npos;
      });
  EXPECT_TRUE(peerStopped);
}

} // namespace
