#include "models/plugins/dynamic_resources.hpp"

#include <fmt/format.h>

namespace capsim::plugins {

namespace {

// What PreFilter found out about the pod's claims.
struct DraState final : fw::StateData {
  std::vector<dra::ClaimToAllocate> to_allocate;
  std::vector<std::int32_t> slot;  // per pod claim: index into to_allocate, -1 already allocated
  NodeId pinned = kNoNode;         // the node the pod's allocated shared claims are on
};

}  // namespace

DynamicResources::DynamicResources(PluginContext& ctx)
    : allocator_(std::make_unique<dra::Allocator>(ctx.world)),
      reasons_(&ctx.reasons),
      not_available_(ctx.reasons.intern("resourceclaim not available on the node")),
      in_use_(ctx.reasons.intern("resourceclaim in use")) {}

fw::Status DynamicResources::pre_filter(fw::CycleState& state, const PodSpec& pod,
                                        const fw::Snapshot& snap) {
  if (pod.claims.empty()) return fw::Status::skip();
  DraState& s = state.reuse<DraState>(slot());
  s.to_allocate.clear();
  s.slot.clear();
  s.pinned = kNoNode;
  for (const PodClaimRef& ref : pod.claims) {
    if (ref.claim == kNoClaim) {
      return fw::Status::unresolvable(reasons_->intern(
          fmt::format("resourceclaim{} \"{}\" not found", ref.shared() ? "" : "template",
                      ref.shared() ? ref.claim_name : ref.template_name)));
    }
    if (ref.shared()) {
      const SharedClaimState& c = snap.cluster().shared_claim(ref.claim);
      if (c.node != kNoNode) {
        if (c.reserved_for.size() >= kMaxClaimConsumers) return fw::Status::unresolvable(in_use_);
        if (s.pinned != kNoNode && s.pinned != c.node) {
          // Two of its claims are allocated on different nodes: no node has both.
          return fw::Status::unresolvable(not_available_);
        }
        s.pinned = c.node;
        s.slot.push_back(-1);
        continue;
      }
    }
    s.slot.push_back(static_cast<std::int32_t>(s.to_allocate.size()));
    s.to_allocate.push_back({ref.claim, ref.name});
  }
  return fw::Status::success();
}

fw::Status DynamicResources::failure(const dra::AllocationFailure& f) const {
  const fw::ReasonId r = reasons_->intern(
      f.error ? f.reason : fmt::format("cannot allocate all claims ({})", f.reason));
  if (f.error) return fw::Status::error(r);
  return f.unresolvable ? fw::Status::unresolvable(r) : fw::Status::unschedulable(r);
}

fw::Status DynamicResources::filter(const fw::CycleState& state, const PodSpec& /*pod*/,
                                    const NodeInfo& node) const {
  const auto* s = state.read<DraState>(slot());
  if (s == nullptr) return fw::Status::success();
  if (s->pinned != kNoNode && s->pinned != node.id) return fw::Status::unresolvable(not_available_);
  if (s->to_allocate.empty()) return fw::Status::success();
  const dra::AllocationOutcome o = allocator_->allocate(node.id, node.dra_used, s->to_allocate);
  if (!o.ok) return failure(o.failure);
  return fw::Status::success();
}

fw::Status DynamicResources::reserve(fw::CycleState& state, const PodSpec& pod,
                                     const NodeInfo& node, fw::Placement& placement) {
  placement.claims.clear();
  if (pod.claims.empty()) return fw::Status::success();
  const auto* s = state.read<DraState>(slot());
  if (s == nullptr) return fw::Status::success();
  dra::AllocationOutcome o;
  if (!s->to_allocate.empty()) {
    o = allocator_->allocate(node.id, node.dra_used, s->to_allocate);
    if (!o.ok) return failure(o.failure);
  }
  for (std::int32_t k : s->slot) {
    if (k < 0) {
      ClaimAllocation reuse;
      reuse.reuse = true;
      placement.claims.push_back(std::move(reuse));
    } else {
      placement.claims.push_back(o.allocations.at(static_cast<std::size_t>(k)));
    }
  }
  return fw::Status::success();
}

}  // namespace capsim::plugins
