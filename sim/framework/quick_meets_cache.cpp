#include "sim/framework/quick_meets_cache.hpp"

#include <algorithm>

namespace capsim::fw {

bool QuickMeetsCache::Key::matches(const QuickRequirement* r) const {
  if (r == nullptr) return !present;
  if (!present || has_models != (r->models != nullptr)) return false;
  QuickRequirement k = *r;
  k.models = nullptr;
  return k == req && (!has_models || models == *r->models);
}

void QuickMeetsCache::Key::assign(const QuickRequirement* r) {
  present = r != nullptr;
  req = present ? *r : QuickRequirement{};
  req.models = nullptr;
  has_models = present && r->models != nullptr;
  if (has_models) {
    models = *r->models;
  } else {
    models.clear();
  }
}

QuickMeetsCache::Entry& QuickMeetsCache::entry(const Cluster& cluster,
                                               const QuickRequirement& necessary,
                                               const QuickRequirement* sufficient) {
  const std::size_t words = (cluster.quick().size() + 63) / 64;
  ++uses_;
  for (Entry& e : entries_) {
    if (e.known.size() != words || !e.necessary_key.matches(&necessary) ||
        !e.sufficient_key.matches(sufficient)) {
      continue;
    }
    e.used = uses_;
    if (e.generation != cluster.generation()) {
      changed_.clear();
      if (cluster.changed_since(e.generation, changed_)) {
        for (NodeId id : changed_)
          e.known[id / 64] &= ~(std::uint64_t{1} << (id % 64));
      } else {
        std::fill(e.known.begin(), e.known.end(), 0);
      }
      e.generation = cluster.generation();
    }
    return e;
  }
  Entry* slot = nullptr;
  if (entries_.size() < kEntries) {
    slot = &entries_.emplace_back();
  } else {
    slot = &*std::min_element(entries_.begin(), entries_.end(),
                              [](const Entry& a, const Entry& b) { return a.used < b.used; });
  }
  slot->necessary_key.assign(&necessary);
  slot->sufficient_key.assign(sufficient);
  slot->generation = cluster.generation();
  slot->used = uses_;
  slot->known.assign(words, 0);
  slot->meets.assign(words, 0);
  slot->accepted.assign(words, 0);
  slot->reads = 0;
  return *slot;
}

}  // namespace capsim::fw
