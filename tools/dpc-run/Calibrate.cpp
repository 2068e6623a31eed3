//===- Calibrate.cpp - dpc-run --calibrate: measure this host -------------===//
//
// Forks the ranks, has every rank run each probe at the same time (as the
// ranks of a training job would: cores share caches, memory bandwidth and
// the loopback stack), and turns what they measured into a Cluster:
//
//   peak f32/f64      best single-thread OpenBLAS GEMM, slowest rank
//   memory bandwidth  best STREAM triad, slowest rank
//   intra-node link   alpha-beta fit of Gloo's ring all-reduce
//   inter-node link   the cpu-host preset's (one host has no second node)
//   overlap           bulk all-reduces on a communication thread beside
//                     GEMMs on the main one, against each alone
//   rank skew         the same GEMMs on every rank between barriers: the
//                     slowest rank's lag over their mean
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "HostBenchmarks.h"

#include "dpc/Analysis/CostModel/Cluster.h"
#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/GlooCommunicator.h"
#include "dpc/Runtime/LocalRanks.h"
#include "dpc/Runtime/SchedulerSlice.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dpc;

/// How long a rank waits for its peers (connecting, each barrier and
/// collective) before it gives up: far longer than any step takes.
static constexpr std::chrono::seconds kCommunicatorTimeout(30);

static void reportError(const Twine &message) {
  llvm::errs() << "dpc-run: calibration: " << message << "\n";
}

static LogicalResult fail(const Twine &message) {
  reportError(message);
  return failure();
}

//===----------------------------------------------------------------------===//
// What to measure
//===----------------------------------------------------------------------===//

namespace {
/// The probes' sizes and time budgets.
struct Plan {
  SmallVector<int64_t, 4> gemmSizes;
  double gemmSecondsPerSize;
  /// The GEMMs of a training step (tall, transposed in the backward),
  /// whose median rate over the peak is the compute efficiency.
  SmallVector<GemmShape> trainingGemms;
  double trainingGemmSeconds;
  size_t triadBytesPerArray;
  double triadSeconds;
  SmallVector<size_t> allReduceBytes;
  /// Untimed all-reduces before the sweep.
  int communicatorWarmups;
  /// Untimed and timed all-reduces of each size.
  int warmups;
  int iterations;
  /// The overlap probe: all-reduces of `overlapBytes`, `overlapAllReduces`
  /// of them a run, beside GEMMs of `overlapGemm`; the median of
  /// `overlapTrials` runs.
  size_t overlapBytes;
  int overlapAllReduces;
  GemmShape overlapGemm;
  int overlapTrials;
  /// The skew probe: `skewStretches` stretches of about `skewSeconds` of
  /// GEMMs, each started from a barrier.
  int skewStretches;
  double skewSeconds;
  /// When the parent stops waiting for the ranks.
  std::chrono::seconds deadline;
};
} // namespace

static Plan getPlan(bool quick) {
  Plan plan;
  // OpenBLAS reaches its single-core peak by n = 512-1024; larger sizes only
  // take longer.
  plan.gemmSizes = quick ? SmallVector<int64_t, 4>{128, 256, 512}
                         : SmallVector<int64_t, 4>{256, 512, 1024};
  plan.gemmSecondsPerSize = quick ? 0.1 : 0.8;
  plan.trainingGemms = getTrainingGemmShapes(quick ? 512 : 2048);
  plan.trainingGemmSeconds = quick ? 0.03 : 0.2;
  // 3 x 64 MiB is several times any L3 of this class of machine (32 MiB).
  plan.triadBytesPerArray = 64 << 20;
  plan.triadSeconds = quick ? 0.3 : 2.0;
  // Powers of two from one float up: small messages pin the latency, large
  // ones the bandwidth.
  size_t largest = quick ? 1 << 20 : 16 << 20;
  for (size_t bytes = 4; bytes <= largest; bytes *= 2)
    plan.allReduceBytes.push_back(bytes);
  plan.communicatorWarmups = quick ? 50 : 200;
  plan.warmups = quick ? 2 : 3;
  plan.iterations = quick ? 10 : 25;
  // Gradient buckets are megabytes: bandwidth-bound all-reduces, as long as
  // the GEMMs beside them (a tall forward GEMM of a layer, ~2 ms on a core).
  plan.overlapBytes = 4 << 20;
  plan.overlapAllReduces = quick ? 16 : 48;
  plan.overlapGemm = getTrainingGemmShapes(512).front();
  plan.overlapTrials = quick ? 3 : 5;
  // A layer's compute between two collectives of a step: milliseconds.
  plan.skewStretches = quick ? 12 : 40;
  plan.skewSeconds = 0.01;
  // Well past a normal run (about 2 s quick, 12 s otherwise) and past the
  // ranks' own communicator timeout.
  plan.deadline = std::chrono::seconds(quick ? 60 : 120);
  return plan;
}

