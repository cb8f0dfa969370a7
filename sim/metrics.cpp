#include "sim/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"

namespace capsim {

void Integrals::advance(SimTime now, const ClusterTotals& t, bool pods_waiting) {
  if (now <= last) return;
  const double dt = to_seconds(now - last);
  gpu_seconds_allocated += t.gpus_allocated * dt;
  gpu_seconds_busy += t.gpus_busy * dt;
  joules += t.power_w * dt;
  for (std::size_t m = 0; m < mode_allocated.size(); ++m) {
    mode_allocated[m] += t.mode_allocated[m] * dt;
    mode_busy[m] += t.mode_busy[m] * dt;
  }
  mig_slice_seconds_total += t.mig_slices_total * dt;
  mig_slice_seconds_unconfigured += t.mig_slices_unconfigured * dt;
  mig_slice_seconds_idle += t.mig_slices_idle * dt;
  if (pods_waiting) mig_slice_seconds_idle_while_waiting += t.mig_slices_idle * dt;
  last = now;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return sorted_percentile(v, p);
}

double sorted_percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

std::string_view final_status_name(PodPhase p) {
  switch (p) {
    case PodPhase::kNotArrived:
      return "not_arrived";
    case PodPhase::kPending:
      return "pending";
    case PodPhase::kRunning:
      return "running";
    case PodPhase::kTerminating:
    case PodPhase::kCrashBackoff:
      return "running";
    case PodPhase::kSucceeded:
      return "completed";
    case PodPhase::kFailed:
      return "failed";
    case PodPhase::kOomKilled:
      return "oom_killed";
    case PodPhase::kPreempted:
      return "preempted";
    case PodPhase::kUnschedulable:
      return "unschedulable";
    case PodPhase::kDeleted:
      return "deleted";
  }
  return "?";
}

namespace {

// DRA: one row per device of each of the pod's claims (the last allocation), or one row without
// a device for a claim it never got.
std::vector<ClaimDeviceRecord> claim_records(const World& w, const PodSpec& spec,
                                             const PodState& s) {
  std::vector<ClaimDeviceRecord> out;
  const dra::NodeDevices* nd =
      s.last_claims_node == kNoNode ? nullptr : w.dra.node(s.last_claims_node);
  // The pod's claims, then the claim the scheduler made for its extended resources (KEP-5004)
  // if it had one when it last ran.
  const bool ext = s.last_claims.size() > spec.claims.size() && s.last_claims.back().extended();
  for (std::size_t i = 0; i < spec.claims.size() + (ext ? 1 : 0); ++i) {
    ClaimDeviceRecord base;
    if (i < spec.claims.size()) {
      const PodClaimRef& ref = spec.claims[i];
      base.claim = ref.name;
      base.resource_claim = ref.shared()
                                ? fmt::format("{}/{}", spec.namespace_, ref.claim_name)
                                : fmt::format("{}/{}-{}", spec.namespace_, spec.name, ref.name);
      base.template_name = ref.template_name;
    } else {
      base.claim = "(extended resources)";
      base.resource_claim = fmt::format("{}/{}-extended-resources", spec.namespace_, spec.name);
    }
    const ClaimAllocation* a = i < s.last_claims.size() ? &s.last_claims[i] : nullptr;
    if (a == nullptr || nd == nullptr || a->devices.empty()) {
      out.push_back(base);
      continue;
    }
    for (std::size_t k = 0; k < a->devices.size(); ++k) {
      const dra::Device& dev = nd->devices.at(a->devices[k]);
      ClaimDeviceRecord r = base;
      r.node = w.nodes.at(s.last_claims_node).name;
      r.request = k < a->requests.size() ? a->requests[k] : "";
      r.device = dev.name;
      r.driver = nd->pools.at(dev.pool).driver;
      r.pool = nd->pools.at(dev.pool).name;
      r.gpu = dev.gpu == kNoGpu ? -1 : dev.gpu;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

PodPhase reported_phase(const PodState& s) {
  return s.phase == PodPhase::kPending && s.last_unresolvable ? PodPhase::kUnschedulable : s.phase;
}

double reported_wait_seconds(const PodState& s, SimTime end) {
  return to_seconds(s.waited + (s.phase == PodPhase::kPending ? end - s.pending_since : 0));
}

std::vector<PodRecord> make_pod_records(const Cluster& cluster, SimTime end) {
  std::vector<PodRecord> out;
  const World& w = cluster.world();
  for (PodId p = 0; p < cluster.pods().size(); ++p) {
    const PodState& s = cluster.pod(p);
    if (s.phase == PodPhase::kNotArrived) continue;
    const PodSpec& spec = w.pods[p];
    PodRecord r;
    r.pod = p;
    r.status = std::string(final_status_name(reported_phase(s)));
    r.submit = s.submit;
    r.start = s.first_start;
    r.end = s.end;
    // The node and GPUs it holds now, or where it ran last.
    const NodeId node = s.node != kNoNode ? s.node : s.last_node;
    const std::vector<std::uint16_t>& gpus = s.node != kNoNode ? s.gpus : s.last_gpus;
    if (node != kNoNode) r.node = w.nodes[node].name;
    if (!gpus.empty()) {
      std::string d = "gpu:";
      for (std::size_t i = 0; i < gpus.size(); ++i)
        d += fmt::format("{}{}", i ? "," : "", gpus[i]);
      r.devices = d;
    }
    if (!s.claim_devices.empty()) {
      // DRA: the devices of its claims (the last allocation, kept after the pod ends).
      r.devices += fmt::format("{}claims {}", r.devices.empty() ? "" : " ", s.claim_devices);
    }
    r.claims = claim_records(w, spec, s);
    r.gpu_request = spec.gpu_count > 0 ? spec.gpu_count : spec.gpu_milli / 1000.0;
    r.attempts = s.attempts;
    r.topology_span = w.topology.span_name(s.topology.span);
    r.topology_slowdown = s.topology.factor;
    r.wait_s = reported_wait_seconds(s, end);
    out.push_back(std::move(r));
  }
  return out;
}

Summary compute_summary(const Cluster& cluster, const Integrals& in, const CostLedger& cost,
                        const SampleStats& samples, SimTime end, std::uint64_t scheduling_cycles,
                        std::uint64_t events) {
  const World& w = cluster.world();
  // Arrived pods by reported phase.
  std::array<double, static_cast<std::size_t>(PodPhase::kDeleted) + 1> by_phase{};
  std::vector<double> waits, jcts, slowdowns;
  std::map<std::string, std::vector<double>> queue_waits;
  SimTime first_arrival = kEndOfTime;
  SimTime last_end = 0;
  double lost_preempt = 0;
  double lost_oom = 0;
  std::int64_t oom_kills = 0;
  std::int64_t preemptions = 0;
  std::size_t arrived = 0;
  for (PodId p = 0; p < cluster.pods().size(); ++p) {
    const PodState& s = cluster.pod(p);
    if (s.phase == PodPhase::kNotArrived) continue;
    ++arrived;
    const PodPhase phase = reported_phase(s);
    by_phase[static_cast<std::size_t>(phase)] += 1;
    const PodSpec& spec = w.pods[p];
    first_arrival = std::min(first_arrival, s.submit);
    if (s.end >= 0) last_end = std::max(last_end, s.end);
    lost_preempt += s.gpu_seconds_lost;
    lost_oom += s.gpu_seconds_lost_oom;
    oom_kills += s.oom_kills;
    preemptions += s.restarts;
    if (phase == PodPhase::kUnschedulable) continue;
    if (s.first_start >= 0 || phase == PodPhase::kPending) {
      const double wait = reported_wait_seconds(s, end);
      waits.push_back(wait);
      queue_waits[spec.queue].push_back(wait);
    }
    if (s.phase == PodPhase::kSucceeded) {
      const double jct = to_seconds(s.end - s.submit);
      jcts.push_back(jct);
      const double ideal = to_seconds(s.ideal_runtime);
      if (ideal > 0) slowdowns.push_back(jct / ideal);
    }
  }
  // Pods per reported status name (running counts the terminating and those in crash back-off).
  auto counts = [&](std::string_view status) {
    double n = 0;
    for (std::size_t k = 0; k < by_phase.size(); ++k) {
      if (final_status_name(static_cast<PodPhase>(k)) == status) n += by_phase[k];
    }
    return n;
  };
  const double hours = to_hours(end);
  const double gpus = cluster.totals().gpus_total;
  auto mean = [](const std::vector<double>& v) {
    if (v.empty()) return 0.0;
    double s = 0;
    for (double x : v)
      s += x;
    return s / static_cast<double>(v.size());
  };
  const double gpu_hours_alloc = in.gpu_seconds_allocated / 3600.0;
  const double gpu_hours_busy = in.gpu_seconds_busy / 3600.0;
  Summary s;
  auto put = [&](std::string k, double v) { put_metric(s, std::move(k), v); };
  put("pods_total", static_cast<double>(arrived));
  put("pods_completed", counts("completed"));
  put("pods_failed", counts("failed"));
  put("pods_oom_killed", counts("oom_killed"));
  put("pods_preempted", counts("preempted"));
  put("pods_unschedulable", counts("unschedulable"));
  put("pods_pending_at_end", counts("pending"));
  put("pods_running_at_end", counts("running"));
  if (!w.scaled_controllers.empty()) put("pods_deleted", counts("deleted"));
  put("gpu_allocation_ratio_mean", gpus > 0 && hours > 0 ? gpu_hours_alloc / (gpus * hours) : 0);
  put("gpu_utilization_ratio_mean", gpus > 0 && hours > 0 ? gpu_hours_busy / (gpus * hours) : 0);
  put("fragmentation_ratio_mean",
      samples.fragmentation_ratio_count > 0
          ? samples.fragmentation_ratio_sum / static_cast<double>(samples.fragmentation_ratio_count)
          : 0);
  put("wait_seconds_mean", mean(waits));
  std::sort(waits.begin(), waits.end());  // after the mean, whose sum goes in pod order
  put("wait_seconds_p50", sorted_percentile(waits, 50));
  put("wait_seconds_p95", sorted_percentile(waits, 95));
  put("wait_seconds_p99", sorted_percentile(waits, 99));
  put("jct_seconds_mean", mean(jcts));
  put("slowdown_mean", mean(slowdowns));
  put("makespan_seconds",
      first_arrival == kEndOfTime ? 0 : to_seconds(std::max(last_end, end) - first_arrival));
  put("gpu_hours_allocated", gpu_hours_alloc);
  put("gpu_hours_busy", gpu_hours_busy);
  put("gpu_hours_lost_to_oom", lost_oom / 3600.0);
  const CostTotals& money = cost.totals();
  put("cost_total_usd", money.total());
  put("cost_per_busy_gpu_hour_usd", gpu_hours_busy > 0 ? money.total() / gpu_hours_busy : 0);
  put("energy_kwh", in.joules / 3.6e6);
  // Further metrics (stable once added).
  put("gpus_total", gpus);
  put("sim_seconds", to_seconds(end));
  put("fragmented_gpu_share_mean",
      samples.count > 0 ? samples.fragmented_share_sum / static_cast<double>(samples.count) : 0);
  put("preemptions", static_cast<double>(preemptions));
  put("gpu_hours_lost_to_preemption", lost_preempt / 3600.0);
  put("oom_kills", static_cast<double>(oom_kills));
  // Per sharing mode of the nodes: allocated and busy GPU-hours, and how much of the mode's
  // capacity stayed unallocated (stranded capacity is part of it).
  static constexpr std::array<const char*, kGpuSharingModes> kModes = {
      "none", "mig", "time-slicing", "mps", "share"};
  for (std::size_t m = 0; m < kGpuSharingModes; ++m) {
    const double g = cluster.totals().mode_gpus[m];
    if (g <= 0) continue;
    put(fmt::format("sharing.{}.gpus", kModes[m]), g);
    put(fmt::format("sharing.{}.gpu_hours_allocated", kModes[m]), in.mode_allocated[m] / 3600.0);
    put(fmt::format("sharing.{}.gpu_hours_busy", kModes[m]), in.mode_busy[m] / 3600.0);
    put(fmt::format("sharing.{}.allocation_ratio_mean", kModes[m]),
        hours > 0 ? in.mode_allocated[m] / 3600.0 / (g * hours) : 0);
  }
  if (in.mig_slice_seconds_total > 0) {
    // MIG compute slices: in no instance (stranded by the layout), in instances nobody held, and
    // in instances nobody held while pods were waiting (no waiting pod fitted them).
    put("mig_slices_unconfigured_ratio_mean",
        in.mig_slice_seconds_unconfigured / in.mig_slice_seconds_total);
    put("mig_slices_idle_ratio_mean", in.mig_slice_seconds_idle / in.mig_slice_seconds_total);
    put("mig_slices_idle_while_waiting_ratio_mean",
        in.mig_slice_seconds_idle_while_waiting / in.mig_slice_seconds_total);
  }
  put("scheduling_cycles", static_cast<double>(scheduling_cycles));
  put("events_processed", static_cast<double>(events));
  for (auto& [q, v] : queue_waits) {
    if (q.empty()) continue;
    put(fmt::format("queue.{}.pods", q), static_cast<double>(v.size()));
    put(fmt::format("queue.{}.wait_seconds_mean", q), mean(v));
    std::sort(v.begin(), v.end());
    put(fmt::format("queue.{}.wait_seconds_p50", q), sorted_percentile(v, 50));
    put(fmt::format("queue.{}.wait_seconds_p95", q), sorted_percentile(v, 95));
  }
  append_cost_metrics(s, cost);
  return s;
}

void check_conservation(const Cluster& cluster, const std::vector<PodRecord>* records) {
  std::size_t arrived = 0;
  for (PodId p = 0; p < cluster.pods().size(); ++p) {
    const PodState& s = cluster.pod(p);
    if (s.phase == PodPhase::kNotArrived) continue;
    const std::string_view status = final_status_name(reported_phase(s));
    const bool holds = s.node != kNoNode;
    CAPSIM_CHECK(holds == (s.phase == PodPhase::kRunning || s.phase == PodPhase::kTerminating ||
                           s.phase == PodPhase::kCrashBackoff),
                 fmt::format("pod {} is {} but {} a node", cluster.spec(p).name, status,
                             holds ? "holds" : "does not hold"));
    CAPSIM_CHECK(is_terminal(s.phase) == (s.end >= 0),
                 fmt::format("pod {} is {} with end time {}", cluster.spec(p).name, status, s.end));
    if (records != nullptr) {
      CAPSIM_CHECK(
          arrived < records->size() && (*records)[arrived].pod == p &&
              (*records)[arrived].status == status,
          fmt::format("pod {} ({}) has no record of its state", cluster.spec(p).name, status));
    }
    ++arrived;
  }
  if (records != nullptr) {
    CAPSIM_CHECK(
        records->size() == arrived,
        fmt::format("{} pods arrived but there are {} pod records", arrived, records->size()));
  }
}

}  // namespace capsim
