// The run's sampler: the `sample` and `pool_sample` rows at a moment, and the running statistics
// of the samples that the summary's *_mean fragmentation metrics average. It keeps each node's
// fragmentation (from the run's FragmentationMeter) cached by the node's generation, so a sample
// re-measures only the nodes that changed since the last one. What is pending is the caller's
// to count (the scheduling queue, parked gang members, pods held for admission).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/cost_ledger.hpp"
#include "sim/fragmentation_meter.hpp"
#include "sim/metrics.hpp"
#include "sim/recorder.hpp"

namespace capsim {

class Sampler {
 public:
  Sampler(const Cluster& cluster, const CostLedger& ledger, const FragmentationMeter& meter);

  // Re-measures the fragmentation of the nodes that changed.
  void refresh();
  // The cluster-wide sample at `now` (after refresh()); counted in stats().
  SampleRecord sample(SimTime now, std::int64_t pods_pending);
  // One row per pool at `now`, with the fragmentation of the last refresh().
  std::vector<PoolSampleRecord> pool_samples(SimTime now) const;
  const SampleStats& stats() const { return stats_; }

 private:
  const Cluster* cluster_;
  const CostLedger* ledger_;
  const FragmentationMeter* meter_;
  SampleStats stats_;
  std::vector<double> node_frag_;  // milli-GPUs, by node
  std::vector<std::uint64_t> node_frag_gen_;
  double frag_total_ = 0;
};

}  // namespace capsim
