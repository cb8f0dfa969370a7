#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "sim/check.hpp"

using namespace capsim;

namespace {
struct Log final : EventHandler {
  std::vector<std::pair<SimTime, std::uint32_t>> seen;
  std::function<void(const Event&, Engine&)> extra;
  void handle(const Event& e, Engine& eng) override {
    seen.emplace_back(e.time, e.subject);
    if (extra) extra(e, eng);
  }
};
}  // namespace

TEST_CASE("events run in time order and, at equal times, in scheduling order") {
  Log log;
  Engine eng(log);
  eng.schedule(50, 0, 1);
  eng.schedule(10, 0, 2);
  eng.schedule(50, 0, 3);
  eng.schedule(10, 0, 4);
  eng.schedule(30, 0, 5);
  eng.run();
  std::vector<std::pair<SimTime, std::uint32_t>> want{{10, 2}, {10, 4}, {30, 5}, {50, 1}, {50, 3}};
  CHECK(log.seen == want);
  CHECK(eng.now() == 50);
  CHECK(eng.processed() == 5);
}

TEST_CASE("an event scheduled for now during processing runs after the ones already queued") {
  Log log;
  Engine eng(log);
  log.extra = [](const Event& e, Engine& en) {
    if (e.subject == 1) en.schedule(en.now(), 0, 9);
  };
  eng.schedule(5, 0, 1);
  eng.schedule(5, 0, 2);
  eng.run();
  CHECK(log.seen == std::vector<std::pair<SimTime, std::uint32_t>>{{5, 1}, {5, 2}, {5, 9}});
}

TEST_CASE("run_until stops at the horizon and advances the clock to it") {
  Log log;
  Engine eng(log);
  eng.schedule(10, 0, 1);
  eng.schedule(20, 0, 2);
  eng.schedule(30, 0, 3);
  eng.run_until(20);
  CHECK(log.seen.size() == 2);
  CHECK(eng.now() == 20);
  CHECK(eng.pending() == 1);
  eng.run_until(25);
  CHECK(eng.now() == 25);
  CHECK(eng.step());
  CHECK_FALSE(eng.step());
}

TEST_CASE("scheduling an event in the past is an invariant violation") {
  Log log;
  Engine eng(log);
  eng.schedule(10, 0, 1);
  eng.run();
  CHECK_THROWS_AS(eng.schedule(5, 0, 2), InvariantError);
}

TEST_CASE("the event queue keeps order across many interleaved pushes and pops") {
  EventQueue q;
  std::uint64_t seq = 0;
  // A hold model: pop one, push one later, with repeated times.
  for (int i = 0; i < 100; ++i)
    q.push(Event{(i * 37) % 50, seq++, 0, 0, 0});
  SimTime last_t = -1;
  std::uint64_t last_seq = 0;
  for (int i = 0; i < 1000; ++i) {
    Event e = q.pop();
    CHECK((e.time > last_t || (e.time == last_t && e.seq > last_seq)));
    last_t = e.time;
    last_seq = e.seq;
    q.push(Event{e.time + (i * 13) % 7, seq++, 0, 0, 0});
  }
}
