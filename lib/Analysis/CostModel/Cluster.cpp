//===- Cluster.cpp - Devices, links and the mesh laid over them -----------===//
//
// Mesh parsing, the built-in clusters with the vendor figures they come
// from, and the JSON cluster format. Built without exceptions (LLVM's
// flags), so JSON is parsed with allow_exceptions=false and every field is
// type-checked before it is read.
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/Cluster.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::dpc;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Numeric types and the mesh
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kNumericTypeNames[kNumNumericTypes] = {
    "f64", "f32", "bf16", "f16"};

StringRef mlir::dpc::stringifyNumericType(NumericType type) {
  return kNumericTypeNames[static_cast<unsigned>(type)];
}

std::optional<NumericType> mlir::dpc::parseNumericType(StringRef name) {
  for (unsigned i = 0; i < kNumNumericTypes; ++i)
    if (name == kNumericTypeNames[i])
      return static_cast<NumericType>(i);
  return std::nullopt;
}

FailureOr<Mesh> Mesh::parse(StringRef text, std::string &error) {
  SmallVector<StringRef, 4> parts;
  text.split(parts, 'x');
  SmallVector<int64_t, 4> shape;
  int64_t devices = 1;
  for (StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size < 1) {
      error = ("invalid mesh '" + text + "': '" + part +
               "' is not a positive integer (expected AxB[xC...], e.g. 2x8)")
                  .str();
      return failure();
    }
    // Checked as it multiplies: a product that wraps would plan for a
    // mesh other than the one asked for.
    if (size > kMaxDevices / devices) {
      error = ("invalid mesh '" + text + "': more than " + Twine(kMaxDevices) +
               " devices, the most dpc plans for")
                  .str();
      return failure();
    }
    devices *= size;
    shape.push_back(size);
  }
  return Mesh(shape);
}

