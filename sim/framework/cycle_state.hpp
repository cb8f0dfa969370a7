// Per-pod scratch space for one scheduling cycle. PreFilter/PreScore write what Filter/Score read
// (the pod's request vector, the scored resources), keyed by the plugin's slot so a lookup is an
// array index. The Scheduler clears it at the start of every cycle but keeps the allocations, so
// a plugin that reuses its StateData object allocates once per run, not once per pod.
#pragma once

#include <bitset>
#include <memory>
#include <vector>

#include "sim/pod.hpp"

namespace capsim::fw {

struct StateData {
  virtual ~StateData() = default;
};

inline constexpr std::size_t kMaxPlugins = 64;

class CycleState {
 public:
  explicit CycleState(std::size_t plugin_count = kMaxPlugins) : slots_(plugin_count) {}

  template <typename T>
  T* read(std::size_t slot) const {
    return static_cast<T*>(slots_[slot].get());
  }
  // Returns the slot's object, creating a T the first time; the plugin resets its fields.
  template <typename T>
  T& reuse(std::size_t slot) {
    if (!slots_[slot]) slots_[slot] = std::make_unique<T>();
    return *static_cast<T*>(slots_[slot].get());
  }

  void begin_cycle(PodId pod) {
    pod_ = pod;
    skip_filter_.reset();
    skip_score_.reset();
  }
  PodId pod() const { return pod_; }
  // The cycle is explained (capsim run --explain): plugins may report more than the decision
  // (DefaultPreemption: every candidate). The Scheduler sets it before each cycle.
  void set_explain(bool on) { explain_ = on; }
  bool explain() const { return explain_; }
  std::bitset<kMaxPlugins>& skip_filter() { return skip_filter_; }
  std::bitset<kMaxPlugins>& skip_score() { return skip_score_; }
  const std::bitset<kMaxPlugins>& skip_filter() const { return skip_filter_; }
  const std::bitset<kMaxPlugins>& skip_score() const { return skip_score_; }

 private:
  std::vector<std::unique_ptr<StateData>> slots_;
  std::bitset<kMaxPlugins> skip_filter_;
  std::bitset<kMaxPlugins> skip_score_;
  PodId pod_ = kNoPod;
  bool explain_ = false;
};

}  // namespace capsim::fw
