#include "sim/metric_catalog.hpp"

#include <fmt/format.h>

#include "sim/check.hpp"

namespace capsim {

namespace {

constexpr Direction kLower = Direction::kLowerIsBetter;
constexpr Direction kHigher = Direction::kHigherIsBetter;
constexpr Direction kNeutral = Direction::kNeutral;

// Directions are those compare and check have always used: lower for waits, times, cost, energy,
// fragmentation and failures; higher for allocation, utilisation and completed work; neutral for
// counts that describe the run or grow with the work done (a queue's cost, the cost charged to
// pods). Gates are check's built-in thresholds (docs/reports.md, "Built-in thresholds").
// clang-format off
constexpr MetricDef kMetrics[] = {
    // Pods, by final state (the seven states, and pods_deleted in runs with scaling, add up to
    // pods_total).
    {"pods_total", "pods", "Pods that arrived during the run.", kNeutral, {}, 0},
    {"pods_completed", "pods", "Pods that ran to completion.", kHigher, MetricGate{"0", ""}, 1},
    {"pods_failed", "pods", "Pods that ended failed.", kLower, MetricGate{"0", ""}, 0},
    {"pods_oom_killed", "pods", "Pods whose last run was ended by an OOM kill and not restarted.", kLower, MetricGate{"0", ""}, 0},
    {"pods_preempted", "pods", "Pods evicted by preemption and not recreated.", kLower, MetricGate{"0", ""}, 0},
    {"pods_unschedulable", "pods", "Pods still pending at the end whose last attempt no node could ever satisfy (every node rejected them as unresolvable: the request exceeds every node's allocatable, no node has the model, taints, selectors).", kLower, MetricGate{"0", ""}, 0},
    {"pods_pending_at_end", "pods", "Pods still pending at the end (and not unschedulable).", kLower, MetricGate{"0", ""}, 10},
    {"pods_running_at_end", "pods", "Pods still running at the end.", kNeutral, {}, 0},
    {"pods_deleted", "pods", "Pods their Deployment, ReplicaSet or StatefulSet deleted when a scaling step lowered its replicas; runs with scaling only.", kNeutral, {}, 0},
    // GPU allocation, utilisation and fragmentation.
    {"gpu_allocation_ratio_mean", "ratio", "GPU-hours allocated / (GPUs x simulated hours).", kHigher, MetricGate{"0.01", ""}, 2},
    {"gpu_utilization_ratio_mean", "ratio", "GPU-hours busy / (GPUs x simulated hours); a GPU's busy fraction is what its pods keep it busy (docs/sharing.md), like DCGM's GR_ENGINE_ACTIVE.", kHigher, MetricGate{"0.01", ""}, 3},
    {"fragmentation_ratio_mean", "ratio", "Mean over samples of fragmented GPU capacity / unallocated GPU capacity (samples with no free GPU are left out).", kLower, MetricGate{"0.02", ""}, 6},
    {"fragmented_gpu_share_mean", "ratio", "Mean over samples of fragmented GPU capacity / total GPU capacity.", kLower, {}, 0},
    // Waits and completion times.
    {"wait_seconds_mean", "s", "Mean time pods spent pending, summed over attempts; pods still pending at the end count with their wait so far (a lower bound), unschedulable pods are left out.", kLower, MetricGate{"1", "0.05"}, 0},
    {"wait_seconds_p50", "s", "Median of the same waits.", kLower, MetricGate{"1", "0.05"}, 0},
    {"wait_seconds_p95", "s", "95th percentile of the same waits.", kLower, MetricGate{"1", "0.05"}, 4},
    {"wait_seconds_p99", "s", "99th percentile of the same waits.", kLower, MetricGate{"1", "0.05"}, 0},
    {"jct_seconds_mean", "s", "Completed pods: mean of end - first submission.", kLower, MetricGate{"1", "0.05"}, 5},
    {"slowdown_mean", "ratio", "Completed pods: mean of JCT / run time alone on the device they ran on.", kLower, MetricGate{"0.01", "0.05"}, 0},
    {"makespan_seconds", "s", "First arrival to the last end.", kLower, MetricGate{"1", "0.02"}, 0},
    // GPU time.
    {"gpu_hours_allocated", "GPU-hours", "Integral of allocated GPUs.", kNeutral, {}, 0},
    {"gpu_hours_busy", "GPU-hours", "Integral of busy GPUs.", kHigher, {}, 0},
    {"gpu_hours_lost_to_oom", "GPU-hours", "GPU time of runs ended by an OOM kill (docs/sharing.md).", kLower, {}, 0},
    {"gpu_hours_lost_to_preemption", "GPU-hours", "GPU time of preempted (or drain-evicted) attempts thrown away.", kLower, MetricGate{"0.1", "0.05"}, 0},
    // Failures and checkpoints (docs/scenario-format.md, "failures").
    {"node_failures", "nodes", "Failures that took a whole node down (host, NIC), modelled or traced; failure runs only.", kLower, {}, 0},
    {"gpu_failures", "GPUs", "Failures that took one GPU down (gpu, hbm, nvlink); failure runs only.", kLower, {}, 0},
    {"failures.{}", "failures", "Failures of one cause (gpu, hbm, nvlink, nic, host); failure runs only.", kLower, {}, 0},
    {"pods_interrupted", "pods", "Pods that a failure or a spot reclaim stopped at least once; failure and spot runs only.", kLower, {}, 0},
    {"gpu_hours_lost_to_failures", "GPU-hours", "GPU time of runs stopped by a failure since their last checkpoint (the whole run without checkpoints); failure runs only.", kLower, {}, 0},
    {"gpu_hours_lost_to_checkpoints", "GPU-hours", "GPU time spent writing checkpoints and loading them on restart; runs with failures or checkpoints.", kLower, {}, 0},
    {"goodput_ratio", "ratio", "Useful GPU time / allocated GPU time: 1 - (GPU time lost to failures, preemption and OOM kills + checkpoint overhead) / GPU-hours allocated; runs with failures or checkpoints.", kHigher, {}, 0},
    {"effective_time_ratio", "ratio", "Completed pods: run time alone on their last device / (end - first start), summed over the pods (Meta's effective training time); runs with failures or checkpoints.", kHigher, {}, 0},
    {"queue.{}.effective_time_ratio", "ratio", "The same for the queue's completed pods.", kHigher, {}, 0},
    {"pool.{}.availability", "ratio", "1 - GPU-time the pool's GPUs were down (failed, or their node down) / (GPUs x simulated time); nodes for a pool without GPUs; failure runs only.", kHigher, {}, 0},
    {"pool.{}.planned_downtime", "ratio", "GPU-time the pool's GPUs were down for a planned reason (maintenance) / (GPUs x simulated time); part of 1 - availability; runs where something went down for maintenance.", kLower, {}, 0},
    {"maintenance_drains", "nodes", "Nodes cordoned, drained and maintained by a maintenance window; maintenance runs only.", kNeutral, {}, 0},
    {"maintenance_drains_blocked", "nodes", "Drains given up at their drain_timeout (pods a disruption budget kept, or pods still terminating); maintenance runs only.", kLower, {}, 0},
    {"maintenance_nodes_skipped", "nodes", "Nodes a window did not maintain: down (failed) when their turn came or during their drain, or already in another window's maintenance; maintenance runs only.", kLower, {}, 0},
    {"maintenance_evictions", "pods", "Pods evicted by maintenance drains (DaemonSet pods, which stop with their node, not counted); maintenance runs only.", kNeutral, {}, 0},
    {"maintenance_evictions_refused", "pods", "Evictions a PodDisruptionBudget refused, one per pod and drain however often it was retried; maintenance runs only.", kNeutral, {}, 0},
    {"maintenance_drain_seconds_mean", "s", "Maintained nodes: mean time from cordon to drained; maintenance runs only.", kLower, {}, 0},
    {"gpu_hours_lost_to_maintenance", "GPU-hours", "GPU time of runs stopped by drain evictions since their last checkpoint (also counted in gpu_hours_lost_to_preemption); maintenance runs only.", kLower, {}, 0},
    // Autoscaled node groups (docs/autoscaling.md); runs with an autoscaler section or an autoscaled pool only.
    {"nodes_added", "nodes", "Nodes a scale-up requested (billed from the request, Ready after the pool's provisioning_delay); autoscaling runs only.", kNeutral, {}, 0},
    {"nodes_removed", "nodes", "Nodes a scale-down removed: empty ones, and drained ones whose pods moved (scale_down_drains); autoscaling runs only.", kNeutral, {}, 0},
    {"scale_down_drains", "nodes", "Non-empty nodes a scale-down (utilisation below the threshold, or consolidation) drained and removed; autoscaling runs only.", kNeutral, {}, 0},
    {"scale_down_evictions", "pods", "Pods evicted by scale-down drains (DaemonSet pods, which stop with their node, not counted); autoscaling runs only.", kNeutral, {}, 0},
    {"scale_down_blocked", "nodes", "Scale-downs a PodDisruptionBudget refused (the node is looked at again after 5 minutes); autoscaling runs only.", kNeutral, {}, 0},
    {"consolidation_replacements", "nodes", "Cheaper nodes consolidation provisioned to replace a node (also in nodes_added); autoscaling runs only.", kNeutral, {}, 0},
    {"gpu_hours_lost_to_scale_down", "GPU-hours", "GPU time of runs stopped by scale-down evictions since their last checkpoint (also counted in gpu_hours_lost_to_preemption); autoscaling runs only.", kLower, {}, 0},
    {"node_hours", "node-hours", "Integral of the nodes that exist (fixed ones, autoscaled ones from their request to their removal, spot ones while not reclaimed); autoscaling and spot runs only.", kNeutral, {}, 0},
    {"pool.{}.node_hours", "node-hours", "The same for the pool's nodes; autoscaling and spot runs only.", kNeutral, {}, 0},
    {"pending_seconds_due_to_provisioning", "pod-seconds", "Time pods spent pending for a node that was being provisioned for them (from the request, or their arrival if later, to the node's Ready or the end of the run); autoscaling runs only.", kNeutral, {}, 0},
    // Spot capacity (docs/spot.md); runs with a spot pool only.
    {"spot_reclaims", "nodes", "Spot nodes removed at the end of an interruption notice, modelled or traced; spot runs only.", kLower, {}, 0},
    {"pool.{}.spot_reclaims", "nodes", "The same for one spot pool; spot runs only.", kLower, {}, 0},
    {"spot_notices", "nodes", "Interruption notices given (a notice a failure overtook is not followed by a reclaim); spot runs only.", kNeutral, {}, 0},
    {"spot_returns", "nodes", "Reclaimed spot nodes that came back after their return_after; spot runs only.", kNeutral, {}, 0},
    {"spot_reclaims_skipped", "reclaims", "Traced reclaims of a node that was not up, and reclaims a failure or MIG re-layout overtook during the notice; spot runs only.", kNeutral, {}, 0},
    {"pods_interrupted_by_reclaim", "pods", "Pods that a spot reclaim stopped at least once (their node's, or a gang sibling's); part of pods_interrupted; spot runs only.", kLower, {}, 0},
    {"pods_killed_by_reclaim", "pods", "Pod runs still on their node when its notice ended (a grace period longer than the notice), killed with the node; spot runs only.", kLower, {}, 0},
    {"gpu_hours_lost_to_reclaims", "GPU-hours", "GPU time of runs stopped by spot reclaims since their last checkpoint (also counted in gpu_hours_lost_to_preemption); spot runs only.", kLower, {}, 0},
    {"oom_kills", "kills", "OOM kills, counting every restart.", kNeutral, {}, 0},
    {"preemptions", "pods", "Pods recreated after preemption (or a maintenance drain's eviction).", kLower, {}, 0},
    // Money and energy (docs/metrics.md, "Cost attribution").
    {"cost_total_usd", "USD", "cost_hardware_usd + cost_energy_usd.", kLower, MetricGate{"", "0.02"}, 7},
    {"cost_per_busy_gpu_hour_usd", "USD", "cost_total_usd / gpu_hours_busy.", kLower, MetricGate{"", "0.02"}, 8},
    {"energy_kwh", "kWh", "Integral of GPU power: per GPU idle + (TDP - idle) x busy (at the device, before PUE); a node that is down (failed, in maintenance) or does not exist (absent, reclaimed) draws none.", kLower, MetricGate{"", "0.02"}, 9},
    {"cost_hardware_usd", "USD", "Integral of every node's hourly price (on-demand, reserved or amortised purchase).", kLower, {}, 0},
    {"cost_racks_usd", "USD", "The part of cost_hardware_usd that is racks' own price (cost.pools.<p>.rack_price_per_hour or rack_purchase_price), billed with the racks' nodes; runs that price racks only.", kLower, {}, 0},
    {"cost_energy_usd", "USD", "energy_kwh x PUE x price per kWh (0 unless the scenario prices energy).", kLower, {}, 0},
    {"cost_allocated_usd", "USD", "The part of the total charged to pods.", kNeutral, {}, 0},
    {"cost_idle_usd", "USD", "The part no pod held: cost_total_usd - cost_allocated_usd - cost_stranded_usd.", kLower, {}, 0},
    {"cost_stranded_usd", "USD", "Device capacity no pod could use: MIG compute slices in no instance of the GPU's layout (the whole GPU while it is re-laid out).", kLower, {}, 0},
    {"cost_unqueued_usd", "USD", "The part of cost_allocated_usd charged to pods without a queue.", kNeutral, {}, 0},
    {"energy_facility_kwh", "kWh", "energy_kwh x PUE.", kLower, {}, 0},
    // Run facts.
    {"gpus_total", "GPUs", "GPUs in the cluster.", kNeutral, {}, 0},
    {"sim_seconds", "s", "Simulated time.", kNeutral, {}, 0},
    {"scheduling_cycles", "cycles", "Scheduling cycles run.", kNeutral, {}, 0},
    {"events_processed", "events", "Events the engine processed.", kNeutral, {}, 0},
    // Per sharing mode of the nodes: none, mig, time-slicing, mps, share.
    {"sharing.{}.gpus", "GPUs", "GPUs on nodes of the sharing mode.", kNeutral, {}, 0},
    {"sharing.{}.gpu_hours_allocated", "GPU-hours", "Allocated GPU-hours on nodes of the sharing mode.", kNeutral, {}, 0},
    {"sharing.{}.gpu_hours_busy", "GPU-hours", "Busy GPU-hours on nodes of the sharing mode.", kNeutral, {}, 0},
    {"sharing.{}.allocation_ratio_mean", "ratio", "The sharing mode's allocated GPU-hours / (its GPUs x simulated hours).", kNeutral, {}, 0},
    // MIG compute slices (only in runs with MIG-enabled GPUs).
    {"mig_slices_unconfigured_ratio_mean", "ratio", "Share of MIG compute-slice time in no instance (stranded by the layout).", kNeutral, {}, 0},
    {"mig_slices_idle_ratio_mean", "ratio", "Share of MIG compute-slice time in instances nobody held.", kNeutral, {}, 0},
    {"mig_slices_idle_while_waiting_ratio_mean", "ratio", "Share of MIG compute-slice time in instances nobody held while pods were waiting (no waiting pod fitted them).", kNeutral, {}, 0},
    // Per queue (tenant): the pod's queue, or its LocalQueue (<namespace>/<name> outside default).
    {"queue.{}.pods", "pods", "Pods of the queue that started or were still pending at the end.", kNeutral, {}, 0},
    {"queue.{}.wait_seconds_mean", "s", "Mean wait of the queue's pods.", kLower, {}, 0},
    {"queue.{}.wait_seconds_p50", "s", "Median wait of the queue's pods.", kLower, {}, 0},
    {"queue.{}.wait_seconds_p95", "s", "95th percentile wait of the queue's pods.", kLower, MetricGate{"60", "0.10"}, 0},
    {"queue.{}.wait_seconds_p99", "s", "Kueue runs: 99th percentile wait of the LocalQueue's pods.", kLower, {}, 0},
    {"queue.{}.cost_usd", "USD", "Cost charged to the queue's pods.", kNeutral, {}, 0},
    {"queue.{}.gpu_hours", "GPU-hours", "GPU-hours charged to the queue's pods (charged fraction x time).", kNeutral, {}, 0},
    {"queue.{}.admissions", "workloads", "Kueue runs: admissions of the LocalQueue's workloads.", kNeutral, {}, 0},
    {"queue.{}.preemptions", "workloads", "Kueue runs: preemptions of the LocalQueue's workloads.", kNeutral, {}, 0},
    {"queue.{}.gpu_hour_share", "ratio", "Kueue runs: the LocalQueue's share of all Kueue-managed GPU time.", kNeutral, {}, 0},
    // Kueue totals (only in runs with Kueue objects; docs/queues.md#what-a-run-reports).
    {"kueue.workloads", "workloads", "Workloads Kueue created.", kNeutral, {}, 0},
    {"kueue.admissions", "workloads", "Admissions, counting readmissions.", kNeutral, {}, 0},
    {"kueue.preemptions", "workloads", "Workloads preempted by Kueue.", kNeutral, {}, 0},
    {"kueue.preemptions_before_start", "workloads", "Preemptions of workloads none of whose pods had started since their admission: no work lost.", kNeutral, {}, 0},
    {"kueue.pods_ready_timeouts", "workloads", "Workloads evicted because their pods were not ready in time.", kNeutral, {}, 0},
    {"kueue.workloads_pending_at_end", "workloads", "Workloads still waiting for admission at the end.", kNeutral, {}, 0},
    {"kueue.admission_cycles", "cycles", "Admission cycles run.", kNeutral, {}, 0},
    // Per ClusterQueue.
    {"clusterqueue.{}.workloads", "workloads", "Workloads in the ClusterQueue.", kNeutral, {}, 0},
    {"clusterqueue.{}.admissions", "workloads", "Admissions into the ClusterQueue.", kNeutral, {}, 0},
    {"clusterqueue.{}.preemptions", "workloads", "Its workloads preempted.", kNeutral, {}, 0},
    {"clusterqueue.{}.preempting", "workloads", "Preemptions it caused.", kNeutral, {}, 0},
    {"clusterqueue.{}.pods_ready_timeouts", "workloads", "Its workloads evicted because their pods were not ready in time.", kNeutral, {}, 0},
    {"clusterqueue.{}.pending_at_end", "workloads", "Its workloads still waiting for admission at the end.", kNeutral, {}, 0},
    {"clusterqueue.{}.admission_wait_seconds_mean", "s", "Mean of creation to first admission per workload; still waiting at the end: the wait so far.", kNeutral, {}, 0},
    {"clusterqueue.{}.admission_wait_seconds_p50", "s", "Median of the same admission waits.", kNeutral, {}, 0},
    {"clusterqueue.{}.admission_wait_seconds_p95", "s", "95th percentile of the same admission waits.", kNeutral, {}, 0},
    {"clusterqueue.{}.admission_wait_seconds_p99", "s", "99th percentile of the same admission waits.", kNeutral, {}, 0},
    {"clusterqueue.{}.gpu_hours", "GPU-hours", "GPU time of its pods while running.", kNeutral, {}, 0},
    {"clusterqueue.{}.gpu_hour_share", "ratio", "Its share of all Kueue-managed GPU time.", kNeutral, {}, 0},
    {"clusterqueue.{}.gpu_quota_hours", "GPU-hours", "Integral of its nvidia.com/gpu quota usage.", kNeutral, {}, 0},
    {"clusterqueue.{}.borrowed_gpu_hours", "GPU-hours", "Integral of the part of its nvidia.com/gpu quota usage above nominal.", kNeutral, {}, 0},
    // Topology: Kueue TAS and locality (docs/queues.md, docs/scenario-format.md).
    {"tas_wait_seconds_p95", "s", "Runs with a TAS ResourceFlavor (docs/queues.md#topology-aware-scheduling): 95th percentile of creation to first admission of the workloads that asked for topology-aware scheduling, explicitly or implied; still waiting at the end: the wait so far.", kLower, {}, 0},
    {"jobs_spanning_domains", "jobs", "Runs with a cluster topology (docs/scenario-format.md#topology): gangs whose pods, at their last start, spanned more than one NVLink domain (the level named nvlink; without one, more than one node).", kLower, {}, 0},
    {"topology_slowdown_mean", "ratio", "Runs with a cluster topology: mean over the gangs that started of the rate factor their locality paid at their last start (1: none).", kHigher, {}, 0},
    {"topology.{}.fragmented_gpus_mean", "GPUs", "Runs with a cluster topology: mean over samples of the free GPUs in domains of level {} that are partly allocated, which no job needing a whole domain of that level can use (docs/metrics.md#topology).", kLower, {}, 0},
    // Fill experiments (docs/fgd.md).
    {"gpu_allocation_ratio_at_arrived_100", "ratio", "Allocated GPU / capacity, averaged over the arrivals whose GPU request so far rounds to 100 % of capacity.", kNeutral, {}, 0},
    {"gpu_allocation_ratio_at_arrived_130", "ratio", "The same at 130 % of capacity.", kNeutral, {}, 0},
    {"fragmentation_ratio_at_arrived_100", "ratio", "Fragmented / unallocated GPU capacity, averaged over the arrivals at 100 % of capacity.", kNeutral, {}, 0},
    {"fragmentation_ratio_at_arrived_130", "ratio", "The same at 130 % of capacity.", kNeutral, {}, 0},
    {"fragmented_gpu_share_at_arrived_130", "ratio", "Fragmented GPU capacity / capacity, averaged over the arrivals at 130 % of capacity.", kNeutral, {}, 0},
    {"arrived_gpu_ratio_end", "ratio", "GPU requested by all arrivals / capacity, at the last arrival.", kNeutral, {}, 0},
    {"gpu_allocation_ratio_end", "ratio", "Allocated GPU / capacity, at the last arrival.", kNeutral, {}, 0},
    {"fill_pods_placed", "pods", "Pods placed.", kNeutral, {}, 0},
    {"fill_pods_failed", "pods", "Pods no node fitted (their one attempt failed).", kNeutral, {}, 0},
};
// clang-format on

}  // namespace

std::span<const MetricDef> metric_catalog() {
  return kMetrics;
}

bool family_matches(std::string_view pattern, std::string_view metric) {
  const std::size_t hole = pattern.find("{}");
  if (hole == std::string_view::npos) return pattern == metric;
  const std::string_view prefix = pattern.substr(0, hole);
  const std::string_view suffix = pattern.substr(hole + 2);
  // The hole takes at least one character.
  return metric.size() > prefix.size() + suffix.size() && metric.starts_with(prefix) &&
         metric.ends_with(suffix);
}

const MetricDef* find_metric(std::string_view metric) {
  for (const MetricDef& d : kMetrics) {
    if (!d.is_family() && d.name == metric) return &d;
  }
  for (const MetricDef& d : kMetrics) {
    if (d.is_family() && family_matches(d.name, metric)) return &d;
  }
  return nullptr;
}

void put_metric(Summary& summary, std::string metric, double value) {
  CAPSIM_CHECK(find_metric(metric) != nullptr,
               fmt::format("summary metric '{}' is not in sim/metric_catalog.cpp", metric));
  summary.emplace_back(std::move(metric), value);
}

std::string_view direction_name(Direction d) {
  switch (d) {
    case Direction::kLowerIsBetter:
      return "lower";
    case Direction::kHigherIsBetter:
      return "higher";
    case Direction::kNeutral:
      return "neutral";
  }
  return "neutral";
}

}  // namespace capsim
