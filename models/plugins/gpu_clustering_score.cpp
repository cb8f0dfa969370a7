#include "models/plugins/gpu_clustering_score.hpp"

#include <algorithm>

#include "models/plugins/gpu_share.hpp"

namespace capsim::plugins {

int gpu_affinity_tag(const PodSpec& pod) {
  if (pod.gpu_count > 0) return pod.gpu_count;
  return pod.gpu_milli > 0 ? 0 : -1;
}

std::int64_t gpu_clustering_score(int pod_tag, const std::vector<int>& node_tags,
                                  std::int64_t gpu_left_milli) {
  if (pod_tag < 0) return fw::kMinNodeScore;
  constexpr std::int64_t kQuarter = fw::kMaxNodeScore / 4;
  // MaxNodeScore/4 * (MaxSpecGpu - left) / MaxSpecGpu, in Go's integer arithmetic; clamped at
  // 0 for nodes with more than 8 GPUs, which the trace does not have.
  const std::int64_t base =
      std::max<std::int64_t>(0, kQuarter * (kMaxSpecGpuMilli - gpu_left_milli) / kMaxSpecGpuMilli);
  const bool has = std::find(node_tags.begin(), node_tags.end(), pod_tag) != node_tags.end();
  std::int64_t band = 0;
  if (has) {
    band = node_tags.size() == 1 ? 3 * kQuarter : 2 * kQuarter;
  } else {
    band = node_tags.empty() ? kQuarter : 0;
  }
  return std::min(fw::kMaxNodeScore, base + band);
}

std::int64_t GpuClusteringScore::score(const fw::CycleState& /*state*/, const PodSpec& pod,
                                       const NodeInfo& node) const {
  const int tag = gpu_affinity_tag(pod);
  if (tag < 0) return fw::kMinNodeScore;
  tags_.clear();
  for (PodId p : node.pods) {
    const int t = gpu_affinity_tag(world_->pods[p]);
    if (t >= 0 && std::find(tags_.begin(), tags_.end(), t) == tags_.end()) tags_.push_back(t);
  }
  return gpu_clustering_score(tag, tags_, gpu_left_total(node));
}

}  // namespace capsim::plugins