//===----------------------------------------------------------------------===//
// One rank
//===----------------------------------------------------------------------===//

namespace {
/// What one rank measured.
struct RankMeasurements {
  double gemmF32 = 0.0;
  /// The median f32 rate of a training step's GEMMs.
  double gemmF32Training = 0.0;
  double gemmF64 = 0.0;
  double triad = 0.0;
  /// The part of the all-reduces' time that ran hidden behind the GEMMs.
  double overlap = 0.0;
  /// Seconds of each timed all-reduce: size-major, then iteration.
  std::vector<double> allReduceSeconds;
  /// Seconds of each stretch of the skew probe.
  std::vector<double> stretchSeconds;
};
} // namespace

/// The measurements as raw doubles, for the pipe to the parent.
static std::string encode(const RankMeasurements &m) {
  std::vector<double> values = {m.gemmF32, m.gemmF64, m.triad,
                                m.gemmF32Training, m.overlap};
  values.insert(values.end(), m.allReduceSeconds.begin(),
                m.allReduceSeconds.end());
  values.insert(values.end(), m.stretchSeconds.begin(), m.stretchSeconds.end());
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(double));
}

static bool decode(const std::string &bytes, const Plan &plan,
                   RankMeasurements &m) {
  size_t allReduces = plan.allReduceBytes.size() * plan.iterations;
  size_t timings = allReduces + plan.skewStretches;
  constexpr size_t kFigures = 5;
  if (bytes.size() != (kFigures + timings) * sizeof(double))
    return false;
  std::vector<double> values(kFigures + timings);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  m.gemmF32 = values[0];
  m.gemmF64 = values[1];
  m.triad = values[2];
  m.gemmF32Training = values[3];
  m.overlap = values[4];
  m.allReduceSeconds.assign(values.begin() + kFigures,
                            values.begin() + kFigures + allReduces);
  m.stretchSeconds.assign(values.begin() + kFigures + allReduces, values.end());
  return true;
}

/// How much of a collective's time hides behind compute on this host.
/// dpc-run's ranks run their collectives on communication threads beside
/// the compute thread; where a rank has one core, the collectives' copies,
/// reductions and socket work take it from the compute. Each trial times
/// bulk all-reduces alone, GEMMs of about as long alone, and both at once
/// (the all-reduces on a thread with the communication threads' scheduler
/// slice); the overlap is what running them together saved, over the
/// shorter of the two: 1 when it hid entirely, 0 when the two took as long
/// as one after the other. Every rank runs the same collectives; returns
/// the median over trials, or nothing when a collective failed.
static std::optional<double> measureOverlap(::dpc::GlooCommunicator &comm,
                                            const Plan &plan,
                                            std::string &error) {
  std::vector<float> data(plan.overlapBytes / sizeof(float), 1.0f);
  auto allReduces = [&] {
    ::dpc::Status status = ::dpc::Status::success();
    for (int i = 0; i < plan.overlapAllReduces && status.isSuccess(); ++i)
      status = comm.allReduceSum(data.data(), data.size());
    return status;
  };
  GemmRunner gemm(plan.overlapGemm);
  gemm.run();
  double gemmSeconds = gemm.time(1);

  std::vector<double> overlaps;
  for (int trial = 0; trial < plan.overlapTrials; ++trial) {
    ::dpc::Status status = comm.barrier();
    double begin = getMonotonicSeconds();
    if (status.isSuccess())
      status = allReduces();
    double communication = getMonotonicSeconds() - begin;
    if (status.isError()) {
      error = "all-reduce beside compute: " + status.getMessage();
      return std::nullopt;
    }
    int64_t gemms = std::max<int64_t>(
        1, static_cast<int64_t>(std::lround(communication / gemmSeconds)));
    double compute = gemm.time(gemms);

    if (::dpc::Status barrier = comm.barrier(); barrier.isError()) {
      error = "barrier: " + barrier.getMessage();
      return std::nullopt;
    }
    begin = getMonotonicSeconds();
    double communicationEnd = begin;
    std::thread communicator([&] {
      ::dpc::setSchedulerSlice(::dpc::kCommunicationSliceNs);
      status = allReduces();
      communicationEnd = getMonotonicSeconds();
    });
    for (int64_t i = 0; i < gemms; ++i)
      gemm.run();
    double computeEnd = getMonotonicSeconds();
    communicator.join();
    if (status.isError()) {
      error = "all-reduce beside compute: " + status.getMessage();
      return std::nullopt;
    }
    double both = std::max(computeEnd, communicationEnd) - begin;
    double saved = communication + compute - both;
    overlaps.push_back(
        std::clamp(saved / std::min(communication, compute), 0.0, 1.0));
  }
  return median(std::move(overlaps));
}

