// Cluster state during a run: one NodeInfo per node (requests, pods, GPU device occupancy) and one
// PodState per pod. Cluster owns every mutation of that state (binding a pod, removing it), keeps
// the per-node generation counters the scheduler's caches rely on, and keeps the cluster-wide
// aggregates the samples read, so nothing rescans all nodes per event.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace capsim {

// One physical GPU. Whole-GPU pods take all 1000 milli; GPU-share pods take part of it.
struct GpuDeviceState {
  std::int32_t milli_used = 0;  // 0..1000
  std::uint16_t holders = 0;    // pods holding (part of) it
  double util_demand = 0;       // sum of holders' busy fractions, scaled by their share
};

struct NodeInfo {
  NodeId id = kNoNode;
  const NodeSpec* spec = nullptr;
  ResourceVec requested;          // sum of requests of pods on the node (+1 "pods" each)
  ResourceVec nonzero_requested;  // cpu/memory with kube-scheduler's defaults for zero requests
  std::vector<PodId> pods;
  std::vector<GpuDeviceState> gpus;
  std::int32_t free_whole_gpus = 0;  // GPUs with milli_used == 0
  std::uint64_t generation = 0;      // bumped on every change

  // Adds/removes a pod's requests (not devices). Used by Cluster and on scratch copies
  // (preemption's what-if, nominated pods).
  void add_requests(const PodSpec& pod);
  void remove_requests(const PodSpec& pod);
  std::int64_t free(ResourceId r) const { return spec->allocatable[r] - requested[r]; }
};

// A compact copy of what each node has free, kept in step with NodeInfo by Cluster so that the
// scheduler can rule out (or, when every filter can tell, accept) nodes without touching their
// (large) NodeInfo and NodeSpec. 40 bytes a node: 5,000 nodes fit in L2.
struct QuickNode {
  std::int64_t cpu = 0;           // allocatable - requested, millicores
  std::int64_t memory = 0;        // bytes
  std::int32_t gpus = 0;          // nvidia.com/gpu allocatable - requested
  std::int32_t pods = 0;          // pods that still fit by count
  std::int32_t whole_gpus = 0;    // physical GPUs with nothing on them
  std::int32_t max_gpu_left = 0;  // the most milli left on any one GPU
  // Copies of static node facts.
  GpuModelId gpu_model = kNoGpuModel;
  bool unschedulable = false;  // cordoned
  bool hard_taints = false;    // has a NoSchedule or NoExecute taint
};

// Cluster-wide totals kept up to date by Cluster (read by samples and metrics).
struct ClusterTotals {
  double gpus_total = 0;      // physical GPUs
  double gpus_allocated = 0;  // sum of milli_used / 1000
  double gpus_busy = 0;       // sum over GPUs of min(1, util_demand)
  double gpu_memory_total_mib = 0;
  double gpu_memory_allocated_mib = 0;
  double gpu_memory_used_mib = 0;
  std::int64_t pods_running = 0;  // running or terminating (holding resources)
  double power_w = 0;             // idle + (tdp - idle) * busy, per GPU
  double cost_per_hour = 0;       // every node's price
};

class Cluster {
 public:
  explicit Cluster(World& world);

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
  std::uint64_t generation() const { return generation_; }

  // Called when the World's pod table grew (a Job created pods).
  void sync_pod_table();

  // Places `pod` on `node` holding `gpus` (device indices; share pods hold one). Precondition:
  // the pod is on no node and the node has room (the scheduler checked; violations throw).
  void bind(PodId pod, NodeId node, std::span<const std::uint16_t> gpus);
  // Releases everything `pod` holds on its node.
  void unbind(PodId pod);
  // The GPU memory a pod is taken to use per GPU it holds (bytes).
  std::int64_t gpu_memory_used(PodId pod) const;

  // Verifies capacity (requests <= allocatable, device occupancy consistent with pods) and that
  // the aggregates match a recount. Throws InvariantError on the first violation.
  void check_invariants() const;

 private:
  void apply_device_delta(NodeInfo& n, PodId pod, std::span<const std::uint16_t> gpus, int sign);
  void refresh_gpu_totals(const NodeInfo& n, std::uint16_t gpu, int sign);
  void refresh_quick(const NodeInfo& n);

  World* world_;
  std::vector<NodeInfo> nodes_;
  std::vector<PodState> pods_;
  std::vector<QuickNode> quick_;
  ClusterTotals totals_;
  std::uint64_t generation_ = 0;
};

// Device-share arithmetic for a pod on a GPU: whole-GPU pods take 1000 milli.
inline std::int32_t pod_milli_per_gpu(const PodSpec& p) {
  return p.gpu_milli > 0 ? p.gpu_milli : 1000;
}
inline std::int32_t pod_gpu_devices(const PodSpec& p) {
  return p.gpu_count > 0 ? p.gpu_count : (p.gpu_milli > 0 ? 1 : 0);
}

}  // namespace capsim
