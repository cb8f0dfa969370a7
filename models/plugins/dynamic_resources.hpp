// DynamicResources: kube-scheduler's DRA plugin (resource.k8s.io/v1 with structured parameters),
// for pods with spec.resourceClaims.
// PreFilter: resolves the pod's claims. A shared ResourceClaim already allocated (to another
//   pod) pins the pod to that claim's node, or, when it holds only network-attached devices
//   (slices with nodeSelector or allNodes), to the nodes that reach them all, as the allocation's
//   node selector does upstream; one with 256 consumers is "resourceclaim in use".
// Filter: on a node other than a pinned claim's, "resourceclaim not available on the node"
//   (unresolvable); otherwise the claims still to allocate must all fit on the node
//   (models/dra/allocator: first fit with backtracking over the requests, counters and
//   matchAttribute constraints), else "cannot allocate all claims" followed by the claim, the
//   request and why, in parentheses. A selector that fails to evaluate is an error, as upstream.
// Reserve: repeats the (deterministic) allocation on the chosen node and puts it in the
//   Placement; binding the pod then allocates the claims in the Cluster.
// Extended resources (KEP-5004, DRAExtendedResource): a pod asking for an extended resource that
//   a DeviceClass serves (its extendedResourceName, or deviceclass.resource.kubernetes.io/<name>)
//   is also handled here on every node that does not advertise that resource in its allocatable:
//   the scheduler's claim for the pod's extended resources (one ExactCount request per resource,
//   count = the quantity, from that class) is allocated after the pod's own claims, as upstream's
//   Filter does (KEP-5004 "Scheduling for Extended Resource backed by DRA"). NodeResourcesFit
//   skips such a resource on such a node; a node that advertises it serves it the classic way.
// DRA does no scoring: the node is chosen by the score plugins.
#pragma once

#include <memory>

#include "models/dra/allocator.hpp"
#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class DynamicResources final : public fw::Plugin,
                               public fw::PreFilterPlugin,
                               public fw::FilterPlugin,
                               public fw::ReservePlugin {
 public:
  explicit DynamicResources(PluginContext& ctx);
  std::string_view name() const override { return "DynamicResources"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvNodeAdded | fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  fw::Status reserve(fw::CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     fw::Placement& placement) override;

 private:
  fw::Status failure(const dra::AllocationFailure& f) const;
  bool wants_extended(const PodSpec& pod) const;

  const World* world_;
  std::unique_ptr<dra::Allocator> allocator_;
  fw::ReasonTable* reasons_;
  fw::ReasonId not_available_;
  fw::ReasonId in_use_;
};

}  // namespace capsim::plugins
