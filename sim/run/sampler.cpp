#include "sim/run/sampler.hpp"

#include <algorithm>

namespace capsim {

const FragmentationMeter& FragmentationMeter::none() {
  class None final : public FragmentationMeter {
   public:
    double node_fragment_milli(const NodeInfo&) const override { return 0; }
  };
  static const None none;
  return none;
}

Sampler::Sampler(const Cluster& cluster, const CostLedger& ledger, const FragmentationMeter& meter)
    : cluster_(&cluster),
      ledger_(&ledger),
      meter_(&meter),
      node_frag_(cluster.nodes().size(), 0.0),
      node_frag_gen_(cluster.nodes().size(), ~std::uint64_t{0}) {}

void Sampler::refresh() {
  const auto& nodes = cluster_->nodes();
  // Generations from the compact copy: reading each NodeInfo's was a cache miss per node.
  const std::vector<std::uint64_t>& generations = cluster_->node_generations();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (node_frag_gen_[n] == generations[n]) continue;
    // An absent node (an autoscaled pool's, not provisioned) has no capacity to fragment.
    const double f = nodes[n].absent ? 0.0 : meter_->node_fragment_milli(nodes[n]);
    frag_total_ += f - node_frag_[n];
    node_frag_[n] = f;
    node_frag_gen_[n] = generations[n];
  }
}

SampleRecord Sampler::sample(SimTime now, std::int64_t pods_pending) {
  const ClusterTotals& t = cluster_->totals();
  SampleRecord r;
  r.time = now;
  r.gpus_total = t.gpus_total;
  r.gpus_allocated = t.gpus_allocated;
  r.gpus_busy = t.gpus_busy;
  r.gpu_memory_allocated_mib = t.gpu_memory_allocated_mib;
  r.gpu_memory_used_mib = t.gpu_memory_used_mib;
  r.pods_running = t.pods_running;
  r.pods_pending = pods_pending;
  r.fragmented_gpus = frag_total_ / 1000.0;
  r.power_w = t.power_w;
  r.cost_per_hour = ledger_->cost_per_hour();  // hardware + energy
  ++stats_.count;
  const double free = t.gpus_total - t.gpus_allocated;
  if (free > 1e-9) {
    stats_.fragmentation_ratio_sum += std::min(1.0, r.fragmented_gpus / free);
    ++stats_.fragmentation_ratio_count;
  }
  if (t.gpus_total > 0) stats_.fragmented_share_sum += r.fragmented_gpus / t.gpus_total;
  return r;
}

std::vector<PoolSampleRecord> Sampler::pool_samples(SimTime now) const {
  return ledger_->pool_samples(now, node_frag_);
}

}  // namespace capsim
