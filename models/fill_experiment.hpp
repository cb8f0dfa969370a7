// Fill experiments: the FGD study's way of comparing placement policies (Weng et al., USENIX
// ATC'23, and its simulator's Simulate/SchedulePods). The workload's pods are shuffled (seeded),
// then inflated by seeded resampling until their GPU request reaches a target share of the
// cluster's GPU capacity (the peer's `tune`, 1.3); they arrive one after another, never leave,
// and are each placed once or fail. After every arrival the allocated GPU share and the
// fragmentation (models/fragmentation.hpp) are recorded against the GPU request arrived so far,
// as a percentage of capacity; the curve is reported per integer percentage, averaging the
// arrivals that round to it as the peer's analysis scripts do.
//
// prepare_fill() rewrites a loaded World's workload before the run; FillExperiment drives the run
// (one attempt per pod, no time samples) and FillCurve, which it feeds after every attempt,
// produces the `sample` rows and summary metrics.
#pragma once

#include <cstdint>
#include <vector>

#include "models/fragmentation.hpp"
#include "sim/cluster.hpp"
#include "sim/experiment.hpp"
#include "sim/recorder.hpp"
#include "sim/world.hpp"

namespace capsim {

struct FillOptions {
  // Resample pods until the GPU request reaches this multiple of the GPU capacity; 0 keeps the
  // workload as it is. Above the workload's own request it adds copies, below it drops pods.
  double inflate_to = 0;
  bool shuffle = true;  // seeded shuffle of the original pods (else: name order)
  // Seeded shuffle of the node order, which decides ties between equally scored nodes (the
  // scheduler takes the first): the peer renames its nodes with a random permutation prefix, so
  // that its deterministic tie-break falls on a different node for every seed.
  bool shuffle_nodes = true;
  SimDuration spacing = kSecond;  // time between two arrivals
};

struct FillPlan {
  std::size_t original_pods = 0;
  std::size_t resampled_pods = 0;  // copies added
  std::size_t dropped_pods = 0;    // removed to reach a target below the workload's request
  std::int64_t gpu_capacity_milli = 0;
  std::int64_t requested_gpu_milli = 0;  // by the pods that will arrive
  SimTime last_arrival = 0;
};

// A pod's GPU request in milli (1000 per whole GPU), as the peer counts it.
std::int64_t pod_gpu_request_milli(const PodSpec& p);

// Rewrites world.pods in arrival order: the original pods sorted by name, shuffled with the seed
// (stream "fill/shuffle"), then the resampled copies (stream "fill/inflate"; named
// `<pod>-tuned-<i>`, marked `resampled`), arriving `spacing` apart from time 0, never leaving.
// Inflation follows the peer's tuneUpPods: draw a pod uniformly from the originals; stop at the
// first draw whose per-GPU share would take the request past the target (the peer compares the
// share per GPU, not the pod's total, so a multi-GPU pod can overshoot slightly). A Job in the
// workload is an InputError-worthy misuse: the caller rejects it before. With shuffle_nodes,
// world.nodes is permuted (stream "fill/nodes"); call it before the Cluster is built.
FillPlan prepare_fill(World& world, const FillOptions& options, std::uint64_t seed);

// Round-half-to-even of 100 * num / den for non-negative integers (Python's round(), which the
// peer's analysis uses on these exact ratios).
std::int64_t rounded_percent(std::int64_t num, std::int64_t den);

class FillCurve {
 public:
  FillCurve(const World& world, const FragmentationMeter& meter);

  // After pod's single scheduling attempt.
  void observe(PodId pod, bool placed, const Cluster& cluster);

  struct Point {
    std::int64_t percent = 0;  // arrived GPU request, % of capacity (rounded half to even)
    std::int64_t arrivals = 0;
    double alloc_ratio_sum = 0;         // allocated / capacity, summed over the arrivals
    double frag_ratio_sum = 0;          // fragmented / unallocated
    double frag_share_sum = 0;          // fragmented / capacity
    std::int64_t frag_ratio_count = 0;  // arrivals with unallocated capacity
    SampleRecord last;                  // the cluster after the last arrival of the bucket
  };
  // One row per arrived percentage from 0 to the largest reached. A percentage no arrival rounds
  // to takes the arrivals within one percentage point, as the peer's scripts do; if there are
  // none it is left out.
  std::vector<SampleRecord> samples() const;
  // Mean allocated share of capacity over the arrivals rounding to `percent` (same fallback);
  // NaN when there are none.
  double allocation_ratio_at(std::int64_t percent) const;
  double fragmentation_ratio_at(std::int64_t percent) const;
  double fragmented_share_at(std::int64_t percent) const;
  // The summary metrics of a fill run (docs/metrics.md).
  Summary summary() const;

  std::int64_t capacity_milli() const { return capacity_milli_; }
  std::int64_t arrived_milli() const { return arrived_milli_; }
  std::int64_t allocated_milli() const { return allocated_milli_; }
  double fragment_milli() const { return frag_total_; }

 private:
  struct Mean {
    double alloc = 0, frag_ratio = 0, frag_share = 0;
    std::int64_t n = 0, n_ratio = 0;
    const Point* last = nullptr;
  };
  Mean mean_at(std::int64_t percent) const;

  const World* world_;
  const FragmentationMeter* meter_;
  std::int64_t capacity_milli_ = 0;
  std::int64_t arrived_milli_ = 0;
  std::int64_t allocated_milli_ = 0;
  std::vector<double> node_frag_;
  double frag_total_ = 0;
  bool started_ = false;
  std::int64_t placed_ = 0, failed_ = 0;
  std::vector<Point> points_;  // by percent
};

// The fill experiment as the Simulation sees it: a pod is placed on its one attempt or ends
// unschedulable, nothing is sampled on the clock, and at the end the curve's rows and metrics
// are reported.
class FillExperiment final : public Experiment {
 public:
  FillExperiment(const World& world, const FragmentationMeter& meter) : curve_(world, meter) {}
  bool retries_unschedulable() const override { return false; }
  bool time_samples() const override { return false; }
  void after_attempt(PodId pod, bool placed, const Cluster& cluster) override {
    curve_.observe(pod, placed, cluster);
  }
  void finish(Recorder& recorder, Summary& summary) override;
  const FillCurve& curve() const { return curve_; }

 private:
  FillCurve curve_;
};

}  // namespace capsim
