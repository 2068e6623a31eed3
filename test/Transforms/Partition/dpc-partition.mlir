// RUN: dpc-opt %s -dpc-partition -split-input-file | FileCheck %s

// Megatron-LM's MLP block on a 2x2 mesh: the first weight split by columns,
// the second by rows. Forward and backward each need one all-reduce over
// tp (the output and the input gradient); the weight gradients, pending
// over dp, are reduced over dp, and nothing else moves.
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @megatron_mlp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}, %[[W1:[^:]*]]: tensor<16x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>}, %[[W2:[^:]*]]: tensor<16x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>}, %[[DY:[^:]*]]: tensor<4x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
// CHECK-SAME: -> (tensor<4x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}, tensor<4x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}, tensor<16x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>}, tensor<16x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
// CHECK-SAME: attributes {dpc.partitioned}
func.func @megatron_mlp(
    %x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
    %w1: tensor<16x32xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
    %w2: tensor<32x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>},
    %dy: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
        tensor<16x32xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
        tensor<32x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>}) {
  // Forward.
  // CHECK: %[[H:.*]] = dpc.matmul %[[X]], %[[W1]] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %h = dpc.matmul %x, %w1 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK: %[[A:.*]] = dpc.relu %[[H]] : tensor<4x16xf32>
  %a = dpc.relu %h {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} : tensor<8x32xf32>
  // CHECK: %[[YP:.*]] = dpc.matmul %[[A]], %[[W2]] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %yp = dpc.matmul %a, %w2 {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK: %[[Y:.*]] = dpc.all_reduce %[[YP]] over @plan ["tp"] <sum> : tensor<4x16xf32>
  %y = dpc.reshard %yp <@plan, [dp, *]> : tensor<8x16xf32>

  // Backward.
  // CHECK: %[[W2T:.*]] = dpc.transpose %[[W2]] [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %w2t = dpc.transpose %w2 [1, 0] {dpc.sharding = [#dpc.sharding<@plan, [*, tp]>]} : tensor<32x16xf32> -> tensor<16x32xf32>
  // CHECK: %[[DA:.*]] = dpc.matmul %[[DY]], %[[W2T]] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %da = dpc.matmul %dy, %w2t {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %w1t = dpc.transpose %w1 [1, 0] {dpc.sharding = [#dpc.sharding<@plan, [tp, *]>]} : tensor<16x32xf32> -> tensor<32x16xf32>
  %dxp = dpc.matmul %da, %w1t {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK: %[[DX:.*]] = dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x16xf32>
  %dx = dpc.reshard %dxp <@plan, [dp, *]> : tensor<8x16xf32>
  %xt = dpc.transpose %x [1, 0] {dpc.sharding = [#dpc.sharding<@plan, [*, dp]>]} : tensor<8x16xf32> -> tensor<16x8xf32>
  %dw1p = dpc.matmul %xt, %da {dpc.sharding = [#dpc.sharding<@plan, [*, tp], partial = [dp : sum]>]} : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  // CHECK: %[[DW1:.*]] = dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<16x16xf32>
  %dw1 = dpc.reshard %dw1p <@plan, [*, tp]> : tensor<16x32xf32>
  %at = dpc.transpose %a [1, 0] {dpc.sharding = [#dpc.sharding<@plan, [tp, dp]>]} : tensor<8x32xf32> -> tensor<32x8xf32>
  %dw2p = dpc.matmul %at, %dy {dpc.sharding = [#dpc.sharding<@plan, [tp, *], partial = [dp : sum]>]} : (tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
  // CHECK: %[[DW2:.*]] = dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<16x16xf32>
  %dw2 = dpc.reshard %dw2p <@plan, [tp, *]> : tensor<32x16xf32>
  // CHECK-NOT: dpc.all_
  // CHECK-NOT: dpc.reduce_scatter
  // CHECK: return %[[Y]], %[[DX]], %{{.*}}, %[[DW2]] : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
  return %y, %dx, %dw1, %dw2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>
}

// -----

// Each change of layout becomes the collectives that move the blocks. The
// axis of size 1 splits nothing.
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=4]
// CHECK-LABEL: func.func @reshards
func.func @reshards(
    %p: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum]>},
    %rows: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
    %whole: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>},
    %both: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [(dp, tp), *]>},
    %loss: tensor<f32> {dpc.sharding = #dpc.sharding<@plan, [], partial = [dp : mean, tp : mean]>},
    %mixed: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, pp], partial = [dp : sum, tp : max]>},
    %tpsum: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum, tp : sum]>})
    -> (tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, dp]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
        tensor<f32> {dpc.sharding = #dpc.sharding<@plan, []>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *], partial = [tp : sum]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *], partial = [tp : mean]>},
        tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, tp]>}) {
  // A pending sum split over the axis it is pending on: reduce-scatter.
  // CHECK: dpc.reduce_scatter %{{.*}} over @plan ["dp"] <sum> dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %0 = dpc.reshard %p <@plan, [dp, *]> : tensor<8x16xf32>
  // CHECK: dpc.all_gather %{{.*}} over @plan ["dp"] dim 0 : tensor<4x16xf32> -> tensor<8x16xf32>
  %1 = dpc.reshard %rows <@plan, [*, *]> : tensor<8x16xf32>
  // Every rank holds the whole value: each keeps its block, sending nothing.
  // CHECK: dpc.all_slice %{{.*}} over @plan ["tp"] dim 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %2 = dpc.reshard %whole <@plan, [*, tp]> : tensor<8x16xf32>
  // An axis moving from one dimension to another: one all-to-all.
  // CHECK: dpc.all_to_all %{{.*}} over @plan ["dp"] split 1 concat 0 : tensor<4x16xf32> -> tensor<8x8xf32>
  %3 = dpc.reshard %rows <@plan, [*, dp]> : tensor<8x16xf32>
  // Only the axes beyond the shared major part are gathered.
  // CHECK: dpc.all_gather %{{.*}} over @plan ["tp"] dim 0 : tensor<1x16xf32> -> tensor<4x16xf32>
  %4 = dpc.reshard %both <@plan, [dp, *]> : tensor<8x16xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp", "tp"] <mean> : tensor<f32>
  %5 = dpc.reshard %loss <@plan, []> : tensor<f32>
  // Kinds reduce separately.
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<8x16xf32>
  // CHECK-NEXT: dpc.all_reduce %{{.*}} over @plan ["tp"] <max> : tensor<8x16xf32>
  %6 = dpc.reshard %mixed <@plan, [*, *]> : tensor<8x16xf32>
  // Only the pending axis the target does not keep is reduced.
  // CHECK: dpc.reduce_scatter %{{.*}} over @plan ["dp"] <sum> dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %7 = dpc.reshard %tpsum <@plan, [dp, *], partial = [tp : sum]> : tensor<8x16xf32>
  // A value held whole is its own mean: nothing to do for the mean over tp.
  // CHECK: dpc.all_slice %{{.*}} over @plan ["dp"] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %8 = dpc.reshard %whole <@plan, [dp, *], partial = [tp : mean]> : tensor<8x16xf32>
  // A sum pending over both axes, scattered over each into its own
  // dimension: over the inner axis (tp, the node's link) first, so that
  // the outer one reduces a quarter of the value, not all of it.
  // CHECK-NEXT: %[[INNER:.*]] = dpc.reduce_scatter %{{.*}} over @plan ["tp"] <sum> dim 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  // CHECK-NEXT: dpc.reduce_scatter %[[INNER]] over @plan ["dp"] <sum> dim 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  %9 = dpc.reshard %tpsum <@plan, [dp, tp]> : tensor<8x16xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A mean loss over samples split across ranks is finished count-weighted:
// each rank contributes its sum over the average count of samples not
// ignored, so the planned mean over dp is the mean over every sample kept.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @split_mean_loss
// CHECK-SAME: (%[[LOGITS:[^:]*]]: tensor<2x3xf32> {{[^}]*}}}, %[[LABELS:[^:]*]]: tensor<2xi64>
func.func @split_mean_loss(
    %logits: tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
    %labels: tensor<4xi64> {dpc.sharding = #dpc.sharding<@plan, [dp]>})
    -> (tensor<f32> {dpc.sharding = #dpc.sharding<@plan, []>}) {
  // CHECK: %[[SUM:.*]] = dpc.softmax_cross_entropy %[[LOGITS]], %[[LABELS]] sum {ignore_index = -100 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  // CHECK: %[[KEPT:.*]] = dpc.compare ne, %[[LABELS]], %{{.*}} : (tensor<2xi64>, tensor<i64>) -> tensor<2xi1>
  // CHECK: %[[KEPTF:.*]] = dpc.cast %[[KEPT]] : tensor<2xi1> -> tensor<2xf32>
  // CHECK: %[[COUNT:.*]] = dpc.reduce_sum %[[KEPTF]] [0] : tensor<2xf32> -> tensor<f32>
  // CHECK: %[[AVG:.*]] = dpc.all_reduce %[[COUNT]] over @plan ["dp"] <mean> : tensor<f32>
  // CHECK: %[[PART:.*]] = dpc.div %[[SUM]], %[[AVG]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK: %[[LOSS:.*]] = dpc.all_reduce %[[PART]] over @plan ["dp"] <mean> : tensor<f32>
  // CHECK: return %[[LOSS]]
  %0 = dpc.softmax_cross_entropy %logits, %labels mean {ignore_index = -100 : i64, dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean]>]} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = dpc.reshard %0 <@plan, []> : tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A slice takes a split dimension whole: locally, its limit is the local
// size. The dimension it cuts stays whole.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @slice_of_split
func.func @slice_of_split(%x: tensor<8x6xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<8x2xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}) {
  // CHECK: dpc.slice %{{.*}} {limit = array<i64: 4, 5>, start = array<i64: 0, 1>, stride = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x2xf32>
  %0 = dpc.slice %x {start = array<i64: 0, 1>, limit = array<i64: 8, 5>, stride = array<i64: 1, 2>, dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : tensor<8x6xf32> -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// Calls take the callee's local signature; a function without shardings
// (the plain forward) stays as it is.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: (%{{[^:]*}}: tensor<2x3xf32> {{[^}]*}}}) -> (tensor<2x3xf32> {{[^}]*}}}) attributes {dpc.partitioned}
func.func private @callee(%x: tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}) {
  %0 = dpc.neg %x {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @caller
// CHECK: call @callee(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @caller(%x: tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}) {
  %0 = call @callee(%x) {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
// CHECK-LABEL: func.func @unplanned
// CHECK-SAME: (%{{.*}}: tensor<4x3xf32>) -> tensor<4x3xf32> {
func.func @unplanned(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

// -----

// Vocabulary-parallel lookup: each rank holds 3 of the 6 rows. It looks up
// the ids that fall in its rows (counted from its first row, negative ids
// from the end of the whole table) and zeros the others; the pending sum
// over tp is the lookup.
dpc.mesh @plan ["tp"=2]
// CHECK-LABEL: func.func @vocabulary_parallel
func.func @vocabulary_parallel(%table: tensor<6x3xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>},
                               %ids: tensor<4xi64> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4x3xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}) {
  // CHECK: %[[IOTA:.*]] = dpc.constant dense<[0, 1]> : tensor<2xi64>
  // CHECK: %[[MINE:.*]] = dpc.all_slice %[[IOTA]] over @plan ["tp"] dim 0 : tensor<2xi64> -> tensor<1xi64>
  // CHECK: %[[ROWS:.*]] = dpc.gather %{{.*}}[%[[SAFE:.*]]] {axis = 0 : i64} : (tensor<3x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  // CHECK: %[[MASK:.*]] = dpc.reshape %{{.*}} : tensor<4xf32> -> tensor<4x1xf32>
  // CHECK: %[[KEPT:.*]] = dpc.mul %[[ROWS]], %[[MASK]]
  // CHECK: dpc.all_reduce %[[KEPT]] over @plan ["tp"] <sum> : tensor<4x3xf32>
  %0 = dpc.gather %table[%ids] {axis = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [tp : sum]>]} : (tensor<6x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %1 = dpc.reshard %0 <@plan, [*, *]> : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// A dropout over rows split across ranks draws each rank's mask at its
// rows' place in the whole tensor: the offset moves by the block index
// times the block's size.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @split_rows_dropout
func.func @split_rows_dropout(%x: tensor<8x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                              %seed: tensor<i64> {dpc.sharding = #dpc.sharding<@plan, []>},
                              %offset: tensor<i64> {dpc.sharding = #dpc.sharding<@plan, []>})
    -> (tensor<8x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}) {
  // CHECK: %[[BLOCK:.*]] = dpc.reshape %{{.*}} : tensor<1xi64> -> tensor<i64>
  // CHECK: %[[SIZE:.*]] = dpc.constant dense<12> : tensor<i64>
  // CHECK: %[[SKIP:.*]] = dpc.mul %[[BLOCK]], %[[SIZE]]
  // CHECK: %[[AT:.*]] = dpc.add %{{.*}}, %[[SKIP]]
  // CHECK: dpc.dropout %{{.*}}, %{{.*}}, %[[AT]] {ratio = 5.000000e-01 : f32, stream = 0 : i64} : tensor<4x3xf32>
  %0 = dpc.dropout %x, %seed, %offset {ratio = 0.5 : f32, stream = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// Synchronized batch norm: with the batch split, each rank sums its part of
// every channel and the sums are all-reduced (the mean's, then the squared
// deviations'), over the whole batch's count (4 * 3 * 3 = 36 values per
// channel); the rank normalizes its part with them and updates the running
// statistics as training would; its batch statistics are those sums'.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @synchronized_batch_norm
func.func @synchronized_batch_norm(
    %x: tensor<4x2x3x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *, *, *]>},
    %c: tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4x2x3x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *, *, *]>},
        tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  // CHECK: %[[COUNT:.*]] = dpc.constant dense<3.600000e+01> : tensor<f32>
  // CHECK: %[[SUM:.*]] = dpc.reduce_sum %[[X:.*]] [0, 2, 3] : tensor<2x2x3x3xf32> -> tensor<2xf32>
  // CHECK: %[[TOTAL:.*]] = dpc.all_reduce %[[SUM]] over @plan ["dp"] <sum> : tensor<2xf32>
  // CHECK: %[[MEAN:.*]] = dpc.div %[[TOTAL]], %[[COUNT]]
  // CHECK: %[[MEAN4:.*]] = dpc.reshape %[[MEAN]] : tensor<2xf32> -> tensor<1x2x1x1xf32>
  // CHECK: %[[DEV:.*]] = dpc.sub %[[X]], %[[MEAN4]]
  // CHECK: %[[SQ:.*]] = dpc.mul %[[DEV]], %[[DEV]]
  // CHECK: %[[SQSUM:.*]] = dpc.reduce_sum %[[SQ]] [0, 2, 3] : tensor<2x2x3x3xf32> -> tensor<2xf32>
  // CHECK: %[[SQTOTAL:.*]] = dpc.all_reduce %[[SQSUM]] over @plan ["dp"] <sum> : tensor<2xf32>
  // CHECK: %[[VAR:.*]] = dpc.div %[[SQTOTAL]], %[[COUNT]]
  // CHECK: %[[KEEP:.*]] = dpc.constant dense<0.899999976> : tensor<f32>
  // CHECK: %[[TAKE:.*]] = dpc.sub %{{.*}}, %[[KEEP]]
  // CHECK: %[[N1:.*]] = dpc.constant dense<3.500000e+01> : tensor<f32>
  // CHECK: %[[UNBIASED:.*]] = dpc.div %[[SQTOTAL]], %[[N1]]
  // CHECK: %[[NEWMEAN:.*]] = dpc.add
  // CHECK: %[[NEWVAR:.*]] = dpc.add
  // CHECK: %[[Y:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = dpc.batch_norm %[[X]], %{{.*}}, %{{.*}}, %[[MEAN]], %[[VAR]] {epsilon = {{.*}}, momentum = {{.*}}} : tensor<2x2x3x3xf32>, tensor<2xf32>
  // CHECK-NOT: training
  // CHECK: return %[[Y]], %[[NEWMEAN]], %[[NEWVAR]], %[[MEAN]], %[[VAR]]
  %y, %m, %v, %bm, %bv = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training, dpc.sharding = [#dpc.sharding<@plan, [dp, *, *, *]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : tensor<4x2x3x3xf32>, tensor<2xf32>
  return %y, %m, %v, %bm, %bv : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Over an axis of size 1 the statistics are whole already: the op keeps its
// training form and nothing is all-reduced.
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=1]
// CHECK-LABEL: func.func @batch_norm_on_one_device
func.func @batch_norm_on_one_device(
    %x: tensor<4x2x3x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *, *, *]>},
    %c: tensor<2xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4x2x3x3xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *, *, *]>}) {
  // CHECK-NOT: dpc.all_reduce
  // CHECK: dpc.batch_norm {{.*}}training
  // CHECK-NOT: dpc.all_reduce
  %y, %m, %v, %bm, %bv = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training, dpc.sharding = [#dpc.sharding<@plan, [dp, *, *, *]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : tensor<4x2x3x3xf32>, tensor<2xf32>
  return %y : tensor<4x2x3x3xf32>
}

// -----

// A data-parallel embedding gradient: each rank scatters its own tokens'
// updates into the whole table, a partial sum the gradient all-reduce
// finishes; nothing gathers the tokens.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @embedding_gradient
func.func @embedding_gradient(
    %u: tensor<4x3x8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *, *]>},
    %ids: tensor<4x3xi64> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<50x8xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum]>}) {
  // CHECK-NOT: dpc.all_gather
  // CHECK: %[[G:.*]] = dpc.scatter_add %{{.*}}[%{{.*}}] {axis = 0 : i64} : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<50x8xf32>
  // CHECK-NOT: dpc.all_gather
  // CHECK: return %[[G]]
  %0 = dpc.scatter_add %u[%ids] {axis = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [dp : sum]>]} : (tensor<4x3x8xf32>, tensor<4x3xi64>) -> tensor<50x8xf32>
  return %0 : tensor<50x8xf32>
}
