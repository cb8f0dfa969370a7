#include "sim/engine.hpp"

#include <fmt/format.h>

#include "sim/check.hpp"

namespace capsim {

std::uint64_t Engine::schedule(SimTime at, std::uint32_t kind, std::uint32_t subject,
                               std::uint64_t data) {
  CAPSIM_CHECK(at >= now_, fmt::format("an event of kind {} was scheduled at t={}us, before the "
                                       "current time t={}us",
                                       kind, at, now_));
  const std::uint64_t seq = next_seq_++;
  queue_.push(Event{at, seq, kind, subject, data});
  return seq;
}

bool Engine::step() {
  if (stopped_ || queue_.empty()) return false;
  const Event e = queue_.pop();
  CAPSIM_CHECK(e.time >= now_, "the clock must never move backwards");
  now_ = e.time;
  ++processed_;
  InvariantContext::current_event() = static_cast<std::int64_t>(e.seq);
  handler_->handle(e, *this);
  InvariantContext::current_event() = -1;
  return true;
}

void Engine::run() {
  while (step()) {
  }
}

void Engine::run_until(SimTime t) {
  while (!stopped_ && !queue_.empty() && queue_.top().time <= t)
    step();
  if (!stopped_ && t > now_) now_ = t;
}

}  // namespace capsim
