// GPU sharing end to end: time-slicing OOM kills and their restarts, MPS and MIG memory limits,
// and the speed each device gives. Each case writes a small scenario and runs it with every
// invariant checked after every event (paranoid), so conservation across OOM restarts, replica
// limits and MIG slot bookkeeping are checked throughout.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;
namespace fs = std::filesystem;

namespace {

struct Run {
  MemoryRecorder rec;
  std::unique_ptr<World> world;
  const PodRecord& pod(const std::string& name) const {
    for (const auto& r : rec.pods) {
      if (world->pods[r.pod].name == name) return r;
    }
    FAIL("no pod " << name);
    return rec.pods.front();
  }
  std::vector<MemoryRecorder::Row> events_of(const std::string& name) const {
    std::vector<MemoryRecorder::Row> out;
    for (const auto& e : rec.events) {
      if (e.pod != kNoPod && world->pods[e.pod].name == name) out.push_back(e);
    }
    return out;
  }
};

Run run_yaml(const std::string& scenario, const std::string& manifests) {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("capsim-share-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << scenario;
  std::ofstream(dir / "pods.yaml") << manifests;
  Scenario s = load_scenario((dir / "s.yaml").string(), {});
  Run r;
  RunRequest req;
  req.paranoid = true;
  (void)run_scenario(s, req, r.rec);
  r.world = std::move(s.world);
  fs::remove_all(dir);
  return r;
}

std::string pod(const std::string& name, const std::string& arrival, const std::string& duration,
                const std::string& memory, const std::string& resource, const std::string& restart,
                const std::string& util = "0.3") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  annotations:\n    capsim.io/arrival: " + arrival +
         "\n    capsim.io/duration: " + duration + "\n    capsim.io/gpu-memory: " + memory +
         "\n    capsim.io/gpu-util: \"" + util + "\"\nspec:\n  restartPolicy: " + restart +
         "\n  containers:\n    - name: c\n      resources:\n        limits: {" + resource +
         ": 1}\n";
}

const char* kTimeSliced = R"(name: ts
devices: {context_switch_overhead: 0, memory_ramp: 60s}
device_plugin_configs:
  ts4: {version: v1, sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}}
cluster:
  pools:
    - {name: g, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi, sharing: ts4}
manifests: [pods.yaml]
)";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("time-slicing OOM-kills the pod that allocates last, and it restarts with back-off") {
    // A (50Gi) runs 0-600 s. B (40Gi) starts at 10 s and reaches its peak 60 s later: 90 Gi on
    // an 80 Gi GPU, so B is killed at 70 s. It restarts in place after 10 s, then 20, 40, 80 and
    // 160 s of back-off; each run dies 60 s in, while A is there:
    //   runs start at 10, 80, 160, 260, 400, 620 s; OOM at 70, 140, 220, 320, 460 s.
    // A ends at 600 s, so the run from 620 s survives and B completes at 620 + 300 = 920 s.
    Run r =
        run_yaml(kTimeSliced, pod("a", "0s", "600s", "50Gi", "nvidia.com/gpu", "Always") +
                                  pod("b", "10s", "300s", "40Gi", "nvidia.com/gpu", "OnFailure"));
    CHECK(r.pod("a").status == "completed");
    CHECK(r.pod("a").end == 600 * kSecond);
    CHECK(r.pod("b").status == "completed");
    CHECK(r.pod("b").end == 920 * kSecond);
    std::vector<SimTime> kills;
    for (const auto& e : r.events_of("b")) {
      if (e.kind == "oom_kill") kills.push_back(e.time / kSecond);
    }
    CHECK(kills == std::vector<SimTime>{70, 140, 220, 320, 460});
    CHECK(r.rec.metric("oom_kills") == 5);
    CHECK(r.rec.metric("pods_oom_killed") == 0);
    // Each killed run held a quarter of the GPU (one of 4 replicas) for 60 s: 5 x 60 x 0.25 s.
    CHECK(r.rec.metric("gpu_hours_lost_to_oom") == doctest::Approx(75.0 / 3600));
  }

  TEST_CASE(
      "an OOM-killed pod that does not restart ends oom_killed; without oversubscription nobody "
      "dies") {
    Run never =
        run_yaml(kTimeSliced, pod("a", "0s", "600s", "50Gi", "nvidia.com/gpu", "Always") +
                                  pod("b", "10s", "300s", "40Gi", "nvidia.com/gpu", "Never"));
    CHECK(never.pod("b").status == "oom_killed");
    CHECK(never.pod("b").end == 70 * kSecond);
    CHECK(never.rec.metric("pods_oom_killed") == 1);
    Run fits =
        run_yaml(kTimeSliced, pod("a", "0s", "600s", "40Gi", "nvidia.com/gpu", "Always") +
                                  pod("b", "10s", "300s", "40Gi", "nvidia.com/gpu", "Never"));
    CHECK(fits.rec.metric("oom_kills") == 0);
    CHECK(fits.rec.metric("pods_completed") == 2);
  }

  TEST_CASE("MPS and MIG fail an over-limit pod alone, whoever else is there") {
    const std::string mps = R"(name: mps
devices: {memory_ramp: 30s}
device_plugin_configs:
  mps2: {version: v1, sharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}}
