// The Simulation's scaling steps: a Deployment, ReplicaSet or StatefulSet whose spec.replicas a
// scenario's `scaling:` changes during the run (docs/kubernetes-manifests.md, "Scaling over
// time"). The loader made every pod a step up creates, arriving at the step's time; a step down
// deletes pods as the controllers do:
//   - a ReplicaSet (a Deployment's, or one read alone) deletes the pods first in the order of
//     upstream's controller.ActivePodsWithRanks (pkg/controller/controller_utils.go):
//     unassigned before assigned; Pending before Running; not ready before ready; more pods of
//     the same controller on the node before fewer; ready more recently before longer (on
//     upstream's logarithmic scale, LogarithmicScaleDown); more restarts before fewer; created
//     more recently before earlier (logarithmic too). Where the logarithmic ranks tie upstream
//     compares UIDs, which are random; capsim compares a hash of the pod names.
//   - a StatefulSet deletes its highest ordinals first.
// A deleted pod that runs gets its terminationGracePeriodSeconds, then is gone (final state
// `deleted`); a pending one is gone at once. A pod already terminating to be recreated (after a
// preemption) counts as an unassigned pending pod, as its replacement would upstream.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

#include "sim/check.hpp"
#include "sim/simulation.hpp"

namespace capsim {

namespace {

// Whether a pod of a controller is active (upstream's controller.IsPodActive: not Succeeded,
// Failed or being deleted). A pod terminating to be recreated stands for its replacement.
bool active(const PodState& s, bool deleted) {
  if (deleted) return false;
  return s.phase == PodPhase::kPending || s.phase == PodPhase::kRunning ||
         s.phase == PodPhase::kCrashBackoff || s.phase == PodPhase::kTerminating;
}

// floor(log2(nanoseconds since t)), or -1 for t at or after now (upstream's logarithmicRankDiff,
// which takes math.Log2 of the nanoseconds; computed here on integers, exactly and the same on
// every compiler).
std::int64_t log_rank(SimTime t, SimTime now) {
  const SimTime d = now - t;
  if (d <= 0) return -1;
  return static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(d) * 1000u)) - 1;
}

std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::vector<PodId> Simulation::scale_down_victims(const ScaledController& c,
                                                  std::size_t excess) const {
  const auto deleted = [&](PodId p) { return p < pod_deleted_.size() && pod_deleted_[p] != 0; };
  std::vector<PodId> live;
  for (PodId p : c.pods) {
    if (active(cluster_.pod(p), deleted(p))) live.push_back(p);
  }
  if (c.stateful()) {
    // Highest ordinal first.
    std::vector<PodId> out(live.rbegin(), live.rbegin() + static_cast<std::ptrdiff_t>(excess));
    return out;
  }
  const SimTime now = engine_.now();
  struct Ranked {
    PodId pod;
    bool assigned;
    int phase;  // 0 Pending, 2 Running (upstream's podPhaseToOrdinal)
    bool ready;
    std::int32_t colocated;
    SimTime ready_at;
    std::int32_t restarts;
    SimTime created;
  };
  std::vector<Ranked> r;
  std::map<NodeId, std::int32_t> on_node;
  for (PodId p : live) {
    const PodState& s = cluster_.pod(p);
    const bool assigned = s.node != kNoNode && s.phase != PodPhase::kTerminating;
    if (assigned) ++on_node[s.node];
  }
  for (PodId p : live) {
    const PodState& s = cluster_.pod(p);
    const bool assigned = s.node != kNoNode && s.phase != PodPhase::kTerminating;
    // A pod in crash back-off is Running but not ready; an unassigned one is Pending.
    r.push_back({p, assigned, assigned ? 2 : 0, assigned && s.phase == PodPhase::kRunning,
                 assigned ? on_node[s.node] : 0, s.start, s.restarts, s.pending_since});
  }
  const auto uid_less = [&](PodId a, PodId b) {
    return name_hash(world_->pods[a].name) < name_hash(world_->pods[b].name);
  };
  std::stable_sort(r.begin(), r.end(), [&](const Ranked& a, const Ranked& b) {
    if (a.assigned != b.assigned) return !a.assigned;
    if (a.phase != b.phase) return a.phase < b.phase;
    if (a.ready != b.ready) return !a.ready;
    if (a.colocated != b.colocated) return a.colocated > b.colocated;
    if (a.ready && b.ready && a.ready_at != b.ready_at) {
      const std::int64_t d = log_rank(a.ready_at, now) - log_rank(b.ready_at, now);
      if (d == 0) return uid_less(a.pod, b.pod);
      return d < 0;
    }
    if (a.restarts != b.restarts) return a.restarts > b.restarts;
    if (a.created != b.created) {
      const std::int64_t d = log_rank(a.created, now) - log_rank(b.created, now);
      if (d == 0) return uid_less(a.pod, b.pod);
      return d < 0;
    }
    return false;
  });
  std::vector<PodId> out;
  for (std::size_t i = 0; i < excess && i < r.size(); ++i)
    out.push_back(r[i].pod);
  return out;
}

void Simulation::delete_replica(PodId pod, const std::string& why) {
  if (pod_deleted_.size() <= pod) pod_deleted_.resize(pod + 1u, 0);
  pod_deleted_[pod] = 1;
  PodState& s = cluster_.pod(pod);
  switch (s.phase) {
    case PodPhase::kRunning:
    case PodPhase::kCrashBackoff:
      // Terminated with its grace period; end_termination deletes it.
      terminate(pod, kReplicaDeleteKind, why);
      break;
    case PodPhase::kTerminating:
      // Already leaving (preempted): it is not recreated.
      record(kReplicaDeleteKind, pod, s.node, why);
      break;
    case PodPhase::kPending:
      queue_.remove(pod);
      scheduler_.clear_nomination(pod);
      s.nominated_node = kNoNode;
      lifecycle_.remove(pod, engine_.now());
      record(kReplicaDeleteKind, pod, kNoNode, why);
      record("deleted", pod, kNoNode, "scaled down");
      models_.admission->on_pod_stopped(pod);
      break;
    default:
      CAPSIM_CHECK(false, fmt::format("pod {} is deleted in phase {}", world_->pods[pod].name,
                                      static_cast<int>(s.phase)));
  }
}

void Simulation::on_scale_step(const Event& e) {
  const ScaledController& c = world_->scaled_controllers.at(e.subject);
  const ScaledController::Step& step = c.steps.at(e.data);
  std::size_t live = 0;
  for (PodId p : c.pods) {
    if (active(cluster_.pod(p), p < pod_deleted_.size() && pod_deleted_[p] != 0)) ++live;
  }
  record("replicas", kNoPod, kNoNode,
         fmt::format("{} {}/{}: {} replicas ({} active before the step; {})", c.kind, c.namespace_,
                     c.name, step.replicas, live, step.where));
  const auto target = static_cast<std::size_t>(step.replicas);
  if (live <= target) return;  // a step up: its new pods arrive by themselves
  const std::string why =
      fmt::format("{} {}/{} scaled down to {} replicas", c.kind, c.namespace_, c.name, target);
  for (PodId p : scale_down_victims(c, live - target))
    delete_replica(p, why);
  request_cycle();
}

}  // namespace capsim