int64_t Mesh::getNumDevices() const {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

int64_t Mesh::getStride(unsigned axis) const {
  int64_t stride = 1;
  for (unsigned i = axis + 1; i < shape.size(); ++i)
    stride *= shape[i];
  return stride;
}

std::string Mesh::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

GroupPlacement mlir::dpc::getGroupPlacement(const Mesh &mesh,
                                            ArrayRef<unsigned> axes,
                                            const Cluster &cluster) {
  // Enumerate the group of device 0: groups have at most a few thousand
  // members, and enumeration needs no divisibility assumptions.
  SmallVector<int64_t> ids = {0};
  for (unsigned axis : axes) {
    assert(axis < mesh.getRank() && "mesh axis out of range");
    SmallVector<int64_t> next;
    next.reserve(ids.size() * mesh.getAxisSize(axis));
    for (int64_t id : ids)
      for (int64_t i = 0; i < mesh.getAxisSize(axis); ++i)
        next.push_back(id + i * mesh.getStride(axis));
    ids = std::move(next);
  }
  llvm::SmallSet<int64_t, 16> nodes;
  for (int64_t id : ids)
    nodes.insert(id / std::max<int64_t>(cluster.devicesPerNode, 1));
  GroupPlacement placement;
  placement.size = ids.size();
  placement.nodes = nodes.size();
  placement.devicesPerNode = placement.size / placement.nodes;
  return placement;
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

namespace {
constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kMicro = 1e-6;

/// Fills the peaks in the order f64, f32, bf16, f16 (TFLOP/s).
void setPeaks(DeviceSpec &device, double f64, double f32, double bf16,
              double f16) {
  device.peakFlops[0] = f64 * kTera;
  device.peakFlops[1] = f32 * kTera;
  device.peakFlops[2] = bf16 * kTera;
  device.peakFlops[3] = f16 * kTera;
}

/// Efficiencies of NVIDIA's large-model training stacks (Megatron-LM with
/// cuBLAS GEMMs, fused kernels and NCCL); checked against Megatron-LM's
/// H100 table by bench/megatron_h100.cpp, see docs/cost-model.md.
Efficiency gpuEfficiency() {
  Efficiency e;
  // Sustained, not peak: cuBLAS bf16 GEMMs of transformer shapes reach ~70%
  // of dense peak alone, clocks under a 700 W training load ~85% of boost,
  // and overlapped communication kernels take ~10% of the SMs:
  // 0.7 * 0.85 * 0.9 = 0.54.
  e.compute = 0.54;
  // Fused elementwise/normalization kernels stream at ~80% of HBM peak.
  e.memory = 0.8;
  // NCCL bus bandwidth reaches ~80% of the link rate on large messages.
  e.communication = 0.8;
  return e;
}

Cluster h100Sxm() {
  Cluster c;
  c.name = "h100-sxm";
  // DGX H100 / HGX H100: 8 GPUs per node.
  c.devicesPerNode = 8;
  // NVIDIA H100 Tensor Core GPU datasheet, SXM5 column, dense: FP64 Tensor
  // Core 67 TFLOP/s, FP32 67, BF16/FP16 Tensor Core 989 (1979 with
  // sparsity).
  setPeaks(c.device, 67, 67, 989, 989);
  // Same datasheet: 80 GB HBM3 at 3.35 TB/s.
  c.device.memoryCapacity = 80 * kGiga;
  c.device.memoryBandwidth = 3350 * kGiga;
  // Fourth-generation NVLink through NVSwitch: 900 GB/s per GPU in both
  // directions together, 450 GB/s each way.
  c.intraNode = {450 * kGiga, 3 * kMicro};
  // DGX H100: 8 ConnectX-7 400 Gb/s InfiniBand NDR ports per node, one per
  // GPU: 400 Gb/s = 50 GB/s each way per GPU.
  c.interNode = {50 * kGiga, 10 * kMicro};
  c.efficiency = gpuEfficiency();
  return c;
}

Cluster h200() {
  Cluster c = h100Sxm();
  c.name = "h200";
  // NVIDIA H200 datasheet, SXM column: the H100's compute (dense BF16 989
  // TFLOP/s) with 141 GB HBM3e at 4.8 TB/s; NVLink 900 GB/s. DGX H200
  // keeps 8 ConnectX-7 400 Gb/s ports per node.
  c.device.memoryCapacity = 141 * kGiga;
  c.device.memoryBandwidth = 4800 * kGiga;
  return c;
}

Cluster a100() {
  Cluster c;
  c.name = "a100-80gb";
  c.devicesPerNode = 8;
  // NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM column, dense: FP64
  // Tensor Core 19.5 TFLOP/s, FP32 19.5, BF16/FP16 Tensor Core 312.
  setPeaks(c.device, 19.5, 19.5, 312, 312);
  // Same datasheet: 80 GB HBM2e at 2,039 GB/s.
  c.device.memoryCapacity = 80 * kGiga;
  c.device.memoryBandwidth = 2039 * kGiga;
  // Third-generation NVLink through NVSwitch: 600 GB/s per GPU both ways,
  // 300 GB/s each way.
  c.intraNode = {300 * kGiga, 3 * kMicro};
  // DGX A100: 8 ConnectX-6 200 Gb/s HDR InfiniBand ports per node, one per
  // GPU: 25 GB/s each way per GPU.
  c.interNode = {25 * kGiga, 10 * kMicro};
  c.efficiency = gpuEfficiency();
  return c;
}

Cluster v100() {
  Cluster c;
  c.name = "v100-16gb-25gbps";
  // Alpa's testbed (OSDI'22, section 8): AWS p3.16xlarge nodes, 8 V100
  // 16GB each, NVLink inside a node, 25 Gbps between nodes.
  c.devicesPerNode = 8;
  // NVIDIA V100 datasheet, SXM2 column: FP64 7.8 TFLOP/s, FP32 15.7, FP16
  // Tensor Core 125. No bf16 units: bf16 runs at the FP32 rate.
  setPeaks(c.device, 7.8, 15.7, 15.7, 125);
  // Same datasheet: 16 GB HBM2 at 900 GB/s.
  c.device.memoryCapacity = 16 * kGiga;
  c.device.memoryBandwidth = 900 * kGiga;
  // Second-generation NVLink: 6 links of 25 GB/s each way per GPU (hybrid
  // cube mesh, not a switch; a ring uses them all).
  c.intraNode = {150 * kGiga, 5 * kMicro};
  // One 25 Gb/s NIC per node shared by its 8 GPUs: 25/8 Gb/s each.
  c.interNode = {25.0 / 8 / 8 * kGiga, 30 * kMicro};
  c.efficiency = gpuEfficiency();
  return c;
}

Cluster cpuHost() {
  Cluster c;
  c.name = "cpu-host";
  // This project's machines: 2 AMD EPYC (Zen) cores, one rank per core.
  // Defaults until `dpc-run --calibrate` measures the host.
  c.devicesPerNode = 2;
  // One core: AVX2, two 256-bit FMA pipes at ~2 GHz = 64 f32 / 32 f64
  // GFLOP/s; no bf16/f16 arithmetic (converted to f32).
  setPeaks(c.device, 0.032, 0.064, 0.064, 0.064);
  c.device.memoryCapacity = 8 * kGiga;
  c.device.memoryBandwidth = 10 * kGiga;
  // Gloo over loopback TCP: about 1.2-1.7 GB/s for two ranks
  // (REFERENCE.md), ~50 us per message.
  c.intraNode = {1.5 * kGiga, 50 * kMicro};
  // 10 GbE between hosts.
  c.interNode = {1.25 * kGiga, 100 * kMicro};
  c.efficiency = {0.7, 0.7, 0.8};
  // Gloo's copies, reductions and socket work run on the ranks' own cores:
  // `dpc-run --calibrate` measured 8-35% of a 4 MiB all-reduce's time
  // hidden behind GEMMs here.
  c.efficiency.overlap = 0.15;
  // Two ranks running the same GEMMs between barriers: the slower one took
  // 2.5-3% longer than their mean here.
  c.rankSkew = 0.03;
  return c;
}

struct Preset {
  StringRef name;
  Cluster (*build)();
};

const Preset kPresets[] = {{"h100-sxm", h100Sxm},
                           {"a100-80gb", a100},
                           {"v100-16gb-25gbps", v100},
                           {"h200", h200},
                           {"cpu-host", cpuHost}};
} // namespace

ArrayRef<StringRef> mlir::dpc::getClusterPresetNames() {
  static const SmallVector<StringRef> names =
      llvm::map_to_vector(kPresets, [](const Preset &p) { return p.name; });
  return names;
}

std::optional<Cluster> mlir::dpc::getClusterPreset(StringRef name) {
  for (const Preset &preset : kPresets)
    if (preset.name == name)
      return preset.build();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
/// Reads one JSON object's fields, remembering the first error.
class FieldReader {
public:
  FieldReader(StringRef fileName, std::string &error)
      : fileName(fileName), error(error) {}

  bool failed() const { return !error.empty(); }

  /// Fails unless `value` is an object whose keys are all in `allowed`.
  bool checkObject(const json &value, StringRef path,
                   ArrayRef<StringRef> allowed) {
    if (failed())
      return false;
    if (!value.is_object())
      return fail(path, "must be a JSON object");
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!llvm::is_contained(allowed, StringRef(it.key())))
        return fail(join(path, it.key()), "is not a known field (expected " +
                                              listFields(allowed) + ")");
    return true;
  }

  /// The object at `object[key]`, or null after reporting it missing.
  const json *getObject(const json &object, StringRef path, StringRef key,
                        ArrayRef<StringRef> allowed) {
    const json *value = get(object, path, key);
    if (!value || !checkObject(*value, join(path, key), allowed))
      return nullptr;
    return value;
  }

  /// Reads the number `object[key]` times `scale`; it must be >= `min`
  /// (and > `min` when `strict`).
  void getNumber(const json &object, StringRef path, StringRef key,
                 double &result, double scale = 1.0, double min = 0.0,
                 bool strict = false, double max = HUGE_VAL) {
    const json *value = get(object, path, key);
    if (!value)
      return;
    std::string field = join(path, key);
    if (!value->is_number()) {
      fail(field, "must be a number");
      return;
    }
    double number = value->get<double>();
    if (number < min || (strict && number == min)) {
      fail(field,
           std::string(strict ? "must be greater than " : "must be at least ") +
               formatNumber(min) + ", got " + formatNumber(number));
      return;
    }
    if (number > max) {
      fail(field, "must be at most " + formatNumber(max) + ", got " +
                      formatNumber(number));
      return;
    }
    // Subnormal values (and values that become subnormal or infinite in
    // base units) are no measurement, and break the planner's solver.
    double scaled = number * scale;
    if (number != 0 && (std::fpclassify(scaled) != FP_NORMAL ||
                        std::fpclassify(number) != FP_NORMAL)) {
      fail(field, "is out of the range of measured values, got " +
                      formatNumber(number));
      return;
    }
    result = scaled;
  }

  void getPositiveInteger(const json &object, StringRef path, StringRef key,
                          int64_t &result) {
    const json *value = get(object, path, key);
    if (!value)
      return;
    if (!value->is_number_integer() || value->get<int64_t>() < 1) {
      fail(join(path, key), "must be a positive integer");
      return;
    }
    result = value->get<int64_t>();
  }

  void getString(const json &object, StringRef path, StringRef key,
                 std::string &result) {
    auto it = object.find(std::string(key));
    if (it == object.end())
      return; // Optional.
    if (!it->is_string()) {
      fail(join(path, key), "must be a string");
      return;
    }
    result = it->get<std::string>();
  }

  void getOptionalBool(const json &object, StringRef path, StringRef key,
                       bool &result) {
    auto it = object.find(std::string(key));
    if (failed() || it == object.end())
      return;
    if (!it->is_boolean()) {
      fail(join(path, key), "must be true or false");
      return;
    }
    result = it->get<bool>();
  }

  bool fail(StringRef field, const std::string &message) {
    if (!failed())
      error =
          ("cluster file '" + fileName + "': field '" + field + "' " + message)
              .str();
    return false;
  }

private:
  const json *get(const json &object, StringRef path, StringRef key) {
    if (failed())
      return nullptr;
    auto it = object.find(std::string(key));
    if (it == object.end()) {
      error = ("cluster file '" + fileName + "': missing field '" +
               join(path, key) + "'")
                  .str();
      return nullptr;
    }
    return &*it;
  }

  static std::string join(StringRef path, StringRef key) {
    return path.empty() ? key.str() : (path + "." + key).str();
  }

  static std::string listFields(ArrayRef<StringRef> fields) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::interleave(fields, os, ", ");
    return text;
  }

  static std::string formatNumber(double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", value);
    return text;
  }

  StringRef fileName;
  std::string &error;
};

const StringRef kTopFields[] = {"name",
                                "devices_per_node",
                                "device",
                                "intra_node",
                                "inter_node",
                                "efficiency",
                                "fused_attention",
                                "gradient_sync_behind_all_micro_batches",
                                "rank_skew"};
const StringRef kDeviceFields[] = {"peak_tflops", "memory_gb",
                                   "memory_bandwidth_gb_per_s"};
const StringRef kLinkFields[] = {"bandwidth_gb_per_s", "latency_us"};
const StringRef kEfficiencyFields[] = {"compute", "memory", "communication",
                                       "overlap"};

void readLink(FieldReader &reader, const json &root, StringRef key,
              LinkSpec &link) {
  const json *object = reader.getObject(root, "", key, kLinkFields);
  if (!object)
    return;
  reader.getNumber(*object, key, "bandwidth_gb_per_s", link.bandwidth, kGiga,
                   0.0, /*strict=*/true);
  reader.getNumber(*object, key, "latency_us", link.latency, kMicro);
}
} // namespace

