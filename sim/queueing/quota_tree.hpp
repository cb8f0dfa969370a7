// Quota and usage of ClusterQueues and Cohorts, as one tree of one node type (Kueue's
// resourceNode): a ClusterQueue is a leaf, a Cohort an inner node, and every question the
// admission layer asks — how much may this queue still take, how much could it take if nothing
// ran, is it borrowing, what is its dominant resource share — is answered by walking up from a
// node. Amounts are per (flavor, resource) pair ("fr"), densely numbered by the tree. Usage is
// mutated only through add_usage/remove_usage, which keep every ancestor's usage in step, so a
// snapshot is a copy of the tree and a what-if is an add followed by a remove. Single-threaded.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/resources.hpp"

namespace capsim::queueing {

using FrIndex = std::int32_t;
using QuotaNodeId = std::int32_t;
inline constexpr QuotaNodeId kNoQuotaNode = -1;

struct FlavorResource {
  std::int32_t flavor = 0;  // index into QueueConfig::flavors
  ResourceId resource = 0;
  bool operator==(const FlavorResource&) const = default;
};

// An amount per fr (sparse: only the pairs a workload uses).
using FrAmounts = std::vector<std::pair<FrIndex, std::int64_t>>;

// Dominant resource share of a node relative to its parent (Kueue's DRS).
struct Drs {
  double ratio = 0;     // max over resources of borrowed x 1000 / lendable, unweighted
  double weight = 1.0;  // fairSharing.weight
  bool borrowing = false;
  ResourceId dominant = 0;
  // ratio / weight; +infinity for a borrowing node of weight 0.
  double weighted() const;
  // Kueue's status.fairSharing.weightedShare: ceil(ratio / weight), int64 max for weight 0.
  std::int64_t rounded() const;
};
// <0 when `a` should be preferred for admission (lower share), >0 for `b`, 0 when equal.
int compare_drs(const Drs& a, const Drs& b);

class QuotaTree {
 public:
  struct Node {
    std::string name;
    bool cohort = false;
    QuotaNodeId parent = kNoQuotaNode;
    std::vector<QuotaNodeId> children;
    double weight = 1.0;
    // Own quotas per fr (kNoLimit = -1 for an unset limit).
    std::vector<std::int64_t> nominal, borrowing_limit, lending_limit;
    // Nominal plus what the children make available to this subtree (their lendable part).
    std::vector<std::int64_t> subtree_quota;
    // ClusterQueue: its workloads' usage. Cohort: the children's usage above their local quota.
    std::vector<std::int64_t> usage;
  };

  // --- Building (before finalize) ---
  FrIndex intern(FlavorResource fr);
  QuotaNodeId add_node(std::string name, bool cohort);
  void set_parent(QuotaNodeId child, QuotaNodeId parent);
  void set_weight(QuotaNodeId n, double w) { nodes_[static_cast<std::size_t>(n)].weight = w; }
  void set_quota(QuotaNodeId n, FrIndex fr, std::int64_t nominal, std::int64_t borrowing_limit,
                 std::int64_t lending_limit);
  // Sizes every per-fr vector and computes subtree quotas. Precondition: the parent links form a
  // forest (the loader rejects cycles).
  void finalize();

  // --- Lookups ---
  std::size_t fr_count() const { return frs_.size(); }
  FlavorResource fr(FrIndex i) const { return frs_[static_cast<std::size_t>(i)]; }
  FrIndex find(FlavorResource fr) const;  // -1 when the tree has no quota for it
  std::size_t size() const { return nodes_.size(); }
  const Node& node(QuotaNodeId n) const { return nodes_[static_cast<std::size_t>(n)]; }
  bool has_parent(QuotaNodeId n) const { return node(n).parent != kNoQuotaNode; }
  QuotaNodeId root(QuotaNodeId n) const;
  // Distance to the furthest leaf below `n` (0 for a ClusterQueue).
  std::int32_t height(QuotaNodeId n) const;

  // --- Quota arithmetic (Kueue's resource_node.go, formulas beside the code) ---
  std::int64_t nominal(QuotaNodeId n, FrIndex fr) const { return at(node(n).nominal, fr); }
  std::int64_t usage(QuotaNodeId n, FrIndex fr) const { return at(node(n).usage, fr); }
  std::int64_t subtree_quota(QuotaNodeId n, FrIndex fr) const {
    return at(node(n).subtree_quota, fr);
  }
  // Capacity only this subtree sees because of the lending limit: max(0, subtree - lendingLimit).
  std::int64_t local_quota(QuotaNodeId n, FrIndex fr) const;
  std::int64_t local_available(QuotaNodeId n, FrIndex fr) const;
  // How much `n` may still take now, given usage everywhere and the borrowing limits on the path.
  std::int64_t available(QuotaNodeId n, FrIndex fr) const;
  // How much `n` could take if nothing were used anywhere (borrowing limits still apply).
  std::int64_t potential_available(QuotaNodeId n, FrIndex fr) const;
  bool borrowing(QuotaNodeId n, FrIndex fr) const { return usage(n, fr) > subtree_quota(n, fr); }
  bool borrowing_with(QuotaNodeId n, FrIndex fr, std::int64_t val) const {
    return usage(n, fr) + val > subtree_quota(n, fr);
  }
  // Kueue's FindHeightOfLowestSubtreeThatFits: the height of the smallest subtree around the
  // ClusterQueue `cq` whose quota holds `val` more of `fr` (0 = no borrowing), and whether that
  // subtree is smaller than the whole tree (quota could then be reclaimed in the hierarchy).
  std::pair<std::int32_t, bool> lowest_subtree_that_fits(QuotaNodeId cq, FrIndex fr,
                                                         std::int64_t val) const;

  void add_usage(QuotaNodeId n, FrIndex fr, std::int64_t v);
  void remove_usage(QuotaNodeId n, FrIndex fr, std::int64_t v);
  void add_usage(QuotaNodeId n, const FrAmounts& a) {
    for (const auto& [fr, v] : a)
      add_usage(n, fr, v);
  }
  void remove_usage(QuotaNodeId n, const FrAmounts& a) {
    for (const auto& [fr, v] : a)
      remove_usage(n, fr, v);
  }

  // Dominant resource share of `n` with `extra` (may be negative) added to its usage. A root has
  // share 0.
  Drs drs(QuotaNodeId n, const FrAmounts& extra = {}, std::int64_t sign = 1) const;

  // Recounts every cohort's usage from its children and checks that no node uses more than it
  // could ever get (nominal + borrowingLimit, the pool its lenders make available). Throws
  // InvariantError on the first violation.
  void check_invariants() const;

 private:
  static std::int64_t at(const std::vector<std::int64_t>& v, FrIndex fr) {
    return v[static_cast<std::size_t>(fr)];
  }
  Node& mut(QuotaNodeId n) { return nodes_[static_cast<std::size_t>(n)]; }
  void compute_subtree(QuotaNodeId n);

  std::vector<FlavorResource> frs_;
  std::vector<Node> nodes_;
  struct PendingQuota {
    QuotaNodeId node;
    FrIndex fr;
    std::int64_t nominal, borrowing_limit, lending_limit;
  };
  std::vector<PendingQuota> pending_;
  bool finalized_ = false;
};

}  // namespace capsim::queueing
