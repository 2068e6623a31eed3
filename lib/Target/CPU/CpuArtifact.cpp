//===- CpuArtifact.cpp - A step compiled for CPUs, as a directory ---------===//

#include "dpc/Target/CPU/CpuArtifact.h"

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Runtime/CpuFeatures.h"
#include "dpc/Runtime/Npy.h"
#include "dpc/Runtime/ProgramAbi.h"
#include "dpc/Target/CPU/BatchSummedProducts.h"
#include "dpc/Target/CPU/CppEmitter.h"
#include "dpc/Target/CPU/OpProfile.h"
#include "dpc/Target/CPU/TransposedProducts.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dpc;
namespace json = llvm::json;

namespace {

/// The step's programs: its pipeline stages, or itself.
SmallVector<func::FuncOp> getPrograms(ModuleOp module, StringRef name) {
  SmallVector<func::FuncOp> stages;
  for (int64_t s = 0;; ++s) {
    auto stage =
        module.lookupSymbol<func::FuncOp>((name + ".stage" + Twine(s)).str());
    if (!stage || !stage->hasAttr(DpcDialect::kPipelineStageAttrName))
      break;
    stages.push_back(stage);
  }
  if (stages.empty())
    if (auto func = module.lookupSymbol<func::FuncOp>(name))
      stages.push_back(func);
  return stages;
}

/// Replaces every call in `func` by the callee's body, until none is left.
LogicalResult inlineCalls(func::FuncOp func, ModuleOp module) {
  for (unsigned round = 0;; ++round) {
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) { calls.push_back(call); });
    if (calls.empty())
      return success();
    if (round > 64)
      return func.emitError("calls nest deeper than 64 (recursion?)");
    for (func::CallOp call : calls) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
        return call.emitError("calls a function the CPU backend cannot "
                              "inline");
      IRMapping map;
      map.map(callee.getArguments(), call.getOperands());
      OpBuilder builder(call);
      for (Operation &op : callee.getBody().front().without_terminator())
        builder.clone(op, map);
      Operation *ret = callee.getBody().front().getTerminator();
      for (auto [result, value] :
           llvm::zip_equal(call.getResults(), ret->getOperands()))
        result.replaceAllUsesWith(map.lookupOrDefault(value));
      call.erase();
    }
  }
}

/// The program as the emitter takes it: calls inlined, transposed products
/// computed transposed.
LogicalResult prepareProgram(func::FuncOp func, ModuleOp module) {
  if (failed(inlineCalls(func, module)))
    return failure();
  sumBatchedProductsInOneProduct(func);
  computeTransposedProducts(func);
  return success();
}

/// The role and name of a value from its argument or result attributes.
std::pair<std::string, std::string> getRole(DictionaryAttr attrs) {
  static const std::pair<StringLiteral, const char *> roles[] = {
      {DpcDialect::kParamAttrName, "param"},
      {DpcDialect::kStateAttrName, "state"},
      {DpcDialect::kOptStateAttrName, "opt_state"},
      {DpcDialect::kInputAttrName, "input"},
      {DpcDialect::kHyperAttrName, "hyper"},
      {DpcDialect::kOutputAttrName, "output"},
      {DpcDialect::kGradAttrName, "grad"}};
  if (attrs)
    for (auto [attrName, role] : roles)
      if (auto name = attrs.getAs<StringAttr>(attrName))
        return {role, name.getValue().str()};
  return {"", ""};
}

std::string getDTypeName(Type type) {
  if (type.isF32())
    return "float32";
  if (type.isF64())
    return "float64";
  if (type.isF16())
    return "float16";
  if (type.isBF16())
    return "bfloat16";
  if (type.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(type))
    return "int" + std::to_string(integer.getWidth());
  return "unknown";
}

json::Array toJson(ArrayRef<int64_t> values) {
  json::Array array;
  for (int64_t value : values)
    array.push_back(value);
  return array;
}

