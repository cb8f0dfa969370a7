#include "sim/cost_ledger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"

namespace capsim {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

// A pod's payer on its node before its devices are counted: what it requests of CPU and memory.
CostLedger::Payer CostLedger::pod_payer(PodId pod, const PodSpec& spec, SimTime start) {
  Payer p{"pod", pod};
  p.cpu_cores = static_cast<double>(spec.requests.get(kCpu)) / 1000.0;
  p.ram_bytes = static_cast<double>(spec.requests.get(kMemory));
  p.start = start;
  return p;
}

double DeviceCharge::charged_fraction(const PodSpec& /*pod*/, const NodeInfo& node,
                                      const Holding& h, const GpuModelInfo* model) const {
  if (h.pooled()) return h.share;  // a GPU share: milli / 1000
  const DeviceUnit* unit = &node.units.at(h.unit);
  const std::uint16_t gpu = unit->gpu;
  double device = 1.0;  // the whole GPU
  if (unit->instance >= 0 && model != nullptr && model->mig_memory_slots > 0 &&
      model->mig_compute_slots > 0) {
    // A MIG instance: max(memory slots / 8, compute slices / 7).
    const MigInstance& mi =
        node.gpus[gpu].layout.instances.at(static_cast<std::size_t>(unit->instance));
    const double memory = static_cast<double>(mi.size) / model->mig_memory_slots;
    const double compute = static_cast<double>(model->mig_profiles.at(mi.profile).compute_slices) /
                           model->mig_compute_slots;
    device = std::max(memory, compute);
  }
  // Time-slicing and MPS: one replica of the device.
  return device / std::max<std::uint16_t>(1, unit->replicas);
}

double DeviceCharge::stranded_fraction(const NodeInfo& node, std::uint16_t gpu,
                                       const GpuModelInfo* model) const {
  const GpuDeviceState& g = node.gpus[gpu];
  if (model == nullptr || !g.layout.mig_enabled || model->mig_compute_slots <= 0) return 0.0;
  if (g.reconfiguring) return 1.0;
  double configured = 0;
  for (const MigInstance& mi : g.layout.instances)
    configured += model->mig_profiles.at(mi.profile).compute_slices;
  return std::max(0.0, 1.0 - configured / model->mig_compute_slots);
}

const DeviceCharge& DeviceCharge::standard() {
  static const DeviceCharge standard;
  return standard;
}

CostLedger::CostLedger(const Cluster& cluster, EnergyPricing energy, const DeviceCharge& charge,
                       Recorder* recorder)
    : cluster_(&cluster),
      energy_(energy),
      charge_(&charge),
      // A recorder that keeps no charge rows (`--record` below full) is as none: the stretches'
      // payers are then never tracked, and the totals come out the same.
      recorder_(recorder != nullptr && recorder->level() == RecordLevel::kFull ? recorder
                                                                               : nullptr) {
  CAPSIM_CHECK(energy_.pue >= 1.0 && energy_.price_per_kwh >= 0,
               "energy pricing needs PUE >= 1 and a non-negative price");
  queue_names_.push_back("");
  queue_ids_[""] = 0;
  const World& w = cluster.world();
  const auto& nodes = cluster.nodes();
  nodes_.resize(nodes.size());
  node_pool_.resize(nodes.size());
  billed_.resize(nodes.size());
  std::map<std::string, std::uint32_t> pool_ids;
  for (const NodeInfo& n : nodes) {
    auto [it, added] =
        pool_ids.emplace(n.spec->pool, static_cast<std::uint32_t>(pool_names_.size()));
    if (added) {
      pool_names_.push_back(n.spec->pool);
      pool_rates_.emplace_back();
    }
    node_pool_[n.id] = it->second;
    if (n.absent) continue;  // an autoscaled pool's node, not yet requested
    billed_[n.id] = 1;
    PoolRates& p = pool_rates_[it->second];
    ++p.nodes;
    p.gpus_total += n.spec->gpu_count;
    p.hardware_rate += n.spec->price_per_hour;
    if (n.spec->gpu_model != kNoGpuModel) {
      p.memory_total_mib += static_cast<double>(w.gpu_models[n.spec->gpu_model].memory_bytes) /
                            kMiB * n.spec->gpu_count;
    }
    hardware_rate_ += n.spec->price_per_hour;
  }
  for (const NodeInfo& n : nodes) {
    nodes_[n.id] = compute(n);
    apply(n, nodes_[n.id], +1);
  }
}

std::uint32_t CostLedger::queue_index(PodId pod, const std::string& queue) const {
  // Looked up for every pod of a node at each of its changes, so each pod's index is kept once
  // its queue was interned (in the order pods are first charged, as before).
  const auto at = static_cast<std::size_t>(pod);
  if (at < pod_queue_.size() && pod_queue_[at] != kUnknownQueue) return pod_queue_[at];
  std::uint32_t id = 0;
  if (auto it = queue_ids_.find(queue); it != queue_ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<std::uint32_t>(queue_names_.size());
    queue_ids_.emplace(queue, id);
    queue_names_.push_back(queue);
  }
  if (at >= pod_queue_.size())
    pod_queue_.resize(std::max(at + 1, cluster_->world().pods.size()), kUnknownQueue);
  pod_queue_[at] = id;
  return id;
}

CostLedger::Contribution CostLedger::compute(const NodeInfo& n) const {
  Contribution c;
  compute(n, c);
  return c;
}

void CostLedger::compute(const NodeInfo& n, Contribution& c) const {
  const World& w = cluster_->world();
  const NodeSpec& spec = *n.spec;
  // Start from nothing, keeping the vectors' room (a node changes at every bind and release).
  {
    auto payers = std::move(c.payers);
    auto queue_cost = std::move(c.queue_cost);
    auto queue_gpus = std::move(c.queue_gpus);
    c = Contribution{};
    c.payers = std::move(payers);
    c.payers.clear();
    c.queue_cost = std::move(queue_cost);
    c.queue_cost.clear();
    c.queue_gpus = std::move(queue_gpus);
    c.queue_gpus.clear();
  }
  if (billed_[n.id] == 0) return;  // not requested: it costs nothing
  c.pods = static_cast<std::int64_t>(n.pods.size());
  // $ per hour of one kW of GPU power: facility energy at the energy price.
  const double per_kw = energy_.price_per_kwh * energy_.pue;

  if (spec.gpu_count <= 0 || n.gpus.empty()) {
    // A node without GPUs: its price is split by requested CPU over allocatable CPU.
    const double cpu = static_cast<double>(spec.allocatable[kCpu]);
    std::vector<Payer> pods;
    for (PodId p : n.pods) {
      const PodSpec& ps = w.pods[p];
      const double share = cpu > 0 ? static_cast<double>(ps.requests.get(kCpu)) / cpu : 0.0;
      if (share > 0)
        c.queue_cost.emplace_back(queue_index(p, ps.queue), spec.price_per_hour * share);
      if (recorder_ != nullptr) {
        pods.push_back(pod_payer(p, ps, last_));
        pods.back().hardware = spec.price_per_hour * share;
      }
    }
    if (recorder_ != nullptr) add_remainders(n, c, std::move(pods), 0.0, 0.0);
    return;
  }

  const GpuModelInfo* model = cluster_->gpu_model(n);
  // A down node (failed, or in maintenance) draws no GPU power: its price is still billed, its
  // GPUs' idle energy is not. (Absent and reclaimed nodes are not billed at all.)
  const double idle_w = model && !n.down ? model->idle_w : 0.0;
  const double tdp_w = model && !n.down ? model->tdp_w : 0.0;
  const double gpu_price = spec.price_per_hour / static_cast<double>(n.gpus.size());

  // 1. Who holds each GPU, through which units, with what charge and demand: in pod order, then
  // grouped by GPU (a counting sort that keeps that order within each GPU).
  std::vector<Payer> pods;
  std::vector<Holder>& held = holder_scratch_;
  held.clear();
  for (std::size_t slot = 0; slot < n.pods.size(); ++slot) {
    const PodId p = n.pods[slot];
    const PodSpec& ps = w.pods[p];
    const PodState& st = cluster_->pod(p);
    const std::uint32_t q = queue_index(p, ps.queue);
    if (recorder_ != nullptr) pods.push_back(pod_payer(p, ps, last_));
    for (const Holding& h : st.holdings) {
      const double charged = std::clamp(charge_->charged_fraction(ps, n, h, model), 0.0, 1.0);
      held.push_back(Holder{q, static_cast<std::uint32_t>(slot), n.units.at(h.unit).gpu, charged,
                            ps.gpu_util * charged});
      c.memory_used_mib += static_cast<double>(cluster_->pod_memory(p, n, h)) / kMiB;
    }
  }
  std::vector<std::uint32_t>& first = holder_first_;  // held by GPU g: [first[g], first[g + 1])
  first.assign(n.gpus.size() + 1, 0);
  for (const Holder& h : held)
    ++first[h.gpu + 1u];
  for (std::size_t g = 0; g < n.gpus.size(); ++g)
    first[g + 1] += first[g];
  std::vector<Holder>& by_gpu = holder_by_gpu_;
  by_gpu.resize(held.size());
  {
    std::vector<std::uint32_t>& next = holder_next_;
    next.assign(first.begin(), first.end() - 1);
    for (const Holder& h : held)
      by_gpu[next[h.gpu]++] = h;
  }
  // Devices shared as MIG instances or replicas: advertised and held.
  for (const DeviceUnit& u : n.units) {
    if (!u.alive() || (u.instance < 0 && u.mode == ShareMode::kExclusive)) continue;
    c.shared_total += u.replicas;
    c.shared_used += u.used;
  }

  // 2. Per GPU: split its price and energy among its holders.
  double stranded_gpus = 0, stranded_kw = 0;
  for (std::size_t g = 0; g < n.gpus.size(); ++g) {
    const std::span<const Holder> hs(by_gpu.data() + first[g], first[g + 1] - first[g]);
    const GpuDeviceState& dev = n.gpus[g];
    double charged = 0, demand = 0;
    for (const Holder& h : hs) {
      charged += h.charged;
      demand += h.demand;
    }
    // Charges above a whole GPU (MIG's max(memory, compute) rule can exceed 1) are scaled down so
    // that a GPU is never charged more than its price.
    const double scale = charged > 1.0 ? 1.0 / charged : 1.0;
    const double busy = dev.busy;  // set by the device model (or the holders' utilisation)
    // power = idle + (TDP - idle) x busy
    const double power_w = idle_w + (tdp_w - idle_w) * busy;
    c.energy_rate += power_w / 1000.0 * per_kw;
    c.power_w += power_w;
    c.gpus_busy += busy;
    c.gpus_allocated += dev.alloc;
    c.memory_allocated_mib += dev.memory_alloc / kMiB;
    // A holder pays (price + idle energy) x its charged share, plus the busy part of the energy
    // in proportion to its demand (utilisation x charged share).
    const double base_rate = gpu_price + idle_w / 1000.0 * per_kw;
    const double dynamic_rate = (tdp_w - idle_w) * busy / 1000.0 * per_kw;
    for (const Holder& h : hs) {
      const double share = h.charged * scale;
      double rate = base_rate * share;
      if (demand > 0) rate += dynamic_rate * h.demand / demand;
      c.queue_cost.emplace_back(h.queue, rate);
      c.queue_gpus.emplace_back(h.queue, share);
      if (recorder_ != nullptr) {
        // The same split, in its parts: hardware, and the GPU power the holder is charged for.
        Payer& payer = pods[h.slot];
        double kw = idle_w * share / 1000.0;
        if (demand > 0) kw += (tdp_w - idle_w) * busy * h.demand / demand / 1000.0;
        payer.gpus += share;
        payer.hardware += gpu_price * share;
        payer.kw += kw;
        payer.energy += kw * per_kw;
      }
    }
    // (Busy power with no demanding holder, which the built-in models never produce, stays
    // unattributed: idle.)
    const double free = std::max(0.0, 1.0 - charged * scale);
    const double stranded =
        std::clamp(charge_->stranded_fraction(n, static_cast<std::uint16_t>(g), model), 0.0, free);
    c.stranded_rate += base_rate * stranded;
    stranded_gpus += stranded;
    stranded_kw += idle_w * stranded / 1000.0;
  }
  if (recorder_ != nullptr) add_remainders(n, c, std::move(pods), stranded_gpus, stranded_kw);
}

void CostLedger::add_remainders(const NodeInfo& n, Contribution& c, std::vector<Payer> pods,
                                double stranded_gpus, double stranded_kw) const {
  const NodeSpec& spec = *n.spec;
  const double per_kw = energy_.price_per_kwh * energy_.pue;
  const bool gpu_node = spec.gpu_count > 0 && !n.gpus.empty();
  const double gpus = gpu_node ? static_cast<double>(n.gpus.size()) : 0.0;
  std::sort(pods.begin(), pods.end(), [](const Payer& a, const Payer& b) { return a.pod < b.pod; });
  Payer stranded{"stranded", kNoPod};
  stranded.start = last_;
  stranded.gpus = stranded_gpus;
  stranded.hardware = gpu_node ? spec.price_per_hour / gpus * stranded_gpus : 0.0;
  stranded.kw = stranded_kw;
  stranded.energy = stranded_kw * per_kw;
  // Idle: whatever of the node's rates neither its pods nor the stranded capacity carry.
  Payer idle{"idle", kNoPod};
  idle.start = last_;
  idle.gpus = gpus - stranded.gpus;
  idle.hardware = spec.price_per_hour - stranded.hardware;
  idle.energy = c.energy_rate - stranded.energy;
  idle.kw = c.power_w / 1000.0 - stranded.kw;
  idle.cpu_cores = static_cast<double>(spec.allocatable[kCpu]) / 1000.0;
  idle.ram_bytes = static_cast<double>(spec.allocatable[kMemory]);
  for (const Payer& p : pods) {
    idle.gpus -= p.gpus;
    idle.hardware -= p.hardware;
    idle.energy -= p.energy;
    idle.kw -= p.kw;
    idle.cpu_cores -= p.cpu_cores;
    idle.ram_bytes -= p.ram_bytes;
  }
  idle.gpus = std::max(0.0, idle.gpus);
  idle.cpu_cores = std::max(0.0, idle.cpu_cores);
  idle.ram_bytes = std::max(0.0, idle.ram_bytes);
  c.payers = std::move(pods);
  c.payers.push_back(idle);
  c.payers.push_back(stranded);
}

void CostLedger::roll(NodeId node, const Contribution& old, Contribution& next) {
  // Payers are ordered pods (by id), idle, stranded; walk both lists together.
  auto rank = [](const Payer& p) {
    return std::pair<int, PodId>(p.kind == "pod" ? 0 : p.kind == "idle" ? 1 : 2, p.pod);
  };
  std::size_t j = 0;
  for (const Payer& o : old.payers) {
    while (j < next.payers.size() && rank(next.payers[j]) < rank(o))
      ++j;
    if (j < next.payers.size() && next.payers[j].same_rates(o)) {
      next.payers[j].start = o.start;  // the same rates go on
    } else {
      emit(node, o, last_);
    }
  }
}

void CostLedger::emit(NodeId node, const Payer& p, SimTime end) const {
  if (end <= p.start) return;
  if (p.gpus == 0 && p.hardware == 0 && p.energy == 0 && p.kw == 0 && p.cpu_cores == 0 &&
      p.ram_bytes == 0) {
    return;
  }
  const double hours = to_hours(end - p.start);
  ChargeRecord r;
  r.kind = p.kind;
  r.pod = p.pod;
  r.node = node;
  r.start = p.start;
  r.end = end;
  r.gpus = p.gpus;
  r.hardware_cost = p.hardware * hours;
  r.energy_cost = p.energy * hours;
  r.gpu_kwh = p.kw * hours;
  r.cpu_cores = p.cpu_cores;
  r.ram_bytes = p.ram_bytes;
  recorder_->record_charge(r);
}

void CostLedger::finish() {
  if (recorder_ == nullptr) return;
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    for (Payer& p : nodes_[node].payers) {
      emit(static_cast<NodeId>(node), p, last_);
      p.start = last_;
    }
  }
}

