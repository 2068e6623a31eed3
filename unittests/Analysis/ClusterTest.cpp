//===- ClusterTest.cpp - Meshes, presets and cluster files ----------------===//

#include "dpc/Analysis/CostModel/Cluster.h"
#include "TestCluster.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

TEST(Mesh, ParsesAxesOutermostFirst) {
  std::string error;
  FailureOr<Mesh> mesh = Mesh::parse("2x4x8", error);
  ASSERT_TRUE(succeeded(mesh)) << error;
  EXPECT_EQ(mesh->getRank(), 3u);
  EXPECT_EQ(mesh->getNumDevices(), 64);
  EXPECT_EQ(mesh->getStride(0), 32);
  EXPECT_EQ(mesh->getStride(2), 1);
  EXPECT_EQ(mesh->str(), "2x4x8");
  ASSERT_TRUE(succeeded(Mesh::parse("16", error)));
}

TEST(Mesh, NamesTheBadPart) {
  std::string error;
  EXPECT_TRUE(failed(Mesh::parse("2xfour", error)));
  EXPECT_EQ(error, "invalid mesh '2xfour': 'four' is not a positive integer "
                   "(expected AxB[xC...], e.g. 2x8)");
  EXPECT_TRUE(failed(Mesh::parse("0x8", error)));
  EXPECT_NE(error.find("'0'"), std::string::npos);
  EXPECT_TRUE(failed(Mesh::parse("2x", error)));
  EXPECT_NE(error.find("'' is not"), std::string::npos);
}

TEST(GroupPlacement, InnerAxesStayInANode) {
  Cluster cluster = getTestCluster(); // 4 devices a node.
  Mesh mesh({2, 4});
  GroupPlacement inner = getGroupPlacement(mesh, {1}, cluster);
  EXPECT_EQ(inner.size, 4);
  EXPECT_EQ(inner.nodes, 1);
  EXPECT_EQ(inner.getLinkLevel(), LinkLevel::IntraNode);
  GroupPlacement outer = getGroupPlacement(mesh, {0}, cluster);
  EXPECT_EQ(outer.size, 2);
  EXPECT_EQ(outer.nodes, 2);
  EXPECT_EQ(outer.devicesPerNode, 1);
  GroupPlacement all = getGroupPlacement(mesh, {0, 1}, cluster);
  EXPECT_EQ(all.nodes, 2);
  EXPECT_EQ(all.devicesPerNode, 4);
  // An axis of stride 2 and size 4 holds two devices in each of two nodes.
  GroupPlacement mixed = getGroupPlacement(Mesh({4, 2}), {0}, cluster);
  EXPECT_EQ(mixed.nodes, 2);
  EXPECT_EQ(mixed.devicesPerNode, 2);
  EXPECT_EQ(getGroupPlacement(mesh, {}, cluster).size, 1);
}

TEST(ClusterPreset, CarriesVendorFigures) {
  EXPECT_EQ(getClusterPresetNames().size(), 5u);
  std::optional<Cluster> h100 = getClusterPreset("h100-sxm");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->devicesPerNode, 8);
  EXPECT_DOUBLE_EQ(h100->device.getPeakFlops(NumericType::BF16), 989e12);
  EXPECT_DOUBLE_EQ(h100->device.memoryCapacity, 80e9);
  EXPECT_DOUBLE_EQ(h100->device.memoryBandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->intraNode.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(h100->interNode.bandwidth, 50e9);
  std::optional<Cluster> v100 = getClusterPreset("v100-16gb-25gbps");
  ASSERT_TRUE(v100);
  // 25 Gb/s per node over 8 GPUs, in bytes.
  EXPECT_DOUBLE_EQ(v100->interNode.bandwidth, 25e9 / 8 / 8);
  for (StringRef name : getClusterPresetNames())
    EXPECT_TRUE(getClusterPreset(name)) << name.str();
  EXPECT_FALSE(getClusterPreset("tpu-v5"));
}

TEST(ClusterJson, RoundTripsEveryPreset) {
  for (StringRef name : getClusterPresetNames()) {
    Cluster preset = *getClusterPreset(name);
    std::string error;
    FailureOr<Cluster> parsed =
        parseClusterJson(printClusterJson(preset), "preset.json", error);
    ASSERT_TRUE(succeeded(parsed)) << error;
    EXPECT_EQ(parsed->name, preset.name);
    EXPECT_EQ(parsed->devicesPerNode, preset.devicesPerNode);
    for (unsigned i = 0; i < kNumNumericTypes; ++i)
      EXPECT_DOUBLE_EQ(parsed->device.peakFlops[i], preset.device.peakFlops[i]);
    EXPECT_DOUBLE_EQ(parsed->device.memoryBandwidth,
                     preset.device.memoryBandwidth);
    EXPECT_DOUBLE_EQ(parsed->interNode.latency, preset.interNode.latency);
    EXPECT_DOUBLE_EQ(parsed->efficiency.communication,
                     preset.efficiency.communication);
    EXPECT_DOUBLE_EQ(parsed->efficiency.overlap, preset.efficiency.overlap);
    EXPECT_DOUBLE_EQ(parsed->rankSkew, preset.rankSkew);
    EXPECT_EQ(parsed->gradientSyncBehindAllMicroBatches,
              preset.gradientSyncBehindAllMicroBatches);
  }
}

