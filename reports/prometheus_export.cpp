#include "reports/prometheus_export.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "sim/time.hpp"

namespace capsim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Label values escape backslash, double quote and newline (both formats).
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

class Writer {
 public:
  Writer(PromFormat format, double origin, std::string run_labels)
      : format_(format), origin_(origin), run_labels_(std::move(run_labels)) {}

  void family(const std::string& name, const std::string& help, const std::string& unit,
              const char* type = "gauge") {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    if (format_ == PromFormat::kOpenMetrics && !unit.empty()) {
      out_ += fmt::format("# UNIT {} {}\n", name, unit);
    }
  }
  void sample(const std::string& name, const std::string& labels, SimTime t, double v) {
    const double ts = origin_ + to_seconds(t);
    std::string stamp;
    if (format_ == PromFormat::kOpenMetrics) {
      stamp = fmt::format("{:.3f}", ts);
    } else {
      stamp = fmt::format("{}", std::llround(ts * 1000.0));
    }
    out_ += fmt::format("{}{{{}{}{}}} {} {}\n", name, run_labels_, labels.empty() ? "" : ",",
                        labels, sample_value(v), stamp);
  }
  std::string finish() {
    if (format_ == PromFormat::kOpenMetrics) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  PromFormat format_;
  double origin_;
  std::string run_labels_;
  std::string out_;
};

// A series takes one value per timestamp: where the run recorded two samples at one time (the
// closing sample can fall on a sampling tick), the later one, the state at that time, is kept.
std::vector<const SampleRecord*> latest_per_time(const std::vector<SampleRecord>& rows) {
  std::vector<const SampleRecord*> out;
  for (const SampleRecord& r : rows) {
    if (!out.empty() && out.back()->time == r.time) {
      out.back() = &r;
    } else {
      out.push_back(&r);
    }
  }
  return out;
}

std::vector<const PoolSampleRecord*> latest_per_time(const std::vector<PoolSampleRecord>& rows,
                                                     const std::string& pool) {
  std::vector<const PoolSampleRecord*> out;
  for (const PoolSampleRecord& r : rows) {
    if (r.pool != pool) continue;
    if (!out.empty() && out.back()->time == r.time) {
      out.back() = &r;
    } else {
      out.push_back(&r);
    }
  }
  return out;
}

struct PoolFamily {
  std::string name, help, unit;
  std::function<double(const PoolSampleRecord&)> value;
};

// Kueue's amounts are in the resource's canonical unit: cpu in cores (capsim: millicores).
double kueue_amount(const std::string& resource, double v) {
  return resource == "cpu" ? v / 1000.0 : v;
}

// Kueue's own series (kubernetes-sigs/kueue pkg/metrics), from the queue samples and the
// workloads' steps, at every queue sample time: per ClusterQueue and flavor its usage and
// nominal quota; per ClusterQueue its pending workloads (active: waiting to be tried;
// inadmissible: its last admission attempt failed), its admitted workloads that have not
// finished, and the histogram of admission waits (from being queued or requeued to admission)
// with Kueue's buckets; per LocalQueue its pending and admitted active workloads. Names and
// labels follow Kueue's metrics reference (site/content/en/docs/reference/metrics.md, "ClusterQueue
// status", "LocalQueue Status (alpha)" and "Optional metrics") and pkg/metrics/metrics.go: the
// cluster-queue resource gauges carry `cohort` (empty for a ClusterQueue without one),
// `cluster_queue`, `flavor`, `resource`; kueue_cluster_queue_borrowing_limit is +Inf where the
// spec sets no borrowingLimit, as pkg/cache reports it. Files older than the queue_quota table
// have no cohort or borrowing limits: their series leave the cohort label and that family out.
void write_kueue_families(Writer& w, const ReportData& d) {
  // 1. Usage, nominal quota and borrowing limit per (ClusterQueue, flavor, resource).
  const bool have_quotas = !d.queue_quotas.empty();
  std::map<std::string, std::string> cohort_of;
  std::map<std::tuple<std::string, std::string, std::string>, double> borrowing_limit;
  for (const QueueQuotaRow& q : d.queue_quotas) {
    cohort_of[q.cluster_queue] = q.cohort;
    borrowing_limit[{q.cluster_queue, q.flavor, q.resource}] =
        std::isnan(q.borrowing_limit) ? std::numeric_limits<double>::infinity() : q.borrowing_limit;
  }
  auto cq_labels = [&](const std::string& queue) {
    std::string l;
    if (have_quotas) {
      const auto it = cohort_of.find(queue);
      l = fmt::format(R"(cohort="{}",)", label_value(it == cohort_of.end() ? "" : it->second));
    }
    return l + fmt::format(R"(cluster_queue="{}")", label_value(queue));
  };
  std::map<std::string, std::vector<const QueueSampleRow*>> series;
  for (const QueueSampleRow& q : d.queue_samples) {
    if (q.flavor.empty()) continue;  // the sum over flavors; Kueue reports per flavor
    series[fmt::format(R"({},flavor="{}",resource="{}")", cq_labels(q.queue), label_value(q.flavor),
                       label_value(q.resource))]
        .push_back(&q);
  }
  const std::vector<std::tuple<std::string, std::string, double QueueSampleRow::*>> gauges = {
      {"kueue_cluster_queue_resource_usage",
       "Reports the cluster_queue's total resource usage within all the flavors (capsim: "
       "admitted usage).",
       &QueueSampleRow::usage},
      {"kueue_cluster_queue_nominal_quota",
       "Reports the cluster_queue's resource nominal quota within all the flavors.",
       &QueueSampleRow::nominal},
  };
  for (const auto& [name, help, field] : gauges) {
    w.family(name, help, "");
    for (const auto& [labels, rows] : series) {
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i + 1 < rows.size() && rows[i + 1]->time == rows[i]->time) continue;
        w.sample(name, labels, rows[i]->time, kueue_amount(rows[i]->resource, rows[i]->*field));
      }
    }
  }
  if (have_quotas) {
    const std::string name = "kueue_cluster_queue_borrowing_limit";
    w.family(name, "Reports the cluster_queue's resource borrowing limit within all the flavors.",
             "");
    for (const auto& [labels, rows] : series) {
      const auto it =
          borrowing_limit.find({rows.front()->queue, rows.front()->flavor, rows.front()->resource});
      if (it == borrowing_limit.end()) continue;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i + 1 < rows.size() && rows[i + 1]->time == rows[i]->time) continue;
        w.sample(name, labels, rows[i]->time, kueue_amount(rows[i]->resource, it->second));
      }
    }
  }

  // 1b. The KAI scheduler's queue gauges, so a dashboard built for KAI reads a simulated run too:
  // its queue controller's kai_queue_deserved_gpus, kai_queue_quota_cpu_cores and
  // kai_queue_quota_memory_bytes (a Queue's spec quota), kai_queue_allocated_gpus,
  // kai_queue_allocated_cpu_cores and kai_queue_allocated_memory_bytes (what it holds), labelled
  // queue_name, under KAI's default metric namespace `kai` (KAI-Scheduler docs/metrics). A
  // ClusterQueue stands for a KAI Queue: its nominal quota and admitted usage, summed over flavors.
  std::map<std::pair<std::string, std::string>, std::vector<const QueueSampleRow*>> totals;
  for (const QueueSampleRow& q : d.queue_samples) {
    if (q.flavor.empty()) totals[{q.queue, q.resource}].push_back(&q);
  }
  struct KaiGauge {
    const char* name;
    const char* help;
    const char* resource;
    double QueueSampleRow::*field;
  };
  const KaiGauge kai[] = {
      {"kai_queue_deserved_gpus", "Queue deserved GPUs (capsim: the ClusterQueue's nominal quota).",
       "nvidia.com/gpu", &QueueSampleRow::nominal},
      {"kai_queue_quota_cpu_cores", "Queue quota CPU (capsim: the ClusterQueue's nominal quota).",
       "cpu", &QueueSampleRow::nominal},
      {"kai_queue_quota_memory_bytes",
       "Queue quota memory (capsim: the ClusterQueue's nominal quota).", "memory",
       &QueueSampleRow::nominal},
      {"kai_queue_allocated_gpus", "Queue allocated GPUs (capsim: admitted usage).",
       "nvidia.com/gpu", &QueueSampleRow::usage},
      {"kai_queue_allocated_cpu_cores", "Queue allocated CPUs (capsim: admitted usage).", "cpu",
       &QueueSampleRow::usage},
      {"kai_queue_allocated_memory_bytes", "Queue allocated memory (capsim: admitted usage).",
       "memory", &QueueSampleRow::usage},
  };
  for (const KaiGauge& g : kai) {
    w.family(g.name, g.help, "");
    for (const auto& [key, rows] : totals) {
      if (key.second != g.resource) continue;
      const std::string labels = fmt::format(R"(queue_name="{}")", label_value(key.first));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i + 1 < rows.size() && rows[i + 1]->time == rows[i]->time) continue;
        w.sample(g.name, labels, rows[i]->time, kueue_amount(key.second, rows[i]->*(g.field)));
      }
    }
  }

  // 2. Workload counts and admission waits, replayed up to each sample time from the events: not
  // written at all for a run recorded without them (an absent series, not a zero one).
  if (d.run.record != RecordLevel::kFull) return;
  std::vector<SimTime> times;
  std::set<std::string> queues;
  for (const QueueSampleRow& q : d.queue_samples) {
    if (times.empty() || times.back() != q.time) times.push_back(q.time);
    queues.insert(q.queue);
  }
  // Kueue's buckets: 1, then 2.5 doubling 13 times (1, 2.5, 5, ..., 10240 s).
  std::vector<double> bounds = {1.0};
  for (int i = 0; i < 13; ++i)
    bounds.push_back(2.5 * std::pow(2.0, i));
  enum class State { kNone, kActive, kInadmissible, kAdmitted };
  struct Workload {
    State state = State::kNone;
    std::string queue;
    std::string local;  // "namespace/name", "" when unknown
    SimTime queued_at = 0;
  };
  struct Counts {
    std::int64_t active = 0, inadmissible = 0, admitted = 0;
    std::vector<std::int64_t> buckets;
    std::int64_t count = 0;
    double sum = 0;
  };
  std::map<std::string, Workload> workloads;
  std::map<std::string, Counts> counts;
  std::map<std::string, Counts> local_counts;  // by "namespace/name"
  for (const std::string& q : queues)
    counts[q].buckets.assign(bounds.size(), 0);
  for (const LocalQueueRow& lq : d.local_queues)
    local_counts[lq.namespace_ + "/" + lq.name];
  auto move = [](Counts& c, State from, State to) {
    if (from == State::kActive) --c.active;
    if (from == State::kInadmissible) --c.inadmissible;
    if (from == State::kAdmitted) --c.admitted;
    if (to == State::kActive) ++c.active;
    if (to == State::kInadmissible) ++c.inadmissible;
    if (to == State::kAdmitted) ++c.admitted;
  };
  auto set_state = [&](Workload& wl, State s) {
    if (!wl.queue.empty()) {
      Counts& c = counts[wl.queue];
      if (c.buckets.empty()) c.buckets.assign(bounds.size(), 0);
      move(c, wl.state, s);
    }
    if (!wl.local.empty()) move(local_counts[wl.local], wl.state, s);
    wl.state = s;
  };
  struct Snapshot {
    SimTime time;
    std::map<std::string, Counts> counts;
    std::map<std::string, Counts> local_counts;
  };
  std::vector<Snapshot> snapshots;
  std::size_t next = 0;
  auto apply = [&](const WorkloadStep& st) {
    Workload& wl = workloads[st.workload];
    if (st.kind == "queued") {
      set_state(wl, State::kNone);
      wl.queue = st.cluster_queue;
      if (!st.local_queue.empty()) wl.local = st.local_queue;
      wl.queued_at = st.time;
      set_state(wl, State::kActive);
    } else if (st.kind == "requeued") {
      wl.queued_at = st.time;
      set_state(wl, State::kActive);
    } else if (st.kind == "admission-pending") {
      if (wl.state == State::kActive) set_state(wl, State::kInadmissible);
    } else if (st.kind == "admitted") {
      if (wl.state == State::kAdmitted) return;  // one admission, however many events
      if (!st.cluster_queue.empty() && st.cluster_queue != wl.queue) {
        set_state(wl, State::kNone);
        wl.queue = st.cluster_queue;
      }
      set_state(wl, State::kAdmitted);
      Counts& c = counts[wl.queue];
      if (c.buckets.empty()) c.buckets.assign(bounds.size(), 0);
      // The wait the admission event states (from the workload's queue order time), else the
      // time since it was queued or requeued.
      const double wait = st.wait_s >= 0 ? st.wait_s : to_seconds(st.time - wl.queued_at);
      for (std::size_t b = 0; b < bounds.size(); ++b) {
        if (wait <= bounds[b]) ++c.buckets[b];
      }
      ++c.count;
      c.sum += wait;
    } else if (st.kind == "deactivated" || st.kind == "finished") {
      set_state(wl, State::kNone);
    }
  };
  for (SimTime t : times) {
    while (next < d.workload_steps.size() && d.workload_steps[next].time <= t)
      apply(d.workload_steps[next++]);
    snapshots.push_back(Snapshot{t, counts, local_counts});
  }
  auto cq_label = [](const std::string& q) {
    return fmt::format(R"(cluster_queue="{}")", label_value(q));
  };
  // LocalQueues: Kueue labels them `name` and `namespace`.
  auto lq_label = [](const std::string& ref) {
    const std::size_t slash = ref.find('/');
    return fmt::format(R"(name="{}",namespace="{}")", label_value(ref.substr(slash + 1)),
                       label_value(ref.substr(0, slash)));
  };
  if (!local_counts.empty()) {
    w.family("kueue_local_queue_pending_workloads",
             "The number of pending workloads, per 'local_queue' and 'status' (active: waiting "
             "to be tried; inadmissible: the last admission attempt failed).",
             "");
    for (const auto& [lq, c0] : local_counts) {
      for (const char* status : {"active", "inadmissible"}) {
        for (const Snapshot& s : snapshots) {
          const Counts& c = s.local_counts.count(lq) ? s.local_counts.at(lq) : c0;
          const std::int64_t v = std::string(status) == "active" ? c.active : c.inadmissible;
          w.sample("kueue_local_queue_pending_workloads",
                   lq_label(lq) + fmt::format(R"(,status="{}")", status), s.time,
                   static_cast<double>(std::max<std::int64_t>(0, v)));
        }
      }
    }
    w.family("kueue_local_queue_admitted_active_workloads",
             "The number of admitted Workloads that are active (unsuspended and not finished), "
             "per 'localQueue'.",
             "");
    for (const auto& [lq, c0] : local_counts) {
      for (const Snapshot& s : snapshots) {
        const Counts& c = s.local_counts.count(lq) ? s.local_counts.at(lq) : c0;
        w.sample("kueue_local_queue_admitted_active_workloads", lq_label(lq), s.time,
                 static_cast<double>(std::max<std::int64_t>(0, c.admitted)));
      }
    }
  }
  w.family("kueue_pending_workloads",
           "The number of pending workloads, per 'cluster_queue' and 'status' (active: waiting "
           "to be tried; inadmissible: the last admission attempt failed).",
           "");
  for (const auto& [q, c0] : counts) {
    for (const char* status : {"active", "inadmissible"}) {
      for (const Snapshot& s : snapshots) {
        const Counts& c = s.counts.count(q) ? s.counts.at(q) : c0;
        const std::int64_t v = std::string(status) == "active" ? c.active : c.inadmissible;
        w.sample("kueue_pending_workloads", cq_label(q) + fmt::format(R"(,status="{}")", status),
                 s.time, static_cast<double>(std::max<std::int64_t>(0, v)));
      }
    }
  }
  w.family("kueue_admitted_active_workloads",
           "The number of admitted Workloads that are active (unsuspended and not finished), per "
           "'cluster_queue'.",
           "");
  for (const auto& [q, c0] : counts) {
    for (const Snapshot& s : snapshots) {
      const Counts& c = s.counts.count(q) ? s.counts.at(q) : c0;
      w.sample("kueue_admitted_active_workloads", cq_label(q), s.time,
               static_cast<double>(std::max<std::int64_t>(0, c.admitted)));
    }
  }
  const std::string hist = "kueue_admission_wait_time_seconds";
  w.family(hist,
           "The time between a workload was created or requeued until admission, per "
           "'cluster_queue'.",
           "seconds", "histogram");
  for (const auto& [q, c0] : counts) {
    for (const Snapshot& s : snapshots) {
      const auto it = s.counts.find(q);
      if (it == s.counts.end() || it->second.buckets.empty()) continue;
      const Counts& c = it->second;
      for (std::size_t b = 0; b < bounds.size(); ++b) {
        w.sample(hist + "_bucket", cq_label(q) + fmt::format(R"(,le="{:.1f}")", bounds[b]), s.time,
                 static_cast<double>(c.buckets[b]));
      }
      w.sample(hist + "_bucket", cq_label(q) + R"(,le="+Inf")", s.time,
               static_cast<double>(c.count));
      w.sample(hist + "_sum", cq_label(q), s.time, c.sum);
      w.sample(hist + "_count", cq_label(q), s.time, static_cast<double>(c.count));
    }
  }
}

}  // namespace

