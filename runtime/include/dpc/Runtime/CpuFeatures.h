//===- CpuFeatures.h - Instruction-set extensions a library needs -*- C++
//-*-===//
//
// A CPU library is compiled for a target (`dpc-opt --cpu-arch`, by default
// the building machine's own CPU) and may use every extension that target
// has; on a CPU without one it would die of an illegal instruction in the
// middle of a step. The artifact's manifest lists the extensions (read
// from the compiler's predefined macros), and dpc-run checks them against
// the CPU before loading the library.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPUFEATURES_H
#define DPC_RUNTIME_CPUFEATURES_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpc {

/// The extensions whose predefined macros appear in `macros` (the output of
/// `c++ -march=X -dM -E`), by the names __builtin_cpu_supports knows.
std::vector<std::string> getCpuFeaturesFromMacros(std::string_view macros);

/// Whether this CPU has the extension `name`; nullopt for a name this
/// build cannot check.
std::optional<bool> hasCpuFeature(std::string_view name);

} // namespace dpc

#endif // DPC_RUNTIME_CPUFEATURES_H
