#include "sim/framework/node_score_cache.hpp"

#include <algorithm>

#include "sim/framework/remembered_nodes.hpp"

namespace capsim::fw {

NodeScoreCache::Entry& NodeScoreCache::entry(const Cluster& cluster,
                                             std::span<const std::int64_t> key) {
  const std::size_t n = cluster.score_nodes().size();
  ++uses_;
  for (Entry& e : entries_) {
    if (e.cluster == cluster.instance() && e.scores.size() == n &&
        std::equal(e.key.begin(), e.key.end(), key.begin(), key.end())) {
      e.used = uses_;
      forget_changed_nodes(cluster, e.generation, e.known, changed_);
      return e;
    }
  }
  Entry& e = entry_for_new_key(entries_, kEntries);
  e.key.assign(key.begin(), key.end());
  e.cluster = cluster.instance();
  e.generation = cluster.generation();
  e.used = uses_;
  e.known.assign((n + 63) / 64, 0);
  e.scores.resize(n);
  return e;
}

}  // namespace capsim::fw