FailureOr<Cluster> mlir::dpc::parseClusterJson(StringRef text,
                                               StringRef fileName,
                                               std::string &error) {
  error.clear();
  json root = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = ("cluster file '" + fileName + "': not valid JSON").str();
    return failure();
  }
  FieldReader reader(fileName, error);
  Cluster cluster;
  if (!reader.checkObject(root, "", kTopFields)) {
    if (!root.is_object())
      error = ("cluster file '" + fileName + "': must be a JSON object").str();
    return failure();
  }
  cluster.name = llvm::sys::path::stem(fileName).str();
  reader.getString(root, "", "name", cluster.name);
  reader.getPositiveInteger(root, "", "devices_per_node",
                            cluster.devicesPerNode);

  if (const json *device =
          reader.getObject(root, "", "device", kDeviceFields)) {
    SmallVector<StringRef, 4> types;
    for (unsigned i = 0; i < kNumNumericTypes; ++i)
      types.push_back(stringifyNumericType(static_cast<NumericType>(i)));
    if (const json *peaks =
            reader.getObject(*device, "device", "peak_tflops", types))
      for (unsigned i = 0; i < kNumNumericTypes; ++i)
        reader.getNumber(*peaks, "device.peak_tflops", types[i],
                         cluster.device.peakFlops[i], kTera, 0.0,
                         /*strict=*/true);
    reader.getNumber(*device, "device", "memory_gb",
                     cluster.device.memoryCapacity, kGiga, 0.0,
                     /*strict=*/true);
    reader.getNumber(*device, "device", "memory_bandwidth_gb_per_s",
                     cluster.device.memoryBandwidth, kGiga, 0.0,
                     /*strict=*/true);
  }
  readLink(reader, root, "intra_node", cluster.intraNode);
  readLink(reader, root, "inter_node", cluster.interNode);
  if (const json *efficiency =
          reader.getObject(root, "", "efficiency", kEfficiencyFields)) {
    reader.getNumber(*efficiency, "efficiency", "compute",
                     cluster.efficiency.compute, 1.0, 0.0, true, 1.0);
    reader.getNumber(*efficiency, "efficiency", "memory",
                     cluster.efficiency.memory, 1.0, 0.0, true, 1.0);
    reader.getNumber(*efficiency, "efficiency", "communication",
                     cluster.efficiency.communication, 1.0, 0.0, true, 1.0);
    // Optional: files written before it was measured hide everything.
    if (efficiency->contains("overlap"))
      reader.getNumber(*efficiency, "efficiency", "overlap",
                       cluster.efficiency.overlap, 1.0, 0.0, false, 1.0);
  }
  reader.getOptionalBool(root, "", "fused_attention", cluster.fusedAttention);
  reader.getOptionalBool(root, "", "gradient_sync_behind_all_micro_batches",
                         cluster.gradientSyncBehindAllMicroBatches);
  // Optional: files written before it was measured have none.
  if (root.contains("rank_skew"))
    reader.getNumber(root, "", "rank_skew", cluster.rankSkew, 1.0, 0.0, false,
                     1.0);
  if (reader.failed())
    return failure();
  return cluster;
}