/// The error parsing `text`, which must fail.
std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_TRUE(failed(parseClusterJson(text, "c.json", error)));
  return error;
}

/// A valid file with `edit` applied to the text of the h100-sxm preset.
std::string h100With(StringRef from, StringRef to) {
  std::string text = printClusterJson(*getClusterPreset("h100-sxm"));
  size_t at = text.find(from.str());
  EXPECT_NE(at, std::string::npos) << from.str();
  return text.replace(at, from.size(), to.str());
}

TEST(ClusterJson, ReadsTheRuntimesGradientWindow) {
  std::string error;
  std::string text = printClusterJson(*getClusterPreset("h100-sxm"));
  FailureOr<Cluster> plain = parseClusterJson(text, "c.json", error);
  ASSERT_TRUE(succeeded(plain)) << error;
  EXPECT_FALSE(plain->gradientSyncBehindAllMicroBatches);
  FailureOr<Cluster> megatron = parseClusterJson(
      h100With("\"gradient_sync_behind_all_micro_batches\": false",
               "\"gradient_sync_behind_all_micro_batches\": true"),
      "c.json", error);
  ASSERT_TRUE(succeeded(megatron)) << error;
  EXPECT_TRUE(megatron->gradientSyncBehindAllMicroBatches);
}

TEST(ClusterJson, ReadsTheOverlapOfCommunicationWithCompute) {
  std::string error;
  // GPUs communicate on engines of their own; the CPU host's collectives
  // take the cores that compute.
  EXPECT_EQ(getClusterPreset("h100-sxm")->efficiency.overlap, 1.0);
  EXPECT_LT(getClusterPreset("cpu-host")->efficiency.overlap, 0.5);
  FailureOr<Cluster> contended = parseClusterJson(
      h100With("\"overlap\": 1.0", "\"overlap\": 0.25"), "c.json", error);
  ASSERT_TRUE(succeeded(contended)) << error;
  EXPECT_DOUBLE_EQ(contended->efficiency.overlap, 0.25);
  EXPECT_DOUBLE_EQ(contended->efficiency.getContendedTime(2.0), 1.5);
  // Files written before the field existed hide all they overlap.
  FailureOr<Cluster> older = parseClusterJson(
      h100With("\"memory\": 0.8,\n    \"overlap\": 1.0", "\"memory\": 0.8"),
      "c.json", error);
  ASSERT_TRUE(succeeded(older)) << error;
  EXPECT_EQ(older->efficiency.overlap, 1.0);
  EXPECT_EQ(parseError(h100With("\"overlap\": 1.0", "\"overlap\": 1.2")),
            "cluster file 'c.json': field 'efficiency.overlap' must be at "
            "most 1, got 1.2");
  EXPECT_EQ(parseError(h100With("\"overlap\": 1.0", "\"overlap\": null")),
            "cluster file 'c.json': field 'efficiency.overlap' must be a "
            "number");
}

TEST(ClusterJson, ReadsTheRankSkew) {
  std::string error;
  EXPECT_EQ(getClusterPreset("h100-sxm")->rankSkew, 0.0);
  EXPECT_GT(getClusterPreset("cpu-host")->rankSkew, 0.0);
  FailureOr<Cluster> skewed = parseClusterJson(
      h100With("\"rank_skew\": 0.0", "\"rank_skew\": 0.05"), "c.json", error);
  ASSERT_TRUE(succeeded(skewed)) << error;
  EXPECT_DOUBLE_EQ(skewed->rankSkew, 0.05);
  FailureOr<Cluster> older = parseClusterJson(
      h100With(",\n  \"rank_skew\": 0.0", ""), "c.json", error);
  ASSERT_TRUE(succeeded(older)) << error;
  EXPECT_EQ(older->rankSkew, 0.0);
  EXPECT_EQ(parseError(h100With("\"rank_skew\": 0.0", "\"rank_skew\": -0.1")),
            "cluster file 'c.json': field 'rank_skew' must be at least 0, got "
            "-0.1");
}

