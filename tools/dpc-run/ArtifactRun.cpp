//===- ArtifactRun.cpp - Training from a compiled artifact ----------------===//
//
// The launcher reads the manifest, checks what can be checked before any
// rank starts (the data, the memory the ranks need), starts the
// rendezvous on node 0 and forks this node's ranks (RankRunner.h);
// LocalRanks ends them all when one fails.
//
//===----------------------------------------------------------------------===//

#include "ArtifactRun.h"
#include "Manifest.h"
#include "RankRunner.h"
#include "TrainingData.h"

#include "dpc/Runtime/CoreBinding.h"
#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/LocalRanks.h"
#include "dpc/Runtime/Rendezvous.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

namespace {

/// This process's place in a job started by another launcher (torchrun,
/// mpirun, Slurm), if the environment says so.
struct ExternalRank {
  int rank = 0, worldSize = 1;
};

std::optional<ExternalRank> getExternalRank() {
  static const std::pair<const char *, const char *> conventions[] = {
      {"RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (auto [rankName, sizeName] : conventions) {
    const char *rankText = std::getenv(rankName);
    const char *sizeText = std::getenv(sizeName);
    if (rankText && sizeText)
      return ExternalRank{std::atoi(rankText), std::atoi(sizeText)};
  }
  return std::nullopt;
}

/// MemAvailable of /proc/meminfo, in bytes (0 when unknown).
double getAvailableMemory() {
  std::FILE *file = std::fopen("/proc/meminfo", "r");
  if (!file)
    return 0;
  char line[256];
  double bytes = 0;
  while (std::fgets(line, sizeof(line), file))
    if (std::strncmp(line, "MemAvailable:", 13) == 0)
      bytes = std::atof(line + 13) * 1024.0;
  std::fclose(file);
  return bytes;
}

Status parseAddress(const std::string &text, std::string &host, int &port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Status::error("--master-addr=" + text + " is not HOST:PORT");
  host = text.substr(0, colon);
  char *end = nullptr;
  long value = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end || value < 1 || value > 65535)
    return Status::error("--master-addr=" + text +
                         ": the port is not in [1, 65535]");
  port = int(value);
  return Status::success();
}

} // namespace

