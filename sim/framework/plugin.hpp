// The scheduling framework's extension points, one small interface each, as in kube-scheduler:
// QueueSort, PreFilter, Filter, PostFilter, PreScore, Score (+ NormalizeScore), Reserve/Unreserve
// and Bind. A plugin is a Plugin that also implements the interfaces of the points it serves.
// Plugins see the cluster only through a const Snapshot and the pod, keep per-cycle data in
// CycleState, and never touch the engine or the clock: a policy is a pure function of state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/framework/cycle_state.hpp"
#include "sim/framework/status.hpp"
#include "sim/random.hpp"

namespace capsim::fw {

inline constexpr std::int64_t kMaxNodeScore = 100;
inline constexpr std::int64_t kMinNodeScore = 0;

// Cluster changes that can make a rejected pod schedulable; a plugin lists the ones that can
// undo its own rejections (kube-scheduler's EventsToRegister / queueing hints).
enum ClusterEvent : std::uint32_t {
  kEvAssignedPodDeleted = 1u << 0,  // a pod on a node finished, failed or was evicted
  kEvNodeAdded = 1u << 1,
  kEvNodeChanged = 1u << 2,  // labels, taints, allocatable or device layout changed
  kEvAssignedPodAdded = 1u << 3,
  kEvQuotaChanged = 1u << 4,
};
using EventMask = std::uint32_t;
inline constexpr EventMask kAllEvents = 0xffffffffu;

// Read-only view of the cluster for plugins.
class Snapshot {
 public:
  explicit Snapshot(const Cluster& cluster) : cluster_(&cluster) {}
  const World& world() const { return cluster_->world(); }
  const std::vector<NodeInfo>& nodes() const { return cluster_->nodes(); }
  const NodeInfo& node(NodeId n) const { return cluster_->node(n); }
  const PodSpec& pod(PodId p) const { return cluster_->spec(p); }
  const PodState& state(PodId p) const { return cluster_->pod(p); }
  const Cluster& cluster() const { return *cluster_; }

 private:
  const Cluster* cluster_;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  virtual EventMask events_to_register() const { return kAllEvents; }
  // The plugin's random stream, if it draws from one: an explained cycle evaluates its pod a
  // second time (evaluate_pod), and the Framework rewinds these streams around that evaluation
  // so it draws what the cycle drew and the run's later draws stay as without --explain.
  virtual RandomStream* random_stream() { return nullptr; }
  // The plugin's CycleState slot, assigned by the Framework.
  void set_slot(std::size_t slot) { slot_ = slot; }
  std::size_t slot() const { return slot_; }

 private:
  std::size_t slot_ = 0;
};

// A pod waiting in the scheduling queue, as QueueSort sees it.
struct QueuedPodInfo {
  PodId pod = kNoPod;
  std::int32_t priority = 0;
  SimTime timestamp = 0;  // when it (re-)entered the queue
  std::uint64_t seq = 0;  // insertion order, the final tie-break
};

class QueueSortPlugin {
 public:
  virtual ~QueueSortPlugin() = default;
  virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

class PreFilterPlugin {
 public:
  virtual ~PreFilterPlugin() = default;
  virtual Status pre_filter(CycleState& state, const PodSpec& pod, const Snapshot& snap) = 0;
};

// Thresholds on a node's QuickNode copy, for one pod, that a Filter plugin states so the
// scheduler can judge nodes without the plugin or the node's NodeInfo. A plugin states them in
// two senses (FilterPlugin below): necessary (a node that does not meet them is rejected) and
// sufficient (a node that meets them is accepted). Either only skips work: which nodes are
// feasible, in what order, and every message stay as the plugins would say. Fields left at
// their defaults require nothing. The copy names no resource but cpu and memory: `device`
// counts the resource `device_resource`, which the framework sets before asking (the cluster's
// Cluster::quick_device()); a plugin may only use `device` for a pod's request of that one.
struct QuickRequirement {
  ResourceId device_resource = kNoResource;  // set by the framework, read by plugins
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
  std::int32_t device = 0;                          // device_resource free
  std::int32_t units = 0;                           // device_resource units free to hand out
  std::int32_t pods = 0;                            // pod slots free
  std::int32_t whole_gpus = 0;                      // physical GPUs free
  std::int32_t share_left = 0;                      // milli left in the emptiest GPU's pool
  bool schedulable = false;                         // not cordoned
  bool untainted = false;                           // no NoSchedule/NoExecute taint
  bool has_gpus = false;                            // a GPU model at all
  const std::vector<GpuModelId>* models = nullptr;  // the node's model must be listed
  // `models` as bits by id, when index_models() found every listed id below 64 (then a node
  // whose model is 64 or above is not listed).
  std::uint64_t model_bits = 0;
  bool models_indexed = false;

