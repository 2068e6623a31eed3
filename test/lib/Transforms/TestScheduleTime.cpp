//===- TestScheduleTime.cpp - The time of each program's schedule ---------===//

#include "TestPasses.h"
#include "dpc/Transforms/Collectives/CommunicationVolume.h"
#include "dpc/Transforms/Collectives/PlanCluster.h"
#include "dpc/Transforms/Collectives/ScheduleTime.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTSCHEDULETIME
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestScheduleTimePass
    : public dpc::impl::TestScheduleTimeBase<TestScheduleTimePass> {
  using TestScheduleTimeBase::TestScheduleTimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Cluster> resolved = resolvePlanCluster(module, cluster);
    if (failed(resolved))
      return signalPassFailure();
    Builder builder(&getContext());
    for (func::FuncOp program : getPartitionedPrograms(module)) {
      ScheduleTime time = getScheduleTime(program, *resolved);
      auto field = [&](StringRef name, double seconds) {
        return builder.getNamedAttr(name, builder.getF64FloatAttr(seconds));
      };
      program->setAttr(
          "dpc.schedule_time",
          builder.getDictionaryAttr(
              {field("communication", time.communication),
               field("compute", time.compute),
               field("contention", time.contention),
               field("exposed", time.exposed), field("total", time.total),
               field("tp_communication", time.tensorCommunication),
               field("tp_exposed", time.tensorExposed)}));
    }
  }
};
} // namespace
