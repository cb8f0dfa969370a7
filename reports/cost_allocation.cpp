#include "reports/cost_allocation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "models/gpu_catalog.hpp"
#include "sim/input_error.hpp"

namespace capsim {

namespace {

// One GPU a holding charges: the node's GPU index and the fraction it pays for (before the
// over-one scaling).
struct Hold {
  int gpu = -1;
  double fraction = 0;
};

// The holdings of one start event's device list, e.g. "gpu0,gpu1", "gpu0/mig-3g.40gb@4",
// "gpu1(shared)", "gpu0(250m)", "gpu0 [claims gpu: gpu-0 (gpu)]". `replicas`: replicas per GPU
// of the node's pool (time-slicing, MPS); `model`: the node's catalog model, if known.
std::vector<Hold> parse_holdings(const std::string& devices, double replicas,
                                 const GpuModelInfo* model, std::string& resource) {
  std::vector<Hold> out;
  std::string list = devices.substr(0, devices.find(" ["));
  if (list.rfind("[claims", 0) == 0) list.clear();
  resource = list.empty() ? "none" : "gpu";
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string token = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (token.rfind("gpu", 0) != 0) continue;
    std::size_t i = 3;
    int gpu = 0;
    bool digits = false;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) {
      gpu = gpu * 10 + (token[i] - '0');
      ++i;
      digits = true;
    }
    if (!digits) continue;
    const std::string rest = token.substr(i);
    double fraction = 1.0;  // a whole GPU
    if (rest.rfind("/mig-", 0) == 0) {
      // "/mig-<profile>@<start>": max(memory slots / 8, compute slices / 7).
      const std::string profile = rest.substr(5, rest.find('@') - 5);
      resource = "mig-" + profile;
      if (model != nullptr && model->mig_memory_slots > 0 && model->mig_compute_slots > 0) {
        for (const MigProfileInfo& p : model->mig_profiles) {
          if (p.name != profile) continue;
          fraction = std::max(static_cast<double>(p.memory_slices) / model->mig_memory_slots,
                              static_cast<double>(p.compute_slices) / model->mig_compute_slots);
        }
      }
    } else if (!rest.empty() && rest.front() == '(' && rest.back() == ')' &&
               rest.find('m') == rest.size() - 2 && rest != "(mps)") {
      // "(<milli>m)": a GPU share.
      fraction = std::stod(rest.substr(1, rest.size() - 3)) / 1000.0;
      resource = "gpu-share";
    }
    if (rest.find("(shared)") != std::string::npos || rest.find("(mps)") != std::string::npos) {
      // A time-slice or MPS replica: its device / replicas.
      fraction /= std::max(1.0, replicas);
      if (resource == "gpu") resource = "gpu-replica";
    }
    out.push_back(Hold{gpu, std::clamp(fraction, 0.0, 1.0)});
  }
  return out;
}

// Does an event of this kind (and detail) release the devices the pod holds? (sim/simulation.cpp:
// completion, failure, a deletion after preemption, a requeue after preemption or eviction, an
// OOM kill unless the container restarts in place.)
bool releases(const std::string& kind, const std::string& detail, bool has_node) {
  if (kind == "complete" || kind == "fail" || kind == "deleted") return true;
  if (kind == "requeue") return has_node;  // "recreated after preemption" (node set)
  if (kind == "oom_kill") return detail.find("restarting in place") == std::string::npos;
  return false;
}

double hours_of(SimTime a, SimTime b) {
  return b > a ? to_hours(b - a) : 0.0;
}

double overlap_hours(SimTime a0, SimTime a1, SimTime b0, SimTime b1) {
  const SimTime lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? to_hours(hi - lo) : 0.0;
}

}  // namespace

double PodCharge::cost() const {
  double c = 0;
  for (const ChargeSegment& s : segments)
    c += s.cost_per_hour * to_hours(s.end - s.start);
  return c;
}

double PodCharge::gpu_hours() const {
  double g = 0;
  for (const ChargeSegment& s : segments)
    g += s.gpus * to_hours(s.end - s.start);
  return g;
}

