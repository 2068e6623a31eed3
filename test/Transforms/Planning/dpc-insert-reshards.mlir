// RUN: dpc-opt %s -dpc-insert-reshards -split-input-file | FileCheck %s
// RUN: dpc-opt %s -dpc-insert-reshards -dpc-verify-shardings -split-input-file -o /dev/null

// Megatron's MLP on tp: the second matmul leaves a partial sum, which the
// relu's strategy wants whole; the reduction becomes an explicit reshard,
// placed on the consumer's stage and phase. An operand that already lies
// as expected (or differs only in an axis of size 1) gets none.
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
// CHECK-LABEL: func.func @megatron_mlp
func.func @megatron_mlp(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                        %w0: tensor<16x32xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
                        %w1: tensor<32x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
    -> (tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}) {
  // CHECK-NOT: dpc.reshard
  // CHECK: %[[UP:.*]] = dpc.matmul %arg0, %arg1
  // CHECK-NOT: dpc.operand_shardings
  %0 = dpc.matmul %x, %w0 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, *]>, #dpc.sharding<@plan, [*, tp]>],
                           dpc.sharding = [#dpc.sharding<@plan, [*, tp]>]}
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK: %[[DOWN:.*]] = dpc.matmul %[[UP]], %arg2
  %1 = dpc.matmul %0, %w1 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, tp]>, #dpc.sharding<@plan, [tp, *]>],
                           dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [tp : sum]>]}
      : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK: %[[SUM:.*]] = dpc.reshard %[[DOWN]] <@plan, [*, *]> {dpc.phase = #dpc.phase<forward>, dpc.stage = 0 : i64} : tensor<8x16xf32>
  // CHECK: dpc.relu %[[SUM]]
  %2 = dpc.relu %1 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, *]>], dpc.phase = #dpc.phase<forward>,
                    dpc.sharding = [#dpc.sharding<@plan, [*, *]>], dpc.stage = 0 : i64} : tensor<8x16xf32>
  // Two users wanting the same layout share one reshard (dp has one device:
  // (dp, tp) is tp).
  // CHECK: %[[SPLIT:.*]] = dpc.reshard %{{.*}} <@plan, [*, tp]> : tensor<8x16xf32>
  // CHECK-NEXT: dpc.neg %[[SPLIT]]
  // CHECK-NEXT: dpc.exp %[[SPLIT]]
  %3 = dpc.neg %2 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, tp]>],
                   dpc.sharding = [#dpc.sharding<@plan, [*, tp]>]} : tensor<8x16xf32>
  %4 = dpc.exp %2 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, (dp, tp)]>],
                   dpc.sharding = [#dpc.sharding<@plan, [*, (dp, tp)]>]} : tensor<8x16xf32>
  %5 = dpc.add %3, %4 {dpc.operand_shardings = [#dpc.sharding<@plan, [*, tp]>, #dpc.sharding<@plan, [*, tp]>],
                       dpc.sharding = [#dpc.sharding<@plan, [*, tp]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  // The return gives the result as the signature says: gathered.
  // CHECK: %[[WHOLE:.*]] = dpc.reshard %{{.*}} <@plan, [*, *]> : tensor<8x16xf32>
  // CHECK-NEXT: return %[[WHOLE]]
  return %5 : tensor<8x16xf32>
}

// -----

// A gradient leaves its function as a partial sum over dp; the caller
// uses it reduced. The call returns it as the callee does, and the
// all-reduce is a reshard after the call.
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=1]
func.func @grad(%x: tensor<8x4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*], partial = [dp : sum]>}) {
  %0 = dpc.reduce_sum %x [0] {dpc.operand_shardings = [#dpc.sharding<@plan, [dp, *]>],
                              dpc.sharding = [#dpc.sharding<@plan, [*], partial = [dp : sum]>]}
      : tensor<8x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @step
func.func @step(%x: tensor<8x4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  // CHECK: %[[G:.*]] = call @grad(%arg0) {dpc.sharding = [#dpc.sharding<@plan, [*], partial = [dp : sum]>]}
  // CHECK-NEXT: %[[R:.*]] = dpc.reshard %[[G]] <@plan, [*]> : tensor<4xf32>
  // CHECK-NEXT: dpc.neg %[[R]]
  %0 = call @grad(%x) {dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<8x4xf32>) -> tensor<4xf32>
  %1 = dpc.neg %0 {dpc.operand_shardings = [#dpc.sharding<@plan, [*]>],
                   dpc.sharding = [#dpc.sharding<@plan, [*]>]} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
