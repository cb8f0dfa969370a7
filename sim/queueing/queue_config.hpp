// The Kueue objects a run admits workloads with (ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
// WorkloadPriorityClass) and Kueue's own configuration knobs, as plain values. The loaders in
// tools/ fill them from kueue.x-k8s.io manifests and the scenario's `kueue:` section and check
// every reference; the admission controller (kueue_admission.hpp) reads them. Resources are the
// World's ResourceIds, amounts are in capsim's units (cpu millicores, memory bytes, GPUs units).
// A World without ClusterQueues has no admission layer: pods go straight to the scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/input_error.hpp"
#include "sim/labels.hpp"
#include "sim/resources.hpp"
#include "sim/time.hpp"

namespace capsim::queueing {

inline constexpr std::int64_t kNoLimit = -1;  // borrowingLimit / lendingLimit not set

enum class QueueingStrategy : std::uint8_t { kBestEffortFifo, kStrictFifo };
enum class PreemptPolicy : std::uint8_t {
  kNever,
  kLowerPriority,
  kLowerOrNewerEqualPriority,
  kAny
};
enum class FungibilityPolicy : std::uint8_t { kMayStopSearch, kTryNextFlavor };
enum class FungibilityPreference : std::uint8_t {
  kUnset,  // BorrowingOverPreemption
  kBorrowingOverPreemption,
  kPreemptionOverBorrowing
};
enum class StopPolicy : std::uint8_t { kNone, kHold, kHoldAndDrain };
enum class FairSharingStrategy : std::uint8_t {
  kLessThanOrEqualToFinalShare,
  kLessThanInitialShare
};

struct ResourceFlavorSpec {
  std::string name;
  LabelSet node_labels;  // injected into admitted pods' nodeSelector
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;  // injected into admitted pods
  std::string topology_name;            // spec.topologyName: a TAS flavor ("" = none)
  std::int32_t topology = -1;           // index into QueueConfig::topologies (set by the loader)
  InputLocation where;
  InputLocation topology_where;
};

// A Topology object (kueue.x-k8s.io Topology): the node label keys of its levels, top to bottom
// (spec.levels[].nodeLabel). Its last level may be kubernetes.io/hostname.
struct TopologySpec {
  std::string name;
  std::vector<std::string> levels;
  InputLocation where;
};

struct ResourceQuotaSpec {
  ResourceId resource = 0;
  std::int64_t nominal = 0;
  std::int64_t borrowing_limit = kNoLimit;
  std::int64_t lending_limit = kNoLimit;
};

struct FlavorQuotasSpec {
  std::string flavor;
  InputLocation where;                       // of the flavor's name
  std::vector<ResourceQuotaSpec> resources;  // in the order of coveredResources
};

struct ResourceGroupSpec {
  std::vector<ResourceId> covered;
  std::vector<FlavorQuotasSpec> flavors;  // tried in this order
};

// metav1.LabelSelector. Namespaces carry one label in capsim: kubernetes.io/metadata.name.
struct LabelSelectorSpec {
  struct Requirement {
    std::string key;
    enum class Op : std::uint8_t { kIn, kNotIn, kExists, kDoesNotExist } op = Op::kIn;
    std::vector<std::string> values;
  };
  std::vector<std::pair<std::string, std::string>> match_labels;
  std::vector<Requirement> match_expressions;
};

struct ClusterQueueSpec {
  std::string name;
  std::string cohort;  // "" = none
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  // nullopt: Kueue's default null selector, which admits no namespace; {} admits all.
  std::optional<LabelSelectorSpec> namespace_selector;
  std::vector<ResourceGroupSpec> resource_groups;
  PreemptPolicy within_cluster_queue = PreemptPolicy::kNever;
  PreemptPolicy reclaim_within_cohort = PreemptPolicy::kNever;
  PreemptPolicy borrow_within_cohort = PreemptPolicy::kNever;  // kNever or kLowerPriority
  std::optional<std::int32_t> borrow_max_priority_threshold;
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FungibilityPreference preference = FungibilityPreference::kUnset;
  double fair_weight = 1.0;
  StopPolicy stop_policy = StopPolicy::kNone;
  InputLocation where;
  InputLocation cohort_where;
};

// A Cohort object. ClusterQueues may name cohorts that have no object (implicit cohorts: no
// quota of their own, no parent).
struct CohortSpec {
  std::string name;
  std::string parent;  // "" = root
  std::vector<ResourceGroupSpec> resource_groups;
  double fair_weight = 1.0;
  InputLocation where;
  InputLocation parent_where;
};

struct LocalQueueSpec {
  std::string name;
  std::string namespace_ = "default";
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  InputLocation where;
  InputLocation cluster_queue_where;
};

struct WorkloadPriorityClassSpec {
  std::string name;
  std::int32_t value = 0;
  InputLocation where;
};

// One entry of Kueue's Configuration resources.transformations (KEP-2937): every unit of
// `input` a pod requests is charged as `outputs` (per unit) and, with strategy Retain, also as
// itself. Factors are kept exactly: an output amount of q (in capsim's units of the output
// resource: millicores for cpu, bytes for memory, units otherwise) is factor / 10^scale.
struct ResourceTransformationSpec {
  struct Output {
    ResourceId resource = kNoResource;
    std::int64_t factor = 0;
    int scale = 0;
  };
  ResourceId input = kNoResource;
  bool replace = false;                  // strategy Replace (default Retain)
  ResourceId multiply_by = kNoResource;  // multiplyBy: input x Value() of this resource
  std::vector<Output> outputs;
  InputLocation where;
};

// One entry of Kueue's Configuration resources.deviceClassMappings (DRA): the devices of these
// DeviceClasses that a pod's ResourceClaimTemplates request are charged to quota as `resource`,
// one unit per device (Kueue's pkg/dra/claims.go, countDevicesPerClass).
struct DeviceClassMappingSpec {
  ResourceId resource = kNoResource;
  std::vector<std::string> device_classes;
  InputLocation where;
};

// Kueue's Configuration (the controller's config map) as far as capsim models it.
struct KueueSettings {
  bool fair_sharing = false;
  std::vector<FairSharingStrategy> preemption_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare,
      FairSharingStrategy::kLessThanInitialShare};
  // waitForPodsReady: an admitted workload whose pods are not all running `timeout` after
  // admission is evicted (its quota released) and requeued after a backoff.
  bool wait_for_pods_ready = false;
  SimDuration pods_ready_timeout = 5 * kMinute;
  bool requeue_at_eviction_time = true;  // requeuingStrategy.timestamp: Eviction (else Creation)
  SimDuration backoff_base = 60 * kSecond;
  SimDuration backoff_max = 3600 * kSecond;
  std::optional<std::int32_t> backoff_limit_count;  // then the workload is deactivated
  // quotaCheckStrategy: IgnoreUndeclared admits requests for resources no resource group covers.
  bool ignore_undeclared_resources = false;
  // resources.excludeResourcePrefixes: requests for these resources are not charged to quota.
  std::vector<std::string> exclude_resource_prefixes;
  // resources.transformations, applied per pod after the exclusion, before quota accounting.
  std::vector<ResourceTransformationSpec> transformations;
  // resources.deviceClassMappings: DRA devices charged to quota (empty: DRA claims are not).
  std::vector<DeviceClassMappingSpec> device_class_mappings;
  // Kueue's scheduler admits at most one borrowing workload per cohort per cycle, after the
  // non-borrowing ones (capsim option so a test can show what the rule does).
  bool one_borrowing_admission_per_cohort = true;
  // capsim: place the pods of every multi-pod Kueue workload (Jobs with parallelism > 1, pod
  // groups) all-or-nothing, as a gang. Multi-node trace jobs and pod groups are gangs anyway.
  bool gang_jobs = false;
};

struct QueueConfig {
  std::vector<ResourceFlavorSpec> flavors;
  std::vector<TopologySpec> topologies;
  std::vector<ClusterQueueSpec> cluster_queues;
  std::vector<CohortSpec> cohorts;
  std::vector<LocalQueueSpec> local_queues;
  std::vector<WorkloadPriorityClassSpec> priority_classes;
  KueueSettings settings;
  bool settings_given = false;  // the scenario has a `kueue:` section

  // Admission is modelled when at least one ClusterQueue exists.
  bool active() const { return !cluster_queues.empty(); }
};

}  // namespace capsim::queueing
