// Whether the Eviction API lets a pod go: the PodDisruptionBudgets of the World that select it,
// counted as the disruption controller counts them (pkg/controller/disruption, the eviction
// registry pkg/registry/core/pod/storage/eviction.go):
//   - a budget covers the pods of its namespace that its selector matches (an absent selector
//     matches none; `{}` every pod of the namespace);
//   - expected pods: the covered pods that exist now (arrived, not yet ended). Upstream takes the
//     scale of the pods' controllers for maxUnavailable and percentages; with every replica in
//     existence the two are equal (docs/scenario-format.md, "maintenance", says where they differ);
//   - healthy pods: the covered pods that are Running and Ready: in capsim, running and not
//     terminating (a pod in CrashLoopBackOff is running but not ready);
//   - desiredHealthy: minAvailable (a percentage of expected, rounded up), or expected minus
//     maxUnavailable (a percentage rounded up), or 0 when neither is set;
//   - an eviction is allowed when every covering budget has healthy - desiredHealthy > 0; a pod
//     that is not Running (pending, terminating) is always allowed; a running pod that is not
//     ready is allowed under unhealthyPodEvictionPolicy AlwaysAllow, or under IfHealthyBudget
//     when healthy >= desiredHealthy. A pod covered by more than one budget is refused, as the
//     API server refuses it ("This pod has more than one PodDisruptionBudget").
// Each eviction the caller carries out makes its pod terminating, which the next count sees:
// the disruption controller's DisruptedPods bookkeeping, with no lag.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/world.hpp"

namespace capsim {

struct EvictionVerdict {
  bool allowed = true;
  std::string reason;  // why not: the API's message, with the budget's name and counts
};

class DisruptionBudgets {
 public:
  explicit DisruptionBudgets(const World& world) : world_(&world) {}

  bool any() const { return !world_->disruption_budgets.empty(); }
  EvictionVerdict may_evict(const Cluster& cluster, PodId pod);
  // Whether the Eviction API would let every pod of `pods` go, one after the other (each
  // eviction lowering its budget's healthy count): a budget covering k running pods of them
  // must allow k disruptions. cluster-autoscaler checks a node's budgets so before it drains it.
  EvictionVerdict may_evict_all(const Cluster& cluster, std::span<const PodId> pods);
  // Whether some budget covers `pod`.
  bool covered(PodId pod);

  // The budget's counts now (for messages and tests).
  struct Counts {
    std::int32_t expected = 0;
    std::int32_t healthy = 0;
    std::int32_t desired = 0;
    std::int32_t allowed() const { return healthy > desired ? healthy - desired : 0; }
  };
  Counts counts(const Cluster& cluster, std::size_t budget);

 private:
  // Extends the per-budget lists of covered pods to pods the World gained (Job controllers add
  // pods during a run); a pod's labels and namespace never change.
  void scan();
  bool covers(const DisruptionBudgetSpec& b, const PodSpec& p) const;

  const World* world_;
  std::size_t scanned_ = 0;
  std::vector<std::vector<PodId>> covered_;     // per budget
  std::vector<std::vector<std::uint32_t>> of_;  // per pod: the budgets covering it
};

}  // namespace capsim
