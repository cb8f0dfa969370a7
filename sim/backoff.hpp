// Exponential back-off doubling to a cap, the one rule behind the kubelet's CrashLoopBackOff
// (10 s doubling to 5 min), the Job controller's pod re-creation (10 s doubling to 6 min), Kueue's
// requeueing after an eviction and the scheduling queue's podInitialBackoff/podMaxBackoff: the
// n-th back-off (n >= 1) is base * 2^(n-1), but never more than `cap`. n <= 0 gives `base`.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/time.hpp"

namespace capsim {

constexpr SimDuration exponential_backoff(SimDuration base, SimDuration cap, std::int64_t n) {
  SimDuration d = base;
  for (std::int64_t i = 1; i < n && d < cap; ++i)
    d *= 2;
  return std::min(d, cap);
}

}  // namespace capsim
