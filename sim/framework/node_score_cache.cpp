#include "sim/framework/node_score_cache.hpp"

#include <algorithm>

namespace capsim::fw {

NodeScoreCache::Entry& NodeScoreCache::entry(const Cluster& cluster,
                                             std::span<const std::int64_t> key) {
  const std::size_t n = cluster.score_nodes().size();
  const std::size_t words = (n + 63) / 64;
  ++uses_;
  for (Entry& e : entries_) {
    if (e.cluster != cluster.instance() || e.scores.size() != n ||
        !std::equal(e.key.begin(), e.key.end(), key.begin(), key.end())) {
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
  slot->key.assign(key.begin(), key.end());
  slot->cluster = cluster.instance();
  slot->generation = cluster.generation();
  slot->used = uses_;
  slot->known.assign(words, 0);
  slot->scores.resize(n);
  return *slot;
}

}  // namespace capsim::fw