/// The body of rank `rank`: connect, run every probe in step with the other
/// ranks, and put the encoded measurements in `result`.
static bool measureRank(int rank, const CalibrationOptions &options,
                        const Plan &plan, const std::string &storeDir,
                        std::string &result) {
  auto failRank = [&](const Twine &what) {
    llvm::errs() << "dpc-run: calibration: rank " << rank << ": " << what
                 << "\n";
    return false;
  };
  if (rank == options.failRank)
    return failRank("failing on purpose (--calibrate-fail-rank)");
  if (rank == options.hangRank)
    for (;;)
      ::pause();
  std::unique_ptr<::dpc::GlooCommunicator> comm;
  // Gloo's event loop thread, which receives every message, inherits the
  // slice dpc-run gives it.
  bool shortSlice = ::dpc::setSchedulerSlice(::dpc::kCommunicationSliceNs);
  ::dpc::Status status = ::dpc::GlooCommunicator::connect(
      rank, options.ranks, storeDir, "127.0.0.1", kCommunicatorTimeout, comm);
  if (shortSlice)
    ::dpc::setSchedulerSlice(0);
  if (status.isError())
    return failRank("cannot connect over Gloo: " + status.getMessage());
  auto barrier = [&] {
    ::dpc::Status status = comm->barrier();
    return status.isSuccess() || failRank("barrier: " + status.getMessage());
  };

  RankMeasurements m;
  if (!barrier())
    return false;
  m.gemmF32 =
      measureGemmFlops(GemmType::F32, plan.gemmSizes, plan.gemmSecondsPerSize);
  if (!barrier())
    return false;
  m.gemmF64 =
      measureGemmFlops(GemmType::F64, plan.gemmSizes, plan.gemmSecondsPerSize);
  if (!barrier())
    return false;
  m.gemmF32Training =
      measureMedianGemmFlops(plan.trainingGemms, plan.trainingGemmSeconds);
  if (!barrier())
    return false;
  m.triad = measureTriadBandwidth(plan.triadBytesPerArray, plan.triadSeconds);

  // The first hundred or so collectives after a quiet spell run slower (in
  // a VM, idle vCPUs take long to wake): warm up to the steady state a
  // communicating job sees. A count, not a time, so that every rank runs
  // the same collectives.
  std::vector<float> warmup(1024, 0.0f);
  for (int i = 0; i < plan.communicatorWarmups; ++i)
    if (::dpc::Status status = comm->allReduceSum(warmup.data(), warmup.size());
        status.isError())
      return failRank("all-reduce: " + status.getMessage());

  for (size_t bytes : plan.allReduceBytes) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    for (int i = 0; i < plan.warmups + plan.iterations; ++i) {
      // Start together, so that a rank's time is the collective's, not the
      // wait for a late peer; what skew remains is real in training too.
      if (!barrier())
        return false;
      double begin = getMonotonicSeconds();
      if (::dpc::Status status = comm->allReduceSum(data.data(), data.size());
          status.isError())
        return failRank("all-reduce of " + Twine(bytes) +
                        " bytes: " + status.getMessage());
      double seconds = getMonotonicSeconds() - begin;
      // A wrong sum would make every timing meaningless.
      if (i == 0 &&
          (data.front() != options.ranks || data.back() != options.ranks))
        return failRank("all-reduce of " + Twine(bytes) + " bytes summed " +
                        Twine(options.ranks) + " ones to " +
                        std::to_string(data.front()));
      if (i >= plan.warmups)
        m.allReduceSeconds.push_back(seconds);
    }
  }
  std::string error;
  std::optional<double> overlap = measureOverlap(*comm, plan, error);
  if (!overlap)
    return failRank(error);
  m.overlap = *overlap;

  // Every rank the same work: the mean over ranks of the GEMMs each
  // would run in a stretch.
  GemmRunner gemm(plan.overlapGemm);
  gemm.run();
  float gemms = static_cast<float>(plan.skewSeconds / gemm.time(1));
  if (::dpc::Status status = comm->allReduceSum(&gemms, 1); status.isError())
    return failRank("all-reduce: " + status.getMessage());
  int64_t count = std::max<int64_t>(1, std::lround(gemms / options.ranks));
  for (int stretch = 0; stretch < plan.skewStretches; ++stretch) {
    if (!barrier())
      return false;
    m.stretchSeconds.push_back(gemm.time(count));
  }
  result = encode(m);
  return true;
}

