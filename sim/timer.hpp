// A cancellable timer for events that may be overtaken (ns-3's EventId, kept lazy). The event
// queue cannot remove an event, so an event that may become stale carries the stamp its timer had
// when it was armed, and its handler acts only if the timer still `fires()` that stamp. Arming
// again or cancelling moves the stamp on, which turns every earlier event of the timer into a
// no-op. A Timer is always valid: a default one has never been armed and fires nothing that was
// never armed.
//
// Pods carry two (sim/pod.hpp): `completion` (the kPodFinish event, re-armed whenever the pod's
// rate changes) and `run` (the events of one run of the pod on its node: the memory peak, the
// restart after a crash back-off, the end of a grace period). Whatever ends the run or the
// pod's stay on the node cancels them.
#pragma once

#include <cstdint>

namespace capsim {

class Timer {
 public:
  // A new stamp for an event about to be scheduled; earlier stamps no longer fire.
  [[nodiscard]] std::uint64_t arm() { return ++stamp_; }
  // Earlier stamps no longer fire.
  void cancel() { ++stamp_; }
  // Whether an event armed with `stamp` is still the live one.
  bool fires(std::uint64_t stamp) const { return stamp == stamp_; }

 private:
  std::uint64_t stamp_ = 0;
};

}  // namespace capsim
