// GPU fragmentation as the FGD study measures it (Weng et al., USENIX ATC'23, and its simulator's
// pkg/utils/frag.go). The workload's "typical pods" are its pod shapes (cpu, GPU share per GPU,
// GPU count, allowed models) taken in order of popularity until they cover 95 % of the pods,
// with their frequencies p_k renormalised to sum to 1. A node's fragment F(n) is the idle GPU
// capacity (milli) a typical pod could not use, in expectation over k:
//   - k asks for no GPU, or may not use n's GPU model, or finds too few GPUs with its share left,
//     or too little free CPU: all of n's idle GPU capacity counts, p_k * idle(n);
//   - k fits: only the GPUs with less left than k's share count,
//     p_k * sum_{g: left(g) < milli_k} left(g).
// Nodes without GPUs have no idle GPU capacity and so no fragment. Capacities are GPU milli
// (1000 = one GPU); memory plays no part, as in the study.
// On nodes whose GPUs are MIG-partitioned, time-sliced or MPS-shared the same idea is applied to
// device units: idle capacity is the free share of each unit (a free MIG instance counts its
// compute share of the GPU, a free replica 1/replicas) plus compute slices no instance covers
// (stranded by the layout); a typical pod that fits can use only the free units of the resource
// it asks for, so the rest of the idle capacity is fragmented for it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/world.hpp"

namespace capsim {

struct TypicalPod {
  std::int64_t cpu_milli = 0;      // the non-zero request: 100m for a pod that asks for none
  std::int32_t gpu_milli = 0;      // per GPU; 1000 for whole GPUs; 0 for CPU-only pods
  std::int32_t gpu_count = 0;      // devices of `resource` it asks for
  std::vector<GpuModelId> models;  // allowed models as the pod lists them; empty: any
  double p = 0;
  ResourceId resource = kNvidiaGpu;  // the device resource (nvidia.com/gpu, a MIG resource, ...)
};

// The workload's typical pods: every pod of the World except the `resampled` copies (and each
// Job's template, counted `completions` times), grouped by (cpu, GPU share, GPU count, model
// list, device resource), most popular first, taken until they cover `coverage_percent` % of the
// pods (the peer's podPopularityThreshold, 95), frequencies renormalised. Ties in popularity are
// broken as the peer's sort does: larger cpu, share, count, then model list (as text) first.
std::vector<TypicalPod> typical_pods(const World& world, int coverage_percent = 95);

class FragmentationModel final : public FragmentationMeter {
 public:
  explicit FragmentationModel(const World& world, int coverage_percent = 95);
  // `model_count`: GPU model ids below it get a precomputed view (others are computed per call).
  explicit FragmentationModel(std::vector<TypicalPod> typical, std::size_t model_count = 0);

  double node_fragment_milli(const NodeInfo& node) const override;
  // F of a node state: its GPU model (kNoGpuModel for none), free CPU (millicores) and the milli
  // left on each GPU (0..1000).
  double fragment_milli(GpuModelId model, std::int64_t cpu_left,
                        std::span<const std::int32_t> left) const;

  const std::vector<TypicalPod>& typical() const { return typical_; }

 private:
  // What the typical pods ask of a node with a given GPU model: the probability mass of those
  // that can use none of its GPUs whatever its state (CPU-only pods, excluded models), and the
  // others grouped by (share, count, cpu).
  struct Need {
    std::int32_t milli;
    std::int32_t count;
    std::int64_t cpu;
    double p;
  };
  struct ModelView {
    double unusable_p = 0;
    std::vector<Need> needs;
  };
  ModelView make_view(GpuModelId model) const;
  double unit_fragment(const NodeInfo& node) const;  // MIG, time-slicing, MPS

  std::vector<TypicalPod> typical_;
  std::vector<ModelView> views_;  // by model id
};

}  // namespace capsim