void CostLedger::apply(const NodeInfo& n, const Contribution& c, double sign) {
  const std::size_t queues = queue_names_.size();
  if (queue_cost_rate_.size() < queues) {
    queue_cost_rate_.resize(queues, 0.0);
    queue_gpu_rate_.resize(queues, 0.0);
  }
  for (const auto& [q, r] : c.queue_cost)
    queue_cost_rate_[q] += sign * r;
  for (const auto& [q, r] : c.queue_gpus)
    queue_gpu_rate_[q] += sign * r;
  energy_rate_ += sign * c.energy_rate;
  power_w_ += sign * c.power_w;
  stranded_rate_ += sign * c.stranded_rate;
  PoolRates& p = pool_rates_[node_pool_[n.id]];
  p.gpus_allocated += sign * c.gpus_allocated;
  p.gpus_busy += sign * c.gpus_busy;
  p.memory_allocated_mib += sign * c.memory_allocated_mib;
  p.memory_used_mib += sign * c.memory_used_mib;
  p.power_w += sign * c.power_w;
  p.energy_rate += sign * c.energy_rate;
  p.pods += static_cast<std::int64_t>(sign) * c.pods;
  p.shared_total += sign * c.shared_total;
  p.shared_used += sign * c.shared_used;
}

void CostLedger::node_changed(NodeId node) {
  const NodeInfo& n = cluster_->node(node);
  apply(n, nodes_[node], -1);
  compute(n, next_);
  if (recorder_ != nullptr) roll(node, nodes_[node], next_);
  std::swap(nodes_[node], next_);  // the old contribution's room serves the next change
  apply(n, nodes_[node], +1);
}

