#include "models/mig_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

namespace capsim {

std::int32_t compute_slices(const GpuModelInfo& model, const ProfileMultiset& profiles) {
  std::int32_t c = 0;
  for (auto p : profiles)
    c += model.mig_profiles[p].compute_slices;
  return c;
}

std::string describe(const GpuModelInfo& model, const ProfileMultiset& profiles) {
  std::map<std::uint16_t, int> counts;
  for (auto p : profiles)
    counts[p]++;
  std::vector<std::pair<std::uint16_t, int>> items(counts.begin(), counts.end());
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    const auto& pa = model.mig_profiles[a.first];
    const auto& pb = model.mig_profiles[b.first];
    if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
    return pa.memory_slices > pb.memory_slices;
  });
  std::string out;
  for (const auto& [p, n] : items) {
    if (!out.empty()) out += " + ";
    out +=
        n > 1 ? fmt::format("{}x {}", n, model.mig_profiles[p].name) : model.mig_profiles[p].name;
  }
  return out.empty() ? "(no instances)" : out;
}

namespace {

// Tries one creation order on top of `slots` (true = taken); appends the instances on success.
bool try_order(const GpuModelInfo& m, const ProfileMultiset& order, std::vector<bool> slots,
               std::vector<MigInstance>& placed) {
  const auto nslots = static_cast<std::int32_t>(slots.size());
  for (auto p : order) {
    const MigProfileInfo& prof = m.mig_profiles[p];
    bool ok = false;
    for (std::int32_t s : prof.start_slots) {  // the first free allowed start, as the driver does
      if (s + prof.memory_slices > nslots) continue;
      bool free = true;
      for (std::int32_t k = s; k < s + prof.memory_slices && free; ++k)
        free = !slots[static_cast<std::size_t>(k)];
      if (!free) continue;
      for (std::int32_t k = s; k < s + prof.memory_slices; ++k)
        slots[static_cast<std::size_t>(k)] = true;
      placed.push_back(MigInstance{p, static_cast<std::uint8_t>(s),
                                   static_cast<std::uint8_t>(prof.memory_slices)});
      ok = true;
      break;
    }
    if (!ok) return false;
  }
  return true;
}

Result<GpuLayout> place_on(const GpuModelInfo& m, const GpuLayout& base, ProfileMultiset profiles) {
  if (m.mig_profiles.empty()) return make_error(fmt::format("{} does not support MIG", m.name));
  std::vector<bool> slots(static_cast<std::size_t>(m.mig_memory_slots), false);
  std::int32_t used_compute = 0;
  std::int32_t used_memory = 0;
  std::map<std::uint16_t, int> have;
  for (const MigInstance& i : base.instances) {
    for (int k = i.start; k < i.start + i.size; ++k)
      slots[static_cast<std::size_t>(k)] = true;
    used_compute += m.mig_profiles[i.profile].compute_slices;
    used_memory += i.size;
    have[i.profile]++;
  }
  std::map<std::uint16_t, int> want;
  for (auto p : profiles) {
    if (p >= m.mig_profiles.size()) return make_error("unknown MIG profile index");
    want[p]++;
    used_compute += m.mig_profiles[p].compute_slices;
    used_memory += m.mig_profiles[p].memory_slices;
  }
  // Counting checks first: they give the clearest reasons.
  for (const auto& [p, n] : want) {
    const auto& prof = m.mig_profiles[p];
    if (n + have[p] > prof.max_instances) {
      return make_error(fmt::format("at most {} instance(s) of {} fit on one {}, {} asked",
                                    prof.max_instances, prof.name, m.name, n + have[p]));
    }
  }
  if (used_compute > m.mig_compute_slots) {
    return make_error(fmt::format("{} needs {} compute slices; a {} has {}", describe(m, profiles),
                                  used_compute, m.name, m.mig_compute_slots));
  }
  if (used_memory > m.mig_memory_slots) {
    return make_error(fmt::format("{} needs {} memory slices; a {} has {}", describe(m, profiles),
                                  used_memory, m.name, m.mig_memory_slots));
  }
  // Every distinct creation order, as mig-parted does, until one places everything.
  std::sort(profiles.begin(), profiles.end());
  do {
    std::vector<MigInstance> placed;
    if (try_order(m, profiles, slots, placed)) {
      GpuLayout out = base;
      out.mig_enabled = true;
      for (const auto& i : placed)
        out.instances.push_back(i);
      return out;
    }
  } while (std::next_permutation(profiles.begin(), profiles.end()));
  return make_error(fmt::format(
      "{} has no placement on a {}: in every creation order some instance finds no free allowed "
      "start slot (the slices add up, but the placement rules do not allow this combination)",
      describe(m, profiles), m.name));
}

}  // namespace

Result<GpuLayout> place_profiles(const GpuModelInfo& model, ProfileMultiset profiles) {
  return place_on(model, GpuLayout{true, {}}, std::move(profiles));
}

Result<GpuLayout> place_into(const GpuModelInfo& model, const GpuLayout& base,
                             ProfileMultiset profiles) {
  return place_on(model, base, std::move(profiles));
}

std::vector<ProfileMultiset> maximal_layouts(const GpuModelInfo& m, bool include_media_extensions) {
  std::vector<std::uint16_t> considered;
  for (std::uint16_t p = 0; p < m.mig_profiles.size(); ++p) {
    if (include_media_extensions || !m.mig_profiles[p].media_extensions) considered.push_back(p);
  }
  std::vector<ProfileMultiset> feasible;
  // Depth-first over multisets in non-decreasing profile order; a multiset that does not fit
  // has no fitting supersets, so the search stops there.
  ProfileMultiset cur;
  auto fits = [&](const ProfileMultiset& s) { return place_profiles(m, s).ok(); };
  std::vector<ProfileMultiset> stack_results;
  std::function<void(std::size_t)> dfs = [&](std::size_t from) {
    bool extended = false;
    for (std::size_t i = from; i < considered.size(); ++i) {
      cur.push_back(considered[i]);
      if (fits(cur)) {
        dfs(i);
        extended = true;
      }
      cur.pop_back();
    }
    (void)extended;
    if (!cur.empty()) feasible.push_back(cur);
  };
  dfs(0);
  // Maximal: no considered profile can be added.
  std::vector<ProfileMultiset> out;
  for (const auto& s : feasible) {
    bool maximal = true;
    for (auto p : considered) {
      ProfileMultiset t = s;
      t.push_back(p);
      if (fits(t)) {
        maximal = false;
        break;
      }
    }
    if (maximal) {
      ProfileMultiset sorted = s;
      std::sort(sorted.begin(), sorted.end());
      if (std::find(out.begin(), out.end(), sorted) == out.end()) out.push_back(sorted);
    }
  }
  std::sort(out.begin(), out.end(), [&](const ProfileMultiset& a, const ProfileMultiset& b) {
    const auto ca = compute_slices(m, a), cb = compute_slices(m, b);
    if (ca != cb) return ca > cb;
    return a < b;
  });
  return out;
}

}  // namespace capsim
