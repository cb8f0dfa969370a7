// GPU fragmentation as the FGD paper (Weng et al., ATC'23) measures it. The workload's "typical
// pods" are its pod shapes (cpu, GPU share per GPU, GPU count, allowed models) taken in order of
// popularity until they cover 95% of pods, with their frequencies p_k renormalised. A node's
// fragment F(n) is the idle GPU capacity a typical pod could not use, in expectation over k:
//   - k cannot run on n at all (lacks GPUs, CPU, model access; or k is a CPU-only pod):
//     all of n's idle GPU capacity counts, p_k * idle(n);
//   - k fits: only GPUs with less left than k needs count, p_k * sum_{left(g) < milli_k} left(g).
// Capacities are in GPU milli (1000 = one GPU).
// On nodes whose GPUs are MIG-partitioned, time-sliced or MPS-shared the same idea is applied to
// device units: idle capacity is the free share of each unit (a free MIG instance counts its
// compute share of the GPU, a free replica 1/replicas) plus compute slices no instance covers
// (stranded by the layout); a typical pod that fits can use only the free units of the resource
// it asks for, so the rest of the idle capacity is fragmented for it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/world.hpp"

namespace capsim {

struct TypicalPod {
  std::int64_t cpu_milli = 0;
  std::int32_t gpu_milli = 0;        // per GPU; 1000 for whole GPUs; 0 for CPU-only pods
  std::int32_t gpu_count = 0;        // devices of `resource` it asks for
  ResourceId resource = kNvidiaGpu;  // the device resource (nvidia.com/gpu, a MIG resource, ...)
  std::vector<GpuModelId> models;    // empty: any
  double p = 0;
};

// Groups pods by shape and keeps the most popular ones covering `coverage` of pods.
std::vector<TypicalPod> typical_pods(const World& world, double coverage = 0.95);

class FragmentationModel final : public FragmentationMeter {
 public:
  explicit FragmentationModel(const World& world, double coverage = 0.95)
      : typical_(typical_pods(world, coverage)) {}
  explicit FragmentationModel(std::vector<TypicalPod> typical) : typical_(std::move(typical)) {}

  double node_fragment_milli(const NodeInfo& node) const override;
  const std::vector<TypicalPod>& typical() const { return typical_; }

 private:
  double plain_fragment(const NodeInfo& node) const;  // whole GPUs and GPU shares (FGD)
  double unit_fragment(const NodeInfo& node) const;   // MIG, time-slicing, MPS
  std::vector<TypicalPod> typical_;
};

}  // namespace capsim
