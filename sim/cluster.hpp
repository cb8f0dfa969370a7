// Cluster state during a run: one NodeInfo per node (requests, pods, devices) and one PodState per
// pod. Cluster owns every mutation of that state (binding a pod, releasing it, re-laying out a
// MIG GPU), keeps the per-node generation counters, and keeps the cluster-wide aggregates the
// samples read, so nothing rescans all nodes per event.
//
// Devices: a node's GPUs are offered as DeviceUnits (a whole GPU, a MIG instance; with replicas
// under time-slicing or MPS), rebuilt from the node's DeviceConfig and each GPU's current MIG
// layout. What a pod holds is a list of Holdings (sim/device.hpp): pods asking for device
// resources (nvidia.com/gpu, nvidia.com/mig-1g.10gb, ...) hold replicas of units; GPU-share pods
// (gpu_milli) hold part of one GPU's share pool. A node's allocatable for device resources is the
// sum of its live units' replicas, so it changes with the layout.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/quick_index.hpp"
#include "sim/world.hpp"

namespace capsim {

// One physical GPU.
struct GpuDeviceState {
  std::int32_t milli_used = 0;  // whole-GPU view: 1000 per exclusive holder, m per share pod
  std::uint16_t holders = 0;    // pod holdings (a pod with two units on it counts twice)
  GpuLayout layout;             // current MIG layout (mig_enabled false: the whole GPU)
  bool reconfiguring = false;   // MIG layout change in progress: no units until it ends
  bool failed = false;          // unhealthy (a device failure): no units until repaired
  double alloc = 0;             // allocated fraction 0..1, for metrics
  double memory_alloc = 0;      // bytes given to holders (their limits, or shares)
  double busy = 0;              // busy fraction 0..1, set by the device model
};

struct NodeInfo {
  NodeId id = kNoNode;
  // How many of the spec's taints are PreferNoSchedule, or -1 if not counted (a NodeInfo not
  // made by Cluster). Scoring reads it beside `spec` instead of following `spec` to the taints:
  // on a large fleet that was a cache miss per scored node, for a count that is nearly always 0.
  std::int32_t prefer_no_schedule_taints = -1;
  const NodeSpec* spec = nullptr;
  ResourceVec allocatable;        // the spec's, with device resources from the live units
  ResourceVec requested;          // sum of requests of pods on the node (+1 "pods" each)
  ResourceVec nonzero_requested;  // cpu/memory with kube-scheduler's defaults for zero requests
  std::vector<PodId> pods;
  std::vector<GpuDeviceState> gpus;
  std::vector<DeviceUnit> units;
  std::int32_t free_whole_gpus = 0;  // non-MIG GPUs with nothing on them
  // DRA: claims holding each device the node publishes (DraWorld::nodes[id].devices).
  std::vector<std::uint16_t> dra_used;
  // DRA consumable capacity (KEP-5075): what the claims holding shareable devices take of each
  // capacity, in milli, flattened per device (dra::capacity_offsets).
  std::vector<std::int64_t> dra_consumed;
  std::uint64_t generation = 0;  // bumped on every change
  // NotReady (a host or NIC failure): it holds no pod and carries the unreachable taint.
  bool down = false;
  // Cordoned during the run (a maintenance drain): spec.unschedulable, as `kubectl cordon` sets it.
  bool cordoned = false;
  // A node of an autoscaled pool beyond the pool's current size (or still provisioning): it
  // offers nothing (no allocatable, no device unit), is unschedulable and counts in no total.
  bool absent = false;

