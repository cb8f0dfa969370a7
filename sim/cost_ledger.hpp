// Money, energy and per-pool figures of a run, kept exactly. The ledger holds, for every node, the
// rates its current pods contribute: each GPU's hourly price and energy split among the pods that
// hold it (by the fraction each is charged for), the stranded and idle remainder, and the pool
// aggregates that pool samples report. Rates are piecewise constant between bind/unbind, so the
// Simulation calls advance(now) before every change and node_changed(node) after it, and the
// integrals are exact. The Cluster owns the state; the ledger only reads it. One thread.
//
// Given a Recorder, the ledger also reports who paid what as it integrates: each node's rates
// split per pod (hardware share, energy share, GPU power share, CPU and memory requested) and
// into the node's stranded and idle remainder, as ChargeRecord rows of constant rate, each
// written when its rate changes (or at finish()). Only the open stretches are kept, one per pod
// running and two per node; the rows of a run add up to totals() to floating-point rounding.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// Energy charged on top of the hardware price: facility energy = GPU energy x PUE, at a price per
// kWh. The default (price 0) charges no energy, as cloud prices include it.
struct EnergyPricing {
  double price_per_kwh = 0;
  double pue = 1.0;  // power usage effectiveness, >= 1
};

// How much of a device a pod pays for, and how much free device capacity no pod can use. The
// default follows the fact sheet: a whole GPU is 1; a MIG instance the larger of its memory share
// (memory slots / 8) and compute share (compute slices / 7); a time-slice or MPS replica its
// device's share / replicas; a GPU-share pod gpu_milli / 1000. Stranded: the compute slices of a
// MIG-enabled GPU that no instance covers (the whole GPU while it is being re-laid out).
// Other sharing models (DRA, ...) can supply their own.
class DeviceCharge {
 public:
  virtual ~DeviceCharge() = default;
  // Fraction (0..1) of the GPU of holding `h` on `node` that `pod` is charged for through it.
  // The standard charge is the holding's share, except a MIG instance, which pays for the larger
  // of its memory and compute parts of the GPU.
  virtual double charged_fraction(const PodSpec& pod, const NodeInfo& node, const Holding& h,
                                  const GpuModelInfo* model) const;
  // Fraction (0..1) of GPU `gpu` that is not allocated but cannot be used. Charged to the
  // stranded bucket instead of idle.
  virtual double stranded_fraction(const NodeInfo& node, std::uint16_t gpu,
                                   const GpuModelInfo* model) const;

  // The fact sheet's charge (above); a shared object without state.
  static const DeviceCharge& standard();
};

// Integrated totals, in the run's currency and kWh.
struct CostTotals {
  double hardware = 0;   // every node's price x hours
  double energy = 0;     // GPU energy x PUE x price
  double allocated = 0;  // charged to pods (hardware + energy)
  double stranded = 0;   // free but unusable device capacity
  double unqueued = 0;   // charged to pods without a queue (part of `allocated`)
  double gpu_kwh = 0;    // GPU energy at the device (before PUE)
  double total() const { return hardware + energy; }
  double idle() const { return total() - allocated - stranded; }
};

struct QueueCost {
  std::string queue;
  double cost = 0;         // hardware + energy charged to the queue's pods
  double gpu_seconds = 0;  // charged GPU-seconds (sum of charged fractions x time)
};

class CostLedger {
 public:
  // `charge` and `recorder` (may be null: no charge rows) must outlive the ledger.
  CostLedger(const Cluster& cluster, EnergyPricing energy,
             const DeviceCharge& charge = DeviceCharge::standard(), Recorder* recorder = nullptr);

  // Integrates the current rates up to `now` (no-op when now <= the last time).
  void advance(SimTime now);
  // Recomputes `node`'s contribution after a pod was bound to or released from it. With a
  // recorder, the stretches whose rate changed close at the last advance() time.
  void node_changed(NodeId node);
  // An autoscaled node is billed from its request to its removal (cloud instances bill from
  // launch), whether or not it is Ready: its price counts in hardware and pool rates, and its
  // node-hours accrue. Nodes not absent at the start are billed from the start. Call advance()
  // first.
  void set_billed(NodeId node, bool billed);
  bool billed(NodeId node) const { return billed_[node] != 0; }
  // Node-hours of each pool (pools() order) up to the last advance(): billed nodes x time.
  std::vector<double> pool_node_hours() const;
  // Billed nodes of each pool now.
  std::vector<std::int32_t> pool_nodes() const;
  // Closes every open stretch at the last advance() time and records it (the end of the run).
  // Call once, after the last advance() and before the recorder's end_run.
  void finish();

  // Current cost rate of the whole cluster (hardware + energy), per hour.
  double cost_per_hour() const { return hardware_rate_ + energy_rate_; }
  const CostTotals& totals() const { return totals_; }
  const EnergyPricing& energy() const { return energy_; }
  // Named queues that had pods charged, by name.
  std::vector<QueueCost> queues() const;
  // Pool names in first-seen node order ("" = nodes without a pool).
  const std::vector<std::string>& pools() const { return pool_names_; }
  // One record per pool at `now`; `node_fragment_milli` (indexed by node, may be empty) gives
  // each node's fragmented GPU capacity in milli-GPUs.
  std::vector<PoolSampleRecord> pool_samples(SimTime now,
                                             std::span<const double> node_fragment_milli) const;

  // Recomputes every node from scratch and checks that the running rates match (InvariantError).
  void check_rates() const;

