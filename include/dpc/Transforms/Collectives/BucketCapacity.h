//===- BucketCapacity.h - The range of --bucket-cap-mb ----------*- C++ -*-===//
//
// One range for every reader of a bucket's capacity: the planner's and the
// bucket pass's `bucket-cap-mb` options, and the `bucket_cap_bytes` of a
// `dpc.plan` that -dpc-plan-report reprices.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_COLLECTIVES_BUCKETCAPACITY_H
#define DPC_TRANSFORMS_COLLECTIVES_BUCKETCAPACITY_H

namespace mlir::dpc {

/// The largest bucket accepted, in MiB: a terabyte is a typo, and larger
/// sizes overflow the byte counts.
inline constexpr double kMaxBucketCapMb = 1e6;

/// Whether `megabytes` (MiB) is a bucket capacity dpc accepts: in
/// (0, kMaxBucketCapMb]; NaN is not.
inline bool isValidBucketCapMb(double megabytes) {
  return megabytes > 0 && megabytes <= kMaxBucketCapMb;
}

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_COLLECTIVES_BUCKETCAPACITY_H
