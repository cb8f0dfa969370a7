// The topology scenario (8 GB200 NVL72 racks, Kueue TAS at the NVLink-domain level) run the
// three ways its README compares, paranoid (pods inside their assigned domains, domains' free
// capacity adding up, after every event): required never spreads a job over NVLink domains and
// never pays a slowdown; unconstrained spreads and pays; every job finishes. Then the same jobs
// without Kueue, each multi-pod job in its own ComputeDomain: no job spans NVLink domains, no node
// ever runs pods of two domains at once, and TopologyPacking shortens the wait.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

// The run of a variant (with --set `overrides`); its World, if `world` is given.
MemoryRecorder run(const std::string& variant, std::unique_ptr<World>* world = nullptr,
                   const std::vector<std::string>& overrides = {}) {
  LoadOptions opt;
  opt.overrides = overrides;
  Scenario s = load_scenario(
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/topology/nvl72-" + variant + ".yaml", opt);
  MemoryRecorder rec;
  RunRequest req;
  req.paranoid = true;
  (void)run_scenario(s, req, rec);
  if (world != nullptr) *world = std::move(s.world);
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

  TEST_CASE("topology: ComputeDomains keep each job in one NVLink domain, one domain per node") {
    std::unique_ptr<World> spread_world, packed_world;
    const MemoryRecorder spread = run("compute-domains", &spread_world);
    const MemoryRecorder packed = run("compute-domains-packed", &packed_world);
    for (const auto& [r, world] :
         {std::pair{&spread, spread_world.get()}, std::pair{&packed, packed_world.get()}}) {
      CHECK(r->ended.status == "complete");
      CHECK(r->metric("pods_completed") == 528);
      CHECK(r->metric("jobs_spanning_domains") == 0);
      CHECK(r->metric("topology_slowdown_mean") == 1.0);
      // Replay the starts and ends: a node never holds running pods of two jobs that each have
      // a ComputeDomain (every multi-pod job has its own; single-pod jobs have none).
      std::map<NodeId, std::map<std::string, int>> running;  // node -> domain job -> pods
      for (const auto& e : r->events) {
        if (e.pod == kNoPod || e.node == kNoNode) continue;
        const PodSpec& spec = world->pods[e.pod];
        if (spec.compute_domain < 0) continue;  // train72-*, train32-*: the domain jobs
        const std::string& job = spec.job_name;
        if (e.kind == "start") {
          auto& jobs = running[e.node];
          ++jobs[job];
          CHECK(jobs.size() == 1);
        } else if (e.kind == "complete" || e.kind == "fail" || e.kind == "preempt" ||
                   e.kind == "evict") {
          auto& jobs = running[e.node];
          if (--jobs[job] == 0) jobs.erase(job);
        }
      }
    }
    CHECK(packed.metric("wait_seconds_p95") < spread.metric("wait_seconds_p95"));
    CHECK(packed.metric("gpu_allocation_ratio_mean") > spread.metric("gpu_allocation_ratio_mean"));
  }

  TEST_CASE("topology: on NVL36 racks a 72-GPU ComputeDomain job never starts (racks-sweep.yaml)") {
    // Two 36-GPU NVLink domains per rack: the 16 jobs of 18 x 4 GPUs need one 72-GPU domain.
    const MemoryRecorder nvl36 = run("compute-domains-packed", nullptr,
                                     {"cluster.pools.nvl72.topology.nvlink_domain_nodes=9"});
    CHECK(nvl36.metric("pods_pending_at_end") == 16 * 18);
    CHECK(nvl36.metric("pods_completed") == 528 - 16 * 18);
    CHECK(nvl36.metric("jobs_spanning_domains") == 0);
  }
}
