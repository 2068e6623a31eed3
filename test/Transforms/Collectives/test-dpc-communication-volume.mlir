// RUN: dpc-opt %s -test-dpc-communication-volume | FileCheck %s

// The bytes one rank sends per step, by the plan's axis, as the cost model
// counts a collective of S bytes over n ranks: an all-reduce 2(n-1)/n S,
// the others (n-1)/n S (an all-gather's S is its result), a send S.
//   tp: all-reduce of 4096 B over 4 (6144) + all-gather to 128 B over 4 (96)
//   dp: reduce-scatter of 256 B over 2 (128) + two calls of an all-to-all
//       of 256 B over dp x tp = 8 (2 x 224: a group along both axes counts
//       on the data axis) + the reduce-scatter part of a hierarchical
//       all-reduce over dp x tp, 32 B over 4 (24)
//   pp: a send of 40 B; a receive is counted at its sender.
// CHECK-LABEL: func.func @called
// CHECK-NOT: dpc.sent_bytes
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 600 : i64, pp = 40 : i64, tp = 6240 : i64}
module {
  dpc.mesh @plan ["pp"=2, "dp"=2, "tp"=4]
  dpc.mesh @plan_by_node ["pp"=2, "dp"=2, "tp"=4]
  func.func @called(%x: tensor<16x4xf32>) -> tensor<2x32xf32>
      attributes {dpc.partitioned} {
    %0 = dpc.all_to_all %x over @plan ["dp", "tp"] split 0 concat 1 : tensor<16x4xf32> -> tensor<2x32xf32>
    return %0 : tensor<2x32xf32>
  }
  func.func @train_step(%a: tensor<1024xf32>, %b: tensor<64xf32>,
                        %c: tensor<8xf32>, %d: tensor<16x4xf32>,
                        %e: tensor<10xf32>)
      -> (tensor<1024xf32>, tensor<32xf32>, tensor<32xf32>, tensor<2x32xf32>,
          tensor<2x32xf32>, tensor<10xf32>, tensor<2xf32>)
      attributes {dpc.partitioned} {
    %0 = dpc.all_reduce %a over @plan ["tp"] <sum> : tensor<1024xf32>
    %1 = dpc.reduce_scatter %b over @plan ["dp"] <sum> dim 0 : tensor<64xf32> -> tensor<32xf32>
    %2 = dpc.all_gather %c over @plan ["tp"] dim 0 : tensor<8xf32> -> tensor<32xf32>
    %3 = call @called(%d) : (tensor<16x4xf32>) -> tensor<2x32xf32>
    %4 = call @called(%d) : (tensor<16x4xf32>) -> tensor<2x32xf32>
    dpc.send %e over @plan ["pp"] shift 1 : tensor<10xf32>
    %5 = dpc.recv over @plan ["pp"] shift -1 : tensor<10xf32>
    %6 = dpc.reduce_scatter %c over @plan_by_node ["tp"] <sum> dim 0 {dpc.hierarchical = ["dp", "tp"]} : tensor<8xf32> -> tensor<2xf32>
    return %0, %1, %2, %3, %4, %5, %6 : tensor<1024xf32>, tensor<32xf32>, tensor<32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<10xf32>, tensor<2xf32>
  }
}
