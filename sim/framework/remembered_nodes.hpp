// What the caches of per-node answers kept between cycles (NodeScoreCache, QuickMeetsCache)
// share: bringing a bit-per-node set of known answers up to date with a cluster, and choosing
// the entry a new key takes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"

namespace capsim::fw {

// Clears in `known` (a bit per node) the bit of every node changed since `generation`, or of
// every node when more changes came since than the cluster's change log holds; `generation`
// becomes the cluster's. `scratch` is reused room.
inline void forget_changed_nodes(const Cluster& cluster, std::uint64_t& generation,
                                 std::vector<std::uint64_t>& known, std::vector<NodeId>& scratch) {
  if (generation == cluster.generation()) return;
  scratch.clear();
  if (cluster.changed_since(generation, scratch)) {
    for (NodeId id : scratch)
      known[id / 64] &= ~(std::uint64_t{1} << (id % 64));
  } else {
    std::fill(known.begin(), known.end(), 0);
  }
  generation = cluster.generation();
}

// The entry a new key takes: a new one while fewer than `max` exist (room for `max` is reserved
// up front, so entries never move), else the least recently used (the lowest `used`).
template <typename Entry>
Entry& entry_for_new_key(std::vector<Entry>& entries, std::size_t max) {
  if (entries.capacity() < max) entries.reserve(max);
  if (entries.size() < max) return entries.emplace_back();
  return *std::min_element(entries.begin(), entries.end(),
                           [](const Entry& a, const Entry& b) { return a.used < b.used; });
}

}  // namespace capsim::fw
