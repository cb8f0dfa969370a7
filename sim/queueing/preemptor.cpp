#include "sim/queueing/preemptor.hpp"

#include <algorithm>

#include "sim/check.hpp"

namespace capsim::queueing {

namespace {
constexpr const char* kInClusterQueue = "InClusterQueue";
constexpr const char* kInCohortReclamation = "InCohortReclamation";
constexpr const char* kInCohortReclaimWhileBorrowing = "InCohortReclaimWhileBorrowing";
constexpr const char* kInCohortFairSharing = "InCohortFairSharing";
}  // namespace

std::string_view Preemptor::describe(std::string_view reason) {
  if (reason == kInClusterQueue) return "prioritization in the ClusterQueue";
  if (reason == kInCohortReclamation) return "reclamation within the cohort";
  if (reason == kInCohortReclaimWhileBorrowing)
    return "reclamation within the cohort while borrowing";
  if (reason == kInCohortFairSharing) return "fair sharing within the cohort";
  return reason;
}

void Preemptor::remove(WorkloadId w) {
  const Workload& x = st_->wl(w);
  st_->tree().remove_usage(st_->cq(x.cluster_queue).node, x.usage);
}

void Preemptor::restore(WorkloadId w) {
  const Workload& x = st_->wl(w);
  st_->tree().add_usage(st_->cq(x.cluster_queue).node, x.usage);
}

void Preemptor::restore_all(const std::vector<PreemptionTarget>& targets) {
  for (const PreemptionTarget& t : targets)
    restore(t.workload);
}

std::vector<WorkloadId> Preemptor::candidates(const Workload& w, std::int32_t cq,
                                              const std::vector<FrIndex>& frs) const {
  std::vector<WorkloadId> out;
  const ClusterQueueSpec& spec = *st_->cq(cq).spec;
  // Within the ClusterQueue: lower priority, or (LowerOrNewerEqualPriority) equal priority and
  // queued later than the preemptor.
  if (spec.within_cluster_queue != PreemptPolicy::kNever) {
    const bool newer_equal = spec.within_cluster_queue == PreemptPolicy::kLowerOrNewerEqualPriority;
    for (WorkloadId h : st_->cq(cq).holders) {
      const Workload& c = st_->wl(h);
      if (h == w.id || c.priority > w.priority) continue;
      if (c.priority == w.priority && !(newer_equal && w.order_time < c.order_time)) continue;
      if (!st_->uses_any(c, frs)) continue;
      out.push_back(h);
    }
  }
  // In the cohort tree: workloads of ClusterQueues that borrow what the preemptor needs.
  if (st_->tree().has_parent(st_->cq(cq).node) &&
      spec.reclaim_within_cohort != PreemptPolicy::kNever) {
    const bool lower_only = spec.reclaim_within_cohort == PreemptPolicy::kLowerPriority;
    for (std::int32_t other : st_->tree_members(cq)) {
      if (other == cq || !st_->borrowing_in(other, frs)) continue;
      for (WorkloadId h : st_->cq(other).holders) {
        const Workload& c = st_->wl(h);
        if (lower_only && c.priority >= w.priority) continue;
        if (!st_->uses_any(c, frs)) continue;
        out.push_back(h);
      }
    }
  }
  // Order: already evicting first; other ClusterQueues before the preemptor's own; lower
  // priority first; more recently admitted first; then creation order (deterministic).
  std::sort(out.begin(), out.end(), [&](WorkloadId a, WorkloadId b) {
    const Workload& x = st_->wl(a);
    const Workload& y = st_->wl(b);
    const bool xe = x.state == WorkloadState::kEvicting, ye = y.state == WorkloadState::kEvicting;
    if (xe != ye) return xe;
    const bool xin = x.cluster_queue == cq, yin = y.cluster_queue == cq;
    if (xin != yin) return !xin;
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.admitted_at != y.admitted_at) return x.admitted_at > y.admitted_at;
    return a < b;
  });
  return out;
}

