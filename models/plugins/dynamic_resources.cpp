#include "models/plugins/dynamic_resources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace capsim::plugins {

namespace {

// What PreFilter found out about the pod's claims.
struct DraState final : fw::StateData {
  std::vector<dra::ClaimToAllocate> to_allocate;
  // The pod's extended resources that a DeviceClass serves (KEP-5004); on a node that does not
  // advertise one of them, the scheduler's extended-resource claim asks DRA for it.
  std::vector<dra::ExtendedRequest> extended;
  std::vector<std::int32_t> slot;  // per pod claim: index into to_allocate, -1 already allocated
  NodeId pinned = kNoNode;         // the node the pod's allocated shared claims are on
  // Allocated shared claims of network-attached devices only (indices into DraWorld::claims):
  // usable on every node that reaches their devices.
  std::vector<std::uint32_t> reach;
  const Cluster* cluster = nullptr;
};

// Whether an allocated claim holds only network-attached devices.
bool network_only(const DraWorld& dra, const SharedClaimState& c) {
  const dra::NodeDevices* nd = dra.node(c.node);
  if (nd == nullptr || c.allocation.devices.empty()) return false;
  for (std::uint16_t d : c.allocation.devices) {
    if (nd->devices.at(d).network == kNoClaim) return false;
  }
  return true;
}

}  // namespace

DynamicResources::DynamicResources(PluginContext& ctx)
    : world_(&ctx.world),
      allocator_(std::make_unique<dra::Allocator>(ctx.world)),
      reasons_(&ctx.reasons),
      not_available_(ctx.reasons.intern("resourceclaim not available on the node")),
      in_use_(ctx.reasons.intern("resourceclaim in use")) {}

bool DynamicResources::wants_extended(const PodSpec& pod) const {
  for (const auto& [r, want] : pod.requests.items) {
    if (want > 0 && world_->dra.extended_class(r) != kNoClaim) return true;
  }
  return false;
}

fw::Status DynamicResources::pre_filter(fw::CycleState& state, const PodSpec& pod,
                                        const fw::Snapshot& snap) {
  if (pod.claims.empty() && !wants_extended(pod)) return fw::Status::skip();
  DraState& s = state.reuse<DraState>(slot());
  s.to_allocate.clear();
  s.extended.clear();
  s.slot.clear();
  s.pinned = kNoNode;
  s.reach.clear();
  s.cluster = &snap.cluster();
  // KEP-5004: the extended resources a DeviceClass serves, in resource order (the order
  // NodeResourcesFit checks them). capsim asks for the pod's effective request of each (the
  // larger of its init containers' and the sum of its containers'), as one request.
  for (const auto& [r, want] : pod.requests.items) {
    const std::uint32_t c = want > 0 ? world_->dra.extended_class(r) : kNoClaim;
    if (c == kNoClaim) continue;
    s.extended.push_back({r, c, static_cast<std::int32_t>(std::min<std::int64_t>(want, INT32_MAX)),
                          world_->resources.name(r)});
  }
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
        if (network_only(world_->dra, c)) {
          s.reach.push_back(ref.claim);
          s.slot.push_back(-1);
          continue;
        }
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

namespace {

bool advertises(const NodeInfo& node, ResourceId r) {
  // The node lists the resource in its allocatable (a device plugin's, even with every device
  // unhealthy): the pod takes it there the classic way.
  return node.spec->allocatable[r] > 0 || node.allocatable[r] > 0;
}

// The claims to allocate on `node`: the pod's unallocated ones, then (KEP-5004) the claim for its
// extended resources that the node does not advertise. False if there are none.
bool claims_for(const DraState& s, const NodeInfo& node, std::vector<dra::ClaimToAllocate>& out) {
  out.clear();
  dra::ClaimToAllocate ext;
  for (const dra::ExtendedRequest& e : s.extended) {
    if (!advertises(node, e.resource)) ext.extended.push_back(e);
  }
  if (s.to_allocate.empty() && ext.extended.empty()) return false;
  out = s.to_allocate;
  if (!ext.extended.empty()) out.push_back(std::move(ext));  // last, as upstream's special claim
  return true;
}

}  // namespace

fw::Status DynamicResources::filter(const fw::CycleState& state, const PodSpec& /*pod*/,
                                    const NodeInfo& node) const {
  const auto* s = state.read<DraState>(slot());
  if (s == nullptr) return fw::Status::success();
  if (s->pinned != kNoNode && s->pinned != node.id) return fw::Status::unresolvable(not_available_);
  for (std::uint32_t claim : s->reach) {
    if (!claim_reaches(world_->dra, s->cluster->shared_claim(claim), node.id)) {
      return fw::Status::unresolvable(not_available_);
    }
  }
  if (s->extended.empty()) {  // claims only: no copy per node
    if (s->to_allocate.empty()) return fw::Status::success();
    const dra::AllocationOutcome o =
        allocator_->allocate(node.id, node.dra_used, s->to_allocate, node.dra_consumed);
    return o.ok ? fw::Status::success() : failure(o.failure);
  }
  std::vector<dra::ClaimToAllocate> claims;
  if (!claims_for(*s, node, claims)) return fw::Status::success();
  const dra::AllocationOutcome o =
      allocator_->allocate(node.id, node.dra_used, claims, node.dra_consumed);
  if (!o.ok) return failure(o.failure);
  return fw::Status::success();
}

fw::Status DynamicResources::reserve(fw::CycleState& state, const PodSpec& /*pod*/,
                                     const NodeInfo& node, fw::Placement& placement) {
  placement.claims.clear();
  const auto* s = state.read<DraState>(slot());
  if (s == nullptr) return fw::Status::success();
  dra::AllocationOutcome o;
  std::vector<dra::ClaimToAllocate> claims;
  if (claims_for(*s, node, claims)) {
    o = allocator_->allocate(node.id, node.dra_used, claims, node.dra_consumed);
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
  if (claims.size() > s->to_allocate.size()) {
    // The extended-resource claim: after the pod's own, for the resources it serves here.
    ClaimAllocation a = o.allocations.back();
    for (const dra::ExtendedRequest& e : claims.back().extended)
      a.extended_resources.push_back(e.resource);
    placement.claims.push_back(std::move(a));
  }
  return fw::Status::success();
}

}  // namespace capsim::plugins
