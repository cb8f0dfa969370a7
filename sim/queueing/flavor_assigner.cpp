#include "sim/queueing/flavor_assigner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/check.hpp"

namespace capsim::queueing {

namespace {

// Kueue's granular mode, worst to best: noFit < noPreemptionCandidates < preempt (within the
// ClusterQueue) < reclaim (from the cohort) < fit; plus the borrowing level.
enum class Pm : std::uint8_t { kNoFit, kNoCandidates, kPreempt, kReclaim, kFit };
struct Granular {
  Pm pm = Pm::kFit;
  std::int32_t borrow = 0;
};
Granular worst() {
  return {Pm::kNoFit, std::numeric_limits<std::int32_t>::max()};
}

// Whether `a` is a better outcome than `b` under the ClusterQueue's fungibility preference.
bool preferred(const Granular& a, const Granular& b, const ClusterQueueSpec& cq) {
  if (a.pm == Pm::kNoFit) return false;
  if (b.pm == Pm::kNoFit) return true;
  const bool a_nc = a.pm == Pm::kNoCandidates, b_nc = b.pm == Pm::kNoCandidates;
  if (a_nc != b_nc) return !a_nc;
  if (cq.preference == FungibilityPreference::kPreemptionOverBorrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.pm > b.pm;
  }
  // BorrowingOverPreemption (the default): the better preemption mode, then less borrowing.
  if (a.pm != b.pm) return a.pm > b.pm;
  return a.borrow < b.borrow;
}

bool try_next_flavor(const Granular& m, const ClusterQueueSpec& cq) {
  if (m.pm == Pm::kNoFit || m.pm == Pm::kNoCandidates) return true;
  if ((m.pm == Pm::kPreempt || m.pm == Pm::kReclaim) &&
      cq.when_can_preempt == FungibilityPolicy::kTryNextFlavor) {
    return true;
  }
  return m.borrow > 0 && cq.when_can_borrow == FungibilityPolicy::kTryNextFlavor;
}

FitMode to_mode(Pm p) {
  switch (p) {
    case Pm::kNoFit:
      return FitMode::kNoFit;
    case Pm::kFit:
      return FitMode::kFit;
    default:
      return FitMode::kPreempt;
  }
}

struct ResourceFit {
  Pm pm = Pm::kNoFit;
  std::int32_t borrow = 0;
  std::string reason;
};

// How `val` of `fr` could be given to ClusterQueue `cq` (Kueue's fitsResourceQuota).
ResourceFit fits_resource_quota(KueueState& st, Preemptor& preemptor, const Workload& w,
                                std::int32_t cq, FrIndex fr, std::int64_t val) {
  const QuotaTree& tree = st.tree();
  const QuotaNodeId node = st.cq(cq).node;
  const ResourceId r = tree.fr(fr).resource;
  const std::int64_t available = tree.available(node, fr);
  const std::int64_t max_capacity = tree.potential_available(node, fr);
  if (val > max_capacity) {
    return {Pm::kNoFit, 0,
            fmt::format("insufficient quota for {}, request ({}) > maximum capacity ({})",
                        st.fr_name(fr), st.amount(r, val), st.amount(r, max_capacity))};
  }
  const auto [borrow, may_reclaim] = tree.lowest_subtree_that_fits(node, fr, val);
  if (val <= available) return {Pm::kFit, borrow, {}};
  std::string reason = fmt::format("insufficient unused quota for {}, {} more needed",
                                   st.fr_name(fr), st.amount(r, val - available));
  const ClusterQueueSpec& spec = *st.cq(cq).spec;
  const bool preempt_while_borrowing =
      spec.borrow_within_cohort != PreemptPolicy::kNever ||
      (st.config().settings.fair_sharing && spec.reclaim_within_cohort != PreemptPolicy::kNever);
  if (tree.nominal(node, fr) >= val || may_reclaim || preempt_while_borrowing) {
    const auto [possibility, borrow_after] = preemptor.simulate(w, cq, fr, val);
    Pm pm = Pm::kNoCandidates;
    if (possibility == PreemptionPossibility::kPreempt) pm = Pm::kPreempt;
    if (possibility == PreemptionPossibility::kReclaim) pm = Pm::kReclaim;
    return {pm, borrow_after, std::move(reason)};
  }
  return {Pm::kNoFit, borrow, std::move(reason)};
}

std::string taint_text(const StringPool& pool, const Taint& t) {
  const std::string value = t.value == kNoSym ? "" : pool.str(t.value);
  return fmt::format("{{{}: {}}}", pool.str(t.key), value);
}

// Kueue's checkPodSetAndFlavorMatchForTAS: a PodSet that asks for TAS takes only flavors with a
// Topology that has the levels it names; one that does not ask takes no TAS flavor, unless every
// flavor of the ClusterQueue is one (then TAS is implied: unconstrained).
std::string tas_mismatch(const KueueState& st, const Workload& w, std::int32_t cq, std::int32_t f) {
  const ResourceFlavorSpec& flavor = st.flavor(f);
  const TopologyRequest& tr = *st.world().pods[w.pods.front()].topology;
  if (!tr.explicit_request() && flavor.topology < 0) return {};
  if (!tr.explicit_request()) {
    for (const ResourceGroupSpec& g : st.cq(cq).spec->resource_groups) {
      for (const FlavorQuotasSpec& fq : g.flavors) {
        const std::int32_t other = st.find_flavor(fq.flavor);
        if (other < 0 || st.flavor(other).topology < 0) {
          return fmt::format("Flavor \"{}\" supports only TopologyAwareScheduling", flavor.name);
        }
      }
    }
    return {};
  }
  if (flavor.topology < 0) {
    return fmt::format("Flavor \"{}\" does not support TopologyAwareScheduling", flavor.name);
  }
  const TopologySpec& topo = st.config().topologies[static_cast<std::size_t>(flavor.topology)];
  auto has = [&](const std::string& level) {
    return std::find(topo.levels.begin(), topo.levels.end(), level) != topo.levels.end();
  };
  const bool named = tr.mode == TopologyMode::kRequired || tr.mode == TopologyMode::kPreferred;
  if ((named && !has(tr.level)) || (!tr.slice_level.empty() && !has(tr.slice_level))) {
    return fmt::format("Flavor \"{}\" does not contain the requested level", flavor.name);
  }
  return {};
}

}  // namespace

namespace {

__extension__ typedef __int128 i128;  // exact products of factors and amounts

bool excluded_resource(const KueueSettings& s, const ResourceNames& names, ResourceId r) {
  for (const std::string& prefix : s.exclude_resource_prefixes) {
    if (names.name(r).rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Quantity.Value() of a request held in capsim's units: cpu is in millicores.
std::int64_t quantity_value(ResourceId r, std::int64_t amount) {
  return r == kCpu ? (amount + 999) / 1000 : amount;
}

}  // namespace

ResourceList charged_pod_requests(const KueueSettings& s, const ResourceNames& names,
                                  const ResourceList& pod) {
  ResourceList in;
  for (const auto& [r, v] : pod.items) {
    if (!excluded_resource(s, names, r)) in.set(r, v);
  }
  auto rule_for = [&](ResourceId r) -> const ResourceTransformationSpec* {
    for (const ResourceTransformationSpec& t : s.transformations) {
      if (t.input == r) return &t;
    }
    return nullptr;
  };
  bool match = false;
  for (const auto& [r, v] : in.items)
    match = match || rule_for(r) != nullptr;
  if (!match) return in;
  // Outputs are summed exactly (as factor x v at scale 10^k) and rounded up once, at the end.
  std::vector<std::pair<ResourceId, i128>> exact;  // amount x 10^kExact
  constexpr int kExact = 9;
  auto add_exact = [&](ResourceId r, i128 amount) {
    for (auto& [id, a] : exact) {
      if (id == r) {
        a += amount;
        return;
      }
    }
    exact.emplace_back(r, amount);
  };
  i128 pow10[kExact + 1];
  pow10[0] = 1;
  for (int i = 1; i <= kExact; ++i)
    pow10[i] = pow10[i - 1] * 10;
  for (const auto& [r, amount] : in.items) {
    const ResourceTransformationSpec* t = rule_for(r);
    if (t == nullptr) {
      add_exact(r, static_cast<i128>(amount) * pow10[kExact]);
      continue;
    }
    i128 v = quantity_value(r, amount);
    if (t->multiply_by != kNoResource) {
      const std::int64_t m = in.get(t->multiply_by);
      if (m != 0) v *= quantity_value(t->multiply_by, m);
    }
    for (const ResourceTransformationSpec::Output& o : t->outputs) {
      // factor / 10^scale units per unit of input: v x factor x 10^(kExact - scale).
      add_exact(o.resource, v * o.factor * pow10[kExact - o.scale]);
    }
    if (!t->replace) add_exact(r, static_cast<i128>(amount) * pow10[kExact]);
  }
  ResourceList out;
  for (const auto& [r, a] : exact) {
    const i128 units = (a + pow10[kExact] - 1) / pow10[kExact];  // rounded up
    CAPSIM_CHECK(units <= std::numeric_limits<std::int64_t>::max(),
                 fmt::format("transformed request for {} overflows", names.name(r)));
    if (units != 0) out.set(r, static_cast<std::int64_t>(units));
  }
  return out;
}

ResourceList dra_charged_requests(const KueueSettings& s, const World& world, const PodSpec& pod) {
  ResourceList out;
  if (s.device_class_mappings.empty()) return out;
  auto mapped = [&s](const std::string& device_class) {
    for (const DeviceClassMappingSpec& m : s.device_class_mappings) {
      for (const std::string& c : m.device_classes) {
        if (c == device_class) return m.resource;
      }
    }
    return kNoResource;
  };
  for (const PodClaimRef& ref : pod.claims) {
    if (ref.shared() || ref.claim >= world.dra.claims.size()) continue;
    for (const dra::Request& req : world.dra.claims[ref.claim].spec.requests) {
      if (req.first_available || req.subrequests.empty()) continue;
      const dra::SubRequest& sub = req.subrequests.front();
      if (sub.admin_access || sub.mode != dra::AllocationMode::kExactCount) continue;
      const ResourceId r = mapped(sub.device_class);
      if (r != kNoResource) out.set(r, out.get(r) + sub.count);
    }
  }
  return out;
}

ResourceList quota_requests(const KueueState& st, const Workload& w, std::int32_t cq) {
  ResourceList out;
  const KueueSettings& s = st.config().settings;
  if (!s.transformations.empty()) {
    // complete_workload summed charged_pod_requests (exclusion included) over the pods.
    out = w.requests;
  } else {
    for (const auto& [r, v] : w.requests.items) {
      if (!excluded_resource(s, st.world().resources, r)) out.set(r, v);
    }
  }
  if (st.group_of(cq, kPods) >= 0) out.set(kPods, w.count);
  return out;
}

std::string flavor_mismatch(const KueueState& st, const Workload& w, std::int32_t f) {
  const World& world = st.world();
  const StringPool& pool = world.strings;
  const ResourceFlavorSpec& flavor = st.flavor(f);
  const PodSpec& pod = world.pods[w.pods.front()];
  // 1. Taints on the flavor's nodes (NoSchedule, NoExecute) must be tolerated by the pod or by
  //    the tolerations the flavor adds.
  for (const Taint& t : flavor.node_taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    if (tolerates_any(pod.tolerations, t) || tolerates_any(flavor.tolerations, t)) continue;
    return fmt::format("untolerated taint {} in flavor {}", taint_text(pool, t), flavor.name);
  }
  // 2. nodeSelector and required node affinity, restricted to the keys of the flavor's labels.
  const std::string no_match = fmt::format("flavor {} doesn't match node affinity", flavor.name);
  auto flavor_has = [&](Sym key) { return flavor.node_labels.has(key); };
  for (const auto& [k, v] : pod.node_selector.items()) {
    if (flavor_has(k) && flavor.node_labels.get(k) != v) return no_match;
  }
  if (pod.affinity->required) {
    std::vector<NodeSelectorTerm> terms;
    bool unconstrained = false;
    for (const NodeSelectorTerm& term : *pod.affinity->required) {
      NodeSelectorTerm kept;
      for (const NodeSelectorRequirement& req : term.match_expressions) {
        if (flavor_has(req.key)) kept.match_expressions.push_back(req);
      }
      // A term left empty matches any flavor (terms are ORed).
      if (kept.match_expressions.empty()) {
        unconstrained = true;
        break;
      }
      terms.push_back(std::move(kept));
    }
    if (!unconstrained && !terms.empty()) {
      const NodeView view{&flavor.node_labels, kNoSym};
      if (!matches_any_term(terms, view, pool)) return no_match;
    }
  }
  // 3. capsim's GPU-model constraint (a trace's gpu_model column) against the flavor's model.
  if (!pod.gpu_models.empty()) {
    const Sym key = pool.find("capsim.io/gpu-model");
    const Sym model = key == kNoSym ? kNoSym : flavor.node_labels.get(key);
    if (model != kNoSym) {
      bool allowed = false;
      for (GpuModelId id : pod.gpu_models)
        allowed = allowed || world.gpu_models[id].name == pool.str(model);
      if (!allowed) {
        return fmt::format("flavor {} has GPU model {}, which the pods do not allow", flavor.name,
                           pool.str(model));
      }
    }
  }
  return {};
}

FlavorAssignment assign_flavors(KueueState& st, Preemptor& preemptor, const Workload& w,
                                std::int32_t cq) {
  const ClusterQueueSpec& spec = *st.cq(cq).spec;
  FlavorAssignment out;
  out.flavors.assign(spec.resource_groups.size(), -1);
  const ResourceList reqs = quota_requests(st, w, cq);
  std::vector<std::string> reasons;
  auto fail = [&](std::vector<std::string> why) {
    std::sort(why.begin(), why.end());
    why.erase(std::unique(why.begin(), why.end()), why.end());
    out.mode = FitMode::kNoFit;
    out.usage.clear();
    out.preempt_frs.clear();
    out.message = fmt::format("couldn't assign flavors to pod set main: {}", fmt::join(why, ", "));
    return out;
  };
  Granular overall;
  std::vector<bool> group_done(spec.resource_groups.size(), false);
  for (const auto& [r, qty] : reqs.items) {
    if (qty == 0) continue;
    const std::int32_t g = st.group_of(cq, r);
    if (g < 0) {
      if (st.config().settings.ignore_undeclared_resources) continue;
      reasons.push_back(
          fmt::format("resource {} unavailable in ClusterQueue", st.world().resources.name(r)));
      return fail(reasons);
    }
    if (group_done[static_cast<std::size_t>(g)]) continue;
    group_done[static_cast<std::size_t>(g)] = true;
    const ResourceGroupSpec& group = spec.resource_groups[static_cast<std::size_t>(g)];
    // The group's requested resources, in coveredResources order.
    std::vector<std::pair<std::size_t, std::int64_t>> group_reqs;  // (position, amount)
    for (std::size_t pos = 0; pos < group.covered.size(); ++pos) {
      const std::int64_t v = reqs.get(group.covered[pos]);
      if (v > 0) group_reqs.emplace_back(pos, v);
    }
    // Try the flavors in order.
    std::int32_t best = -1;
    Granular best_mode = worst();
    std::vector<std::tuple<FrIndex, std::int64_t, Pm>> best_items;
    std::vector<std::string> group_reasons;
    for (std::size_t fi = 0; fi < group.flavors.size(); ++fi) {
      const std::int32_t f = st.find_flavor(group.flavors[fi].flavor);
      if (std::string mm = flavor_mismatch(st, w, f); !mm.empty()) {
        group_reasons.push_back(std::move(mm));
        continue;
      }
      if (std::string tm = tas_mismatch(st, w, cq, f); !tm.empty()) {
        group_reasons.push_back(std::move(tm));
        continue;
      }
      Granular mode;  // the worst over this flavor's resources
      std::vector<std::tuple<FrIndex, std::int64_t, Pm>> items;
      for (const auto& [pos, v] : group_reqs) {
        const FrIndex fr = st.cq(cq).group_frs[static_cast<std::size_t>(g)][fi][pos];
        ResourceFit fit = fits_resource_quota(st, preemptor, w, cq, fr, v);
        if (!fit.reason.empty()) group_reasons.push_back(std::move(fit.reason));
        const Granular gm{fit.pm, fit.borrow};
        if (preferred(mode, gm, spec)) mode = gm;
        if (mode.pm == Pm::kNoFit) break;
        items.emplace_back(fr, v, fit.pm);
      }
      if (!try_next_flavor(mode, spec)) {
        best = f;
        best_mode = mode;
        best_items = std::move(items);
        break;
      }
      if (preferred(mode, best_mode, spec)) {
        best = f;
        best_mode = mode;
        best_items = std::move(items);
      }
    }
    if (best < 0) {
      reasons.insert(reasons.end(), group_reasons.begin(), group_reasons.end());
      return fail(reasons);
    }
    out.flavors[static_cast<std::size_t>(g)] = best;
    out.borrowing = std::max(out.borrowing, best_mode.borrow);
    for (const auto& [fr, v, pm] : best_items) {
      out.usage.emplace_back(fr, v);
      if (to_mode(pm) == FitMode::kPreempt) out.preempt_frs.push_back(fr);
    }
    if (preferred(overall, best_mode, spec)) overall = best_mode;
    if (best_mode.pm != Pm::kFit) {
      reasons.insert(reasons.end(), group_reasons.begin(), group_reasons.end());
    }
  }
  out.mode = to_mode(overall.pm);
  if (out.mode != FitMode::kFit) {
    std::sort(reasons.begin(), reasons.end());
    reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
    out.message =
        fmt::format("couldn't assign flavors to pod set main: {}", fmt::join(reasons, ", "));
  }
  return out;
}

}  // namespace capsim::queueing
