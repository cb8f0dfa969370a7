#include "sim/queueing/quota_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/check.hpp"
#include "sim/queueing/queue_config.hpp"

namespace capsim::queueing {

double Drs::weighted() const {
  if (weight == 0 && borrowing) return std::numeric_limits<double>::infinity();
  if (ratio == 0) return 0;
  return ratio / weight;
}

std::int64_t Drs::rounded() const {
  if (weight == 0 && borrowing) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::ceil(weighted()));
}

int compare_drs(const Drs& a, const Drs& b) {
  const bool a_inf = a.weight == 0 && a.borrowing;
  const bool b_inf = b.weight == 0 && b.borrowing;
  auto cmp = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a_inf && b_inf) return cmp(a.ratio, b.ratio);
  if (a_inf) return 1;
  if (b_inf) return -1;
  return cmp(a.weighted(), b.weighted());
}

FrIndex QuotaTree::intern(FlavorResource fr) {
  CAPSIM_CHECK(!finalized_, "a flavor/resource pair was added to a finalized quota tree");
  const FrIndex found = find(fr);
  if (found >= 0) return found;
  frs_.push_back(fr);
  return static_cast<FrIndex>(frs_.size() - 1);
}

FrIndex QuotaTree::find(FlavorResource fr) const {
  for (std::size_t i = 0; i < frs_.size(); ++i) {
    if (frs_[i] == fr) return static_cast<FrIndex>(i);
  }
  return -1;
}

QuotaNodeId QuotaTree::add_node(std::string name, bool cohort) {
  CAPSIM_CHECK(!finalized_, "a node was added to a finalized quota tree");
  Node n;
  n.name = std::move(name);
  n.cohort = cohort;
  nodes_.push_back(std::move(n));
  return static_cast<QuotaNodeId>(nodes_.size() - 1);
}

void QuotaTree::set_parent(QuotaNodeId child, QuotaNodeId parent) {
  CAPSIM_CHECK(node(parent).cohort, "only a cohort can be a parent in the quota tree");
  CAPSIM_CHECK(node(child).parent == kNoQuotaNode, "a quota node got two parents");
  mut(child).parent = parent;
  mut(parent).children.push_back(child);
}

void QuotaTree::set_quota(QuotaNodeId n, FrIndex fr, std::int64_t nominal,
                          std::int64_t borrowing_limit, std::int64_t lending_limit) {
  pending_.push_back({n, fr, nominal, borrowing_limit, lending_limit});
}

void QuotaTree::finalize() {
  const std::size_t k = frs_.size();
  for (Node& n : nodes_) {
    n.nominal.assign(k, 0);
    n.borrowing_limit.assign(k, kNoLimit);
    n.lending_limit.assign(k, kNoLimit);
    n.subtree_quota.assign(k, 0);
    n.usage.assign(k, 0);
  }
  for (const PendingQuota& q : pending_) {
    Node& n = mut(q.node);
    const auto i = static_cast<std::size_t>(q.fr);
    n.nominal[i] = q.nominal;
    n.borrowing_limit[i] = q.borrowing_limit;
    n.lending_limit[i] = q.lending_limit;
  }
  pending_.clear();
  finalized_ = true;
  for (QuotaNodeId n = 0; n < static_cast<QuotaNodeId>(nodes_.size()); ++n) {
    if (!has_parent(n)) compute_subtree(n);
  }
}

void QuotaTree::compute_subtree(QuotaNodeId id) {
  // ClusterQueue: subtree = nominal. Cohort: own nominal + sum over children of
  // (child subtree - child local quota), i.e. what the children lend to it.
  Node& n = mut(id);
  n.subtree_quota = n.nominal;
  for (QuotaNodeId c : n.children) {
    compute_subtree(c);
    for (FrIndex fr = 0; fr < static_cast<FrIndex>(frs_.size()); ++fr) {
      mut(id).subtree_quota[static_cast<std::size_t>(fr)] +=
          subtree_quota(c, fr) - local_quota(c, fr);
    }
  }
}

QuotaNodeId QuotaTree::root(QuotaNodeId n) const {
  while (has_parent(n))
    n = node(n).parent;
  return n;
}

