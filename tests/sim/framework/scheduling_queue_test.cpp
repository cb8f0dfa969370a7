#include "sim/framework/scheduling_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"

using namespace capsim;

namespace {
struct Rig {
  capsim::testing::TestWorld tw;
  fw::ReasonTable reasons;
  std::unique_ptr<PluginContext> ctx;
  std::unique_ptr<fw::Framework> fw;
  Rig() {
    ctx = std::make_unique<PluginContext>(PluginContext{tw.world(), reasons, 1});
    fw = std::make_unique<fw::Framework>(build_builtin_profile("default-scheduler", *ctx).config);
  }
  std::uint64_t plugin_bit(const std::string& name) const {
    for (std::size_t i = 0; i < fw->plugin_count(); ++i) {
      if (fw->plugin(i).name() == name) return std::uint64_t{1} << i;
    }
    return 0;
  }
};
}  // namespace

TEST_CASE("activeQ pops by priority, then by time in the queue") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  q.add(0, 0, 10);
  q.add(1, 100, 20);
  q.add(2, 0, 5);
  q.add(3, 100, 20);
  std::vector<PodId> order;
  while (auto p = q.pop(30))
    order.push_back(*p);
  CHECK(order == std::vector<PodId>{1, 3, 2, 0});
}

TEST_CASE("backoff doubles from 1s to a 10s cap") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  CHECK(q.backoff_duration(1) == 1 * kSecond);
  CHECK(q.backoff_duration(2) == 2 * kSecond);
  CHECK(q.backoff_duration(3) == 4 * kSecond);
  CHECK(q.backoff_duration(4) == 8 * kSecond);
  CHECK(q.backoff_duration(5) == 10 * kSecond);
  CHECK(q.backoff_duration(50) == 10 * kSecond);
}

TEST_CASE("a cluster event moves only pods rejected by a plugin that registered for it") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  q.add(0, 0, 0);
  q.add(1, 0, 0);
  REQUIRE(q.pop(0) == 0);
  REQUIRE(q.pop(0) == 1);
  q.add_unschedulable(0, r.plugin_bit("NodeResourcesFit"), 0);
  q.add_unschedulable(1, r.plugin_bit("TaintToleration"), 0);
  CHECK(q.unschedulable() == 2);
  // A pod finishing frees resources: helps the Fit rejection, not the taint one.
  CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, 5 * kSecond) == 1);
  CHECK(q.unschedulable() == 1);
  // Past its 1 s backoff, pod 0 went straight to activeQ.
  CHECK(q.pop(5 * kSecond) == 0);
  CHECK_FALSE(q.pop(5 * kSecond).has_value());
  // A node change can help a taint rejection.
  CHECK(q.on_cluster_event(fw::kEvNodeChanged, 6 * kSecond) == 1);
  CHECK(q.pop(6 * kSecond) == 1);
}

TEST_CASE("a pod moved while still backing off waits in backoffQ until it expires") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  q.add(7, 0, 0);
  REQUIRE(q.pop(100) == 7);  // attempt 1 at t=100us
  q.add_unschedulable(7, r.plugin_bit("NodeResourcesFit"), 100);
  q.on_cluster_event(fw::kEvAssignedPodDeleted, 200);
  CHECK(q.backoff() == 1);
  CHECK(q.next_backoff_expiry() == 100 + kSecond);
  q.flush_backoff(100 + kSecond - 1);
  CHECK_FALSE(q.has_active());
  q.flush_backoff(100 + kSecond);
  CHECK(q.pop(100 + kSecond) == 7);
}

TEST_CASE("unschedulable pods are flushed after podMaxInUnschedulablePodsDuration") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  q.add(3, 0, 0);
  REQUIRE(q.pop(0) == 3);
  q.add_unschedulable(3, r.plugin_bit("TaintToleration"), 0);
  q.flush_unschedulable_leftover(5 * kMinute);
  CHECK(q.unschedulable() == 1);  // not longer than 5 minutes yet
  q.flush_unschedulable_leftover(5 * kMinute + 1);
  CHECK(q.unschedulable() == 0);
  CHECK(q.pop(5 * kMinute + 1) == 3);
}

TEST_CASE("each event moves the interested pods that failed since, and keeps the others") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  const std::uint64_t fit = r.plugin_bit("NodeResourcesFit");
  const std::uint64_t taint = r.plugin_bit("TaintToleration");
  auto pop_all = [&q](SimTime now) {
    std::vector<PodId> out;
    while (auto p = q.pop(now))
      out.push_back(*p);
    return out;
  };
  // Added (so sequenced) in this order; activeQ pops equal priority and time by it.
  const std::vector<PodId> failed = {40, 3, 17, 8, 25, 1};
  for (PodId p : failed)
    q.add(p, 0, 0);
  REQUIRE(pop_all(0) == failed);
  for (PodId p : failed)
    q.add_unschedulable(p, p == 17 ? taint : fit, 0);
  // A pod deletion helps the Fit rejections only.
  CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, 2 * kSecond) == 5);
  CHECK(q.unschedulable() == 1);
  CHECK(pop_all(2 * kSecond) == std::vector<PodId>{40, 3, 8, 25, 1});
  // Three fail again after pod 17, which still waits; a node change moves all four.
  for (PodId p : std::vector<PodId>{25, 1, 40})
    q.add_unschedulable(p, fit, 2 * kSecond);
  CHECK(q.unschedulable() == 4);
  CHECK(q.on_cluster_event(fw::kEvNodeChanged, 10 * kSecond) == 4);
  CHECK(q.unschedulable() == 0);
  // Pod 17 has waited since 0, the others since 2 s.
  CHECK(pop_all(10 * kSecond) == std::vector<PodId>{17, 40, 25, 1});
  CHECK(q.on_cluster_event(fw::kEvNodeChanged, 11 * kSecond) == 0);
}