/// A tensor's entry: role, name, types and the block each rank holds.
json::Object describeValue(DictionaryAttr attrs, Type localType, MeshOp mesh,
                           int64_t worldSize) {
  auto local = cast<RankedTensorType>(localType);
  auto sharding = attrs
                      ? attrs.getAs<ShardingAttr>(DpcDialect::kShardingAttrName)
                      : ShardingAttr();
  RankedTensorType global =
      sharding && mesh ? getGlobalType(sharding, local, mesh) : local;
  auto [role, name] = getRole(attrs);
  json::Object entry{{"role", role},
                     {"name", name},
                     {"dtype", getDTypeName(local.getElementType())},
                     {"shape", toJson(global.getShape())},
                     {"local_shape", toJson(local.getShape())}};
  json::Array blocks, partial;
  for (int64_t device = 0; device < worldSize; ++device)
    blocks.push_back(
        toJson(sharding && mesh
                   ? getBlockStart(sharding, mesh, device, global.getShape())
                   : SmallVector<int64_t>(local.getRank(), 0)));
  entry["blocks"] = std::move(blocks);
  if (sharding && mesh) {
    for (auto [axisAttr, kind] : llvm::zip_equal(sharding.getPartialAxes(),
                                                 sharding.getPartialKinds())) {
      StringRef axis = cast<StringAttr>(axisAttr).getValue();
      json::Array groups;
      llvm::DenseSet<int64_t> seen;
      for (int64_t device = 0; device < worldSize; ++device) {
        if (seen.contains(device))
          continue;
        SmallVector<int64_t> members = mesh.getGroup(device, {axis});
        seen.insert(members.begin(), members.end());
        groups.push_back(toJson(members));
      }
      partial.push_back(json::Object{{"axis", axis},
                                     {"kind", stringifyReductionKind(kind)},
                                     {"groups", std::move(groups)}});
    }
  }
  entry["partial"] = std::move(partial);
  return entry;
}

/// The values an integer input of the step may take, [0, bound): the size
/// of what it indexes (a gather's axis, a loss's classes), found from its
/// argument in a function of `module` on whole values (the planned step's
/// forward stays beside the partitioned programs). 0 when unknown.
int64_t getIndexBound(ModuleOp module, StringRef inputName) {
  int64_t bound = 0;
  module.walk([&](func::FuncOp func) {
    if (func->hasAttr(DpcDialect::kPartitionedAttrName) || func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    DpcDialect::kInputAttrName);
      if (!name || name.getValue() != inputName ||
          !isa<IntegerType>(getElementTypeOrSelf(arg.getType())))
        continue;
      SmallVector<Value> worklist = {arg};
      while (!worklist.empty() && bound == 0) {
        Value value = worklist.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          auto dimOf = [](Value v, int64_t d) {
            return cast<RankedTensorType>(v.getType()).getDimSize(d);
          };
          if (auto gather = dyn_cast<GatherOp>(user);
              gather && use.getOperandNumber() == 1)
            bound = dimOf(gather->getOperand(0), gather.getAxis());
          else if (isa<SoftmaxCrossEntropyOp, NllLossOp>(user) &&
                   use.getOperandNumber() == 1)
            bound = dimOf(user->getOperand(0), 1);
          else if (isa<ReshapeOp, TransposeOp, BroadcastToOp>(user))
            worklist.push_back(user->getResult(0));
        }
      }
    }
  });
  return bound;
}

/// The mesh a partitioned program runs on, or null for one device.
MeshOp getMesh(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto sharding = func.getArgAttrOfType<ShardingAttr>(
            i, DpcDialect::kShardingAttrName))
      if (MeshOp mesh = lookupMesh(sharding, func))
        return mesh;
  return MeshOp();
}

json::Value attributeToJson(Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getType().isInteger(1)
               ? json::Value(integer.getValue().getBoolValue())
               : json::Value(integer.getInt());
  if (auto real = dyn_cast<FloatAttr>(attr))
    return real.getValueAsDouble();
  if (auto text = dyn_cast<StringAttr>(attr))
    return text.getValue();
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto list = dyn_cast<ArrayAttr>(attr)) {
    json::Array elements;
    for (Attribute element : list)
      elements.push_back(attributeToJson(element));
    return elements;
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  attr.print(os);
  return printed;
}

std::string getCompiler(const CpuArtifactOptions &options) {
  if (!options.compiler.empty())
    return options.compiler;
  if (const char *cxx = std::getenv("CXX"); cxx && *cxx)
    return cxx;
  return "c++";
}

