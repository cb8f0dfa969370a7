// How a run is driven beyond plain replay: whether a pod that cannot be placed waits and retries,
// whether samples are taken on the clock, what is observed after every scheduling attempt, and
// what the experiment adds to the report at the end. The Simulation asks its Experiment and never
// branches on a mode of its own (ns-3's SimulatorImpl: a mode is one injected implementation).
// `replay()` is the default: pods queue, retry and preempt as in a cluster, samples are taken
// every sample interval, nothing more is reported. Fill experiments (models/fill_experiment.hpp)
// are the other kind so far. An Experiment outlives the run it drives; single-threaded.
#pragma once

#include "sim/cluster.hpp"
#include "sim/recorder.hpp"

namespace capsim {

class Experiment {
 public:
  virtual ~Experiment() = default;
  // false: a pod whose scheduling attempt fails ends as unschedulable at once, with no queueing,
  // retry or preemption.
  virtual bool retries_unschedulable() const { return true; }
  // false: no time-driven `sample` rows; the experiment records its own in finish().
  virtual bool time_samples() const { return true; }
  // After every scheduling attempt, with the cluster as the attempt left it.
  virtual void after_attempt(PodId /*pod*/, bool /*placed*/, const Cluster& /*cluster*/) {}
  // After the last event, before the report is closed: the experiment's own samples (through
  // the recorder) and summary metrics (appended to `summary`).
  virtual void finish(Recorder& /*recorder*/, Summary& /*summary*/) {}

  // Plain replay (a shared object without state).
  static Experiment& replay();
};

}  // namespace capsim