FailureOr<Cluster> mlir::dpc::loadClusterFile(StringRef path,
                                              std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = ("cannot read cluster file '" + path +
             "': " + buffer.getError().message())
                .str();
    return failure();
  }
  return parseClusterJson((*buffer)->getBuffer(), path, error);
}

/// `value` to 12 significant digits: unit conversions print as 3.0, not
/// 2.9999999999999996.
static double tidy(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.12g", value);
  return std::strtod(text, nullptr);
}

std::string mlir::dpc::printClusterJson(const Cluster &cluster) {
  json peaks = json::object();
  for (unsigned i = 0; i < kNumNumericTypes; ++i)
    peaks[stringifyNumericType(static_cast<NumericType>(i)).str()] =
        tidy(cluster.device.peakFlops[i] / kTera);
  auto link = [](const LinkSpec &spec) {
    return json{{"bandwidth_gb_per_s", tidy(spec.bandwidth / kGiga)},
                {"latency_us", tidy(spec.latency / kMicro)}};
  };
  json root = {{"name", cluster.name},
               {"devices_per_node", cluster.devicesPerNode},
               {"device",
                {{"peak_tflops", peaks},
                 {"memory_gb", tidy(cluster.device.memoryCapacity / kGiga)},
                 {"memory_bandwidth_gb_per_s",
                  tidy(cluster.device.memoryBandwidth / kGiga)}}},
               {"intra_node", link(cluster.intraNode)},
               {"inter_node", link(cluster.interNode)},
               {"efficiency",
                {{"compute", cluster.efficiency.compute},
                 {"memory", cluster.efficiency.memory},
                 {"communication", cluster.efficiency.communication},
                 {"overlap", cluster.efficiency.overlap}}},
               {"fused_attention", cluster.fusedAttention},
               {"gradient_sync_behind_all_micro_batches",
                cluster.gradientSyncBehindAllMicroBatches},
               {"rank_skew", cluster.rankSkew}};
  return root.dump(2) + "\n";
}

