#include "sim/queueing/kueue_state.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"

namespace capsim::queueing {

std::string_view workload_state_name(WorkloadState s) {
  switch (s) {
    case WorkloadState::kWaitingForPods:
      return "waiting-for-pods";
    case WorkloadState::kQueued:
      return "queued";
    case WorkloadState::kInadmissible:
      return "inadmissible";
    case WorkloadState::kBackoff:
      return "backoff";
    case WorkloadState::kAdmitted:
      return "admitted";
    case WorkloadState::kEvicting:
      return "evicting";
    case WorkloadState::kFinished:
      return "finished";
    case WorkloadState::kDeactivated:
      return "deactivated";
  }
  return "?";
}

KueueState::KueueState(World& world, const QueueConfig& config) : world_(&world), config_(&config) {
  // 1. One quota node per ClusterQueue (node id = ClusterQueue index), then the cohorts: those
  //    with objects in file order, then the implicit ones in order of first mention.
  cqs_.resize(config.cluster_queues.size());
  for (std::size_t i = 0; i < config.cluster_queues.size(); ++i) {
    cqs_[i].spec = &config.cluster_queues[i];
    cqs_[i].node = tree_.add_node(config.cluster_queues[i].name, false);
    tree_.set_weight(cqs_[i].node, config.cluster_queues[i].fair_weight);
  }
  std::map<std::string, QuotaNodeId> cohort_nodes;
  auto cohort_node = [&](const std::string& name) {
    auto it = cohort_nodes.find(name);
    if (it != cohort_nodes.end()) return it->second;
    const QuotaNodeId id = tree_.add_node(name, true);
    cohort_nodes.emplace(name, id);
    return id;
  };
  for (const CohortSpec& c : config.cohorts)
    (void)cohort_node(c.name);
  for (const ClusterQueueSpec& c : config.cluster_queues) {
    if (!c.cohort.empty()) (void)cohort_node(c.cohort);
  }
  for (const CohortSpec& c : config.cohorts) {
    if (!c.parent.empty()) (void)cohort_node(c.parent);
  }

  // 2. Links.
  for (std::size_t i = 0; i < config.cluster_queues.size(); ++i) {
    const std::string& cohort = config.cluster_queues[i].cohort;
    if (!cohort.empty()) tree_.set_parent(cqs_[i].node, cohort_nodes.at(cohort));
  }
  for (const CohortSpec& c : config.cohorts) {
    if (!c.parent.empty()) tree_.set_parent(cohort_nodes.at(c.name), cohort_nodes.at(c.parent));
  }

  // 3. Quotas.
  auto add_groups = [&](QuotaNodeId node, const std::vector<ResourceGroupSpec>& groups,
                        std::vector<std::vector<std::vector<FrIndex>>>* frs_out) {
    for (const ResourceGroupSpec& g : groups) {
      std::vector<std::vector<FrIndex>> per_flavor;
      for (const FlavorQuotasSpec& fq : g.flavors) {
        const std::int32_t f = find_flavor(fq.flavor);
        CAPSIM_CHECK(f >= 0, fmt::format("flavor {} was not resolved by the loader", fq.flavor));
        std::vector<FrIndex> frs;
        for (const ResourceQuotaSpec& q : fq.resources) {
          const FrIndex fr = tree_.intern({f, q.resource});
          tree_.set_quota(node, fr, q.nominal, q.borrowing_limit, q.lending_limit);
          frs.push_back(fr);
        }
        per_flavor.push_back(std::move(frs));
      }
      if (frs_out != nullptr) frs_out->push_back(std::move(per_flavor));
    }
  };
  for (std::size_t i = 0; i < config.cluster_queues.size(); ++i) {
    add_groups(cqs_[i].node, config.cluster_queues[i].resource_groups, &cqs_[i].group_frs);
  }
  for (const CohortSpec& c : config.cohorts) {
    tree_.set_weight(cohort_nodes.at(c.name), c.fair_weight);
    add_groups(cohort_nodes.at(c.name), c.resource_groups, nullptr);
  }
  tree_.finalize();

  // 4. ClusterQueues by tree.
  members_by_root_.assign(tree_.size(), {});
  for (std::size_t i = 0; i < cqs_.size(); ++i) {
    members_by_root_[static_cast<std::size_t>(tree_.root(cqs_[i].node))].push_back(
        static_cast<std::int32_t>(i));
  }
  for (std::size_t i = 0; i < config.local_queues.size(); ++i) {
    const LocalQueueSpec& lq = config.local_queues[i];
    lq_index_[{lq.namespace_, lq.name}] = static_cast<std::int32_t>(i);
  }
}

std::int32_t KueueState::find_local_queue(const std::string& ns, const std::string& name) const {
  auto it = lq_index_.find({ns, name});
  return it == lq_index_.end() ? -1 : it->second;
}

std::int32_t KueueState::find_flavor(const std::string& name) const {
  for (std::size_t i = 0; i < config_->flavors.size(); ++i) {
    if (config_->flavors[i].name == name) return static_cast<std::int32_t>(i);
  }
  return -1;
}

const std::vector<std::int32_t>& KueueState::tree_members(std::int32_t cq) const {
  return members_by_root_[static_cast<std::size_t>(tree_.root(this->cq(cq).node))];
}

std::int32_t KueueState::group_of(std::int32_t cq, ResourceId r) const {
  const auto& groups = this->cq(cq).spec->resource_groups;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].covered.begin(), groups[g].covered.end(), r) !=
        groups[g].covered.end()) {
      return static_cast<std::int32_t>(g);
    }
  }
  return -1;
}

bool KueueState::fits(std::int32_t cq, const FrAmounts& usage, bool allow_borrowing) const {
  const QuotaNodeId n = this->cq(cq).node;
  for (const auto& [fr, v] : usage) {
    if (!allow_borrowing && tree_.borrowing_with(n, fr, v)) return false;
    if (v > tree_.available(n, fr)) return false;
  }
  return true;
}

bool KueueState::borrowing_in(std::int32_t cq, const std::vector<FrIndex>& frs) const {
  const QuotaNodeId n = this->cq(cq).node;
  if (!tree_.has_parent(n)) return false;
  for (FrIndex fr : frs) {
    if (tree_.borrowing(n, fr)) return true;
  }
  return false;
}

bool KueueState::uses_any(const Workload& w, const std::vector<FrIndex>& frs) const {
  for (const auto& [fr, v] : w.usage) {
    if (v > 0 && std::find(frs.begin(), frs.end(), fr) != frs.end()) return true;
  }
  return false;
}

std::string KueueState::amount(ResourceId r, std::int64_t v) const {
  if (r == kCpu) {
    if (v % 1000 == 0) return fmt::format("{}", v / 1000);
    return fmt::format("{}m", v);
  }
  if (r == kMemory || r == kEphemeralStorage) {
    constexpr std::int64_t kGi = 1024LL * 1024 * 1024, kMi = 1024LL * 1024;
    if (v != 0 && v % kGi == 0) return fmt::format("{}Gi", v / kGi);
    if (v != 0 && v % kMi == 0) return fmt::format("{}Mi", v / kMi);
  }
  return fmt::format("{}", v);
}

std::string KueueState::fr_name(FrIndex fr) const {
  const FlavorResource f = tree_.fr(fr);
  return fmt::format("{} in flavor {}", world_->resources.name(f.resource), flavor(f.flavor).name);
}

}  // namespace capsim::queueing
