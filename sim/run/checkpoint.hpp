// The timeline of one run of a pod that checkpoints (PodSpec::checkpoint), in closed form: from
// the run's start it loads its checkpoint for `resume` (0 on a fresh start), then computes for
// `interval`, writes for `cost`, computes, writes, ... Progress is made only while computing, at
// the pod's rate, so the work done between two times at one rate is rate x the computing time
// between them. A checkpoint is complete when its write ends; what it keeps is the work done
// when the write began. No events: the Simulation banks progress when the rate changes and at an
// interruption, and plans the completion from the computing time still needed.
#pragma once

#include <algorithm>

#include "sim/pod.hpp"

namespace capsim::checkpoint {

// Computing time in the first `elapsed` of a run.
inline SimDuration computing(const CheckpointPolicy& c, SimDuration resume, SimDuration elapsed) {
  const SimDuration x = elapsed - resume;
  if (x <= 0) return 0;
  const SimDuration cycle = c.interval + c.cost;
  const SimDuration k = x / cycle;
  return k * c.interval + std::min(x - k * cycle, c.interval);
}

// The elapsed time at which a run has computed for `work` (> 0); a run that ends there writes no
// checkpoint at the end.
inline SimDuration elapsed_for(const CheckpointPolicy& c, SimDuration resume, SimDuration work) {
  const SimDuration k = (work - 1) / c.interval;  // complete cycles before the last compute
  return resume + k * (c.interval + c.cost) + (work - k * c.interval);
}

// Checkpoints completed in the first `elapsed` of a run.
inline SimDuration completed(const CheckpointPolicy& c, SimDuration resume, SimDuration elapsed) {
  const SimDuration x = elapsed - resume;
  return x < 0 ? 0 : x / (c.interval + c.cost);
}

// When (elapsed) checkpoint `k` (1-based) of a run completed.
inline SimDuration completed_at(const CheckpointPolicy& c, SimDuration resume, SimDuration k) {
  return resume + k * (c.interval + c.cost);
}

}  // namespace capsim::checkpoint
