// ComputeDomains: where NVIDIA's DRA driver lets the pods of a ComputeDomain (multi-node NVLink
// through IMEX, resource.nvidia.com/v1beta1) run, as a Filter plugin. Upstream the scheduler
// allocates the domain's channel claim on any node the driver publishes channels on, and the
// driver's kubelet plugin refuses, at Prepare, a node whose IMEX daemon serves another domain
// (the node label resource.nvidia.com/computeDomain): the pod then waits in ContainerCreating.
// capsim rejects such nodes when it filters instead, so the pod waits unscheduled (a departure,
// docs/dra.md#computedomains). Per node, for a pod of domain D:
//   - it is in an NVLink domain (label nvidia.com/gpu.clique, as GPU Feature Discovery writes it
//     on MNNVL nodes, whose driver publishes IMEX channels): else UnschedulableAndUnresolvable;
//   - no pod of another ComputeDomain runs on it: else Unschedulable (preemption may free it);
//   - with `span: OneDomain` (the default), once a pod of D runs, the node is in that pod's NVLink
//     domain: memory can be shared over NVLink only inside one clique, so a job split across
//     cliques gets IMEX domains that cannot reach each other. `span: Any` lets the pods spread
//     (they then pay the topology's slowdown for the level they span, docs/scenario-format.md).
// PreFilter skips pods that join no ComputeDomain.
#pragma once

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

struct ComputeDomainsArgs {
  bool one_domain = true;  // span: OneDomain (true) or Any
};

class ComputeDomains final : public fw::Plugin,
                             public fw::PreFilterPlugin,
                             public fw::FilterPlugin {
 public:
  ComputeDomains(PluginContext& ctx, ComputeDomainsArgs args);
  std::string_view name() const override { return "ComputeDomains"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;

 private:
  ComputeDomainsArgs args_;
  Sym clique_key_;
  fw::ReasonId no_clique_;
  fw::ReasonId other_domain_;
  fw::ReasonId outside_domain_;
};

}  // namespace capsim::plugins