FailureOr<Cluster> mlir::dpc::resolveCluster(StringRef spec,
                                             std::string &error) {
  if (std::optional<Cluster> preset = getClusterPreset(spec))
    return *preset;
  if (!spec.ends_with(".json")) {
    std::string names;
    llvm::raw_string_ostream os(names);
    llvm::interleave(getClusterPresetNames(), os, ", ");
    error = ("unknown cluster '" + spec + "' (expected a preset: " + names +
             "; or a FILE.json)")
                .str();
    return failure();
  }
  return loadClusterFile(spec, error);
}

Cluster mlir::dpc::placeMeshOnCluster(Cluster cluster, const Mesh &mesh) {
  if (mesh.getRank() >= 2)
    cluster.devicesPerNode =
        std::min(cluster.devicesPerNode,
                 std::max<int64_t>(mesh.getAxisSize(mesh.getRank() - 1), 1));
  return cluster;
}

FailureOr<Cluster> mlir::dpc::resolveClusterForMesh(StringRef spec,
                                                    StringRef meshText,
                                                    std::string &error) {
  FailureOr<Cluster> cluster = resolveCluster(spec, error);
  if (failed(cluster) || meshText.empty())
    return cluster;
  FailureOr<Mesh> mesh = Mesh::parse(meshText, error);
  if (failed(mesh)) {
    error = "the plan's mesh: " + error;
    return failure();
  }
  return placeMeshOnCluster(*cluster, *mesh);
}
