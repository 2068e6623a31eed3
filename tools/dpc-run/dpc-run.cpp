//===- dpc-run.cpp - The dpc runner ---------------------------------------===//
//
// `dpc-run --interpret FILE` runs one function of a program under the
// reference interpreter: its arguments come from .npy/.npz files, matched
// by the names of their dpc.* attributes (or `argN`; an imported ONNX
// model's weights are the default values of its parameters and state), and
// every result is written as DIR/<name>.npy, named by its dpc.* attribute
// (`grad:<param>` for a gradient; else `resultN`). `dpc-run --calibrate`
// measures this host and writes a cluster file (Calibrate.h).
// `dpc-run model.dpc` trains from a compiled artifact (ArtifactRun.h).
//
//===----------------------------------------------------------------------===//

#include "ArtifactFlags.h"
#include "ArtifactRun.h"
#include "Calibrate.h"

#include "dpc/Conversion/OnnxToDpc/OnnxToDpc.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/InitAllDialects.h"
#include "dpc/Interpreter/Interpreter.h"
#include "dpc/Runtime/FloatConversion.h"
#include "dpc/Runtime/MemorySize.h"
#include "dpc/Runtime/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <limits>
#include <malloc.h>
#include <optional>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::artifact;
namespace cl = llvm::cl;


static cl::opt<std::string>
    interpretFile("interpret", cl::cat(runCategory), cl::value_desc("FILE"),
                  cl::desc("Run FILE (.mlir or .onnx) under the reference "
                           "interpreter"));

static cl::OptionCategory calibrateCategory("Calibration options");

static cl::opt<std::string> calibrate(
    "calibrate", cl::cat(calibrateCategory), cl::ValueOptional,
    cl::value_desc("OUT.json"),
    cl::desc("Measure this host's GEMM, memory and collective speeds and "
             "write them as a cluster file (default: stdout)"));

static cl::opt<int> calibrateRanks(
    "calibrate-ranks", cl::cat(calibrateCategory), cl::init(2),
    cl::value_desc("N"),
    cl::desc("Ranks to calibrate with, one per core (default 2)"));

static cl::opt<bool>
    calibrateQuick("calibrate-quick", cl::cat(calibrateCategory),
                   cl::desc("Calibrate in a few seconds, on smaller messages"));

static cl::opt<int>
    calibrateFailRank("calibrate-fail-rank", cl::cat(calibrateCategory),
                      cl::Hidden, cl::init(-1), cl::value_desc("K"),
                      cl::desc("For tests: rank K fails before it connects"));

static cl::opt<int>
    calibrateHangRank("calibrate-hang-rank", cl::cat(calibrateCategory),
                      cl::Hidden, cl::init(-1), cl::value_desc("K"),
                      cl::desc("For tests: rank K never returns"));

static cl::opt<int> calibrateDeadline(
    "calibrate-deadline", cl::cat(calibrateCategory), cl::init(0),
    cl::value_desc("SECONDS"),
    cl::desc("Stop every rank after this long (default 60 s with "
             "--calibrate-quick, else 120 s)"));

static cl::OptionCategory importCategory("ONNX import options");

static cl::list<std::string> inputShapes(
    "input-shape", cl::cat(importCategory), cl::value_desc("NAME=DIMS"),
    cl::desc("Shape of an ONNX graph input: NAME=2x3x32x32 (repeatable)"));

static cl::list<std::string>
    dimSizes("dim", cl::cat(importCategory), cl::value_desc("NAME=N"),
             cl::desc("Size of a symbolic ONNX dimension: NAME=N "
                      "(repeatable)"));

static cl::list<std::string>
    inputs("input", cl::cat(runCategory), cl::value_desc("NAME=FILE.npy"),
           cl::desc("The value of the argument NAME (repeatable)"));

static cl::list<std::string>
    inputArchives("inputs-npz", cl::cat(runCategory),
                  cl::value_desc("FILE.npz"),
                  cl::desc("Argument values, one entry per argument name "
                           "(repeatable)"));

