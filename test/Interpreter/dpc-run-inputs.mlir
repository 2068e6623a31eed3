// dpc-run --interpret: arguments are bound by name, each mismatch is one
// line naming the argument, and nothing is written when a run fails. The
// input files are made by dpc-run itself, from @make_inputs.

// RUN: rm -rf %t && mkdir -p %t
// RUN: dpc-run --interpret %s --function make_inputs --output-dir %t/in

// RUN: dpc-run --interpret %s --function forward --input x=%t/in/x.npy \
// RUN:   --input w=%t/in/w.npy --output-dir %t/ok --print | FileCheck %s --check-prefix=OK
// OK: y: float32[2x3] = [2, 4, 6, 5, 7, 9]
// RUN: ls %t/ok | FileCheck %s --check-prefix=OK-FILES
// OK-FILES: y.npy

// RUN: not dpc-run --interpret %s --function forward --input w=%t/in/w.npy \
// RUN:   --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: dpc-run: error: missing input 'x' (tensor<2x3xf32>); pass --input x=FILE.npy
// RUN: not ls %t/out

// RUN: not dpc-run --interpret %s --function forward --input x=%t/in/wrong_shape.npy \
// RUN:   --input w=%t/in/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: dpc-run: error: input 'x': expected tensor<2x3xf32>, got tensor<3x2xf32> (from {{.*}}wrong_shape.npy)

// RUN: not dpc-run --interpret %s --function forward --input x=%t/in/wrong_dtype.npy \
// RUN:   --input w=%t/in/w.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: dpc-run: error: input 'x': expected tensor<2x3xf32>, got tensor<2x3xi64> (from {{.*}}wrong_dtype.npy)

// RUN: not dpc-run --interpret %s --function forward --input x=%t/in/x.npy \
// RUN:   --input w=%t/in/w.npy --input bias=%t/in/w.npy --output-dir %t/out 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXTRA
// EXTRA: dpc-run: error: unknown input 'bias' (from {{.*}}w.npy): @forward takes x, w

// RUN: not dpc-run --interpret %s --function forward --input x=%t/in/x.npy \
// RUN:   --input x=%t/in/x.npy --print 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: dpc-run: error: input 'x' is given twice

// RUN: not dpc-run --interpret %s --function forward --input x=%s \
// RUN:   --print 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: dpc-run: error: {{.*}}dpc-run-inputs.mlir: not a .npy file (bad magic)

// RUN: not dpc-run --interpret %s --function forward --input x=%t/absent.npy \
// RUN:   --print 2>&1 | FileCheck %s --check-prefix=ABSENT
// ABSENT: dpc-run: error: {{.*}}absent.npy: cannot open: No such file or directory

// RUN: not dpc-run --interpret %s --function backward --print 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-FUNC
// NO-FUNC: dpc-run: error: no function named 'backward' in

// RUN: not dpc-run --interpret %s --print 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: dpc-run: error: {{.*}} has several functions (@make_inputs, @forward, @unnamed); choose one with --function

// RUN: not dpc-run --interpret %s --function forward 2>&1 | FileCheck %s --check-prefix=NOWHERE
// NOWHERE: dpc-run: error: nothing to do with the results: pass --output-dir DIR (or --print)

// Unnamed arguments are argN, unnamed results resultN.
// RUN: dpc-run --interpret %s --function unnamed --input arg0=%t/in/w.npy --output-dir %t/unnamed
// RUN: ls %t/unnamed | FileCheck %s --check-prefix=UNNAMED
// UNNAMED: result0.npy

func.func @make_inputs() -> (tensor<2x3xf32> {dpc.output = "x"},
                             tensor<3xf32> {dpc.output = "w"},
                             tensor<3x2xf32> {dpc.output = "wrong_shape"},
                             tensor<2x3xi64> {dpc.output = "wrong_dtype"}) {
  %x = dpc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w = dpc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = dpc.constant dense<0.0> : tensor<3x2xf32>
  %d = dpc.constant dense<0> : tensor<2x3xi64>
  return %x, %w, %s, %d : tensor<2x3xf32>, tensor<3xf32>, tensor<3x2xf32>, tensor<2x3xi64>
}

func.func @forward(%x: tensor<2x3xf32> {dpc.input = "x"},
                   %w: tensor<3xf32> {dpc.param = "w"})
    -> (tensor<2x3xf32> {dpc.output = "y"}) {
  %y = dpc.add %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

func.func @unnamed(%w: tensor<3xf32>) -> tensor<3xf32> {
  %y = dpc.neg %w : tensor<3xf32>
  return %y : tensor<3xf32>
}
