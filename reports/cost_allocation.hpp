// Who was charged what, and when, in a finished run: the cost ledger's own stretches of constant
// rate (the report's `charge` table, written by sim/cost_ledger.cpp as the run went), grouped per
// pod and node, with the names the exports need (job, queue, pool, GPU model, namespace and the
// kueue.x-k8s.io/queue-name label). Nothing is rebuilt or scaled: the pod rows add up to the
// run's cost_allocated_usd, and with the nodes' idle and stranded rows to its cost_total_usd, to
// floating-point rounding. A row's rate is constant, so its part inside a window is its share of
// the duration, and window splits add up to the whole. The OpenCost and FOCUS exports
// (reports/cost_export.hpp) are views of it. Pure data after loading.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/report_data.hpp"
#include "reports/report_tables.hpp"
#include "sim/time.hpp"

namespace capsim {

// Sums of charge rows (or their parts inside a window).
struct ChargeSums {
  double hardware = 0, energy = 0;  // currency
  double cpu_node_hardware = 0;     // the part of `hardware` paid on nodes without GPUs
  double gpu_hours = 0, cpu_core_hours = 0, ram_byte_hours = 0, gpu_kwh = 0;

  double cost() const { return hardware + energy; }
  // Adds `fraction` (0..1) of `row`, a row of a node with (`cpu_node`) or without GPUs.
  void add(const ChargeRow& row, double fraction, bool cpu_node);
  void add(const ChargeSums& other);
};

// The share (0..1) of [row.start, row.end) that lies inside [from, to).
double fraction_inside(const ChargeRow& row, SimTime from, SimTime to);

// One pod's charge rows on one node.
struct PodCharge {
  std::string pod;
  std::string job, queue, node, pool, gpu_model, sharing;
  // The kind of the owner `job` names (Job, Deployment, StatefulSet, DaemonSet, ...): the pod
  // table's owner_kind; "" when the pod has none or the file predates schema 6.
  std::string owner_kind;
  // The workload's namespace and kueue.x-k8s.io/queue-name label, known from its `queued` event
  // in runs with Kueue objects; "" / none otherwise (the pod table records neither).
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::string devices;         // the pod table's device list, e.g. "gpu0/mig-1g.10gb@0"
  std::string resource;        // "gpu", "mig-1g.10gb", "gpu-share", "gpu-replica", "cpu", "none"
  bool cpu_node = false;       // its node has no GPUs (its price is split by requested CPU)
  SimTime start = 0, end = 0;  // first row's start, last row's end
  std::vector<ChargeRow> segments;  // in time order

  ChargeSums sums_in(SimTime from, SimTime to) const;
  double cost() const { return sums_in(0, kEndOfTime).cost(); }
  double gpu_hours() const { return sums_in(0, kEndOfTime).gpu_hours; }
};

struct NodeCharge {
  std::string node, pool, gpu_model, sharing;
  std::int64_t gpus = 0;
  std::int64_t cpu_milli = 0, memory_mib = 0;
  double price_per_hour = 0;
  std::vector<ChargeRow> idle, stranded;  // the node's rows that no pod paid, in time order

  bool cpu_node() const { return gpus <= 0; }
};

struct CostAllocation {
  RunRow run;
  std::string currency = "USD";
  SimTime end = 0;  // the run's simulated end
  std::vector<NodeCharge> nodes;
  std::vector<PodCharge> charges;  // by start, then pod
  // The ledger's figures (summary), for checks and notes.
  double total = 0, hardware = 0, energy = 0, allocated = 0, stranded = 0;

  // Sums inside [from, to): every row (the whole cost), the nodes' idle or stranded rows, of all
  // nodes or of one pool's.
  ChargeSums total_in(SimTime from, SimTime to) const;
  ChargeSums idle_in(SimTime from, SimTime to, const std::string* pool = nullptr) const;
  ChargeSums stranded_in(SimTime from, SimTime to, const std::string* pool = nullptr) const;
  // Pool names in node order ("" = nodes without a pool), and a pool's GPUs.
  std::vector<std::string> pools() const;
  double gpus_in_pool(const std::string& pool) const;
};

// The charges of `data`'s run, read from its report file. Throws InputError (kInvalid) when the
// run has no cost figures, or the file was written before the `charge` table (schema 1): "written
// by an older capsim; re-run".
CostAllocation load_cost_allocation(const ReportData& data);

}  // namespace capsim
