// Spot pools in whole runs (checked after every event): a reclaim's notice cordons the node and
// terminates its pods with their grace period, the end of the notice removes the node (absent,
// not billed, killing what still runs), the pods are rescheduled losing their work since the last
// checkpoint, the node comes back, and the cost and node-hours add up to the hand-worked numbers.
// Adding spot pools or failures changes neither the arrivals nor the other stream's events, and
// scenarios/spot/ runs the same way twice.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

// One on-demand and one spot node of 8 A100-80GB (the reference GPU: durations are run times),
// both priced 10 an hour on demand; the spot node's discount halves it.
std::string fleet(const std::string& spot_field) {
  return "seed: 1\n"
         "simulation: {horizon: 6h, sample_interval: 10m, paranoid: true}\n"
         "cluster:\n  pools:\n"
         "    - {name: od, count: 1, cpu: 64, memory: 512Gi, price_per_hour: 10, labels: {kind: "
         "od}, gpu: {model: A100-80GB, count: 8}}\n"
         "    - {name: sp, count: 1, cpu: 64, memory: 512Gi, price_per_hour: 10, labels: {kind: "
         "sp}, gpu: {model: A100-80GB, count: 8}" +
         spot_field + "}\n";
}

const char* kTwoPods =
    "pod,submit,duration,cpu,memory,gpu,node_selector\n"
    "a,0,2h,1,1Gi,8,kind=sp\n"
    "b,0,2h,1,1Gi,8,kind=od\n";

struct Run {
  Scenario scenario;
  MemoryRecorder rec;
  std::string pod(PodId p) const { return p == kNoPod ? "" : scenario.world->pods.at(p).name; }
  std::string node(NodeId n) const { return n == kNoNode ? "" : scenario.world->nodes.at(n).name; }
  // The times of the events of `kind` for pod `pod` ("" : node rows) and node `node`.
  std::vector<SimTime> times(const std::string& kind, const std::string& p,
                             const std::string& n = "") const {
    std::vector<SimTime> out;
    for (const auto& e : rec.events) {
      if (e.kind == kind && pod(e.pod) == p && (n.empty() || node(e.node) == n))
        out.push_back(e.time);
    }
    return out;
  }
};

void run(Run& r, const std::string& yaml, const std::string& reclaims = "",
         const std::string& pods = kTwoPods, const std::string& manifest = "") {
  MemoryFiles files;
  files.add("mem/s.yaml", yaml);
  files.add("mem/pods.csv", pods);
  if (!reclaims.empty()) files.add("mem/r.csv", reclaims);
  if (!manifest.empty()) files.add("mem/pod.yaml", manifest);
  r.scenario = load_scenario("mem/s.yaml", LoadOptions{}, files);
  RunRequest req;
  req.paranoid = true;
  (void)run_scenario(r.scenario, req, r.rec);
}

