//===- OpProfile.cpp - Every op's time beside its prediction --------------===//

#include "OpProfile.h"

#include "dpc/Runtime/FileIO.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir::dpc::artifact;

std::string
mlir::dpc::artifact::serializeOpTimes(const std::vector<double> &opSeconds,
                                      double stepSeconds, int steps) {
  json::Array times;
  for (double seconds : opSeconds)
    times.push_back(seconds / std::max(steps, 1));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(json::Object{{"step_s", stepSeconds / std::max(steps, 1)},
                                 {"ops", std::move(times)}});
  return text;
}

namespace {

/// The ops of one type, per step.
struct OpTypeRow {
  std::string type;
  int64_t count = 0;
  double measured = 0, predicted = 0;
  bool hasPrediction = false;
};

/// Rank 0's table by op type, slowest first; the rest folded into one
/// row after `shown`.
void printSummary(const ProgramSpec &program, const std::vector<double> &times,
                  double stepSeconds, int steps, const std::string &file) {
  llvm::StringMap<OpTypeRow> rows;
  double inOps = 0, compute = 0, transfer = 0;
  bool predicted = false;
  for (auto [op, seconds] : llvm::zip_equal(program.ops, times)) {
    std::string type = op.op + (op.collective ? " (transfer)" : "");
    OpTypeRow &row = rows[type];
    row.type = type;
    ++row.count;
    row.measured += seconds;
    inOps += seconds;
    if (op.predicted) {
      row.predicted += *op.predicted;
      row.hasPrediction = predicted = true;
      (op.collective ? transfer : compute) += *op.predicted;
    }
  }
  std::vector<OpTypeRow> sorted;
  for (auto &entry : rows)
    sorted.push_back(entry.second);
  llvm::sort(sorted, [](const OpTypeRow &a, const OpTypeRow &b) {
    return a.measured > b.measured;
  });
  constexpr size_t shown = 15;
  if (sorted.size() > shown + 1) {
    OpTypeRow other;
    other.type = llvm::formatv("{0} other types", sorted.size() - shown);
    for (const OpTypeRow &row : llvm::ArrayRef(sorted).drop_front(shown)) {
      other.count += row.count;
      other.measured += row.measured;
      other.predicted += row.predicted;
      other.hasPrediction |= row.hasPrediction;
    }
    sorted.resize(shown);
    sorted.push_back(other);
  }
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("dpc-run: profile of rank 0 over {0} steps ({1}): "
                      "{2:f2} ms/step in its {3} ops, {4:f2} outside them\n",
                      steps, file, inOps * 1e3, program.ops.size(),
                      (stepSeconds - inOps) * 1e3);
  if (predicted)
    os << llvm::formatv("dpc-run: the cost model predicts {0:f2} ms of "
                        "compute and {1:f2} ms of transfers (which overlap "
                        "may hide)\n",
                        compute * 1e3, transfer * 1e3);
  os << llvm::formatv("  {0,-36} {1,6} {2,12} {3,13} {4,9}\n", "op type",
                      "count", "measured ms", "predicted ms", "ratio");
  for (const OpTypeRow &row : sorted) {
    std::string predictedText =
        row.hasPrediction ? llvm::formatv("{0:f3}", row.predicted * 1e3).str()
                          : "-";
    std::string ratio =
        row.hasPrediction && row.predicted > 0
            ? llvm::formatv("{0:f2}", row.measured / row.predicted).str()
            : "-";
    os << llvm::formatv("  {0,-36} {1,6} {2,12:f3} {3,13} {4,9}\n", row.type,
                        row.count, row.measured * 1e3, predictedText, ratio);
  }
  os.flush();
}

} // namespace

::dpc::Status
mlir::dpc::artifact::writeOpProfile(const Manifest &manifest,
                                    const std::vector<std::string> &perRank,
                                    int steps, const std::string &file) {
  json::Array ranks;
  std::vector<double> rankZeroTimes;
  double rankZeroStep = 0;
  const ProgramSpec *rankZeroProgram = nullptr;
  for (auto [rank, text] : llvm::enumerate(perRank)) {
    const ProgramSpec *program = manifest.getProgram(rank);
    llvm::Expected<json::Value> parsed = json::parse(text);
    if (!parsed)
      return ::dpc::Status::error(
          "rank " + std::to_string(rank) +
          " sent a broken profile: " + llvm::toString(parsed.takeError()));
    const json::Object *object = parsed->getAsObject();
    const json::Array *times = object ? object->getArray("ops") : nullptr;
    if (!program || !times || times->size() != program->ops.size())
      return ::dpc::Status::error("rank " + std::to_string(rank) +
                                  "'s profile does not match its program");
    double stepSeconds = object->getNumber("step_s").value_or(0);
    json::Array ops;
    std::vector<double> seconds;
    for (auto [op, time] : llvm::zip_equal(program->ops, *times)) {
      seconds.push_back(time.getAsNumber().value_or(0));
      json::Object entry{{"op", op.op},
                         {"at", op.at},
                         {"flops", op.flops},
                         {"bytes", op.bytes},
                         {"measured_s", seconds.back()}};
      if (op.fused)
        entry["fused"] = op.fused;
      if (op.collective)
        entry["collective"] = true;
      if (op.predicted)
        entry["predicted_s"] = *op.predicted;
      ops.push_back(std::move(entry));
    }
    ranks.push_back(json::Object{{"rank", int64_t(rank)},
                                 {"program", program->symbol},
                                 {"step_s", stepSeconds},
                                 {"ops", std::move(ops)}});
    if (rank == 0) {
      rankZeroTimes = std::move(seconds);
      rankZeroStep = stepSeconds;
      rankZeroProgram = program;
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(
      json::Object{{"steps", steps},
                   {"predicted_step_s", manifest.predictedStepSeconds},
                   {"ranks", std::move(ranks)}});
  if (::dpc::Status status = ::dpc::writeFileAtomically(file, text);
      status.isError())
    return status;
  if (rankZeroProgram)
    printSummary(*rankZeroProgram, rankZeroTimes, rankZeroStep, steps, file);
  return ::dpc::Status::success();
}