  // Adds/removes a pod's requests (not devices). Used by Cluster and on scratch copies
  // (preemption's what-if, nominated pods).
  void add_requests(const PodSpec& pod);
  void remove_requests(const PodSpec& pod);
  std::int64_t free(ResourceId r) const { return allocatable[r] - requested[r]; }
};

// Whether device unit `u` of `node` can be handed out whole to a pod asking for its resource:
// alive, not published through DRA, a replica left, and, for an exclusive whole GPU, no GPU-share
// pod on its GPU (GpuDevices' Filter and Reserve).
inline bool whole_unit_free(const NodeInfo& node, const DeviceUnit& u) {
  return u.alive() && !u.dra && u.used < u.replicas &&
         (u.instance >= 0 || u.mode != ShareMode::kExclusive || node.gpus[u.gpu].milli_used == 0);
}
// Units of `resource` a pod could still take on `node` (replicas left; whole GPUs only if no
// GPU-share pod is on them).
std::int32_t free_units(const NodeInfo& node, ResourceId resource);

// A compact copy of what each node has free, kept in step with NodeInfo by Cluster so that the
// scheduler can rule out (or, when every filter can tell, accept) nodes without touching their
// (large) NodeInfo and NodeSpec. 40 bytes a node: 5,000 nodes fit in L2. Of the device
// resources it counts one, the cluster's most plentiful (Cluster::quick_device()), twice: as the
// scheduler's resource accounting has it (`device`) and as units free to hand out (`units`).
struct QuickNode {
  std::int64_t cpu = 0;             // allocatable - requested, millicores
  std::int64_t memory = 0;          // bytes
  std::int32_t device = 0;          // quick_device() allocatable - requested
  std::int32_t units = 0;           // free_units(node, quick_device())
  std::int32_t pods = 0;            // pods that still fit by count
  std::int32_t whole_gpus = 0;      // physical GPUs with nothing on them
  std::int32_t max_share_left = 0;  // the most milli left in any one GPU's share pool
  // Copies of static node facts.
  GpuModelId gpu_model = kNoGpuModel;
  bool unschedulable = false;  // cordoned
  bool hard_taints = false;    // has a NoSchedule or NoExecute taint
};

// A compact copy of what the resource Score plugins read of a node (its cpu and memory, and its
// PreferNoSchedule taint count), kept with QuickNode. Scoring a large fleet read three resource
// vectors a kilobyte apart in each scored NodeInfo, a cache and TLB miss each; 56 bytes a node
// here, in node order.
struct ScoreNode {
  std::array<std::int64_t, 2> allocatable{};        // cpu, memory
  std::array<std::int64_t, 2> requested{};          // NodeInfo::requested
  std::array<std::int64_t, 2> nonzero_requested{};  // NodeInfo::nonzero_requested
  std::int32_t prefer_no_schedule_taints = 0;
};
static_assert(kCpu == 0 && kMemory == 1, "ScoreNode indexes cpu and memory by their ids");
static_assert(sizeof(ScoreNode) == 56);
ScoreNode score_node(const NodeInfo& n);

// Run-time state of a shared ResourceClaim (not one made from a template): the node and devices
// it is allocated to while any pod uses it, and those pods (status.reservedFor). It is
// deallocated when its last consumer leaves, as the resource claim controller does.
// A claim allocated only network-attached devices (slices with nodeSelector or allNodes) is
// usable on every node that reaches them all, as the allocation's nodeSelector says upstream
// (the structured allocator's createNodeSelector); `node` is then the node it was allocated on,
// whose device indices `allocation` holds.
struct SharedClaimState {
  NodeId node = kNoNode;
  ClaimAllocation allocation;
  std::vector<PodId> reserved_for;
};

// Whether a pod on `node` can use shared claim `c`, which is allocated: on its own node, or on
// any node that reaches each of its devices when they are all network-attached.
bool claim_reaches(const DraWorld& dra, const SharedClaimState& c, NodeId node);

// Cluster-wide totals kept up to date by Cluster (read by samples and metrics).
struct ClusterTotals {
  double gpus_total = 0;      // physical GPUs
  double gpus_allocated = 0;  // sum of GpuDeviceState::alloc
  double gpus_busy = 0;       // sum of GpuDeviceState::busy
  double gpu_memory_total_mib = 0;
  double gpu_memory_allocated_mib = 0;
  double gpu_memory_used_mib = 0;
  std::int64_t pods_running = 0;  // pods holding resources (running, restarting or terminating)
  double power_w = 0;             // idle + (tdp - idle) * busy, per GPU
  double cost_per_hour = 0;       // every node's price
  double mig_slices_total = 0;    // compute slices on MIG-enabled GPUs
  double mig_slices_unconfigured = 0;  // compute slices in no instance (stranded by the layout)
  double mig_slices_idle = 0;          // compute slices in instances nobody holds
  // Per sharing mode of the node (GpuSharing: none, mig, time-slicing, mps, share).
  std::array<double, kGpuSharingModes> mode_gpus{};
  std::array<double, kGpuSharingModes> mode_allocated{};
  std::array<double, kGpuSharingModes> mode_busy{};
};

class Cluster {
 public:
  explicit Cluster(World& world);
  // Not copied: a copy would share instance(), and a cache that outlives a cycle could then read
  // one cluster's answers for the other's nodes.
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  World& world() { return *world_; }
  const World& world() const { return *world_; }
  std::vector<NodeInfo>& nodes() { return nodes_; }
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const NodeInfo& node(NodeId n) const { return nodes_[n]; }
  std::vector<PodState>& pods() { return pods_; }
  const std::vector<PodState>& pods() const { return pods_; }
  PodState& pod(PodId p) { return pods_[p]; }
  const PodState& pod(PodId p) const { return pods_[p]; }
  const PodSpec& spec(PodId p) const { return world_->pods[p]; }
  const ClusterTotals& totals() const { return totals_; }
  const std::vector<QuickNode>& quick() const { return quick_; }
  // What the resource Score plugins read of each node, kept with quick().
  const std::vector<ScoreNode>& score_nodes() const { return score_nodes_; }
  // Each node's NodeInfo::generation as of its last refresh of quick() (every change ends with
  // one): a compact copy for those that scan every node for changes (the sampler).
  const std::vector<std::uint64_t>& node_generations() const { return node_generations_; }
  // How many of score_nodes() have a PreferNoSchedule taint.
  std::int32_t prefer_no_schedule_nodes() const { return prefer_no_schedule_nodes_; }
  // Bitsets of the nodes by free quick-device level and GPU model, kept with quick().
  const QuickIndex& quick_index() const { return quick_index_; }
  // The extended resource QuickNode::device counts: the one with the most allocatable over all
  // nodes when the cluster was built (the lowest id on ties); kNoResource if there is none.
  ResourceId quick_device() const { return quick_device_; }
  // Bumped by every change a Filter plugin could see (a bind, a release, a node's state).
  std::uint64_t generation() const { return generation_; }
  // A number no other Cluster made in this process has: with generation(), it names one state
  // of one cluster, for caches that outlive a cycle (NodeScoreCache).
  std::uint64_t instance() const { return instance_; }
  // How many of the latest generation bumps remember their node (changed_since).
  static constexpr std::size_t kChangeLog = 256;
  // Appends to `out` the node of every generation bump after `since` (a node may repeat); false
  // when more than kChangeLog bumps came after it, so the log no longer holds them all.
  bool changed_since(std::uint64_t since, std::vector<NodeId>& out) const {
    if (since > generation_ || generation_ - since > kChangeLog) return false;
    for (std::uint64_t g = since + 1; g <= generation_; ++g)
      out.push_back(change_log_[g % kChangeLog]);
    return true;
  }
  // Whether any pod bound to a node (running, restarting or terminating) has a priority below
  // `priority`: if none has, no node offers a preemptor of that priority a victim.
  bool any_bound_below(std::int32_t priority) const {
    return !bound_priorities_.empty() && bound_priorities_.begin()->first < priority;
  }
  const GpuModelInfo* gpu_model(const NodeInfo& n) const {
    return n.spec->gpu_model == kNoGpuModel ? nullptr : &world_->gpu_models[n.spec->gpu_model];
  }