void CostLedger::set_billed(NodeId node, bool billed) {
  const NodeInfo& n = cluster_->node(node);
  CAPSIM_CHECK((billed_[node] != 0) != billed,
               fmt::format("node {}: a billing change that changes nothing", n.spec->name));
  const World& w = cluster_->world();
  PoolRates& p = pool_rates_[node_pool_[node]];
  p.node_seconds += p.nodes * to_seconds(last_ - p.since);
  p.since = last_;
  const double sign = billed ? 1.0 : -1.0;
  p.nodes += billed ? 1 : -1;
  p.gpus_total += sign * n.spec->gpu_count;
  p.hardware_rate += sign * n.spec->price_per_hour;
  if (n.spec->gpu_model != kNoGpuModel) {
    p.memory_total_mib += sign * static_cast<double>(w.gpu_models[n.spec->gpu_model].memory_bytes) /
                          kMiB * n.spec->gpu_count;
  }
  hardware_rate_ += sign * n.spec->price_per_hour;
  if (!billed) {
    apply(n, nodes_[node], -1);
    Contribution none;
    if (recorder_ != nullptr) roll(node, nodes_[node], none);
    nodes_[node] = std::move(none);
  }
  billed_[node] = billed ? 1 : 0;
  if (billed) node_changed(node);
}

