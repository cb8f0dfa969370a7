#include "models/plugins/node_unschedulable.hpp"

namespace capsim::plugins {

NodeUnschedulable::NodeUnschedulable(PluginContext& ctx)
    : reason_(ctx.reasons.intern("node(s) were unschedulable")) {
  taint_.key = ctx.world.strings.find("node.kubernetes.io/unschedulable");
  taint_.value = ctx.world.strings.find("");
  taint_.effect = TaintEffect::kNoSchedule;
}

fw::Status NodeUnschedulable::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                                     const NodeInfo& node) const {
  if (!node.spec->unschedulable) return fw::Status::success();
  if (taint_.key != kNoSym && tolerates_any(pod.tolerations, taint_)) return fw::Status::success();
  return fw::Status::unresolvable(reason_);
}

}  // namespace capsim::plugins
