// A pod: its spec (what the workload says: requests, placement constraints, priority, timing,
// actual usage) and its run-time state (phase, node, devices, attempts, times). Pods are
// addressed by dense PodId indices into the World's pod table; the Job/gang a pod belongs to is
// an index too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/boxed.hpp"
#include "sim/dra.hpp"
#include "sim/labels.hpp"
#include "sim/node.hpp"
#include "sim/pod_affinity.hpp"
#include "sim/resources.hpp"
#include "sim/time.hpp"
#include "sim/timer.hpp"
#include "sim/topology.hpp"

namespace capsim {

using PodId = std::uint32_t;
inline constexpr PodId kNoPod = 0xffffffffu;
using JobId = std::uint32_t;
inline constexpr JobId kNoJob = 0xffffffffu;
using GangId = std::uint32_t;
inline constexpr GangId kNoGang = 0xffffffffu;

// Periodic checkpoints of a pod's progress (the scenario's `checkpoints:` rules): after every
// `interval` of computing it spends `cost` writing one (no progress meanwhile); a pod resuming
// from a checkpoint spends `restart` loading it before progress resumes. An interrupted pod
// (failure, preemption, eviction, OOM kill) keeps the work of its last completed checkpoint.
// interval 0: no checkpoints; an interrupted pod starts again from scratch.
struct CheckpointPolicy {
  SimDuration interval = 0;
  SimDuration cost = 0;
  SimDuration restart = 0;
  bool enabled() const { return interval > 0; }
};

enum class PreemptionPolicy : std::uint8_t { kPreemptLowerPriority, kNever };

// What happens to a pod that is preempted or killed: a Job's controller recreates it (kRequeue),
// a bare pod is gone (kNever).
enum class RestartPolicy : std::uint8_t { kNever, kOnFailure, kAlways };

struct PodSpec {
  std::string name;
  std::string namespace_ = "default";
  JobId job = kNoJob;
  std::string job_name;  // the job or workload it belongs to, for reports (trace `job`, Job name)
  std::string queue;     // tenant / queue name used for reporting
  // The members most pods leave empty are Boxed (sim/boxed.hpp): a null pointer until set.
  Boxed<std::string> priority_class;
  std::int32_t priority = 0;
  bool explicit_priority = false;  // spec.priority given without a class: no global default
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  // Whether a preempted pod comes back (a Job recreates it) or ends as preempted.
  bool requeue_on_preemption = true;
  RestartPolicy restart_policy = RestartPolicy::kNever;
  std::int32_t max_restarts = 6;  // backoffLimit for OOM/failure restarts

  ResourceList requests;  // cpu (milli), memory (bytes), nvidia.com/gpu, other extended
  // The device-plugin resources among the requests (nvidia.com/gpu, nvidia.com/gpu.shared,
  // nvidia.com/mig-*), in resource-id order: units of these are allocated per device.
  std::vector<std::pair<ResourceId, std::int32_t>> device_requests;
  // Device request, derived from `requests` and the workload: whole GPUs, or a share of one.
  std::int32_t gpu_count = 0;          // whole GPUs
  std::int32_t gpu_milli = 0;          // per-GPU share in 1/1000 (1000 = whole)
  std::vector<GpuModelId> gpu_models;  // allowed models; empty = any
  std::vector<PodClaimRef> claims;     // spec.resourceClaims (DRA)
  // The ComputeDomain whose channel the pod claims (index into DraWorld::compute_domains; -1:
  // none). Its channel claim is not among `claims`: the ComputeDomains plugin places it.
  std::int32_t compute_domain = -1;

  LabelSet labels;
  LabelSet node_selector;
  Boxed<NodeAffinity> affinity;  // boxed: most pods have none
  std::vector<Toleration> tolerations;
  // Spread constraints, pod (anti-)affinity (sim/pod_affinity.hpp): boxed, as most pods have
  // none.
  Boxed<PodTopologyRules> pod_rules;

  SimTime arrival = 0;
  SimDuration duration = 0;  // work on a whole reference GPU (or wall time for CPU pods)
  SimDuration termination_grace = 30 * kSecond;
  // Actual use, which the scheduler does not see.
  double gpu_util = 1.0;  // busy fraction of its GPUs while running
  // Share of a whole GPU's SMs its kernels keep busy while it computes: a device with at least
  // this much compute capacity does not slow it down (1 = kernels fill the GPU).
  double gpu_sm_fraction = 1.0;
  std::int64_t gpu_memory_used = 0;  // bytes per GPU; 0 = unknown (taken as the request)
  bool fails = false;                // the trace says the pod failed at the end of its run
  // A copy drawn from the workload's own pods to inflate it (fill experiments); the workload's
  // typical pods, which define fragmentation, come from the original pods only.
  bool resampled = false;

  std::string source;  // "file:line" it came from
  // The kind of the controller object its manifest came from (Deployment, StatefulSet,
  // DaemonSet, ReplicaSet, ...); empty for a bare pod, a Job's or a trace's.
  Boxed<std::string> controller_kind;
  // spec.nodeName: the pod is bound to this node at arrival without a scheduling cycle, as the
  // kubelet admits it (a pod that does not fit there fails, OutOf<resource>); empty: scheduled.
  Boxed<std::string> node_name;

