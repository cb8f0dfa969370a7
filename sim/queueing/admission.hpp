// The seam between the Simulation and an admission layer in front of its scheduling queue (Kueue
// semantics in kueue_admission.hpp). The Simulation tells the layer what happens to pods and asks
// it to run admission cycles; the layer answers through AdmissionHost: hand a pod to the
// scheduler, take pods back, record why a workload waits, wake me at time t. A run without Kueue
// objects has the layer `none()`, which manages no pod, so nothing else here runs. Times come from
// the host (the engine's clock); the layer never reads a clock of its own. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/recorder.hpp"
#include "sim/time.hpp"

namespace capsim {

class AdmissionHost {
 public:
  virtual ~AdmissionHost() = default;
  virtual SimTime now() const = 0;
  virtual const Cluster& cluster() const = 0;
  // The pod's workload is admitted: queue the (pending) pod for scheduling.
  virtual void release_to_scheduler(PodId pod) = 0;
  // The pod's workload was evicted: take the pod out of the scheduling queue if it waits there,
  // or terminate it (grace period) if it runs. The host calls on_pod_requeued / on_pod_gone when
  // it has left its node.
  virtual void withdraw(PodId pod, const std::string& why) = 0;
  virtual void record(std::string_view kind, PodId pod, std::string detail) = 0;
  // Calls AdmissionController::on_timer at `t` (>= now).
  virtual void wake_at(SimTime t) = 0;
  // Runs AdmissionController::run_cycles at the current time, after the current event.
  virtual void request_admission() = 0;
};

class AdmissionController {
 public:
  virtual ~AdmissionController() = default;
  virtual void attach(AdmissionHost& host) = 0;

  // A pod became pending (it arrived, a Job created it, or it was recreated after an eviction).
  // Returns false when the layer does not manage it: the caller queues it for scheduling itself.
  virtual bool on_pod_pending(PodId pod) = 0;
  // A managed pod started running.
  virtual void on_pod_started(PodId pod) = 0;
  // A managed pod left its node or ended (completed, failed, preempted and not recreated); for a
  // recreated pod on_pod_pending follows.
  virtual void on_pod_stopped(PodId pod) = 0;

  // Admission cycles until one makes no progress (all at the current time).
  virtual void run_cycles() = 0;
  virtual void on_timer() = 0;
  // Whether a timer or admitted-but-unplaced work could still change something.
  virtual bool busy() const = 0;
  // Pods waiting for admission (pending, not in the scheduling queue).
  virtual std::size_t held_pods() const = 0;

  virtual void sample(SimTime now, Recorder& recorder) = 0;
  // Appends the layer's summary metrics (only for runs that have the layer).
  virtual void add_summary(Summary& summary, SimTime end) const = 0;
  virtual void check_invariants() const = 0;

  // The layer of a run without Kueue objects: it manages no pod, holds none, never wakes and
  // reports nothing. A shared object without state.
  static AdmissionController& none();
};

}  // namespace capsim
