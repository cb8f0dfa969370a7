// DefaultBinder: binds the pod to the node the cycle chose. In the simulator binding is immediate;
// the Simulation applies it to the cluster.
#pragma once

#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class DefaultBinder final : public fw::Plugin, public fw::BindPlugin {
 public:
  std::string_view name() const override { return "DefaultBinder"; }
  fw::Status bind(fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                  const fw::Placement& /*placement*/) override {
    return fw::Status::success();
  }
};

}  // namespace capsim::plugins
