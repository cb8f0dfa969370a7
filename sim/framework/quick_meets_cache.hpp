// What nodes' QuickNode copies say of a pod's quick requirements, remembered between cycles per
// pair of requirements. At fleet scale a cycle reads hundreds of copies to find the feasible
// nodes it scores, and the pods that arrive make a handful of distinct requirements while only
// the nodes a bind or a release touched since a requirement's last cycle change: the rest of the
// answers are read back from three bits instead of a copy.
//
// An answer is kept only for a node whose copy has not changed since it was read (every change
// to a copy is a generation bump that Cluster::changed_since names; when the bumps outrun its
// log, the entry forgets every node), so it is what QuickRequirement::met_by says now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/framework/plugin.hpp"

namespace capsim::fw {

class QuickMeetsCache {
 public:
  // Pairs of requirements remembered at once; the least recently used is replaced.
  static constexpr std::size_t kEntries = 16;

  // What a node's copy says: it fails the necessary requirement (the filters reject it), it
  // meets the sufficient one (they accept it), or neither (the plugins must be asked).
  enum class Answer : std::uint8_t { kRejected, kAccepted, kAskPlugins };

  // A requirement with its model list held by value (QuickRequirement points to one).
  struct Key {
    QuickRequirement req;  // `models` cleared
    bool present = false;  // false: no requirement (nothing is known to be sufficient)
    bool has_models = false;
    std::vector<GpuModelId> models;
    bool matches(const QuickRequirement* r) const;
    void assign(const QuickRequirement* r);
  };

  struct Entry {
    Key necessary_key, sufficient_key;
    std::uint64_t generation = 0;         // the cluster's generation the bits are up to date with
    std::uint64_t used = 0;               // uses_ at its last use
    std::vector<std::uint64_t> known;     // a bit per node: its bits below are the answer
    std::vector<std::uint64_t> meets;     // meets the necessary requirement
    std::vector<std::uint64_t> accepted;  // and the sufficient one
    std::uint64_t reads = 0;              // copies read since the entry was made

    // Node `id`'s answer: remembered, or read from `copy`. `necessary` and `sufficient` are the
    // requirements the entry was found for.
    Answer answer(NodeId id, const QuickNode& copy, const QuickRequirement& necessary,
                  const QuickRequirement* sufficient) {
      const std::size_t w = id / 64;
      const std::uint64_t bit = std::uint64_t{1} << (id % 64);
      if ((known[w] & bit) == 0) {
        known[w] |= bit;
        ++reads;
        const bool met = necessary.met_by(copy);
        const bool accept = met && sufficient != nullptr && sufficient->met_by(copy);
        meets[w] = met ? meets[w] | bit : meets[w] & ~bit;
        accepted[w] = accept ? accepted[w] | bit : accepted[w] & ~bit;
      }
      if ((meets[w] & bit) == 0) return Answer::kRejected;
      return (accepted[w] & bit) != 0 ? Answer::kAccepted : Answer::kAskPlugins;
    }
  };

  // The entry for the pair on `cluster` (a cache serves one cluster), with every node changed
  // since its last use forgotten; a fresh one if there was none. `sufficient` null: no copy is
  // known to be enough.
  Entry& entry(const Cluster& cluster, const QuickRequirement& necessary,
               const QuickRequirement* sufficient);

 private:
  std::vector<Entry> entries_;
  std::uint64_t uses_ = 0;
  std::vector<NodeId> changed_;
};

}  // namespace capsim::fw
