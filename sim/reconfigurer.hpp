// MIG reconfiguration as a simulated action. A policy (models/) looks at what waits and proposes
// new layouts for GPUs; the Simulation applies one only if every instance it removes is unused:
// the GPU's units retire at once, the node loses that capacity for the reconfiguration time, and
// then the new instances appear (a node-changed event wakes the pods that wait for them).
#pragma once

#include <vector>

#include "sim/cluster.hpp"

namespace capsim {

struct Relayout {
  NodeId node = kNoNode;
  std::uint16_t gpu = 0;
  GpuLayout layout;
};

class MigReconfigurer {
 public:
  virtual ~MigReconfigurer() = default;
  // Proposes re-layouts of GPUs with nothing on them, given the pods that wait.
  virtual std::vector<Relayout> plan(const Cluster& cluster, const std::vector<PodId>& pending) = 0;
  // How long a re-layout takes (the GPU offers nothing meanwhile).
  virtual SimDuration duration() const = 0;
  // How long after a failed scheduling attempt the policy looks at what waits; kEndOfTime: never.
  virtual SimDuration interval() const = 0;

  // The policy of a run without MIG re-layouts: it never looks, so layouts never change.
  static MigReconfigurer& never();
};

}  // namespace capsim