static cl::opt<Precision> precision(
    "precision", cl::cat(runCategory), cl::init(Precision::F32),
    cl::desc("Float arithmetic of the interpreter"),
    cl::values(clEnumValN(Precision::F32, "fp32",
                          "each float type computes as itself (default)"),
               clEnumValN(Precision::F64, "fp64",
                          "every float computes in double; float results "
                          "are written as float64")));

static cl::opt<std::string>
    functionName("function", cl::cat(runCategory), cl::value_desc("NAME"),
                 cl::desc("The function to run (default: @main, or the "
                          "only function)"));

static cl::opt<bool> printResults("print", cl::cat(runCategory),
                                  cl::desc("Print every result to stdout"));

/// Reports a one-line error.
static void reportError(const Twine &message) {
  llvm::errs() << "dpc-run: error: " << message << "\n";
}

/// Reports a one-line error and returns failure.
static LogicalResult fail(const Twine &message) {
  reportError(message);
  return failure();
}

//===----------------------------------------------------------------------===//
// Loading programs
//===----------------------------------------------------------------------===//

namespace {

/// A program to run, and the values its arguments take when the command
/// line gives none (for an imported model, its weights).
struct Program {
  OwningOpRef<ModuleOp> module;
  std::vector<::dpc::NamedTensor> defaultArguments;
};

} // namespace

/// Reads the program at `path`: MLIR as text or bytecode, or an ONNX model
/// through the importer.
static FailureOr<Program> loadProgram(StringRef path, MLIRContext &context,
                                      llvm::SourceMgr &sourceMgr) {
  if (path.ends_with(".onnx")) {
    std::string error;
    FailureOr<OnnxImportOptions> options =
        parseImportFlags(inputShapes, dimSizes, error);
    if (failed(options)) {
      reportError(error);
      return failure();
    }
    ImportDiagnosticHandler handler(&context, llvm::errs());
    FailureOr<OnnxImportResult> imported =
        importOnnxFile(&context, path, *options);
    if (failed(imported))
      return failure(); // the importer has reported why
    Program program;
    program.module = std::move(imported->module);
    program.defaultArguments = std::move(imported->initialValues);
    return program;
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer) {
    reportError(path + ": " + error);
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  Program program;
  program.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!program.module)
    return failure(); // the parser has reported why
  return program;
}

/// The function to run: --function, else @main, else the only one.
static FailureOr<func::FuncOp> selectFunction(ModuleOp module) {
  if (!functionName.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func) {
      reportError("no function named '" + functionName + "' in " +
                  interpretFile);
      return failure();
    }
    return func;
  }
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() == 1)
    return funcs.front();
  std::string names;
  for (func::FuncOp func : funcs)
    names += (names.empty() ? "@" : ", @") + func.getSymName().str();
  reportError(interpretFile + (funcs.empty()
                                   ? std::string(" has no function")
                                   : " has several functions (" + names +
                                         "); choose one with --function"));
  return failure();
}

//===----------------------------------------------------------------------===//
// Arguments and results
//===----------------------------------------------------------------------===//

namespace {

/// A tensor given on the command line, and where it came from.
struct GivenInput {
  ::dpc::HostTensor tensor;
  std::string source;
  bool used = false;
};

} // namespace

/// Reads every --input and --inputs-npz into `given`, by name.
static LogicalResult readInputs(llvm::StringMap<GivenInput> &given) {
  auto add = [&](const std::string &name, ::dpc::HostTensor tensor,
                 std::string source) -> LogicalResult {
    auto [it, inserted] =
        given.try_emplace(name, GivenInput{std::move(tensor), source});
    if (!inserted)
      return fail("input '" + name + "' is given twice (" + it->second.source +
                  " and " + source + ")");
    return success();
  };
  for (const std::string &archive : inputArchives) {
    std::vector<::dpc::NamedTensor> tensors;
    if (::dpc::Status status = ::dpc::readNpzFile(archive, tensors);
        status.isError())
      return fail(status.getMessage());
    for (::dpc::NamedTensor &tensor : tensors)
      if (failed(add(tensor.name, std::move(tensor.tensor),
                     archive + "[" + tensor.name + "]")))
        return failure();
  }
  for (StringRef entry : inputs) {
    auto [name, path] = entry.split('=');
    if (name.empty() || path.empty())
      return fail("--input " + entry + " is not NAME=FILE.npy");
    ::dpc::HostTensor tensor;
    if (::dpc::Status status = ::dpc::readNpyFile(path.str(), tensor);
        status.isError())
      return fail(status.getMessage());
    if (failed(add(name.str(), std::move(tensor), path.str())))
      return failure();
  }
  return success();
}

