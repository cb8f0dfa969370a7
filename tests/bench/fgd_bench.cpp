// Benchmarks of the FGD study's fill experiment (docs/fgd.md).
//   BM_FgdChoose              one FGD evaluation of an 8-GPU node for a GPU-share pod: F before
//                             and F after each GPU that fits (35 typical pods).
//   BM_FillExperiment/policy  a whole fill experiment on an openb-sized cluster (the trace's
//                             1,213-node mix, 6,212 GPUs) with ~10,800 synthetic openb-shaped
//                             pods inflated to 130 % of capacity: time per experiment.
// Target (issue 4): one experiment under 1 s on one core; the study's simulator takes ~10 min.
#include <benchmark/benchmark.h>

#include "models/device_model.hpp"
#include "models/fgd_profiles.hpp"
#include "models/fill_experiment.hpp"
#include "models/fragmentation.hpp"
#include "models/plugin_registry.hpp"
#include "models/plugins/fgd_score.hpp"
#include "sim/random.hpp"
#include "sim/simulation.hpp"
#include "tools/loaders/world_builder.hpp"

using namespace capsim;

namespace {

// The openb GPU-node mix (data README): model, GPUs, millicores, MiB, count.
struct NodeKind {
  const char* model;
  int gpus;
  std::int64_t cpu, mib;
  int count;
};
constexpr NodeKind kOpenbNodes[] = {
    {"G2", 8, 96000, 393216, 549},     {"T4", 2, 104000, 524288, 387},
    {"P100", 2, 16000, 122880, 107},   {"G3", 8, 128000, 786432, 39},
    {"V100M16", 4, 32000, 131072, 28}, {"P100", 2, 64000, 262144, 22},
    {"V100M32", 8, 96000, 786432, 21}, {"V100M16", 1, 8000, 32768, 19},
    {"T4", 4, 96000, 393216, 17},      {"V100M32", 4, 48000, 376832, 9},
    {"V100M16", 8, 64000, 262144, 7},  {"P100", 1, 8000, 61440, 3},
    {"A10", 1, 128000, 1048576, 2},    {"P100", 2, 8000, 61440, 2},
    {"V100M16", 8, 82000, 344064, 1},
};

// An openb-sized world: the node mix and 8,000 synthetic pods shaped like the default list
// (13 % CPU-only, 38 % GPU shares of its common sizes, the rest whole GPUs), inflated to 1.3.
std::unique_ptr<World> openb_like_world(std::uint64_t seed) {
  auto world = std::make_unique<World>();
  WorldBuilder b(*world, GpuCatalog::builtin());
  int i = 0;
  for (const NodeKind& k : kOpenbNodes) {
    for (int c = 0; c < k.count; ++c, ++i) {
      NodeSpec n;
      n.name = "node-" + std::to_string(i);
      n.capacity[kCpu] = k.cpu;
      n.capacity[kMemory] = k.mib << 20;
      n.capacity[kPods] = 1001;
      n.allocatable = n.capacity;
      b.add_node(std::move(n), &b.gpu_model(k.model, {}), k.gpus, std::nullopt, {});
    }
  }
  RandomStream rng(3, "bench-openb");
  const std::int32_t shares[] = {810, 810, 810, 470, 470, 320, 650, 250, 500, 100};
  const std::int64_t cpus[] = {1000, 2000, 4000, 6000, 8000, 12000, 16000};
  for (int p = 0; p < 8000; ++p) {
    PodSpec s;
    s.name = "pod-" + std::to_string(p);
    const double r = rng.uniform();
    std::int64_t cpu = cpus[rng.below(7)];
    if (r < 0.13) {
    } else if (r < 0.51) {
      s.gpu_milli = shares[rng.below(10)];
    } else {
      const std::int64_t g = r < 0.99 ? 1 : (r < 0.995 ? 2 : 8);
      s.requests.set(kNvidiaGpu, g);
      cpu *= g;
    }
    s.requests.set(kCpu, cpu);
    s.requests.set(kMemory, cpu << 22);
    b.add_pod(std::move(s), {});
  }
  b.finalize();
  FillOptions fo;
  fo.inflate_to = 1.3;
  (void)prepare_fill(*world, fo, seed);
  return world;
}

}  // namespace

static void BM_FgdChoose(benchmark::State& state) {
  auto world = openb_like_world(42);
  const FragmentationModel model(*world);
  plugins::GpuLeft g;
  for (std::int32_t l : {1000, 1000, 190, 530, 1000, 0, 680, 1000})
    g.left[g.n++] = l;
  const plugins::ShareRequest r{4000, 470, 1};
  for (auto _ : state) {
    benchmark::DoNotOptimize(plugins::fgd_choose(model, 0, 48000, g, r));
  }
  state.counters["typical_pods"] = static_cast<double>(model.typical().size());
}
BENCHMARK(BM_FgdChoose);

static void BM_FillExperiment(benchmark::State& state) {
  const auto profiles = fgd_profile_names();
  const std::string profile = profiles.at(static_cast<std::size_t>(state.range(0)));
  std::int64_t pods = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto world = openb_like_world(42);
    state.ResumeTiming();
    fw::ReasonTable reasons;
    PluginContext ctx{*world, reasons, 42};
    fw::Framework framework(build_builtin_profile(profile, ctx).config);
    FragmentationModel frag(*world);
    FillExperiment fill(*world, frag);
    RunConfig config;
    config.seed = 42;
    config.horizon = static_cast<SimTime>(world->pods.size() + 1) * kSecond;
    const SharingDeviceModel devices;  // the physics `capsim run` simulates
    RunModels models{devices};
    models.fragmentation = &frag;
    models.experiment = &fill;
    NullRecorder recorder;
    Simulation sim(*world, framework, reasons, recorder, config, models);
    RunInfo info;
    RunResult result = sim.run(info);
    benchmark::DoNotOptimize(result);
    pods = static_cast<std::int64_t>(world->pods.size());
    state.counters["alloc_at_100"] = fill.curve().allocation_ratio_at(100);
  }
  state.SetLabel(profile);
  state.counters["pods"] = static_cast<double>(pods);
}
BENCHMARK(BM_FillExperiment)->DenseRange(0, 5)->Unit(benchmark::kMillisecond)->Iterations(1);
