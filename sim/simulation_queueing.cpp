// The Simulation's gang placement and its side of the admission-layer seam (AdmissionHost).
// A gang waits in the scheduling queue as one member, its leader; the other pending members are
// parked. When the leader is popped, every member is placed through the one scheduling core
// (Scheduler::schedule_one) against the cluster with the earlier members bound; if one fails,
// the earlier placements are released and the leader goes back to unschedulablePods with the
// failing member's reasons. Nothing here runs for a scenario without gangs or Kueue objects.
#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"
#include "sim/random.hpp"
#include "sim/simulation.hpp"

namespace capsim {

void Simulation::enqueue_for_scheduling(PodId pod) {
  const PodSpec& spec = cluster_.spec(pod);
  const SimTime now = engine_.now();
  const GangCoordinator::Pending p = gangs_.on_pending(pod);
  if (p.dequeue != kNoPod) queue_.remove(p.dequeue);
  if (!p.queue) return;  // parked behind its gang's leader
  queue_.add(pod, spec.priority, now);
  request_cycle();
}

void Simulation::place_gang(PodId leader) {
  const GangId gid = cluster_.spec(leader).gang;
  const GangSpec& gs = world_->gangs[gid];
  const SimTime now = engine_.now();
  const std::vector<PodId> members = gangs_.attempt(leader);
  PodState& ls = cluster_.pod(leader);

  auto fail = [&](const std::string& message, std::uint64_t rejectors, bool unresolvable) {
    const std::uint64_t reason = text_hash(message);
    if (reason != ls.last_reason) {
      record("pending", leader, kNoNode, message);
      ls.last_reason = reason;
    }
    ls.last_unresolvable = unresolvable;
    queue_.add_unschedulable(leader, rejectors, now);
  };
  if (static_cast<std::int32_t>(members.size()) < gs.min_member) {
    fail(fmt::format("gang {}: {} of its {} pods are pending; it starts when all are", gs.name,
                     members.size(), gs.min_member),
         0, false);
    return;
  }

  // 1. Place the members in order, each against the cluster with the earlier ones bound.
  integrate();
  std::vector<std::pair<PodId, fw::Placement>> placed;
  std::vector<PodId> unplaced;
  fw::ScheduleResult first_failure;
  PodId failed_pod = kNoPod;
  std::size_t placed_before_failure = 0;
  for (PodId m : members) {
    if (m != leader) ++cluster_.pod(m).attempts;
    fw::ScheduleResult r = scheduler_.schedule_one(m);
    if (r.outcome != fw::ScheduleResult::Outcome::kScheduled) {
      if (failed_pod == kNoPod) {
        failed_pod = m;
        placed_before_failure = placed.size();
        first_failure = std::move(r);
      }
      unplaced.push_back(m);
      continue;
    }
    cluster_.bind(m, r.placement.node, r.placement.holdings, r.placement.claims);
    placed.emplace_back(m, std::move(r.placement));
  }
  if (static_cast<std::int32_t>(placed.size()) < gs.min_member) {
    // 2. Too few fit: release what the others reserved, in reverse order.
    for (auto it = placed.rbegin(); it != placed.rend(); ++it)
      cluster_.unbind(it->first);
    fail(fmt::format("gang {} ({} pods, all or nothing): pod {} cannot be placed once {} of its "
                     "members are: {}",
                     gs.name, members.size(), cluster_.spec(failed_pod).name, placed_before_failure,
                     first_failure.message),
         first_failure.rejector_plugins,
         first_failure.unresolvable_everywhere && first_failure.victims.empty());
    return;
  }

  // 3. Enough fit (all, or at least the gang's minimum): start them together (they move at
  //    the pace of the slowest, see pod_rate); members that did not fit follow one by one.
  for (auto it = placed.rbegin(); it != placed.rend(); ++it)
    cluster_.unbind(it->first);
  gangs_.started(gid);
  const bool leader_placed = std::find(unplaced.begin(), unplaced.end(), leader) == unplaced.end();
  if (leader_placed) {
    queue_.done(leader);
    scheduler_.clear_nomination(leader);
  } else {
    queue_.add_unschedulable(leader, first_failure.rejector_plugins, now);
  }
  if (topology_.enabled()) {
    // Locality: the widest level its pods span sets one rate factor for every member (the
    // device model applies it), before binding gives them their rates.
    std::vector<NodeId> nodes;
    for (const auto& [m, p] : placed)
      nodes.push_back(p.node);
    const std::int32_t span = world_->topology.span(nodes);
    const TopologyPlacement where{span, world_->topology.factor(span)};
    for (PodId m : members)
      cluster_.pod(m).topology = where;
    topology_.on_gang_start(gid, where.span, where.factor);
  }
  for (const auto& [m, p] : placed)
    bind_pod(m, p);
  CAPSIM_CHECK(gangs_.running(gid) >= gs.min_member,
               fmt::format("gang {} started {} of its {} members", gs.name, gangs_.running(gid),
                           gs.min_member));
  for (PodId m : unplaced) {
    if (m != leader) enqueue_for_scheduling(m);  // the gang runs: a plain pod now
  }
}

void Simulation::withdraw(PodId pod, const std::string& why) {
  PodState& s = cluster_.pod(pod);
  if (s.phase == PodPhase::kRunning) {
    terminate(pod, "evict", why);
    return;
  }
  if (s.phase != PodPhase::kPending) return;  // terminating already, or ended
  if (gangs_.is_leader(pod)) queue_.remove(pod);
  if (const PodId next = gangs_.withdraw(pod); next != kNoPod) {  // another member leads
    queue_.add(next, cluster_.spec(next).priority, engine_.now());
    request_cycle();
  }
  queue_.remove(pod);
  scheduler_.clear_nomination(pod);
  s.nominated_node = kNoNode;
  record("evict", pod, kNoNode, why);
}

void Simulation::wake_at(SimTime t) {
  engine_.schedule(std::max(t, engine_.now()), kAdmissionTimer);
}

void Simulation::request_admission() {
  if (admission_scheduled_) return;
  admission_scheduled_ = true;
  engine_.schedule(engine_.now(), kAdmissionCycle);
}

}  // namespace capsim
