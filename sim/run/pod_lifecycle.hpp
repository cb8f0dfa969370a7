// The pod lifecycle of a run as one state machine: the only code that changes PodState::phase
// during a run. Each transition is one function named for what happens to the pod; calling one
// from a phase it does not leave is an invariant failure (CAPSIM_CHECK), not a silent no-op.
//
//   NotArrived --arrive--> Pending --start--> Running --finish--> Succeeded | Failed | OomKilled
//   Pending --give_up--> Unschedulable                    (an experiment without retries)
//   Pending --reject--> Failed          (a pod bound by spec.nodeName the kubelet cannot admit)
//   Running | CrashBackoff --terminate--> Terminating --requeue--> Pending
//                                                     --delete_preempted--> Preempted
//   Running --crash--> CrashBackoff --restart--> Running   (the kubelet restarts in place)
//   Running --await_replacement--> Pending                 (the Job controller recreates it)
//
// The counts the run's end depends on (has the run still work that will happen by itself?) are
// kept here, by the transitions, and check_invariants() recounts them from the phases:
// `finishing` = running pods with a finite duration (their completion is planned), `terminating`
// = pods in their grace period, `restarting` = pods in crash back-off plus pods awaiting their
// replacement. Timestamps a transition implies (submit, start, end, the waiting time) are set
// here too; what the pod holds, and the events it needs, stay with the caller.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"

namespace capsim {

class PodLifecycle {
 public:
  explicit PodLifecycle(Cluster& cluster) : cluster_(&cluster) {}

  void arrive(PodId pod, SimTime now);             // NotArrived -> Pending
  void start(PodId pod, SimTime now);              // Pending -> Running
  void finish(PodId pod, PodPhase end);            // Running -> Succeeded | Failed | OomKilled
  void give_up(PodId pod, SimTime now);            // Pending -> Unschedulable
  void reject(PodId pod, SimTime now);             // Pending -> Failed (kubelet admission)
  void terminate(PodId pod);                       // Running | CrashBackoff -> Terminating
  void requeue(PodId pod, SimTime now);            // Terminating -> Pending
  void delete_preempted(PodId pod, SimTime now);   // Terminating -> Preempted
  void remove(PodId pod, SimTime now);             // Pending | Terminating -> Deleted
  void crash(PodId pod);                           // Running -> CrashBackoff
  void restart(PodId pod, SimTime now);            // CrashBackoff -> Running
  void await_replacement(PodId pod, SimTime now);  // Running -> Pending, not yet queued
  // The replacement of a pod that awaited one is made (whatever its phase is by then).
  void replaced(PodId pod);

  // A transition's terminal time: set when the pod has left its node (after the release).
  void set_end(PodId pod, SimTime now) { cluster_->pod(pod).end = now; }

  // Whether something is still to happen by itself: a completion, a grace period's end, a
  // restart or a re-creation.
  bool busy() const { return finishing_ > 0 || terminating_ > 0 || restarting_ > 0; }
  void check_invariants() const;

 private:
  PodState& expect(PodId pod, PodPhase from, const char* transition);
  bool finite(PodId pod) const { return cluster_->spec(pod).duration != kEndOfTime; }

  Cluster* cluster_;
  std::int64_t finishing_ = 0;
  std::int64_t terminating_ = 0;
  std::int64_t restarting_ = 0;
  std::vector<PodId> awaiting_;  // pods whose replacement the Job controller will make
};

}  // namespace capsim
