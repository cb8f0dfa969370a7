#include "models/fill_experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/random.hpp"

namespace capsim {

namespace {

// The share of one GPU the peer compares against the target when inflating (MilliGpu: 1000 for
// whole GPUs, the share for a GPU-share pod, 0 for a CPU-only pod).
std::int64_t per_gpu_milli(const PodSpec& p) {
  if (p.gpu_count > 0) return 1000;
  return p.gpu_milli;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::int64_t pod_gpu_request_milli(const PodSpec& p) {
  if (p.gpu_count > 0) return std::int64_t{p.gpu_count} * 1000;
  return p.gpu_milli;
}

std::int64_t rounded_percent(std::int64_t num, std::int64_t den) {
  CAPSIM_CHECK(num >= 0 && den > 0, "rounded_percent needs a non-negative ratio");
  const std::int64_t scaled = num * 100;
  std::int64_t q = scaled / den;
  const std::int64_t r = scaled % den;
  if (2 * r > den || (2 * r == den && q % 2 == 1)) ++q;
  return q;
}

FillPlan prepare_fill(World& world, const FillOptions& o, std::uint64_t seed) {
  CAPSIM_CHECK(world.jobs.empty(), "a fill experiment takes pods, not Jobs");
  FillPlan plan;
  for (const NodeSpec& n : world.nodes)
    plan.gpu_capacity_milli += std::int64_t{n.gpu_count} * 1000;

  // 0. The node order, which breaks ties between equally scored nodes.
  if (o.shuffle_nodes) {
    RandomStream rn(seed, "fill/nodes");
    rn.shuffle(world.nodes.begin(), world.nodes.end());
  }

  // 1. The original pods in name order (the peer sorts them before shuffling and sampling).
  std::vector<PodSpec> originals(std::make_move_iterator(world.pods.begin()),
                                 std::make_move_iterator(world.pods.end()));
  std::vector<std::size_t> by_name(originals.size());
  std::iota(by_name.begin(), by_name.end(), std::size_t{0});
  std::stable_sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) {
    return originals[a].name < originals[b].name;
  });
  plan.original_pods = originals.size();