  CheckpointPolicy checkpoint;  // none unless a `checkpoints:` rule matches

  // All-or-nothing group (a multi-node trace job, a Kueue pod group, a Job marked as a gang): its
  // pods start together or not at all. Index into World::gangs.
  GangId gang = kNoGang;
  // A Kueue pod group member's kueue.x-k8s.io/pod-group-total-count: the group's size, which
  // Kueue waits for before it admits the group (0: not given; the group is the pods that exist).
  std::int32_t pod_group_total = 0;
  // Several Jobs or pods that a queueing layer admits as one unit (a JobSet, a PyTorchJob, a
  // LeaderWorkerSet group): index into World::workload_groups, or -1. Placement is not affected.
  std::int32_t workload_group = -1;
  // Kueue TAS: the pod template's kueue.x-k8s.io/podset-* annotations (boxed: most pods have
  // none).
  Boxed<TopologyRequest> topology;
};

enum class PodPhase : std::uint8_t {
  kNotArrived,
  kPending,
  kRunning,
  kTerminating,   // evicted, in its grace period; still holds its resources
  kCrashBackoff,  // its container died (e.g. OOM) and waits to restart in place, holding devices
  // terminal states
  kSucceeded,
  kFailed,
  kOomKilled,
  kPreempted,
  kUnschedulable,
  kDeleted,  // its controller scaled down and deleted it (a Deployment, ReplicaSet, StatefulSet)
};

inline bool is_terminal(PodPhase p) {
  return p >= PodPhase::kSucceeded;
}

// The end-of-run state names used in reports (pod.status) and the conservation check.
std::string_view final_status_name(PodPhase p);

// True for resources NVIDIA's device plugin advertises: nvidia.com/gpu, nvidia.com/gpu.shared
// and the mixed-strategy MIG resources nvidia.com/mig-<profile>[.shared].
bool is_device_resource(std::string_view name);
// Fills PodSpec::device_requests from PodSpec::requests.
void derive_device_requests(PodSpec& pod, const ResourceNames& names);

struct PodState {
  PodPhase phase = PodPhase::kNotArrived;
  NodeId node = kNoNode;
  std::vector<std::uint16_t> gpus;  // physical GPUs it uses on `node` (for reports)
  // Where it ran last, kept after it is released (the report's pod.node and pod.devices).
  NodeId last_node = kNoNode;
  std::vector<std::uint16_t> last_gpus;
  // What it holds on `node`: device units (one may repeat) or a part of a GPU's share pool.
  std::vector<Holding> holdings;
  // DRA: while bound, the allocation of each claim (PodSpec::claims order; a shared claim's is a
  // copy of the Cluster's). Their GPU units are the last `claim_units` entries of `holdings`,
  // held by the claims rather than counted per pod.
  std::vector<ClaimAllocation> claims;
  std::uint16_t claim_units = 0;
  std::string claim_devices;                 // the last allocation, for reports: "gpu: gpu-3 (gpu)"
  std::vector<ClaimAllocation> last_claims;  // the last allocation (devices), for reports
  NodeId last_claims_node = kNoNode;         // and the node it was on
  SimTime restart_at = -1;                   // in crash back-off until then (still holding devices)
  std::int32_t oom_kills = 0;                // times it was OOM-killed
  bool memory_peaked = false;                // reached its peak GPU memory in the current run
  Timer run;  // this run's memory peak, crash restart and grace period end (sim/timer.hpp)
  double gpu_seconds_lost_oom = 0;  // GPU time of runs ended by an OOM kill
  SimTime submit = -1;              // first arrival
  SimTime pending_since = -1;       // start of the current wait
  SimTime first_start = -1;
  SimTime start = -1;         // start of the current attempt
  SimTime end = -1;           // terminal time
  SimDuration waited = 0;     // total time pending, over all attempts
  std::int32_t attempts = 0;  // scheduling attempts that failed or succeeded
  std::int32_t runs = 0;      // times it started running
  std::int32_t restarts = 0;  // restarts after preemption, OOM or failure
  // Progress: work left (reference-GPU microseconds) as of `progress_at`, at `rate`.
  SimDuration work_left = 0;
  SimTime progress_at = 0;
  double rate = 1.0;
  Timer completion;  // its planned completion, re-armed whenever its rate changes
  NodeId nominated_node = kNoNode;
  std::uint64_t last_reason = 0;   // hash of the last failure message (0 = none)
  bool last_unresolvable = false;  // the last failure was unresolvable on every node
  SimDuration ideal_runtime = 0;   // run time alone on the device it last ran on
  double gpu_seconds_lost = 0;     // GPU time thrown away by preemption or OOM kills
  // Failures (sim/run/failure_process.hpp) and checkpoints (PodSpec::checkpoint).
  std::int32_t interruptions = 0;       // runs ended by a node or GPU failure
  double gpu_seconds_lost_failure = 0;  // GPU time of those runs since their last checkpoint
  double gpu_seconds_overhead = 0;      // GPU time spent writing and loading checkpoints
  SimDuration saved_work = 0;           // work done that the last checkpoint keeps
  SimTime saved_at = -1;                // when the current run's last checkpoint completed
  SimDuration resume_cost = 0;          // the current run's load time before progress
  TopologyPlacement topology;           // its gang's locality at the last start (sim/topology)
};

}  // namespace capsim
