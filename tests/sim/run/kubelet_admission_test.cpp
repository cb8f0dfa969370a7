// Pods with spec.nodeName: bound at arrival by the kubelet's admission, no scheduling cycle.
#include "sim/run/kubelet_admission.hpp"

#include <doctest/doctest.h>

#include "fixtures/cli_run.hpp"
#include "fixtures/memory_recorder.hpp"
#include "sim/input_error.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;
using capsim::testing::ScratchDir;
using capsim::testing::write_file;

namespace {

constexpr const char* kScenario = R"(name: bound
seed: 1
cluster:
  pools:
    - {name: gpu, count: 2, cpu: 16, memory: 64Gi, gpu: {model: A100-80GB, count: 4}}
manifests: [pods.yaml]
)";

std::string pod(const std::string& name, const std::string& node, const std::string& cpu, int gpus,
                const std::string& arrival) {
  std::string requests = "{cpu: \"" + cpu + "\", memory: 1Gi";
  std::string limits;
  if (gpus > 0) {
    requests += ", nvidia.com/gpu: " + std::to_string(gpus);
    limits = "\n        limits: {nvidia.com/gpu: " + std::to_string(gpus) + "}";
  }
  requests += "}";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  annotations: {capsim.io/duration: 1h, capsim.io/arrival: " + arrival + "}\nspec:\n" +
         (node.empty() ? "" : "  nodeName: " + node + "\n") +
         "  restartPolicy: Never\n  containers:\n    - name: c\n      resources:\n"
         "        requests: " +
         requests + limits + "\n";
}

struct Run {
  MemoryRecorder rec;
  RunOutcome out;
};

void run(const std::string& pods, Run& r) {
  ScratchDir dir("kubelet");
  write_file(dir.file("scenario.yaml"), kScenario);
  write_file(dir.file("pods.yaml"), pods);
  Scenario s = load_scenario(dir.file("scenario.yaml"), LoadOptions{});
  r.out = run_scenario(s, RunRequest{}, r.rec);
}

const PodRecord& record_of(const Run& r, PodId p) {
  for (const PodRecord& rec : r.rec.pods) {
    if (rec.pod == p) return rec;
  }
  FAIL("no record of pod " << p);
  return r.rec.pods.front();
}

}  // namespace

TEST_CASE("a pod with spec.nodeName starts on that node at arrival, with the first free GPUs") {
  Run r;
  // `first` takes GPUs 0 and 1 of gpu-1; `pinned` arrives later and gets the next two.
  run(pod("first", "gpu-1", "2", 2, "0") + "---\n" + pod("pinned", "gpu-1", "2", 2, "60") +
          "---\n" + pod("free", "", "2", 4, "120"),
      r);
  const PodRecord& first = record_of(r, 0);
  const PodRecord& pinned = record_of(r, 1);
  const PodRecord& free = record_of(r, 2);
  CHECK(first.node == "gpu-1");
  CHECK(first.devices == "gpu:0,1");
  CHECK(first.attempts == 0);  // no scheduling cycle
  CHECK(first.status == "completed");
  CHECK(pinned.node == "gpu-1");
  CHECK(pinned.devices == "gpu:2,3");
  CHECK(pinned.start == 60 * kSecond);
  // The scheduler sees gpu-1 full and places the 4-GPU pod on gpu-0.
  CHECK(free.node == "gpu-0");
  CHECK(free.attempts == 1);
}

TEST_CASE("a bound pod that does not fit fails as the kubelet fails it: OutOf<resource>") {
  Run r;
  run(pod("filler", "gpu-0", "12", 0, "0") + "---\n" + pod("too-big", "gpu-0", "8", 0, "10") +
          "---\n" + pod("no-gpu", "gpu-0", "1", 8, "20"),
      r);
  CHECK(record_of(r, 0).status == "completed");
  const PodRecord& big = record_of(r, 1);
  CHECK(big.status == "failed");
  CHECK(big.start < 0);
  CHECK(record_of(r, 2).status == "failed");
  std::vector<std::string> fails;
  for (const auto& e : r.rec.events) {
    if (e.kind == "fail") fails.push_back(e.detail);
  }
  REQUIRE(fails.size() == 2);
  CHECK(fails[0] ==
        "OutOfcpu: Node didn't have enough resource: cpu, requested: 8000, used: 12000, "
        "capacity: 16000");
  CHECK(fails[1] ==
        "OutOfnvidia.com/gpu: Node didn't have enough resource: nvidia.com/gpu, requested: 8, "
        "used: 0, capacity: 4");
}

TEST_CASE("spec.nodeName naming no node is an input error with a suggestion") {
  ScratchDir dir("kubelet-bad");
  write_file(dir.file("scenario.yaml"), kScenario);
  write_file(dir.file("pods.yaml"), pod("p", "gpu-7x", "1", 0, "0"));
  try {
    (void)load_scenario(dir.file("scenario.yaml"), LoadOptions{});
    FAIL("the load should fail");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("spec.nodeName 'gpu-7x' names no node") != std::string::npos);
    CHECK(std::string(e.what()).find("pods.yaml") != std::string::npos);
  }
}
