#include "models/plugins/gpu_packing_score.hpp"

#include <algorithm>

namespace capsim::plugins {

std::int64_t gpu_packing_score(const GpuLeft& g, const ShareRequest& r) {
  if (!r.wants_gpu()) return fw::kMinNodeScore;
  const std::int64_t free_gpus = g.fully_free();
  // Case 3: every GPU on the node is free.
  if (free_gpus == static_cast<std::int64_t>(g.n)) {
    return std::max(fw::kMaxNodeScore / 3 - free_gpus, free_gpus);
  }
  // The GPUs the pod would use, least milli left first (stable by index).
  std::array<std::uint8_t, 64> idx{};
  for (std::size_t i = 0; i < g.n; ++i)
    idx[i] = static_cast<std::uint8_t>(i);
  std::stable_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(g.n),
                   [&](std::uint8_t a, std::uint8_t b) { return g.left[a] < g.left[b]; });
  std::int32_t need = r.count;
  std::int64_t free_used = 0;
  std::int64_t left_pct_on_used = 0;
  for (std::size_t k = 0; k < g.n && need > 0; ++k) {
    const std::int32_t l = g.left[idx[k]];
    if (r.milli <= l) {
      --need;
      if (l == 1000) ++free_used;
      left_pct_on_used += std::int64_t{l} * 100 / 1000;
    }
  }
  if (need != 0) return fw::kMinNodeScore;  // the peer errs: the filters should have said no
  // Case 2: fully free GPUs on a node already in use.
  if (free_used > 0) return std::max(fw::kMaxNodeScore / 2 - free_used, fw::kMaxNodeScore / 3);
  // Case 1: only partly used GPUs.
  return std::max(fw::kMaxNodeScore - left_pct_on_used / 10, fw::kMaxNodeScore / 2);
}

std::int64_t GpuPackingScore::score(const fw::CycleState& /*state*/, const PodSpec& pod,
                                    const NodeInfo& node) const {
  return gpu_packing_score(gpu_left(node), share_request(pod));
}

}  // namespace capsim::plugins