/// The name of argument `index`: its dpc.* name, or argN.
static std::string getArgumentKey(func::FuncOp func, unsigned index) {
  StringRef name = getArgumentName(func, index);
  return name.empty() ? "arg" + std::to_string(index) : name.str();
}

/// The name of result `index` (getResultName), or resultN.
static std::string getResultKey(func::FuncOp func, unsigned index) {
  std::string name = getResultName(func, index);
  return name.empty() ? "result" + std::to_string(index) : name;
}

/// Widens a float32 file to a bf16 argument: NumPy has no bfloat16.
static void roundToBFloat16(::dpc::HostTensor &tensor) {
  ::dpc::HostTensor rounded(DType::BF16, tensor.shape);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    rounded.getData<uint16_t>()[i] =
        ::dpc::convertToBFloat16(tensor.getData<float>()[i]);
  tensor = std::move(rounded);
}

/// Matches the given inputs (then the program's defaults) to the
/// arguments of `func`, checking each against the argument's type.
static FailureOr<std::vector<::dpc::HostTensor>>
bindArguments(func::FuncOp func, llvm::StringMap<GivenInput> &given,
              std::vector<::dpc::NamedTensor> &defaults) {
  llvm::StringMap<unsigned> byName;
  std::vector<::dpc::HostTensor> arguments;
  bool ok = true;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    std::string name = getArgumentKey(func, i);
    // A partitioned step takes whole values, cut into blocks for the ranks.
    Type type = getGlobalArgumentType(func, i);
    std::string typeText;
    llvm::raw_string_ostream(typeText) << type;
    auto [it, inserted] = byName.try_emplace(name, i);
    if (!inserted) {
      reportError("arguments #" + std::to_string(it->second) + " and #" +
                  std::to_string(i) + " are both named '" + name + "'");
      ok = false;
      continue;
    }
    ::dpc::HostTensor tensor;
    std::string source;
    if (auto found = given.find(name); found != given.end()) {
      found->second.used = true;
      tensor = found->second.tensor;
      source = found->second.source;
    } else if (auto fallback = llvm::find_if(
                   defaults, [&](auto &d) { return d.name == name; });
               fallback != defaults.end()) {
      tensor = fallback->tensor;
      source = "the model's initial value";
    } else {
      reportError("missing input '" + name + "' (" + typeText +
                  "); pass --input " + name + "=FILE.npy");
      ok = false;
      continue;
    }
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (tensorType && tensorType.getElementType().isBF16() &&
        tensor.dtype == DType::F32 && precision == Precision::F32)
      roundToBFloat16(tensor);
    if (std::optional<std::string> mismatch =
            getArgumentMismatch(type, tensor, precision)) {
      reportError("input '" + name + "': " + *mismatch + " (from " + source +
                  ")");
      ok = false;
      continue;
    }
    arguments.push_back(std::move(tensor));
  }
  for (auto &entry : given) {
    if (entry.second.used)
      continue;
    std::string names;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      names += (i ? ", " : "") + getArgumentKey(func, i);
    reportError("unknown input '" + entry.first() + "' (from " +
                entry.second.source + "): @" + func.getSymName().str() +
                " takes " + (names.empty() ? "no arguments" : names));
    ok = false;
  }
  if (!ok)
    return failure();
  return arguments;
}

