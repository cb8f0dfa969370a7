#include "models/plugins/compute_domains.hpp"

#include "sim/topology.hpp"

namespace capsim::plugins {

namespace {

struct DomainState final : fw::StateData {
  const fw::Snapshot* snap = nullptr;
  Sym clique = kNoSym;  // the NVLink domain the ComputeDomain's running pods are in, if any
};

}  // namespace

ComputeDomains::ComputeDomains(PluginContext& ctx, ComputeDomainsArgs args)
    : args_(args),
      clique_key_(ctx.world.strings.find(kNvlinkLabel)),
      no_clique_(ctx.reasons.intern(
          "node(s) were in no NVLink domain (no nvidia.com/gpu.clique label: no IMEX channels)")),
      other_domain_(ctx.reasons.intern("node(s) were in another ComputeDomain")),
      outside_domain_(
          ctx.reasons.intern("node(s) were outside the ComputeDomain's NVLink domain")) {}

fw::Status ComputeDomains::pre_filter(fw::CycleState& state, const PodSpec& pod,
                                      const fw::Snapshot& snap) {
  if (pod.compute_domain < 0) return fw::Status::skip();
  auto& s = state.reuse<DomainState>(slot());
  s.snap = &snap;
  s.clique = kNoSym;
  if (!args_.one_domain || clique_key_ == kNoSym) return fw::Status::success();
  for (const NodeInfo& node : snap.nodes()) {
    for (PodId p : node.pods) {
      if (snap.pod(p).compute_domain == pod.compute_domain) {
        s.clique = node.spec->labels.get(clique_key_);
        return fw::Status::success();
      }
    }
  }
  return fw::Status::success();
}

fw::Status ComputeDomains::filter(const fw::CycleState& state, const PodSpec& pod,
                                  const NodeInfo& node) const {
  const auto* s = state.read<DomainState>(slot());
  const Sym clique = clique_key_ == kNoSym ? kNoSym : node.spec->labels.get(clique_key_);
  if (clique == kNoSym) return fw::Status::unresolvable(no_clique_);
  if (s->clique != kNoSym && clique != s->clique) return fw::Status::unresolvable(outside_domain_);
  for (PodId p : node.pods) {
    const std::int32_t other = s->snap->pod(p).compute_domain;
    if (other >= 0 && other != pod.compute_domain) return fw::Status::unschedulable(other_domain_);
  }
  return fw::Status::success();
}

}  // namespace capsim::plugins