TEST(ClusterJson, RejectsBadFilesNamingTheField) {
  EXPECT_EQ(parseError("{ \"device\": "),
            "cluster file 'c.json': not valid JSON");
  EXPECT_EQ(parseError("[1, 2]"), "cluster file 'c.json': must be a JSON "
                                  "object");
  EXPECT_EQ(parseError(h100With("\"memory_gb\"", "\"memory_GB\"")),
            "cluster file 'c.json': field 'device.memory_GB' is not a known "
            "field (expected peak_tflops, memory_gb, "
            "memory_bandwidth_gb_per_s)");
  EXPECT_EQ(parseError(h100With("\"latency_us\": 3.0", "\"latency_us\": -3")),
            "cluster file 'c.json': field 'intra_node.latency_us' must be at "
            "least 0, got -3");
  EXPECT_EQ(parseError(h100With("\"bf16\": 989.0", "\"bf16\": \"989\"")),
            "cluster file 'c.json': field 'device.peak_tflops.bf16' must be a "
            "number");
  EXPECT_EQ(parseError(
                h100With("\"devices_per_node\": 8", "\"devices_per_node\": 0")),
            "cluster file 'c.json': field 'devices_per_node' must be a "
            "positive integer");
  EXPECT_EQ(parseError(h100With("\"compute\": 0.54", "\"compute\": 1.5")),
            "cluster file 'c.json': field 'efficiency.compute' must be at "
            "most 1, got 1.5");
  EXPECT_EQ(parseError("{\"devices_per_node\": 8}"),
            "cluster file 'c.json': missing field 'device'");
  EXPECT_EQ(parseError(h100With("\"fused_attention\": false",
                                "\"fused_attention\": 1")),
            "cluster file 'c.json': field 'fused_attention' must be true or "
            "false");
  EXPECT_EQ(
      parseError(
          h100With("\"gradient_sync_behind_all_micro_batches\": false",
                   "\"gradient_sync_behind_all_micro_batches\": \"yes\"")),
      "cluster file 'c.json': field 'gradient_sync_behind_all_micro_batches' "
      "must be true or false");
  // Subnormal figures once reached the planner's solver, which asserted.
  EXPECT_EQ(parseError(h100With("\"compute\": 0.54", "\"compute\": 1e-310")),
            "cluster file 'c.json': field 'efficiency.compute' is out of the "
            "range of measured values, got 1e-310");
  EXPECT_EQ(
      parseError(h100With("\"latency_us\": 3.0", "\"latency_us\": 4e-303")),
      "cluster file 'c.json': field 'intra_node.latency_us' is out of "
      "the range of measured values, got 4e-303");
  EXPECT_EQ(parseError(h100With("\"bf16\": 989.0", "\"bf16\": 1e300")),
            "cluster file 'c.json': field 'device.peak_tflops.bf16' is out of "
            "the range of measured values, got 1e+300");
}

TEST(ClusterJson, ResolvesPresetsAndFiles) {
  std::string error;
  FailureOr<Cluster> preset = resolveCluster("a100-80gb", error);
  ASSERT_TRUE(succeeded(preset)) << error;
  EXPECT_DOUBLE_EQ(preset->device.getPeakFlops(NumericType::BF16), 312e12);
  EXPECT_TRUE(failed(resolveCluster("b200", error)));
  EXPECT_EQ(
      error.rfind("unknown cluster 'b200' (expected a preset: h100-sxm, ", 0),
      0u)
      << error;
  EXPECT_TRUE(failed(resolveCluster("/nonexistent/c.json", error)));
  EXPECT_EQ(error.rfind("cannot read cluster file '/nonexistent/c.json': ", 0),
            0u)
      << error;
}

} // namespace

TEST(ClusterJson, ReadsFusedAttention) {
  // No preset assumes a fused attention kernel: dpc's backends have none.
  for (StringRef name : getClusterPresetNames())
    EXPECT_FALSE(getClusterPreset(name)->fusedAttention) << name.str();
  Cluster cluster = *getClusterPreset("h100-sxm");
  cluster.fusedAttention = true;
  std::string error;
  FailureOr<Cluster> parsed =
      parseClusterJson(printClusterJson(cluster), "c.json", error);
  ASSERT_TRUE(succeeded(parsed)) << error;
  EXPECT_TRUE(parsed->fusedAttention);
}

TEST(ClusterPreset, MeshShapeIsTheTopology) {
  Cluster h100 = *getClusterPreset("h100-sxm");
  auto nodeSize = [&](std::initializer_list<int64_t> shape) {
    return placeMeshOnCluster(h100, Mesh(shape)).devicesPerNode;
  };
  EXPECT_EQ(nodeSize({16}), 8);    // One axis fills whole nodes.
  EXPECT_EQ(nodeSize({2, 4}), 4);  // Two nodes of four.
  EXPECT_EQ(nodeSize({4, 2}), 2);  // Four nodes of two.
  EXPECT_EQ(nodeSize({1, 16}), 8); // Larger than a node: whole nodes.
  EXPECT_EQ(nodeSize({2, 2, 4}), 4);
}
