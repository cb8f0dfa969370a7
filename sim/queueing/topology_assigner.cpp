#include "sim/queueing/topology_assigner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/check.hpp"

namespace capsim::queueing {

std::int32_t TopologyAssignment::pods() const {
  std::int32_t n = 0;
  for (const TopologyDomainCount& d : domains)
    n += d.count;
  return n;
}

TopologySnapshot::TopologySnapshot(std::string topology_name, std::vector<std::string> levels)
    : name_(std::move(topology_name)), levels_(std::move(levels)) {
  CAPSIM_CHECK(!levels_.empty(), fmt::format("Topology {} has no levels", name_));
}

std::int32_t TopologySnapshot::level_index(const std::string& label) const {
  for (std::size_t i = 0; i < levels_.size(); ++i) {
    if (levels_[i] == label) return static_cast<std::int32_t>(i);
  }
  return -1;
}

void TopologySnapshot::add_node(std::vector<std::string> values, const ResourceVec& free) {
  CAPSIM_CHECK(values.size() == levels_.size() && !built_,
               "a TAS node gives one value per level, before the snapshot is used");
  auto [it, fresh] = leaf_of_.try_emplace(values, static_cast<std::int32_t>(domains_.size()));
  if (fresh) {
    Domain d;
    d.level = static_cast<std::int32_t>(levels_.size()) - 1;
    d.values = std::move(values);
    domains_.push_back(std::move(d));
  }
  Domain& leaf = domains_[static_cast<std::size_t>(it->second)];
  for (std::size_t r = 0; r < kMaxResources; ++r)
    leaf.free.v[r] += std::max<std::int64_t>(0, free.v[r]);
  leaf.free_gpus += std::max<std::int64_t>(0, free[kNvidiaGpu]);
  total_free_gpus_ += std::max<std::int64_t>(0, free[kNvidiaGpu]);
}

void TopologySnapshot::reserve(const std::vector<std::string>& values, const ResourceVec& amount) {
  CAPSIM_CHECK(!built_, "reservations come before the snapshot is used");
  auto it = leaf_of_.find(values);
  if (it == leaf_of_.end()) return;
  Domain& leaf = domains_[static_cast<std::size_t>(it->second)];
  for (std::size_t r = 0; r < kMaxResources; ++r)
    leaf.free.v[r] -= amount.v[r];
  const std::int64_t g = std::min(amount[kNvidiaGpu], leaf.free_gpus);
  leaf.free_gpus -= g;
  total_free_gpus_ -= g;
}

void TopologySnapshot::build() {
  if (built_) return;
  built_ = true;
  const auto nlevels = static_cast<std::int32_t>(levels_.size());
  by_level_.assign(levels_.size(), {});
  // Parents by their values' prefix, from the leaves up; the map keeps the order stable.
  std::vector<std::int32_t> current;
  for (const auto& [values, id] : leaf_of_)
    current.push_back(id);
  by_level_.back() = current;
  for (std::int32_t level = nlevels - 2; level >= 0; --level) {
    std::map<std::vector<std::string>, std::int32_t> parents;
    for (std::int32_t child : current) {
      std::vector<std::string> prefix(
          domains_[static_cast<std::size_t>(child)].values.begin(),
          domains_[static_cast<std::size_t>(child)].values.begin() + level + 1);
      auto [it, fresh] = parents.try_emplace(prefix, static_cast<std::int32_t>(domains_.size()));
      if (fresh) {
        Domain d;
        d.level = level;
        d.values = prefix;
        domains_.push_back(std::move(d));
      }
      domains_[static_cast<std::size_t>(child)].parent = it->second;
      domains_[static_cast<std::size_t>(it->second)].children.push_back(child);
      domains_[static_cast<std::size_t>(it->second)].free_gpus +=
          domains_[static_cast<std::size_t>(child)].free_gpus;
    }
    current.clear();
    for (const auto& [values, id] : parents)
      current.push_back(id);
    by_level_[static_cast<std::size_t>(level)] = current;
  }
}

std::vector<std::int32_t> TopologySnapshot::sorted(std::vector<std::int32_t> ids,
                                                   bool least_free) const {
  // BestFit: most free slices first; LeastFreeCapacity: fewest first. Then fewer free pods, then
  // the label values.
  std::sort(ids.begin(), ids.end(), [&](std::int32_t a, std::int32_t b) {
    const Domain& x = domains_[static_cast<std::size_t>(a)];
    const Domain& y = domains_[static_cast<std::size_t>(b)];
    if (x.slices != y.slices) return least_free ? x.slices < y.slices : x.slices > y.slices;
    if (x.pods != y.pods) return x.pods < y.pods;
    return x.values < y.values;
  });
  return ids;
}

std::int32_t TopologySnapshot::best_fit(const std::vector<std::int32_t>& ids, std::size_t from,
                                        std::int32_t need, bool slices) const {
  // The first of the domains that fit with the fewest free units; ids[from] if none fits.
  std::int32_t best = ids[from];
  std::int32_t best_units = std::numeric_limits<std::int32_t>::max();
  for (std::size_t i = from; i < ids.size(); ++i) {
    const Domain& d = domains_[static_cast<std::size_t>(ids[i])];
    const std::int32_t units = slices ? d.slices : d.pods;
    if (units >= need && units < best_units) {
      best = ids[i];
      best_units = units;
    }
  }
  return best;
}

std::vector<std::int32_t> TopologySnapshot::distribute(const std::vector<std::int32_t>& ids,
                                                       std::int32_t units, std::int32_t unit_size,
                                                       bool slices, bool use_best_fit) {
  // Fills the domains in order with `units` slices (or pods) of `unit_size` pods; with BestFit
  // the domain that completes the placement is the one that fits the rest most tightly.
  std::vector<std::int32_t> out;
  std::int32_t remaining = units;
  for (std::size_t i = 0; i < ids.size() && remaining > 0; ++i) {
    std::int32_t id = ids[i];
    auto cap = [&](std::int32_t d) {
      const Domain& dom = domains_[static_cast<std::size_t>(d)];
      return slices ? dom.slices : dom.pods;
    };
    if (use_best_fit && cap(id) >= remaining) id = best_fit(ids, i, remaining, slices);
    Domain& d = domains_[static_cast<std::size_t>(id)];
    const std::int32_t take = std::min(cap(id), remaining);
    if (take == 0) continue;
    d.assigned = take * unit_size;
    remaining -= take;
    out.push_back(id);
  }
  CAPSIM_CHECK(remaining == 0,
               fmt::format("TAS in topology {}: {} units left after the domains that were "
                           "counted to fit them",
                           name_, remaining));
  return out;
}

std::string TopologySnapshot::not_fit(std::int32_t fit, std::int32_t total,
                                      std::int32_t slice_size) const {
  const char* unit = slice_size > 1 ? "slice" : "pod";
  if (fit <= 0) {
    return fmt::format("topology \"{}\" doesn't allow to fit any of {} {}(s)", name_, total, unit);
  }
  return fmt::format("topology \"{}\" allows to fit only {} out of {} {}(s)", name_, fit, total,
                     unit);
}

TasResult TopologySnapshot::assign(const TasRequest& req) {
  build();
  TasResult out;
  const auto nlevels = static_cast<std::int32_t>(levels_.size());
  const std::int32_t lowest = nlevels - 1;
  const bool unconstrained = req.mode == TopologyMode::kUnconstrained;
  const bool required = req.mode == TopologyMode::kRequired;
  const std::int32_t level = unconstrained ? lowest : req.level;
  const std::int32_t slice_level = req.slice_level < 0 ? lowest : req.slice_level;
  const std::int32_t slice_size = std::max(1, req.slice_size);
  CAPSIM_CHECK(level >= 0 && level < nlevels && slice_level >= level && slice_level < nlevels,
               fmt::format("TAS request for topology {} with level {} and slice level {} of {}",
                           name_, level, slice_level, nlevels));
  if (req.count % slice_size != 0) {
    out.failure = fmt::format("{} pods cannot be split into slices of {}", req.count, slice_size);
    return out;
  }
  // 1. Pods (and slices) that fit, per domain, from the leaves up.
  for (Domain& d : domains_) {
    d.pods = 0;
    d.slices = 0;
    d.assigned = 0;
  }
  for (std::int32_t id : by_level_.back()) {
    Domain& d = domains_[static_cast<std::size_t>(id)];
    std::int64_t fit = std::numeric_limits<std::int32_t>::max();
    for (std::size_t r = 0; r < kMaxResources; ++r) {
      if (req.per_pod.v[r] <= 0) continue;
      fit = std::min(fit, std::max<std::int64_t>(0, d.free.v[r]) / req.per_pod.v[r]);
    }
    d.pods = static_cast<std::int32_t>(fit);
  }
  for (std::int32_t l = lowest; l >= 0; --l) {
    for (std::int32_t id : by_level_[static_cast<std::size_t>(l)]) {
      Domain& d = domains_[static_cast<std::size_t>(id)];
      if (!d.children.empty()) {
        d.pods = 0;
        d.slices = 0;
        for (std::int32_t c : d.children) {
          d.pods += domains_[static_cast<std::size_t>(c)].pods;
          d.slices += domains_[static_cast<std::size_t>(c)].slices;
        }
      }
      if (l == slice_level) d.slices = d.pods / slice_size;
      if (l > slice_level) d.slices = 0;
    }
  }
  // 2. The level, and the domains there, that take the pods.
  const std::int32_t need = req.count / slice_size;
  std::int32_t fit_level = level;
  std::vector<std::int32_t> chosen;
  for (;;) {
    const std::vector<std::int32_t> doms =
        sorted(by_level_[static_cast<std::size_t>(fit_level)], unconstrained);
    if (doms.empty()) {
      out.failure = fmt::format("no topology domains at level: {}",
                                levels_[static_cast<std::size_t>(fit_level)]);
      return out;
    }
    auto slices_of = [&](std::int32_t id) { return domains_[static_cast<std::size_t>(id)].slices; };
    if (unconstrained) {
      // LeastFreeCapacity: the first (least free) domain that holds everything.
      for (std::int32_t id : doms) {
        if (slices_of(id) >= need) {
          chosen = {id};
          break;
        }
      }
      if (!chosen.empty()) break;
    } else if (slices_of(doms.front()) >= need) {
      chosen = {best_fit(doms, 0, need, true)};  // BestFit: the tightest domain that fits
      break;
    }
    if (required) {
      out.failure = not_fit(slices_of(doms.front()), need, slice_size);
      return out;
    }
    if (fit_level > 0 && !unconstrained) {
      --fit_level;  // preferred: one level up
      continue;
    }
    // Spread over several domains of this level, greedily in order.
    std::int32_t remaining = need;
    for (std::size_t i = 0; i < doms.size() && remaining > 0; ++i) {
      std::int32_t id = doms[i];
      if (slices_of(id) == 0) continue;
      if (!unconstrained && slices_of(id) >= remaining) id = best_fit(doms, i, remaining, true);
      chosen.push_back(id);
      remaining -= slices_of(id);
    }
    if (remaining > 0) {
      out.failure = not_fit(need - remaining, need, slice_size);
      return out;
    }
    break;
  }
  // 3. Down the tree.
  const bool use_best_fit = !unconstrained;
  std::vector<std::int32_t> current = distribute(chosen, need, slice_size, true, use_best_fit);
  std::int32_t l = fit_level;
  for (; l < std::min(lowest, slice_level); ++l) {
    std::vector<std::int32_t> children;
    for (std::int32_t id : current) {
      const Domain& d = domains_[static_cast<std::size_t>(id)];
      children.insert(children.end(), d.children.begin(), d.children.end());
    }
    current = distribute(sorted(children, unconstrained), need, slice_size, true, use_best_fit);
  }
  for (; l < lowest; ++l) {
    std::vector<std::int32_t> next;
    for (std::int32_t id : current) {
      const Domain& d = domains_[static_cast<std::size_t>(id)];
      const std::vector<std::int32_t> part =
          distribute(sorted(d.children, unconstrained), d.assigned, 1, false, use_best_fit);
      next.insert(next.end(), part.begin(), part.end());
    }
    current = std::move(next);
  }
  out.assignment.levels = levels_;
  out.assignment.mode = req.mode;
  out.assignment.level = unconstrained ? -1 : req.level;
  for (std::int32_t id : current) {
    const Domain& d = domains_[static_cast<std::size_t>(id)];
    if (d.assigned > 0) out.assignment.domains.push_back({d.values, d.assigned});
  }
  std::sort(out.assignment.domains.begin(), out.assignment.domains.end(),
            [](const TopologyDomainCount& a, const TopologyDomainCount& b) {
              return a.values < b.values;
            });
  CAPSIM_CHECK(out.assignment.pods() == req.count,
               fmt::format("TAS in topology {} placed {} of {} pods", name_, out.assignment.pods(),
                           req.count));
  return out;
}

void TopologySnapshot::check_invariants() const {
  if (!built_) return;
  for (std::size_t l = 0; l < by_level_.size(); ++l) {
    std::int64_t gpus = 0;
    for (std::int32_t id : by_level_[l]) {
      const Domain& d = domains_[static_cast<std::size_t>(id)];
      gpus += d.free_gpus;
      if (d.children.empty()) continue;
      std::int64_t child_gpus = 0, child_pods = 0;
      for (std::int32_t c : d.children) {
        child_gpus += domains_[static_cast<std::size_t>(c)].free_gpus;
        child_pods += domains_[static_cast<std::size_t>(c)].pods;
      }
      CAPSIM_CHECK(child_gpus == d.free_gpus && child_pods == d.pods,
                   fmt::format("TAS domain {} of topology {} has {} free GPUs and room for {} "
                               "pods, its children {} and {}",
                               fmt::join(d.values, "/"), name_, d.free_gpus, d.pods, child_gpus,
                               child_pods));
    }
    CAPSIM_CHECK(gpus == total_free_gpus_,
                 fmt::format("the domains of level {} of topology {} have {} free GPUs, the "
                             "nodes {}",
                             levels_[l], name_, gpus, total_free_gpus_));
  }
}

}  // namespace capsim::queueing
