// What the Kueue admission layer knows at run time: the quota tree built from the ClusterQueues
// and Cohorts, one queue per ClusterQueue, the LocalQueues, and every workload. The flavor
// assigner and the preemptor read it and make temporary what-if changes to the tree (each undone
// before they return); only the admission controller changes it for good. Built once per run from
// the World's QueueConfig.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/queueing/queue_config.hpp"
#include "sim/queueing/quota_tree.hpp"
#include "sim/queueing/workload.hpp"
#include "sim/world.hpp"

namespace capsim::queueing {

// Queue order inside a ClusterQueue: higher priority first, then the older queue timestamp, then
// creation order (Kueue: priority, then creation or eviction time).
struct QueueKey {
  std::int32_t priority;
  SimTime order_time;
  WorkloadId id;
  bool operator<(const QueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (order_time != o.order_time) return order_time < o.order_time;
    return id < o.id;
  }
};

struct ClusterQueueRun {
  const ClusterQueueSpec* spec = nullptr;
  QuotaNodeId node = kNoQuotaNode;
  // Per resource group and flavor (in the spec's order), the fr of each covered resource.
  std::vector<std::vector<std::vector<FrIndex>>> group_frs;
  std::set<QueueKey> queued;
  std::set<WorkloadId> inadmissible;
  std::set<WorkloadId> holders;  // admitted or evicting: the workloads using its quota
  // Statistics.
  std::int64_t admissions = 0, preempted = 0, preempting = 0, pods_ready_timeouts = 0;
  double gpu_quota_seconds = 0, borrowed_gpu_seconds = 0;
  double gpu_seconds = 0;  // pods' GPU time while running
};

class KueueState {
 public:
  // Builds the quota tree and queues. Precondition: the config was validated by the loader
  // (every reference resolves, no cohort cycles).
  KueueState(World& world, const QueueConfig& config);

  World& world() { return *world_; }
  const World& world() const { return *world_; }
  const QueueConfig& config() const { return *config_; }
  QuotaTree& tree() { return tree_; }
  const QuotaTree& tree() const { return tree_; }
  std::vector<ClusterQueueRun>& cqs() { return cqs_; }
  const std::vector<ClusterQueueRun>& cqs() const { return cqs_; }
  ClusterQueueRun& cq(std::int32_t i) { return cqs_[static_cast<std::size_t>(i)]; }
  const ClusterQueueRun& cq(std::int32_t i) const { return cqs_[static_cast<std::size_t>(i)]; }
  std::vector<Workload>& workloads() { return workloads_; }
  const std::vector<Workload>& workloads() const { return workloads_; }
  Workload& wl(WorkloadId i) { return workloads_[static_cast<std::size_t>(i)]; }
  const Workload& wl(WorkloadId i) const { return workloads_[static_cast<std::size_t>(i)]; }

  // The LocalQueue named `name` in `ns`, or -1.
  std::int32_t find_local_queue(const std::string& ns, const std::string& name) const;
  std::int32_t find_flavor(const std::string& name) const;
  const ResourceFlavorSpec& flavor(std::int32_t i) const {
    return config_->flavors[static_cast<std::size_t>(i)];
  }
  // The ClusterQueues whose quota tree has the same root as `cq` (all of them, including `cq`).
  const std::vector<std::int32_t>& tree_members(std::int32_t cq) const;
  // The resource group of `cq` covering `r`, or -1.
  std::int32_t group_of(std::int32_t cq, ResourceId r) const;

  // Whether `usage` fits `cq` now (Kueue's workloadFits): every amount within what is available
  // and, unless `allow_borrowing`, within the ClusterQueue's own quota.
  bool fits(std::int32_t cq, const FrAmounts& usage, bool allow_borrowing) const;
  // Whether `cq` uses more than its quota of any of `frs`.
  bool borrowing_in(std::int32_t cq, const std::vector<FrIndex>& frs) const;
  bool uses_any(const Workload& w, const std::vector<FrIndex>& frs) const;

  // A readable amount of a resource: "4", "16" (cpu cores), "500m", "64Gi".
  std::string amount(ResourceId r, std::int64_t v) const;
  std::string fr_name(FrIndex fr) const;  // "nvidia.com/gpu in flavor b200"

 private:
  World* world_;
  const QueueConfig* config_;
  QuotaTree tree_;
  std::vector<ClusterQueueRun> cqs_;
  std::vector<std::vector<std::int32_t>> members_by_root_;  // indexed by quota node of the root
  std::vector<Workload> workloads_;
  std::map<std::pair<std::string, std::string>, std::int32_t> lq_index_;
};

}  // namespace capsim::queueing
