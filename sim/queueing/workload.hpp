// A Kueue Workload at run time: the unit that is queued, admitted, preempted and requeued — a Job
// (parallelism pods), a gang (a pod group, a multi-node trace job) or a single pod. It owns its
// quota usage while admitted or evicting; its pods are the World's pods, which the admission layer
// holds back until the workload is admitted. Owned by KueueState; addressed by index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/pod.hpp"
#include "sim/queueing/quota_tree.hpp"
#include "sim/queueing/topology_assigner.hpp"

namespace capsim::queueing {

using WorkloadId = std::int32_t;

enum class WorkloadState : std::uint8_t {
  kWaitingForPods,  // a gang whose members have not all arrived
  kQueued,          // in its ClusterQueue's queue (a head candidate)
  kInadmissible,    // BestEffortFIFO: set aside until quota is released in its cohort tree
  kBackoff,         // requeued after a PodsReady timeout, waiting out the backoff
  kAdmitted,        // quota reserved, pods released to the scheduler
  kEvicting,        // preempted or timed out; quota held until its pods have left their nodes
  kFinished,
  kDeactivated,  // backoffLimitCount reached: never admitted again
};

std::string_view workload_state_name(WorkloadState s);

struct Workload {
  WorkloadId id = 0;
  std::string name;  // the Job, gang or pod name
  std::string namespace_;
  std::int32_t local_queue = -1;
  std::int32_t cluster_queue = -1;
  std::int32_t priority = 0;  // WorkloadPriorityClass value, else the pods' priority
  SimTime created = 0;
  SimTime order_time = 0;  // queue order: creation, or the eviction after a PodsReady timeout
  std::int32_t count = 1;  // pods admitted together (the pod set's count)
  // Partial admission (a Job's kueue.x-k8s.io/job-min-parallelism): the fewest pods it may be
  // admitted with; `count` when it is all-or-nothing.
  std::int32_t min_count = 1;
  // While admitted: the pods it was admitted with, at most this many running at once (below
  // `count` after a partial admission, as the Job's parallelism is then lowered to it).
  std::int32_t admitted_count = 1;
  bool gang = false;
  JobId job = kNoJob;
  std::vector<PodId> pods;  // every pod it has had, in creation order
  ResourceList requests;    // total requests of the pod set (count pods)

  WorkloadState state = WorkloadState::kQueued;
  FrAmounts usage;                    // quota held while admitted or evicting
  std::vector<std::int32_t> flavors;  // flavor per resource group of its ClusterQueue (-1: none)
  bool borrowing = false;             // admitted above its ClusterQueue's nominal quota
  SimTime admitted_at = -1;
  SimTime first_admitted_at = -1;
  std::int32_t started_since_admission = 0;
  bool pods_ready = false;  // every pod of the pod set ran since the admission
  std::int32_t pods_ready_evictions = 0;
  bool evicted_by_timeout = false;  // the current eviction is a PodsReady timeout
  SimTime backoff_until = 0;
  std::uint64_t last_reason = 0;  // hash of the last recorded waiting reason (numbers left out)
  std::string last_detail;        // the last note, verbatim
  std::string_view last_kind;
  std::string shape_key;  // what its nomination depends on (kueue_admission.cpp)
  std::int32_t admissions = 0;
  std::int32_t preempted = 0;
  // Topology-aware scheduling while admitted: the TAS flavor (-1: none) and the pods' domains.
  std::int32_t tas_flavor = -1;
  TopologyAssignment topology;
};

}  // namespace capsim::queueing
