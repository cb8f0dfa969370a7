// The scenario's `autoscaler:` section as tools/loaders/scenario_loader.cpp reads its scale-down
// fields (docs/scenario-format.md, "Autoscaled pools"): upstream's defaults when absent, the
// values given, Karpenter-style consolidation, and every mistake an error at its field.
#include <doctest/doctest.h>

#include <string>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kScenario =
    "cluster:\n  pools:\n    - {name: b200, count: 1, gpu: {model: B200, count: 8}, cpu: 64, "
    "memory: 512Gi, autoscaling: {min: 0, max: 2}}\n"
    "workload:\n  synthetic:\n    window: 1h\n    tenants:\n      - {name: t, rate_per_hour: 2, "
    "gpus: 1, duration: 30m}\n";

Scenario load(const std::string& extra) {
  MemoryFiles files;
  files.add("mem/s.yaml", std::string(kScenario) + extra);
  return load_scenario("mem/s.yaml", LoadOptions{}, files);
}

std::string error_of(const std::string& extra) {
  try {
    (void)load(extra);
  } catch (const InputError& e) {
    return e.where().to_string() + ": " + e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the autoscaler section's scale-down fields default to upstream's and read as given") {
  const ScaleDownConfig d = load("").sim.scale_down;
  CHECK(d.utilization_threshold == doctest::Approx(0.5));
  CHECK(d.gpu_utilization_threshold == doctest::Approx(0.5));
  CHECK(d.delay_after_add == 10 * kMinute);
  CHECK(d.max_graceful_termination == 10 * kMinute);
  CHECK_FALSE(d.consolidation.enabled);

  const ScaleDownConfig s =
      load(
          "autoscaler:\n  scale_down_utilization_threshold: 0.3\n"
          "  scale_down_gpu_utilization_threshold: 0\n  scale_down_delay_after_add: 2m\n"
          "  max_graceful_termination: 90s\n"
          "  consolidation: {policy: when-empty, consolidate_after: 5m, replace: false}\n")
          .sim.scale_down;
  CHECK(s.utilization_threshold == doctest::Approx(0.3));
  CHECK(s.gpu_utilization_threshold == doctest::Approx(0.0));
  CHECK(s.delay_after_add == 2 * kMinute);
  CHECK(s.max_graceful_termination == 90 * kSecond);
  CHECK(s.consolidation.enabled);
  CHECK(s.consolidation.policy == ConsolidationPolicy::kWhenEmpty);
  CHECK(s.consolidation.consolidate_after == 5 * kMinute);
  CHECK_FALSE(s.consolidation.replace);
  // An empty consolidation section is Karpenter's defaults.
  const ConsolidationConfig k =
      load("autoscaler: {consolidation: {}}\n").sim.scale_down.consolidation;
  CHECK(k.enabled);
  CHECK(k.policy == ConsolidationPolicy::kWhenEmptyOrUnderutilized);
  CHECK(k.consolidate_after == 0);
  CHECK(k.replace);
}

TEST_CASE("a mistake in the autoscaler's scale-down fields is an error at its line") {
  struct Row {
    const char* yaml;
    const char* error;
  };
  const Row rows[] = {
      {"autoscaler: {scale_down_utilization_threshold: 1.5}\n", "it must be between 0 and 1"},
      {"autoscaler: {scale_down_delay_after_add: -1m}\n",
       "scale_down_delay_after_add: '-1m' is negative"},
      {"autoscaler: {consolidation: {policy: always}}\n",
       "unknown consolidation policy 'always' (supported: when-empty-or-underutilized, "
       "when-empty)"},
      {"autoscaler: {consolidation: {consolidate_after: -5s}}\n",
       "consolidate_after: '-5s' is negative"},
      {"autoscaler: {consolidation: {replace: maybe}}\n", "'maybe' is not true or false"},
      {"autoscaler: {consolidation: {consolidateAfter: 5m}}\n",
       "unknown field 'consolidateAfter' (did you mean 'consolidate_after'?)"},
  };
  for (const Row& r : rows) {
    CAPTURE(std::string(r.yaml));
    const std::string e = error_of(r.yaml);
    CHECK(e.find("mem/s.yaml:9") != std::string::npos);
    CHECK(e.find(r.error) != std::string::npos);
  }
}

}  // namespace capsim