cluster:
  pools:
    - {name: g, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi, sharing: mps2}
manifests: [pods.yaml]
)";
    // Each MPS client may pin floor(81920 MiB / 2) = 40 Gi; 41 Gi fails even alone.
    Run r = run_yaml(mps, pod("small", "0s", "100s", "30Gi", "nvidia.com/gpu", "Never") +
                              pod("big", "0s", "100s", "41Gi", "nvidia.com/gpu", "Never"));
    CHECK(r.pod("small").status == "completed");
    CHECK(r.pod("big").status == "oom_killed");
    CHECK(r.pod("big").end == 30 * kSecond);
    const std::string mig = R"(name: mig
devices: {memory_ramp: 30s}
cluster:
  pools:
    - {name: g, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi, mig: all-1g.10gb}
manifests: [pods.yaml]
)";
    // A 1g.10gb instance has 9856 MiB; 12 Gi does not fit, 9 Gi does, and they never interfere.
    Run m =
        run_yaml(mig, pod("ok", "0s", "100s", "9Gi", "nvidia.com/mig-1g.10gb", "Never") +
                          pod("too-big", "0s", "100s", "12Gi", "nvidia.com/mig-1g.10gb", "Never"));
    CHECK(m.pod("ok").status == "completed");
    CHECK(m.pod("too-big").status == "oom_killed");
  }

  TEST_CASE("a pod's speed follows its device: whole GPU, MIG slice, time-slicing, MPS") {
    // One pod with gpu_util 1 and 3600 s of reference (A100-80GB) work, on an H100 (relative
    // speed 2.28 in the catalog): whole GPU -> 3600 / 2.28; a 3g.40gb slice -> its capacity
    // c = sqrt(60/132 x 4/8) = 0.4767 times slower.
    auto runtime = [](const std::string& pool_extra, const std::string& resource) {
      const std::string s =
          "name: speed\ndevices: {context_switch_overhead: 0.1}\n"
          "device_plugin_configs:\n  ts2: {version: v1, sharing: {timeSlicing: {resources: [{name: "
          "nvidia.com/gpu, replicas: 2}]}}}\n"
          "cluster:\n  pools:\n    - {name: g, count: 1, gpu: {model: H100-80GB, count: 1}, cpu: "
          "32, memory: 256Gi" +
          pool_extra + "}\nmanifests: [pods.yaml]\n";
      Run r = run_yaml(s, pod("p", "0s", "3600s", "1Gi", resource, "Never", "1.0"));
      return to_seconds(r.pod("p").end - r.pod("p").start);
    };
    const double whole = runtime("", "nvidia.com/gpu");
    CHECK(whole == doctest::Approx(3600 / 2.28).epsilon(0.001));
    const double slice = runtime(", mig: all-3g.40gb", "nvidia.com/mig-3g.40gb");
    CHECK(slice == doctest::Approx(whole / std::sqrt(60.0 / 132 * 4.0 / 8)).epsilon(0.001));
    // Alone on a time-sliced GPU it runs at full speed (no co-runner, no switching).
    CHECK(runtime(", sharing: ts2", "nvidia.com/gpu") == doctest::Approx(whole).epsilon(0.001));
  }

  TEST_CASE(
      "two busy pods time-sliced on one GPU each get 1/2 of it minus the switching overhead") {
    const std::string s = R"(name: contention
devices: {context_switch_overhead: 0.1}
device_plugin_configs:
  ts2: {version: v1, sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}}