std::vector<double> CostLedger::pool_node_hours() const {
  std::vector<double> out;
  for (const PoolRates& p : pool_rates_)
    out.push_back((p.node_seconds + p.nodes * to_seconds(last_ - p.since)) / 3600.0);
  return out;
}

std::vector<std::int32_t> CostLedger::pool_nodes() const {
  std::vector<std::int32_t> out;
  for (const PoolRates& p : pool_rates_)
    out.push_back(p.nodes);
  return out;
}

void CostLedger::advance(SimTime now) {
  if (now <= last_) return;
  const double hours = to_hours(now - last_);
  last_ = now;
  totals_.hardware += hardware_rate_ * hours;
  totals_.energy += energy_rate_ * hours;
  totals_.gpu_kwh += power_w_ / 1000.0 * hours;
  totals_.stranded += stranded_rate_ * hours;
  if (queue_totals_.size() < queue_cost_rate_.size()) queue_totals_.resize(queue_cost_rate_.size());
  for (std::size_t q = 0; q < queue_cost_rate_.size(); ++q) {
    const double cost = queue_cost_rate_[q] * hours;
    queue_totals_[q].cost += cost;
    queue_totals_[q].gpu_seconds += queue_gpu_rate_[q] * hours * 3600.0;
    totals_.allocated += cost;
    if (q == 0) totals_.unqueued += cost;
  }
}