  // Called when the World's pod table grew (a Job created pods).
  void sync_pod_table();

  // Places `pod` on `node`. `holdings` are what it takes (made by replica_of and share_of; a unit
  // may repeat for a pod holding two replicas of one device). `claims` (one per
  // PodSpec::claims entry, for pods with resource claims) are
  // the DRA devices chosen for its claims, or `reuse` for a shared claim already allocated on
  // this node: the claims take the devices (a MIG partition of a partitionable GPU is created
  // now), and the pod computes on their GPUs. Precondition: the pod holds nothing and the node
  // has room (violations throw).
  void bind(PodId pod, NodeId node, std::span<const Holding> holdings,
            std::span<const ClaimAllocation> claims = {});
  // Releases everything `pod` holds on its node; a claim it was the last consumer of is
  // deallocated (a MIG partition created for it is destroyed).
  void unbind(PodId pod);

  // DRA: the state of shared claim `claim` (an index into DraWorld::claims).
  const SharedClaimState& shared_claim(std::uint32_t claim) const {
    return shared_claims_.at(claim);
  }

  // The GPU memory (bytes) a pod uses through one of its holdings on `node`: its stated use,
  // else what it was given (the unit's per-holder limit, or its share of the GPU's memory).
  std::int64_t pod_memory(PodId pod, const NodeInfo& node, const Holding& h) const;
  // Sets a GPU's busy fraction (the device model computes it); updates the power total.
  void set_gpu_busy(NodeId node, std::uint16_t gpu, double busy);

