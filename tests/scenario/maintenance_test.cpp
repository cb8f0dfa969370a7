// scenarios/maintenance/driver-upgrade.yaml, checked after every event: a driver upgrade rolled
// over four nodes one at a time. Its drains honour the serving Deployment's budget (never more
// than one of its six replicas down at once), the single-replica service whose budget allows no
// disruption blocks its node's drain until the timeout, nothing but a DaemonSet pod starts on a
// cordoned node, and the planned downtime is exactly three nodes' 15 minutes.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("maintenance: drains respect disruption budgets and one drain is blocked") {
    const std::string path =
        std::string(CAPSIM_SOURCE_DIR) + "/scenarios/maintenance/driver-upgrade.yaml";
    Scenario s = load_scenario(path, LoadOptions{});
    MemoryRecorder rec;
    RunRequest req;
    req.paranoid = true;
    (void)run_scenario(s, req, rec);
    const World& w = *s.world;
    auto pod_name = [&](PodId p) { return p == kNoPod ? std::string() : w.pods.at(p).name; };
    auto node_name = [&](NodeId n) { return n == kNoNode ? std::string() : w.nodes.at(n).name; };

    std::set<std::string> serving_running;
    std::size_t worst_serving_down = 0;
    bool serving_all_up = false;
    std::set<std::string> cordoned;
    std::map<std::string, int> drained_nodes;
    std::string license_node;
    int starts_on_cordoned = 0;
    int serving_evictions = 0;
    for (const auto& e : rec.events) {
      const std::string pod = pod_name(e.pod);
      const std::string node = node_name(e.node);
      if (e.kind == "cordon") cordoned.insert(node);
      if (e.kind == "uncordon") cordoned.erase(node);
      if (e.kind == "maintenance-start") ++drained_nodes[node];
      if (e.kind == "start") {
        if (starts_with(pod, "license-server")) license_node = node;
        if (cordoned.count(node) && !starts_with(pod, "dcgm-exporter")) ++starts_on_cordoned;
        if (starts_with(pod, "serving-")) serving_running.insert(pod);
      }
      if (starts_with(pod, "serving-") && (e.kind == "drain" || e.kind == "preempt")) {
        serving_running.erase(pod);
        serving_evictions += e.kind == "drain" ? 1 : 0;
      }
      if (serving_running.size() == 6) serving_all_up = true;
      if (serving_all_up)
        worst_serving_down = std::max(worst_serving_down, 6 - serving_running.size());
    }
    REQUIRE(serving_all_up);
    CHECK(serving_evictions >= 1);
    // maxUnavailable: 1 — never two replicas down at once, however the drains overlap them.
    CHECK(worst_serving_down == 1);
    CHECK(starts_on_cordoned == 0);
    // The license server's node is never drained; the other three are, once each.
    REQUIRE_FALSE(license_node.empty());
    CHECK(drained_nodes.count(license_node) == 0);
    CHECK(drained_nodes.size() == 3);
    for (const auto& [node, n] : drained_nodes)
      CHECK(n == 1);
    int timeouts = 0;
    for (const auto& e : rec.events) {
      if (e.kind != "drain-timeout") continue;
      ++timeouts;
      CHECK(node_name(e.node) == license_node);
    }
    CHECK(timeouts == 1);
    bool refused_license = false;
    for (const auto& e : rec.events) {
      if (e.kind == "evict-refused" && starts_with(pod_name(e.pod), "license-server")) {
        refused_license =
            e.detail.find("ml/license-server (1 healthy, 1 needed") != std::string::npos;
      }
    }
    CHECK(refused_license);
    CHECK(rec.metric("maintenance_drains") == 3);
    CHECK(rec.metric("maintenance_drains_blocked") == 1);
    CHECK(rec.metric("maintenance_evictions") > 0);
    // Three nodes down 15 min each, of four nodes over 12 h.
    CHECK(rec.metric("pool.h100.planned_downtime") == doctest::Approx(3 * 15.0 / (4 * 720.0)));
    CHECK(rec.metric("pool.h100.availability") == doctest::Approx(1 - 3 * 15.0 / (4 * 720.0)));
  }
}
