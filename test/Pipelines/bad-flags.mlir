// Every training and planning flag refuses a value outside its range, with
// a message that names the flag and the range, at the user's file.
// RUN: not dpc-opt %s --train --lr=nan 2>&1 | FileCheck %s --check-prefix=LR-NAN
// RUN: not dpc-opt %s --train --lr=inf 2>&1 | FileCheck %s --check-prefix=LR-INF
// RUN: not dpc-opt %s --train --lr=-1 2>&1 | FileCheck %s --check-prefix=LR-NEG
// RUN: not dpc-opt %s --train --optimizer=momentum --momentum=-5 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not dpc-opt %s --train --optimizer=adam --beta1=2 2>&1 | FileCheck %s --check-prefix=BETA1
// A hyperparameter of another optimizer is refused, not ignored.
// RUN: not dpc-opt %s --train --optimizer=sgd --momentum=0.9 2>&1 | FileCheck %s --check-prefix=MOMENTUM-SGD
// RUN: not dpc-opt %s --train --nesterov 2>&1 | FileCheck %s --check-prefix=NESTEROV-SGD
// RUN: not dpc-opt %s --train --optimizer=adamw --momentum=0.5 2>&1 | FileCheck %s --check-prefix=MOMENTUM-ADAM
// RUN: not dpc-opt %s --train --optimizer=momentum --beta2=0.99 2>&1 | FileCheck %s --check-prefix=BETA2-MOMENTUM
// RUN: not dpc-opt %s --train --optimizer=sgd --epsilon=1e-6 2>&1 | FileCheck %s --check-prefix=EPSILON-SGD
// RUN: not dpc-opt %s --train --optimizer=adam --beta2=1 2>&1 | FileCheck %s --check-prefix=BETA2
// RUN: not dpc-opt %s --train --optimizer=adam --epsilon=0 2>&1 | FileCheck %s --check-prefix=EPSILON
// RUN: not dpc-opt %s --train --weight-decay=nan 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not dpc-opt %s --train --max-grad-norm=-1 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not dpc-opt %s --train --micro-batches=1000000 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not dpc-opt %s --train --micro-batches=0 2>&1 | FileCheck %s --check-prefix=MICRO-ZERO
// RUN: not dpc-opt %s --train --precision=fp16 --loss-scale-growth-interval=0 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not dpc-opt %s --train --dp=2 2>&1 | FileCheck %s --check-prefix=NO-MESH
// RUN: not dpc-opt %s --train --mesh=4 --dp=-2 2>&1 | FileCheck %s --check-prefix=DP
// RUN: not dpc-opt %s --train --mesh=4 --pp=4294967296 2>&1 | FileCheck %s --check-prefix=PP
// RUN: not dpc-opt %s --train --mesh=4 --memory-limit=1e400 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not dpc-opt %s --train --mesh=2 --zero=4 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dpc-opt %s --train --zero=1 2>&1 | FileCheck %s --check-prefix=ZERO-NO-MESH
// RUN: not dpc-opt %s --train --partition 2>&1 | FileCheck %s --check-prefix=PARTITION-NO-MESH
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --bucket-cap-mb=1e300 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --bucket-cap-mb=-1 2>&1 | FileCheck %s --check-prefix=BUCKET-NEG
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --grad-compression=topk:0 2>&1 | FileCheck %s --check-prefix=TOPK-ZERO
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --grad-compression=topk:abc 2>&1 | FileCheck %s --check-prefix=TOPK-TEXT
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --grad-compression=topk:nan 2>&1 | FileCheck %s --check-prefix=TOPK-NAN
// RUN: not dpc-opt %s --train --mesh=2 --dp=2 --partition --grad-compression=int8 2>&1 | FileCheck %s --check-prefix=COMPRESSION
// RUN: not dpc-opt %s --train --mesh=2 --dp=1 --pp=2 --partition --pipeline-schedule=zigzag 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not dpc-opt %s --train --pipeline-schedule=gpipe 2>&1 | FileCheck %s --check-prefix=SCHEDULE-NO-MESH
// RUN: not dpc-opt %s --train --mesh=2 --pp=2 --pipeline-schedule=interleaved-1f1b --pipeline-chunks=3 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: not dpc-opt %s --train --mesh=2 --pp=2 --pipeline-chunks=2 2>&1 | FileCheck %s --check-prefix=CHUNKS-ALONE
// RUN: not dpc-opt %s --train --mesh=2 --recompute=yes 2>&1 | FileCheck %s --check-prefix=RECOMPUTE
// RUN: not dpc-opt %s --train --label=target 2>&1 | FileCheck %s --check-prefix=LABEL
// RUN: not dpc-opt %s --emit=elf 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not dpc-opt %s --train --mesh=2 --plan-only --plan-report=%t.missing/plan.json 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not dpc-opt %s --train --mesh=2 --cluster=tpu-v9 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not dpc-opt %s --train --mesh=2 --tp=-1 2>&1 | FileCheck %s --check-prefix=TP
// RUN: not dpc-opt %s --train --recompute=on 2>&1 | FileCheck %s --check-prefix=RECOMPUTE-NO-MESH
// RUN: not dpc-opt %s --train --mesh=2x2 --inner-axis=pp 2>&1 | FileCheck %s --check-prefix=INNER
// RUN: not dpc-opt %s --train --inner-axis=dp 2>&1 | FileCheck %s --check-prefix=INNER-NO-MESH

