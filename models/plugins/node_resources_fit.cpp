#include "models/plugins/node_resources_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/exact_div.hpp"

namespace capsim::plugins {

std::int64_t least_requested_score(std::int64_t requested, std::int64_t capacity) {
  // ((capacity - requested) * MaxNodeScore) / capacity; 0 when it does not fit.
  if (capacity == 0 || requested > capacity) return 0;
  return exact_div((capacity - requested) * fw::kMaxNodeScore, capacity);
}

std::int64_t most_requested_score(std::int64_t requested, std::int64_t capacity) {
  // (min(requested, capacity) * MaxNodeScore) / capacity.
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;
  return exact_div(requested * fw::kMaxNodeScore, capacity);
}

std::int64_t broken_linear(const std::vector<UtilizationShapePoint>& shape, std::int64_t p) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      // Linear interpolation between points i-1 and i, in integer arithmetic.
      return shape[i - 1].score + (shape[i].score - shape[i - 1].score) *
                                      (p - shape[i - 1].utilization) /
                                      (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.back().score;
}

std::int64_t pod_score_request(const PodSpec& pod, ResourceId r, bool use_requested) {
  const std::int64_t v = pod.requests.get(r);
  if (use_requested || v != 0) return v;
  if (r == kCpu) return kDefaultMilliCpuRequest;
  if (r == kMemory) return kDefaultMemoryRequest;
  return 0;
}

AllocReq allocatable_and_requested(const NodeInfo& node, ResourceId r, std::int64_t pod_request,
                                   bool use_requested) {
  // An extended resource the pod does not request is skipped (returns 0, 0).
  if (pod_request == 0 && ResourceNames::is_scalar(r)) return {};
  const std::int64_t alloc = node.allocatable[r];
  if (r == kCpu || r == kMemory) {
    const ResourceVec& req = use_requested ? node.requested : node.nonzero_requested;
    return {alloc, req[r] + pod_request};
  }
  if (alloc == 0) return {};  // the node does not have the resource at all
  return {alloc, node.requested[r] + pod_request};
}

NodeResourcesFit::NodeResourcesFit(PluginContext& ctx, NodeResourcesFitArgs args)
    : args_(std::move(args)) {
  const ResourceNames& names = ctx.world.resources;
  insufficient_.resize(kMaxResources);
  for (ResourceId r = 0; r < names.size(); ++r) {
    insufficient_[r] = ctx.reasons.intern(fmt::format("Insufficient {}", names.name(r)));
  }
  too_many_pods_ = ctx.reasons.intern("Too many pods");
  for (ResourceId r : args_.ignored_resources)
    ignored_[r] = true;
  for (ResourceId r = 0; r < names.size(); ++r)
    dra_backed_[r] = ctx.world.dra.extended_class(r) != kNoClaim;
  for (const auto& p : args_.shape) {
    // Scale 0..10 custom scores to 0..100 (MaxNodeScore / MaxCustomPriorityScore).
    scaled_shape_.push_back({p.utilization, p.score * (fw::kMaxNodeScore / 10)});
  }
  scores_cpu_memory_only_ = std::all_of(
      args_.resources.begin(), args_.resources.end(),
      [](const ResourceWeight& w) { return w.resource == kCpu || w.resource == kMemory; });
}

fw::Status NodeResourcesFit::filter(const fw::CycleState& /*state*/, const PodSpec& pod,
                                    const NodeInfo& node) const {
  fw::Status st;
  bool unresolvable = false;
  const ResourceVec& alloc = node.allocatable;
  if (node.requested[kPods] + 1 > alloc[kPods]) {
    st.code = fw::Code::kUnschedulable;
    st.add_reason(too_many_pods_);
  }
  // The pod's requests are sorted by resource id: cpu, memory, ephemeral-storage, then the
  // extended resources, the order upstream checks them in.
  for (const auto& [r, want] : pod.requests.items) {
    if (want <= 0 || r == kPods || ignored_[r]) continue;
    // KEP-5004: on a node that does not advertise it, DynamicResources serves a resource a
    // DeviceClass names (upstream noderesources/fit.go with DRAExtendedResource).
    if (dra_backed_[r] && alloc[r] == 0 && node.spec->allocatable[r] == 0) continue;
    if (want > alloc[r] - node.requested[r]) {
      st.code = fw::Code::kUnschedulable;
      st.add_reason(insufficient_[r]);
      // More than the whole node offers: evicting pods cannot help.
      if (want > alloc[r]) unresolvable = true;
    }
  }
  if (unresolvable) st.code = fw::Code::kUnschedulableAndUnresolvable;
  return st;
}

namespace {
// Fills `req` with the pod's requests of the resources the QuickNode copy has; false if it asks
// for another (checked) one.
bool copy_requests(const PodSpec& pod, const std::array<bool, kMaxResources>& ignored,
                   const std::array<bool, kMaxResources>& dra_backed, fw::QuickRequirement& req) {
  bool all = true;
  req.pods = 1;
  for (const auto& [r, want] : pod.requests.items) {
    if (want <= 0 || r == kPods || ignored[r]) continue;
    if (dra_backed[r]) {
      all = false;  // a node may serve it through DRA: filter() decides
    } else if (r == kCpu) {
      req.cpu = want;
    } else if (r == kMemory) {
      req.memory = want;
    } else if (r == req.device_resource) {
      req.device = static_cast<std::int32_t>(std::min<std::int64_t>(want, INT32_MAX));
    } else {
      all = false;  // not in the copy: filter() decides
    }
  }
  return all;
}
}  // namespace

void NodeResourcesFit::quick_necessary(const fw::CycleState& /*state*/, const PodSpec& pod,
                                       fw::QuickRequirement& req) const {
  copy_requests(pod, ignored_, dra_backed_, req);
}

bool NodeResourcesFit::quick_requirement(const fw::CycleState& /*state*/, const PodSpec& pod,
                                         fw::QuickRequirement& req) const {
  return copy_requests(pod, ignored_, dra_backed_, req);
}

namespace {
struct FitScoreState final : fw::StateData {
  std::vector<std::int64_t> pod_requests;  // per args.resources entry
};
}  // namespace

fw::Status NodeResourcesFit::pre_score(fw::CycleState& state, const PodSpec& pod,
                                       std::span<const NodeId> /*nodes*/,
                                       const fw::Snapshot& /*snap*/) {
  auto& s = state.reuse<FitScoreState>(slot());
  s.pod_requests.resize(args_.resources.size());
  for (std::size_t i = 0; i < args_.resources.size(); ++i) {
    s.pod_requests[i] = pod_score_request(pod, args_.resources[i].resource, false);
  }
  return fw::Status::success();
}

template <typename AllocReqOf>
std::int64_t NodeResourcesFit::weighted_score(AllocReqOf alloc_req) const {
  std::int64_t node_score = 0;
  std::int64_t weight_sum = 0;
  for (std::size_t i = 0; i < args_.resources.size(); ++i) {
    const AllocReq ar = alloc_req(i);
    if (ar.allocatable == 0) continue;
    const std::int64_t w = args_.resources[i].weight;
    switch (args_.strategy) {
      case ScoringStrategy::kLeastAllocated:
        // nodeScore = sum_r(leastRequested_r * w_r) / sum_r(w_r)
        node_score += least_requested_score(ar.requested, ar.allocatable) * w;
        weight_sum += w;
        break;
      case ScoringStrategy::kMostAllocated:
        node_score += most_requested_score(ar.requested, ar.allocatable) * w;
        weight_sum += w;
        break;
      case ScoringStrategy::kRequestedToCapacityRatio: {
        // shape(requested * 100 / capacity), or shape(100) if it does not fit; resources
        // scoring 0 do not count towards the weight sum.
        const std::int64_t rs =
            ar.requested > ar.allocatable
                ? broken_linear(scaled_shape_, 100)
                : broken_linear(scaled_shape_, ar.requested * 100 / ar.allocatable);
        if (rs > 0) {
          node_score += rs * w;
          weight_sum += w;
        }
        break;
      }
    }
  }
  return weighted_mean(node_score, weight_sum);
}

std::int64_t NodeResourcesFit::weighted_mean(std::int64_t node_score,
                                             std::int64_t weight_sum) const {
  if (weight_sum == 0) return 0;
  if (args_.strategy == ScoringStrategy::kRequestedToCapacityRatio) {
    return static_cast<std::int64_t>(
        std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
  }
  // The weights usually sum to a power of two (2 by default): a shift, not a division, for a
  // score that is not negative. (The power-of-two test is spelled out: std::has_single_bit is
  // a call to the C runtime's popcount on CPUs without the instruction in the baseline.)
  const auto w = static_cast<std::uint64_t>(weight_sum);
  if (node_score >= 0 && weight_sum > 0 && (w & (w - 1)) == 0) {
    return node_score >> std::countr_zero(w);
  }
  return node_score / weight_sum;
}

std::int64_t NodeResourcesFit::score(const fw::CycleState& state, const PodSpec& pod,
                                     const NodeInfo& node) const {
  const auto* s = state.read<FitScoreState>(slot());
  return weighted_score([&](std::size_t i) {
    const ResourceId r = args_.resources[i].resource;
    const std::int64_t pod_req = s ? s->pod_requests[i] : pod_score_request(pod, r, false);
    return allocatable_and_requested(node, r, pod_req, false);
  });
}

void NodeResourcesFit::score_nodes(const fw::CycleState& state, const PodSpec& pod,
                                   std::span<const NodeId> nodes, const fw::Snapshot& snap,
                                   std::span<std::int64_t> out) const {
  const auto* s = state.read<FitScoreState>(slot());
  if (s == nullptr || !scores_cpu_memory_only_) {
    fw::ScorePlugin::score_nodes(state, pod, nodes, snap, out);
    return;
  }
  // allocatable_and_requested for cpu and memory, from the copy: the node's allocatable, and its
  // non-zero requested plus the pod's.
  // The score is a function of the copy and the pod's requests, so the cache keys on those.
  auto generic = [&](const ScoreNode& c) {
    return weighted_score([&](std::size_t i) {
      const ResourceId r = args_.resources[i].resource;
      return AllocReq{c.allocatable[r], c.nonzero_requested[r] + s->pod_requests[i]};
    });
  };
  if (args_.strategy == ScoringStrategy::kRequestedToCapacityRatio || args_.resources.size() != 2) {
    cache_.score(snap.cluster(), s->pod_requests, nodes, out, generic);
    return;
  }
  // Two resources (cpu and memory, by default) by least or most allocated: weighted_score's
  // sum with the resources, weights and the pod's requests read once, not for every node. A
  // node without one of them takes weighted_score (it skips that resource and its weight).
  const bool least = args_.strategy == ScoringStrategy::kLeastAllocated;
  const ResourceId r0 = args_.resources[0].resource;
  const ResourceId r1 = args_.resources[1].resource;
  const std::int64_t w0 = args_.resources[0].weight;
  const std::int64_t w1 = args_.resources[1].weight;
  const std::int64_t pod0 = s->pod_requests[0];
  const std::int64_t pod1 = s->pod_requests[1];
  cache_.score(snap.cluster(), s->pod_requests, nodes, out, [&](const ScoreNode& c) {
    const std::int64_t a0 = c.allocatable[r0];
    const std::int64_t a1 = c.allocatable[r1];
    if (a0 == 0 || a1 == 0) [[unlikely]] {
      return generic(c);
    }
    const std::int64_t q0 = c.nonzero_requested[r0] + pod0;
    const std::int64_t q1 = c.nonzero_requested[r1] + pod1;
    const std::int64_t sum =
        least ? least_requested_score(q0, a0) * w0 + least_requested_score(q1, a1) * w1
              : most_requested_score(q0, a0) * w0 + most_requested_score(q1, a1) * w1;
    return weighted_mean(sum, w0 + w1);
  });
}

}  // namespace capsim::plugins
