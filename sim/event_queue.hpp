// The pending-event set of the discrete-event engine: a binary min-heap of small POD events
// ordered by (time, seq). `seq` is a strictly increasing insertion counter, so two events at the
// same time run in the order they were scheduled; that total order is what makes a run
// reproducible. Comparator invariant: no two events share a seq, hence no two compare equal.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace capsim {

struct Event {
  SimTime time = 0;
  std::uint64_t seq = 0;
  std::uint32_t kind = 0;     // meaning defined by the handler
  std::uint32_t subject = 0;  // e.g. a pod or node index
  std::uint64_t data = 0;     // e.g. a version stamp for lazy cancellation
};

class EventQueue {
 public:
  void push(const Event& e);
  // Precondition: !empty().
  Event pop();
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  std::vector<Event> heap_;
};

}  // namespace capsim
