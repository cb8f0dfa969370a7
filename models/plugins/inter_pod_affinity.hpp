// InterPodAffinity, as kube-scheduler v1.35's plugin. PreFilter counts, per topology pair
// (key, value), the existing pods whose required anti-affinity terms select the incoming pod,
// and the existing pods that match the incoming pod's required affinity (all terms) and
// anti-affinity (each term). Filter: a node must carry every required affinity term's key with
// a matching pod in its domain (unless no pod matches anywhere and the pod matches its own
// terms: the first of a group), no pod the anti-affinity selects in its domain, and no existing
// pod's anti-affinity may select the incoming pod in its domain. PreScore sums, per topology
// pair, the incoming pod's preferred terms over the existing pods, and the existing pods'
// required affinity (hardPodAffinityWeight) and preferred terms over the incoming pod; Score
// sums the node's pairs; NormalizeScore maps min..max onto 0..100. Namespaces have one label,
// kubernetes.io/metadata.name (sim/pod_affinity.hpp). PreFilter and PreScore return Skip when
// neither the pod nor any pod of the World has pod (anti-)affinity, so other runs cost nothing.
#pragma once

#include <unordered_map>

#include "models/plugins/plugin_context.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

struct InterPodAffinityArgs {
  std::int32_t hard_pod_affinity_weight = 1;  // 0..100
  bool ignore_preferred_terms_of_existing_pods = false;
};

class InterPodAffinity final : public fw::Plugin,
                               public fw::PreFilterPlugin,
                               public fw::FilterPlugin,
                               public fw::PreScorePlugin,
                               public fw::ScorePlugin {
 public:
  InterPodAffinity(PluginContext& ctx, InterPodAffinityArgs args);
  std::string_view name() const override { return "InterPodAffinity"; }
  fw::EventMask events_to_register() const override {
    return fw::kEvAssignedPodDeleted | fw::kEvAssignedPodAdded | fw::kEvNodeAdded |
           fw::kEvNodeChanged;
  }
  fw::Status pre_filter(fw::CycleState& state, const PodSpec& pod,
                        const fw::Snapshot& snap) override;
  fw::Status filter(const fw::CycleState& state, const PodSpec& pod,
                    const NodeInfo& node) const override;
  fw::Status pre_score(fw::CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const fw::Snapshot& snap) override;
  std::int64_t score(const fw::CycleState& state, const PodSpec& pod,
                     const NodeInfo& node) const override;
  bool has_normalize() const override { return true; }
  void normalize(const fw::CycleState& state, const PodSpec& pod,
                 std::span<std::int64_t> scores) const override;

  // (topology key, value) packed into one word.
  using PairCounts = std::unordered_map<std::uint64_t, std::int64_t>;
  // PreFilter's three counts (existing pods' anti-affinity selecting the pod, pods matching all
  // its affinity terms, pods matching one of its anti-affinity terms).
  struct Counts {
    PairCounts existing_anti, affinity, anti;
  };

 private:
  // Whether `term`, written by `owner`, selects `candidate` (namespace, then labels).
  bool term_matches(const PodAffinityTerm& term, const PodSpec& owner,
                    const PodSpec& candidate) const;
  bool matches_all(const std::vector<PodAffinityTerm>& terms, const PodSpec& owner,
                   const PodSpec& candidate) const;
  Sym namespace_sym(const PodSpec& pod) const;
  // Adds `by` to `out` for every pod on `node`: PreFilter's loop body, and upstream's
  // updateWithPod (PreFilterExtensions AddPod / RemovePod) when a Filter is given a node that
  // is not the snapshot's own (DefaultPreemption's victims removed, nominated pods added).
  void count_node(Counts& out, const PodSpec& pod, const NodeInfo& node, const fw::Snapshot& snap,
                  std::int64_t by) const;
  // True when some pod of the World (or a Job's template) has pod (anti-)affinity; computed
  // once, as the pods' specs never change.
  bool world_has_affinity() const;

  const World* world_;
  const StringPool* pool_;
  InterPodAffinityArgs args_;
  Sym metadata_name_key_;
  mutable std::int8_t world_affinity_ = -1;  // -1: not computed yet
  mutable std::unordered_map<std::string, Sym> ns_syms_;
  fw::ReasonId affinity_not_match_;
  fw::ReasonId anti_affinity_not_match_;
  fw::ReasonId existing_anti_affinity_not_match_;
};

}  // namespace capsim::plugins