/// Runs the compiler command `args`, its output in `log`; on failure, an
/// error with the log's end.
/// The error of a compile of the `what` library that failed (`error`:
/// why it could not run, if it could not), with the end of its `log`.
LogicalResult reportCompileFailure(Location loc, StringRef what,
                                   const std::string &error, StringRef log) {
  auto text = llvm::MemoryBuffer::getFile(log);
  return emitError(loc) << "compiling the " << what << " library failed"
                        << (error.empty() ? "" : ": " + error) << "\n"
                        << (text ? (*text)->getBuffer().take_back(4000)
                                 : StringRef());
}

LogicalResult runCompiler(Location loc, ArrayRef<StringRef> args, StringRef log,
                          StringRef what) {
  std::optional<StringRef> redirects[] = {std::nullopt, log, log};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(args.front(), args, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0)
    return reportCompileFailure(loc, what, error, log);
  return success();
}

/// Compiles model.cu into libmodel.so: with nvcc for the GPUs dpc
/// targets (sm_80, sm_90, and PTX for later ones), or under emulation
/// with the host compiler.
LogicalResult compileCudaLibrary(Location loc, StringRef dir,
                                 const CpuArtifactOptions &options) {
  if (!options.emulate &&
      (options.cudaArchs.empty() ||
       !llvm::all_of(options.cudaArchs, [](const std::string &arch) {
         return !arch.empty() && arch.size() <= 4 &&
                llvm::all_of(arch, llvm::isDigit);
       })))
    return emitError(loc) << "--cuda-arch='"
                          << llvm::join(options.cudaArchs, ",")
                          << "' is not a list of compute capabilities "
                             "without the dot (e.g. 80,90)";
  std::string compiler = options.emulate ? getCompiler(options) : "";
  if (!options.emulate) {
    const char *nvcc = std::getenv("NVCC");
    compiler = nvcc && *nvcc ? nvcc : DPC_NVCC;
  }
  // A path names the program itself; a bare name is looked up in $PATH.
  llvm::ErrorOr<std::string> program =
      StringRef(compiler).contains('/')
          ? (llvm::sys::fs::can_execute(compiler)
                 ? llvm::ErrorOr<std::string>(compiler)
                 : std::make_error_code(std::errc::no_such_file_or_directory))
          : llvm::sys::findProgramByName(compiler);
  if (compiler.empty() || !program)
    return emitError(loc) << "cannot find "
                          << (options.emulate ? "the C++ compiler '" +
                                                    compiler + "' (set $CXX)"
                                              : std::string("nvcc to build the "
                                                            "CUDA library "
                                                            "(install the CUDA "
                                                            "toolkit or set "
                                                            "$NVCC)"));
  SmallString<128> source(dir), library(dir), log(dir);
  llvm::sys::path::append(source, "model.cu");
  llvm::sys::path::append(library, "libmodel.so");
  llvm::sys::path::append(log, "compile.log");
  // The emulated build is for checking the generated code's arithmetic,
  // never timed: -O1 halves its compile (resnet18's 66 s to 29 s).
  // `args` refers to the -gencode values, kept alive beside it.
  std::vector<std::string> gencodes;
  SmallVector<StringRef> args = {*program, "-std=c++17",
                                 options.emulate ? "-O1" : "-O3", "-shared",
                                 "-I" DPC_RUNTIME_INCLUDE_DIR};
  if (options.emulate) {
    args.append({"-fPIC", "-fno-math-errno", "-DDPC_CUDA_EMULATION", "-x",
                 "c++", source, "-x", "none", "-o", library,
                 DPC_RUNTIME_LIBRARY});
  } else {
    // The architectures compile in parallel, a thread each (--threads 0:
    // up to the machine's CPUs): the GPT pipeline took 165 s in one.
    args.append({"--extended-lambda", "--expt-relaxed-constexpr", "--threads",
                 "0", "-Xcompiler", "-fPIC"});
    // Each architecture's machine code, and the last's PTX for GPUs after
    // it.
    for (const std::string &arch : options.cudaArchs)
      gencodes.push_back("arch=compute_" + arch + ",code=" +
                         (&arch == &options.cudaArchs.back()
                              ? "[sm_" + arch + ",compute_" + arch + "]"
                              : "sm_" + arch));
    for (const std::string &gencode : gencodes)
      args.append({"-gencode", gencode});
    args.append({source, "-o", library, "-lcublasLt", "-lnccl", "-lcudart"});
  }
  return runCompiler(loc, args, log, "CUDA");
}

