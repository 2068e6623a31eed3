//===- StagePartition.cpp - Contiguous pipeline stages, exactly -----------===//

#include "dpc/Transforms/Planning/StagePartition.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dpc;

double mlir::dpc::getSlowestStageTime(ArrayRef<double> times,
                                      ArrayRef<double> sends,
                                      ArrayRef<unsigned> ends) {
  double slowest = 0.0;
  unsigned first = 0;
  for (unsigned end : ends) {
    double time = sends[end - 1];
    for (unsigned i = first; i < end; ++i)
      time += times[i];
    slowest = std::max(slowest, time);
    first = end;
  }
  return slowest;
}

SmallVector<unsigned> mlir::dpc::splitEvenly(ArrayRef<double> times,
                                             unsigned parts) {
  unsigned n = times.size();
  SmallVector<double> prefix(n + 1, 0.0);
  for (unsigned i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + times[i];
  SmallVector<unsigned> ends;
  unsigned last = 0;
  for (unsigned k = 0; k + 1 < parts; ++k) {
    double target = prefix[n] * (k + 1) / parts;
    // At least one segment here and one for each later range.
    unsigned end = last + 1, latest = n - (parts - k - 1);
    while (end < latest && prefix[end] < target)
      ++end;
    if (end > last + 1 && target - prefix[end - 1] < prefix[end] - target)
      --end;
    ends.push_back(end);
    last = end;
  }
  ends.push_back(n);
  return ends;
}

namespace {
/// Buffers of the exact fill, kept across the bisection's calls.
struct ReachBuffers {
  SmallVector<double> prefix;
  /// start[k * (n + 1) + e]: where stage k starts when it ends at e.
  SmallVector<int> start;
  SmallVector<char> reachable, next;
};
} // namespace

/// Whether some split meets `bound`, and if so one such split in `ends`.
/// Stage by stage, the ends a split can reach: a stage can end at `e` when
/// the latest reachable start before `e` gives a range that meets the
/// bound and fits, since a later start only shortens the range and keeps
/// its send. O(stages x segments) checks.
static bool fill(ArrayRef<double> times, ArrayRef<double> sends,
                 unsigned stages, StageFitsFn fits, double bound,
                 SmallVector<unsigned> &ends, ReachBuffers &buffers) {
  unsigned n = times.size(), width = n + 1;
  SmallVector<double> &prefix = buffers.prefix;
  if (prefix.size() != width) {
    prefix.assign(width, 0.0);
    for (unsigned i = 0; i < n; ++i)
      prefix[i + 1] = prefix[i] + times[i];
    buffers.start.assign(stages * width, -1);
  }
  SmallVector<char> &reachable = buffers.reachable, &next = buffers.next;
  reachable.assign(width, 0);
  reachable[0] = 1;
  for (unsigned k = 0; k < stages; ++k) {
    next.assign(width, 0);
    int *start = &buffers.start[k * width];
    // Stage k ends after k segments at least and leaves one for each
    // later stage.
    unsigned lastEnd = n - (stages - k - 1);
    int latest = -1;
    bool any = false;
    for (unsigned e = k + 1; e <= lastEnd; ++e) {
      if (reachable[e - 1])
        latest = e - 1;
      if (latest < 0)
        continue;
      if (prefix[e] - prefix[latest] + sends[e - 1] <= bound &&
          fits(latest, e, k)) {
        next[e] = 1;
        start[e] = latest;
        any = true;
      }
    }
    if (!any)
      return false;
    std::swap(reachable, next);
  }
  if (!reachable[n])
    return false;
  ends.assign(stages, 0);
  unsigned end = n;
  for (unsigned k = stages; k-- > 0;) {
    ends[k] = end;
    end = buffers.start[k * width + end];
  }
  return true;
}

/// Gives each stage the farthest end that meets `bound` and fits, leaving
/// a segment for each later stage. Exact, and O(segments), when a stage's
/// time can only grow with its end (a send never drops by more than the
/// segments before it take): then no split can get ahead of this one.
static bool fillGreedily(ArrayRef<double> times, ArrayRef<double> sends,
                         unsigned stages, StageFitsFn fits, double bound,
                         SmallVector<unsigned> &ends) {
  unsigned n = times.size();
  ends.clear();
  unsigned first = 0;
  for (unsigned stage = 0; stage < stages; ++stage) {
    unsigned lastEnd = stage + 1 == stages ? n : n - (stages - stage - 1);
    unsigned end = first;
    double time = 0.0;
    while (end < lastEnd && time + times[end] + sends[end] <= bound &&
           fits(first, end + 1, stage)) {
      time += times[end];
      ++end;
    }
    if (end == first)
      return false;
    ends.push_back(end);
    first = end;
  }
  return first == n;
}

std::optional<SmallVector<unsigned>>
mlir::dpc::partitionStages(ArrayRef<double> times, ArrayRef<double> sends,
                           unsigned stages, StageFitsFn fits) {
  unsigned n = times.size();
  if (stages == 0 || stages > n)
    return std::nullopt;
  double lo = 0.0, hi = 0.0;
  for (unsigned i = 0; i < n; ++i) {
    lo = std::max(lo, times[i]);
    hi += times[i] + sends[i];
  }
  // A stage [s, e) takes prefix[e] - prefix[s] + sends[e - 1]: when that
  // never falls as e grows, the greedy fill is exact.
  bool growing = true;
  double previous = 0.0, prefix = 0.0;
  for (unsigned i = 0; i < n; ++i) {
    prefix += times[i];
    growing &= prefix + sends[i] >= previous;
    previous = prefix + sends[i];
  }
  // Bisects [lo, hi] with `fillWithin`, which must succeed at `hi` and
  // give `ends` there; leaves `ends` at the least bound found.
  SmallVector<unsigned> ends, trial;
  auto bisect = [&](auto fillWithin) {
    for (int iteration = 0; iteration < 60 && hi - lo > 1e-9 * hi;
         ++iteration) {
      double mid = 0.5 * (lo + hi);
      if (fillWithin(mid, trial)) {
        // The split found may beat the bound: continue below it.
        hi = std::min(mid, getSlowestStageTime(times, sends, trial));
        ends = trial;
      } else {
        lo = mid;
      }
    }
  };
  auto greedy = [&](double bound, SmallVector<unsigned> &result) {
    return fillGreedily(times, sends, stages, fits, bound, result);
  };
  ReachBuffers buffers;
  auto exact = [&](double bound, SmallVector<unsigned> &result) {
    return fill(times, sends, stages, fits, bound, result, buffers);
  };
  // With no time bound the greedy fill is exact (memory only grows with
  // a stage's end), so it decides whether any split fits.
  if (!greedy(hi, ends))
    return std::nullopt;
  double lowest = lo;
  bisect(greedy);
  if (growing)
    return ends;
  // Sends that fall can make the greedy fill miss a better split: check
  // for one below its bound, and search exactly only if there is one.
  // (The greedy bisection's lower end proves nothing here.)
  double below = getSlowestStageTime(times, sends, ends) * (1 - 1e-9);
  lo = lowest;
  if (below > lo && exact(below, trial)) {
    hi = below;
    ends = trial;
    bisect(exact);
  }
  return ends;
}
