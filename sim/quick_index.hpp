// Bitsets over a cluster's nodes, kept with their QuickNode copies, from which a scheduling
// cycle learns which nodes could meet a pod's necessary quick requirement without reading every
// copy: at a 100,000-GPU fleet most nodes lack the free GPUs or the GPU model a pod needs, and
// scanning their copies one by one was most of a cycle's filtering.
//
// Two conditions are indexed, both necessary for a node to pass the requirement's checks on the
// copy (QuickRequirement::met_by), so the nodes an index leaves out are exactly nodes that the
// copy would have rejected:
// - a level: min(free units, free count) of the cluster's quick device, capped at kLevels. A node
//   with units >= u and count >= d has a level of at least min(u, d, kLevels);
// - the node's GPU model.
// The caller still checks each candidate's copy in full.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/node.hpp"

namespace capsim {

class QuickIndex {
 public:
  static constexpr int kLevels = 16;

  void resize(std::size_t nodes) {
    words_ = (nodes + 63) / 64;
    levels_.assign(static_cast<std::size_t>(kLevels) * words_, 0);
    level_.assign(nodes, 0);
    model_.assign(nodes, kNoGpuModel);
    by_model_.clear();
  }

  // A node's level: min(free units, free count) of the quick device, within [0, kLevels].
  static std::uint8_t level_of(std::int32_t units, std::int32_t count) {
    return static_cast<std::uint8_t>(std::clamp<std::int32_t>(std::min(units, count), 0, kLevels));
  }

  // Records node `id`'s level (free units and count of the quick device) and GPU model.
  void update(std::uint32_t id, std::int32_t units, std::int32_t count, GpuModelId model) {
    const std::uint8_t level = level_of(units, count);
    const std::uint8_t old = level_[id];
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    const std::size_t word = id / 64;
    for (std::uint8_t k = std::min(old, level); k < std::max(old, level); ++k)
      levels_[k * words_ + word] ^= bit;  // level k + 1 reached or lost
    level_[id] = level;
    if (model_[id] != model) {
      if (model_[id] != kNoGpuModel) by_model_[model_[id]][word] &= ~bit;
      if (model != kNoGpuModel) {
        if (by_model_.size() <= model) by_model_.resize(model + std::size_t{1});
        if (by_model_[model].empty()) by_model_[model].assign(words_, 0);
        by_model_[model][word] |= bit;
      }
      model_[id] = model;
    }
  }

  // Whether node `id`'s entry is what update() would record for these values (invariant checks).
  bool agrees(std::uint32_t id, std::int32_t units, std::int32_t count, GpuModelId model) const {
    const std::uint8_t level = level_of(units, count);
    for (std::int32_t k = 0; k < kLevels; ++k) {
      const bool set = (levels_[static_cast<std::size_t>(k) * words_ + id / 64] >> (id % 64)) & 1;
      if (set != (k < level)) return false;
    }
    return level_[id] == level && model_[id] == model;
  }

  // Fills `mask` (a bit per node) with a superset of the nodes whose level is at least
  // min(level, kLevels) and, when `models` is given, whose model is listed. False, with `mask`
  // untouched, when neither condition narrows anything (level <= 0 and no models).
  bool candidates(std::int32_t level, const std::vector<GpuModelId>* models,
                  std::vector<std::uint64_t>& mask) const {
    if (level <= 0 && models == nullptr) return false;
    mask.assign(words_, 0);
    if (models != nullptr) {
      for (GpuModelId m : *models) {
        if (m >= by_model_.size() || by_model_[m].empty()) continue;
        for (std::size_t w = 0; w < words_; ++w)
          mask[w] |= by_model_[m][w];
      }
    } else {
      std::fill(mask.begin(), mask.end(), ~std::uint64_t{0});
    }
    if (level > 0) {
      const std::uint64_t* at =
          &levels_[static_cast<std::size_t>(std::min(level, kLevels) - 1) * words_];
      for (std::size_t w = 0; w < words_; ++w)
        mask[w] &= at[w];
    }
    return true;
  }

  // The first set bit of `mask` in [from, to), or `to` if none.
  static std::size_t next(std::span<const std::uint64_t> mask, std::size_t from, std::size_t to) {
    while (from < to) {
      const std::size_t word = from / 64;
      const std::uint64_t bits = mask[word] >> (from % 64);
      if (bits != 0) return std::min(to, from + static_cast<std::size_t>(std::countr_zero(bits)));
      from = (word + 1) * 64;
    }
    return to;
  }

 private:
  std::size_t words_ = 0;
  std::vector<std::uint64_t> levels_;  // kLevels rows of words_: row k has the nodes at > k
  std::vector<std::uint8_t> level_;    // per node
  std::vector<GpuModelId> model_;      // per node
  std::vector<std::vector<std::uint64_t>> by_model_;  // per GpuModelId (empty: no node has it)
};

}  // namespace capsim