std::vector<PreemptionTarget> Preemptor::minimal(
    std::int32_t cq, const FrAmounts& usage, const std::vector<FrIndex>& frs,
    const std::vector<WorkloadId>& candidates, bool allow_borrowing,
    std::optional<std::int32_t> borrow_below_priority) {
  // 1. Remove candidates in order (skipping ClusterQueues that stopped borrowing) until the
  //    workload fits.
  std::vector<PreemptionTarget> targets;
  bool fits = false;
  for (WorkloadId c : candidates) {
    const Workload& cw = st_->wl(c);
    const bool same = cw.cluster_queue == cq;
    std::string reason = kInClusterQueue;
    if (!same && !st_->borrowing_in(cw.cluster_queue, frs)) continue;
    if (!same) {
      reason = kInCohortReclamation;
      if (borrow_below_priority) {
        if (cw.priority >= *borrow_below_priority) {
          // A victim at or above the threshold may only be preempted if the preemptor then fits
          // without borrowing.
          allow_borrowing = false;
        } else {
          reason = kInCohortReclaimWhileBorrowing;
        }
      }
    }
    remove(c);
    targets.push_back({c, reason});
    if (st_->fits(cq, usage, allow_borrowing)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    restore_all(targets);
    return {};
  }
  // 2. Add back, in reverse order, those it still fits without.
  fill_back(targets, cq, usage, allow_borrowing);
  restore_all(targets);
  return targets;
}

void Preemptor::fill_back(std::vector<PreemptionTarget>& targets, std::int32_t cq,
                          const FrAmounts& usage, bool allow_borrowing) {
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(targets.size()) - 2; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    restore(targets[k].workload);
    if (st_->fits(cq, usage, allow_borrowing)) {
      targets[k] = targets.back();  // not needed: drop it (O(1), as upstream)
      targets.pop_back();
    } else {
      remove(targets[k].workload);
    }
  }
}

std::vector<PreemptionTarget> Preemptor::fair(const Workload& w, std::int32_t cq,
                                              const FrAmounts& usage,
                                              const std::vector<FrIndex>& frs,
                                              const std::vector<WorkloadId>& candidates,
                                              std::optional<std::int32_t> borrow_below_priority) {
  QuotaTree& tree = st_->tree();
  const auto& strategies = st_->config().settings.preemption_strategies;
  // Rule S2-a: preemptor's share after admission <= the target ClusterQueue's share after the
  // preemption; rule S2-b: < the target's share before.
  auto strategy = [](FairSharingStrategy s, const Drs& preemptor_new, const Drs& target_old,
                     const Drs& target_new) {
    if (s == FairSharingStrategy::kLessThanOrEqualToFinalShare) {
      return compare_drs(preemptor_new, target_new) <= 0;
    }
    return compare_drs(preemptor_new, target_old) < 0;
  };
  struct CandCq {
    std::int32_t cq;
    Drs share;
    std::vector<WorkloadId> wls;
  };
  auto build = [&](const std::vector<WorkloadId>& cands, bool first_only) {
    std::vector<CandCq> heap;
    for (WorkloadId c : cands) {
      const std::int32_t ccq = st_->wl(c).cluster_queue;
      auto it =
          std::find_if(heap.begin(), heap.end(), [&](const CandCq& x) { return x.cq == ccq; });
      if (it == heap.end()) {
        heap.push_back({ccq, tree.drs(st_->cq(ccq).node), {c}});
      } else if (!first_only) {
        it->wls.push_back(c);
      }
    }
    return heap;
  };
  // The ClusterQueue with the highest share first (ties: lower index).
  auto pop = [](std::vector<CandCq>& heap) {
    auto best = heap.begin();
    for (auto it = heap.begin(); it != heap.end(); ++it) {
      const int c = compare_drs(it->share, best->share);
      if (c > 0 || (c == 0 && it->cq < best->cq)) best = it;
    }
    CandCq out = std::move(*best);
    heap.erase(best);
    return out;
  };
  const QuotaNodeId node = st_->cq(cq).node;
  std::vector<CandCq> heap = build(candidates, false);
  Drs preemptor_new = tree.drs(node, usage);
  std::vector<PreemptionTarget> targets;
  std::vector<WorkloadId> retry;
  bool fits = false;
  while (!heap.empty() && !fits) {
    CandCq cand = pop(heap);
    if (cand.cq == cq) {
      const WorkloadId c = cand.wls.front();
      remove(c);
      targets.push_back({c, kInClusterQueue});
      if (st_->fits(cq, usage, true)) {
        fits = true;
        break;
      }
      preemptor_new = tree.drs(node, usage);
      cand.wls.erase(cand.wls.begin());
      if (!cand.wls.empty()) {
        cand.share = tree.drs(st_->cq(cand.cq).node);
        heap.push_back(std::move(cand));
      }
      continue;
    }
    for (std::size_t i = 0; i < cand.wls.size(); ++i) {
      const WorkloadId c = cand.wls[i];
      const bool below = borrow_below_priority && st_->wl(c).priority < *borrow_below_priority;
      const Drs cand_new = tree.drs(st_->cq(cand.cq).node, st_->wl(c).usage, -1);
      const bool by_share = strategy(strategies.front(), preemptor_new, cand.share, cand_new);
      if (below || by_share) {
        remove(c);
        targets.push_back({c, by_share ? kInCohortFairSharing : kInCohortReclaimWhileBorrowing});
        if (st_->fits(cq, usage, true)) {
          fits = true;
          break;
        }
        std::vector<WorkloadId> rest(cand.wls.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                     cand.wls.end());
        if (!rest.empty() && st_->borrowing_in(cand.cq, frs)) {
          heap.push_back({cand.cq, cand_new, std::move(rest)});
        }
        break;  // shares changed: pick the next ClusterQueue again
      }
      retry.push_back(c);
    }
  }
  if (!fits && strategies.size() > 1) {
    heap = build(retry, true);
    while (!heap.empty() && !fits) {
      CandCq cand = pop(heap);
      if (strategy(strategies[1], preemptor_new, cand.share, Drs{})) {
        const WorkloadId c = cand.wls.front();
        remove(c);
        targets.push_back({c, kInCohortFairSharing});
        if (st_->fits(cq, usage, true)) fits = true;
      }
    }
  }
  (void)w;
  if (!fits) {
    restore_all(targets);
    return {};
  }
  fill_back(targets, cq, usage, true);
  restore_all(targets);
  return targets;
}