  // MIG reconfiguration of one GPU, in two steps. begin: every instance not in `keep` (indices
  // into the current layout) must be unused; their units retire at once. end: the GPU takes
  // `layout` (which must contain the kept instances) and gets its new units.
  void begin_reconfigure(NodeId node, std::uint16_t gpu);
  void end_reconfigure(NodeId node, std::uint16_t gpu, const GpuLayout& layout);

  // Health (sim/run/node_health.hpp decides when). A failed GPU must hold nothing: its units
  // retire, as NVIDIA's device plugin reports an unhealthy device (the node's allocatable
  // drops), and it is no free GPU; repaired, it offers its units again. A down node must hold no
  // pod: it carries the taint the node lifecycle controller puts on an unreachable node,
  // node.kubernetes.io/unreachable:NoSchedule, which TaintToleration (and the quick copy's
  // hard_taints) already understand; it is removed when the node comes back.
  void set_gpu_failed(NodeId node, std::uint16_t gpu, bool failed);
  void set_node_down(NodeId node, bool down);
  // `kubectl cordon` / `uncordon`: the node's spec.unschedulable, which NodeUnschedulable (and
  // the quick copy) read; the pods on it stay.
  void set_cordoned(NodeId node, bool cordoned);
  // An autoscaled pool's node leaves (absent, after its pods left) or joins the cluster (Ready,
  // empty, its GPUs in the spec's layouts). Absent nodes offer nothing: no allocatable, so every
  // pod fails NodeResourcesFit (and the quick copy rejects it without running the plugins), and
  // spec.unschedulable; they count in no total (gpus_total, cost_per_hour, power, MIG slices).
  void set_absent(NodeId node, bool absent);
  // The node as it would be present and empty (its GPUs in the spec's layouts): the template
  // node cluster-autoscaler simulates pending pods on. Same id as the node.
  NodeInfo template_node(NodeId node) const;

  // Verifies capacity (requests <= allocatable, units' use and GPU occupancy consistent with the
  // pods, MIG instances within slots and not overlapping, replicas not exceeded) and that the
  // aggregates match a recount. Throws InvariantError on the first violation.
  void check_invariants() const;

 private:
  void rebuild_units(NodeInfo& n, std::uint16_t gpu);
  // Adds (+1) or removes (-1) a node's static share of the totals (GPUs, memory, price, idle
  // power, MIG slices): once at construction for present nodes, then on set_absent.
  void account_node(const NodeInfo& n, int sign);
  // Gives an empty node its GPUs (the spec's layouts), units and allocatable, or (absent) none.
  void populate(NodeInfo& n) const;
  void recompute_allocatable(NodeInfo& n) const;
  void refresh_gpu(NodeInfo& n, std::uint16_t gpu);
  void refresh_quick(const NodeInfo& n);
  // The node's spec as its run-time state makes it: the World's, or a copy with the unreachable
  // taint (down) and spec.unschedulable (cordoned). The copy keeps its address.
  void refresh_spec(NodeInfo& n);
  void account_mig(const NodeInfo& n, std::uint16_t gpu, int sign);
  // Marks a unit taken (+1) or given back (-1) by one holder, with the GPU's occupancy.
  void hold_unit(NodeInfo& n, std::uint16_t unit, int sign);
  // Takes (+1) or gives back (-1) `milli` of a GPU's share pool.
  void hold_share(NodeInfo& n, std::uint16_t gpu, std::int32_t milli, int sign);
  // Takes (+1, filling a.units) or gives back (-1) a claim's devices on a node.
  void hold_claim(NodeInfo& n, ClaimAllocation& a, int sign);
  // Whether pods take extended resource `r` through DRA on node `n` (KEP-5004): a DeviceClass
  // serves it and the node does not advertise it. Such requests count in `requested` with no
  // allocatable to match.
  bool served_by_dra(const NodeInfo& n, ResourceId r) const {
    return world_->dra.extended_class(r) != kNoClaim && n.allocatable[r] == 0 &&
           n.spec->allocatable[r] == 0;
  }
  // The unit that stands for DRA device `device` of the node, creating its MIG instance first
  // when it is a partition of a partitionable GPU.
  std::uint16_t materialize(NodeInfo& n, std::uint16_t device);
  // Destroys the MIG instance of a partitionable GPU's unit (its claim was freed).
  void destroy_partition(NodeInfo& n, std::uint16_t unit);
  std::uint16_t add_unit(NodeInfo& n, const DeviceUnit& u);

