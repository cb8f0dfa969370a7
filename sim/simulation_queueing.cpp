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
  if (spec.gang != kNoGang) {
    GangRun& g = gangs_[spec.gang];
    if (std::find(g.members.begin(), g.members.end(), pod) == g.members.end()) {
      g.members.push_back(pod);
    }
    // A gang that runs already (a Job's later pods, a replacement for a failed member) takes
    // its stragglers one by one; otherwise one member leads and the others wait with it.
    if (g.running == 0) {
      if (g.leader != kNoPod) {
        g.parked.push_back(pod);
        ++parked_;
        const auto waiting = static_cast<std::int32_t>(g.parked.size() + 1);
        if (waiting != world_->gangs[spec.gang].min_member) return;
        // The gang just became complete: the newest member leads, so the gang is tried now
        // even if the old leader sits in unschedulablePods waiting for an event.
        queue_.remove(g.leader);
        g.parked.back() = g.leader;
      }
      g.leader = pod;
    }
  }
  queue_.add(pod, spec.priority, now);
  request_cycle();
}

void Simulation::place_gang(PodId leader) {
  const GangId gid = cluster_.spec(leader).gang;
  GangRun& g = gangs_[gid];
  const GangSpec& gs = world_->gangs[gid];
  const SimTime now = engine_.now();
  std::vector<PodId> members = g.parked;
  members.push_back(leader);
  std::sort(members.begin(), members.end());
  PodState& ls = cluster_.pod(leader);

  auto fail = [&](const std::string& message, std::uint64_t rejectors, bool unresolvable) {
    const std::uint64_t reason = fnv1a64(message);
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
    cluster_.bind(m, r.placement.node, r.placement.units, r.placement.share_gpu,
                  r.placement.claims);
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
  parked_ -= g.parked.size();
  g.parked.clear();
  g.leader = kNoPod;
  g.finished = 0;
  const bool leader_placed = std::find(unplaced.begin(), unplaced.end(), leader) == unplaced.end();
  if (leader_placed) {
    queue_.done(leader);
    scheduler_.clear_nomination(leader);
  } else {
    queue_.add_unschedulable(leader, first_failure.rejector_plugins, now);
  }
  for (const auto& [m, p] : placed)
    bind_pod(m, p);
  CAPSIM_CHECK(g.running >= gs.min_member, fmt::format("gang {} started {} of its {} members",
                                                       gs.name, g.running, gs.min_member));
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
  const GangId gid = cluster_.spec(pod).gang;
  if (gid != kNoGang) {
    GangRun& g = gangs_[gid];
    auto it = std::find(g.parked.begin(), g.parked.end(), pod);
    if (it != g.parked.end()) {
      g.parked.erase(it);
      --parked_;
    } else if (g.leader == pod) {
      queue_.remove(pod);
      g.leader = kNoPod;
      if (!g.parked.empty()) {  // another member leads
        g.leader = g.parked.back();
        g.parked.pop_back();
        --parked_;
        queue_.add(g.leader, cluster_.spec(g.leader).priority, engine_.now());
        request_cycle();
      }
    }
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

void Simulation::check_queueing_invariants() const {
  models_.admission->check_invariants();
  // No gang runs partly: while any member runs, the members running now and those that ended
  // since the gang started add up to at least its minimum.
  std::size_t parked = 0;
  for (std::size_t gi = 0; gi < gangs_.size(); ++gi) {
    const GangRun& g = gangs_[gi];
    const GangSpec& gs = world_->gangs[gi];
    std::int32_t running = 0;
    for (PodId m : g.members)
      running += cluster_.pod(m).phase == PodPhase::kRunning ||
                         cluster_.pod(m).phase == PodPhase::kCrashBackoff
                     ? 1
                     : 0;
    CAPSIM_CHECK(running == g.running, fmt::format("gang {} counts {} running members, but {} run",
                                                   gs.name, g.running, running));
    CAPSIM_CHECK(running == 0 || running + g.finished >= gs.min_member,
                 fmt::format("gang {} runs partly: {} of its {} members run", gs.name, running,
                             gs.min_member));
    parked += g.parked.size();
  }
  CAPSIM_CHECK(parked == parked_, "the count of parked gang members is off");
}

}  // namespace capsim
