// Scores a Score plugin computes from a node's compact copy (Cluster::score_nodes) and a few
// numbers of the pod (its key), remembered between cycles per key. At fleet scale a cycle scores
// hundreds of nodes, and the pods that arrive have a handful of request shapes while only the
// nodes a bind or a release touched since a shape's last cycle change: the rest of that shape's
// scores are read back instead of computed again.
//
// A remembered score is exactly the computed one: it is kept only for a node whose copy has not
// changed since (every change to a copy is a generation bump that Cluster::changed_since names;
// when the bumps outrun its log, the entry forgets every node), and only for a plugin whose score
// is a function of the copy and the key alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/cluster.hpp"

namespace capsim::fw {

class NodeScoreCache {
 public:
  // Keys remembered at once; the least recently used is replaced.
  static constexpr std::size_t kEntries = 16;

  // Writes to out[k] the score of nodes[k] for pods with `key`: the remembered one where the
  // node's copy has not changed since it was computed, else compute(copy), remembered when it
  // fits in a byte (every plugin's score does: it lies in [0, 100]).
  template <typename Compute>
  void score(const Cluster& cluster, std::span<const std::int64_t> key,
             std::span<const NodeId> nodes, std::span<std::int64_t> out, Compute&& compute) {
    Entry& e = entry(cluster, key);
    const std::vector<ScoreNode>& copies = cluster.score_nodes();
    std::uint64_t* const known = e.known.data();
    std::uint8_t* const scores = e.scores.data();
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const NodeId id = nodes[k];
      const std::uint64_t bit = std::uint64_t{1} << (id % 64);
      if (known[id / 64] & bit) {
        out[k] = scores[id];
        continue;
      }
      const std::int64_t v = compute(copies[id]);
      ++computed_;
      out[k] = v;
      if (v >= 0 && v <= 255) {
        scores[id] = static_cast<std::uint8_t>(v);
        known[id / 64] |= bit;
      }
    }
  }

  // How many scores were computed rather than read back, since construction.
  std::uint64_t computed() const { return computed_; }

 private:
  struct Entry {
    std::vector<std::int64_t> key;
    std::uint64_t cluster = 0;         // Cluster::instance()
    std::uint64_t generation = 0;      // the cluster's generation the bits are up to date with
    std::uint64_t used = 0;            // uses_ at its last use
    std::vector<std::uint64_t> known;  // a bit per node: scores[node] holds its score
    std::vector<std::uint8_t> scores;
  };
  // The entry for `key` on `cluster`, its known bits cleared for every node changed since its
  // last use; a fresh one (nothing known) if there was none.
  Entry& entry(const Cluster& cluster, std::span<const std::int64_t> key);

  std::vector<Entry> entries_;
  std::uint64_t uses_ = 0;
  std::uint64_t computed_ = 0;
  std::vector<NodeId> changed_;
};

}  // namespace capsim::fw