const std::string kTracePods = "workload:\n  traces:\n    - {path: pods.csv, format: capsim}\n";
const std::string kReclaimAt1h = "time,node,notice,return_after\n1h,sp-0,2m,30m\n";

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("spot: notice, cordon, graceful termination, removal, return and the pod restarts") {
    Run r;
    run(r, fleet(", spot: {discount: 0.5, notice: 2m}") + "spot: {trace: r.csv}\n" + kTracePods,
        kReclaimAt1h);
    // 1 h: the notice; pod a is terminated with its 30 s grace period and requeued at 1h00m30s.
    CHECK(r.times("spot-notice", "", "sp-0") == std::vector<SimTime>{kHour});
    CHECK(r.times("spot-reclaim", "a") == std::vector<SimTime>{kHour});
    CHECK(r.times("requeue", "a") == std::vector<SimTime>{kHour + 30 * kSecond});
    // 1h02m: the node goes; 1h32m: it is back, and a starts on it again within a few seconds
    // (its back-off), with its whole 2 h to run again (no checkpoints).
    CHECK(r.times("spot-reclaim", "", "sp-0") == std::vector<SimTime>{kHour + 2 * kMinute});
    CHECK(r.times("spot-return", "", "sp-0") == std::vector<SimTime>{kHour + 32 * kMinute});
    const std::vector<SimTime> starts = r.times("start", "a");
    REQUIRE(starts.size() == 2);
    CHECK(starts[0] == 0);
    CHECK(starts[1] >= kHour + 32 * kMinute);
    CHECK(starts[1] <= kHour + 33 * kMinute);
    REQUIRE(r.times("complete", "a").size() == 1);
    CHECK(r.times("complete", "a")[0] == starts[1] + 2 * kHour);
    CHECK(r.times("complete", "b") == std::vector<SimTime>{2 * kHour});  // on demand: untouched
    // Nothing starts on the node between its notice and its return.
    for (const auto& e : r.rec.events) {
      if (e.kind == "start" && r.node(e.node) == "sp-0")
        CHECK((e.time < kHour || e.time >= kHour + 32 * kMinute));
    }
    // The fleet's GPUs follow the reclaim: 8 while sp-0 is gone, 16 otherwise.
    for (const SampleRecord& s : r.rec.samples) {
      const bool gone = s.time > kHour + 2 * kMinute && s.time < kHour + 32 * kMinute;
      CHECK(s.gpus_total == (gone ? 8.0 : 16.0));
    }
    CHECK(r.rec.metric("spot_reclaims") == 1);
    CHECK(r.rec.metric("pool.sp.spot_reclaims") == 1);
    CHECK(r.rec.metric("spot_notices") == 1);
    CHECK(r.rec.metric("spot_returns") == 1);
    CHECK(r.rec.metric("pods_interrupted") == 1);
    CHECK(r.rec.metric("pods_interrupted_by_reclaim") == 1);
    CHECK(r.rec.metric("pods_killed_by_reclaim") == 0);
    // a's first hour on 8 GPUs is lost: 8 GPU-hours.
    CHECK(r.rec.metric("gpu_hours_lost_to_reclaims") == doctest::Approx(8.0));
    // Cost: od 10/h x 6 h = 60; sp 10 x (1 - 0.5) = 5/h while it exists, 1h02m + 4h28m = 5.5 h:
    // 27.5. Node-hours: 6 + 5.5.
    CHECK(r.rec.metric("cost_hardware_usd") == doctest::Approx(87.5));
    CHECK(r.rec.metric("pool.sp.node_hours") == doctest::Approx(5.5));
    CHECK(r.rec.metric("pool.od.node_hours") == doctest::Approx(6.0));
    CHECK(r.rec.metric("node_hours") == doctest::Approx(11.5));
    // Allocation over the fleet that existed: on 8 GPUs each, a's lost 1 h and its 30 s grace
    // period, its 2 h again, and b's 2 h: 8 x (1 + 30/3600 + 2 + 2) = 40.067 GPU-h, of the
    // fleet's 8 x 11.5 = 92 GPU-h.
    CHECK(r.rec.metric("gpu_hours_allocated") == doctest::Approx(8 * (5 + 30.0 / 3600)));
    CHECK(r.rec.metric("gpu_allocation_ratio_mean") ==
          doctest::Approx(r.rec.metric("gpu_hours_allocated") / 92.0));
  }

  TEST_CASE("spot: a pod resumes from its last checkpoint after a reclaim") {
    Run r;
    // Checkpoints every 25 min (free to write and load): at 1 h the last one is from 50 min, so
    // 10 min x 8 GPUs = 1.333 GPU-h are lost and 2 h - 50 min = 70 min are left to run.
    run(r,
        fleet(", spot: {discount: 0.5, notice: 2m}") + "spot: {trace: r.csv}\n" + kTracePods +
            "checkpoints:\n  - {match: {name: a}, interval: 25m}\n",
        kReclaimAt1h);
    CHECK(r.rec.metric("gpu_hours_lost_to_reclaims") == doctest::Approx(8.0 * 10 / 60));
    const std::vector<SimTime> starts = r.times("start", "a");
    REQUIRE(starts.size() == 2);
    REQUIRE(r.times("complete", "a").size() == 1);
    CHECK(r.times("complete", "a")[0] == starts[1] + 70 * kMinute);
  }

  TEST_CASE("spot: a pod whose grace period outlasts the notice is killed with its node") {
    Run r;
    const std::string pod =
        "apiVersion: v1\nkind: Pod\n"
        "metadata: {name: slow, annotations: {capsim.io/duration: 3h}}\n"
        "spec:\n  terminationGracePeriodSeconds: 600\n  nodeSelector: {kind: sp}\n"
        "  containers:\n    - name: c\n      resources: {requests: {cpu: '1', memory: 1Gi}, "
        "limits: {nvidia.com/gpu: 8}}\n";
    run(r,
        fleet(", spot: {discount: 0.5, notice: 2m}") + "spot: {trace: r.csv}\n" +
            "manifests: [pod.yaml]\n",
        kReclaimAt1h, kTwoPods, pod);
    CHECK(r.times("spot-reclaim", "slow") == std::vector<SimTime>{kHour});
    CHECK(r.times("spot-kill", "slow") == std::vector<SimTime>{kHour + 2 * kMinute});
    CHECK(r.rec.metric("pods_killed_by_reclaim") == 1);
    CHECK(r.rec.metric("pods_interrupted_by_reclaim") == 1);
    // A bare pod has no controller to recreate it.
    CHECK(r.times("deleted", "slow") == std::vector<SimTime>{kHour + 2 * kMinute});
  }

  TEST_CASE("spot: adding spot or failures changes neither the arrivals nor the reclaims") {
    const std::string rate =
        ", spot: {discount: 0.5, reclaim: {per_node_day: 24}, notice: 1m, "
        "return_after: 20m}";
    const std::string pods =
        "pod,submit,duration,cpu,memory,gpu\n"
        "p0,0,1h,1,1Gi,2\np1,10m,3h,1,1Gi,4\np2,1h,2h,1,1Gi,8\np3,2h,1h,1,1Gi,1\n";
    Run plain, spot, spot_again, spot_failing;
    run(plain, fleet("") + kTracePods, "", pods);
    run(spot, fleet(rate) + kTracePods, "", pods);
    run(spot_again, fleet(rate) + kTracePods, "", pods);
    run(spot_failing,
        fleet(rate) + kTracePods +
            "failures:\n  rates:\n    - {pool: od, cause: host, per_node_day: 8, repair: 15m}\n",
        "", pods);
    auto arrivals = [](const Run& r) {
      std::vector<std::pair<SimTime, std::string>> out;
      for (const auto& e : r.rec.events) {
        if (e.kind == "arrive") out.emplace_back(e.time, r.pod(e.pod));
      }
      return out;
    };
    auto notices = [](const Run& r) {
      std::vector<std::pair<SimTime, std::string>> out;
      for (const auto& e : r.rec.events) {
        if (e.kind == "spot-notice") out.emplace_back(e.time, r.node(e.node));
      }
      return out;
    };
    REQUIRE(arrivals(plain).size() == 4);
    CHECK(arrivals(spot) == arrivals(plain));
    CHECK(arrivals(spot_failing) == arrivals(plain));
    // 24 a day on one node over 6 h: some notices (seed 1 draws one; the same seed, the same).
    CHECK(!notices(spot).empty());
    CHECK(notices(spot) == notices(spot_again));
    CHECK(spot.rec.summary == spot_again.rec.summary);
    // Failures of the on-demand pool draw from their own streams: the reclaims stay.
    CHECK(spot_failing.rec.metric("node_failures") > 0);
    CHECK(notices(spot_failing) == notices(spot));
  }

  TEST_CASE("spot: scenarios/spot runs the same twice, and spot is cheaper than on demand") {
    auto run_file = [](const std::string& name, MemoryRecorder& rec) {
      Scenario s =
          load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/spot/" + name, LoadOptions{});
      RunRequest req;
      (void)run_scenario(s, req, rec);
    };
    MemoryRecorder on_demand, spot, spot_again, checkpoints;
    run_file("on-demand.yaml", on_demand);
    run_file("spot.yaml", spot);
    run_file("spot.yaml", spot_again);
    run_file("spot-checkpoints.yaml", checkpoints);
    CHECK(spot.summary == spot_again.summary);
    REQUIRE(spot.events.size() == spot_again.events.size());
    for (std::size_t i = 0; i < spot.events.size(); ++i) {
      CHECK(spot.events[i].time == spot_again.events[i].time);
      CHECK(spot.events[i].kind == spot_again.events[i].kind);
    }
    CHECK(spot.metric("spot_reclaims") > 0);
    CHECK(spot.metric("cost_total_usd") < on_demand.metric("cost_total_usd"));
    // The same reclaims (the spot streams do not see the checkpoints); less work lost with them.
    CHECK(checkpoints.metric("spot_reclaims") == spot.metric("spot_reclaims"));
    CHECK(checkpoints.metric("gpu_hours_lost_to_reclaims") <
          spot.metric("gpu_hours_lost_to_reclaims"));
    CHECK(checkpoints.metric("goodput_ratio") > spot.metric("goodput_ratio"));
    // High-priority pods never run on spot nodes.
    const Scenario s =
        load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/spot/spot.yaml", LoadOptions{});
    int prod_starts = 0;
    for (const auto& e : spot.events) {
      if (e.kind != "start") continue;
      const bool prod = s.world->pods.at(e.pod).queue == "prod";
      prod_starts += prod ? 1 : 0;
      if (prod) CHECK(s.world->nodes.at(e.node).pool == "ondemand");
    }
    CHECK(prod_starts > 0);
  }
}