//===----------------------------------------------------------------------===//
// From timings to a cluster
//===----------------------------------------------------------------------===//

/// For each message size, the median over iterations of the slowest rank's
/// time: a collective is done when its last rank is.
static std::vector<double> getAllReduceTimes(ArrayRef<RankMeasurements> ranks,
                                             const Plan &plan) {
  std::vector<double> times;
  for (size_t s = 0; s < plan.allReduceBytes.size(); ++s) {
    std::vector<double> slowest(plan.iterations, 0.0);
    for (const RankMeasurements &rank : ranks)
      for (int i = 0; i < plan.iterations; ++i)
        slowest[i] = std::max(slowest[i],
                              rank.allReduceSeconds[s * plan.iterations + i]);
    times.push_back(median(std::move(slowest)));
  }
  return times;
}

namespace {
/// The ring all-reduce model t = 2(n-1) alpha + 2(n-1)/n S beta, the one
/// CommunicationCost.cpp prices all-reduces with.
struct RingFit {
  double alpha = 0.0;
  double beta = 0.0;
  /// Root mean square of (model - measured) / measured over the sizes.
  double rmsRelativeError = 0.0;
};
} // namespace

/// Least squares on relative error (weights 1/t^2): plain least squares
/// would fit the large messages and leave the latency to noise, while every
/// size here should be predicted to within the same fraction.
static FailureOr<RingFit> fitRing(ArrayRef<size_t> bytes,
                                  ArrayRef<double> seconds, int ranks,
                                  std::string &error) {
  double n = ranks;
  double a = 2 * (n - 1);
  double saa = 0, sab = 0, sbb = 0, sat = 0, sbt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    double b = 2 * (n - 1) / n * static_cast<double>(bytes[i]);
    double w = 1 / (seconds[i] * seconds[i]);
    saa += w * a * a;
    sab += w * a * b;
    sbb += w * b * b;
    sat += w * a * seconds[i];
    sbt += w * b * seconds[i];
  }
  RingFit fit;
  double det = saa * sbb - sab * sab;
  fit.alpha = (sat * sbb - sbt * sab) / det;
  fit.beta = (saa * sbt - sab * sat) / det;
  // A negative latency fits noise; refit the bandwidth alone.
  if (!(fit.alpha >= 0)) {
    fit.alpha = 0;
    fit.beta = sbt / sbb;
  }
  if (!(fit.beta > 0) || !std::isfinite(fit.beta)) {
    error = "all-reduce times do not grow with the message size; no "
            "bandwidth to fit";
    return failure();
  }
  double sumSquares = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    double model = a * fit.alpha +
                   2 * (n - 1) / n * static_cast<double>(bytes[i]) * fit.beta;
    double relative = (model - seconds[i]) / seconds[i];
    sumSquares += relative * relative;
  }
  fit.rmsRelativeError = std::sqrt(sumSquares / bytes.size());
  return fit;
}

/// `value` to three significant digits: the runs vary by more than 1%, so
/// further digits would be noise.
static double roundToSignificant(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return std::strtod(text, nullptr);
}

static double getPhysicalMemory() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

/// The mean over stretches of the slowest rank's lag over the ranks' mean
/// time, as a fraction of that mean.
static double getRankSkew(ArrayRef<RankMeasurements> ranks) {
  size_t stretches = ranks.front().stretchSeconds.size();
  if (stretches == 0)
    return 0.0;
  double sum = 0.0;
  for (size_t s = 0; s < stretches; ++s) {
    double slowest = 0.0, total = 0.0;
    for (const RankMeasurements &rank : ranks) {
      slowest = std::max(slowest, rank.stretchSeconds[s]);
      total += rank.stretchSeconds[s];
    }
    double mean = total / ranks.size();
    if (mean > 0)
      sum += slowest / mean - 1.0;
  }
  return sum / stretches;
}