// MOMENTUM-SGD: dpc-opt: --momentum applies to --optimizer=momentum, not sgd (PyTorch's SGD(momentum=m) is --optimizer=momentum --momentum=m)
// NESTEROV-SGD: dpc-opt: --nesterov applies to --optimizer=momentum, not sgd (PyTorch's SGD(momentum=m) is --optimizer=momentum --momentum=m)
// MOMENTUM-ADAM: dpc-opt: --momentum applies to --optimizer=momentum, not adamw{{$}}
// BETA2-MOMENTUM: dpc-opt: --beta2 applies to --optimizer=adam or adamw, not momentum{{$}}
// EPSILON-SGD: dpc-opt: --epsilon applies to --optimizer=adam or adamw, not sgd{{$}}
// ZERO: error: --zero=4 is not a ZeRO stage: 0, 1, 2 or 3 (-1: the planner chooses)
// ZERO-NO-MESH: dpc-opt: --zero fixes the ZeRO stage of a plan and needs --mesh
// PARTITION-NO-MESH: dpc-opt: --partition needs --mesh
// BUCKET: error: --bucket-cap-mb={{.*}} is outside (0, 1e6]
// BUCKET-NEG: error: --bucket-cap-mb=-1.00 is outside (0, 1e6]
// TOPK-ZERO: error: --grad-compression=topk:0 is not a compression
// TOPK-TEXT: error: --grad-compression=topk:abc is not a compression
// TOPK-NAN: error: --grad-compression=topk:nan is not a compression
// COMPRESSION: error: --grad-compression=int8 is not a compression: none, bf16, fp16 or topk:RATIO with 0 < RATIO <= 1
// SCHEDULE: error: --pipeline-schedule=zigzag is not a schedule: gpipe, 1f1b or interleaved-1f1b
// SCHEDULE-NO-MESH: dpc-opt: --pipeline-schedule fixes a choice of the plan and needs --mesh
// CHUNKS: error: --pipeline-chunks=3 is not 2 or 4 (0: the planner chooses)
// CHUNKS-ALONE: error: --pipeline-chunks=2 needs --pipeline-schedule=interleaved-1f1b
// RECOMPUTE: error: --recompute=yes is not on, attention or off
// LABEL: dpc-opt: --label names the input of an appended loss; with the model's own loss (--loss=from-model) there is none
// EMIT: dpc-opt: --emit=elf is not a kind dpc-opt writes (mlir, shard-mlir, cpu, cpu-source, cuda or cuda-source)
// REPORT: error: cannot write the plan report: cannot open output file '{{.*}}.missing/plan.json'
// CLUSTER: error: unknown cluster 'tpu-v9' (expected a preset: h100-sxm, a100-80gb, v100-16gb-25gbps, h200, cpu-host; or a FILE.json)
// TP: error: --tp=-1 is outside [0, 2^31] (0: the planner chooses)
// RECOMPUTE-NO-MESH: dpc-opt: --recompute fixes a choice of the plan and needs --mesh
// INNER: error: --inner-axis=pp is not tp or dp
// INNER-NO-MESH: dpc-opt: --inner-axis fixes a choice of the plan and needs --mesh

// LR-NAN: bad-flags.mlir:[[@LINE+16]]:1: error: --lr=nan is outside [0, inf)
// LR-INF: error: --lr=inf is outside [0, inf)
// LR-NEG: error: --lr=-1 is outside [0, inf)
// MOMENTUM: error: --momentum=-5 is outside [0, 1)
// BETA1: error: --beta1=2 is outside [0, 1)
// BETA2: error: --beta2=1 is outside [0, 1)
// EPSILON: error: --epsilon=0 is outside (0, inf)
// DECAY: error: --weight-decay=nan is outside [0, inf)
// CLIP: error: --max-grad-norm=-1 is outside [0, inf)
// MICRO: error: --micro-batches=1000000 is outside [1, 4096]
// MICRO-ZERO: error: --micro-batches=0 is outside [1, 4096]
// GROWTH: error: --loss-scale-growth-interval=0 must be at least 1
// NO-MESH: dpc-opt: --dp fixes a degree of a plan and needs --mesh
// DP: error: --dp=-2 is outside [0, 2^31] (0: the planner chooses)
// PP: error: --pp=4294967296 is outside [0, 2^31] (0: the planner chooses)
// MEMORY: dpc-opt: --memory-limit: '1e400' is not a positive size
func.func @forward(%x: tensor<8x4xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<4x4xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
