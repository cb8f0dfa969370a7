// The scenario's `failures:` section and `checkpoints:` rules: rates by cause in either unit or
// as an MTBF, pools and models checked against the fleet, a failure trace checked row by row,
// the seed derived from the run seed unless given, and every mistake an error at its field.
#include "tools/loaders/failure_config.hpp"

#include <doctest/doctest.h>

#include <string>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kCluster =
    "seed: 3\n"
    "cluster:\n  pools:\n    - {name: h100, count: 2, cpu: 64, memory: 512Gi, gpu: {model: "
    "H100-80GB, count: 8}}\n"
    "workload:\n  synthetic:\n    window: 1h\n    tenants:\n      - {name: t, rate_per_hour: 2, "
    "gpus: 1, duration: 30m}\n";

Scenario load(const std::string& extra, const std::string& trace = "") {
  MemoryFiles files;
  files.add("mem/s.yaml", std::string(kCluster) + extra);
  if (!trace.empty()) files.add("mem/f.csv", trace);
  return load_scenario("mem/s.yaml", LoadOptions{}, files);
}

std::string error_of(const std::string& extra, const std::string& trace = "") {
  try {
    (void)load(extra, trace);
  } catch (const InputError& e) {
    return e.where().to_string() + ": " + e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("failure rates read per GPU-day, per node-day or as an MTBF, with a repair draw") {
  const Scenario s = load(
      "failures:\n  rates:\n"
      "    - {cause: hbm, per_gpu_day: 0.001, repair: 4h}\n"
      "    - {pool: h100, cause: host, mtbf: 100d, repair: {exponential: {mean: 2h}}}\n"
      "    - {gpu_model: H100-80GB, cause: nic, per_node_day: 0.5, repair: 30m}\n");
  const FailureConfig& f = s.sim.failures;
  REQUIRE(f.rates.size() == 3);
  CHECK(f.enabled());
  CHECK(f.rates[0].cause == FailureCause::kHbm);
  CHECK(f.rates[0].per_day == doctest::Approx(0.001));
  CHECK(f.rates[1].per_day == doctest::Approx(0.01));
  CHECK(f.rates[1].pool == "h100");
  CHECK(f.rates[2].gpu_model != kNoGpuModel);
  RandomStream r(1);
  CHECK(f.rates[0].repair(r) == doctest::Approx(4 * 3600.0));
  // The default seed comes from the run seed's own stream; an explicit one wins.
  CHECK(f.seed == RandomStream(3, "failures").next_u64());
  CHECK(load("failures: {seed: 9, rates: []}\n").sim.failures.seed == 9);
  // No section: nothing fails.
  CHECK_FALSE(load("").sim.failures.enabled());
}

TEST_CASE("a failure rule's mistakes are errors at the field, with suggestions") {
  CHECK(error_of("failures:\n  rates:\n    - {cause: hmb, per_gpu_day: 1, repair: 1h}\n")
            .find("unknown failure cause 'hmb' (did you mean 'hbm'?)") != std::string::npos);
  CHECK(error_of("failures:\n  rates:\n    - {cause: host, per_gpu_day: 1, repair: 1h}\n")
            .find("cause host fails whole nodes: give per_node_day or mtbf") != std::string::npos);
  CHECK(error_of("failures:\n  rates:\n    - {cause: gpu, repair: 1h}\n")
            .find("a rate needs per_gpu_day or mtbf") != std::string::npos);
  CHECK(error_of("failures:\n  rates:\n    - {pool: h10, cause: gpu, per_gpu_day: 1, repair: 1h}\n")
            .find("no node is in pool 'h10' (did you mean 'h100'?)") != std::string::npos);
  CHECK(error_of("failures:\n  rates:\n    - {pol: h100, cause: gpu, per_gpu_day: 1, repair: 1h}\n")
            .find("unknown field 'pol' (did you mean 'pool'?)") != std::string::npos);
  CHECK(error_of("failures:\n  rate: []\n").find("unknown field 'rate'") != std::string::npos);
  CHECK(error_of("failures:\n  rates:\n    - {gpu_model: B200, cause: gpu, per_gpu_day: 1, "
                 "repair: 1h}\n")
            .find("no node of the scenario has GPU model B200") != std::string::npos);
}

TEST_CASE("a failure trace names nodes of the fleet, a GPU for GPU causes and none for nodes") {
  const Scenario s = load("failures: {trace: f.csv}\n",
                          "time,node,gpu,cause,repair\n"
                          "# a comment\n"
                          "5h,h100-1,,host,2h\n"
                          "90,h100-0,7,hbm,1d\n");
  const auto& t = s.sim.failures.trace;
  REQUIRE(t.size() == 2);
  CHECK(t[0].time == 90 * kSecond);  // in time order
  CHECK(t[0].gpu == 7);
  CHECK(t[0].repair == kDay);
  CHECK(t[1].gpu == -1);
  CHECK(t[1].cause == FailureCause::kHost);
  const std::string head = "time,node,gpu,cause,repair\n";
  CHECK(error_of("failures: {trace: f.csv}\n", head + "1h,h100-9,,host,1h\n").find("mem/f.csv:2") !=
        std::string::npos);
  CHECK(error_of("failures: {trace: f.csv}\n", head + "1h,h100-0,,gpu,1h\n")
            .find("cause gpu fails one GPU: give its index") != std::string::npos);
  CHECK(error_of("failures: {trace: f.csv}\n", head + "1h,h100-0,8,gpu,1h\n")
            .find("node h100-0 has 8 GPU(s)") != std::string::npos);
  CHECK(error_of("failures: {trace: f.csv}\n", head + "1h,h100-0,1,host,1h\n")
            .find("leave gpu empty") != std::string::npos);
  CHECK(error_of("failures: {trace: f.csv}\n", "time,node,gpus,cause,repair\n")
            .find("unknown column 'gpus' (did you mean 'gpu'?)") != std::string::npos);
}

TEST_CASE("the first matching checkpoint rule gives a pod its interval, cost and restart") {
  const Scenario s = load(
      "checkpoints:\n"
      "  - {match: {queue: nope}, interval: 5m}\n"
      "  - {match: {name: \"t-*\"}, interval: 1h, cost: 2m, restart: 5m}\n");
  REQUIRE(!s.world->pods.empty());
  for (const PodSpec& p : s.world->pods) {
    CHECK(p.checkpoint.interval == kHour);
    CHECK(p.checkpoint.cost == 2 * kMinute);
    CHECK(p.checkpoint.restart == 5 * kMinute);
  }
  CHECK(error_of("checkpoints:\n  - {interval: 0s}\n").find("must be positive") !=
        std::string::npos);
  CHECK(error_of("checkpoints:\n  - {interval: 1h, costs: 1m}\n").find("unknown field 'costs'") !=
        std::string::npos);
}

namespace {

// A scenario of one node and the pods of `manifests`, with `extra` (checkpoint rules).
Scenario load_manifests(const std::string& manifests, const std::string& extra = "") {
  MemoryFiles files;
  files
      .add("mem/s.yaml",
           "cluster:\n  nodes:\n    - {name: n1, cpu: 64, memory: 256Gi, gpu: {model: "
           "A100-80GB, count: 8}}\nmanifests: [m.yaml]\n" +
               extra)
      .add("mem/m.yaml", manifests);
  return load_scenario("mem/s.yaml", LoadOptions{}, files);
}

std::string manifest_error(const std::string& manifests) {
  try {
    (void)load_manifests(manifests);
  } catch (const InputError& e) {
    return e.where().to_string() + ": " + e.message();
  }
  return "no error";
}

std::string pod_with(const std::string& name, const std::string& annotations) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  annotations: {capsim.io/duration: 2h" + annotations +
         "}\nspec:\n  containers: [{name: c}]\n---\n";
}

}  // namespace

TEST_CASE("capsim.io/checkpoint-* annotations give a pod its checkpoints and win over the rules") {
  const Scenario s =
      load_manifests(pod_with("annotated",
                              ", capsim.io/checkpoint-interval: 30m, capsim.io/checkpoint-cost: "
                              "90s, capsim.io/checkpoint-restart: 4m") +
                         pod_with("ruled", ""),
                     "checkpoints:\n  - {interval: 2h, cost: 5m}\n");
  REQUIRE(s.world->pods.size() == 2);
  for (const PodSpec& p : s.world->pods) {
    const bool annotated = p.name == "annotated";
    CHECK(p.checkpoint.interval == (annotated ? 30 * kMinute : 2 * kHour));
    CHECK(p.checkpoint.cost == (annotated ? 90 * kSecond : 5 * kMinute));
    CHECK(p.checkpoint.restart == (annotated ? 4 * kMinute : 0));
  }
}

TEST_CASE("a bad checkpoint annotation is an error at its line, naming the annotation") {
  struct Row {
    const char* annotations;
    const char* error;
  };
  const Row rows[] = {
      {", capsim.io/checkpoint-interval: 0s", "capsim.io/checkpoint-interval must be a positive"},
      {", capsim.io/checkpoint-interval: soon", "'soon' is not a duration"},
      {", capsim.io/checkpoint-cost: 1m",
       "capsim.io/checkpoint-cost needs "
       "capsim.io/checkpoint-interval"},
      {", capsim.io/checkpoint-interval: 1h, capsim.io/checkpoint-restart: -1m",
       "capsim.io/checkpoint-restart: '-1m' is negative"},
      {", capsim.io/checkpoint-intervall: 1h", "did you mean 'capsim.io/checkpoint-interval'"},
  };
  for (const Row& r : rows) {
    CAPTURE(std::string(r.annotations));
    const std::string e = manifest_error(pod_with("p", r.annotations));
    CHECK(e.find("mem/m.yaml:5") != std::string::npos);
    CHECK(e.find(r.error) != std::string::npos);
  }
}

}  // namespace capsim