/// The instruction-set extensions the CPU library may use: those the
/// compiler enables for --cpu-arch (its predefined macros).
FailureOr<std::vector<std::string>>
getCpuFeatures(Location loc, StringRef dir, const CpuArtifactOptions &options) {
  // A name, not an option or a path: it becomes one argument, -march=NAME.
  if (options.cpuArch.empty() || !llvm::all_of(options.cpuArch, [](char c) {
        return llvm::isAlnum(c) || c == '-' || c == '_' || c == '.';
      }))
    return emitError(loc) << "--cpu-arch='" << options.cpuArch
                          << "' is not a CPU name (letters, digits, '-', "
                             "'_' and '.'; e.g. native, x86-64-v3)";
  std::string compiler = getCompiler(options);
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(compiler);
  if (!program)
    return emitError(loc) << "cannot find the C++ compiler '" << compiler
                          << "' to build the CPU library (set $CXX)";
  SmallString<128> macros(dir);
  llvm::sys::path::append(macros, "cpu-macros.txt");
  std::string march = "-march=" + options.cpuArch;
  SmallVector<StringRef> args = {*program, march, "-dM",      "-E",
                                 "-x",     "c++", "/dev/null"};
  std::optional<StringRef> redirects[] = {std::nullopt, macros, macros};
  int status =
      llvm::sys::ExecuteAndWait(args.front(), args, std::nullopt, redirects);
  auto text = llvm::MemoryBuffer::getFile(macros);
  llvm::sys::fs::remove(macros);
  if (status != 0 || !text)
    return emitError(loc) << "the C++ compiler '" << compiler
                          << "' does not know --cpu-arch=" << options.cpuArch
                          << "\n"
                          << (text ? (*text)->getBuffer().take_back(2000)
                                   : StringRef());
  return ::dpc::getCpuFeaturesFromMacros((*text)->getBuffer().str());
}

/// Compiles the CPU sources `sources` (in `dir`) into objects, as many at
/// once as the machine has threads, and links them into libmodel.so.
LogicalResult compileCpuLibrary(Location loc, StringRef dir,
                                const CpuArtifactOptions &options,
                                ArrayRef<std::string> sources) {
  std::string compiler = getCompiler(options);
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(compiler);
  if (!program)
    return emitError(loc) << "cannot find the C++ compiler '" << compiler
                          << "' to build the CPU library (set $CXX)";
  auto inDir = [&](StringRef name) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string march = "-march=" + options.cpuArch;
  struct Job {
    std::string source, object, log;
    llvm::sys::ProcessInfo process;
  };
  std::vector<Job> jobs;
  for (const std::string &source : sources)
    jobs.push_back(
        {inDir(source), inDir(source + ".o"), inDir(source + ".log"), {}});
  // -O3 and the target's vector width vectorize the fused loops (and the
  // exp and erf of SimdMath.h inside them); -fno-trapping-math lets the
  // NaN tests of max, relu and exp be selects rather than branches, which
  // SSE and AVX2 code needs to vectorize. No contraction into FMA: the
  // loops round as the interpreter does.
  auto start = [&](Job &job, std::string &error) {
    SmallVector<StringRef> args = {*program,
                                   "-std=c++17",
                                   "-O3",
                                   march,
                                   "-fPIC",
                                   "-fno-math-errno",
                                   "-fno-trapping-math",
                                   "-ffp-contract=off",
                                   "-I" DPC_RUNTIME_INCLUDE_DIR,
                                   "-c",
                                   job.source,
                                   "-o",
                                   job.object};
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(job.log),
                                            StringRef(job.log)};
    job.process = llvm::sys::ExecuteNoWait(args.front(), args, std::nullopt,
                                           redirects, 0, &error);
    return job.process.Pid != llvm::sys::ProcessInfo::InvalidPid;
  };
  // The oldest compile is waited for before the next starts.
  size_t width =
      std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  LogicalResult result = success();
  for (size_t next = 0, waited = 0; waited < jobs.size(); ++waited) {
    for (; result.succeeded() && next < jobs.size() && next < waited + width;
         ++next) {
      std::string error;
      if (!start(jobs[next], error))
        result = reportCompileFailure(loc, "CPU", error, jobs[next].log);
    }
    if (waited >= next)
      break;
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(jobs[waited].process, std::nullopt, &error);
    if (done.ReturnCode != 0 && result.succeeded())
      result = reportCompileFailure(loc, "CPU", error, jobs[waited].log);
  }
  if (failed(result))
    return failure();
  SmallVector<StringRef> args = {*program, "-shared", "-fPIC"};
  for (const Job &job : jobs)
    args.push_back(job.object);
  std::string library = inDir("libmodel.so");
  args.append({"-o", library, DPC_CPU_KERNELS_LIBRARY, DPC_RUNTIME_LIBRARY,
               DPC_OPENBLAS_LIBRARY, DPC_DNNL_LIBRARY, "-lz"});
  if (failed(runCompiler(loc, args, inDir("compile.log"), "CPU")))
    return failure();
  // Only the library stays.
  for (const Job &job : jobs) {
    llvm::sys::fs::remove(job.object);
    llvm::sys::fs::remove(job.log);
  }
  return success();
}

} // namespace