cluster:
  pools:
    - {name: g, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi, sharing: ts2}
manifests: [pods.yaml]
)";
    // Both u = 1 from t = 0: each gets c = 1/2 x 0.9 = 0.45, so 1000 s of work takes 2222 s.
    Run r = run_yaml(s, pod("x", "0s", "1000s", "1Gi", "nvidia.com/gpu", "Never", "1.0") +
                            pod("y", "0s", "1000s", "1Gi", "nvidia.com/gpu", "Never", "1.0"));
    CHECK(to_seconds(r.pod("x").end) == doctest::Approx(1000 / 0.45).epsilon(1e-4));
    CHECK(to_seconds(r.pod("y").end) == doctest::Approx(1000 / 0.45).epsilon(1e-4));
    // The GPU was busy 2 x 0.45 = 90 % of the time they ran.
    CHECK(r.rec.metric("gpu_hours_busy") ==
          doctest::Approx(0.9 * (1000 / 0.45) / 3600).epsilon(1e-3));
  }

  TEST_CASE("an idle MIG GPU is re-laid out toward what waiting pods ask for, and only when idle") {
    const std::string s = R"(name: relayout
devices:
  memory_ramp: 10s
  mig_reconfiguration: {enabled: true, duration: 2m, interval: 1m}
cluster:
  pools:
    - {name: g, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi, mig: all-1g.10gb}
manifests: [pods.yaml]
)";
    // The GPU has seven 1g.10gb instances and no 3g. The 3g pod waits; the first re-layout
    // check, one interval (60 s) after it was found unschedulable, re-lays the idle GPU out
    // (2 min), and the pod starts when the new instances appear at 180 s.
    Run idle = run_yaml(s, pod("big", "0s", "600s", "20Gi", "nvidia.com/mig-3g.40gb", "Never"));
    CHECK(idle.pod("big").status == "completed");
    CHECK(idle.pod("big").start == 180 * kSecond);
    int began = 0, ended = 0;
    for (const auto& e : idle.rec.events) {
      if (e.kind == "mig_reconfigure") {
        ++began;
        CHECK(e.time == 60 * kSecond);
      }
      if (e.kind == "mig_reconfigured") {
        ++ended;
        CHECK(e.time == 180 * kSecond);
      }
    }
    CHECK(began == 1);
    CHECK(ended == 1);
    // With a 1g pod running until 900 s the GPU is never idle before then: the re-layout waits
    // (checks keep running while the pod waits), starts once the GPU empties and ends 2 min later.
    // (gpu_util 0: the slice does not slow it, so it ends at exactly 900 s.)
    Run busy =
        run_yaml(s, pod("small", "0s", "900s", "5Gi", "nvidia.com/mig-1g.10gb", "Never", "0") +
                        pod("big", "1s", "600s", "20Gi", "nvidia.com/mig-3g.40gb", "Never"));
    CHECK(busy.pod("small").end == 900 * kSecond);
    CHECK(busy.pod("big").start >= 900 * kSecond + 2 * kMinute);
    CHECK(busy.pod("big").start <= 900 * kSecond + 3 * kMinute);
    CHECK(busy.pod("big").status == "completed");
  }
}