std::vector<QueueCost> CostLedger::queues() const {
  std::vector<QueueCost> out;
  for (std::size_t q = 1; q < queue_names_.size(); ++q) {
    QueueCost c;
    c.queue = queue_names_[q];
    if (q < queue_totals_.size()) {
      c.cost = queue_totals_[q].cost;
      c.gpu_seconds = queue_totals_[q].gpu_seconds;
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const QueueCost& a, const QueueCost& b) { return a.queue < b.queue; });
  return out;
}

std::vector<PoolSampleRecord> CostLedger::pool_samples(
    SimTime now, std::span<const double> node_fragment_milli) const {
  std::vector<PoolSampleRecord> out(pool_names_.size());
  for (std::size_t i = 0; i < pool_names_.size(); ++i) {
    const PoolRates& p = pool_rates_[i];
    PoolSampleRecord& r = out[i];
    r.time = now;
    r.pool = pool_names_[i];
    r.gpus_total = p.gpus_total;
    r.gpus_allocated = std::max(0.0, p.gpus_allocated);
    r.gpus_busy = std::max(0.0, p.gpus_busy);
    r.gpu_memory_total_mib = p.memory_total_mib;
    r.gpu_memory_allocated_mib = std::max(0.0, p.memory_allocated_mib);
    r.gpu_memory_used_mib = std::max(0.0, p.memory_used_mib);
    r.pods_running = p.pods;
    r.power_w = std::max(0.0, p.power_w);
    r.cost_per_hour = p.hardware_rate + std::max(0.0, p.energy_rate);
    r.shared_units_total = p.shared_total;
    r.shared_units_allocated = std::max(0.0, p.shared_used);
  }
  for (std::size_t n = 0; n < node_fragment_milli.size() && n < node_pool_.size(); ++n)
    out[node_pool_[n]].fragmented_gpus += node_fragment_milli[n] / 1000.0;
  return out;
}

