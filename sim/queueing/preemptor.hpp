// Kueue's preemption target search. Given a pending workload and the (flavor, resource) pairs
// where it needs room, it finds a minimal set of admitted workloads to evict: candidates come
// from the workload's own ClusterQueue (withinClusterQueue) and from ClusterQueues of its cohort
// tree that borrow (reclaimWithinCohort, borrowWithinCohort); they are removed lowest priority
// and most recently admitted first until the workload fits, then added back in reverse order
// while it still fits. With fair sharing, candidates come from the ClusterQueues with the
// highest dominant resource share, subject to the preemption strategies. Every what-if change to
// the quota tree is undone before a call returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/queueing/kueue_state.hpp"

namespace capsim::queueing {

struct PreemptionTarget {
  WorkloadId workload = -1;
  std::string reason;  // InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing, ...
};

// How a flavor could be made to fit by preemption (Kueue's PreemptionPossibility).
enum class PreemptionPossibility : std::uint8_t { kNoCandidates, kPreempt, kReclaim };

class Preemptor {
 public:
  explicit Preemptor(KueueState& state) : st_(&state) {}

  // Workloads to evict so that `w` with `usage` fits ClusterQueue `cq`; `frs` are the pairs that
  // need preemption. Empty when no set of candidates makes it fit.
  std::vector<PreemptionTarget> targets(const Workload& w, std::int32_t cq, const FrAmounts& usage,
                                        const std::vector<FrIndex>& frs);
  // The flavor assigner's oracle for one pair: can preemption make `val` of `fr` fit, and what
  // is the borrowing level afterwards.
  std::pair<PreemptionPossibility, std::int32_t> simulate(const Workload& w, std::int32_t cq,
                                                          FrIndex fr, std::int64_t val);

  // A human-readable preemption reason ("reclamation within the cohort").
  static std::string_view describe(std::string_view reason);

 private:
  std::vector<WorkloadId> candidates(const Workload& w, std::int32_t cq,
                                     const std::vector<FrIndex>& frs) const;
  std::vector<PreemptionTarget> minimal(std::int32_t cq, const FrAmounts& usage,
                                        const std::vector<FrIndex>& frs,
                                        const std::vector<WorkloadId>& candidates,
                                        bool allow_borrowing,
                                        std::optional<std::int32_t> borrow_below_priority);
  std::vector<PreemptionTarget> fair(const Workload& w, std::int32_t cq, const FrAmounts& usage,
                                     const std::vector<FrIndex>& frs,
                                     const std::vector<WorkloadId>& candidates,
                                     std::optional<std::int32_t> borrow_below_priority);
  void fill_back(std::vector<PreemptionTarget>& targets, std::int32_t cq, const FrAmounts& usage,
                 bool allow_borrowing);
  void remove(WorkloadId w);
  void restore(WorkloadId w);
  void restore_all(const std::vector<PreemptionTarget>& targets);

  KueueState* st_;
};

}  // namespace capsim::queueing