std::vector<PreemptionTarget> Preemptor::targets(const Workload& w, std::int32_t cq,
                                                 const FrAmounts& usage,
                                                 const std::vector<FrIndex>& frs) {
  std::vector<WorkloadId> cands = candidates(w, cq, frs);
  if (cands.empty()) return {};
  std::vector<WorkloadId> same;
  for (WorkloadId c : cands) {
    if (st_->wl(c).cluster_queue == cq) same.push_back(c);
  }
  // Only own workloads: borrowing while preempting is fine (no flapping between queues).
  if (same.size() == cands.size()) return minimal(cq, usage, frs, cands, true, std::nullopt);

  // borrowWithinCohort: victims below the threshold priority may be preempted while borrowing.
  const ClusterQueueSpec& spec = *st_->cq(cq).spec;
  std::optional<std::int32_t> threshold;
  if (spec.borrow_within_cohort != PreemptPolicy::kNever) {
    threshold = w.priority;
    if (spec.borrow_max_priority_threshold && *spec.borrow_max_priority_threshold < w.priority) {
      threshold = *spec.borrow_max_priority_threshold + 1;
    }
  }
  if (st_->config().settings.fair_sharing) return fair(w, cq, usage, frs, cands, threshold);

  const QuotaNodeId node = st_->cq(cq).node;
  auto under_nominal = [&] {
    for (FrIndex fr : frs) {
      if (st_->tree().usage(node, fr) >= st_->tree().nominal(node, fr)) return false;
    }
    return true;
  };
  if (threshold) {
    if (!under_nominal()) {
      std::vector<WorkloadId> kept;
      for (WorkloadId c : cands) {
        if (st_->wl(c).cluster_queue == cq || st_->wl(c).priority < *threshold) kept.push_back(c);
      }
      cands = std::move(kept);
    }
    return minimal(cq, usage, frs, cands, true, threshold);
  }
  // Reclaim in the cohort without borrowing, while under nominal quota.
  if (under_nominal()) {
    auto t = minimal(cq, usage, frs, cands, false, std::nullopt);
    if (!t.empty()) return t;
  }
  // Last: own workloads only, borrowing allowed.
  return minimal(cq, usage, frs, same, true, std::nullopt);
}

std::pair<PreemptionPossibility, std::int32_t> Preemptor::simulate(const Workload& w,
                                                                   std::int32_t cq, FrIndex fr,
                                                                   std::int64_t val) {
  const FrAmounts usage = {{fr, val}};
  const QuotaNodeId node = st_->cq(cq).node;
  const std::vector<PreemptionTarget> t = targets(w, cq, usage, {fr});
  if (t.empty()) {
    return {PreemptionPossibility::kNoCandidates,
            st_->tree().lowest_subtree_that_fits(node, fr, val).first};
  }
  bool other = false;
  for (const PreemptionTarget& x : t) {
    remove(x.workload);
    other = other || st_->wl(x.workload).cluster_queue != cq;
  }
  const std::int32_t borrow = st_->tree().lowest_subtree_that_fits(node, fr, val).first;
  restore_all(t);
  return {other ? PreemptionPossibility::kReclaim : PreemptionPossibility::kPreempt, borrow};
}

}  // namespace capsim::queueing