std::int32_t QuotaTree::height(QuotaNodeId n) const {
  const Node& nd = node(n);
  if (!nd.cohort) return 0;
  std::int32_t h = nd.children.empty() ? 0 : 1;
  for (QuotaNodeId c : nd.children) {
    if (node(c).cohort) h = std::max(h, height(c) + 1);
  }
  return h;
}

std::int64_t QuotaTree::local_quota(QuotaNodeId n, FrIndex fr) const {
  // localQuota = max(0, subtreeQuota - lendingLimit) when a lending limit is set, else 0.
  const std::int64_t ll = at(node(n).lending_limit, fr);
  if (ll == kNoLimit) return 0;
  return std::max<std::int64_t>(0, subtree_quota(n, fr) - ll);
}

std::int64_t QuotaTree::local_available(QuotaNodeId n, FrIndex fr) const {
  return std::max<std::int64_t>(0, local_quota(n, fr) - usage(n, fr));
}

std::int64_t QuotaTree::available(QuotaNodeId n, FrIndex fr) const {
  // Root: subtreeQuota - usage. Otherwise localAvailable + what the parent can give, capped by
  // the borrowing limit: storedInParent - usedInParent + borrowingLimit, where
  // storedInParent = subtreeQuota - localQuota and usedInParent = max(0, usage - localQuota).
  if (!has_parent(n)) return subtree_quota(n, fr) - usage(n, fr);
  std::int64_t parent_available = available(node(n).parent, fr);
  const std::int64_t bl = at(node(n).borrowing_limit, fr);
  if (bl != kNoLimit) {
    const std::int64_t stored_in_parent = subtree_quota(n, fr) - local_quota(n, fr);
    const std::int64_t used_in_parent =
        std::max<std::int64_t>(0, usage(n, fr) - local_quota(n, fr));
    parent_available = std::min(stored_in_parent - used_in_parent + bl, parent_available);
  }
  return local_available(n, fr) + parent_available;
}

std::int64_t QuotaTree::potential_available(QuotaNodeId n, FrIndex fr) const {
  // Root: subtreeQuota. Otherwise localQuota + potential of the parent, at most
  // subtreeQuota + borrowingLimit.
  if (!has_parent(n)) return subtree_quota(n, fr);
  std::int64_t avail = local_quota(n, fr) + potential_available(node(n).parent, fr);
  const std::int64_t bl = at(node(n).borrowing_limit, fr);
  if (bl != kNoLimit) avail = std::min(subtree_quota(n, fr) + bl, avail);
  return avail;
}

std::pair<std::int32_t, bool> QuotaTree::lowest_subtree_that_fits(QuotaNodeId cq, FrIndex fr,
                                                                  std::int64_t val) const {
  if (!(borrowing_with(cq, fr, val) && has_parent(cq))) return {0, has_parent(cq)};
  std::int64_t remaining = val - local_available(cq, fr);
  QuotaNodeId tracking = cq;
  for (QuotaNodeId n = node(cq).parent; n != kNoQuotaNode; n = node(n).parent) {
    tracking = n;
    if (!borrowing_with(n, fr, remaining)) return {height(n), has_parent(n)};
    remaining -= local_available(n, fr);
  }
  return {height(tracking), has_parent(tracking)};
}

void QuotaTree::add_usage(QuotaNodeId n, FrIndex fr, std::int64_t v) {
  // Usage beyond what is locally available bubbles up to the parent.
  const std::int64_t local = local_available(n, fr);
  mut(n).usage[static_cast<std::size_t>(fr)] += v;
  if (has_parent(n) && v > local) add_usage(node(n).parent, fr, v - local);
}

void QuotaTree::remove_usage(QuotaNodeId n, FrIndex fr, std::int64_t v) {
  // Only the part of the usage that was stored in the parent is removed there.
  const std::int64_t stored_in_parent = usage(n, fr) - local_quota(n, fr);
  mut(n).usage[static_cast<std::size_t>(fr)] -= v;
  if (stored_in_parent <= 0 || !has_parent(n)) return;
  remove_usage(node(n).parent, fr, std::min(v, stored_in_parent));
}

