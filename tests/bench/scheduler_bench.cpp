// Benchmarks of the engine's hot paths.
//   BM_EventQueue/N          hold model on a queue of N pending events: pop one, push one later.
//   BM_SchedulingCycle/N     one scheduling cycle + bind + release on an N-node GPU cluster kept
//                            half full, with the default profile (pods placed per second).
//   BM_SchedulingCycleWithoutSpreadAndAffinity/N  the same, the profile without
//                            PodTopologySpread and InterPodAffinity.
//   BM_SpreadConstrainedCycle/N  the same with every pod spread over zones and hosts.
//   BM_SchedulingCycleObserved/N  the same with the CycleObserver `capsim run` installs (the
//                            pending-reason rows, to a NullRecorder) and --explain off: what a
//                            recorded run pays per cycle for explain being available.
//   BM_CongestedRetry/N/R    failed attempts of a backlog on a full N-node cluster that changes
//                            every R attempts (see below).
// Target (issue: core): >= 20,000 placements/s at 5,000 nodes on one core; kube-scheduler's
// own CI threshold is about 680 pods/s at 5,000 nodes.
#include <benchmark/benchmark.h>

#include <deque>
#include <vector>

#include "fixtures/builders.hpp"
#include "models/plugin_registry.hpp"
#include "models/yaml_reader.hpp"
#include "sim/engine.hpp"
#include "sim/framework/cycle_recorder.hpp"
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

// The profiles the cycle benches compare: the default, and the default without the two plugins
// that skip pods without spread constraints or pod affinity (what capsim ran before them).
const char* kDefaultProfile = "schedulerName: default-scheduler\n";
const char* kWithoutSpreadAndAffinity =
    "schedulerName: default-scheduler\nplugins:\n  multiPoint:\n"
    "    disabled: [{name: PodTopologySpread}, {name: InterPodAffinity}]\n";

// One scheduling cycle + bind + release per iteration on `nodes` 8-GPU nodes in 4 zones, kept
// half full. With `spread`, every pod carries a zone constraint (maxSkew 1, DoNotSchedule) and
// a hostname one (ScheduleAnyway) over the pods of its app (8 apps).
// With `observed`, the scheduler carries the CycleObserver a recorded run installs.
static void run_cycles(benchmark::State& state, int nodes, const char* profile, bool spread,
                       bool observed = false) {
  capsim::testing::TestWorld tw;
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    tw.node(name)
        .cpu("128")
        .memory("1Ti")
        .gpus(8, "B200")
        .label("topology.kubernetes.io/zone", "z" + std::to_string(i % 4))
        .label("kubernetes.io/hostname", name)
        .add();
  }
  // A pool of pod shapes, reused: 1, 2, 4 or 8 GPUs with proportional cpu/memory.
  const int pool = 4 * nodes;
  RandomStream rng(7, "bench-pods");
  for (int i = 0; i < pool; ++i) {
    const int g = 1 << rng.below(4);
    const std::string app = "app" + std::to_string(i % 8);
    const PodId p = tw.pod("p" + std::to_string(i))
                        .cpu(std::to_string(8 * g))
                        .memory(std::to_string(64 * g) + "Gi")
                        .gpus(g)
                        .label("app", app)
                        .add();
    if (spread) {
      LabelSelector sel;
      sel.present = true;
      sel.requirements.push_back({tw.sym("app"), LabelOp::kIn, {tw.sym(app)}});
      TopologySpreadConstraint zone;
      zone.topology_key = tw.sym("topology.kubernetes.io/zone");
      zone.selector = sel;
      TopologySpreadConstraint host = zone;
      host.topology_key = tw.sym("kubernetes.io/hostname");
      host.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
      tw.world().pods[p].pod_rules.mut().spread = {zone, host};
    }
  }
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 1};
  const YamlNode doc = YamlNode::load_string(profile, "bench-profile.yaml");
  fw::Framework framework(build_profile(doc, nullptr, ctx).config);
  Cluster cluster(tw.world());
  fw::Scheduler sched(framework, cluster, reasons, RandomStream(1, "tie"));
  NullRecorder null_recorder;
  fw::CycleRecorder observer(null_recorder, framework, reasons, {});
  struct NoEvents final : EventHandler {
    void handle(const Event&, Engine&) override {}
  } no_events;
  Engine clock(no_events);  // time stays 0: the rows' times do not matter here
  if (observed) sched.set_observer(&observer, &clock);
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

static void BM_SchedulingCycle(benchmark::State& state) {
  run_cycles(state, static_cast<int>(state.range(0)), kDefaultProfile, false);
}
static void BM_SchedulingCycleObserved(benchmark::State& state) {
  run_cycles(state, static_cast<int>(state.range(0)), kDefaultProfile, false, true);
}
BENCHMARK(BM_SchedulingCycleObserved)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SchedulingCycle)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);

