#include "sim/framework/scheduling_queue.hpp"

#include <doctest/doctest.h>

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
