// Kueue's Topology Aware Scheduling (TAS) placement for one PodSet in one TAS ResourceFlavor:
// given the flavor's Topology (node label keys, top to bottom) and the free capacity of the nodes
// the flavor selects, where do `count` pods go? The answer is a count of pods per domain of the
// lowest level (a node when the lowest level is kubernetes.io/hostname), or why they do not fit.
//
// The algorithm follows Kueue's documented behaviour (site/content/en/docs/concepts/
// topology_aware_scheduling.md; pkg/cache/scheduler/tas_flavor_snapshot.go, written anew here):
//   1. per lowest-level domain, how many pods fit in its free capacity (each resource's free
//      amount over the per-pod request, the pod itself counted as one `pods`); a parent's count is
//      the sum of its children's; slices (podset-slice-size pods that must share a domain of the
//      slice level) are counted at the slice level and summed above it;
//   2. at the requested level, domains sorted by free slices (descending; BestFit) or ascending
//      (LeastFreeCapacity, Kueue's default for unconstrained since TASProfileMixed went beta):
//      BestFit takes the domain that fits with the least free capacity; `required` fails if no
//      domain fits; `preferred` tries the next level up, and at the top level spreads greedily
//      over several domains; `unconstrained` asks at the lowest level and spreads greedily,
//      least free first;
//   3. down the tree, level by level: above the slice level the chosen domains' children are
//      pooled and filled greedily (BestFit on the last one), at and below it each domain's pods
//      are split among its own children.
// Ties are broken by fewer free pods, then by the domains' label values (lexicographically).
// Not modelled: leader/worker PodSet groups, balanced placement, multi-layer slices, preferred
// node affinity, node replacement. Pure: no clock, no state beyond the snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/resources.hpp"
#include "sim/topology.hpp"

namespace capsim::queueing {

// Pods placed in one lowest-level domain: its label values, one per level.
struct TopologyDomainCount {
  std::vector<std::string> values;
  std::int32_t count = 0;
};

// Kueue's TopologyAssignment: levels (the Topology's label keys) and pods per lowest domain.
struct TopologyAssignment {
  std::vector<std::string> levels;
  std::vector<TopologyDomainCount> domains;  // sorted by values
  TopologyMode mode = TopologyMode::kNone;
  std::int32_t level = -1;  // the requested level (required/preferred), for the invariants
  bool empty() const { return domains.empty(); }
  std::int32_t pods() const;
};

// What the PodSet asks: its mode and levels resolved to indices of the Topology.
struct TasRequest {
  TopologyMode mode = TopologyMode::kUnconstrained;
  std::int32_t level = -1;        // required/preferred level; the lowest for unconstrained
  std::int32_t slice_level = -1;  // -1: the lowest level
  std::int32_t slice_size = 1;
  std::int32_t count = 1;  // pods
  ResourceVec per_pod;     // one pod's requests, with kPods = 1
};

struct TasResult {
  TopologyAssignment assignment;  // empty when it does not fit
  std::string failure;            // Kueue's message when it does not fit
};

class TopologySnapshot {
 public:
  TopologySnapshot(std::string topology_name, std::vector<std::string> levels);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& levels() const { return levels_; }
  std::int32_t level_index(const std::string& label) const;

  // A node the flavor selects, with one label value per level and what it has free. Nodes with
  // the same values (a lowest level above the host) are one domain: their capacity adds up.
  void add_node(std::vector<std::string> values, const ResourceVec& free);
  // Takes `amount` off the lowest-level domain with these values (pods pinned there, not yet
  // bound). Unknown values are ignored.
  void reserve(const std::vector<std::string>& values, const ResourceVec& amount);

  TasResult assign(const TasRequest& request);
  // Free nvidia.com/gpu over the nodes added, less reservations.
  std::int64_t free_gpus() const { return total_free_gpus_; }

  // Free GPUs (nvidia.com/gpu) of every level's domains add up to the total of the nodes added,
  // and every parent's pod capacity is its children's sum (after an assign). Throws
  // InvariantError otherwise.
  void check_invariants() const;

 private:
  struct Domain {
    std::int32_t level = 0;
    std::vector<std::string> values;  // levels 0..level
    std::int32_t parent = -1;
    std::vector<std::int32_t> children;
    ResourceVec free;  // leaves only
    std::int64_t free_gpus = 0;
    std::int32_t pods = 0;    // pods that fit
    std::int32_t slices = 0;  // slices that fit (levels at or above the slice level)
    std::int32_t assigned = 0;
  };
  void build();
  std::vector<std::int32_t> sorted(std::vector<std::int32_t> ids, bool least_free) const;
  std::int32_t best_fit(const std::vector<std::int32_t>& ids, std::size_t from, std::int32_t need,
                        bool slices) const;
  std::vector<std::int32_t> distribute(const std::vector<std::int32_t>& ids, std::int32_t units,
                                       std::int32_t unit_size, bool slices, bool best_fit);
  std::string not_fit(std::int32_t fit, std::int32_t total, std::int32_t slice_size) const;

  std::string name_;
  std::vector<std::string> levels_;
  std::vector<Domain> domains_;
  std::vector<std::vector<std::int32_t>> by_level_;
  std::map<std::vector<std::string>, std::int32_t> leaf_of_;
  bool built_ = false;
  std::int64_t total_free_gpus_ = 0;
};

}  // namespace capsim::queueing
