// Cost attribution over shared GPUs, through the real loaders and device model: a MIG instance is
// charged max(memory slots / 8, compute slices / 7), a time-slice replica 1 / replicas, MIG compute
// slices in no instance are stranded, and the pool samples count the advertised and held
// instances and replicas. The parts still add up to the total (paranoid mode rechecks the
// ledger's rates after every event).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "fixtures/cli_run.hpp"
#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"

using namespace capsim;

namespace {

// One A100-80GB node with both GPUs in all-3g.40gb (two 3g.40gb instances: 6 of 7 compute
// slices, 8 of 8 memory slots), one whose single GPU is time-sliced 4 ways. $1.60 per GPU-hour.
// One MIG pod and one time-sliced pod, each 1 h of work on a whole GPU, start at t=0 (on a 3g
// instance the work takes longer); the run lasts 4 h.
const char* kScenario = R"(name: sharing-cost
simulation: {horizon: 4h, sample_interval: 10m}
cluster:
  pools:
    - name: mig
      count: 1
      gpu: {model: A100-80GB, count: 2}
      cpu: 64
      memory: 512Gi
      mig: {config: all-3g.40gb, strategy: mixed}
    - name: ts
      count: 1
      gpu: {model: A100-80GB, count: 1}
      cpu: 64
      memory: 512Gi
      sharing:
        sharing:
          timeSlicing:
            resources: [{name: nvidia.com/gpu, replicas: 4}]
manifests:
  - pods.yaml
)";

const char* kPodManifests = R"(apiVersion: v1
kind: Pod
metadata:
  name: m0
  labels: {kueue.x-k8s.io/queue-name: migq}
  annotations: {capsim.io/duration: 1h}
spec:
  restartPolicy: Never
  containers:
    - name: c
      resources:
        limits: {cpu: 1, memory: 1Gi, nvidia.com/mig-3g.40gb: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: t0
  labels: {kueue.x-k8s.io/queue-name: tsq}
  annotations: {capsim.io/duration: 1h}
spec:
  restartPolicy: Never
  containers:
    - name: c
      resources:
        limits: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}
)";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE(
      "MIG instances and time-slice replicas are charged by their share; unused slices are "
      "stranded") {
    testing::ScratchDir dir("cost-sharing");
    testing::write_file(dir.path / "s.yaml", kScenario);
    testing::write_file(dir.path / "pods.yaml", kPodManifests);
    Scenario s = load_scenario(dir.file("s.yaml"), {});
    testing::MemoryRecorder rec;
    RunRequest req;
    req.paranoid = true;
    (void)run_scenario(s, req, rec);
    auto m = [&](const std::string& k) { return rec.metric(k); };
    REQUIRE(m("pods_completed") == 2);
    // Hardware: 3 GPUs x $1.60 x 4 h = $19.20.
    CHECK(m("cost_hardware_usd") == doctest::Approx(19.2));
    // The MIG pod: max(4/8, 3/7) = 0.5 of a GPU for as long as it holds the instance (longer
    // than 1 h: a 3g instance is slower than the whole GPU): charged GPU-hours / 0.5 = hours.
    const double mig_hours_held = m("queue.migq.gpu_hours") / 0.5;
    CHECK(mig_hours_held >= 1.0 - 1e-9);
    CHECK(m("queue.migq.cost_usd") == doctest::Approx(0.5 * 1.6 * mig_hours_held));
    // The time-sliced pod: 1/4 of its GPU while it runs.
    std::map<std::string, double> run_hours;
    for (const PodRecord& r : rec.pods)
      run_hours[s.world->pods[r.pod].name] = to_hours(r.end - r.start);
    CHECK(mig_hours_held == doctest::Approx(run_hours["m0"]));
    CHECK(run_hours["m0"] > 1.5);  // a 3g instance: about 3/7 to 1/2 of the GPU's speed
    const double ts_hours_held = m("queue.tsq.gpu_hours") / 0.25;
    CHECK(ts_hours_held == doctest::Approx(run_hours["t0"]));
    CHECK(ts_hours_held >= 1.0 - 1e-9);
    CHECK(m("queue.tsq.cost_usd") == doctest::Approx(0.25 * 1.6 * ts_hours_held));
    // Stranded: 1 of 7 compute slices on each MIG GPU for the whole 4 h: 2 x 1/7 x $1.60 x 4.
    CHECK(m("cost_stranded_usd") == doctest::Approx(2.0 / 7.0 * 1.6 * 4));
    CHECK(m("cost_allocated_usd") + m("cost_idle_usd") + m("cost_stranded_usd") ==
          doctest::Approx(m("cost_total_usd")));
    // Pool samples: the MIG pool advertises 4 instances, the time-sliced one 4 replicas; at
    // t=0+ one of each is held.
    std::map<std::string, PoolSampleRecord> first_busy;
    for (const PoolSampleRecord& p : rec.pool_samples) {
      if (p.shared_units_allocated > 0 && !first_busy.count(p.pool)) first_busy[p.pool] = p;
    }
    REQUIRE(first_busy.count("mig") == 1);
    REQUIRE(first_busy.count("ts") == 1);
    CHECK(first_busy["mig"].shared_units_total == 4);
    CHECK(first_busy["mig"].shared_units_allocated == 1);
    CHECK(first_busy["ts"].shared_units_total == 4);
    CHECK(first_busy["ts"].shared_units_allocated == 1);
  }
}
