#include "models/plugins/best_fit_score.hpp"

#include <algorithm>
#include <limits>

namespace capsim::plugins {

std::int64_t best_fit_raw_score(std::int64_t cpu_left, std::int64_t gpu_left_milli,
                                const ShareRequest& r) {
  const double free[2] = {static_cast<double>(cpu_left), static_cast<double>(gpu_left_milli)};
  const double req[2] = {static_cast<double>(r.cpu), static_cast<double>(r.total_milli())};
  const double max_spec[2] = {kMaxSpecCpu, static_cast<double>(kMaxSpecGpuMilli)};
  const double weight[2] = {0.5, 0.5};
  double score = 0;  // lower is better
  for (int i = 0; i < 2; ++i) {
    // The peer errs (and scores the minimum) if the request does not fit; the filters should
    // have said no.
    if (free[i] < req[i]) return fw::kMinNodeScore;
    score += (free[i] - req[i]) / max_spec[i] * weight[i];
  }
  score = (1.0 - score) * static_cast<double>(fw::kMaxNodeScore);
  return static_cast<std::int64_t>(score);
}

void min_max_normalize(std::span<std::int64_t> scores) {
  std::int64_t highest = std::numeric_limits<std::int64_t>::min();
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t s : scores) {
    highest = std::max(highest, s);
    lowest = std::min(lowest, s);
  }
  const std::int64_t range = highest - lowest;
  for (std::int64_t& s : scores) {
    s = range == 0
            ? fw::kMinNodeScore
            : (s - lowest) * (fw::kMaxNodeScore - fw::kMinNodeScore) / range + fw::kMinNodeScore;
  }
}

std::int64_t BestFitScore::score(const fw::CycleState& /*state*/, const PodSpec& pod,
                                 const NodeInfo& node) const {
  return best_fit_raw_score(node.free(kCpu), gpu_left_total(node), share_request(pod));
}

void BestFitScore::normalize(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                             std::span<std::int64_t> scores) const {
  min_max_normalize(scores);
}

}  // namespace capsim::plugins
