// Autoscaled node groups, decided the way Kubernetes' cluster-autoscaler decides them
// (docs/autoscaling.md cites the FAQ for each rule), with Karpenter-style consolidation as an
// option. The Autoscaler decides; the Simulation applies its decisions
// (sim/simulation_autoscaling.cpp): it bills and provisions the nodes of a scale-up, makes them
// Ready after the pool's provisioning delay, drains the nodes a scale-down names and removes them.
//
//   - Scale-up: the pods the scheduler found unschedulable are first binpacked onto the nodes
//     already being provisioned (upstream counts upcoming nodes as if they were there); for the
//     rest, each group with room simulates them on its template node (an absent node of the
//     group, as it would be when Ready and empty) with the profile's own PreFilter and Filter
//     plugins, and the estimator binpacks the pods that fit onto copies of the template
//     (first fit, in pending order, upstream's BinpackingNodeEstimator). The expander picks one
//     option; one group scales per scan.
//   - Scale-down (cluster-autoscaler): a Ready group node is unneeded when it holds only
//     DaemonSet pods, or when its utilisation (requests / allocatable: the larger of CPU and
//     memory; on a GPU node its GPUs only) is below the threshold and every other pod on it can
//     be evicted and fits another node (the same PreFilter and Filter plugins, on copies of the
//     nodes that take it; a node found unneeded in the scan takes no pod, and one that took
//     pods is no candidate). Unneeded for the group's scale_down_unneeded_time and not within
//     scale_down_delay_after_add of the last scale-up, empty nodes are removed and one
//     non-empty node at a time is drained, never below the group's min; its
//     PodDisruptionBudgets must allow all its evictions first.
//   - Consolidation (Karpenter, instead of the above): a group node whose pods have not
//     changed for consolidate_after is a candidate: empty, it is removed; otherwise (policy
//     when-empty-or-underutilized) the candidate with the fewest pods whose pods all fit on the
//     other nodes is drained, or, with `replace`, whose pods fit on the other nodes and one new
//     node of a cheaper group: that node is provisioned and the old one drained once it is
//     Ready. One such action at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/framework/framework.hpp"
#include "sim/random.hpp"
#include "sim/run/disruption_budgets.hpp"
#include "sim/run/scale_down_config.hpp"

namespace capsim {

// The event kind of a pod evicted by a scale-down's drain (and of its gang siblings).
inline constexpr std::string_view kScaleDownEvictKind = "scale-down-evict";

class Autoscaler {
 public:
  // kDraining: Ready, cordoned, its pods being evicted (or, for a replacement, waiting for the
  // new node); it leaves the group's size when the drain is decided.
  enum class State : std::uint8_t { kAbsent, kProvisioning, kReady, kDraining };

  // A scale-up the expander chose: `nodes` new nodes of group `group`, for `pods`.
  struct Option {
    std::size_t group = 0;
    std::int32_t nodes = 0;
    std::vector<PodId> pods;  // the pending pods the new nodes were estimated to take
    double waste = 0;         // least-waste's score: idle CPU + memory + GPU fractions
  };

  Autoscaler(const Cluster& cluster, const fw::Framework& framework, std::uint64_t seed,
             ScaleDownConfig scale_down = {});

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
  // A scale-up was requested at `now` (--scale-down-delay-after-add counts from it).
  void note_scale_up(SimTime now);
  // What a scan's scale-down decided.
  struct ScaleDown {
    std::vector<NodeId> removed;  // empty nodes, removed now (absent)
    // A node to drain now (kDraining): its pods are evicted, then it is removed.
    NodeId drain = kNoNode;
    std::string drain_why;  // for the event: utilisation, or the consolidation
    // Consolidation's replacement: `old` is cordoned now (kDraining) and drained once the new
    // node of `group` (provision() it) is Ready.
    NodeId replace_old = kNoNode;
    std::size_t replace_group = 0;
    std::string replace_why;
    // Nodes due for removal that a PodDisruptionBudget keeps (retried after 5 min), and why.
    std::vector<std::pair<NodeId, std::string>> blocked;
  };
  // The scale-down of the scan at `now` (docs/autoscaling.md); `budgets` answer the evictions.
  // Nodes are looked at in group and name order (candidates to drain: least utilised first,
  // or for consolidation fewest pods first).
  // `pending`: the unschedulable pods (as for plan_scale_up); consolidation places them first,
  // as Karpenter's simulation does, so a node is not emptied into room they need.
  ScaleDown plan_scale_down(SimTime now, DisruptionBudgets& budgets,
                            std::span<const PodId> pending = {});
  // Any Ready group node above its group's min that a later scan could remove.
  bool can_shrink() const;
  // A replacement provisioned for consolidation: `fresh` (provisioning) replaces `old`.
  void set_replacement(NodeId fresh, NodeId old) { replaces_[fresh] = old; }
  // The node `fresh` replaces (kNoNode: none); cleared once read.
  NodeId take_replaced(NodeId fresh);
  // The nodes being drained.
  std::vector<NodeId> draining() const;
  SimTime drain_started(NodeId node) const { return drain_started_[node]; }
  // Evictions begin on a node decided to drain (its replacement is Ready).
  void begin_evictions(NodeId node, SimTime now) { drain_started_[node] = now; }
  // A drained node is removed (absent).
  void drained(NodeId node);
  // A drain given up (its node failed): the node is Ready again and back in its group's size.
  void abort_drain(NodeId node);
  // Whether a pod keeps its node from being drained, and why (nullptr: it can be evicted):
  // the FAQ's "What types of pods can prevent CA from removing a node?" as capsim models them.
  const char* unmovable(PodId pod, DisruptionBudgets& budgets) const;
  // The utilisation scale-down judges: sum of GPU allocations / GPUs on a GPU node, else the
  // larger of requested / allocatable CPU and memory (DaemonSet pods included, as upstream's
  // default --ignore-daemonsets-utilization=false).
  static double utilization(const NodeInfo& node);

