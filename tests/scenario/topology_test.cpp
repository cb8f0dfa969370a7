// The topology scenario (8 GB200 NVL72 racks, Kueue TAS at the NVLink-domain level) run the
// three ways its README compares, paranoid (pods inside their assigned domains, domains' free
// capacity adding up, after every event): required never spreads a job over NVLink domains and
// never pays a slowdown; unconstrained spreads and pays; every job finishes.
#include <doctest/doctest.h>

#include <string>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

MemoryRecorder run(const std::string& variant) {
  Scenario s = load_scenario(
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/topology/nvl72-" + variant + ".yaml", {});
  MemoryRecorder rec;
  RunRequest req;
  req.paranoid = true;
  (void)run_scenario(s, req, rec);
  return rec;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE(
      "topology: required keeps every job in one NVLink domain; unconstrained spreads and pays") {
    const MemoryRecorder required = run("required");
    const MemoryRecorder preferred = run("preferred");
    const MemoryRecorder unconstrained = run("unconstrained");
    for (const MemoryRecorder* r : {&required, &preferred, &unconstrained}) {
      CHECK(r->ended.status == "complete");
      CHECK(r->metric("pods_completed") == 528);  // 16 x 18 + 24 x 8 + 48 x 1
      CHECK(r->metric("kueue.workloads_pending_at_end") == 0);
      CHECK(r->metric("gpus_total") == 576);
    }
    CHECK(required.metric("jobs_spanning_domains") == 0);
    CHECK(required.metric("topology_slowdown_mean") == 1.0);
    // Preferred spreads only the jobs that found no free domain; unconstrained most of them.
    CHECK(preferred.metric("jobs_spanning_domains") > 0);
    CHECK(unconstrained.metric("jobs_spanning_domains") >
          preferred.metric("jobs_spanning_domains"));
    CHECK(unconstrained.metric("topology_slowdown_mean") <
          preferred.metric("topology_slowdown_mean"));
    // Slower spread jobs hold the GPUs longer: the last job ends later.
    CHECK(unconstrained.metric("makespan_seconds") > required.metric("makespan_seconds"));
    // Required waits for whole free domains: some 72-GPU jobs were held back by the topology,
    // with Kueue's message, and no quota was reserved for them meanwhile.
    bool topology_reason = false;
    for (const auto& e : required.events) {
      topology_reason =
          topology_reason ||
          (e.kind == "admission-pending" &&
           e.detail.find("topology \"nvl72\" allows to fit only") != std::string::npos);
    }
    CHECK(topology_reason);
  }
}
