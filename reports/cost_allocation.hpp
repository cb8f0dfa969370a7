// Who was charged what, and when, in a finished run: the per-pod charges behind the summary's
// cost figures, rebuilt from the report file (node prices, the `start` events' device holdings
// and the events that release them) and reconciled with the run's cost ledger (the summary's
// queue.<q>.cost_usd, cost_unqueued_usd, cost_hardware_usd, cost_energy_usd). The OpenCost and
// FOCUS exports (reports/cost_export.hpp) are views of it. Pure data after loading.
//
// How a holding is charged, as sim/cost_ledger.cpp charges it: a whole GPU 1, a MIG instance
// max(memory slots / 8, compute slices / 7) of the catalog model, a time-slice or MPS replica
// 1 / replicas of its device, a GPU share milli / 1000; a GPU whose holders add up to more than 1
// is scaled down to 1. A holder pays gpu price (node price / GPUs) x its share per hour. The
// ledger also charges energy and CPU-only nodes' prices, which the report file cannot rebuild per
// pod; reconciliation scales each queue's charges to the ledger's queue total (so energy is
// spread over a queue's pods by their GPU charge). A queue whose cost lies only on CPU-only nodes
// has it spread over its pods there by run time (the file has no CPU requests); what no pod can
// carry is an "unattributed" charge of the queue. `max_deviation` says how far the rebuild was off.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/report_data.hpp"
#include "sim/time.hpp"

namespace capsim {

// A stretch of a charge at a constant rate.
struct ChargeSegment {
  SimTime start = 0, end = 0;
  double gpus = 0;           // charged GPUs (fractions of GPUs, after scaling)
  double cost_per_hour = 0;  // after reconciliation
};

// One holding: a pod on a node from a `start` event to the event that released its devices
// (or the end of the run).
struct PodCharge {
  std::string pod;  // "" for a queue's unattributed charge
  std::string job, queue, node, pool, gpu_model, sharing;
  // The workload's namespace and kueue.x-k8s.io/queue-name label, known from its `queued` event
  // in runs with Kueue objects; "" / none otherwise (the pod table records neither).
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::string devices;   // the start event's device list, e.g. "gpu0/mig-1g.10gb@0"
  std::string resource;  // "gpu", "mig-1g.10gb", "gpu-share", "gpu-replica", "cpu", "none"
  SimTime start = 0, end = 0;
  std::vector<ChargeSegment> segments;  // in time order, covering [start, end)

  double cost() const;
  double gpu_hours() const;
  // Cost and GPU-hours inside [from, to).
  double cost_in(SimTime from, SimTime to) const;
  double gpu_hours_in(SimTime from, SimTime to) const;
};

struct NodeCharge {
  std::string node, pool, gpu_model, sharing;
  std::int64_t gpus = 0;
  std::int64_t cpu_milli = 0, memory_mib = 0;
  double price_per_hour = 0;
};

struct CostAllocation {
  RunRow run;
  std::string currency = "USD";
  SimTime end = 0;  // the run's simulated end
  std::vector<NodeCharge> nodes;
  std::vector<PodCharge> charges;  // by start, then pod
  // The ledger's figures (summary).
  double total = 0, hardware = 0, energy = 0, allocated = 0, stranded = 0;
  // Largest |rebuilt - ledger| / ledger over the queues whose GPU charges were rebuilt (0: the
  // rebuild was exact; energy makes it positive), and how many queues' cost was that of pods on
  // CPU-only nodes, spread over them by run time.
  double max_deviation = 0;
  int cpu_spread_queues = 0;
  // Energy cost per hour of each pool over time: (from time, rate) steps, scaled so that their
  // integral is the ledger's energy total.
  std::map<std::string, std::vector<std::pair<SimTime, double>>> energy_steps;

  // Cost (hardware + energy) inside [from, to): hardware at its constant rate, energy by the
  // pool's sampled cost rate. Whole cluster, or one pool.
  double total_in(SimTime from, SimTime to) const;
  double pool_total_in(const std::string& pool, SimTime from, SimTime to) const;
  double energy_in(const std::string& pool, SimTime from, SimTime to) const;
  // Pool names in node order ("" = nodes without a pool), and a pool's GPUs.
  std::vector<std::string> pools() const;
  double gpus_in_pool(const std::string& pool) const;
};

// Rebuilds the charges of `data`'s run from its report file. Throws InputError (kInvalid) when
// the file has no events or no cost figures to rebuild from.
CostAllocation load_cost_allocation(const ReportData& data);

}  // namespace capsim
