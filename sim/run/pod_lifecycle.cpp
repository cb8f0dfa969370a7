#include "sim/run/pod_lifecycle.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"

namespace capsim {

namespace {
const char* phase_name(PodPhase p) {
  switch (p) {
    case PodPhase::kNotArrived:
      return "NotArrived";
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kTerminating:
      return "Terminating";
    case PodPhase::kCrashBackoff:
      return "CrashBackoff";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kOomKilled:
      return "OomKilled";
    case PodPhase::kPreempted:
      return "Preempted";
    case PodPhase::kUnschedulable:
      return "Unschedulable";
    case PodPhase::kDeleted:
      return "Deleted";
  }
  return "?";
}
}  // namespace

PodState& PodLifecycle::expect(PodId pod, PodPhase from, const char* transition) {
  PodState& s = cluster_->pod(pod);
  CAPSIM_CHECK(s.phase == from,
               fmt::format("pod {}: {} from phase {}, which it does not leave",
                           cluster_->spec(pod).name, transition, phase_name(s.phase)));
  return s;
}

void PodLifecycle::arrive(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kNotArrived, "arrive");
  s.phase = PodPhase::kPending;
  s.submit = now;
  s.pending_since = now;
}

void PodLifecycle::start(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kPending, "start");
  s.phase = PodPhase::kRunning;
  s.start = now;
  if (s.first_start < 0) s.first_start = now;
  s.waited += now - s.pending_since;
  if (finite(pod)) ++finishing_;
}

void PodLifecycle::finish(PodId pod, PodPhase end) {
  CAPSIM_CHECK(
      end == PodPhase::kSucceeded || end == PodPhase::kFailed || end == PodPhase::kOomKilled,
      "a running pod finishes as Succeeded, Failed or OomKilled");
  PodState& s = expect(pod, PodPhase::kRunning, "finish");
  s.phase = end;
  if (finite(pod)) --finishing_;
}

void PodLifecycle::give_up(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kPending, "give_up");
  s.phase = PodPhase::kUnschedulable;
  s.end = now;
  s.waited += now - s.pending_since;
}

void PodLifecycle::reject(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kPending, "reject");
  s.phase = PodPhase::kFailed;
  s.end = now;
  s.waited += now - s.pending_since;
}

void PodLifecycle::terminate(PodId pod) {
  PodState& s = cluster_->pod(pod);
  if (s.phase == PodPhase::kCrashBackoff) {
    --restarting_;
  } else {
    expect(pod, PodPhase::kRunning, "terminate");
    if (finite(pod)) --finishing_;
  }
  s.phase = PodPhase::kTerminating;
  ++terminating_;
}

void PodLifecycle::requeue(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kTerminating, "requeue");
  s.phase = PodPhase::kPending;
  s.pending_since = now;
  --terminating_;
}

void PodLifecycle::delete_preempted(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kTerminating, "delete_preempted");
  s.phase = PodPhase::kPreempted;
  s.end = now;
  --terminating_;
}

void PodLifecycle::remove(PodId pod, SimTime now) {
  PodState& s = cluster_->pod(pod);
  if (s.phase == PodPhase::kTerminating) {
    --terminating_;
  } else {
    expect(pod, PodPhase::kPending, "remove");
  }
  s.phase = PodPhase::kDeleted;
  s.end = now;
}

void PodLifecycle::crash(PodId pod) {
  PodState& s = expect(pod, PodPhase::kRunning, "crash");
  s.phase = PodPhase::kCrashBackoff;
  if (finite(pod)) --finishing_;
  ++restarting_;
}

void PodLifecycle::restart(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kCrashBackoff, "restart");
  s.phase = PodPhase::kRunning;
  s.start = now;
  --restarting_;
  if (finite(pod)) ++finishing_;
}

void PodLifecycle::await_replacement(PodId pod, SimTime now) {
  PodState& s = expect(pod, PodPhase::kRunning, "await_replacement");
  s.phase = PodPhase::kPending;
  s.pending_since = now;
  if (finite(pod)) --finishing_;
  ++restarting_;
  awaiting_.push_back(pod);
}

void PodLifecycle::replaced(PodId pod) {
  auto it = std::find(awaiting_.begin(), awaiting_.end(), pod);
  CAPSIM_CHECK(it != awaiting_.end(),
               fmt::format("pod {} was replaced without awaiting it", cluster_->spec(pod).name));
  awaiting_.erase(it);
  --restarting_;
}

void PodLifecycle::check_invariants() const {
  std::int64_t finishing = 0, terminating = 0, backoff = 0;
  for (PodId p = 0; p < cluster_->pods().size(); ++p) {
    const PodPhase ph = cluster_->pod(p).phase;
    finishing += ph == PodPhase::kRunning && finite(p) ? 1 : 0;
    terminating += ph == PodPhase::kTerminating ? 1 : 0;
    backoff += ph == PodPhase::kCrashBackoff ? 1 : 0;
  }
  CAPSIM_CHECK(finishing == finishing_,
               fmt::format("{} running pods have a planned completion, but {} are counted",
                           finishing, finishing_));
  CAPSIM_CHECK(
      terminating == terminating_,
      fmt::format("{} pods are terminating, but {} are counted", terminating, terminating_));
  for (PodId p : awaiting_) {
    CAPSIM_CHECK(
        cluster_->pod(p).phase == PodPhase::kPending,
        fmt::format("pod {} awaits its replacement but is not pending", cluster_->spec(p).name));
  }
  CAPSIM_CHECK(backoff + static_cast<std::int64_t>(awaiting_.size()) == restarting_,
               fmt::format("{} pods are in crash back-off and {} await a replacement, but {} "
                           "restarts are counted",
                           backoff, awaiting_.size(), restarting_));
}

}  // namespace capsim