// The same pods without PodTopologySpread and InterPodAffinity in the profile: the difference to
// BM_SchedulingCycle is what the two plugins cost pods that use neither.
static void BM_SchedulingCycleWithoutSpreadAndAffinity(benchmark::State& state) {
  run_cycles(state, static_cast<int>(state.range(0)), kWithoutSpreadAndAffinity, false);
}
BENCHMARK(BM_SchedulingCycleWithoutSpreadAndAffinity)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond);

// Every pod spread over zones (DoNotSchedule) and hosts (ScheduleAnyway): PreFilter and PreScore
// count the app's pods over all nodes each cycle, as upstream recomputes them.
static void BM_SpreadConstrainedCycle(benchmark::State& state) {
  run_cycles(state, static_cast<int>(state.range(0)), kDefaultProfile, true);
}
BENCHMARK(BM_SpreadConstrainedCycle)->Arg(100)->Arg(300)->Arg(1000)->Unit(benchmark::kMicrosecond);

// Failed attempts on a full cluster with a backlog, as a congested fleet makes them: `nodes`
// 8-GPU nodes of three models, every GPU taken, and 4,000 waiting pods of nine shapes (1 to 8
// GPUs, some limited to a model) retried in turn. Every `retries` attempts one running pod ends
// and another takes its GPUs, so the cluster changed (as after a completion) and the next
// attempt of each shape evaluates every node again; the others reuse it (the failure memo).
// Items: failed attempts.
static void BM_CongestedRetry(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const std::int64_t retries = state.range(1);
  capsim::testing::TestWorld tw;
  const char* models[] = {"A100-80GB", "H100-80GB", "B200"};
  for (int i = 0; i < nodes; ++i) {
    tw.node("n" + std::to_string(i)).cpu("192").memory("2Ti").gpus(8, models[i % 3]).add();
  }
  // Running pods: one 8-GPU pod a node, plus a spare set that swaps in on each change.
  std::vector<PodId> running;
  for (int i = 0; i < 2 * nodes; ++i)
    running.push_back(tw.pod("r" + std::to_string(i)).cpu("64").memory("512Gi").gpus(8).add());
  RandomStream rng(15, "bench-backlog");
  std::vector<PodId> waiting;
  for (int i = 0; i < 4000; ++i) {
    const std::int32_t g = 1 << rng.below(4);
    auto pb = tw.pod("w" + std::to_string(i))
                  .cpu(std::to_string(8 * g))
                  .memory(std::to_string(64 * g) + "Gi")
                  .gpus(g);
    if (const auto m = rng.below(4); m < 2) pb.gpu_models({models[m + 1]});
    waiting.push_back(pb.add());
  }
  fw::ReasonTable reasons;
  PluginContext ctx{tw.world(), reasons, 1};
  const YamlNode doc = YamlNode::load_string(kDefaultProfile, "bench-profile.yaml");
  fw::Framework framework(build_profile(doc, nullptr, ctx).config);
  Cluster cluster(tw.world());
  fw::Scheduler sched(framework, cluster, reasons, RandomStream(1, "tie"));
  auto bind_all_gpus = [&](PodId p, NodeId n) {
    std::vector<Holding> h;
    for (std::uint16_t u = 0; u < 8; ++u)
      h.push_back(replica_of(cluster.node(n), u));
    cluster.bind(p, n, h);
  };
  for (int i = 0; i < nodes; ++i)
    bind_all_gpus(running[static_cast<std::size_t>(i)], static_cast<NodeId>(i));
  std::size_t next = 0;
  std::int64_t attempts = 0, changes = 0;
  for (auto _ : state) {
    const PodId p = waiting[next++ % waiting.size()];
    auto r = sched.schedule_one(p);
    if (r.outcome != fw::ScheduleResult::Outcome::kUnschedulable) state.SkipWithError("placed");
    if (++attempts % retries == 0) {
      // A completion on node k, and a spare 8-GPU pod takes its place.
      const auto k = static_cast<std::size_t>(changes % nodes);
      const std::size_t out = (changes / nodes) % 2 == 0 ? k : k + static_cast<std::size_t>(nodes);
      const std::size_t in = (changes / nodes) % 2 == 0 ? k + static_cast<std::size_t>(nodes) : k;
      cluster.unbind(running[out]);
      bind_all_gpus(running[in], static_cast<NodeId>(k));
      ++changes;
    }
  }
  state.SetItemsProcessed(attempts);
  state.counters["remembered"] = benchmark::Counter(
      static_cast<double>(sched.remembered_failures()) / static_cast<double>(attempts));
}
BENCHMARK(BM_CongestedRetry)->Args({12500, 1000})->Args({12500, 20})->Unit(benchmark::kMicrosecond);