  // Fills model_bits from `models` (the framework calls it once the requirement is complete).
  void index_models() {
    model_bits = 0;
    models_indexed = models != nullptr && std::all_of(models->begin(), models->end(),
                                                      [](GpuModelId m) { return m < 64; });
    if (!models_indexed) return;
    for (GpuModelId m : *models)
      model_bits |= std::uint64_t{1} << m;
  }

  bool met_by(const QuickNode& q) const {
    // Amounts first, then flags: the common rejections are cheap and branch-light.
    const bool amounts = (q.cpu >= cpu) & (q.memory >= memory) & (q.device >= device) &
                         (q.units >= units) & (q.pods >= pods) & (q.whole_gpus >= whole_gpus) &
                         (q.max_share_left >= share_left);
    if (!amounts) return false;
    if ((schedulable && q.unschedulable) || (untainted && q.hard_taints) ||
        (has_gpus && q.gpu_model == kNoGpuModel)) {
      return false;
    }
    if (models == nullptr) return true;
    if (models_indexed) return q.gpu_model < 64 && ((model_bits >> q.gpu_model) & 1) != 0;
    return std::find(models->begin(), models->end(), q.gpu_model) != models->end();
  }
  friend bool operator==(const QuickRequirement&, const QuickRequirement&) = default;
  // Adds `o`'s conditions; false if they cannot be expressed together (two model lists: the
  // first is kept, so a merged necessary requirement stays necessary).
  bool merge(const QuickRequirement& o) {
    cpu = std::max(cpu, o.cpu);
    memory = std::max(memory, o.memory);
    device = std::max(device, o.device);
    units = std::max(units, o.units);
    pods = std::max(pods, o.pods);
    whole_gpus = std::max(whole_gpus, o.whole_gpus);
    share_left = std::max(share_left, o.share_left);
    schedulable = schedulable || o.schedulable;
    untainted = untainted || o.untainted;
    has_gpus = has_gpus || o.has_gpus;
    if (o.models != nullptr) {
      if (models != nullptr) return false;
      models = o.models;
      index_models();
    }
    return true;
  }
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual Status filter(const CycleState& state, const PodSpec& pod,
                        const NodeInfo& node) const = 0;
  // For this pod: fills `req` with conditions every node that filter() accepts meets (so a node
  // that does not meet them is rejected without calling the plugin).
  virtual void quick_necessary(const CycleState& /*state*/, const PodSpec& /*pod*/,
                               QuickRequirement& /*req*/) const {}
  // For this pod: fills `req` so that filter() accepts every node whose QuickNode meets it, and
  // returns true; false if the plugin cannot tell from the copy (then it is always called).
  virtual bool quick_requirement(const CycleState& /*state*/, const PodSpec& /*pod*/,
                                 QuickRequirement& /*req*/) const {
    return false;
  }
  // True if filter() gives pods `a` and `b` the same status on every node, and reads nothing but
  // the pod, what its own PreFilter derived from the pod alone, and the node's NodeInfo (whose
  // every change bumps Cluster::generation()): the scheduler then reuses one pod's failed cycle
  // for the other while the cluster is unchanged (Scheduler's failure memo). False (the
  // default) when the plugin cannot tell; a plugin that reads other nodes or other state must
  // say false.
  virtual bool filters_alike(const PodSpec& /*a*/, const PodSpec& /*b*/) const { return false; }
};

// Per-node results of the filter phase, for PostFilter and the failure message.
struct Diagnosis {
  std::vector<std::pair<NodeId, Status>> node_statuses;  // failing nodes only
  std::uint64_t rejector_plugins = 0;                    // bit per plugin index
  ReasonId prefilter_reason = 0;
  // How many of node_statuses are plain Unschedulable (nodes where preemption might help), set
  // by the scheduler before PostFilter runs, so a remembered failure is not walked again.
  std::int32_t unschedulable_nodes = 0;
};

class Framework;

// One node where preemption would make room, with what pickOneNodeForPreemption compares
// (filled only for an explained cycle: CycleState::explain()).
struct PreemptionCandidate {
  NodeId node = kNoNode;
  std::vector<PodId> victims;  // most important first
  std::int64_t pdb_violations = 0;
  std::int64_t highest_priority = 0;  // of its victims
  std::int64_t priority_sum = 0;      // each victim's priority + 2^31
  SimTime earliest_start_of_highest = 0;
  // The first criterion on which it is worse than the chosen candidate ("" for the chosen one):
  // "pdb_violations", "highest_priority", "priority_sum", "victims", "start_time", or "order"
  // (equal on every criterion: an earlier candidate wins).
  std::string_view lost_on;
};

struct PostFilterResult {
  Status status = Status{Code::kUnschedulable};
  NodeId nominated_node = kNoNode;
  std::vector<PodId> victims;
  std::string message;  // e.g. "preemption: 0/3 nodes are available: ..."
  // Explained cycles only: every candidate found, in candidate order, and the chosen one's index.
  std::vector<PreemptionCandidate> candidates;
  std::int32_t chosen = -1;
};

class PostFilterPlugin {
 public:
  virtual ~PostFilterPlugin() = default;
  virtual PostFilterResult post_filter(CycleState& state, PodId pod, const PodSpec& spec,
                                       const Diagnosis& diagnosis, const Snapshot& snap,
                                       const Framework& fw) = 0;
  // Whether post_filter would read diagnosis.node_statuses in their order for this pod (only
  // then is a remembered diagnosis put into the order of the cycle's start index).
  virtual bool reads_node_order(const PodSpec& /*spec*/, const Snapshot& /*snap*/) const {
    return true;
  }
};

class PreScorePlugin {
 public:
  virtual ~PreScorePlugin() = default;
  virtual Status pre_score(CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                           const Snapshot& snap) = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::int64_t score(const CycleState& state, const PodSpec& pod,
                             const NodeInfo& node) const = 0;
  // Scores `nodes` into `out` (one each, in order): what score() gives for each. A plugin may
  // override it to read compact copies (Cluster::score_nodes) instead of each NodeInfo.
  virtual void score_nodes(const CycleState& state, const PodSpec& pod,
                           std::span<const NodeId> nodes, const Snapshot& snap,
                           std::span<std::int64_t> out) const;
  // NormalizeScore: maps raw scores onto [0, kMaxNodeScore] across the feasible nodes.
  virtual bool has_normalize() const { return false; }
  virtual void normalize(const CycleState& /*state*/, const PodSpec& /*pod*/,
                         std::span<std::int64_t> /*scores*/) const {}
  // The score (after normalize) every node would get in this cycle, when the plugin knows it is
  // the same for all without scoring them (TaintToleration on a fleet without PreferNoSchedule
  // taints); nullopt otherwise. Only the quick path uses it; the reference path scores each node,
  // so the quick-path equality tests check it.
  virtual std::optional<std::int64_t> uniform_score(const CycleState& /*state*/,
                                                    const PodSpec& /*pod*/,
                                                    const Snapshot& /*snap*/) const {
    return std::nullopt;
  }
};

// The node and devices a pod is about to be bound to; Reserve plugins fill the devices.
struct Placement {
  NodeId node = kNoNode;
  std::vector<Holding> holdings;  // device unit replicas (a unit may repeat) or a GPU share
  // DRA: one allocation per PodSpec::claims entry (the DynamicResources plugin fills them).
  std::vector<ClaimAllocation> claims;
  // Set when the kubelet would refuse the devices at admission (the pod then fails).
  std::string admission_error;
};

class ReservePlugin {
 public:
  virtual ~ReservePlugin() = default;
  virtual Status reserve(CycleState& state, const PodSpec& pod, const NodeInfo& node,
                         Placement& placement) = 0;
  virtual void unreserve(CycleState& /*state*/, const PodSpec& /*pod*/, const NodeInfo& /*node*/,
                         Placement& /*placement*/) {}
};

class BindPlugin {
 public:
  virtual ~BindPlugin() = default;
  // Success: this binder takes the pod. Skip: let the next binder decide.
  virtual Status bind(CycleState& state, const PodSpec& pod, const Placement& placement) = 0;
};

}  // namespace capsim::fw
