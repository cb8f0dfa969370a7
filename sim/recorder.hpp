// What a run reports, and the interface it reports through. The Simulation calls a Recorder as
// things happen (events, samples) and once at the end (pods, summary); reports/ implements it on
// SQLite, tests implement it in memory. A Recorder never influences the run.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.hpp"
#include "sim/world.hpp"

namespace capsim {

struct RunInfo {
  std::string scenario;  // scenario name
  std::string scenario_path;
  std::string scenario_sha256;  // of every input file read (path, size, bytes) and --set overrides
  std::uint64_t seed = 0;
  std::string profile;  // scheduler profile used
  std::string capsim_version;
  std::string status = "running";  // running | complete | failed
  double sim_seconds = 0;
  double wall_seconds = 0;
  std::string overrides;  // --set assignments, one per line
};

struct EventRecord {
  SimTime time = 0;
  std::string_view kind;  // arrive, start, complete, fail, unschedulable, pending, preempt, ...
  PodId pod = kNoPod;
  NodeId node = kNoNode;
  std::string detail;
};

struct SampleRecord {
  SimTime time = 0;
  double gpus_total = 0;
  double gpus_allocated = 0;
  double gpus_busy = 0;
  double gpu_memory_allocated_mib = 0;
  double gpu_memory_used_mib = 0;
  std::int64_t pods_running = 0;
  std::int64_t pods_pending = 0;
  double fragmented_gpus = 0;
  double power_w = 0;
  double cost_per_hour = 0;
  // Fill experiments: GPU request of the pods arrived so far / GPU capacity; NaN (NULL in the
  // report) for time-driven samples.
  double arrived_gpu_ratio = std::numeric_limits<double>::quiet_NaN();
};

// One row of the queue_sample table (design.md §4): a ClusterQueue's quota and usage of one
// resource in one flavor at a time; a row without flavor sums the flavors and carries what pending
// workloads request. Amounts in capsim's units (cpu millicores, memory bytes, others units).
struct QueueSampleRecord {
  SimTime time = 0;
  std::string queue;
  std::string flavor;  // empty = the sum over flavors
  std::string resource;
  double usage = 0;
  double nominal = 0;
  double borrowed = 0;
  double pending = 0;  // requested by workloads waiting for admission (flavor-less rows)
};

// One node pool's figures at a sample time (the `pool_sample` table). Nodes without a pool form
// the pool "". The shared_units fields count MIG instances or time-slice/MPS replicas that the
// pool's GPUs advertise and that pods hold; they stay 0 where GPUs are not shared.
struct PoolSampleRecord {
  SimTime time = 0;
  std::string pool;
  double gpus_total = 0;
  double gpus_allocated = 0;
  double gpus_busy = 0;
  double gpu_memory_total_mib = 0;
  double gpu_memory_allocated_mib = 0;
  double gpu_memory_used_mib = 0;
  std::int64_t pods_running = 0;
  double fragmented_gpus = 0;
  double power_w = 0;
  double cost_per_hour = 0;  // hardware + energy
  double shared_units_total = 0;
  double shared_units_allocated = 0;
};

// One stretch of constant cost rate on one node (the `charge` table), written by the CostLedger
// as the stretch closes: a pod's charge (kind "pod"), or what the node's pods were not charged,
// split into "stranded" (free device capacity no pod can use) and "idle" (the rest). The rows of
// a run add up to the ledger's totals: hardware_cost + energy_cost over all rows is the summary's
// cost_total_usd, over the pod rows its cost_allocated_usd. Amounts (gpus, cpu_cores, ram_bytes)
// are held throughout [start, end); costs and energy are the stretch's integrals, so the part of
// a row inside a sub-interval is its share of the duration.
struct ChargeRecord {
  std::string_view kind;  // "pod", "idle" or "stranded"
  PodId pod = kNoPod;     // kNoPod for idle and stranded rows
  NodeId node = kNoNode;
  SimTime start = 0, end = 0;
  double gpus = 0;           // GPUs charged (pod), unused (idle) or stranded
  double hardware_cost = 0;  // node price x share x hours
  double energy_cost = 0;    // facility energy x price
  double gpu_kwh = 0;        // GPU energy at the device
  double cpu_cores = 0;      // CPU requested (pod) or not requested (idle)
  double ram_bytes = 0;      // memory requested (pod) or not requested (idle)
};

// One device a pod's DRA resource claim holds (the `pod_claim` table), or a claim of the pod
// that was never allocated (request and device empty).
struct ClaimDeviceRecord {
  std::string claim;           // the pod's name for it (spec.resourceClaims[].name)
  std::string resource_claim;  // namespace/name; a template's claim is named "<pod>-<claim>"
  std::string template_name;   // the ResourceClaimTemplate it was made from; empty if shared
  std::string node;            // where it was allocated; empty when not allocated
  std::string request;         // "gpu", or "gpu/b200" for a firstAvailable subrequest
  std::string device;          // "gpu-3", "gpu-0-mig-3g40gb-9-4"
  std::string driver;
  std::string pool;
  std::int32_t gpu = -1;  // the node's GPU it stands for; -1 for a device capsim does not model
};

// In failed (unschedulable) scheduling cycles, how many nodes one plugin rejected with one
// reason: the counts of upstream's "0/N nodes are available: ..." message (the `pending_reason`
// table). A PreFilter rejection counts every node. One record stands for `attempts` consecutive
// failed cycles of the pod (attempt numbers attempt .. attempt + attempts - 1, from `time` to
// `last_time`) that all had exactly the same counts, plugin by plugin.
struct PendingReasonRecord {
  SimTime time = 0;
  PodId pod = kNoPod;
  std::int32_t attempt = 0;  // PodState::attempts of the first of the cycles
  std::string_view plugin;
  std::string_view reason;
  std::int32_t nodes = 0;
  std::int32_t attempts = 1;
  SimTime last_time = 0;
};

// One explained scheduling cycle (`capsim run --explain`): the cycle's outcome and the pod
// evaluated on the same state by every plugin on every node (sim/framework/evaluation.hpp), for
// the explain_* tables.
struct ExplainRecord {
  SimTime time = 0;
  PodId pod = kNoPod;
  std::int32_t attempt = 0;
  std::string_view profile;
  std::string_view tie_break;  // the profile's: "first" or "random"
  std::string_view result;     // scheduled, unschedulable, nominated (preempted for it), error
  NodeId node = kNoNode;       // scheduled to, or nominated
  std::string message;         // the FitError / error message; "" when scheduled
  std::int32_t evaluated_nodes = 0, feasible_nodes = 0;  // what the cycle itself looked at
  NodeId selected = kNoNode;                             // the evaluation's selectHost pick
  std::string error;                                     // the evaluation's plugin error
  bool post_filter = false;                              // PostFilter (preemption) ran

