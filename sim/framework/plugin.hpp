// The scheduling framework's extension points, one small interface each, as in kube-scheduler:
// QueueSort, PreFilter, Filter, PostFilter, PreScore, Score (+ NormalizeScore), Reserve/Unreserve
// and Bind. A plugin is a Plugin that also implements the interfaces of the points it serves.
// Plugins see the cluster only through a const Snapshot and the pod, keep per-cycle data in
// CycleState, and never touch the engine or the clock: a policy is a pure function of state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/framework/cycle_state.hpp"
#include "sim/framework/status.hpp"

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

// Necessary conditions a Filter plugin guarantees, which the scheduler can test on the compact
// QuickNode copy before running the plugins: a node failing one of them would certainly be
// rejected by that plugin. They only skip work; which nodes are feasible and in what order does
// not change.
struct QuickChecks {
  bool resources = false;   // cpu, memory, nvidia.com/gpu and the pod count must fit
  bool whole_gpus = false;  // a whole-GPU pod needs that many physical GPUs free
  bool gpu_share = false;   // a GPU-share pod needs one GPU with at least its share left
};

// What a node's QuickNode must show for a Filter plugin to accept it, for one pod: thresholds on
// the copy's fields. A plugin that can say sets the fields it cares about (once per pod), and
// the scheduler then needs neither the plugin nor the node's NodeInfo to know the verdict on a
// node that meets them. Fields left at their defaults require nothing.
struct QuickRequirement {
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
  std::int32_t gpus = 0;                            // nvidia.com/gpu free
  std::int32_t pods = 0;                            // pod slots free
  std::int32_t whole_gpus = 0;                      // physical GPUs free
  std::int32_t gpu_share = 0;                       // milli left on the emptiest GPU
  bool schedulable = false;                         // not cordoned
  bool untainted = false;                           // no NoSchedule/NoExecute taint
  bool has_gpus = false;                            // a GPU model at all
  const std::vector<GpuModelId>* models = nullptr;  // the node's model must be listed

  bool met_by(const QuickNode& q) const {
    return q.cpu >= cpu && q.memory >= memory && q.gpus >= gpus && q.pods >= pods &&
           q.whole_gpus >= whole_gpus && q.max_gpu_left >= gpu_share &&
           !(schedulable && q.unschedulable) && !(untainted && q.hard_taints) &&
           !(has_gpus && q.gpu_model == kNoGpuModel) &&
           (models == nullptr ||
            std::find(models->begin(), models->end(), q.gpu_model) != models->end());
  }
  // Adds `o`'s conditions; false if they cannot be expressed together (two model lists).
  bool merge(const QuickRequirement& o) {
    cpu = std::max(cpu, o.cpu);
    memory = std::max(memory, o.memory);
    gpus = std::max(gpus, o.gpus);
    pods = std::max(pods, o.pods);
    whole_gpus = std::max(whole_gpus, o.whole_gpus);
    gpu_share = std::max(gpu_share, o.gpu_share);
    schedulable = schedulable || o.schedulable;
    untainted = untainted || o.untainted;
    has_gpus = has_gpus || o.has_gpus;
    if (o.models != nullptr) {
      if (models != nullptr) return false;
      models = o.models;
    }
    return true;
  }
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual Status filter(const CycleState& state, const PodSpec& pod,
                        const NodeInfo& node) const = 0;
  virtual QuickChecks quick_checks() const { return {}; }
  // For this pod: fills `req` so that filter() accepts every node whose QuickNode meets it, and
  // returns true; false if the plugin cannot tell from the copy (then it is always called).
  virtual bool quick_requirement(const CycleState& /*state*/, const PodSpec& /*pod*/,
                                 QuickRequirement& /*req*/) const {
    return false;
  }
};

// Per-node results of the filter phase, for PostFilter and the failure message.
struct Diagnosis {
  std::vector<std::pair<NodeId, Status>> node_statuses;  // failing nodes only
  std::uint64_t rejector_plugins = 0;                    // bit per plugin index
  ReasonId prefilter_reason = 0;
};

class Framework;

struct PostFilterResult {
  Status status = Status{Code::kUnschedulable};
  NodeId nominated_node = kNoNode;
  std::vector<PodId> victims;
  std::string message;  // e.g. "preemption: 0/3 nodes are available: ..."
};

class PostFilterPlugin {
 public:
  virtual ~PostFilterPlugin() = default;
  virtual PostFilterResult post_filter(CycleState& state, PodId pod, const PodSpec& spec,
                                       const Diagnosis& diagnosis, const Snapshot& snap,
                                       const Framework& fw) = 0;
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
  // NormalizeScore: maps raw scores onto [0, kMaxNodeScore] across the feasible nodes.
  virtual bool has_normalize() const { return false; }
  virtual void normalize(const CycleState& /*state*/, const PodSpec& /*pod*/,
                         std::span<std::int64_t> /*scores*/) const {}
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
