// Benchmarks of the engine's hot paths.
//   BM_EventQueue/N          hold model on a queue of N pending events: pop one, push one later.
//   BM_SchedulingCycle/N     one scheduling cycle + bind + release on an N-node GPU cluster kept
//                            half full, with the default profile (pods placed per second).
// Target (issue: core): >= 20,000 placements/s at 5,000 nodes on one core; kube-scheduler's
// own CI threshold is about 680 pods/s at 5,000 nodes.
#include <benchmark/benchmark.h>

#include <deque>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"
#include "sim/engine.hpp"
#include "sim/framework/scheduler.hpp"

using namespace capsim;

static void BM_EventQueue(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  EventQueue q;
  RandomStream rng(1, "bench");
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    q.push(Event{static_cast<SimTime>(rng.below(1000000)), seq++, 0, 0, 0});
  }
  for (auto _ : state) {
    Event e = q.pop();
    q.push(Event{e.time + 1 + static_cast<SimTime>(rng.below(1000000)), seq++, 0, 0, 0});
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueue)->Arg(1000)->Arg(100000)->Arg(1000000);

static void BM_SchedulingCycle(benchmark::State& state) {
  const auto nodes = static_cast<int>(state.range(0));
  capsim::testing::TestWorld tw;
  for (int i = 0; i < nodes; ++i) {
    tw.node("n" + std::to_string(i)).cpu("128").memory("1Ti").gpus(8, "B200").add();
  }
  // A pool of pod shapes, reused: 1, 2, 4 or 8 GPUs with proportional cpu/memory.
  const int pool = 4 * nodes;
  RandomStream rng(7, "bench-pods");
  for (int i = 0; i < pool; ++i) {
    const int g = 1 << rng.below(4);
    tw.pod("p" + std::to_string(i))
        .cpu(std::to_string(8 * g))
        .memory(std::to_string(64 * g) + "Gi")
        .gpus(g)
        .add();
  }
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 1};
  fw::Framework framework(build_builtin_profile("default-scheduler", ctx).config);
  Cluster cluster(tw.world());
  fw::Scheduler sched(framework, cluster, reasons, RandomStream(1, "tie"));
  std::deque<PodId> running;
  PodId next = 0;
  std::int64_t evaluated = 0;
  std::int64_t cycles = 0;
  auto place = [&]() -> bool {
    const PodId p = next;
    next = (next + 1) % static_cast<PodId>(pool);
    if (cluster.pod(p).node != kNoNode) return false;
    auto r = sched.schedule_one(p);
    evaluated += r.evaluated_nodes;
    ++cycles;
    if (r.outcome != fw::ScheduleResult::Outcome::kScheduled) return false;
    cluster.bind(p, r.placement.node, r.placement.holdings);
    running.push_back(p);
    return true;
  };
  // Fill to about half the GPUs.
  while (cluster.totals().gpus_allocated < 0.5 * cluster.totals().gpus_total)
    (void)place();
  const std::size_t target = running.size();
  std::int64_t placed = 0;
  evaluated = 0;
  cycles = 0;
  for (auto _ : state) {
    if (place()) ++placed;
    // Keep occupancy steady: release the oldest pods.
    while (running.size() > target) {
      cluster.unbind(running.front());
      running.pop_front();
    }
  }
  state.SetItemsProcessed(placed);
  state.counters["nodes_per_cycle"] = benchmark::Counter(
      static_cast<double>(evaluated) / static_cast<double>(std::max<std::int64_t>(cycles, 1)));
  state.counters["placements_per_s"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SchedulingCycle)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);
