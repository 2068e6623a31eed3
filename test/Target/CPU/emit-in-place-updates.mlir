// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// A parameter, state or optimizer state returned under its own name is
// written over its argument (dpc-run passes the argument's buffer for it),
// straight from the op that makes it when that op's loop reads each
// element of the argument before writing it and nothing reads the argument
// later; otherwise made in the arena and copied over the argument at the
// end.

// The loops that write over an argument they read (the momentum's and
// the weight's, below) say nothing of their pointers; the others' are
// restrict.
// CHECK-LABEL: void dpc_program_0_loop0(float *out, const float *in0, const float *__restrict in1) {
// CHECK-LABEL: void dpc_program_0_loop1(float *out, const float *in0, const float *__restrict in1) {
// CHECK-LABEL: void dpc_program_0_loop2(float *__restrict out, const float *__restrict in0) {
// CHECK-LABEL: void dpc_program_0_loop3(float *__restrict out, const float *__restrict in0, const float *__restrict in1) {
// CHECK-LABEL: int32_t dpc_program_0_part0(
// CHECK: float *[[W:v[0-9]+]] = static_cast<float *>(args[0]);
// CHECK: float *[[V:v[0-9]+]] = static_cast<float *>(args[1]);
// CHECK: float *[[Q:v[0-9]+]] = static_cast<float *>(args[2]);
// CHECK: float *[[K:v[0-9]+]] = static_cast<float *>(args[3]);
// CHECK: float *[[U:v[0-9]+]] = static_cast<float *>(args[4]);
func.func @train_step(%w: tensor<4x4xf32> {dpc.param = "w"},
                      %v: tensor<4x4xf32> {dpc.opt_state = "w:momentum"},
                      %q: tensor<4x4xf32> {dpc.param = "q"},
                      %k: tensor<4xf32> {dpc.state = "k"},
                      %u: tensor<4x4xf32> {dpc.param = "u"},
                      %x: tensor<4x4xf32> {dpc.input = "x"},
                      %s: tensor<2xf32> {dpc.state = "s"})
    -> (tensor<4x4xf32> {dpc.param = "w"},
        tensor<4x4xf32> {dpc.opt_state = "w:momentum"},
        tensor<4x4xf32> {dpc.param = "q"},
        tensor<4xf32> {dpc.state = "k"},
        tensor<4x4xf32> {dpc.param = "u"},
        tensor<4x4xf32> {dpc.output = "u_before"},
        tensor<4x4xf32> {dpc.output = "y"},
        tensor<2xf32> {dpc.state = "s"}) {
  // The momentum and then the weight are updated in their own loops, over
  // their arguments.
  // CHECK: float *[[G:v[0-9]+]] = reinterpret_cast<float *>(arena +
  // CHECK-NEXT: dpc::cpu::matmul([[W]], {4, 4}, false, {{v[0-9]+}}, {4, 4}, false, [[G]], {4, 4});
  %g = dpc.matmul %w, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: float *[[NV:v[0-9]+]] = static_cast<float *>(results[1]);
  // CHECK-NEXT: {
  // CHECK-NEXT: dpc_program_0_loop0([[NV]], [[V]], [[G]]);
  %nv = dpc.add %v, %g : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: float *[[NW:v[0-9]+]] = static_cast<float *>(results[0]);
  // CHECK-NEXT: {
  // CHECK-NEXT: dpc_program_0_loop1([[NW]], [[W]], [[NV]]);
  %nw = dpc.sub %w, %nv : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // A matrix product reads all of q while it writes: made in the arena.
  // CHECK: float *[[NQ:v[0-9]+]] = reinterpret_cast<float *>(arena +
  // CHECK-NEXT: dpc::cpu::matmul([[Q]], {4, 4}, false, [[Q]], {4, 4}, false, [[NQ]], {4, 4});
  %nq = dpc.matmul %q, %q : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // k is read after its update is made (by y's loop): made in the arena.
  // CHECK: float *[[NK:v[0-9]+]] = reinterpret_cast<float *>(arena +
  %nk = dpc.exp %k : tensor<4xf32>
  // CHECK: float *[[Y:v[0-9]+]] = static_cast<float *>(results[6]);
  // CHECK-NEXT: {
  // CHECK-NEXT: dpc_program_0_loop3([[Y]], [[G]], [[K]]);
  %y = dpc.add %g, %k : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  // u is also returned as it was (u_before): it is not written over, and
  // both results are copies. A state returned unchanged as its own update
  // is already in place.
  // CHECK-NOT: std::memcpy
  // CHECK: std::memcpy(results[2], [[NQ]], 64);
  // CHECK-NEXT: std::memcpy(results[3], [[NK]], 16);
  // CHECK-NEXT: std::memcpy(results[4], [[U]], 64);
  // CHECK-NEXT: std::memcpy(results[5], [[U]], 64);
  // CHECK-NEXT: if (host->profile)
  // CHECK-NEXT: host->mark(host->self, {{[0-9]+}});
  // CHECK-NEXT: return 0;
  // The program calling the part says which results are written over
  // which arguments.
  // CHECK-LABEL: extern "C" int32_t dpc_program_0(
  // CHECK: // results[0] is args[0]: the update is written over its argument.
  // CHECK-NEXT: // results[1] is args[1]: the update is written over its argument.
  // CHECK-NEXT: // results[2] is args[2]: the update is written over its argument.
  // CHECK-NEXT: // results[3] is args[3]: the update is written over its argument.
  // CHECK-NEXT: // results[7] is args[6]: the update is written over its argument.
  // CHECK-NOT: // results[
  return %nw, %nv, %nq, %nk, %u, %u, %y, %s
      : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>,
        tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<2xf32>
}