double PodCharge::cost_in(SimTime from, SimTime to) const {
  double c = 0;
  for (const ChargeSegment& s : segments)
    c += s.cost_per_hour * overlap_hours(s.start, s.end, from, to);
  return c;
}

double PodCharge::gpu_hours_in(SimTime from, SimTime to) const {
  double g = 0;
  for (const ChargeSegment& s : segments)
    g += s.gpus * overlap_hours(s.start, s.end, from, to);
  return g;
}

double CostAllocation::energy_in(const std::string& pool, SimTime from, SimTime to) const {
  const auto it = energy_steps.find(pool);
  if (it == energy_steps.end()) return 0.0;
  const auto& steps = it->second;
  double cost = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const SimTime s1 = i + 1 < steps.size() ? steps[i + 1].first : end;
    cost += steps[i].second * overlap_hours(steps[i].first, s1, from, to);
  }
  return cost;
}

double CostAllocation::pool_total_in(const std::string& pool, SimTime from, SimTime to) const {
  double rate = 0;
  for (const NodeCharge& n : nodes) {
    if (n.pool == pool) rate += n.price_per_hour;
  }
  return rate * overlap_hours(0, end, from, to) + energy_in(pool, from, to);
}

double CostAllocation::total_in(SimTime from, SimTime to) const {
  double cost = 0;
  for (const std::string& p : pools())
    cost += pool_total_in(p, from, to);
  return cost;
}

std::vector<std::string> CostAllocation::pools() const {
  std::vector<std::string> out;
  for (const NodeCharge& n : nodes) {
    if (std::find(out.begin(), out.end(), n.pool) == out.end()) out.push_back(n.pool);
  }
  return out;
}

double CostAllocation::gpus_in_pool(const std::string& pool) const {
  double g = 0;
  for (const NodeCharge& n : nodes) {
    if (n.pool == pool) g += static_cast<double>(n.gpus);
  }
  return g;
}

