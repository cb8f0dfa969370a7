// Everything `capsim report` shows about one run, read from a report file in one go: the run row,
// the summary (the figures every other number must agree with), cluster and pool samples, the
// pools, each queue's waits and the scheduler's most frequent pending reasons. Built by
// load_report_data(); the HTML, markdown and Prometheus writers only format it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/report_tables.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_recorder.hpp"

namespace capsim {

struct PoolInfo {
  std::string pool;  // "" = nodes without a pool
  std::string gpu_model;
  std::string sharing;
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  double price_per_hour = 0;  // all the pool's nodes
};

struct QueueWaits {
  std::string queue;
  std::vector<double> waits;  // seconds, sorted; the pods the summary's queue waits count
};

// One reason the scheduler gave for not placing a pod ("Insufficient nvidia.com/gpu"), counted
// over the run's `pending` events.
struct PendingReason {
  std::string reason;
  std::int64_t events = 0;     // pending events that name it
  std::int64_t pods = 0;       // distinct pods those events are about
  double nodes_per_event = 0;  // mean number of nodes that gave this reason
};

// From the pending_reason table (schema 3): how often one plugin blocked the pods of one queue,
// counted in failed scheduling attempts ("pod-attempts"), and when in the run.
struct QueueBlocker {
  std::string queue;  // the pod table's queue; "" for pods without one
  std::string plugin;
  std::int64_t attempts = 0;  // failed attempts in which the plugin rejected some node
  std::int64_t pods = 0;      // distinct pods
  std::array<std::int64_t, 4> by_quarter{};  // attempts per quarter of the simulated time
};

// A Kueue workload's step, from the run's events (runs with Kueue objects): kind is queued,
// admission-pending, admitted, requeued, deactivated, or "finished" (its pods' last end, from the
// pod table). Workloads are named as the events name them ("workload W: ...").
struct WorkloadStep {
  SimTime time = 0;
  std::string kind;
  std::string workload;
  std::string cluster_queue;  // named by queued and admitted; "" on the others
  std::string local_queue;    // "namespace/name", named by queued; "" on the others
  double wait_s = -1;  // admitted: the wait the event states ("wait time since queued was Xs")
};

struct ReportData {
  std::string file;
  std::int64_t schema_version = 0;
  RunRow run;
  Summary summary;
  std::vector<SampleRecord> samples;
  std::vector<PoolSampleRecord> pool_samples;  // empty for files older than the pool_sample table
  std::vector<PoolInfo> pools;
  std::vector<QueueWaits> queues;
  std::vector<PendingReason> reasons;  // most frequent first
  std::int64_t pending_events = 0;
  // Schema 3 files: the reasons above count failed attempts from the pending_reason table (not
  // pending events), and these break them down by queue; older files: false and empty.
  bool reasons_from_attempts = false;
  std::int64_t failed_attempts = 0;
  std::vector<QueueBlocker> blockers;         // by queue, then most attempts first
  std::vector<QueueSampleRow> queue_samples;  // by time, then queue, flavor, resource
  std::vector<WorkloadStep> workload_steps;   // in event order; empty without queue samples
  // The run's ClusterQueue quotas and LocalQueues (empty in files older than those tables).
  std::vector<QueueQuotaRow> queue_quotas;
  std::vector<LocalQueueRow> local_queues;
  std::vector<std::pair<SimTime, std::string>> oom_kills;  // (time, node's pool), in order

  // The summary value, NaN when absent.
  double metric(const std::string& name) const;
  bool has(const std::string& name) const;
  // Pool names in the order of the pools table (GPU pools first).
  std::vector<std::string> pool_names() const;
};

// Loads run `run_id` (default: the latest complete run) of the report at `path`. Throws
// InputError: missing file (kMissing), not a capsim report, no complete run, the run is not
// complete (kInvalid).
ReportData load_report_data(const std::string& path, std::optional<std::int64_t> run_id);

// Splits a pending event's detail ("0/26 nodes are available: 16 Insufficient nvidia.com/gpu,
// 10 node(s) had untolerated taint {...}. preemption: ...") into (reason, node count) pairs. The
// preemption part is left out: it explains why preemption did not help, not why the pod waited.
std::vector<std::pair<std::string, std::int64_t>> split_pending_reasons(const std::string& detail);

}  // namespace capsim
