// The pod lifecycle state machine, the Job controller's accounting and the Timer tokens, each
// driven by hand: legal transitions keep the counts the run's end depends on, an illegal one is
// an invariant failure, stale timer stamps never fire, a Job replaces failures within its limit.
#include "sim/run/pod_lifecycle.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "fixtures/builders.hpp"
#include "sim/backoff.hpp"
#include "sim/check.hpp"
#include "sim/run/job_controller.hpp"
#include "sim/timer.hpp"

using namespace capsim;
using capsim::testing::TestWorld;

TEST_CASE("a pod's life from arrival to completion sets its times and leaves nothing counted") {
  TestWorld tw;
  tw.node("n").cpu("8").memory("32Gi").add();
  const PodId p = tw.pod("p").cpu("1").memory("1Gi").duration(10 * kSecond).add();
  Cluster c(tw.world());
  PodLifecycle life(c);
  life.arrive(p, 5);
  CHECK(c.pod(p).phase == PodPhase::kPending);
  CHECK(c.pod(p).submit == 5);
  life.start(p, 8);
  CHECK(c.pod(p).waited == 3);
  CHECK(life.busy());  // its completion is planned
  life.check_invariants();
  life.finish(p, PodPhase::kSucceeded);
  CHECK_FALSE(life.busy());
  life.check_invariants();
}

TEST_CASE("crash back-off, termination and replacement are counted until they resolve") {
  TestWorld tw;
  tw.node("n").cpu("8").memory("32Gi").add();
  const PodId a = tw.pod("a").cpu("1").memory("1Gi").duration(kHour).add();
  const PodId b = tw.pod("b").cpu("1").memory("1Gi").duration(kHour).add();
  Cluster c(tw.world());
  PodLifecycle life(c);
  for (PodId p : {a, b}) {
    life.arrive(p, 0);
    life.start(p, 0);
  }
  life.crash(a);  // restarting in place: 1 restart counted, b still finishing
  life.check_invariants();
  life.terminate(a);  // a crash-looping pod is evicted
  life.await_replacement(b, 10);
  CHECK(c.pod(b).phase == PodPhase::kPending);
  life.check_invariants();
  CHECK(life.busy());
  life.delete_preempted(a, 20);
  life.replaced(b);
  life.check_invariants();
  CHECK_FALSE(life.busy());
}

TEST_CASE("a transition from a phase the pod is not in is an invariant failure") {
  TestWorld tw;
  tw.node("n").cpu("8").memory("32Gi").add();
  const PodId p = tw.pod("p").cpu("1").memory("1Gi").duration(kHour).add();
  Cluster c(tw.world());
  PodLifecycle life(c);
  CHECK_THROWS_AS(life.start(p, 0), InvariantError);  // never arrived
  life.arrive(p, 0);
  CHECK_THROWS_AS(life.arrive(p, 0), InvariantError);
  CHECK_THROWS_AS(life.finish(p, PodPhase::kSucceeded), InvariantError);  // not running
  CHECK_THROWS_AS(life.replaced(p), InvariantError);  // it awaits no replacement
}

TEST_CASE("a timer fires only its latest stamp") {
  Timer t;
  const std::uint64_t first = t.arm();
  CHECK(t.fires(first));
  const std::uint64_t second = t.arm();
  CHECK_FALSE(t.fires(first));
  CHECK(t.fires(second));
  t.cancel();
  CHECK_FALSE(t.fires(second));
}

TEST_CASE("back-off doubles from its base to its cap") {
  // The kubelet's CrashLoopBackOff: 10 s, 20 s, 40 s, ... 5 min.
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 0) == 10 * kSecond);
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 1) == 10 * kSecond);
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 3) == 40 * kSecond);
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 5) == 160 * kSecond);
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 6) == 5 * kMinute);  // 320 s capped
  CHECK(exponential_backoff(10 * kSecond, 5 * kMinute, 1000) == 5 * kMinute);
}

TEST_CASE("a Job creates pods up to its parallelism, replaces failures within its limit") {
  TestWorld tw;
  tw.node("n").cpu("8").memory("32Gi").add();
  JobSpec job;
  job.name = "train";
  job.parallelism = 2;
  job.completions = 3;
  job.pod_template.max_restarts = 1;
  tw.world().jobs.push_back(job);
  Cluster c(tw.world());
  JobController jobs(tw.world(), c);
  std::vector<PodId> made;
  auto admit = [&](PodId p) { made.push_back(p); };
  jobs.reconcile(0, 0, admit);
  REQUIRE(made.size() == 2);
  CHECK(tw.world().pods[made[0]].name == "train-0");
  CHECK(tw.world().pods[made[1]].name == "train-1");
  jobs.on_pod_ended(made[0], JobController::Outcome::kFailed, 5, admit);  // 1 failure: replaced
  REQUIRE(made.size() == 3);
  CHECK(tw.world().pods[made[2]].name == "train-2");
  CHECK(tw.world().pods[made[2]].arrival == 5);
  jobs.on_pod_ended(made[1], JobController::Outcome::kFailed, 6, admit);  // 2 > limit of 1
  CHECK(made.size() == 3);
  // 1 of 3 done, none active: two more (parallelism 2, 1 + 2 = 3 completions possible).
  jobs.on_pod_ended(made[2], JobController::Outcome::kSucceeded, 7, admit);
  CHECK(made.size() == 5);
  jobs.on_pod_ended(made[3], JobController::Outcome::kDeleted, 8, admit);  // never replaced
  CHECK(made.size() == 5);
}
