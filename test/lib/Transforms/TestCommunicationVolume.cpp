//===- TestCommunicationVolume.cpp - Bytes each program sends -------------===//

#include "TestPasses.h"
#include "dpc/Transforms/Collectives/CommunicationVolume.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTCOMMUNICATIONVOLUME
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestCommunicationVolumePass
    : public dpc::impl::TestCommunicationVolumeBase<
          TestCommunicationVolumePass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    for (func::FuncOp program : getPartitionedPrograms(getOperation())) {
      CommunicationVolume sent = countSentBytes(program);
      auto bytes = [&](double value) {
        return builder.getI64IntegerAttr(std::llround(value));
      };
      program->setAttr(
          "dpc.sent_bytes",
          builder.getDictionaryAttr(
              {builder.getNamedAttr("dp", bytes(sent.dataAxis)),
               builder.getNamedAttr("pp", bytes(sent.stageAxis)),
               builder.getNamedAttr("tp", bytes(sent.tensorAxis))}));
    }
  }
};
} // namespace
