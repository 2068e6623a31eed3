// RUN: dpc-opt %s -split-input-file -verify-diagnostics -dpc-append-loss | FileCheck %s --check-prefix=CE
// RUN: dpc-opt %s -split-input-file -verify-diagnostics -dpc-append-loss="kind=mse label=target" | FileCheck %s --check-prefix=MSE
// RUN: not dpc-opt %s -split-input-file -dpc-append-loss="kind=hinge" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not dpc-opt %s -split-input-file -dpc-append-loss="label=x" 2>&1 | FileCheck %s --check-prefix=TAKEN
// RUN: not dpc-opt %s -split-input-file -dpc-append-loss="label=w" 2>&1 | FileCheck %s --check-prefix=TAKEN-PARAM
// RUN: not dpc-opt %s -split-input-file -dpc-append-loss="label=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not dpc-opt %s -split-input-file -dpc-append-loss="output=probs" 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT

// The label is a new input: a name the model already uses, or none, would
// make feeding it ambiguous.
// TAKEN: error: --label=x names argument 0 of the model already; the label needs a name of its own
// TAKEN-PARAM: error: --label=w names argument 1 of the model already; the label needs a name of its own
// EMPTY: error: --label must name the label input the loss reads
// NO-OUTPUT: error: --loss-output=probs names no output of the model (its outputs: logits)
// NO-OUTPUT: error: --loss-output=probs names no output of the model (its outputs: a, b)

// Cross-entropy reads the logits (classes on dimension 1) against a new
// i64 label input; mean over the labels that are not ignore_index.
// CE-LABEL: func.func @forward
// CE-SAME:    %[[X:[a-z0-9]+]]: tensor<4x3xf32> {dpc.input = "x"}, %{{.*}}: tensor<3x5xf32> {dpc.param = "w"}, %[[LABEL:[a-z0-9]+]]: tensor<4xi64> {dpc.input = "label"}
// CE-SAME:    -> (tensor<4x5xf32> {dpc.output = "logits"}, tensor<f32> {dpc.output = "loss"})
// CE:         %[[Y:[0-9]+]] = dpc.matmul
// CE:         %[[L:[0-9]+]] = dpc.softmax_cross_entropy %[[Y]], %[[LABEL]] mean {ignore_index = -100 : i64}
// CE:         return %[[Y]], %[[L]]

// Squared error takes a target of the output's type.
// MSE-LABEL: func.func @forward
// MSE-SAME:    %[[T:[a-z0-9]+]]: tensor<4x5xf32> {dpc.input = "target"}
// MSE:         %[[Y:[0-9]+]] = dpc.matmul
// MSE:         %[[D:[0-9]+]] = dpc.sub %[[Y]], %[[T]]
// MSE:         %[[S:[0-9]+]] = dpc.mul %[[D]], %[[D]]
// MSE:         dpc.reduce_mean %[[S]] [0, 1] : tensor<4x5xf32> -> tensor<f32>

// UNKNOWN: unknown loss 'hinge'; use cross-entropy, mse or from-model
func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}, %w: tensor<3x5xf32> {dpc.param = "w"})
    -> (tensor<4x5xf32> {dpc.output = "logits"}) {
  %0 = dpc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// expected-error @+1 {{the model has several outputs; name the one the loss reads with --loss-output}}
func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}) -> (tensor<4x3xf32> {dpc.output = "a"}, tensor<4x3xf32> {dpc.output = "b"}) {
  return %x, %x : tensor<4x3xf32>, tensor<4x3xf32>
}
