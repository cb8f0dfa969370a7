#include "models/plugins/balanced_allocation.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace capsim::plugins {

std::int64_t balanced_resource_score(std::span<const std::int64_t> requested,
                                     std::span<const std::int64_t> allocatable) {
  double fractions[kMaxResources];
  std::size_t n = 0;
  double total = 0;
  for (std::size_t i = 0; i < requested.size() && n < kMaxResources; ++i) {
    if (allocatable[i] == 0) continue;
    double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    if (f > 1) f = 1;
    total += f;
    fractions[n++] = f;
  }
  double std_dev = 0;
  if (n == 2) {
    std_dev = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (n > 2) {
    const double mean = total / static_cast<double>(n);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      sum += (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / static_cast<double>(n));
  }
  // (1 - std) * MaxNodeScore, truncated like Go's int64() conversion.
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(fw::kMaxNodeScore));
}

namespace {
// balanced_resource_score for two resources the node has (both allocatable above 0), inline
// so that the scoring loop overlaps one node's divisions with the next's: the same operations
// in the same order, so the same score.
inline std::int64_t balanced_pair(std::int64_t requested0, std::int64_t allocatable0,
                                  std::int64_t requested1, std::int64_t allocatable1) {
  double f0 = static_cast<double>(requested0) / static_cast<double>(allocatable0);
  if (f0 > 1) f0 = 1;
  double f1 = static_cast<double>(requested1) / static_cast<double>(allocatable1);
  if (f1 > 1) f1 = 1;
  const double std_dev = std::abs((f0 - f1) / 2);
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(fw::kMaxNodeScore));
}

struct BalancedState final : fw::StateData {
  std::vector<std::int64_t> pod_requests;
  std::vector<std::int64_t> requested, allocatable;  // scratch for score()
};
}  // namespace

fw::Status BalancedAllocation::pre_score(fw::CycleState& state, const PodSpec& pod,
                                         std::span<const NodeId> /*nodes*/,
                                         const fw::Snapshot& /*snap*/) {
  auto& s = state.reuse<BalancedState>(slot());
  s.pod_requests.resize(resources_.size());
  bool any = false;
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    s.pod_requests[i] = pod_score_request(pod, resources_[i].resource, true);
    any = any || s.pod_requests[i] != 0;
  }
  // Best-effort pods are not scored, so that they do not all pile onto one node.
  if (!any) return fw::Status::skip();
  s.requested.resize(resources_.size());
  s.allocatable.resize(resources_.size());
  return fw::Status::success();
}

std::int64_t BalancedAllocation::score(const fw::CycleState& state, const PodSpec& /*pod*/,
                                       const NodeInfo& node) const {
  auto* s = state.read<BalancedState>(slot());
  if (s == nullptr) return 0;
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    const AllocReq ar =
        allocatable_and_requested(node, resources_[i].resource, s->pod_requests[i], true);
    s->allocatable[i] = ar.allocatable;
    s->requested[i] = ar.requested;
  }
  return balanced_resource_score(s->requested, s->allocatable);
}

void BalancedAllocation::score_nodes(const fw::CycleState& state, const PodSpec& pod,
                                     std::span<const NodeId> nodes, const fw::Snapshot& snap,
                                     std::span<std::int64_t> out) const {
  auto* s = state.read<BalancedState>(slot());
  if (s == nullptr || !balances_cpu_memory_only_) {
    fw::ScorePlugin::score_nodes(state, pod, nodes, snap, out);
    return;
  }
  // allocatable_and_requested for cpu and memory: the node's allocatable, and its requested
  // plus the pod's. The score is a function of the copy and the pod's requests, so the cache
  // keys on those.
  const std::size_t n = resources_.size();
  if (n == 2) {
    const ResourceId r0 = resources_[0].resource;
    const ResourceId r1 = resources_[1].resource;
    const std::int64_t pod0 = s->pod_requests[0];
    const std::int64_t pod1 = s->pod_requests[1];
    cache_.score(snap.cluster(), s->pod_requests, nodes, out, [&](const ScoreNode& c) {
      const std::int64_t a0 = c.allocatable[r0];
      const std::int64_t a1 = c.allocatable[r1];
      if (a0 == 0 || a1 == 0) [[unlikely]] {
        const std::array<std::int64_t, 2> requested{c.requested[r0] + pod0, c.requested[r1] + pod1};
        const std::array<std::int64_t, 2> allocatable{a0, a1};
        return balanced_resource_score(requested, allocatable);
      }
      return balanced_pair(c.requested[r0] + pod0, a0, c.requested[r1] + pod1, a1);
    });
    return;
  }
  cache_.score(snap.cluster(), s->pod_requests, nodes, out, [&](const ScoreNode& c) {
    std::array<std::int64_t, 2> requested{}, allocatable{};
    for (std::size_t i = 0; i < n; ++i) {
      const ResourceId r = resources_[i].resource;
      allocatable[i] = c.allocatable[r];
      requested[i] = c.requested[r] + s->pod_requests[i];
    }
    return balanced_resource_score(std::span(requested.data(), n),
                                   std::span(allocatable.data(), n));
  });
}

}  // namespace capsim::plugins
