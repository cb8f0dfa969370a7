// How the autoscaler shrinks its node groups (the scenario's `autoscaler:` section,
// docs/autoscaling.md): cluster-autoscaler's scale-down of nodes whose pods could move, or
// Karpenter-style consolidation instead. Plain data, part of RunConfig; the defaults are
// upstream's.
#pragma once

#include <cstdint>

#include "sim/time.hpp"

namespace capsim {

// Karpenter's NodePool disruption block: a node whose pods all fit elsewhere (on the other
// nodes, or with `replace` on them and one cheaper new node) is removed or replaced.
enum class ConsolidationPolicy : std::uint8_t { kWhenEmpty, kWhenEmptyOrUnderutilized };
struct ConsolidationConfig {
  bool enabled = false;
  ConsolidationPolicy policy = ConsolidationPolicy::kWhenEmptyOrUnderutilized;  // Karpenter's
  SimDuration consolidate_after = 0;  // since the node's pods last changed (Karpenter: 0s)
  bool replace = true;                // single-node replacement by a cheaper node
};

struct ScaleDownConfig {
  // A node below the threshold (requests / allocatable: the larger of CPU and memory; a GPU
  // node its GPUs only) is a candidate; 0: only empty nodes are removed.
  double utilization_threshold = 0.5;                   // --scale-down-utilization-threshold
  double gpu_utilization_threshold = 0.5;               // --scale-down-gpu-utilization-threshold
  SimDuration delay_after_add = 10 * kMinute;           // --scale-down-delay-after-add
  SimDuration max_graceful_termination = 10 * kMinute;  // --max-graceful-termination-sec
  ConsolidationConfig consolidation;
};

}  // namespace capsim
