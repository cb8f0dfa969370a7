// GPU fragmentation as the FGD paper (Weng et al., ATC'23) measures it. The workload's "typical
// pods" are its pod shapes (cpu, GPU share per GPU, GPU count, allowed models) taken in order of
// popularity until they cover 95% of pods, with their frequencies p_k renormalised. A node's
// fragment F(n) is the idle GPU capacity a typical pod could not use, in expectation over k:
//   - k cannot run on n at all (lacks GPUs, CPU, model access; or k is a CPU-only pod):
//     all of n's idle GPU capacity counts, p_k * idle(n);
//   - k fits: only GPUs with less left than k needs count, p_k * sum_{left(g) < milli_k} left(g).
// Capacities are in GPU milli (1000 = one GPU).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/world.hpp"

namespace capsim {

struct TypicalPod {
  std::int64_t cpu_milli = 0;
  std::int32_t gpu_milli = 0;  // per GPU; 1000 for whole GPUs; 0 for CPU-only pods
  std::int32_t gpu_count = 0;
  std::vector<GpuModelId> models;  // empty: any
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
  std::vector<TypicalPod> typical_;
};

}  // namespace capsim
