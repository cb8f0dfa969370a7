// Gangs during a run: which members have become pending, which one leads, which wait parked
// behind it, and how many run. A gang waits in the scheduling queue as one member, its leader;
// the others are parked until the leader's attempt places the gang (all members, or at least
// min_member of them) or none. Once a gang runs, later members (a Job's later pods, the
// replacement of a failed one) are plain pods that the scheduler places one by one. The
// coordinator only keeps this bookkeeping and answers questions about it; the Simulation does
// the queueing and the placing (simulation_queueing.cpp), through the one scheduling core.
// Invariants (check_invariants): the running counts match the members' phases, no gang runs
// partly, and the parked total matches the gangs' parked lists.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/world.hpp"

namespace capsim {

class GangCoordinator {
 public:
  GangCoordinator(const World& world, const Cluster& cluster)
      : world_(&world), cluster_(&cluster), gangs_(world.gangs.size()) {}

  // What to do with a member that became pending: queue it (`queue`), and take an earlier
  // leader out of the queue first (`dequeue`, when the gang just became complete and the newest
  // member leads instead).
  struct Pending {
    bool queue = true;
    PodId dequeue = kNoPod;
  };
  Pending on_pending(PodId pod);

  bool is_leader(PodId pod) const;
  // The members the leader's attempt places: the parked ones and the leader, by pod id.
  std::vector<PodId> attempt(PodId leader) const;
  // The leader's attempt placed enough members: the gang is no longer waiting.
  void started(GangId gang);
  // A member started running, or finished (completed or failed), or was stopped.
  void member_started(GangId gang) { ++gangs_[gang].running; }
  void member_finished(GangId gang) {
    --gangs_[gang].running;
    ++gangs_[gang].finished;
  }
  void member_stopped(GangId gang) { --gangs_[gang].running; }
  // A pending member is taken back (an admission layer evicted its workload). Returns the
  // member that leads now and must be queued, or kNoPod.
  PodId withdraw(PodId pod);

  const std::vector<PodId>& members(GangId gang) const { return gangs_[gang].members; }
  std::int32_t running(GangId gang) const { return gangs_[gang].running; }
  std::size_t parked() const { return parked_; }
  void check_invariants() const;

 private:
  struct Run {
    std::vector<PodId> members;  // every pod of the gang that became pending
    PodId leader = kNoPod;
    std::vector<PodId> parked;
    std::int32_t running = 0;   // members in phase Running (or CrashBackoff: still holding)
    std::int32_t finished = 0;  // members that ended since the gang was last placed
  };
  const World* world_;
  const Cluster* cluster_;
  std::vector<Run> gangs_;
  std::size_t parked_ = 0;
};

}  // namespace capsim
