#include "sim/framework/quick_meets_cache.hpp"

#include <algorithm>

#include "sim/framework/remembered_nodes.hpp"

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
    if (e.known.size() == words && e.necessary_key.matches(&necessary) &&
        e.sufficient_key.matches(sufficient)) {
      e.used = uses_;
      forget_changed_nodes(cluster, e.generation, e.known, changed_);
      return e;
    }
  }
  Entry& e = entry_for_new_key(entries_, kEntries);
  e.necessary_key.assign(&necessary);
  e.sufficient_key.assign(sufficient);
  e.generation = cluster.generation();
  e.used = uses_;
  e.known.assign(words, 0);
  e.meets.assign(words, 0);
  e.accepted.assign(words, 0);
  e.reads = 0;
  return e;
}

}  // namespace capsim::fw
