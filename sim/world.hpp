// The World is everything a run is about, fixed before the run starts: interned names, the GPU
// models in use, node and pod specs, jobs and priority classes. The loaders in tools/ build it
// from a scenario; the Simulation reads it and appends the pods that Job controllers create.
// Run-time state lives in Cluster.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/disruption.hpp"
#include "sim/dra.hpp"
#include "sim/labels.hpp"
#include "sim/node.hpp"
#include "sim/pod.hpp"
#include "sim/queueing/queue_config.hpp"
#include "sim/resources.hpp"
#include "sim/time.hpp"

namespace capsim {

// A MIG profile as the core needs it (geometry and naming rules live in models/).
struct MigProfileInfo {
  std::string name;           // "1g.10gb", "1g.10gb+me"
  std::string resource_name;  // mixed-strategy resource: "nvidia.com/mig-1g.10gb.me"
  std::int32_t compute_slices = 0;
  std::int32_t memory_slices = 0;
  std::int64_t memory_bytes = 0;
  std::int32_t sms = 0;
  std::vector<std::int32_t> start_slots;
  std::int32_t max_instances = 0;
  bool media_extensions = false;  // "+me"
};

// The slice of a catalog GPU model the core needs (the full catalog lives in models/).
struct GpuModelInfo {
  std::string name;
  std::int64_t memory_bytes = 0;
  std::int32_t sms = 0;
  double tdp_w = 0;
  double idle_w = 0;
  double price_per_hour = 0;  // USD per GPU-hour
  double relative_speed = 1.0;
  std::string product_label;  // nvidia.com/gpu.product value (GPU Feature Discovery)
  std::int32_t mig_memory_slots = 0;
  std::int32_t mig_compute_slots = 0;
  std::vector<MigProfileInfo> mig_profiles;
};

struct PriorityClassInfo {
  std::string name;
  std::int32_t value = 0;
  bool global_default = false;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
};

// A Job in the batch/v1 sense: `completions` pods must succeed, at most `parallelism` run at
// once. Pods of a job are created by the simulation's job controller as earlier ones finish.
struct JobSpec {
  std::string name;
  std::string queue;
  SimTime arrival = 0;
  std::int32_t parallelism = 1;
  std::int32_t completions = 1;
  // kueue.x-k8s.io/job-min-parallelism: Kueue may admit the Job with as few as this many pods
  // (partial admission); 0 when it admits only min(parallelism, completions).
  std::int32_t min_parallelism = 0;
  PodSpec pod_template;  // name is the prefix; arrival is ignored
  std::string source;
};

// A gang: pods (sharing PodSpec::gang) that the simulation places all-or-nothing, like Volcano's
// PodGroup minMember or Kueue's all-or-nothing admission.
struct GangSpec {
  std::string name;
  std::int32_t min_member = 1;  // pods that must be placed together
  std::string source;
};

// The objects Kueue admits as one Workload although they are several Jobs or pods: a JobSet (a
// PodSet per replicated Job), a PyTorchJob (a PodSet per replica type), one group of a
// LeaderWorkerSet (leader and workers). Its pods carry PodSpec::workload_group. Admission is of
// the whole: quota for every pod of the first wave, or none; the pods are then scheduled one by
// one, unless they also form a gang.
struct WorkloadGroupSpec {
  std::string name;       // the object's name (a LeaderWorkerSet group: "<name>-<group index>")
  std::string kind;       // "JobSet", "PyTorchJob", "LeaderWorkerSet"
  std::int32_t pods = 0;  // pods admitted together: the sum of the PodSets' counts
  std::string source;
};

// A pool as a cluster-autoscaler node group (docs/autoscaling.md): `max` nodes exist in the
// model from the start; those beyond the group's current size are absent (Cluster: no capacity,
// not counted, not priced) until a scale-up provisions them.
struct PoolAutoscaling {
  std::string pool;
  std::int32_t min = 0;
  std::int32_t max = 0;
  std::int32_t initial = 0;  // the scenario's `count`, clamped to [min, max]
  SimDuration provisioning_delay = 5 * kMinute;
  SimDuration unneeded_time = 10 * kMinute;  // --scale-down-unneeded-time's default
  std::int32_t priority = 0;                 // for the priority expander; higher wins
  std::vector<NodeId> nodes;                 // the group's `max` nodes, in name order
  std::string source;                        // "file:line" of the pool
};

// How the autoscaler chooses among node groups that would help (cluster-autoscaler's --expander).
enum class Expander : std::uint8_t { kLeastWaste, kRandom, kPriority };

// The scenario's `autoscaler:` section and its autoscaled pools; `enabled` when either is given.
struct AutoscalerConfig {
  bool enabled = false;
  Expander expander = Expander::kLeastWaste;
  SimDuration scan_interval = 10 * kSecond;  // --scan-interval's default
  std::int32_t max_nodes_total = 0;          // 0: no limit (--max-nodes-total)
  std::vector<PoolAutoscaling> pools;
};

// A Deployment, ReplicaSet or StatefulSet whose replica count a scenario's `scaling:` steps
// change during the run. The loader makes every pod it will ever create (a step up adds pods
// arriving at the step's time); a step down is decided during the run: the Simulation deletes
// the pods the ReplicaSet controller would (or a StatefulSet's highest ordinals).
// The event (and termination) kind of a replica its controller deletes on a step down.
inline constexpr std::string_view kReplicaDeleteKind = "replica-delete";

struct ScaledController {
  std::string kind;  // "Deployment", "ReplicaSet", "StatefulSet"
  std::string namespace_;
  std::string name;
  std::vector<PodId> pods;  // in creation order (a StatefulSet's: by ordinal)
  struct Step {
    SimTime at = 0;
    std::int32_t replicas = 0;
    std::string where;  // the step's source, for records
  };
  std::vector<Step> steps;  // by time
  bool stateful() const { return kind == "StatefulSet"; }
};

struct World {
  World() {
    (void)strings.intern("");
    (void)strings.intern("node.kubernetes.io/unschedulable");
  }

  StringPool strings;
  ResourceNames resources;
  std::vector<GpuModelInfo> gpu_models;
  std::vector<NodeSpec> nodes;
  // A deque so that references stay valid while Job controllers append pods during the run.
  // Arrival order is not required; the simulation sorts arrivals.
  std::deque<PodSpec> pods;
  std::vector<JobSpec> jobs;
  std::vector<PriorityClassInfo> priority_classes;
  std::string currency = "USD";
  DraWorld dra;  // DeviceClasses, ResourceClaims (and templates), published devices per node
  std::vector<GangSpec> gangs;
  std::vector<WorkloadGroupSpec> workload_groups;
  queueing::QueueConfig queues;  // Kueue objects; inactive when it has no ClusterQueue
  std::vector<DisruptionBudgetSpec> disruption_budgets;  // policy/v1 PodDisruptionBudgets
  ClusterTopology topology;     // levels above the node (sim/topology.hpp); empty: off
  AutoscalerConfig autoscaler;  // autoscaled node groups (sim/run/autoscaler.hpp); off by default
  // v1 Namespace objects' labels, by namespace name. Every namespace also carries
  // kubernetes.io/metadata.name=<name> (the API server sets it); a namespace no Namespace object
  // describes carries only that label. namespaceSelectors (pod affinity terms, Kueue
  // ClusterQueues) are matched against these.
  std::map<Sym, LabelSet> namespace_labels;
  std::vector<ScaledController> scaled_controllers;  // `scaling:` steps; empty: none

  Sym empty_sym() { return strings.intern(""); }
};

}  // namespace capsim