/// Prints `tensor` as `name: dtype[shape] = [v0, v1, ...]`.
static void printTensor(StringRef name, const ::dpc::HostTensor &tensor) {
  llvm::outs() << name << ": " << ::dpc::getDTypeName(tensor.dtype) << "[";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    llvm::outs() << (i ? "x" : "") << tensor.shape[i];
  llvm::outs() << "] = [";
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    if (i)
      llvm::outs() << ", ";
    char text[32];
    switch (tensor.dtype) {
    case DType::F32:
      std::snprintf(text, sizeof(text), "%.9g", tensor.getData<float>()[i]);
      break;
    case DType::F64:
      std::snprintf(text, sizeof(text), "%.17g", tensor.getData<double>()[i]);
      break;
    case DType::I64:
      std::snprintf(text, sizeof(text), "%lld",
                    static_cast<long long>(tensor.getData<int64_t>()[i]));
      break;
    case DType::I32:
      std::snprintf(text, sizeof(text), "%d", tensor.getData<int32_t>()[i]);
      break;
    case DType::F16:
      std::snprintf(text, sizeof(text), "%.9g",
                    ::dpc::convertFromHalf(tensor.getData<uint16_t>()[i]));
      break;
    case DType::BF16:
      std::snprintf(text, sizeof(text), "%.9g",
                    ::dpc::convertFromBFloat16(tensor.getData<uint16_t>()[i]));
      break;
    case DType::Bool:
      std::snprintf(text, sizeof(text), "%s",
                    tensor.getData<uint8_t>()[i] ? "true" : "false");
      break;
    default:
      std::snprintf(text, sizeof(text), "?");
      break;
    }
    llvm::outs() << text;
  }
  llvm::outs() << "]\n";
}

/// A bf16 tensor widened, exactly, to float32: NumPy has no bfloat16.
static ::dpc::HostTensor widenToFloat32(const ::dpc::HostTensor &tensor) {
  ::dpc::HostTensor wide(DType::F32, tensor.shape);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    wide.getData<float>()[i] =
        ::dpc::convertFromBFloat16(tensor.getData<uint16_t>()[i]);
  return wide;
}

static LogicalResult emitNamedResults(std::vector<std::string> names,
                                      std::vector<::dpc::HostTensor> &results);

/// Writes (and prints) the results of `func`, named by their attributes.
static LogicalResult emitResults(func::FuncOp func,
                                 std::vector<::dpc::HostTensor> &results) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < results.size(); ++i)
    names.push_back(getResultKey(func, i));
  return emitNamedResults(std::move(names), results);
}

