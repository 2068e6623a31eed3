//===- PlanCluster.cpp - The cluster a planned module runs on -------------===//

#include "dpc/Transforms/Collectives/PlanCluster.h"

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

using namespace mlir;
using namespace mlir::dpc;

FailureOr<Cluster> mlir::dpc::resolvePlanCluster(ModuleOp module,
                                                 StringRef spec) {
  std::string resolvedSpec = spec.str(), mesh;
  auto plan = module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
  if (resolvedSpec.empty()) {
    auto named = plan ? plan.getAs<StringAttr>("cluster") : StringAttr();
    resolvedSpec = named ? named.str() : "h100-sxm";
  }
  // The nodes are those the planned mesh was laid out on.
  if (auto planned = plan ? plan.getAs<StringAttr>("mesh") : StringAttr())
    mesh = planned.str();
  std::string error;
  FailureOr<Cluster> resolved =
      resolveClusterForMesh(resolvedSpec, mesh, error);
  if (failed(resolved))
    emitError(module.getLoc(), "--cluster=") << resolvedSpec << ": " << error;
  return resolved;
}