LogicalResult mlir::dpc::writeCpuSource(ModuleOp module, raw_ostream &os,
                                        StringRef function, EmitTarget target) {
  OwningOpRef<ModuleOp> copy = module.clone();
  SmallVector<func::FuncOp> programs = getPrograms(*copy, function);
  if (programs.empty())
    return module.emitError("no function '") << function << "' to compile";
  emitCppPrologue(os, target);
  emitCppAbiVersion(os);
  GroupTable groups;
  for (auto [index, program] : llvm::enumerate(programs)) {
    EmittedProgram info;
    if (failed(prepareProgram(program, *copy)) ||
        failed(emitCppProgram(program, "dpc_program_" + std::to_string(index),
                              groups, os, info, target)))
      return failure();
    os << "// " << info.symbol << ": arena " << info.arenaBytes << " bytes ("
       << info.liveBytes << " alive at most, " << info.unsharedBytes
       << " without reuse), " << info.loops << " loops, " << info.fusedOps
       << " ops fused\n";
  }
  return success();
}

LogicalResult mlir::dpc::writeCpuArtifact(ModuleOp module, StringRef path,
                                          const CpuArtifactOptions &options) {
  OwningOpRef<ModuleOp> copy = module.clone();
  SmallVector<func::FuncOp> programs = getPrograms(*copy, options.function);
  if (programs.empty())
    return module.emitError("--emit=")
           << (options.target == EmitTarget::Cuda ? "cuda" : "cpu")
           << ": the module has no function '" << options.function
           << "' to compile";
  MeshOp mesh = getMesh(programs.front());
  int64_t worldSize = mesh ? mesh.getNumDevices() : 1;
  if (programs.size() > 1) {
    std::optional<unsigned> axis =
        mesh ? mesh.getAxisIndex("pp") : std::nullopt;
    if (!axis || mesh.getShape()[*axis] != int64_t(programs.size()))
      return programs.front().emitError("is one of ")
             << programs.size() << " pipeline stages, but its mesh's 'pp' "
             << "axis does not have as many";
  }

  // The source, one function per program; a CPU program's parts in
  // translation units of their own.
  std::string source, prologue;
  llvm::raw_string_ostream os(source), prologueStream(prologue);
  bool cuda = options.target == EmitTarget::Cuda;
  emitCppPrologue(prologueStream, options.target);
  os << prologue;
  emitCppAbiVersion(os);
  SmallVector<std::string> parts;
  GroupTable groups;
  json::Array programEntries;
  // The plan's cluster prices each op for `dpc-run --profile`.
  std::optional<Cluster> cluster;
  if (auto plan =
          module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName)) {
    auto spec = plan.getAs<StringAttr>("cluster");
    auto meshText = plan.getAs<StringAttr>("mesh");
    std::string error;
    if (spec && meshText)
      if (FailureOr<Cluster> resolved =
              resolveClusterForMesh(spec, meshText, error);
          succeeded(resolved))
        cluster = *resolved;
  }
  for (auto [index, program] : llvm::enumerate(programs)) {
    if (failed(prepareProgram(program, *copy)))
      return failure();
    EmittedProgram info;
    std::string symbol = "dpc_program_" + std::to_string(index);
    if (failed(emitCppProgram(program, symbol, groups, os, info, options.target,
                              cuda ? nullptr : &parts)))
      return failure();
    json::Array ranks;
    for (int64_t device = 0; device < worldSize; ++device) {
      int64_t stage = 0;
      if (programs.size() > 1)
        stage = getDeviceCoordinates(mesh, device)[*mesh.getAxisIndex("pp")];
      if (stage == int64_t(index))
        ranks.push_back(device);
    }
    // What a rank running the program must hold: the arguments it reads
    // or writes an update over (a pipeline stage, its own parameters).
    json::Array reads;
    for (BlockArgument argument : program.getArguments())
      if (!argument.use_empty() ||
          llvm::is_contained(info.updatedArguments, argument.getArgNumber()))
        reads.push_back(int64_t(argument.getArgNumber()));
    json::Array results;
    for (unsigned i = 0; i < program.getNumResults(); ++i) {
      json::Object entry =
          describeValue(program.getResultAttrDict(i),
                        program.getResultTypes()[i], mesh, worldSize);
      // The argument whose buffer dpc-run passes for this result.
      if (std::optional<unsigned> updated = info.updatedArguments[i])
        entry["updates"] = int64_t(*updated);
      results.push_back(std::move(entry));
    }
    json::Array ops = describeMarkedOps(
        info.markedOps,
        [&](Operation *op) { return info.fusedIntoUsers.contains(op); },
        cluster ? &*cluster : nullptr);
    programEntries.push_back(
        json::Object{{"symbol", symbol},
                     {"function", program.getSymName()},
                     {"ranks", std::move(ranks)},
                     {"arena_bytes", info.arenaBytes},
                     {"unshared_arena_bytes", info.unsharedBytes},
                     {"live_arena_bytes", info.liveBytes},
                     {"loops", info.loops},
                     {"fused_ops", info.fusedOps},
                     {"reads", std::move(reads)},
                     {"results", std::move(results)},
                     {"ops", std::move(ops)}});
  }
  // Every stage program takes the same arguments.
  json::Array arguments;
  func::FuncOp first = programs.front();
  for (unsigned i = 0; i < first.getNumArguments(); ++i) {
    json::Object entry = describeValue(
        first.getArgAttrDict(i), first.getArgumentTypes()[i], mesh, worldSize);
    auto input =
        first.getArgAttrOfType<StringAttr>(i, DpcDialect::kInputAttrName);
    if (input &&
        isa<IntegerType>(getElementTypeOrSelf(first.getArgumentTypes()[i])))
      if (int64_t bound = getIndexBound(module, input.getValue()))
        entry["bound"] = bound;
    arguments.push_back(std::move(entry));
  }
  json::Array groupEntries;
  for (GroupTable::Entry entry : groups.getEntries()) {
    json::Array members;
    llvm::DenseSet<int64_t> seen;
    SmallVector<StringRef> axes(entry.axes.begin(), entry.axes.end());
    for (int64_t device = 0; device < worldSize; ++device) {
      if (seen.contains(device))
        continue;
      SmallVector<int64_t> group = entry.mesh.getGroup(device, axes);
      seen.insert(group.begin(), group.end());
      members.push_back(toJson(group));
    }
    json::Array axisNames;
    for (const std::string &axis : entry.axes)
      axisNames.push_back(axis);
    groupEntries.push_back(json::Object{{"axes", std::move(axisNames)},
                                        {"members", std::move(members)}});
  }
  json::Object manifest{{"format", "dpc-artifact"},
                        {"version", 1},
                        {"abi", DPC_PROGRAM_ABI_VERSION},
                        {"backend", cuda ? "cuda" : "cpu"},
                        {"library", "libmodel.so"},
                        {"step", options.function},
                        {"world_size", worldSize},
                        {"groups", std::move(groupEntries)},
                        {"arguments", std::move(arguments)},
                        {"programs", std::move(programEntries)}};
  // What the step was built with, on the step or (a pipeline's) its first
  // stage's program.
  Operation *step = module.lookupSymbol(options.function);
  auto getStepAttr = [&](StringRef name) -> Attribute {
    for (Operation *holder : {step, programs.front().getOperation()})
      if (Attribute attr = holder ? holder->getAttr(name) : Attribute())
        return attr;
    return {};
  };
  // The learning rate (--lr), which dpc-run uses unless told otherwise.
  if (auto lr = dyn_cast_or_null<FloatAttr>(
          getStepAttr(DpcDialect::kDefaultLrAttrName)))
    manifest["default_lr"] = lr.getValueAsDouble();
  // Above one micro-batch, each batch input has a leading micro-batch
  // dimension; its data are that many batches, consecutive.
  if (auto count = dyn_cast_or_null<IntegerAttr>(
          getStepAttr(DpcDialect::kMicroBatchesAttrName)))
    manifest["micro_batches"] = count.getInt();
  if (mesh) {
    json::Array axes;
    for (Attribute axis : mesh.getAxisNames())
      axes.push_back(cast<StringAttr>(axis).getValue());
    manifest["mesh"] = json::Object{{"name", mesh.getSymName()},
                                    {"axes", std::move(axes)},
                                    {"shape", toJson(mesh.getShape())}};
  }
  if (auto plan = module->getAttrOfType<DictionaryAttr>("dpc.plan")) {
    json::Object planJson;
    for (NamedAttribute entry : plan)
      planJson[entry.getName().getValue()] = attributeToJson(entry.getValue());
    manifest["plan"] = std::move(planJson);
  }
  if (!options.initialValues.empty())
    manifest["initial"] = "initial.npz";
  // An emulated CUDA program runs on the host, as a CPU program does.
  if (cuda && options.emulate)
    manifest["emulated"] = true;

  // Everything is written beside `path` and renamed into place.
  SmallString<128> temp;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory((path + ".tmp").str(), temp))
    return module.emitError("cannot create a directory beside '")
           << path << "': " << ec.message();
  bool keepTemp = false;
  llvm::scope_exit removeTemp([&] {
    if (!keepTemp)
      llvm::sys::fs::remove_directories(temp);
  });
  if (!cuda) {
    FailureOr<std::vector<std::string>> features =
        getCpuFeatures(module.getLoc(), temp, options);
    if (failed(features))
      return failure();
    json::Array names;
    for (const std::string &feature : *features)
      names.push_back(feature);
    manifest["cpu"] =
        json::Object{{"arch", options.cpuArch}, {"features", std::move(names)}};
  }
  auto write = [&](StringRef name, StringRef contents) -> LogicalResult {
    SmallString<128> file(temp);
    llvm::sys::path::append(file, name);
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec);
    if (!ec) {
      out << contents;
      out.close();
      ec = out.error();
    }
    if (ec)
      return module.emitError("cannot write '")
             << file << "': " << ec.message();
    return success();
  };
  std::string manifestText;
  llvm::raw_string_ostream manifestStream(manifestText);
  manifestStream << llvm::formatv("{0:2}", json::Value(std::move(manifest)))
                 << "\n";
  if (failed(write("manifest.json", manifestText)) ||
      failed(write(cuda ? "model.cu" : "model.cpp", source)))
    return failure();
  // The parts in units of about kUnitBytes: enough work per compile to
  // outweigh parsing the prologue again.
  constexpr size_t kUnitBytes = 256 * 1024;
  SmallVector<std::string> sources = {"model.cpp"};
  std::string unit;
  for (auto [index, part] : llvm::enumerate(parts)) {
    unit += part;
    if (unit.size() < kUnitBytes && index + 1 < parts.size())
      continue;
    sources.push_back("model." + std::to_string(sources.size()) + ".cpp");
    if (failed(write(sources.back(), prologue + unit)))
      return failure();
    unit.clear();
  }
  if (!options.initialValues.empty()) {
    SmallString<128> file(temp);
    llvm::sys::path::append(file, "initial.npz");
    ::dpc::Status status =
        ::dpc::writeNpzFile(file.str().str(), options.initialValues);
    if (status.isError())
      return module.emitError(status.getMessage());
  }
  if (failed(cuda ? compileCudaLibrary(module.getLoc(), temp, options)
                  : compileCpuLibrary(module.getLoc(), temp, options, sources)))
    return failure();

  // Replace an earlier artifact, never anything else.
  if (llvm::sys::fs::exists(path)) {
    SmallString<128> oldManifest(path);
    llvm::sys::path::append(oldManifest, "manifest.json");
    if (!llvm::sys::fs::exists(oldManifest))
      return module.emitError("'")
             << path << "' exists and is not a dpc artifact; not replacing it";
    if (std::error_code ec = llvm::sys::fs::remove_directories(path))
      return module.emitError("cannot replace '")
             << path << "': " << ec.message();
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return module.emitError("cannot move the artifact to '")
           << path << "': " << ec.message();
  keepTemp = true;
  return success();
}
