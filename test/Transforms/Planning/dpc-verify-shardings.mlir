// RUN: dpc-opt %s -dpc-verify-shardings -split-input-file -verify-diagnostics

// A consistent step: a column-split matmul, a reshard that finishes the
// row-split matmul's partial sum, a reduction whose split leaves a pending
// mean, and a constant made in any layout. Functions without shardings are
// not checked.
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @consistent(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                      %w0: tensor<16x32xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
                      %w1: tensor<32x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
    -> (tensor<f32> {dpc.sharding = #dpc.sharding<@plan, [], partial = [dp : mean]>}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = dpc.matmul %0, %w1 {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]}
      : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %2 = dpc.reshard %1 <@plan, [dp, *]> : tensor<8x16xf32>
  %c = "dpc.constant"() <{value = dense<1.0> : tensor<8x16xf32>}> {dpc.sharding = [#dpc.sharding<@plan, [*, *]>]} : () -> tensor<8x16xf32>
  %3 = dpc.reshard %c <@plan, [dp, *]> : tensor<8x16xf32>
  %4 = dpc.add %2, %3 {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %5 = dpc.reduce_mean %4 [0, 1] {dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean]>]}
      : tensor<8x16xf32> -> tensor<f32>
  return %5 : tensor<f32>
}
func.func @unplanned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dpc.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @partial_operand(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [tp : sum]>}) {
  // expected-error @+1 {{'dpc.relu' op operands do not form a strategy of its sharding rule: operand #0 is a pending partial result; a dpc.reshard must finish it}}
  %0 = dpc.relu %x {dpc.sharding = [#dpc.sharding<@plan, [*, *]>]} : tensor<8x16xf32>
  return
}

// -----

// Ops that keep pending sums (add, sub, transpose, reshape) take them and
// leave them pending: micro-batches' gradients accumulate before their one
// reduction.
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @pending_sums(%a: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp], partial = [dp : sum]>},
                        %b: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp], partial = [dp : sum]>}) {
  %0 = dpc.add %a, %b {dpc.sharding = [#dpc.sharding<@plan, [*, tp], partial = [dp : sum]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = dpc.transpose %0 [1, 0] {dpc.sharding = [#dpc.sharding<@plan, [tp, *], partial = [dp : sum]>]}
      : tensor<8x16xf32> -> tensor<16x8xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @pending_and_whole(%a: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum]>},
                             %b: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}) {
  // expected-error @+1 {{operand #1 is pending otherwise than operand #0; a dpc.reshard must finish them alike}}
  %0 = dpc.add %a, %b {dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [dp : sum]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @pending_max(%a: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : max]>},
                       %b: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : max]>}) {
  // expected-error @+1 {{operand #0 is a pending partial result other than a sum}}
  %0 = dpc.add %a, %b {dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [dp : max]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @pending_product(%a: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum]>},
                           %b: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum]>}) {
  // expected-error @+1 {{'dpc.mul' op operands do not form a strategy of its sharding rule: operand #0 is a pending partial result; a dpc.reshard must finish it}}
  %0 = dpc.mul %a, %b {dpc.sharding = [#dpc.sharding<@plan, [*, *], partial = [dp : sum]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @split_two_ways(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                          %y: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>}) {
  // expected-error @+1 {{operand #1 splits dimension 0 over (tp) where operand #0 splits the same loop over (dp)}}
  %0 = dpc.add %x, %y {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]}
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @wrong_result(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
                        %w: tensor<16x4xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>}) {
  // A split contraction leaves a partial sum, which the result must say.
  // expected-error @+1 {{'dpc.matmul' op result #0 is declared #dpc.sharding<@plan, [*, *]> but its rule gives #dpc.sharding<@plan, [*, *], partial = [tp : sum]> from its operands}}
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [*, *]>]}
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @mean_not_sum(%x: tensor<8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  // expected-error @+1 {{but its rule gives #dpc.sharding<@plan, [], partial = [dp : mean]>}}
  %0 = dpc.reduce_mean %x [0] {dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : sum]>]}
      : tensor<8xf32> -> tensor<f32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @whole_axis_split(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [*, tp]>}) {
  // expected-error @+1 {{a loop of size 16 that must stay whole is split over (tp)}}
  %0 = dpc.softmax %x {axis = 1 : i64, dpc.sharding = [#dpc.sharding<@plan, [*, tp]>]} : tensor<8x16xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @no_rule(%g: tensor<8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  // expected-error @+1 {{'dpc.top_k' op has no sharding rule, so operand #0 must be whole on every device, not #dpc.sharding<@plan, [dp]>}}
  %v, %i = dpc.top_k %g k 2 {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : tensor<8xf32> -> tensor<2xf32>, tensor<2xi64>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @padded_dimension_split(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  // expected-error @+1 {{'dpc.pad' op operands do not form a strategy of its sharding rule: a loop of size 4 that must stay whole is split over (dp)}}
  %0 = dpc.pad %x {high = array<i64: 1>, interior = array<i64: 0>, low = array<i64: 1>, value = 0.0 : f64, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : tensor<4xf32> -> tensor<6xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @missing(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  // expected-error @+1 {{'dpc.neg' op result #0 has no sharding}}
  %0 = dpc.neg %x : tensor<4xf32>
  return
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @returned(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  // expected-error @+1 {{'func.return' op operand #0 lies as #dpc.sharding<@plan, [dp]> where #dpc.sharding<@plan, [*]> is expected}}
  return %x : tensor<4xf32>
}

// -----

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @callee(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>})
    -> (tensor<f32> {dpc.sharding = #dpc.sharding<@plan, [], partial = [dp : sum]>}) {
  %0 = dpc.reduce_sum %x [0] {dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : sum]>]} : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @caller(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  // expected-error @+1 {{'func.call' op result #0 is declared #dpc.sharding<@plan, []> but the callee returns #dpc.sharding<@plan, [], partial = [dp : sum]>; a dpc.reshard after the call must change it}}
  %0 = call @callee(%x) {dpc.sharding = [#dpc.sharding<@plan, []>]} : (tensor<4xf32>) -> tensor<f32>
  return
}