TEST_CASE("a pod removed while unschedulable and queued again moves once, as its new self") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  const std::uint64_t fit = r.plugin_bit("NodeResourcesFit");
  q.add(5, 0, 0);
  q.add(6, 0, 0);
  REQUIRE(q.pop(0) == 5);
  REQUIRE(q.pop(0) == 6);
  q.add_unschedulable(5, fit, 0);
  q.add_unschedulable(6, fit, 0);
  q.remove(5);
  CHECK_FALSE(q.contains(5));
  CHECK(q.unschedulable() == 1);
  CHECK(q.size() == 1);
  // Pod 5 comes back (a recreated pod), fails again and waits with pod 6.
  q.add(5, 0, kSecond);
  REQUIRE(q.pop(kSecond) == 5);
  q.add_unschedulable(5, fit, kSecond);
  CHECK(q.unschedulable() == 2);
  CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, 20 * kSecond) == 2);
  CHECK(q.unschedulable() == 0);
  // Pod 6 has waited since 0, pod 5 since it failed again at 1 s.
  std::vector<PodId> order;
  while (auto p = q.pop(20 * kSecond))
    order.push_back(*p);
  CHECK(order == std::vector<PodId>{6, 5});
  // Removing every pod leaves nothing behind to move.
  q.add_unschedulable(5, fit, 20 * kSecond);
  q.remove(5);
  q.remove(6);
  CHECK(q.size() == 0);
  CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, 30 * kSecond) == 0);
}

TEST_CASE("pods that fail alike once their backoff is capped are moved and popped as a group") {
  Rig r;
  fw::SchedulingQueue q(*r.fw);
  q.enable_groups();
  const std::uint64_t fit = r.plugin_bit("NodeResourcesFit");
  const fw::EventMask fit_events = r.fw->events_moving(fit);
  for (PodId p = 0; p < 4; ++p)
    q.add(p, 0, 0);
  // Five failed rounds, 100 s apart: the fifth attempt reaches the 10 s backoff cap.
  SimTime t = 0;
  for (int round = 1; round <= 5; ++round) {
    t = round * 100 * kSecond;
    if (round > 1) CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, t) == 4);
    for (PodId want = 0; want < 4; ++want) {
      const auto popped = q.pop_any(t);
      REQUIRE(popped.has_value());
      CHECK(popped->group == fw::SchedulingQueue::kNoGroup);
      CHECK(popped->q.pod == want);
      q.add_unschedulable(want, fit, t, 0, {fit_events, false});
    }
    CHECK(q.group_count() == (round < 5 ? 0u : 1u));
  }
  CHECK(q.size() == 4);
  CHECK(q.unschedulable() == 4);
  CHECK(q.contains(2));
  // An event Fit did not register for leaves the group; one it did moves it, into backoffQ
  // while its members' 10 s backoff runs.
  CHECK(q.on_cluster_event(fw::kEvAssignedPodAdded, t + kSecond) == 0);
  CHECK(q.on_cluster_event(fw::kEvAssignedPodDeleted, t + 5 * kSecond) == 4);
  CHECK(q.backoff() == 4);
  CHECK(q.next_backoff_expiry() == t + 10 * kSecond);
  const SimTime now = t + 10 * kSecond;
  q.flush_backoff(now);
  CHECK(q.active() == 4);
  q.add(9, 0, now);  // a newcomer queues behind the group, which entered earlier

  // The group pops with its first member's key; that member can be taken out alone.
  auto popped = q.pop_any(now);
  REQUIRE(popped.has_value());
  const std::uint32_t g = popped->group;
  REQUIRE(g != fw::SchedulingQueue::kNoGroup);
  CHECK(popped->q.pod == 0);
  CHECK(popped->q.timestamp == t);
  const auto [member, owed] = q.take_member(g, now);
  CHECK(member == 0);
  CHECK(owed == 0);
  q.done(0);
  // The rest of it pops next, keyed by pod 1, and fails whole.
  popped = q.pop_any(now);
  REQUIRE(popped.has_value());
  CHECK(popped->group == g);
  CHECK(popped->q.pod == 1);
  CHECK(q.defer(g, {fit_events, false}) == 3);
  // A pod placed between its members (same priority and timestamp, seq between pod 2's and
  // pod 3's): pod 3 counts as still queued, and a split gives it back to activeQ.
  fw::QueuedPodInfo between = popped->q;
  between.seq += 1;  // pod 2's seq
  CHECK(q.deferred_after(between));
  CHECK(q.split(g, between) == 1);
  popped = q.pop_any(now);
  REQUIRE(popped.has_value());
  CHECK(popped->group != fw::SchedulingQueue::kNoGroup);
  CHECK(popped->q.pod == 3);
  CHECK(q.defer(popped->group, {fit_events, true}) == 1);
  // Then the newcomer.
  popped = q.pop_any(now);
  REQUIRE(popped.has_value());
  CHECK(popped->q.pod == 9);
  q.done(9);
  CHECK_FALSE(q.pop_any(now).has_value());
  // At the end of the cycle the deferred members failed once more, each with its signature.
  q.finish_deferred(now);
  CHECK(q.unschedulable() == 3);
  std::vector<std::tuple<PodId, std::int64_t, bool>> members;
  q.for_each_member([&](PodId p, std::int64_t n, fw::SchedulingQueue::Signature sig) {
    members.emplace_back(p, n, sig.unresolvable);
  });
  std::sort(members.begin(), members.end());
  CHECK(members == std::vector<std::tuple<PodId, std::int64_t, bool>>{
                       {1, 1, false}, {2, 1, false}, {3, 1, true}});
  CHECK(q.group_count() == 2);  // different signatures stay apart
}