  // 2. Seeded shuffle (SortClusterPods with shufflePod): `order` indexes by_name.
  std::vector<std::size_t> order(originals.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (o.shuffle) {
    RandomStream rs(seed, "fill/shuffle");
    rs.shuffle(order.begin(), order.end());
  }
  std::int64_t requested = 0;
  for (const PodSpec& p : originals)
    requested += pod_gpu_request_milli(p);

  // 3. Inflation (TunePodsByNodeTotalResource): up by resampled copies, or down by dropping
  //    randomly chosen pods, to inflate_to x capacity. Copies are drawn as indices first.
  std::vector<std::size_t> copies;  // indexes by_name
  if (o.inflate_to > 0 && !originals.empty()) {
    const double target = o.inflate_to * static_cast<double>(plan.gpu_capacity_milli);
    RandomStream ri(seed, "fill/inflate");
    if (static_cast<double>(requested) < target) {
      CAPSIM_CHECK(requested > 0, "a workload without GPU requests cannot be inflated");
      for (;;) {
        const std::size_t k = ri.below(originals.size());
        const PodSpec& src = originals[by_name[k]];
        // tuneUpPods compares the request plus the drawn pod's share *per GPU* with the target.
        if (static_cast<double>(requested + per_gpu_milli(src)) > target) break;
        requested += pod_gpu_request_milli(src);
        copies.push_back(k);
      }
    } else {
      while (static_cast<double>(requested) > target && !order.empty()) {
        const auto idx = static_cast<std::ptrdiff_t>(ri.below(order.size()));
        requested -=
            pod_gpu_request_milli(originals[by_name[order[static_cast<std::size_t>(idx)]]]);
        order.erase(order.begin() + idx);
        ++plan.dropped_pods;
      }
    }
  }
  std::vector<PodSpec> out;
  out.reserve(order.size() + copies.size());
  out.resize(order.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const PodSpec& src = originals[by_name[copies[i]]];
    PodSpec copy = src;
    copy.name = fmt::format("{}-tuned-{}", src.name, i);
    copy.resampled = true;
    copy.source = src.source + " (resampled)";
    out.push_back(std::move(copy));
  }
  plan.resampled_pods = copies.size();
  for (std::size_t i = 0; i < order.size(); ++i)
    out[i] = std::move(originals[by_name[order[i]]]);

  // 4. One arrival every `spacing`, in this order; nobody leaves.
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].arrival = static_cast<SimTime>(i) * o.spacing;
    out[i].duration = kEndOfTime;
  }
  plan.requested_gpu_milli = requested;
  plan.last_arrival = out.empty() ? 0 : static_cast<SimTime>(out.size() - 1) * o.spacing;
  world.pods.assign(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
  return plan;
}

FillCurve::FillCurve(const World& world, const FragmentationMeter& meter)
    : world_(&world), meter_(&meter) {
  for (const NodeSpec& n : world.nodes)
    capacity_milli_ += std::int64_t{n.gpu_count} * 1000;
}

void FillCurve::observe(PodId pod, bool placed, const Cluster& cluster) {
  const PodSpec& spec = world_->pods[pod];
  const std::int64_t request = pod_gpu_request_milli(spec);
  if (!started_) {
    // The first observation: measure every node (one of them may already hold the pod).
    node_frag_.assign(cluster.nodes().size(), 0.0);
    for (const NodeInfo& n : cluster.nodes()) {
      node_frag_[n.id] = meter_->node_fragment_milli(n);
      frag_total_ += node_frag_[n.id];
    }
    started_ = true;
  } else if (placed) {
    const NodeInfo& n = cluster.node(cluster.pod(pod).node);
    const double f = meter_->node_fragment_milli(n);
    frag_total_ += f - node_frag_[n.id];
    node_frag_[n.id] = f;
  }
  arrived_milli_ += request;
  if (placed) {
    allocated_milli_ += request;
    ++placed_;
  } else {
    ++failed_;
  }
  if (capacity_milli_ <= 0) return;

  const std::int64_t percent = rounded_percent(arrived_milli_, capacity_milli_);
  if (points_.size() <= static_cast<std::size_t>(percent))
    points_.resize(static_cast<std::size_t>(percent) + 1);
  Point& pt = points_[static_cast<std::size_t>(percent)];
  pt.percent = percent;
  ++pt.arrivals;
  const auto cap = static_cast<double>(capacity_milli_);
  pt.alloc_ratio_sum += static_cast<double>(allocated_milli_) / cap;
  const std::int64_t idle = capacity_milli_ - allocated_milli_;
  if (idle > 0) {
    pt.frag_ratio_sum += frag_total_ / static_cast<double>(idle);
    ++pt.frag_ratio_count;
  }
  pt.frag_share_sum += frag_total_ / cap;

  const ClusterTotals& t = cluster.totals();
  SampleRecord& r = pt.last;
  r.time = spec.arrival;
  r.gpus_total = t.gpus_total;
  r.gpus_allocated = static_cast<double>(allocated_milli_) / 1000.0;
  r.gpus_busy = t.gpus_busy;
  r.gpu_memory_allocated_mib = t.gpu_memory_allocated_mib;
  r.gpu_memory_used_mib = t.gpu_memory_used_mib;
  r.pods_running = t.pods_running;
  r.pods_pending = 0;
  r.fragmented_gpus = frag_total_ / 1000.0;
  r.power_w = t.power_w;
  r.cost_per_hour = t.cost_per_hour;
  r.arrived_gpu_ratio = static_cast<double>(arrived_milli_) / cap;
}

FillCurve::Mean FillCurve::mean_at(std::int64_t percent) const {
  Mean m;
  auto take = [&](std::int64_t p) {
    if (p < 0 || static_cast<std::size_t>(p) >= points_.size()) return;
    const Point& pt = points_[static_cast<std::size_t>(p)];
    if (pt.arrivals == 0) return;
    m.alloc += pt.alloc_ratio_sum;
    m.frag_ratio += pt.frag_ratio_sum;
    m.frag_share += pt.frag_share_sum;
    m.n += pt.arrivals;
    m.n_ratio += pt.frag_ratio_count;
    m.last = &pt;
  };
  take(percent);
  if (m.n == 0) {
    // merge_alloc_discrete.py: no row at this percentage, so the rows within +-1.
    for (std::int64_t p = percent - 1; p <= percent + 1; ++p)
      take(p);
  }
  return m;
}

double FillCurve::allocation_ratio_at(std::int64_t percent) const {
  const Mean m = mean_at(percent);
  return m.n > 0 ? m.alloc / static_cast<double>(m.n) : kNaN;
}

double FillCurve::fragmentation_ratio_at(std::int64_t percent) const {
  const Mean m = mean_at(percent);
  return m.n_ratio > 0 ? m.frag_ratio / static_cast<double>(m.n_ratio) : kNaN;
}

double FillCurve::fragmented_share_at(std::int64_t percent) const {
  const Mean m = mean_at(percent);
  return m.n > 0 ? m.frag_share / static_cast<double>(m.n) : kNaN;
}

std::vector<SampleRecord> FillCurve::samples() const {
  std::vector<SampleRecord> out;
  const auto cap_gpus = static_cast<double>(capacity_milli_) / 1000.0;
  for (std::int64_t p = 0; p < static_cast<std::int64_t>(points_.size()); ++p) {
    const Mean m = mean_at(p);
    if (m.n == 0) continue;
    SampleRecord r = m.last->last;
    r.gpus_allocated = m.alloc / static_cast<double>(m.n) * cap_gpus;
    r.fragmented_gpus = m.frag_share / static_cast<double>(m.n) * cap_gpus;
    r.arrived_gpu_ratio = static_cast<double>(p) / 100.0;
    out.push_back(r);
  }
  return out;
}

Summary FillCurve::summary() const {
  Summary s;
  const auto cap = static_cast<double>(capacity_milli_);
  put_metric(s, "gpu_allocation_ratio_at_arrived_100", allocation_ratio_at(100));
  put_metric(s, "gpu_allocation_ratio_at_arrived_130", allocation_ratio_at(130));
  put_metric(s, "fragmentation_ratio_at_arrived_100", fragmentation_ratio_at(100));
  put_metric(s, "fragmentation_ratio_at_arrived_130", fragmentation_ratio_at(130));
  put_metric(s, "fragmented_gpu_share_at_arrived_130", fragmented_share_at(130));
  put_metric(s, "arrived_gpu_ratio_end", cap > 0 ? static_cast<double>(arrived_milli_) / cap : 0);
  put_metric(s, "gpu_allocation_ratio_end",
             cap > 0 ? static_cast<double>(allocated_milli_) / cap : 0);
  put_metric(s, "fill_pods_placed", static_cast<double>(placed_));
  put_metric(s, "fill_pods_failed", static_cast<double>(failed_));
  return s;
}

void FillExperiment::finish(Recorder& recorder, Summary& summary) {
  for (const SampleRecord& r : curve_.samples())
    recorder.record_sample(r);
  for (auto& m : curve_.summary())
    summary.push_back(std::move(m));
}

}  // namespace capsim