static Cluster buildCluster(ArrayRef<RankMeasurements> ranks,
                            const RingFit &fit) {
  // The slowest rank bounds every synchronous step.
  auto slowest = [&](double RankMeasurements::*field) {
    double value = ranks.front().*field;
    for (const RankMeasurements &rank : ranks)
      value = std::min(value, rank.*field);
    return roundToSignificant(value);
  };
  Cluster c;
  c.name = "cpu-host-calibrated";
  c.devicesPerNode = ranks.size();
  DeviceSpec &device = c.device;
  device.peakFlops[static_cast<unsigned>(NumericType::F64)] =
      slowest(&RankMeasurements::gemmF64);
  device.peakFlops[static_cast<unsigned>(NumericType::F32)] =
      slowest(&RankMeasurements::gemmF32);
  // The CPU has no bf16/f16 arithmetic: kernels convert to f32 and multiply
  // there, at the f32 rate.
  device.peakFlops[static_cast<unsigned>(NumericType::BF16)] =
      device.peakFlops[static_cast<unsigned>(NumericType::F32)];
  device.peakFlops[static_cast<unsigned>(NumericType::F16)] =
      device.peakFlops[static_cast<unsigned>(NumericType::F32)];
  // The ranks share the host's memory (cgroup limits are not consulted).
  device.memoryCapacity =
      roundToSignificant(getPhysicalMemory() / c.devicesPerNode);
  device.memoryBandwidth = slowest(&RankMeasurements::triad);
  // beta includes Gloo's reduction arithmetic: it is the all-reduce's
  // achieved bandwidth, which is what the cost model prices.
  c.intraNode = {roundToSignificant(1 / fit.beta),
                 roundToSignificant(fit.alpha)};
  // One host has no second node to measure against.
  c.interNode = getClusterPreset("cpu-host")->interNode;
  // The peaks above are the best a kernel reached (the best square GEMM,
  // the best triad, the collective's own bandwidth). A training step's
  // GEMMs are tall and read transposed operands in the backward pass:
  // their median rate over the peak is what the step's arithmetic gets.
  c.efficiency = {1.0, 1.0, 1.0};
  double peak = device.getPeakFlops(NumericType::F32);
  if (peak > 0)
    c.efficiency.compute = std::min(
        1.0,
        roundToSignificant(slowest(&RankMeasurements::gemmF32Training) / peak));
  // The rank that hid least: a synchronous step waits for it.
  c.efficiency.overlap = slowest(&RankMeasurements::overlap);
  c.rankSkew = std::min(1.0, roundToSignificant(getRankSkew(ranks)));
  return c;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// Fails now, before the measurements, when `path` cannot be written: a
/// file beside it (where the final write makes its temporary) must be
/// creatable.
static LogicalResult checkWritable(StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return fail("cannot write '" + path + "': it is a directory");
  int fd;
  SmallString<128> probe;
  if (std::error_code error =
          llvm::sys::fs::createUniqueFile(path + ".probe-%%%%%%", fd, probe))
    return fail("cannot write '" + path + "': " + error.message());
  ::close(fd);
  llvm::sys::fs::remove(probe);
  return success();
}

static std::string formatBytes(size_t bytes) {
  if (bytes >= (1 << 20))
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10))
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