  World* world_;
  std::vector<NodeInfo> nodes_;
  // A down node's spec: the World's copy with the unreachable taint (NodeInfo::spec points here
  // while it is down); empty for nodes that never went down.
  std::vector<std::unique_ptr<NodeSpec>> down_specs_;
  std::vector<PodState> pods_;
  std::vector<QuickNode> quick_;
  std::vector<ScoreNode> score_nodes_;
  std::int32_t prefer_no_schedule_nodes_ = 0;
  std::vector<std::uint64_t> node_generations_;
  QuickIndex quick_index_;
  ResourceId quick_device_ = kNoResource;
  // How many bound pods have each priority (any_bound_below).
  std::map<std::int32_t, std::int64_t> bound_priorities_;
  std::vector<SharedClaimState> shared_claims_;
  ClusterTotals totals_;
  std::uint64_t generation_ = 0;
  std::uint64_t instance_ = 0;
  std::array<NodeId, kChangeLog> change_log_{};  // the node of bump g at g % kChangeLog
  // Every change a Filter plugin could see on node `n`: a new generation, and its QuickNode and
  // ScoreNode.
  void changed(NodeInfo& n) {
    ++generation_;
    change_log_[generation_ % kChangeLog] = n.id;
    refresh_quick(n);
  }
};

// The device units a GPU offers under `config` with `layout`, as NVIDIA's device plugin
// advertises them (resource names per MIG strategy, replicas per sharing). `names` interns the
// resource names (the loaders pre-intern every name a reconfiguration could need).
std::vector<DeviceUnit> make_units(const DeviceConfig& config, const GpuModelInfo& model,
                                   std::uint16_t gpu, const GpuLayout& layout,
                                   ResourceNames& names);
// The unit of MIG instance `instance` (an index into `layout`) on a node whose GPUs DRA
// publishes (exclusive, held by a claim).
DeviceUnit make_dra_mig_unit(const GpuModelInfo& model, std::uint16_t gpu, const GpuLayout& layout,
                             std::size_t instance);
// "nvidia.com/mig-1g.10gb.me" for "1g.10gb+me" ('+' becomes '.', as the device plugin does).
std::string mig_resource_name(const std::string& profile);

// Adds (sign +1) or removes (-1) a pod's requests and device holdings on a scratch copy of a node
// (preemption's what-if): units' use, GPU occupancy and the free whole-GPU count; no totals. The
// DRA devices of the pod's own claims (made from templates) count in NodeInfo::dra_used; a shared
// claim stays allocated (its other consumers may keep it).
void apply_holdings(NodeInfo& n, const PodSpec& spec, const PodState& state, int sign);

// A GPU-share pod's part of one GPU, in milli (1000 = the whole GPU).
inline bool is_share_pod(const PodSpec& p) {
  return p.gpu_milli > 0 && p.gpu_milli < 1000;
}

// One replica of unit `unit` of `n`, with the share of its GPU that stands for.
Holding replica_of(const NodeInfo& n, std::uint16_t unit);
// `milli` of GPU `gpu`'s share pool, held through the GPU's whole-GPU unit; none when the GPU
// has no such unit (MIG-enabled or being re-laid out).
std::optional<Holding> share_of(const NodeInfo& n, std::uint16_t gpu, std::int32_t milli);
// How much GPU the holdings stand for, in physical GPUs: the sum of their shares.
double gpu_fraction(std::span<const Holding> holdings);

}  // namespace capsim
