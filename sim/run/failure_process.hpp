// The failures of a run, drawn from FailureConfig's rates or replayed from its trace. The rates
// of every GPU and node the rules match add up to one Poisson process: the time to the next
// failure is exponential in the total rate, the device that fails is drawn in proportion to its
// rate, and a device that is already down does not fail again (thinning: a down device's rate is
// 0). Every draw comes from streams of the failure seed alone ("failures/time", "failures/which",
// "failures/repair"), so adding failures never changes another process's numbers (arrivals,
// tie-breaks), and the failures depend on nothing but that seed and the fleet.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/random.hpp"
#include "sim/run/failure_model.hpp"
#include "sim/world.hpp"

namespace capsim {

class FailureProcess {
 public:
  struct Failure {
    NodeId node = kNoNode;
    std::int32_t gpu = -1;  // -1: the node
    FailureCause cause = FailureCause::kHost;
    SimDuration repair = 0;
  };

  FailureProcess(const World& world, const FailureConfig& config);

  bool modelled() const { return total_rate_ > 0; }
  // The time of the next modelled failure, drawn after `now` (kEndOfTime without rates).
  SimTime next_time(SimTime now);
  // Which GPU or node fails then, and for how long (drawn).
  Failure draw();
  const std::vector<TracedFailure>& trace() const { return config_->trace; }

 private:
  struct Target {
    NodeId node;
    std::int32_t gpu;
    FailureCause cause;
    const FailureRate* rule;
  };
  const FailureConfig* config_;
  std::vector<Target> targets_;
  std::vector<double> cumulative_;  // cumulative rate per target, per microsecond
  double total_rate_ = 0;
  RandomStream time_;
  RandomStream which_;
  RandomStream repair_;
};

}  // namespace capsim
