// Spot (preemptible) capacity: what the scenario says about its spot pools (discount, reclaim
// rate, notice, return time) and reclaim trace, as plain data, and SpotProcess, which draws the
// modelled reclaims. Each spot pool draws from streams of its own ("spot/<pool>/time", ".../which",
// ".../return" of the spot seed), so adding a spot pool, or failures, never changes the
// workload's arrivals or another pool's reclaims. What a reclaim does (notice, cordon, graceful
// termination without PodDisruptionBudgets, the node's removal and return) is the Simulation's
// (sim/simulation_spot.cpp); docs/spot.md says which cloud behaviour each step follows. Empty
// (the default): no spot pool, and a run is exactly what it was without it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/node.hpp"
#include "sim/random.hpp"
#include "sim/run/failure_model.hpp"
#include "sim/time.hpp"

namespace capsim {

// The event kind (and termination kind) of a pod evicted by a reclaim.
inline constexpr std::string_view kSpotReclaimKind = "spot-reclaim";
// The taint AWS Node Termination Handler puts on a node whose spot instance got an interruption
// notice (with taintNode: true); capsim cordons the node, which keeps new pods off it the same
// way, and names the taint in the events.
inline constexpr std::string_view kSpotNoticeTaint = "aws-node-termination-handler/spot-itn";

// One spot pool: each of its nodes is reclaimed at `per_node_day` reclaims per day of being up
// (a Poisson process), with `notice` between the interruption notice and the node's removal; it
// comes back after a drawn time (no draw: it never comes back).
struct SpotPool {
  std::string pool;
  double discount = 0;      // price = on-demand x (1 - discount), applied by the loader
  double per_node_day = 0;  // 0: reclaimed only by the trace
  SimDuration notice = 2 * kMinute;
  RepairDraw return_after;  // seconds; empty: a reclaimed node does not come back
  std::string source;       // "file:line"
};

// One row of a reclaim trace: at `time`, `node` gets an interruption notice of `notice`; it comes
// back `return_after` after its removal (-1: never).
struct TracedReclaim {
  SimTime time = 0;
  NodeId node = kNoNode;
  SimDuration notice = 0;
  SimDuration return_after = -1;
  std::string source;
};

struct SpotConfig {
  std::uint64_t seed = 0;  // the spot streams' master seed (the loader derives a default)
  std::vector<SpotPool> pools;
  std::vector<TracedReclaim> trace;  // in time order
  bool enabled() const { return !pools.empty(); }
};

// The modelled reclaims of every spot pool with a rate. A pool's nodes together are one Poisson
// process of rate nodes x per_node_day; the node is drawn uniformly among the pool's nodes, and a
// node that is not up then (reclaimed, under notice, down, absent) is not reclaimed again
// (thinning), so the draws depend on the seed and the fleet alone.
class SpotProcess {
 public:
  struct Reclaim {
    NodeId node = kNoNode;
    SimDuration notice = 0;
    SimDuration return_after = -1;  // -1: never
  };

  SpotProcess(const std::vector<NodeSpec>& nodes, const SpotConfig& config);

  std::size_t pools() const { return pools_.size(); }
  const SpotPool& pool(std::size_t p) const { return config_->pools[pools_[p].config]; }
  bool modelled(std::size_t p) const { return pools_[p].rate > 0; }
  // The time of pool `p`'s next modelled reclaim, drawn after `now` (kEndOfTime without a rate).
  SimTime next_time(std::size_t p, SimTime now);
  // Which node of pool `p` gets the notice, and when it comes back (drawn).
  Reclaim draw(std::size_t p);
  const std::vector<TracedReclaim>& trace() const { return config_->trace; }
  // The spot pool index of `node`, or -1 for an on-demand node.
  std::int32_t pool_of(NodeId node) const { return node_pool_[node]; }

 private:
  struct PoolState {
    std::size_t config = 0;
    std::vector<NodeId> nodes;
    double rate = 0;  // reclaims per microsecond, all nodes together
    RandomStream time;
    RandomStream which;
    RandomStream back;
  };
  const SpotConfig* config_;
  std::vector<PoolState> pools_;
  std::vector<std::int32_t> node_pool_;
};

}  // namespace capsim
