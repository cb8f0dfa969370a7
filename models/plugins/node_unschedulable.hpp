// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "models/plugins/taint_toleration.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class NodeUnschedulable final : public fw::Plugin, public fw::FilterPlugin {
 public:
  explicit NodeUnschedulable(PluginContext& ctx);
  std::string_view name() const override { return "NodeUnschedulable"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  // A schedulable node passes.
  bool quick_requirement(const fw::CycleState& /*state*/, const PodSpec& /*pod*/,
                         fw::QuickRequirement& req) const override {
    req.schedulable = true;
    return true;
  }
  // Reads the pod's tolerations and the node's spec.unschedulable.
  bool filters_alike(const PodSpec& a, const PodSpec& b) const override {
    return same_tolerations(a.tolerations, b.tolerations);
  }

 private:
  Taint taint_;
  fw::ReasonId reason_;
};

}  // namespace capsim::plugins