  // What the Simulation keeps about the nodes it scaled (per node id), for the metrics and the
  // node-hours invariant.
  struct Books {
    std::int64_t nodes_added = 0;
    std::int64_t nodes_removed = 0;
    std::int64_t drains = 0;                  // non-empty nodes drained and removed
    std::int64_t evictions = 0;               // pods evicted by those drains
    std::int64_t drain_kills = 0;             // pods still terminating at max_graceful_termination
    std::int64_t blocked = 0;                 // removals a PodDisruptionBudget refused
    std::int64_t replacements = 0;            // consolidation's cheaper nodes provisioned
    double gpu_seconds_lost = 0;              // work the evictions threw away (since checkpoints)
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
  // Empty but for running DaemonSet pods (which stop with the node).
  bool empty(const NodeInfo& node) const;
  // The group's first absent node (the next one a scale-up adds), or kNoNode when none is left.
  NodeId first_absent(const PoolAutoscaling& spec) const;
  // Scratch copies of the nodes that took pods in a scale-down's simulation.
  struct Scratch {
    std::vector<std::int32_t> slot;  // per node: index in `copies`, or -1
    std::vector<NodeInfo> copies;
    const NodeInfo& view(const NodeInfo& n) const {
      return slot[n.id] >= 0 ? copies[static_cast<std::size_t>(slot[n.id])] : n;
    }
  };
  // Places the evictable pods of `node` on the other nodes (not `excluded`, nor absent, down or
  // cordoned), first fit in node order, on `scratch`; the pods that fit nowhere go to `left`
  // (nullptr: stop at the first). True when all fit.
  bool place_elsewhere(const NodeInfo& node, const std::vector<std::uint8_t>& excluded,
                       Scratch& scratch, std::vector<PodId>* left);
  // Places `pods` the same way on the nodes not `excluded`; those that fit nowhere go to `left`
  // (nullptr: they are skipped). True when all fit.
  bool place_pods(std::span<const PodId> pods, const std::vector<std::uint8_t>& excluded,
                  Scratch& scratch, std::vector<PodId>* left);
  // Non-DaemonSet pods of `node` that have not left (terminating pods are leaving).
  std::vector<PodId> movers(const NodeInfo& node) const;
  // The first unmovable pod's reason, or nullptr.
  const char* blocker(const NodeInfo& node, DisruptionBudgets& budgets) const;
  void plan_cluster_autoscaler(SimTime now, DisruptionBudgets& budgets, ScaleDown& out);
  void plan_consolidation(SimTime now, DisruptionBudgets& budgets, std::span<const PodId> pending,
                          ScaleDown& out);
  // Marks `node` (Ready, group above min) to drain.
  void start_drain(NodeId node, SimTime now);

  const Cluster* cluster_;
  const fw::Framework* fw_;
  const AutoscalerConfig* config_;
  ScaleDownConfig down_;
  fw::Snapshot snap_;
  fw::CycleState state_;
  RandomStream expander_random_;
  std::vector<Group> groups_;
  std::vector<std::int32_t> group_of_;   // per node: its group, or -1
  std::vector<State> node_state_;        // per node
  std::vector<SimTime> unneeded_since_;  // per node; -1: needed
  std::vector<SimTime> drain_started_;   // per node; -1: not evicting (yet)
  std::vector<SimTime> recheck_at_;      // per node: a PDB refused its removal; not before
  std::vector<NodeId> replaces_;         // per node: the node a replacement replaces
  // Consolidation: a signature of each node's pods and when it last changed.
  std::vector<std::uint64_t> pods_sig_;
  std::vector<SimTime> pods_changed_;
  SimTime last_scale_up_ = -1;  // -1: none yet
};

}  // namespace capsim
