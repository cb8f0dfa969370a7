#include "reports/cost_allocation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "reports/run_reader.hpp"
#include "sim/input_error.hpp"

namespace capsim {

namespace {

// What a pod holds on a node of this sharing mode, for the FOCUS SKU: the MIG profile from its
// device list ("gpu0/mig-1g.10gb@0"), or the kind of share.
std::string resource_of(const NodeCharge& n, const std::string& devices, double gpus) {
  if (n.cpu_node()) return "cpu";
  if (gpus <= 0) return "none";
  const std::size_t mig = devices.find("/mig-");
  if (mig != std::string::npos) {
    const std::size_t at = devices.find('@', mig);
    return devices.substr(mig + 1, at == std::string::npos ? std::string::npos : at - mig - 1);
  }
  if (n.sharing == "share") return "gpu-share";
  if (n.sharing == "time-slicing" || n.sharing == "mps") return "gpu-replica";
  return "gpu";
}

void add_rows(ChargeSums& sums, const std::vector<ChargeRow>& rows, SimTime from, SimTime to,
              bool cpu_node) {
  for (const ChargeRow& r : rows) {
    const double f = fraction_inside(r, from, to);
    if (f > 0) sums.add(r, f, cpu_node);
  }
}

}  // namespace

double fraction_inside(const ChargeRow& row, SimTime from, SimTime to) {
  const SimTime lo = std::max(row.start, from), hi = std::min(row.end, to);
  if (hi <= lo || row.end <= row.start) return 0.0;
  if (lo == row.start && hi == row.end) return 1.0;
  return static_cast<double>(hi - lo) / static_cast<double>(row.end - row.start);
}

void ChargeSums::add(const ChargeRow& row, double f, bool cpu_node) {
  const double hours = to_hours(row.end - row.start) * f;
  hardware += row.hardware_cost * f;
  energy += row.energy_cost * f;
  if (cpu_node) cpu_node_hardware += row.hardware_cost * f;
  gpu_hours += row.gpus * hours;
  cpu_core_hours += row.cpu_cores * hours;
  ram_byte_hours += row.ram_bytes * hours;
  gpu_kwh += row.gpu_kwh * f;
}

void ChargeSums::add(const ChargeSums& o) {
  hardware += o.hardware;
  energy += o.energy;
  cpu_node_hardware += o.cpu_node_hardware;
  gpu_hours += o.gpu_hours;
  cpu_core_hours += o.cpu_core_hours;
  ram_byte_hours += o.ram_byte_hours;
  gpu_kwh += o.gpu_kwh;
}

ChargeSums PodCharge::sums_in(SimTime from, SimTime to) const {
  ChargeSums s;
  add_rows(s, segments, from, to, cpu_node);
  return s;
}

ChargeSums CostAllocation::idle_in(SimTime from, SimTime to, const std::string* pool) const {
  ChargeSums s;
  for (const NodeCharge& n : nodes) {
    if (pool == nullptr || n.pool == *pool) add_rows(s, n.idle, from, to, n.cpu_node());
  }
  return s;
}

ChargeSums CostAllocation::stranded_in(SimTime from, SimTime to, const std::string* pool) const {
  ChargeSums s;
  for (const NodeCharge& n : nodes) {
    if (pool == nullptr || n.pool == *pool) add_rows(s, n.stranded, from, to, n.cpu_node());
  }
  return s;
}

ChargeSums CostAllocation::total_in(SimTime from, SimTime to) const {
  ChargeSums s = idle_in(from, to);
  s.add(stranded_in(from, to));
  for (const PodCharge& c : charges)
    s.add(c.sums_in(from, to));
  return s;
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
  {
    Statement has =
        db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'charge'");
    if (!has.step() || has.column_int64(0) == 0) {
      throw InputError(
          InputErrorKind::kInvalid, InputLocation{data.file, 0, 0, "charge"},
          fmt::format("written by an older capsim (report schema {}), which did not record the "
                      "cost ledger's per-pod charges; re-run the scenario to export its cost",
                      reader.schema_version()));
    }
  }
  if (data.run.record != RecordLevel::kFull) {
    throw InputError(InputErrorKind::kInvalid, InputLocation{data.file, 0, 0, "charge"},
                     fmt::format("{}, which keeps no per-pod charges; re-run the scenario with "
                                 "--record full to export its cost",
                                 not_recorded_note(data.run.record)));
  }

  // 1. Nodes.
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

  // 2. Pods' jobs, queues and devices; with Kueue objects, the namespace and LocalQueue of each
  //    workload (named after its job, or its pod) from its `queued` event: "workload W: ...
  //    queued in ClusterQueue C through LocalQueue NS/LQ, ...". The pod table has no namespace or
  //    labels.
  struct PodInfo {
    std::string job, queue, devices, owner_kind;
  };
  std::map<std::string, PodInfo> pod_info;
  {
    // owner_kind: schema 6 on; older files have no such column, and their owners are taken as
    // Jobs (what the OpenCost export said of them before).
    const std::string owner_kind = reader.schema_version() >= 6
                                       ? "coalesce(owner_kind, '')"
                                       : "CASE WHEN job IS NULL THEN '' ELSE 'Job' END";
    Statement st =
        db.prepare("SELECT pod, coalesce(job, ''), coalesce(queue, ''), coalesce(devices, ''), " +
                   owner_kind + " FROM pod WHERE run_id = ?1");
    st.bind_int64(1, run);
    while (st.step())
      pod_info[st.column_text(0)] =
          PodInfo{st.column_text(1), st.column_text(2), st.column_text(3), st.column_text(4)};
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

  // 3. The ledger's rows: pods' by (pod, node), the rest to their node.
  std::map<std::pair<std::string, std::string>, std::size_t> charge_of;
  {
    Statement st = db.prepare("SELECT " + select_list<ChargeRow>(kChargeColumns) +
                              " FROM charge WHERE run_id = ?1 ORDER BY rowid");
    st.bind_int64(1, run);
    while (st.step()) {
      ChargeRow row;
      read_row<ChargeRow>(st, kChargeColumns, row);
      const auto ni = node_index.find(row.node);
      if (ni == node_index.end()) {
        throw InputError(
            InputErrorKind::kInvalid, InputLocation{data.file, 0, 0, "charge.node"},
            fmt::format("run {} charges node '{}', which its node table lacks", run, row.node));
      }
      NodeCharge& n = a.nodes[ni->second];
      if (row.kind == "idle") {
        n.idle.push_back(std::move(row));
        continue;
      }
      if (row.kind == "stranded") {
        n.stranded.push_back(std::move(row));
        continue;
      }
      if (row.kind != "pod" || row.pod.empty()) {
        throw InputError(InputErrorKind::kInvalid, InputLocation{data.file, 0, 0, "charge.kind"},
                         fmt::format("run {} has a charge row of kind '{}' for pod '{}'; capsim "
                                     "writes pod, idle and stranded",
                                     run, row.kind, row.pod));
      }
      auto [it, added] = charge_of.emplace(std::pair(row.pod, row.node), a.charges.size());
      if (added) {
        PodCharge c;
        c.pod = row.pod;
        const PodInfo& info = pod_info[row.pod];
        c.job = info.job;
        c.owner_kind = info.owner_kind;
        c.queue = info.queue;
        c.devices = info.devices;
        auto wq = workload_queue.find(c.job.empty() ? c.pod : c.job);
        if (wq == workload_queue.end()) wq = workload_queue.find(c.pod);
        if (wq != workload_queue.end()) {
          c.namespace_ = wq->second.first;
          c.labels["kueue.x-k8s.io/queue-name"] = wq->second.second;
        }
        c.node = n.node;
        c.pool = n.pool;
        c.gpu_model = n.gpu_model;
        c.sharing = n.sharing;
        c.cpu_node = n.cpu_node();
        c.start = row.start;
        a.charges.push_back(std::move(c));
      }
      PodCharge& c = a.charges[it->second];
      if (c.resource.empty() || c.resource == "none")
        c.resource = resource_of(n, c.devices, row.gpus);
      c.start = std::min(c.start, row.start);
      c.end = std::max(c.end, row.end);
      c.segments.push_back(std::move(row));
    }
  }
  auto by_start = [](const ChargeRow& x, const ChargeRow& y) { return x.start < y.start; };
  for (PodCharge& c : a.charges)
    std::stable_sort(c.segments.begin(), c.segments.end(), by_start);
  for (NodeCharge& n : a.nodes) {
    std::stable_sort(n.idle.begin(), n.idle.end(), by_start);
    std::stable_sort(n.stranded.begin(), n.stranded.end(), by_start);
  }
  std::stable_sort(a.charges.begin(), a.charges.end(), [](const PodCharge& x, const PodCharge& y) {
    return x.start != y.start ? x.start < y.start : x.pod < y.pod;
  });
  return a;
}

}  // namespace capsim