 private:
  // What one payer (a pod, or the node's idle or stranded remainder) is charged on a node, per
  // hour, from `start` (set when recording).
  struct Payer {
    std::string_view kind;  // "pod", "idle", "stranded" (ChargeRecord::kind)
    PodId pod = kNoPod;
    double gpus = 0, hardware = 0, energy = 0, kw = 0, cpu_cores = 0, ram_bytes = 0;
    SimTime start = 0;
    bool same_rates(const Payer& o) const {
      return kind == o.kind && pod == o.pod && gpus == o.gpus && hardware == o.hardware &&
             energy == o.energy && kw == o.kw && cpu_cores == o.cpu_cores &&
             ram_bytes == o.ram_bytes;
    }
  };
  // Rates a node contributes, per hour (GPUs, MiB and W are instantaneous amounts).
  struct Contribution {
    std::vector<Payer> payers;  // when recording: the pods by id, then idle and stranded
    std::vector<std::pair<std::uint32_t, double>> queue_cost;  // (queue index, cost per hour)
    std::vector<std::pair<std::uint32_t, double>> queue_gpus;  // (queue index, charged GPUs)
    double energy_rate = 0;    // all of the node's GPU energy, per hour
    double stranded_rate = 0;  // hardware + idle energy of stranded capacity, per hour
    double gpus_allocated = 0;
    double gpus_busy = 0;
    double memory_allocated_mib = 0;
    double memory_used_mib = 0;
    double power_w = 0;
    double shared_total = 0;  // MIG instances / replicas advertised
    double shared_used = 0;   // ... and held
    std::int64_t pods = 0;
  };
  struct PoolRates {
    double gpus_total = 0, gpus_allocated = 0, gpus_busy = 0;
    double memory_total_mib = 0, memory_allocated_mib = 0, memory_used_mib = 0;
    double power_w = 0, hardware_rate = 0, energy_rate = 0;
    double shared_total = 0, shared_used = 0;
    std::int64_t pods = 0;
    std::int32_t nodes = 0;   // billed nodes
    double node_seconds = 0;  // integral of `nodes` up to `since`
    SimTime since = 0;
  };

  // One pod's hold on one GPU.
  struct Holder {
    std::uint32_t queue;
    std::uint32_t slot;  // the pod's index in the node's pod list
    std::uint16_t gpu;   // the GPU's index on the node
    double charged;      // fraction of the GPU it pays for
    double demand;       // busy fraction it asks of the GPU (its util x its share)
  };
  static constexpr std::uint32_t kUnknownQueue = 0xffffffffu;

  Contribution compute(const NodeInfo& node) const;
  // The same, into `c`, reusing its vectors' room.
  void compute(const NodeInfo& node, Contribution& c) const;
  static Payer pod_payer(PodId pod, const PodSpec& spec, SimTime start);
  // Fills c.payers (pods, idle, stranded) for `node`; `pods` holds the pods' rates so far.
  void add_remainders(const NodeInfo& node, Contribution& c, std::vector<Payer> pods,
                      double stranded_gpus, double stranded_kw) const;
  // Records the stretches of `old` whose rates `next` does not continue, and carries the start of
  // the others over to `next`.
  void roll(NodeId node, const Contribution& old, Contribution& next);
  void emit(NodeId node, const Payer& p, SimTime end) const;
  void apply(const NodeInfo& node, const Contribution& c, double sign);
  // `pod`'s queue index; `queue` is its queue name, interned at the pod's first charge.
  std::uint32_t queue_index(PodId pod, const std::string& queue) const;

  const Cluster* cluster_;
  EnergyPricing energy_;
  const DeviceCharge* charge_;
  Recorder* recorder_;

  std::vector<Contribution> nodes_;
  std::vector<std::uint32_t> node_pool_;
  std::vector<std::uint8_t> billed_;  // per node
  std::vector<std::string> pool_names_;
  std::vector<PoolRates> pool_rates_;
  // Queue indices: 0 is "no queue"; named queues are interned as pods are first charged.
  mutable std::map<std::string, std::uint32_t> queue_ids_;
  mutable std::vector<std::string> queue_names_;
  mutable std::vector<std::uint32_t> pod_queue_;  // by pod: its queue index, or kUnknownQueue
  // Scratch of compute(): holders in pod order, offsets by GPU, and holders grouped by GPU.
  mutable std::vector<Holder> holder_scratch_;
  mutable std::vector<std::uint32_t> holder_first_;
  mutable std::vector<std::uint32_t> holder_next_;
  mutable std::vector<Holder> holder_by_gpu_;
  Contribution next_;  // node_changed()'s new contribution, swapped in
  std::vector<double> queue_cost_rate_;
  std::vector<double> queue_gpu_rate_;
  std::vector<QueueCost> queue_totals_;

  double hardware_rate_ = 0;
  double energy_rate_ = 0;
  double power_w_ = 0;
  double stranded_rate_ = 0;
  SimTime last_ = 0;
  CostTotals totals_;
};

// Appends the cost metrics of docs/metrics.md to `summary`: cost_hardware_usd, cost_energy_usd,
// cost_allocated_usd, cost_idle_usd, cost_stranded_usd, cost_unqueued_usd, energy_facility_kwh,
// and per named queue queue.<q>.cost_usd and queue.<q>.gpu_hours.
void append_cost_metrics(Summary& summary, const CostLedger& ledger);

}  // namespace capsim
