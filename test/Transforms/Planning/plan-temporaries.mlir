// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --plan-report=- -o /dev/null | FileCheck %s
// RUN: dpc-opt %t.mlir -dpc-plan="mesh=2 dp=2 tp=1" -dpc-plan-report -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=2 --plan-report=- -o /dev/null | FileCheck %s --check-prefix=ZERO2
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=2 --bucket-cap-mb=0.01 --plan-report=- -o /dev/null | FileCheck %s --check-prefix=ZERO2-SMALL
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=3 --plan-report=- -o /dev/null | FileCheck %s --check-prefix=ZERO3
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=3 --bucket-cap-mb=0.01 --plan-report=- -o /dev/null | FileCheck %s --check-prefix=ZERO3-SMALL

// A stage holds, besides model state and stored activations, the
// gradients of its largest op's backward. Data parallel over 2 (4 rows per
// device): the classifier's backward holds the gradient of its logits
// (4x16 floats) and makes that of its input (4x256): 256 + 4096 bytes. The
// up-projection holds 4x256 and makes none for the batch; the relu's is
// fused with its neighbours'; the loss's is 4 + 256 bytes. (A weight read
// in another layout than its own: plan-temporaries-gathered.mlir.)
// CHECK: "memory_bytes": {
// CHECK-NEXT: "activations": 4352,
// CHECK-NEXT: "gradients": 81920,
// CHECK-NEXT: "optimizer_state": 0,
// CHECK-NEXT: "optimizer_temporaries": 0,
// CHECK-NEXT: "parameters": 81920,
// CHECK-NEXT: "temporaries": 4352,
// CHECK-NEXT: "total": 172544
// Under ZeRO-2 every weight's gradient is made whole before it is
// reduce-scattered into the rank's shard: the up-projection's backward
// holds its 64x256 floats beside its output's gradient, 65536 + 4096.
// ZERO2: "gradients": 40960,
// After the update, ZeRO-1/2 gather the updated shards whole, a bucket at
// a time, once the activations are freed: the bucket (all 81920 bytes of
// parameters under 25 MiB; 10485.76 with 0.01 MiB buckets) beside the
// half of it that is this rank's shards, concatenated to send. The peak is
// the larger phase: 122880 of model state and 122880 gathered, over the
// backward's 4352 + 69632.
// ZERO2: "optimizer_temporaries": 122880,
// ZERO2: "temporaries": 69632,
// ZERO2: "total": 245760
// ZERO2-SMALL: "optimizer_temporaries": 15728.6{{[0-9]*}}
// ZERO2-SMALL: "total": 196864
// ZeRO-3 also holds parameters gathered whole: two buckets of
// --bucket-cap-mb (the one read, the one prefetched), at most all of the
// stage's (20480 floats, under the default 25 MiB); with 0.01 MiB buckets
// 2 x 10485.76 bytes.
// ZERO3: "optimizer_temporaries": 0,
// ZERO3: "parameters": 40960,
// ZERO3: "temporaries": 151552,
// ZERO3-SMALL: "temporaries": 90603.5
// TABLE: stage segments devices parameters params grads optim activ temp total GiB

func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w1: tensor<64x256xf32> {dpc.param = "up.weight"},
                   %w2: tensor<256x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w1 : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = dpc.relu %0 : tensor<8x256xf32>
  %2 = dpc.matmul %1, %w2 : (tensor<8x256xf32>, tensor<256x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
