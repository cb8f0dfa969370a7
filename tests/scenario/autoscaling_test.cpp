// scenarios/autoscaling/, checked after every event: the morning burst grows the autoscaled B200
// pool and the fleet shrinks back once it is empty again; new nodes become Ready only after the
// provisioning delay and no pod starts on a node that does not exist; the autoscaled day costs
// less than the same fleet fixed at its peak size; scale-up picks the group whose MIG layout
// fits the pending pods, although the priority expander prefers the other; consolidation drains
// nodes whose pods fit elsewhere and bills fewer node-hours than empty-only scale-down, and no
// removed node holds a pod; the same seed gives the same run.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "fixtures/memory_recorder.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;
using capsim::testing::MemoryRecorder;

namespace {

std::string scenario(const std::string& name) {
  return std::string(CAPSIM_SOURCE_DIR) + "/scenarios/autoscaling/" + name;
}

struct Ran {
  Scenario s;
  MemoryRecorder rec;
};

void run(Ran& r, const std::string& name, bool paranoid = true) {
  r.s = load_scenario(scenario(name), LoadOptions{});
  RunRequest req;
  req.paranoid = paranoid;
  (void)run_scenario(r.s, req, r.rec);
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("autoscaling: the burst grows the pool, it shrinks back, and costs less than fixed") {
    Ran burst;
    run(burst, "burst.yaml");
    const World& w = *burst.s.world;
    const MemoryRecorder& rec = burst.rec;

    // The fleet over time, from the events: present (Ready) nodes of the pool.
    std::set<NodeId> present;
    for (NodeId n = 0; n < w.nodes.size(); ++n) {
      if (w.nodes[n].name == "b200-0" || w.nodes[n].name == "b200-1") present.insert(n);
    }
    REQUIRE(present.size() == 2);
    std::map<NodeId, SimTime> requested;
    std::size_t peak = present.size();
    SimTime peak_at = 0;
    int ups = 0, readies = 0, downs = 0, starts_on_absent = 0, early_ready = 0;
    for (const auto& e : rec.events) {
      if (e.kind == "scale-up") {
        ++ups;
        requested[e.node] = e.time;
      } else if (e.kind == "node-ready") {
        ++readies;
        if (!requested.count(e.node) || e.time - requested[e.node] < 5 * kMinute) ++early_ready;
        present.insert(e.node);
        if (present.size() > peak) {
          peak = present.size();
          peak_at = e.time;
        }
      } else if (e.kind == "scale-down") {
        ++downs;
        present.erase(e.node);
      } else if (e.kind == "start" && !present.count(e.node)) {
        ++starts_on_absent;
      }
    }
    CHECK(ups > 0);
    // Every node requested at least its provisioning delay before the horizon came up.
    int ups_due = 0;
    for (const auto& [node, t] : requested) {
      (void)node;
      ups_due += t + 5 * kMinute <= 24 * kHour ? 1 : 0;
    }
    CHECK(readies >= ups_due);
    CHECK(early_ready == 0);
    CHECK(starts_on_absent == 0);
    CHECK(downs > 0);
    CHECK(peak > 2);
    CHECK(peak <= 12);
    // The burst is in the morning (07:00-11:00): the pool peaks then and ends smaller.
    CHECK(peak_at >= 7 * kHour);
    CHECK(peak_at <= 13 * kHour);
    CHECK(present.size() < peak);
    CHECK(present.size() >= 2);  // never below min

    // sample.gpus_total follows the fleet.
    double max_gpus = 0;
    for (const auto& s : rec.samples)
      max_gpus = std::max(max_gpus, s.gpus_total);
    CHECK(max_gpus == doctest::Approx(8.0 * static_cast<double>(peak)));
    CHECK(rec.samples.front().gpus_total == doctest::Approx(16.0));
    CHECK(rec.samples.back().gpus_total ==
          doctest::Approx(8.0 * static_cast<double>(present.size())));

    CHECK(rec.metric("nodes_added") == doctest::Approx(ups));
    CHECK(rec.metric("nodes_removed") == doctest::Approx(downs));
    const double node_hours = rec.metric("node_hours");
    CHECK(node_hours == doctest::Approx(rec.metric("pool.b200.node_hours")));
    CHECK(node_hours > 2 * 24.0);
    CHECK(node_hours < 12 * 24.0);
    CHECK(rec.metric("pending_seconds_due_to_provisioning") > 0);

    Ran fixed;
    run(fixed, "fixed.yaml");
    CHECK(fixed.rec.metric("nodes_added") == doctest::Approx(0));
    CHECK(fixed.rec.metric("node_hours") == doctest::Approx(12 * 24.0));
    CHECK(rec.metric("cost_total_usd") < fixed.rec.metric("cost_total_usd"));
    // Both ran the same workload to the end.
    CHECK(rec.metric("pods_total") == fixed.rec.metric("pods_total"));
  }

  TEST_CASE("autoscaling: scale-up picks the group whose MIG layout fits the pending pods") {
    Ran r;
    run(r, "mig-pick.yaml");
    const World& w = *r.s.world;
    int ups = 0, wrong = 0, starts = 0, starts_elsewhere = 0;
    for (const auto& e : r.rec.events) {
      if (e.kind == "scale-up") {
        ++ups;
        if (w.nodes.at(e.node).pool != "b200-mig") ++wrong;
      }
      if (e.kind == "start") {
        ++starts;
        if (w.nodes.at(e.node).pool != "b200-mig") ++starts_elsewhere;
      }
    }
    CHECK(ups > 0);
    CHECK(wrong == 0);
    CHECK(starts > 0);
    CHECK(starts_elsewhere == 0);
    CHECK(r.rec.metric("pool.b200-whole.node_hours") == doctest::Approx(0));
    CHECK(r.rec.metric("pool.b200-mig.node_hours") > 0);
    CHECK(r.rec.metric("pods_completed") > 0);
  }

  TEST_CASE("autoscaling: the same seed gives the same run") {
    Ran a, b;
    run(a, "burst.yaml", false);
    run(b, "burst.yaml", false);
    CHECK(a.rec.events == b.rec.events);
    CHECK(a.rec.summary == b.rec.summary);
    REQUIRE(a.rec.samples.size() == b.rec.samples.size());
    for (std::size_t i = 0; i < a.rec.samples.size(); ++i)
      CHECK(a.rec.samples[i].gpus_total == b.rec.samples[i].gpus_total);
  }

  TEST_CASE("autoscaling: consolidation drains nodes and bills fewer node-hours than empty-only") {
    Ran empty_only, consolidated;
    run(empty_only, "empty-only.yaml");
    run(consolidated, "consolidation.yaml");
    const MemoryRecorder& e = empty_only.rec;
    const MemoryRecorder& c = consolidated.rec;
    // Empty-only never evicts; consolidation does, and its nodes leave drained.
    CHECK(e.metric("scale_down_drains") == doctest::Approx(0));
    CHECK(e.metric("scale_down_evictions") == doctest::Approx(0));
    CHECK(c.metric("scale_down_drains") > 0);
    CHECK(c.metric("scale_down_evictions") >= c.metric("scale_down_drains"));
    CHECK(c.metric("gpu_hours_lost_to_scale_down") > 0);
    // Lost work since the last 30-minute checkpoint: at most 30 min of compute (plus the
    // checkpoint's write) per eviction, on at most 8 GPUs.
    CHECK(c.metric("gpu_hours_lost_to_scale_down") <=
          c.metric("scale_down_evictions") * 8 * (31.0 / 60.0));
    CHECK(c.metric("node_hours") < e.metric("node_hours"));
    CHECK(c.metric("cost_total_usd") < e.metric("cost_total_usd"));
    CHECK(c.metric("pods_total") == e.metric("pods_total"));

    // A removed node holds no pod (checked after every event: the runs are paranoid): no pod
    // starts on it between its scale-down and its next node-ready, and a drained node's
    // evictions come between its drain and its removal.
    std::set<NodeId> gone, draining;
    int starts_on_removed = 0, evictions_seen = 0, evictions_elsewhere = 0;
    for (const auto& ev : c.events) {
      if (ev.kind == "scale-down-drain") draining.insert(ev.node);
      if (ev.kind == "scale-down-evict") {
        ++evictions_seen;
        evictions_elsewhere += draining.count(ev.node) ? 0 : 1;
      }
      if (ev.kind == "scale-down") {
        gone.insert(ev.node);
        draining.erase(ev.node);
      }
      if (ev.kind == "node-ready") gone.erase(ev.node);
      if (ev.kind == "start" && gone.count(ev.node)) ++starts_on_removed;
    }
    CHECK(starts_on_removed == 0);
    CHECK(evictions_seen == doctest::Approx(c.metric("scale_down_evictions")));
    CHECK(evictions_elsewhere == 0);

    Ran again;
    run(again, "consolidation.yaml", false);
    CHECK(again.rec.events == c.events);
    CHECK(again.rec.summary == c.summary);
  }
}
