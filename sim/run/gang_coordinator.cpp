#include "sim/run/gang_coordinator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"

namespace capsim {

GangCoordinator::Pending GangCoordinator::on_pending(PodId pod) {
  Pending out;
  const GangId gid = cluster_->spec(pod).gang;
  if (gid == kNoGang) return out;
  Run& g = gangs_[gid];
  if (std::find(g.members.begin(), g.members.end(), pod) == g.members.end()) {
    g.members.push_back(pod);
  }
  // A gang that runs already takes its stragglers one by one; otherwise one member leads and
  // the others wait with it.
  if (g.running != 0) return out;
  if (g.leader != kNoPod) {
    g.parked.push_back(pod);
    ++parked_;
    const auto waiting = static_cast<std::int32_t>(g.parked.size() + 1);
    if (waiting != world_->gangs[gid].min_member) {
      out.queue = false;
      return out;
    }
    // The gang just became complete: the newest member leads, so the gang is tried now even if
    // the old leader sits in unschedulablePods waiting for an event.
    out.dequeue = g.leader;
    g.parked.back() = g.leader;
  }
  g.leader = pod;
  return out;
}

bool GangCoordinator::is_leader(PodId pod) const {
  if (gangs_.empty()) return false;  // without reading the pod's spec
  const GangId g = cluster_->spec(pod).gang;
  return g != kNoGang && gangs_[g].leader == pod;
}

std::vector<PodId> GangCoordinator::attempt(PodId leader) const {
  const Run& g = gangs_[cluster_->spec(leader).gang];
  std::vector<PodId> members = g.parked;
  members.push_back(leader);
  std::sort(members.begin(), members.end());
  return members;
}

void GangCoordinator::started(GangId gang) {
  Run& g = gangs_[gang];
  parked_ -= g.parked.size();
  g.parked.clear();
  g.leader = kNoPod;
  g.finished = 0;
}

PodId GangCoordinator::withdraw(PodId pod) {
  const GangId gid = cluster_->spec(pod).gang;
  if (gid == kNoGang) return kNoPod;
  Run& g = gangs_[gid];
  auto it = std::find(g.parked.begin(), g.parked.end(), pod);
  if (it != g.parked.end()) {
    g.parked.erase(it);
    --parked_;
    return kNoPod;
  }
  if (g.leader != pod) return kNoPod;
  g.leader = kNoPod;
  if (g.parked.empty()) return kNoPod;
  g.leader = g.parked.back();  // another member leads
  g.parked.pop_back();
  --parked_;
  return g.leader;
}

void GangCoordinator::check_invariants() const {
  // No gang runs partly: while any member runs, the members running now and those that ended
  // since the gang started add up to at least its minimum.
  std::size_t parked = 0;
  for (std::size_t gi = 0; gi < gangs_.size(); ++gi) {
    const Run& g = gangs_[gi];
    const GangSpec& gs = world_->gangs[gi];
    std::int32_t running = 0;
    for (PodId m : g.members) {
      const PodPhase ph = cluster_->pod(m).phase;
      running += ph == PodPhase::kRunning || ph == PodPhase::kCrashBackoff ? 1 : 0;
    }
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