static void printSummary(const Cluster &c, const Plan &plan, const RingFit &fit,
                         double seconds) {
  auto fixed = [](double value, int decimals) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*f", decimals, value);
    return std::string(text);
  };
  const DeviceSpec &d = c.device;
  llvm::errs() << "dpc-run: calibrated this host with " << c.devicesPerNode
               << " ranks in " << fixed(seconds, 1)
               << " s (figures per rank, every "
               << "rank measuring at once)\n"
               << "  GEMM, 1 thread (OpenBLAS):  f32 "
               << fixed(d.getPeakFlops(NumericType::F32) / 1e9, 1)
               << " GFLOP/s, f64 "
               << fixed(d.getPeakFlops(NumericType::F64) / 1e9, 1)
               << " GFLOP/s (bf16/f16 run as f32); a training step's GEMMs "
               << fixed(c.efficiency.compute * 100, 0) << "% of f32's\n"
               << "  memory (STREAM triad):      "
               << fixed(d.memoryBandwidth / 1e9, 1) << " GB/s\n"
               << "  all-reduce (Gloo ring, TCP loopback, "
               << formatBytes(plan.allReduceBytes.front()) << " to "
               << formatBytes(plan.allReduceBytes.back()) << "): latency "
               << fixed(c.intraNode.latency * 1e6, 1) << " us, "
               << fixed(c.intraNode.bandwidth / 1e9, 2)
               << " GB/s per link (model off by "
               << fixed(fit.rmsRelativeError * 100, 0) << "% rms over sizes)\n"
               << "  overlap:                    "
               << fixed(c.efficiency.overlap * 100, 0)
               << "% of a bulk all-reduce's time hides behind GEMMs on the "
                  "same core\n"
               << "  rank skew:                  the slowest rank "
               << fixed(c.rankSkew * 100, 1)
               << "% behind the ranks' mean over the same GEMMs\n"
               << "  inter-node link: the cpu-host preset's, not measured\n";
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult mlir::dpc::runCalibration(const CalibrationOptions &options) {
  if (options.ranks < 2)
    return fail("--calibrate-ranks must be at least 2 (a collective needs "
                "peers), got " +
                Twine(options.ranks));
  // Every rank connects to every other: a socket per peer, within the
  // process's file limit; and past a few ranks per CPU the collectives
  // measure only contention.
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  int64_t maxRanks = std::max<int64_t>(2, 8 * std::max<long>(cpus, 1));
  struct rlimit files;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 &&
      files.rlim_cur != RLIM_INFINITY)
    maxRanks = std::min<int64_t>(maxRanks, int64_t(files.rlim_cur) / 2);
  if (options.ranks > maxRanks)
    return fail("--calibrate-ranks=" + Twine(options.ranks) +
                " is more than this host calibrates: at most " +
                Twine(maxRanks) +
                " (8 ranks per CPU, each with a socket to "
                "every other within the open-file limit)");
  if (options.failRank >= options.ranks)
    return fail("--calibrate-fail-rank=" + Twine(options.failRank) +
                " is not a rank of " + Twine(options.ranks));
  if (options.hangRank >= options.ranks)
    return fail("--calibrate-hang-rank=" + Twine(options.hangRank) +
                " is not a rank of " + Twine(options.ranks));
  if (options.deadlineSeconds < 0)
    return fail("--calibrate-deadline must be positive, got " +
                Twine(options.deadlineSeconds));
  if (!options.outputPath.empty() && failed(checkWritable(options.outputPath)))
    return failure();
  if (cpus > 0 && options.ranks > cpus)
    llvm::errs() << "dpc-run: calibration: note: " << options.ranks
                 << " ranks on " << cpus
                 << " CPUs share cores; per-rank figures will be low\n";

  Plan plan = getPlan(options.quick);
  if (options.deadlineSeconds > 0)
    plan.deadline = std::chrono::seconds(options.deadlineSeconds);
  SmallString<128> storeDir;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("dpc-calibrate", storeDir))
    return fail("cannot create a rendezvous directory: " + error.message());
  std::string store = storeDir.str().str();

  useSingleThreadedBlas();
  // The ranks inherit unflushed output.
  llvm::outs().flush();
  llvm::errs().flush();
  double start = getMonotonicSeconds();
  std::vector<std::string> results;
  ::dpc::Status status = ::dpc::runLocalRanks(
      options.ranks, plan.deadline,
      [&](int rank, std::string &result) {
        return measureRank(rank, options, plan, store, result);
      },
      results);
  double seconds = getMonotonicSeconds() - start;
  llvm::sys::fs::remove_directories(storeDir);
  if (status.isError())
    return fail(status.getMessage());

  std::vector<RankMeasurements> ranks(options.ranks);
  for (int r = 0; r < options.ranks; ++r)
    if (!decode(results[r], plan, ranks[r]))
      return fail("rank " + Twine(r) + " sent " + Twine(results[r].size()) +
                  " bytes of results, not what was expected");

  std::string error;
  std::vector<double> times = getAllReduceTimes(ranks, plan);
  FailureOr<RingFit> fit =
      fitRing(plan.allReduceBytes, times, options.ranks, error);
  if (failed(fit))
    return fail(error);
  Cluster cluster = buildCluster(ranks, *fit);

  // Check the file with the reader that will load it, before writing it.
  std::string json = printClusterJson(cluster);
  if (failed(parseClusterJson(json, "calibration", error)))
    return fail("the measurements do not make a valid cluster: " + error);
  printSummary(cluster, plan, *fit, seconds);
  if (options.outputPath.empty()) {
    llvm::outs() << json;
    llvm::outs().flush();
    return success();
  }
  if (::dpc::Status status =
          ::dpc::writeFileAtomically(options.outputPath, json);
      status.isError())
    return fail(status.getMessage());
  llvm::errs() << "  wrote " << options.outputPath << "\n";
  return success();
}