LogicalResult mlir::dpc::runArtifact(const ArtifactRunOptions &options) {
  auto fail = [](const std::string &message) {
    writeToStderr("dpc-run: error: " + message + "\n");
    return failure();
  };
  Manifest manifest;
  if (Status status = readManifest(options.artifact, manifest);
      status.isError())
    return fail(status.getMessage());
  if (options.steps < 1 || options.steps > 100000000)
    return fail("--steps must be in [1, 100000000]");
  if (!options.profileFile.empty())
    for (const ProgramSpec &program : manifest.programs)
      if (program.ops.empty())
        return fail("--profile: " + options.artifact +
                    " lists no ops to time (its programs are CUDA's, whose "
                    "kernels finish after their launch, or it was compiled "
                    "by an older dpc-opt)");

  // --scaling: the one-rank run first, on the same data and steps.
  double baselineThroughput = 0;
  if (!options.scalingBaseline.empty()) {
    Manifest baseline;
    if (Status status = readManifest(options.scalingBaseline, baseline);
        status.isError())
      return fail("--scaling: " + status.getMessage());
    if (baseline.worldSize != 1)
      return fail("--scaling: " + options.scalingBaseline + " runs on " +
                  std::to_string(baseline.worldSize) +
                  " ranks; compile the step without --mesh for one");
    llvm::SmallString<128> reportPath;
    if (std::error_code error = llvm::sys::fs::createTemporaryFile(
            "dpc-scaling", "json", reportPath))
      return fail("--scaling: " + error.message());
    ArtifactRunOptions one = options;
    one.artifact = options.scalingBaseline;
    one.procsPerNode = 1;
    one.nodes = 1;
    one.nodeRank = 0;
    one.reportJson = reportPath.str().str();
    one.outputDir = one.saveDir = one.tensorboardDir = one.traceFile =
        one.profileFile = "";
    one.scalingBaseline = "";
    one.saveEvery = 0;
    llvm::outs() << "dpc-run: --scaling: one rank first\n";
    if (failed(runArtifact(one)))
      return failure();
    auto text = llvm::MemoryBuffer::getFile(reportPath);
    llvm::Expected<json::Value> parsed =
        text ? json::parse((*text)->getBuffer())
             : llvm::Expected<json::Value>(nullptr);
    if (parsed && parsed->getAsObject())
      baselineThroughput =
          parsed->getAsObject()->getNumber("samples_per_second").value_or(0);
    else if (!parsed)
      llvm::consumeError(parsed.takeError());
    llvm::sys::fs::remove(reportPath);
  }

  // Who runs which ranks.
  int procsPerNode = options.procsPerNode, nodes = options.nodes,
      nodeRank = options.nodeRank, firstRank = 0;
  std::optional<ExternalRank> external =
      procsPerNode == 0 ? getExternalRank() : std::nullopt;
  if (external) {
    if (external->worldSize != manifest.worldSize)
      return fail("the launcher started " +
                  std::to_string(external->worldSize) +
                  " processes, the artifact's mesh has " +
                  std::to_string(manifest.worldSize) + " ranks");
    procsPerNode = 1;
    firstRank = external->rank;
  } else {
    if (procsPerNode == 0)
      procsPerNode = manifest.worldSize / std::max(nodes, 1);
    if (nodes < 1 || nodeRank < 0 || nodeRank >= nodes)
      return fail("--node-rank must be in [0, --nnodes)");
    if (procsPerNode < 1 || procsPerNode * nodes != manifest.worldSize)
      return fail("--nproc-per-node " + std::to_string(procsPerNode) + " x " +
                  "--nnodes " + std::to_string(nodes) + " is not the " +
                  std::to_string(manifest.worldSize) +
                  " ranks of the artifact's mesh");
    firstRank = nodeRank * procsPerNode;
  }

  // Bad data is reported once, before any rank starts.
  {
    DataSource probe;
    if (Status status = loadData(options, manifest, probe); status.isError())
      return fail(status.getMessage());
  }
  for (const std::string &file : {options.init, options.resumeDir})
    if (!file.empty() && !llvm::sys::fs::exists(file))
      return fail(file + ": no such file or directory");

  // A plan that cannot fit is refused before any rank starts.
  double needed = 0;
  for (int r = firstRank; r < firstRank + procsPerNode; ++r)
    needed += getTensorBytes(manifest, r);
  double available = options.memoryLimitBytes > 0 ? options.memoryLimitBytes
                                                  : getAvailableMemory();
  if (available > 0 && needed > available)
    return fail(llvm::formatv("the {0} ranks of this node need {1:f3} MiB "
                              "for their tensors (parameters, optimizer "
                              "state, batch and arena), but only {2:f3} MiB "
                              "is available; plan for more ranks or a "
                              "smaller batch",
                              procsPerNode, needed / (1 << 20),
                              available / (1 << 20))
                    .str());

  std::string masterHost = "127.0.0.1";
  int masterPort = 0;
  std::string masterText = options.masterAddress;
  if (masterText.empty() && external && std::getenv("MASTER_ADDR") &&
      std::getenv("MASTER_PORT"))
    masterText = std::string(std::getenv("MASTER_ADDR")) + ":" +
                 std::getenv("MASTER_PORT");
  if (!masterText.empty())
    if (Status status = parseAddress(masterText, masterHost, masterPort);
        status.isError())
      return fail(status.getMessage());
  bool multiProcessJob = nodes > 1 || external;
  if (multiProcessJob && masterText.empty())
    return fail("a job over several nodes or launched by torchrun, mpirun or "
                "Slurm needs the rendezvous address: --master-addr "
                "HOST:PORT, or MASTER_ADDR and MASTER_PORT");

  // The token: chosen here for a single node, shared through the
  // environment otherwise.
  std::string token;
  if (const char *given = std::getenv("DPC_JOB_TOKEN"))
    token = given;
  if (token.empty()) {
    if (multiProcessJob)
      return fail("set DPC_JOB_TOKEN to the same secret on every node: the "
                  "rendezvous refuses connections without it");
    token = ::dpc::makeJobToken();
  }

  std::unique_ptr<::dpc::TcpStoreServer> server;
  if (firstRank == 0) {
    if (Status status = ::dpc::TcpStoreServer::start(
            multiProcessJob ? "0.0.0.0" : masterHost, masterPort, token,
            server);
        status.isError())
      return fail("cannot start the rendezvous: " + status.getMessage());
    masterPort = server->getPort();
  }

  ::dpc::MeshCommunicator::Options connection;
  connection.worldSize = manifest.worldSize;
  connection.storeHost = masterHost;
  connection.storePort = masterPort;
  connection.token = token;
  connection.groups = manifest.groups;
  // Peers reach this rank on the address it binds: loopback for a job on
  // this host, else DPC_HOST_ADDR or the host's name.
  if (masterHost != "127.0.0.1" && masterHost != "localhost") {
    char name[256] = {};
    ::gethostname(name, sizeof(name) - 1);
    const char *given = std::getenv("DPC_HOST_ADDR");
    connection.hostname = given && *given ? given : name;
  }
  connection.timeout = std::chrono::milliseconds(
      int64_t(std::max(1.0, options.timeoutSeconds) * 1000));

  // Each rank forked here on its own share of the CPUs the job may use,
  // where there are enough (CoreBinding.h says why).
  std::vector<std::vector<int>> rankCpus;
  if (options.bindCores && procsPerNode > 1) {
    std::vector<int> allowed = ::dpc::getAllowedCpus();
    for (int localRank = 0; localRank < procsPerNode; ++localRank) {
      std::vector<int> share =
          ::dpc::getCpuShare(allowed, localRank, procsPerNode);
      if (share.empty()) {
        rankCpus.clear();
        break;
      }
      rankCpus.push_back(std::move(share));
    }
  }

  llvm::outs().flush();
  llvm::errs().flush();
  std::vector<std::string> reports;
  Status status = ::dpc::runLocalRanks(
      procsPerNode, std::chrono::hours(24 * 365),
      [&](int localRank, std::string &result) {
        int rank = firstRank + localRank;
        if (!rankCpus.empty())
          if (Status bound = ::dpc::bindToCpus(rankCpus[localRank]);
              bound.isError())
            writeToStderr("dpc-run: note: rank " + std::to_string(rank) +
                          " runs unbound: " + bound.getMessage() + "\n");
        ::dpc::MeshCommunicator::Options mine = connection;
        mine.rank = rank;
        RankRunner runner(options, manifest, rank, procsPerNode);
        Status runStatus = runner.run(mine, result);
        if (runStatus.isError()) {
          writeToStderr("\ndpc-run: error: " + runStatus.getMessage() + "\n");
          return false;
        }
        llvm::outs().flush();
        return true;
      },
      reports);
  if (status.isError())
    return fail(status.getMessage());
  if (reports.empty() || firstRank != 0)
    return success();
  std::string report = reports.front();
  if (baselineThroughput > 0 || !rankCpus.empty()) {
    llvm::Expected<json::Value> parsed = json::parse(report);
    if (!parsed)
      return fail("rank 0's report is broken: " +
                  llvm::toString(parsed.takeError()));
    json::Object &object = *parsed->getAsObject();
    if (!rankCpus.empty()) {
      json::Array bindings;
      for (const std::vector<int> &cpus : rankCpus)
        bindings.push_back(json::Array(cpus));
      object["local_rank_cpus"] = std::move(bindings);
    }
    if (baselineThroughput > 0) {
      double throughput = object.getNumber("samples_per_second").value_or(0);
      double efficiency =
          throughput / (manifest.worldSize * baselineThroughput);
      llvm::outs() << llvm::formatv(
          "dpc-run: scaling: {0:f1} samples/s on {1} ranks against {2:f1} on "
          "one: {3:f2}x, efficiency {4:f1}%\n",
          throughput, manifest.worldSize, baselineThroughput,
          throughput / baselineThroughput, 100 * efficiency);
      object["scaling_efficiency"] = efficiency;
      object["one_rank_samples_per_second"] = baselineThroughput;
    }
    report.clear();
    llvm::raw_string_ostream os(report);
    os << json::Value(std::move(object));
  }
  if (!options.reportJson.empty())
    if (Status written = ::dpc::writeFileAtomically(options.reportJson, report);
        written.isError())
      return fail(written.getMessage());
  return success();
}
