// The discrete-event engine: a virtual clock and the pending-event set. It knows nothing about
// pods or nodes; a handler gives events their meaning. The engine owns time: handlers read it
// through now() and can only schedule at or after it (scheduling in the past is an invariant
// violation). Single-threaded; one engine per run.
#pragma once

#include <cstdint>

#include "sim/event_queue.hpp"
#include "sim/time.hpp"

namespace capsim {

class Engine;

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(const Event& event, Engine& engine) = 0;
};

class Engine {
 public:
  explicit Engine(EventHandler& handler) : handler_(&handler) {}

  SimTime now() const { return now_; }
  // Schedules an event; returns its sequence number. Precondition: at >= now().
  std::uint64_t schedule(SimTime at, std::uint32_t kind, std::uint32_t subject = 0,
                         std::uint64_t data = 0);
  std::uint64_t schedule_after(SimDuration delay, std::uint32_t kind, std::uint32_t subject = 0,
                               std::uint64_t data = 0) {
    return schedule(now_ + delay, kind, subject, data);
  }

  // Processes the next event; false when none is pending or the engine was stopped.
  bool step();
  // Processes events until none is pending or stop() is called.
  void run();
  // Processes every event with time <= t, then advances the clock to t (if it is not past it).
  void run_until(SimTime t);
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  std::size_t pending() const { return queue_.size(); }
  bool has_pending() const { return !queue_.empty(); }
  SimTime next_time() const { return queue_.empty() ? kEndOfTime : queue_.top().time; }
  std::uint64_t processed() const { return processed_; }

 private:
  EventHandler* handler_;
  EventQueue queue_;
  SimTime now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  bool stopped_ = false;
};

}  // namespace capsim
