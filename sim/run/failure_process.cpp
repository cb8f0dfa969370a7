#include "sim/run/failure_process.hpp"

#include <algorithm>
#include <cmath>

#include "sim/check.hpp"

namespace capsim {

std::string_view cause_name(FailureCause c) {
  switch (c) {
    case FailureCause::kGpu:
      return "gpu";
    case FailureCause::kHbm:
      return "hbm";
    case FailureCause::kNvlink:
      return "nvlink";
    case FailureCause::kNic:
      return "nic";
    case FailureCause::kHost:
      return "host";
  }
  return "gpu";
}

FailureProcess::FailureProcess(const World& world, const FailureConfig& config)
    : config_(&config),
      time_(config.seed, "failures/time"),
      which_(config.seed, "failures/which"),
      repair_(config.seed, "failures/repair") {
  constexpr double kPerDayToPerMicro = 1.0 / static_cast<double>(kDay);
  for (const FailureRate& r : config.rates) {
    if (r.per_day <= 0) continue;
    for (NodeId n = 0; n < world.nodes.size(); ++n) {
      const NodeSpec& spec = world.nodes[n];
      if (!r.pool.empty() && spec.pool != r.pool) continue;
      if (r.gpu_model != kNoGpuModel && spec.gpu_model != r.gpu_model) continue;
      if (node_scoped(r.cause)) {
        targets_.push_back({n, -1, r.cause, &r});
        total_rate_ += r.per_day * kPerDayToPerMicro;
        cumulative_.push_back(total_rate_);
        continue;
      }
      for (std::int32_t g = 0; g < spec.gpu_count; ++g) {
        targets_.push_back({n, g, r.cause, &r});
        total_rate_ += r.per_day * kPerDayToPerMicro;
        cumulative_.push_back(total_rate_);
      }
    }
  }
}

SimTime FailureProcess::next_time(SimTime now) {
  if (total_rate_ <= 0) return kEndOfTime;
  const double dt = std::ceil(time_.exponential(total_rate_));
  if (dt >= static_cast<double>(kEndOfTime - now)) return kEndOfTime;
  return now + std::max<SimDuration>(1, static_cast<SimDuration>(dt));
}

FailureProcess::Failure FailureProcess::draw() {
  CAPSIM_CHECK(total_rate_ > 0, "a failure was drawn without failure rates");
  const double x = which_.uniform() * total_rate_;
  auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), x);
  if (it == cumulative_.end()) --it;
  const Target& t = targets_[static_cast<std::size_t>(it - cumulative_.begin())];
  const double seconds = std::max(0.0, t.rule->repair(repair_));
  return Failure{t.node, t.gpu, t.cause,
                 static_cast<SimDuration>(std::llround(seconds * static_cast<double>(kSecond)))};
}

}  // namespace capsim