std::string render_prometheus(const ReportData& d, double origin, PromFormat format) {
  const std::string run_labels = fmt::format(R"(scenario="{}",profile="{}",seed="{}",run_id="{}")",
                                             label_value(d.run.scenario),
                                             label_value(d.run.profile), d.run.seed, d.run.run_id);
  Writer w(format, origin, run_labels);

  // Pools: the GPU model of each (the DCGM exporter's modelName label).
  std::map<std::string, std::string> model_of;
  for (const PoolInfo& p : d.pools) {
    if (!p.gpu_model.empty() && model_of[p.pool].empty()) model_of[p.pool] = p.gpu_model;
  }
  auto per_gpu = [](double v, const PoolSampleRecord& p) {
    return p.gpus_total > 0 ? v / p.gpus_total : 0.0;
  };
  const std::vector<PoolFamily> families = {
      {"DCGM_FI_DEV_GPU_UTIL",
       "GPU utilization in percent, mean over the pool's GPUs (capsim: busy / total x 100).", "",
       [&](const PoolSampleRecord& p) { return per_gpu(p.gpus_busy, p) * 100.0; }},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
       "Ratio of time the graphics engine is active, mean over the pool's GPUs (capsim: busy / "
       "total).",
       "", [&](const PoolSampleRecord& p) { return per_gpu(p.gpus_busy, p); }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used in MiB, mean over the pool's GPUs.", "",
       [&](const PoolSampleRecord& p) { return per_gpu(p.gpu_memory_used_mib, p); }},
      {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free in MiB, mean over the pool's GPUs.", "",
       [&](const PoolSampleRecord& p) {
         return per_gpu(std::max(0.0, p.gpu_memory_total_mib - p.gpu_memory_used_mib), p);
       }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw in watts, mean over the pool's GPUs.", "",
       [&](const PoolSampleRecord& p) { return per_gpu(p.power_w, p); }},
      {"capsim_gpus", "Physical GPUs in the pool.", "",
       [](const PoolSampleRecord& p) { return p.gpus_total; }},
      {"capsim_gpus_allocated", "GPUs allocated to pods (fractions for GPU shares).", "",
       [](const PoolSampleRecord& p) { return p.gpus_allocated; }},
      {"capsim_gpus_busy", "Busy GPUs: sum over GPUs of min(1, utilization its pods demand).", "",
       [](const PoolSampleRecord& p) { return p.gpus_busy; }},
      {"capsim_gpu_memory_allocated_bytes", "GPU memory allocated to running pods.", "bytes",
       [](const PoolSampleRecord& p) { return p.gpu_memory_allocated_mib * kMiB; }},
      {"capsim_gpu_memory_used_bytes", "GPU memory running pods actually use.", "bytes",
       [](const PoolSampleRecord& p) { return p.gpu_memory_used_mib * kMiB; }},
      {"capsim_gpu_power_watts", "GPU power draw of the pool: idle + (TDP - idle) x busy.", "watts",
       [](const PoolSampleRecord& p) { return p.power_w; }},
      {"capsim_fragmented_gpus",
       "Free GPU capacity the workload's typical pods could not use (FGD measure).", "",
       [](const PoolSampleRecord& p) { return p.fragmented_gpus; }},
      {"capsim_pods_running", "Pods running on the pool's nodes.", "",
       [](const PoolSampleRecord& p) { return static_cast<double>(p.pods_running); }},
      {"capsim_cost_usd_per_hour", "Cost rate of the pool's nodes (hardware + energy) per hour.",
       "", [](const PoolSampleRecord& p) { return p.cost_per_hour; }},
      {"capsim_shared_devices", "MIG instances or time-slice/MPS replicas the pool advertises.", "",
       [](const PoolSampleRecord& p) { return p.shared_units_total; }},
      {"capsim_shared_devices_allocated", "MIG instances or replicas held by pods.", "",
       [](const PoolSampleRecord& p) { return p.shared_units_allocated; }},
  };

  if (!d.pool_samples.empty()) {
    for (const PoolFamily& f : families) {
      // DCGM series exist only for GPUs: skip pools without any.
      const bool dcgm = f.name.rfind("DCGM_", 0) == 0;
      w.family(f.name, f.help, f.unit);
      for (const std::string& pool : d.pool_names()) {
        const std::string labels = dcgm
                                       ? fmt::format(R"(pool="{}",modelName="{}")",
                                                     label_value(pool), label_value(model_of[pool]))
                                       : fmt::format(R"(pool="{}")", label_value(pool));
        const std::vector<const PoolSampleRecord*> rows = latest_per_time(d.pool_samples, pool);
        for (const PoolSampleRecord* p : rows) {
          if (dcgm && p->gpus_total <= 0) continue;
          w.sample(f.name, labels, p->time, f.value(*p));
        }
      }
    }
  } else {
    // A file from before per-pool samples: cluster-wide gauges only.
    const std::vector<std::pair<std::string, std::function<double(const SampleRecord&)>>> c = {
        {"capsim_gpus", [](const SampleRecord& s) { return s.gpus_total; }},
        {"capsim_gpus_allocated", [](const SampleRecord& s) { return s.gpus_allocated; }},
        {"capsim_gpus_busy", [](const SampleRecord& s) { return s.gpus_busy; }},
        {"capsim_gpu_power_watts", [](const SampleRecord& s) { return s.power_w; }},
        {"capsim_pods_running",
         [](const SampleRecord& s) { return static_cast<double>(s.pods_running); }},
    };
    for (const auto& [name, get] : c) {
      w.family(name, "Cluster-wide (this report file has no per-pool samples).", "");
      for (const SampleRecord* s : latest_per_time(d.samples))
        w.sample(name, "", s->time, get(*s));
    }
  }
  if (!d.pool_samples.empty() && d.run.record == RecordLevel::kFull) {
    // OOM kills so far, per pool (from the events: absent for a run recorded without them), at each
    // pool sample time (a running count: increase() works).
    w.family("capsim_oom_kills", "OOM kills of pods on the pool's nodes so far (cumulative).", "");
    for (const std::string& pool : d.pool_names()) {
      std::size_t next = 0;
      double kills = 0;
      for (const PoolSampleRecord* p : latest_per_time(d.pool_samples, pool)) {
        for (; next < d.oom_kills.size() && d.oom_kills[next].first <= p->time; ++next) {
          if (d.oom_kills[next].second == pool) kills += 1;
        }
        w.sample("capsim_oom_kills", fmt::format(R"(pool="{}")", label_value(pool)), p->time,
                 kills);
      }
    }
  }
  w.family("capsim_pods_pending", "Pods waiting in the scheduling queue (cluster-wide).", "");
  for (const SampleRecord* s : latest_per_time(d.samples))
    w.sample("capsim_pods_pending", "", s->time, static_cast<double>(s->pods_pending));

  if (!d.queue_samples.empty()) {
    // Series keyed by (queue, flavor, resource), each in time order.
    std::map<std::string, std::vector<const QueueSampleRow*>> series;
    for (const QueueSampleRow& q : d.queue_samples) {
      series[fmt::format(R"(queue="{}",flavor="{}",resource="{}")", label_value(q.queue),
                         label_value(q.flavor), label_value(q.resource))]
          .push_back(&q);
    }
    const std::vector<std::tuple<std::string, std::string, double QueueSampleRow::*>> qf = {
        {"capsim_queue_usage", "Admitted usage of the queue (capsim resource units).",
         &QueueSampleRow::usage},
        {"capsim_queue_nominal_quota", "Nominal quota of the queue.", &QueueSampleRow::nominal},
        {"capsim_queue_borrowed", "Usage above nominal quota, borrowed from the cohort.",
         &QueueSampleRow::borrowed},
        {"capsim_queue_pending", "Amount requested by workloads waiting in the queue.",
         &QueueSampleRow::pending},
    };
    for (const auto& [name, help, field] : qf) {
      w.family(name, help, "");
      for (const auto& [labels, rows] : series) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
          if (i + 1 < rows.size() && rows[i + 1]->time == rows[i]->time) continue;
          w.sample(name, labels, rows[i]->time, rows[i]->*field);
        }
      }
    }
  }
  if (!d.queue_samples.empty()) write_kueue_families(w, d);
  return w.finish();
}

std::optional<double> parse_time_origin(const std::string& text) {
  std::tm tm{};
  int used = -1;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) == 6 &&
      used == static_cast<int>(text.size()) && tm.tm_mon >= 1 && tm.tm_mon <= 12 &&
      tm.tm_mday >= 1 && tm.tm_mday <= 31 && tm.tm_hour < 24 && tm.tm_min < 60 && tm.tm_sec < 61) {
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(::timegm(&tm));
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && std::isfinite(v) && v >= 0) return v;
  return std::nullopt;
}

double default_prometheus_origin(const RunRow& run) {
  const std::optional<double> started = parse_time_origin(run.started_at);
  if (!started) return 0;
  return std::floor(*started - run.sim_seconds);
}

}  // namespace capsim
