#include "sim/run/spot.hpp"

#include <algorithm>
#include <cmath>

#include "sim/check.hpp"

namespace capsim {

SpotProcess::SpotProcess(const std::vector<NodeSpec>& nodes, const SpotConfig& config)
    : config_(&config), node_pool_(nodes.size(), -1) {
  constexpr double kPerDayToPerMicro = 1.0 / static_cast<double>(kDay);
  for (std::size_t c = 0; c < config.pools.size(); ++c) {
    const SpotPool& sp = config.pools[c];
    const std::string purpose = "spot/" + sp.pool;
    PoolState p{c,
                {},
                0,
                RandomStream(config.seed, purpose + "/time"),
                RandomStream(config.seed, purpose + "/which"),
                RandomStream(config.seed, purpose + "/return")};
    for (NodeId n = 0; n < nodes.size(); ++n) {
      if (nodes[n].pool != sp.pool) continue;
      p.nodes.push_back(n);
      node_pool_[n] = static_cast<std::int32_t>(pools_.size());
    }
    // rate = nodes x per_node_day / (microseconds per day)
    p.rate = static_cast<double>(p.nodes.size()) * sp.per_node_day * kPerDayToPerMicro;
    pools_.push_back(std::move(p));
  }
}

SimTime SpotProcess::next_time(std::size_t p, SimTime now) {
  PoolState& s = pools_.at(p);
  if (s.rate <= 0) return kEndOfTime;
  const double dt = std::ceil(s.time.exponential(s.rate));
  if (dt >= static_cast<double>(kEndOfTime - now)) return kEndOfTime;
  return now + std::max<SimDuration>(1, static_cast<SimDuration>(dt));
}

SpotProcess::Reclaim SpotProcess::draw(std::size_t p) {
  PoolState& s = pools_.at(p);
  CAPSIM_CHECK(!s.nodes.empty() && s.rate > 0, "a spot reclaim was drawn without a rate");
  const auto i =
      std::min(s.nodes.size() - 1,
               static_cast<std::size_t>(s.which.uniform() * static_cast<double>(s.nodes.size())));
  const SpotPool& sp = config_->pools[s.config];
  Reclaim r{s.nodes[i], sp.notice, -1};
  // The return is drawn for every reclaim, kept or not, so one stream's use is fixed per reclaim.
  if (sp.return_after) {
    const double seconds = std::max(0.0, sp.return_after(s.back));
    r.return_after = static_cast<SimDuration>(std::llround(seconds * static_cast<double>(kSecond)));
  }
  return r;
}

}  // namespace capsim