CostAllocation load_cost_allocation(const ReportData& data) {
  CostAllocation a;
  a.run = data.run;
  a.end = from_seconds(data.run.sim_seconds);
  auto metric = [&](const std::string& name) -> std::optional<double> {
    const double v = data.metric(name);
    if (std::isnan(v)) return std::nullopt;
    return v;
  };
  if (!metric("cost_hardware_usd")) {
    throw InputError(
        InputErrorKind::kInvalid, InputLocation{data.file, 0, 0, ""},
        fmt::format("run {} has no cost figures (cost_hardware_usd) to export", data.run.run_id));
  }
  a.hardware = *metric("cost_hardware_usd");
  a.energy = metric("cost_energy_usd").value_or(0.0);
  a.total = a.hardware + a.energy;
  a.allocated = metric("cost_allocated_usd").value_or(0.0);
  a.stranded = metric("cost_stranded_usd").value_or(0.0);

  RunReader reader(data.file);
  SqliteDb& db = reader.db();
  const std::int64_t run = data.run.run_id;

  // 1. Nodes, their models and the replicas their pools advertise per GPU.
  std::map<std::string, std::size_t> node_index;
  {
    Statement st = db.prepare(
        "SELECT node, coalesce(pool, ''), coalesce(gpu_model, ''), gpus, cpu_milli, memory_mib, "
        "sharing, price_per_hour FROM node WHERE run_id = ?1 ORDER BY rowid");
    st.bind_int64(1, run);
    while (st.step()) {
      NodeCharge n;
      n.node = st.column_text(0);
      n.pool = st.column_text(1);
      n.gpu_model = st.column_text(2);
      n.gpus = st.column_int64(3);
      n.cpu_milli = st.column_int64(4);
      n.memory_mib = st.column_int64(5);
      n.sharing = st.column_text(6);
      n.price_per_hour = st.column_double(7);
      node_index[n.node] = a.nodes.size();
      a.nodes.push_back(std::move(n));
    }
  }
  std::map<std::string, double> replicas_of_pool;
  for (const PoolSampleRecord& p : data.pool_samples) {
    if (replicas_of_pool.count(p.pool) || p.gpus_total <= 0) continue;
    replicas_of_pool[p.pool] = p.shared_units_total > 0 ? p.shared_units_total / p.gpus_total : 1;
  }
  std::map<std::string, std::optional<GpuModelInfo>> models;
  auto model_of = [&](const std::string& name) -> const GpuModelInfo* {
    auto it = models.find(name);
    if (it == models.end()) {
      const GpuModel* m = name.empty() ? nullptr : GpuCatalog::builtin().find(name);
      it = models.emplace(name, m ? std::optional<GpuModelInfo>(to_model_info(*m)) : std::nullopt)
               .first;
    }
    return it->second ? &*it->second : nullptr;
  };

  // 2. Pods' jobs and queues; with Kueue objects, the namespace and LocalQueue of each workload
  //    (named after its job, or its pod) from its `queued` event: "workload W: ... queued in
  //    ClusterQueue C through LocalQueue NS/LQ, ...". The pod table has no namespace or labels.
  struct PodInfo {
    std::string job, queue;
  };
  std::map<std::string, PodInfo> pod_info;
  {
    Statement st =
        db.prepare("SELECT pod, coalesce(job, ''), coalesce(queue, '') FROM pod WHERE run_id = ?1");
    st.bind_int64(1, run);
    while (st.step())
      pod_info[st.column_text(0)] = PodInfo{st.column_text(1), st.column_text(2)};
  }
  std::map<std::string, std::pair<std::string, std::string>> workload_queue;  // (ns, LocalQueue)
  {
    Statement st = db.prepare(
        "SELECT coalesce(detail, '') FROM event WHERE run_id = ?1 AND kind = 'queued' ORDER BY "
        "seq");
    st.bind_int64(1, run);
    while (st.step()) {
      const std::string d = st.column_text(0);
      const std::string head = "workload ", through = " through LocalQueue ";
      const std::size_t colon = d.find(": ");
      const std::size_t lq = d.find(through);
      if (d.rfind(head, 0) != 0 || colon == std::string::npos || lq == std::string::npos) continue;
      const std::string workload = d.substr(head.size(), colon - head.size());
      std::string ref = d.substr(lq + through.size());
      ref = ref.substr(0, ref.find_first_of(", "));
      const std::size_t slash = ref.find('/');
      if (slash == std::string::npos) continue;
      workload_queue[workload] = {ref.substr(0, slash), ref.substr(slash + 1)};
    }
  }

  // 3. Holdings: from each start to the event that releases its devices.
  struct Open {
    std::size_t charge;
    std::vector<Hold> holds;
  };
  std::map<std::string, Open> open;
  std::vector<std::vector<Hold>> holds_of;  // per charge
  {
    Statement st = db.prepare(
        "SELECT time_s, kind, coalesce(pod, ''), coalesce(node, ''), coalesce(detail, '') "
        "FROM event WHERE run_id = ?1 AND kind IN ('start', 'complete', 'fail', 'deleted', "
        "'requeue', 'oom_kill') ORDER BY seq");
    st.bind_int64(1, run);
    while (st.step()) {
      const SimTime t = from_seconds(st.column_double(0));
      const std::string kind = st.column_text(1);
      const std::string pod = st.column_text(2);
      const std::string node = st.column_text(3);
      const std::string detail = st.column_text(4);
      if (kind == "start") {
        auto ni = node_index.find(node);
        if (ni == node_index.end()) continue;
        const NodeCharge& n = a.nodes[ni->second];
        PodCharge c;
        c.pod = pod;
        c.job = pod_info[pod].job;
        c.queue = pod_info[pod].queue;
        auto wq = workload_queue.find(c.job.empty() ? pod : c.job);
        if (wq == workload_queue.end()) wq = workload_queue.find(pod);
        if (wq != workload_queue.end()) {
          c.namespace_ = wq->second.first;
          c.labels["kueue.x-k8s.io/queue-name"] = wq->second.second;
        }
        c.node = n.node;
        c.pool = n.pool;
        c.gpu_model = n.gpu_model;
        c.sharing = n.sharing;
        c.devices = detail;
        c.start = t;
        c.end = a.end;
        const auto r = replicas_of_pool.find(n.pool);
        std::vector<Hold> holds =
            parse_holdings(detail, r == replicas_of_pool.end() ? 1.0 : r->second,
                           model_of(n.gpu_model), c.resource);
        if (holds.empty() && n.gpus > 0) continue;  // a CPU-only pod on a GPU node pays nothing
        if (n.gpus <= 0) c.resource = "cpu";
        open[pod] = Open{a.charges.size(), holds};
        a.charges.push_back(std::move(c));
        holds_of.push_back(std::move(holds));
      } else if (releases(kind, detail, !node.empty())) {
        auto it = open.find(pod);
        if (it == open.end()) continue;
        a.charges[it->second.charge].end = t;
        open.erase(it);
      }
    }
  }

  // 4. Per GPU, split its price among its holders over time; holders over 1 GPU are scaled.
  //    rate = node price / GPUs x fraction x min(1, 1 / sum of fractions)
  struct Edge {
    SimTime t;
    bool add;
    std::size_t charge;
    double fraction;
  };
  std::map<std::pair<std::size_t, int>, std::vector<Edge>> edges;  // (node, gpu)
  for (std::size_t c = 0; c < a.charges.size(); ++c) {
    const std::size_t ni = node_index.at(a.charges[c].node);
    for (const Hold& h : holds_of[c]) {
      if (a.charges[c].end <= a.charges[c].start) continue;
      edges[{ni, h.gpu}].push_back(Edge{a.charges[c].start, true, c, h.fraction});
      edges[{ni, h.gpu}].push_back(Edge{a.charges[c].end, false, c, h.fraction});
    }
  }
  for (auto& [key, list] : edges) {
    const NodeCharge& n = a.nodes[key.first];
    const double gpu_price = n.gpus > 0 ? n.price_per_hour / static_cast<double>(n.gpus) : 0.0;
    std::sort(list.begin(), list.end(), [](const Edge& x, const Edge& y) {
      return x.t != y.t ? x.t < y.t : (!x.add && y.add);  // releases first at a tie
    });
    std::vector<std::pair<std::size_t, double>> active;
    for (std::size_t i = 0; i < list.size();) {
      const SimTime t = list[i].t;
      for (; i < list.size() && list[i].t == t; ++i) {
        if (list[i].add) {
          active.emplace_back(list[i].charge, list[i].fraction);
        } else {
          auto it = std::find_if(active.begin(), active.end(),
                                 [&](const auto& p) { return p.first == list[i].charge; });
          if (it != active.end()) active.erase(it);
        }
      }
      if (i >= list.size()) break;
      const SimTime next = list[i].t;
      double sum = 0;
      for (const auto& [c, f] : active)
        sum += f;
      const double scale = sum > 1.0 ? 1.0 / sum : 1.0;
      for (const auto& [c, f] : active) {
        std::vector<ChargeSegment>& segs = a.charges[c].segments;
        const double gpus = f * scale;
        if (!segs.empty() && segs.back().end == t && segs.back().gpus == gpus) {
          segs.back().end = next;  // the same rate goes on
        } else {
          segs.push_back(ChargeSegment{t, next, gpus, gpus * gpu_price});
        }
      }
    }
  }
  // Segments of several GPUs interleave; keep each charge's in time order.
  for (PodCharge& c : a.charges) {
    std::stable_sort(
        c.segments.begin(), c.segments.end(),
        [](const ChargeSegment& x, const ChargeSegment& y) { return x.start < y.start; });
  }

  // 5. Reconcile with the ledger, queue by queue.
  std::map<std::string, double> rebuilt;
  for (const PodCharge& c : a.charges)
    rebuilt[c.queue] += c.cost();
  std::map<std::string, double> ledger;
  if (auto v = metric("cost_unqueued_usd")) ledger[""] = *v;
  for (const auto& [name, value] : data.summary) {
    const std::string head = "queue.", tail = ".cost_usd";
    if (name.size() > head.size() + tail.size() && name.rfind(head, 0) == 0 &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0 && !std::isnan(value)) {
      ledger[name.substr(head.size(), name.size() - head.size() - tail.size())] = value;
    }
  }
  for (const auto& [queue, want] : ledger) {
    const double have = rebuilt.count(queue) ? rebuilt[queue] : 0.0;
    if (have > 0) {
      a.max_deviation = std::max(a.max_deviation, std::abs(have - want) / std::max(want, 1e-12));
    }
    // Pods of the queue on CPU-only nodes, whose charge (price x CPU request / allocatable)
    // the file cannot rebuild: it has no CPU requests.
    double cpu_hours = 0;
    for (const PodCharge& c : a.charges) {
      if (c.queue == queue && !c.pod.empty() && c.resource == "cpu") {
        cpu_hours += hours_of(c.start, c.end);
      }
    }
    if (have <= 0 && want > 1e-9 && cpu_hours > 0) {
      // Spread over those pods by run time (as if they requested the same CPU).
      ++a.cpu_spread_queues;
      for (PodCharge& c : a.charges) {
        if (c.queue == queue && !c.pod.empty() && c.resource == "cpu" && c.end > c.start) {
          c.segments.push_back(ChargeSegment{c.start, c.end, 0.0, want / cpu_hours});
        }
      }
    } else if (have > 0) {
      const double f = want / have;
      for (PodCharge& c : a.charges) {
        if (c.queue != queue) continue;
        for (ChargeSegment& s : c.segments)
          s.cost_per_hour *= f;
      }
    } else if (want > 1e-9 && a.end > 0) {
      // Charges the file cannot place on a pod (CPU-only nodes are split by CPU request):
      // the queue's, spread over the run.
      PodCharge c;
      c.queue = queue;
      c.resource = "none";
      c.start = 0;
      c.end = a.end;
      c.segments.push_back(ChargeSegment{0, a.end, 0.0, want / to_hours(a.end)});
      a.charges.push_back(std::move(c));
    }
  }
  std::stable_sort(a.charges.begin(), a.charges.end(), [](const PodCharge& x, const PodCharge& y) {
    return x.start != y.start ? x.start < y.start : x.pod < y.pod;
  });

  // 6. Energy over time, per pool: the sampled cost rate above the pool's hardware rate, scaled
  //    to the ledger's energy total (samples hold their value until the next one). Files without
  //    pool samples spread the cluster's samples over the pools by GPU count.
  std::map<std::string, double> pool_hardware, pool_gpus;
  double gpus = 0;
  for (const NodeCharge& n : a.nodes) {
    pool_hardware[n.pool] += n.price_per_hour;
    pool_gpus[n.pool] += static_cast<double>(n.gpus);
    gpus += static_cast<double>(n.gpus);
  }
  if (a.energy > 0) {
    auto add = [&](const std::string& pool, SimTime t, double rate) {
      auto& steps = a.energy_steps[pool];
      if (steps.empty() && t > 0) steps.emplace_back(0, rate);
      if (!steps.empty() && steps.back().first == t) {
        steps.back().second = rate;
      } else {
        steps.emplace_back(t, rate);
      }
    };
    if (!data.pool_samples.empty()) {
      for (const PoolSampleRecord& p : data.pool_samples)
        add(p.pool, p.time, std::max(0.0, p.cost_per_hour - pool_hardware[p.pool]));
    } else {
      double hardware_rate = 0;
      for (const auto& [pool, r] : pool_hardware)
        hardware_rate += r;
      for (const SampleRecord& s : data.samples) {
        const double rate = std::max(0.0, s.cost_per_hour - hardware_rate);
        for (const auto& [pool, g] : pool_gpus)
          add(pool, s.time, gpus > 0 ? rate * g / gpus : 0.0);
      }
    }
    double sum = 0;
    for (const auto& [pool, steps] : a.energy_steps)
      sum += a.energy_in(pool, 0, a.end);
    if (sum > 0) {
      for (auto& [pool, steps] : a.energy_steps) {
        for (auto& [t, r] : steps)
          r *= a.energy / sum;
      }
    } else if (a.end > 0) {
      a.energy_steps.clear();
      for (const auto& [pool, g] : pool_gpus) {
        const double share = gpus > 0 ? g / gpus : 1.0 / static_cast<double>(pool_gpus.size());
        a.energy_steps[pool] = {{0, a.energy * share / to_hours(a.end)}};
      }
    }
  }
  return a;
}

}  // namespace capsim
