// Autoscaled node groups, decided the way Kubernetes' cluster-autoscaler decides them
// (docs/autoscaling.md cites the FAQ for each rule). The Autoscaler decides; the Simulation
// applies its decisions (sim/simulation_autoscaling.cpp): it bills and provisions the nodes of a
// scale-up, makes them Ready after the pool's provisioning delay, and removes the nodes a
// scale-down names.
//
//   - Scale-up: the pods the scheduler found unschedulable are first binpacked onto the nodes
//     already being provisioned (upstream counts upcoming nodes as if they were there); for the
//     rest, each group with room simulates them on its template node (an absent node of the
//     group, as it would be when Ready and empty) with the profile's own PreFilter and Filter
//     plugins, and the estimator binpacks the pods that fit onto copies of the template
//     (first fit, in pending order, upstream's BinpackingNodeEstimator). The expander picks one
//     option; one group scales per scan.
//   - Scale-down: a Ready node of a group that holds no pod other than DaemonSet pods is
//     unneeded; unneeded for the group's scale_down_unneeded_time, it is removed, never below
//     the group's min.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/framework/framework.hpp"
#include "sim/random.hpp"

namespace capsim {

class Autoscaler {
 public:
  enum class State : std::uint8_t { kAbsent, kProvisioning, kReady };

  // A scale-up the expander chose: `nodes` new nodes of group `group`, for `pods`.
  struct Option {
    std::size_t group = 0;
    std::int32_t nodes = 0;
    std::vector<PodId> pods;  // the pending pods the new nodes were estimated to take
    double waste = 0;         // least-waste's score: idle CPU + memory + GPU fractions
  };

  Autoscaler(const Cluster& cluster, const fw::Framework& framework, std::uint64_t seed);

  const AutoscalerConfig& config() const { return *config_; }
  std::size_t groups() const { return groups_.size(); }
  const PoolAutoscaling& group(std::size_t g) const { return *groups_[g].spec; }
  // Provisioning and Ready nodes of the group.
  std::int32_t size(std::size_t g) const { return groups_[g].size; }
  std::int32_t total_nodes() const;
  bool is_group_node(NodeId node) const { return node < group_of_.size() && group_of_[node] >= 0; }
  State state(NodeId node) const { return node_state_[node]; }

  // The option the expander picks for `pending` (unschedulable pods), or none when no group
  // with room has a template node some pod fits on.
  std::optional<Option> plan_scale_up(std::span<const PodId> pending);
  // The group's first absent nodes, `count` of them, become provisioning.
  std::vector<NodeId> provision(std::size_t group, std::int32_t count);
  void mark_ready(NodeId node);
  // The Ready nodes unneeded long enough at `now` to be removed (never below a group's min);
  // they become absent. Nodes are looked at in group and name order.
  std::vector<NodeId> plan_scale_down(SimTime now);
  // Any Ready group node above its group's min that a later scan could remove.
  bool can_shrink() const;

  // What the Simulation keeps about the nodes it scaled (per node id), for the metrics and the
  // node-hours invariant.
  struct Books {
    std::int64_t nodes_added = 0;
    std::int64_t nodes_removed = 0;
    double provisioning_wait_seconds = 0;     // pending_seconds_due_to_provisioning
    std::vector<SimTime> requested_at;        // -1: not being provisioned
    std::vector<std::vector<PodId>> waiting;  // the pods a provisioning node was requested for
    std::vector<SimTime> billed_since;        // -1: not billed
    std::vector<double> billed_seconds;       // closed billed stretches
    // The fleet's GPUs (Ready nodes) integrated over time, in all and per sharing mode: the
    // denominators of the allocation and utilisation ratios once the fleet changes size.
    double fleet_gpu_seconds = 0;
    std::array<double, kGpuSharingModes> fleet_mode_gpu_seconds{};
    SimTime fleet_last = 0;
    void advance_fleet(SimTime now, const ClusterTotals& t) {
      const double dt = to_seconds(now - fleet_last);
      fleet_gpu_seconds += t.gpus_total * dt;
      for (std::size_t m = 0; m < kGpuSharingModes; ++m)
        fleet_mode_gpu_seconds[m] += t.mode_gpus[m] * dt;
      fleet_last = now;
    }
  };
  Books books;

 private:
  struct Group {
    const PoolAutoscaling* spec = nullptr;
    std::int32_t size = 0;
  };
  // PreFilter for `pod` (its state stays in state_ for fits()); false when it rejects the pod.
  bool pre_filter(PodId pod);
  // Whether `pod`, after pre_filter(pod), passes every Filter plugin on `node` (a template or a
  // copy of one).
  bool fits(PodId pod, const NodeInfo& node) const;
  // Whether `pod`, after pre_filter(pod), fits a node of the cluster as it is.
  bool fits_existing(PodId pod) const;
  // Adds `pod` to the scratch node as the scheduler would place it (its Reserve's devices).
  void place(PodId pod, NodeInfo& node);
  // Binpacks `pods` onto copies of `tmpl`, opening at most `limit` (upstream's estimator):
  // the pods placed and the copies opened.
  std::int32_t binpack(const NodeInfo& tmpl, std::span<const PodId> pods, std::int32_t limit,
                       std::vector<PodId>& placed, std::vector<NodeInfo>* bins);
  bool unneeded(const NodeInfo& node) const;

  const Cluster* cluster_;
  const fw::Framework* fw_;
  const AutoscalerConfig* config_;
  fw::Snapshot snap_;
  fw::CycleState state_;
  RandomStream expander_random_;
  std::vector<Group> groups_;
  std::vector<std::int32_t> group_of_;   // per node: its group, or -1
  std::vector<State> node_state_;        // per node
  std::vector<SimTime> unneeded_since_;  // per node; -1: needed
};

}  // namespace capsim
