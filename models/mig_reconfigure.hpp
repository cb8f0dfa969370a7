// A simple MIG re-layout policy ("pending-demand"): when pods wait for MIG devices that no node
// has free, pick GPUs on mixed-strategy MIG nodes that have nothing on them and re-lay them out
// toward the profile mix the waiting pods ask for — the largest profiles first, as many as fit,
// the rest of the GPU filled with the smallest profile so no slice is left unconfigured. A GPU is
// only ever re-laid out when it is empty; the change takes `duration`, and the policy looks again
// `interval` after a pod failed to schedule.
// Simplifications, documented in docs/sharing.md: demand is counted per profile name over all
// waiting pods, regardless of their node selectors and taints.
#pragma once

#include "sim/reconfigurer.hpp"

namespace capsim {

class PendingDemandReconfigurer final : public MigReconfigurer {
 public:
  PendingDemandReconfigurer(SimDuration duration, SimDuration interval)
      : duration_(duration), interval_(interval) {}
  std::vector<Relayout> plan(const Cluster& cluster, const std::vector<PodId>& pending) override;
  SimDuration duration() const override { return duration_; }
  SimDuration interval() const override { return interval_; }

 private:
  SimDuration duration_;
  SimDuration interval_;
};

}  // namespace capsim
