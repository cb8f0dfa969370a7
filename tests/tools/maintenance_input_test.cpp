// The scenario's `maintenance:` windows and policy/v1 PodDisruptionBudget manifests as read:
// nodes of a pool or named in order, the defaults (one node at a time, the GPU Operator's 300 s
// drain timeout), budgets with counts or percentages, and every mistake an error at its field.
#include <doctest/doctest.h>

#include <string>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kCluster =
    "seed: 3\n"
    "cluster:\n  pools:\n    - {name: h100, count: 3, cpu: 64, memory: 512Gi, gpu: {model: "
    "H100-80GB, count: 8}}\n"
    "    - {name: cpu, count: 1, cpu: 32, memory: 64Gi}\n"
    "workload:\n  synthetic:\n    window: 1h\n    tenants:\n      - {name: t, rate_per_hour: 2, "
    "gpus: 1, duration: 30m}\n";

Scenario load(const std::string& extra, const std::string& manifest = "") {
  MemoryFiles files;
  files.add("mem/s.yaml",
            std::string(kCluster) + extra + (manifest.empty() ? "" : "manifests: [m.yaml]\n"));
  if (!manifest.empty()) files.add("mem/m.yaml", manifest);
  return load_scenario("mem/s.yaml", LoadOptions{}, files);
}

std::string error_of(const std::string& extra, const std::string& manifest = "") {
  try {
    (void)load(extra, manifest);
  } catch (const InputError& e) {
    return e.where().to_string() + ": " + e.message();
  }
  return "no error";
}

const char* kPdb =
    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: ml}\n"
    "spec:\n";

}  // namespace

TEST_CASE("a maintenance window takes a pool's nodes, or named nodes in order, with defaults") {
  const Scenario s = load(
      "maintenance:\n"
      "  - {name: upgrade, start: 2h, pool: h100, duration: 20m}\n"
      "  - {name: nic, start: 1d, nodes: [h100-2, cpu-0], max_parallel: 2, drain_timeout: 0s,\n"
      "     on_timeout: keep-cordoned}\n");
  const auto& w = s.sim.maintenance.windows;
  REQUIRE(w.size() == 2);
  CHECK(w[0].name == "upgrade");
  CHECK(w[0].start == 2 * kHour);
  CHECK(w[0].nodes == std::vector<NodeId>{0, 1, 2});
  CHECK(w[0].max_parallel == 1);
  CHECK(w[0].duration == 20 * kMinute);
  CHECK(w[0].drain_timeout == 300 * kSecond);
  CHECK_FALSE(w[0].keep_cordoned_on_timeout);
  CHECK(w[1].nodes == std::vector<NodeId>{2, 3});
  CHECK(w[1].max_parallel == 2);
  CHECK(w[1].drain_timeout == 0);
  CHECK(w[1].keep_cordoned_on_timeout);
  CHECK_FALSE(load("").sim.maintenance.enabled());
}

TEST_CASE("maintenance mistakes are errors at their field") {
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, pool: h10}\n")
            .find("maintenance[0].pool: no node is in pool 'h10' (did you mean 'h100'?)") !=
        std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, nodes: [h100-7]}\n")
            .find("no node is named 'h100-7'") != std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, nodes: [h100-1, h100-1]}\n")
            .find("named twice") != std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, pool: h100, nodes: [h100-1]}\n")
            .find("give `pool` or `nodes`, not both") != std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h}\n  - {name: u, start: 2h}\n")
            .find("already defined") != std::string::npos);
  CHECK(
      error_of("maintenance:\n  - {name: u, start: 1h, max_parallel: 0}\n").find("max_parallel") !=
      std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, on_timeout: keep}\n")
            .find("unknown on_timeout 'keep'") != std::string::npos);
  CHECK(error_of("maintenance:\n  - {name: u, start: 1h, strat: 1h}\n")
            .find("maintenance[0].strat: unknown field 'strat'") != std::string::npos);
}

TEST_CASE("a PodDisruptionBudget reads counts, percentages, its selector and its policy") {
  const Scenario s =
      load("", std::string(kPdb) +
                   "  maxUnavailable: 25%\n  selector: {matchLabels: {app: web}, "
                   "matchExpressions: [{key: tier, operator: NotIn, values: [dev]}]}\n"
                   "  unhealthyPodEvictionPolicy: AlwaysAllow\nstatus: {disruptionsAllowed: 1}\n");
  REQUIRE(s.world->disruption_budgets.size() == 1);
  const DisruptionBudgetSpec& b = s.world->disruption_budgets[0];
  CHECK(b.name == "web");
  CHECK(b.namespace_ == "ml");
  REQUIRE(b.max_unavailable);
  CHECK(b.max_unavailable->value == 25);
  CHECK(b.max_unavailable->percent);
  CHECK_FALSE(b.min_available);
  CHECK(b.unhealthy == UnhealthyPodEvictionPolicy::kAlwaysAllow);
  CHECK(b.selector.requirements.size() == 2);
  LabelSet dev, prod;
  Scenario& m = const_cast<Scenario&>(s);
  dev.set(m.world->strings.intern("app"), m.world->strings.intern("web"));
  prod = dev;
  dev.set(m.world->strings.intern("tier"), m.world->strings.intern("dev"));
  CHECK_FALSE(selector_matches(b.selector, dev));
  CHECK(selector_matches(b.selector, prod));
}

TEST_CASE("PodDisruptionBudget mistakes are errors at their field") {
  CHECK(error_of("", std::string(kPdb) + "  minAvailable: 1\n  maxUnavailable: 1\n")
            .find("spec.maxUnavailable: minAvailable and maxUnavailable cannot both be set") !=
        std::string::npos);
  CHECK(error_of("", std::string(kPdb) + "  minAvailable: 150%\n")
            .find("minAvailable '150%' is not a percentage") != std::string::npos);
  CHECK(error_of("", std::string(kPdb) + "  minAvailable: -1\n").find("spec.minAvailable") !=
        std::string::npos);
  CHECK(
      error_of("", std::string(kPdb) + "  minAvailable: 1\n  unhealthyPodEvictionPolicy: Always\n")
          .find("unknown unhealthyPodEvictionPolicy 'Always'") != std::string::npos);
  CHECK(
      error_of("", std::string(kPdb) +
                       "  selector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}\n")
          .find("a label selector takes In, NotIn, Exists or DoesNotExist") != std::string::npos);
  CHECK(error_of("", std::string(kPdb) + "  minAvailable: 1\n  maxUnavaliable: 1\n")
            .find("maxUnavaliable") != std::string::npos);
}

}  // namespace capsim