  struct Verdict {           // a PreFilter, Filter or PreScore plugin's status
    NodeId node = kNoNode;   // kNoNode for PreFilter and PreScore
    std::string_view point;  // prefilter, filter, prescore
    std::string_view plugin;
    std::string_view code;  // Success, Skip, Unschedulable, UnschedulableAndUnresolvable, Error
    std::string reason;
  };
  struct Score {
    NodeId node = kNoNode;
    std::string_view plugin;
    std::int64_t raw = 0, normalized = 0, weight = 0;
    bool skipped = false;
  };
  struct Node {
    NodeId node = kNoNode;
    bool feasible = false;
    std::string_view rejected_by;  // the Filter plugin a cycle reports; "" when feasible
    bool scored = false;
    std::int64_t total = 0;
  };
  struct Candidate {  // PostFilter's (DefaultPreemption's) candidates, in candidate order
    NodeId node = kNoNode;
    std::vector<PodId> victims;
    bool chosen = false;
    std::int64_t pdb_violations = 0, highest_priority = 0, priority_sum = 0;
    SimTime earliest_start_of_highest = 0;
    std::string_view lost_on;  // "" for the chosen one
  };
  std::vector<Verdict> verdicts;
  std::vector<Score> scores;
  std::vector<Node> nodes;
  std::vector<Candidate> candidates;
};

// Per-pod result row (design.md §4 `pod` table).
struct PodRecord {
  PodId pod = kNoPod;
  std::string status;  // completed, failed, oom_killed, preempted, unschedulable, pending, running
  SimTime submit = -1, start = -1, end = -1;
  std::string node;
  std::string devices;
  double gpu_request = 0;  // GPUs (fractional for shares)
  std::int32_t attempts = 0;
  double wait_s = 0;
  std::vector<ClaimDeviceRecord> claims;  // DRA: its claims' devices (the last allocation)
  // Topology (sim/topology.hpp): its gang's span at the last start ("" = none) and the factor.
  std::string topology_span;
  double topology_slowdown = 1.0;
};

using Summary = std::vector<std::pair<std::string, double>>;

// How much of a run a Recorder keeps (`capsim run --record`, docs/report-schema.md): kSummary the
// run, node, sample (pool, queue) and summary rows; kPodRows those and the pod rows (with their
// claims); kFull everything (events, charges, pending reasons, explained cycles).
enum class RecordLevel { kSummary, kPodRows, kFull };

class Recorder {
 public:
  virtual ~Recorder() = default;
  // What this recorder keeps. Producers may skip making rows it would drop (the cost ledger makes
  // no charge rows below kFull); the run itself and its summary never depend on it.
  virtual RecordLevel level() const { return RecordLevel::kFull; }
  virtual void begin_run(const RunInfo& info, const World& world) = 0;
  virtual void record_event(const EventRecord& e) = 0;
  virtual void record_sample(const SampleRecord& s) = 0;
  // Runs with queues (Kueue objects) record these at every sample; others never call it.
  virtual void record_queue_sample(const QueueSampleRecord& /*q*/) {}
  // Per-pool figures, right after the cluster-wide sample of the same time.
  virtual void record_pool_sample(const PoolSampleRecord& /*s*/) {}
  // Cost stretches, as they close (ChargeRecord); runs recorded without a cost ledger never call
  // it.
  virtual void record_charge(const ChargeRecord& /*c*/) {}
  // After every unschedulable scheduling cycle, one per (plugin, reason).
  virtual void record_pending_reason(const PendingReasonRecord& /*r*/) {}
  // After every explained scheduling cycle (capsim run --explain).
  virtual void record_explain(const ExplainRecord& /*e*/) {}
  // Called once, after the last event: the pod table, the summary, and the final run row.
  virtual void end_run(const RunInfo& info, const std::vector<PodRecord>& pods,
                       const Summary& summary) = 0;
};

// Discards everything (benchmarks, `--dry-run`).
class NullRecorder final : public Recorder {
 public:
  void begin_run(const RunInfo&, const World&) override {}
  void record_event(const EventRecord&) override {}
  void record_sample(const SampleRecord&) override {}
  void end_run(const RunInfo&, const std::vector<PodRecord>&, const Summary&) override {}
};

}  // namespace capsim