Drs QuotaTree::drs(QuotaNodeId n, const FrAmounts& extra, std::int64_t sign) const {
  // borrowed(r) = sum over flavors of max(0, usage + extra - subtreeQuota);
  // ratio(r) = borrowed(r) x 1000 / lendable(r), lendable(r) = sum over flavors of the parent's
  // potential_available; DRS = max over resources (ties: the lower resource id).
  Drs d;
  d.weight = node(n).weight;
  if (!has_parent(n)) return d;
  std::map<ResourceId, std::int64_t> borrowed;
  for (FrIndex fr = 0; fr < static_cast<FrIndex>(frs_.size()); ++fr) {
    std::int64_t add = 0;
    for (const auto& [efr, v] : extra) {
      if (efr == fr) add += sign * v;
    }
    const std::int64_t b = usage(n, fr) + add - subtree_quota(n, fr);
    if (b > 0) borrowed[frs_[static_cast<std::size_t>(fr)].resource] += b;
  }
  if (borrowed.empty()) return d;
  d.borrowing = true;
  const QuotaNodeId parent = node(n).parent;
  for (const auto& [r, b] : borrowed) {
    std::int64_t lendable = 0;
    for (FrIndex fr = 0; fr < static_cast<FrIndex>(frs_.size()); ++fr) {
      if (frs_[static_cast<std::size_t>(fr)].resource == r)
        lendable += potential_available(parent, fr);
    }
    if (lendable <= 0) continue;
    const double ratio = static_cast<double>(b) * 1000.0 / static_cast<double>(lendable);
    if (ratio > d.ratio) {
      d.ratio = ratio;
      d.dominant = r;
    }
  }
  return d;
}

void QuotaTree::check_invariants() const {
  for (QuotaNodeId n = 0; n < static_cast<QuotaNodeId>(nodes_.size()); ++n) {
    const Node& nd = node(n);
    for (FrIndex fr = 0; fr < static_cast<FrIndex>(frs_.size()); ++fr) {
      const std::int64_t u = usage(n, fr);
      CAPSIM_CHECK(u >= 0, fmt::format("quota node {} has negative usage {}", nd.name, u));
      // Borrowing limit: usage <= nominal + borrowingLimit.
      const std::int64_t bl = at(nd.borrowing_limit, fr);
      if (bl != kNoLimit) {
        CAPSIM_CHECK(u <= subtree_quota(n, fr) + bl,
                     fmt::format("{} uses {} of flavor/resource #{}, more than its quota {} plus "
                                 "its borrowing limit {}",
                                 nd.name, u, fr, subtree_quota(n, fr), bl));
      }
      // Nobody uses more than it could ever get: its own quota plus what the rest of the tree
      // lends (lending limits keep nominal - lendingLimit out of that pool).
      CAPSIM_CHECK(u <= potential_available(n, fr),
                   fmt::format("{} uses {} of flavor/resource #{}, more than the {} it could get "
                               "with the lending limits of the others",
                               nd.name, u, fr, potential_available(n, fr)));
      // Lending limit: what a node keeps for itself (nominal - lendingLimit) is never lent, so
      // whatever the rest of the tree uses, the node can still reach its unused local quota.
      if (has_parent(n) && at(nd.lending_limit, fr) != kNoLimit) {
        CAPSIM_CHECK(available(n, fr) >= local_available(n, fr),
                     fmt::format("{} lent more than its lendingLimit {} of flavor/resource #{}: "
                                 "{} of its {} unlendable are not available to it",
                                 nd.name, at(nd.lending_limit, fr), fr,
                                 local_available(n, fr) - available(n, fr), local_quota(n, fr)));
      }
      if (nd.cohort) {
        // A cohort's usage is its children's usage above their local (unlendable) quota.
        std::int64_t sum = 0;
        for (QuotaNodeId c : nd.children)
          sum += std::max<std::int64_t>(0, usage(c, fr) - local_quota(c, fr));
        CAPSIM_CHECK(sum == u, fmt::format("cohort {} records usage {} of flavor/resource #{} "
                                           "but its children use {} of the pool",
                                           nd.name, u, fr, sum));
      }
      if (!has_parent(n)) {
        CAPSIM_CHECK(u <= subtree_quota(n, fr),
                     fmt::format("the cohort tree {} uses {} of flavor/resource #{}, more than "
                                 "the {} its members lend",
                                 nd.name, u, fr, subtree_quota(n, fr)));
      }
    }
  }
}

}  // namespace capsim::queueing