/// Writes (and prints) `results` as `names`.
static LogicalResult emitNamedResults(std::vector<std::string> names,
                                      std::vector<::dpc::HostTensor> &results) {
  llvm::StringMap<unsigned> seen;
  for (unsigned i = 0; i < results.size(); ++i) {
    auto [it, inserted] = seen.try_emplace(names[i], i);
    if (!inserted)
      return fail("results #" + std::to_string(it->second) + " and #" +
                  std::to_string(i) + " are both named '" + names.back() + "'");
  }
  if (printResults)
    for (unsigned i = 0; i < results.size(); ++i)
      printTensor(names[i], results[i]);
  if (outputDir.empty())
    return success();
  if (std::error_code error = llvm::sys::fs::create_directories(outputDir))
    return fail(outputDir +
                ": cannot create the directory: " + error.message());
  for (unsigned i = 0; i < results.size(); ++i) {
    llvm::SmallString<128> path(outputDir);
    llvm::sys::path::append(path, ::dpc::getNpyFileName(names[i]));
    const ::dpc::HostTensor &tensor = results[i];
    if (::dpc::Status status = ::dpc::writeNpyFile(
            path.str().str(),
            tensor.dtype == DType::BF16 ? widenToFloat32(tensor) : tensor);
        status.isError())
      return fail(status.getMessage());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// The largest block glibc's malloc takes from its heap rather than from
/// mmap (HEAP_MAX_SIZE / 2 on 64-bit): larger blocks are mapped anew.
static constexpr int kLargestPooledBlock = 32 << 20;

static LogicalResult runInterpreter() {
  if (outputDir.empty() && !printResults)
    return fail("nothing to do with the results: pass --output-dir DIR "
                "(or --print)");
  // Every op makes its results in new tensors, as large as a model's
  // parameters: freed memory is kept for the next one rather than handed
  // back to the kernel and faulted in again page by page.
  ::mallopt(M_MMAP_THRESHOLD, kLargestPooledBlock);
  ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  // A runtime error names the op and its location; the op's generic form
  // would only repeat the source line.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  FailureOr<Program> program = loadProgram(interpretFile, context, sourceMgr);
  if (failed(program))
    return failure();
  // An op imported from ONNX fails naming the node it came from.
  std::optional<ImportDiagnosticHandler> nodeDiagnostics;
  if (StringRef(interpretFile).ends_with(".onnx"))
    nodeDiagnostics.emplace(&context, llvm::errs(), /*nameNodes=*/true);
  // A pipelined step is a program per stage: @<name>.stage<s>.
  SmallVector<func::FuncOp> stages =
      functionName.empty() ? SmallVector<func::FuncOp>()
                           : getPipelineStages(*program->module, functionName);
  if (!stages.empty() && program->module->lookupSymbol(functionName))
    stages.clear();
  FailureOr<func::FuncOp> func =
      stages.empty() ? selectFunction(*program->module) : stages.front();
  if (failed(func))
    return failure();

  llvm::StringMap<GivenInput> given;
  if (failed(readInputs(given)))
    return failure();
  FailureOr<std::vector<::dpc::HostTensor>> arguments =
      bindArguments(*func, given, program->defaultArguments);
  if (failed(arguments))
    return failure();
  // Inputs can be large; they are no longer needed once bound.
  given.clear();

  InterpreterOptions options;
  options.precision = precision;
  if (!stages.empty()) {
    FailureOr<std::vector<NamedResult>> named =
        interpretPipeline(stages, *arguments, options);
    if (failed(named))
      return failure();
    std::vector<std::string> names;
    std::vector<::dpc::HostTensor> values;
    for (NamedResult &result : *named) {
      names.push_back(result.name);
      values.push_back(std::move(result.value));
    }
    return emitNamedResults(std::move(names), values);
  }
  FailureOr<std::vector<::dpc::HostTensor>> results =
      isPartitioned(*func) ? interpretPartitioned(*func, *arguments, options)
                           : interpret(*func, *arguments, options);
  if (failed(results))
    return failure(); // the interpreter has reported why, on the op
  return emitResults(*func, *results);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions({&runCategory, &calibrateCategory, &trainCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dpc-run: runs dpc programs\n\n"
      "  dpc-run model.dpc [--nproc-per-node N] [--steps K] [--data FILE.npz]\n"
      "  dpc-run --interpret FILE.mlir --input NAME=FILE.npy ... "
      "--output-dir DIR\n"
      "  dpc-run --calibrate[=OUT.json] [--calibrate-ranks=N] "
      "[--calibrate-quick]\n");
  if (calibrate.getNumOccurrences()) {
    if (!interpretFile.empty() || !artifactPath.empty()) {
      reportError("--calibrate runs alone (write the file name as "
                  "--calibrate=OUT.json)");
      return 1;
    }
    CalibrationOptions options;
    options.outputPath = calibrate;
    options.ranks = calibrateRanks;
    options.quick = calibrateQuick;
    options.failRank = calibrateFailRank;
    options.hangRank = calibrateHangRank;
    options.deadlineSeconds = calibrateDeadline;
    return failed(runCalibration(options)) ? 1 : 0;
  }
  if (!artifactPath.empty() && !interpretFile.empty()) {
    reportError("give an artifact or --interpret FILE, not both");
    return 1;
  }
  if (!artifactPath.empty())
    return runArtifactFromFlags();
  if (interpretFile.empty()) {
    reportError("nothing to run: pass an artifact (model.dpc) or "
                "--interpret FILE.mlir");
    return 1;
  }
  return failed(runInterpreter()) ? 1 : 0;
}