void CostLedger::check_rates() const {
  double energy = 0, stranded = 0, hardware = 0;
  std::vector<double> queue_cost(queue_cost_rate_.size(), 0.0);
  std::vector<std::int32_t> pool_nodes(pool_rates_.size(), 0);
  for (const NodeInfo& n : cluster_->nodes()) {
    if (billed_[n.id] != 0) {
      hardware += n.spec->price_per_hour;
      ++pool_nodes[node_pool_[n.id]];
    }
    const Contribution c = compute(n);
    energy += c.energy_rate;
    stranded += c.stranded_rate;
    for (const auto& [q, r] : c.queue_cost) {
      if (q >= queue_cost.size()) queue_cost.resize(q + 1, 0.0);
      queue_cost[q] += r;
    }
  }
  auto close = [](double a, double b) { return std::abs(a - b) <= 1e-6 * (1 + std::abs(b)); };
  CAPSIM_CHECK(
      close(energy, energy_rate_),
      fmt::format("the energy cost rate {} drifted from the recount {}", energy_rate_, energy));
  CAPSIM_CHECK(close(hardware, hardware_rate_),
               fmt::format("the hardware cost rate {} drifted from the billed nodes' {}",
                           hardware_rate_, hardware));
  for (std::size_t p = 0; p < pool_rates_.size(); ++p) {
    CAPSIM_CHECK(pool_nodes[p] == pool_rates_[p].nodes,
                 fmt::format("pool '{}' counts {} billed nodes, {} are", pool_names_[p],
                             pool_rates_[p].nodes, pool_nodes[p]));
  }
  CAPSIM_CHECK(close(stranded, stranded_rate_),
               fmt::format("the stranded cost rate {} drifted from the recount {}", stranded_rate_,
                           stranded));
  for (std::size_t q = 0; q < queue_cost.size(); ++q) {
    const double have = q < queue_cost_rate_.size() ? queue_cost_rate_[q] : 0.0;
    CAPSIM_CHECK(close(queue_cost[q], have),
                 fmt::format("queue '{}' cost rate {} drifted from the recount {}", queue_names_[q],
                             have, queue_cost[q]));
  }
}

void append_cost_metrics(Summary& summary, const CostLedger& ledger) {
  const CostTotals& t = ledger.totals();
  const double total = t.total();
  const double idle = t.idle();
  CAPSIM_CHECK(idle > -1e-6 * (1 + total),
               fmt::format("pods were charged {} plus {} stranded, more than the total cost {}",
                           t.allocated, t.stranded, total));
  auto put = [&](std::string name, double v) { put_metric(summary, std::move(name), v); };
  put("cost_hardware_usd", t.hardware);
  put("cost_energy_usd", t.energy);
  put("cost_allocated_usd", t.allocated);
  put("cost_idle_usd", std::max(0.0, idle));
  put("cost_stranded_usd", t.stranded);
  put("cost_unqueued_usd", t.unqueued);
  put("energy_facility_kwh", t.gpu_kwh * ledger.energy().pue);
  for (const QueueCost& q : ledger.queues()) {
    put(fmt::format("queue.{}.cost_usd", q.queue), q.cost);
    put(fmt::format("queue.{}.gpu_hours", q.queue), q.gpu_seconds / 3600.0);
  }
}

}  // namespace capsim
