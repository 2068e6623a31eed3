// RUN: dpc-opt %s -test-dpc-cost-model | FileCheck %s
// RUN: dpc-opt %s -test-dpc-cost-model="mesh=2x8 cluster=h100-sxm" | FileCheck %s --check-prefix=MESH
// RUN: dpc-opt %s -test-dpc-cost-model="mesh=8" | FileCheck %s --check-prefix=NODE
// RUN: dpc-opt %s -test-dpc-cost-model="mesh=2x4 cluster=%S/Inputs/round-numbers.json" | FileCheck %s --check-prefix=FILE
// RUN: dpc-opt %s -test-dpc-cost-model="cluster=a100-80gb" | FileCheck %s --check-prefix=A100

// h100-sxm: bf16 989 TFLOP/s, f32 67, HBM 3.35 TB/s; efficiencies 0.54
// (compute) and 0.8 (memory, communication).

// CHECK-LABEL: func.func @layer
// CHECK-SAME: dpc.cluster = "h100-sxm"
// CHECK-SAME: dpc.compute_time_us = 2.234000e+01 : f64
// The one-device mesh communicates nothing.
// CHECK-SAME: dpc.grad_all_reduce = "none"
// CHECK-SAME: dpc.grad_all_reduce_us = 0.000000e+00 : f64
// CHECK-SAME: dpc.mesh = "1"

// Two nodes of eight: reduce-scatter in the node (7 * 3 us + 7/8 * 2 MiB /
// 360 GB/s = 26.10 us), all-reduce the owned eighth across the nodes
// (2 * 10 us + 256 KiB / 40 GB/s = 26.55 us), all-gather in the node.
// MESH-LABEL: func.func @layer
// MESH-SAME: dpc.grad_all_reduce = "hierarchical"
// MESH-SAME: dpc.grad_all_reduce_us = 7.875000e+01 : f64
// MESH-SAME: dpc.mesh = "2x8"

// One node of eight: a tree (2 * 3 latency terms of 3 us) beats the ring
// (2 * 7) on the same bytes, 2 * 7/8 * 2 MiB / 360 GB/s = 10.19 us.
// NODE-LABEL: func.func @layer
// NODE-SAME: dpc.grad_all_reduce = "tree"
// NODE-SAME: dpc.grad_all_reduce_us = 2.819000e+01 : f64

// round-numbers.json: bf16 100 TFLOP/s, 1 TB/s, efficiencies 1; two nodes
// of four. Ring over 4 in the node: 3 us + 3/4 * 2 MiB / 100 GB/s = 18.73 us
// twice; across: 2 * 10 us + 512 KiB / 10 GB/s = 72.43 us.
// FILE-LABEL: func.func @layer
// FILE-SAME: dpc.cluster = "round-numbers"
// FILE-SAME: dpc.grad_all_reduce = "hierarchical"
// FILE-SAME: dpc.grad_all_reduce_us = 1.099000e+02 : f64

func.func @layer(%x: tensor<4096x1024xbf16>,
                 %w: tensor<1024x1024xbf16> {dpc.param = "w"},
                 %a: tensor<4x16xf32>, %b: tensor<16x8xf32>)
    -> (tensor<4096x1024xbf16>, tensor<4x8xf32>) {
  // 2 * 4096 * 1024 * 1024 FLOPs at 534 TFLOP/s: 16.08 us; its 18 MB
  // would take 7.04 us.
  // CHECK: dpc.matmul {{.*}} {dpc.bound = "compute", dpc.bytes = 18874368 : i64, dpc.flops = 8589934592 : i64, dpc.time_us = 1.608000e+01 : f64}
  // FILE: dpc.matmul {{.*}}dpc.time_us = 8.590000e+01 : f64
  // a100-80gb has 312 bf16 TFLOP/s: 2 * 4096 * 1024 * 1024 / (0.54 * 312e12).
  // A100: dpc.matmul {{.*}}dpc.time_us = 5.098000e+01 : f64
  %0 = dpc.matmul %x, %w : (tensor<4096x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16>
  // 16 MiB at 2.68 TB/s.
  // CHECK: dpc.relu {{.*}} {dpc.bound = "memory", dpc.bytes = 16777216 : i64, dpc.flops = 4194304 : i64, dpc.time_us = 6.260000e+00 : f64}
  // FILE: dpc.relu {{.*}}dpc.time_us = 1.678000e+01 : f64
  %1 = dpc.relu %0 : tensor<4096x1024xbf16>
  // A tiny f32 matmul is memory-bound: 896 B at 2.68 TB/s.
  // CHECK: dpc.matmul {{.*}} {dpc.bound = "memory", dpc.bytes = 896 : i64, dpc.flops = 1024 : i64, dpc.time_us = 3.343000e-04 : f64}
  %2 = dpc.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4096x1024xbf16>, tensor<4x8xf32>
}

// Ops without the cost interface (func.return) get nothing.
// CHECK-NOT: return {{.*}}dpc.time_us
