#include "models/plugins/dot_product_score.hpp"

namespace capsim::plugins {

std::int64_t dot_product_score(std::int64_t cpu_left, std::int64_t gpu_left_milli,
                               const ShareRequest& r) {
  // ToVirtualNodeResourceList: no match group when the CPU does not fit, so MinNodeScore.
  if (cpu_left < r.cpu) return fw::kMinNodeScore;
  const double max_gpu = static_cast<double>(kMaxSpecGpuMilli);
  // The operations in the peer's order (NormalizeVector, CalculateVectorDotProduct, / len), so
  // the truncation to an integer falls the same way.
  const double node_cpu = static_cast<double>(cpu_left) / kMaxSpecCpu;
  const double node_gpu = static_cast<double>(gpu_left_milli) / max_gpu;
  const double pod_cpu = static_cast<double>(r.cpu) / kMaxSpecCpu;
  const double pod_gpu = static_cast<double>(r.total_milli()) / max_gpu;
  double dot = 0;
  dot += node_cpu * pod_cpu;
  dot += node_gpu * pod_gpu;
  const double score = 1.0 - dot / 2.0;
  return static_cast<std::int64_t>(static_cast<double>(fw::kMaxNodeScore) * score);
}

std::int64_t DotProductScore::score(const fw::CycleState& /*state*/, const PodSpec& pod,
                                    const NodeInfo& node) const {
  return dot_product_score(node.free(kCpu), gpu_left_total(node), share_request(pod));
}

}  // namespace capsim::plugins
