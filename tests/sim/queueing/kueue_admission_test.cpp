// Kueue's documented behaviour, reproduced end to end: real kueue.x-k8s.io objects in YAML, pods
// built in code, a paranoid simulation run (quota and gang invariants checked after every event).
// Every case states its worked numbers.
#include "sim/queueing/kueue_admission.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "fixtures/kueue_objects.hpp"
#include "fixtures/kueue_rig.hpp"

using namespace capsim;
using capsim::testing::KueueRig;

namespace {

constexpr const char* kFlavor = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
)";

// A ClusterQueue over nvidia.com/gpu in flavor `gpu`, with its LocalQueue of the same name.
std::string cq(const std::string& name, int nominal, const std::string& extra_quota = "",
               const std::string& extra_spec = "", const std::string& cohort = "shared") {
  return fmt::format(R"(
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {0}}}
spec:
  namespaceSelector: {{}}
  {3}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: {1}{2}}}
  {4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {0}, namespace: default}}
spec: {{clusterQueue: {0}}}
)",
                     name, nominal, extra_quota,
                     cohort.empty() ? std::string() : "cohortName: " + cohort, extra_spec);
}

int started_at(const KueueRig& r, const std::string& prefix, double t) {
  int n = 0;
  for (const PodRecord& p : r.result.pods) {
    const auto& name = const_cast<KueueRig&>(r).tw.world().pods[p.pod].name;
    if (name.rfind(prefix, 0) == 0 && p.start >= 0 && to_seconds(p.start) == t) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("a ClusterQueue borrows from its cohort up to its borrowingLimit") {
  // team-a: nominal 4 GPUs; team-b: nominal 12, idle. Cluster: 2 nodes x 8 = 16 GPUs.
  // team-a submits 10 one-GPU pods at t=0, each running 1h.
  struct Case {
    const char* name;
    const char* limit;  // borrowingLimit of team-a ("" = none)
    int want_at_0, want_at_1h, want_at_2h;
  };
  const Case cases[] = {
      // No limit: 4 + 12 = 16 >= 10, all start at once.
      {"no borrowing limit", "", 10, 0, 0},
      // Limit 2: at most 4 + 2 = 6 at a time: 6 at 0, the other 4 when those end at 1h.
      {"borrowingLimit 2", ", borrowingLimit: 2", 6, 4, 0},
      // Limit 0: no borrowing: 4 at 0, 4 at 1h, 2 at 2h.
      {"borrowingLimit 0", ", borrowingLimit: 0", 4, 4, 2},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) + cq("team-a", 4, c.limit) + cq("team-b", 12));
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 10; ++i)
      r.tw.pod(fmt::format("a-{}", i)).gpus(1).queue("team-a").duration(kHour).add();
    r.run();
    CHECK(started_at(r, "a-", 0) == c.want_at_0);
    CHECK(started_at(r, "a-", 3600) == c.want_at_1h);
    CHECK(started_at(r, "a-", 7200) == c.want_at_2h);
    CHECK(r.metric("clusterqueue.team-a.admissions") == 10);
  }
  // The reason the 7th pod waits names the maximum: 4 nominal + 2 borrowable.
  KueueRig r;
  r.kueue(std::string(kFlavor) + cq("team-a", 4, ", borrowingLimit: 2") + cq("team-b", 12));
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(16).add();
  for (int i = 0; i < 7; ++i)
    r.tw.pod(fmt::format("a-{}", i)).gpus(1).queue("team-a").add();
  r.run();
  const auto pending = r.events("admission-pending");
  REQUIRE(!pending.empty());
  CHECK(pending.front().find("insufficient unused quota for nvidia.com/gpu in flavor gpu, 1 more "
                             "needed") != std::string::npos);
}

TEST_CASE("a lendingLimit keeps part of the nominal quota for its own ClusterQueue") {
  // team-a: nominal 8, lendingLimit L; team-b: nominal 0 and borrows. 16 GPUs.
  // t=0: team-b submits 8 one-GPU pods (10h). t=10m: team-a submits 6 one-GPU pods (1h).
  // No preemption is configured, so what team-b borrowed stays borrowed.
  struct Case {
    const char* name;
    const char* lending;
    int want_b_at_0;  // team-b can borrow min(8, L)
    double want_a_start;
  };
  const Case cases[] = {
      // No lending limit: team-b borrows all 8; team-a's 6 wait until team-b's pods end at 10h.
      {"no lending limit", "", 8, 36000},
      // lendingLimit 2: team-b borrows only 2; 8 - 2 = 6 stay team-a's, so its 6 start at 10m.
      {"lendingLimit 2", ", lendingLimit: 2", 2, 600},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) + cq("team-a", 8, c.lending) + cq("team-b", 0));
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 8; ++i)
      r.tw.pod(fmt::format("b-{}", i)).gpus(1).queue("team-b").duration(10 * kHour).add();
    for (int i = 0; i < 6; ++i) {
      r.tw.pod(fmt::format("a-{}", i))
          .gpus(1)
          .queue("team-a")
          .arrival(10 * kMinute)
          .duration(kHour)
          .add();
    }
    r.run();
    CHECK(started_at(r, "b-", 0) == c.want_b_at_0);
    for (int i = 0; i < 6; ++i)
      CHECK(r.start_s(fmt::format("a-{}", i)) == c.want_a_start);
    CHECK(r.metric("clusterqueue.team-a.preemptions") == 0);
    // Every queue_sample row respects nominal + borrowing and the lending limit: team-b never
    // uses more than 0 + what team-a lends.
    for (const QueueSampleRecord& q : r.rec.queue_samples) {
      if (q.queue == "team-b" && !q.flavor.empty()) {
        CHECK(q.usage <= (std::string(c.lending).empty() ? 8 : 2));
      }
    }
  }
}

TEST_CASE("reclaimWithinCohort preempts a borrowing ClusterQueue's workloads") {
  // team-a and team-b: nominal 8 each, one cohort, 2 nodes x 8 GPUs. t=0: team-b runs two
  // 8-GPU pods for 10h (16 GPUs: it borrows team-a's 8). t=1h: team-a submits one 8-GPU pod.
  struct Case {
    const char* name;
    const char* policy;
    double want_a_start;
    int want_b_preempted;
  };
  const Case cases[] = {
      // Never: team-a waits for team-b's pods to end at 10h.
      {"Never", "Never", 36000, 0},
      // Any: the minimal set is one 8-GPU workload (team-b then uses its nominal 8); it leaves
      // after its 30s grace period, so team-a starts at 3600 + 30.
      {"Any", "Any", 3630, 1},
      // LowerPriority with equal priorities: no candidate.
      {"LowerPriority, same priority", "LowerPriority", 36000, 0},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    KueueRig r;
    const std::string pre = fmt::format("preemption: {{reclaimWithinCohort: {}}}", c.policy);
    r.kueue(std::string(kFlavor) + cq("team-a", 8, "", pre) + cq("team-b", 8));
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 2; ++i)
      r.tw.pod(fmt::format("b-{}", i)).gpus(8).queue("team-b").duration(10 * kHour).add();
    r.tw.pod("a-0").gpus(8).queue("team-a").arrival(kHour).duration(kHour).add();
    r.run();
    CHECK(r.start_s("a-0") == c.want_a_start);
    CHECK(r.metric("clusterqueue.team-b.preemptions") == c.want_b_preempted);
    CHECK(r.metric("clusterqueue.team-a.preempting") == c.want_b_preempted);
    if (c.want_b_preempted > 0) {
      const auto why = r.events("workload-preempted");
      REQUIRE(why.size() == 1);
      CHECK(why[0].find("due to reclamation within the cohort") != std::string::npos);
      // The preempted workload is requeued; it runs again once team-a's pod is done (2h + 30s):
      // team-b then borrows again.
      CHECK(r.metric("clusterqueue.team-b.admissions") == 3);
    }
  }
}

TEST_CASE("StrictFIFO blocks the queue behind its head; BestEffortFIFO lets smaller work pass") {
  // One ClusterQueue, nominal 10 GPUs, no cohort; 16 GPUs in the cluster.
  // A: 4 GPUs at t=0 for 2h. B: 8 GPUs at 60s (4 + 8 > 10: waits). C: 2 GPUs at 120s.
  struct Case {
    const char* strategy;
    double want_b, want_c;
  };
  const Case cases[] = {
      // BestEffortFIFO: C fits (4 + 2 <= 10) and starts at once; B when A ends at 2h.
      {"BestEffortFIFO", 7200, 120},
      // StrictFIFO: C waits behind B until A ends; then B (8) and C (2) fit together.
      {"StrictFIFO", 7200, 7200},
  };
  for (const Case& c : cases) {
    const std::string label = c.strategy;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) +
            cq("q", 10, "", fmt::format("queueingStrategy: {}", c.strategy), ""));
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.pod("A").gpus(4).queue("q").duration(2 * kHour).add();
    r.tw.pod("B").gpus(8).queue("q").arrival(60 * kSecond).duration(kHour).add();
    r.tw.pod("C").gpus(2).queue("q").arrival(120 * kSecond).duration(kHour).add();
    r.run();
    CHECK(r.start_s("A") == 0);
    CHECK(r.start_s("B") == c.want_b);
    CHECK(r.start_s("C") == c.want_c);
  }
}

TEST_CASE("fair sharing admits by dominant resource share divided by the weight") {
  // A Cohort with 12 GPUs of its own; team-a (weight 1) and team-b (weight 2) have no nominal
  // quota and borrow everything. Each submits twelve 1-GPU pods at t=0 (team-a's first).
  // Each cycle admits one borrowing workload per cohort; the tournament picks the lower share
  // after admission: a with k admitted -> (k+1) x 1000 / 12; b with j -> (j+1) x 1000 / 12 / 2.
  // Comparing 2(k+1) with (j+1), ties to the older workload (team-a's), the order is
  //   b a b b a b b a b b a b   ->  team-a 4 GPUs, team-b 8 (the 1:2 of the weights).
  KueueRig r;
  const std::string cohort = R"(
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: shared}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: 12}]
)";
  r.kueue(std::string(kFlavor) + cohort + cq("team-a", 0, "", "fairSharing: {weight: 1}") +
              cq("team-b", 0, "", "fairSharing: {weight: 2}"),
          "fairSharing: {enable: true}");
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
  for (int i = 0; i < 12; ++i)
    r.tw.pod(fmt::format("a-{:02}", i)).gpus(1).queue("team-a").duration(kHour).add();
  for (int i = 0; i < 12; ++i)
    r.tw.pod(fmt::format("b-{:02}", i)).gpus(1).queue("team-b").duration(kHour).add();
  r.run(30 * kMinute);
  std::string order;
  for (const std::string& e : r.events("admitted"))
    order += e.substr(0, 1);
  CHECK(order == "babbabbabbab");
  CHECK(started_at(r, "a-", 0) == 4);
  CHECK(started_at(r, "b-", 0) == 8);
}

TEST_CASE("a gang is placed all or nothing and releases what it reserved") {
  // Two nodes of 8 GPUs. A 4-GPU blocker runs on n1 from 0 to 1h, leaving 4 + 8 = 12 free.
  // A gang of N pods x G GPUs arrives at 10s.
  struct Case {
    const char* name;
    int n, g;
    double want_start;      // of every member; -1: never (within the 3h horizon)
    int min_member = 0;     // 0: all n
    double want_last = -2;  // start of the last member, when it differs
  };
  const Case cases[] = {
      {"2 x 4 fit in 12 free GPUs", 2, 4, 10},
      {"3 x 4 = 12 fit exactly (4 on n1, 8 on n2)", 3, 4, 10},
      {"2 x 8 need two empty nodes: wait for the blocker (1h)", 2, 8, 3600},
      {"4 x 4 = 16 > 12: wait for the blocker", 4, 4, 3600},
      {"3 x 6: one per node at most, never more than 2", 3, 6, -1},
      // minMember 2 of 4 x 4: 12 free GPUs take three members at 10s; the fourth follows alone
      // when the blocker leaves at 1h.
      {"4 x 4 with minMember 2", 4, 4, 10, 2, 3600},
      // minMember 3 of 3 x 6: never 3 at once.
      {"3 x 6 with minMember 3", 3, 6, -1, 3},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    KueueRig r;  // no Kueue objects: gangs are placed the same way without admission
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.pod("blocker").gpus(4).duration(kHour).add();
    const GangId g = r.tw.gang("train", c.min_member > 0 ? c.min_member : c.n);
    for (int i = 0; i < c.n; ++i) {
      r.tw.pod(fmt::format("train-{}", i))
          .gpus(c.g)
          .gang(g)
          .arrival(10 * kSecond)
          .duration(kHour)
          .add();
    }
    r.run(3 * kHour, kMinute);
    for (int i = 0; i < c.n; ++i) {
      const bool last = i == c.n - 1 && c.want_last != -2;
      CHECK(r.start_s(fmt::format("train-{}", i)) == (last ? c.want_last : c.want_start));
    }
    // While the gang waits, only the blocker's 4 GPUs are allocated: nothing stays reserved.
    for (const SampleRecord& s : r.rec.samples) {
      if (c.want_start != 10 && c.want_last == -2 && to_seconds(s.time) > 10 &&
          to_seconds(s.time) < 3600) {
        CHECK(s.gpus_allocated == 4);
      }
    }
  }
}

TEST_CASE("admitted pods carry the flavor's labels and tolerations; flavors are tried in order") {
  // Flavors b200 (nodes labelled pool=b200 and tainted) and a100 (pool=a100); the ClusterQueue
  // lists b200 first, 8 GPUs each. Three 8-GPU pods: b200, then a100, then nothing left.
  KueueRig r;
  r.kueue(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: b200}
spec:
  nodeLabels: {pool: b200}
  nodeTaints: [{key: reserved, value: training, effect: NoSchedule}]
  tolerations: [{key: reserved, operator: Equal, value: training, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec: {nodeLabels: {pool: a100}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - {name: b200, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}
    - {name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: q}
)");
  r.tw.node("a").cpu("64").memory("512Gi").gpus(8, "A100-80GB").label("pool", "a100").add();
  r.tw.node("b")
      .cpu("64")
      .memory("512Gi")
      .gpus(8)
      .label("pool", "b200")
      .taint("reserved", "training", "NoSchedule")
      .add();
  r.tw.pod("p0").gpus(8).queue("q").add();
  r.tw.pod("p1").gpus(8).queue("q").arrival(kSecond).add();
  r.tw.pod("p2").gpus(8).queue("q").arrival(2 * kSecond).add();
  r.run(30 * kMinute);
  // p0 got b200 (and its toleration, or the tainted node would reject it); p1 a100.
  CHECK(r.node_of("p0") == "b");
  CHECK(r.node_of("p1") == "a");
  CHECK(r.start_s("p2") == -1);
  const auto pending = r.events("admission-pending");
  REQUIRE(!pending.empty());
  CHECK(pending.back().find("insufficient unused quota for nvidia.com/gpu in flavor a100") !=
        std::string::npos);
}

TEST_CASE("whenCanBorrow decides between borrowing a flavor and trying the next one") {
  // team-a: 0 of flavor b200 (listed first) and 8 of a100, in a cohort where team-b has 8 b200.
  // A 4-GPU pod: b200 fits only by borrowing.
  struct Case {
    const char* policy;
    const char* want_node;
  };
  const Case cases[] = {
      {"MayStopSearch", "b"},  // borrowing b200 stops the search
      {"TryNextFlavor", "a"},  // a100 fits without borrowing: preferred
  };
  for (const Case& c : cases) {
    const std::string label = c.policy;
    CAPTURE(label);
    KueueRig r;
    r.kueue(fmt::format(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: b200}}
spec: {{nodeLabels: {{pool: b200}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: a100}}
spec: {{nodeLabels: {{pool: a100}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: team-a}}
spec:
  namespaceSelector: {{}}
  cohortName: shared
  flavorFungibility: {{whenCanBorrow: {}}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - {{name: b200, resources: [{{name: nvidia.com/gpu, nominalQuota: 0}}]}}
    - {{name: a100, resources: [{{name: nvidia.com/gpu, nominalQuota: 8}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: team-b}}
spec:
  namespaceSelector: {{}}
  cohortName: shared
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - {{name: b200, resources: [{{name: nvidia.com/gpu, nominalQuota: 8}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: team-a}}
spec: {{clusterQueue: team-a}}
)",
                        c.policy));
    r.tw.node("a").cpu("64").memory("512Gi").gpus(8, "A100-80GB").label("pool", "a100").add();
    r.tw.node("b").cpu("64").memory("512Gi").gpus(8).label("pool", "b200").add();
    r.tw.pod("p").gpus(4).queue("team-a").add();
    r.run(30 * kMinute);  // still running: its node is reported
    CHECK(r.node_of("p") == c.want_node);
  }
}

TEST_CASE("waitForPodsReady evicts an admitted workload that cannot start and requeues it") {
  // Quota 16 GPUs, but a pod outside Kueue holds 8 of the 16 until 1h. A gang of 2 x 8 is
  // admitted at 0 and cannot be placed. Timeout 5m: evicted at 300s, requeued after the 60s
  // backoff (360s), admitted again, evicted at 660s, requeued with 120s backoff (780s), ...
  // backoffs 60, 120, 240, 480, 960 (caps at 3600): admissions at 0, 360, 780, 1320, 2100,
  // 3360; the blocker leaves at 3600, so the 6th admission's pods start at 3600.
  KueueRig r;
  r.kueue(std::string(kFlavor) + cq("q", 16, "", "", ""),
          "waitForPodsReady: {enable: true, timeout: 5m, requeuingStrategy: {backoffBaseSeconds: "
          "60}}");
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
  r.tw.pod("blocker").gpus(8).duration(kHour).add();
  const GangId g = r.tw.gang("train", 2);
  r.tw.pod("train-0").gpus(8).gang(g).queue("q").duration(kHour).add();
  r.tw.pod("train-1").gpus(8).gang(g).queue("q").duration(kHour).add();
  r.run();
  CHECK(r.metric("kueue.pods_ready_timeouts") == 5);
  CHECK(r.metric("clusterqueue.q.admissions") == 6);
  CHECK(r.start_s("train-0") == 3600);
  CHECK(r.start_s("train-1") == 3600);
  const auto timeouts = r.events("pods-ready-timeout");
  REQUIRE(!timeouts.empty());
  CHECK(timeouts.front().find("0 of 2 pod(s) running 300s after admission") != std::string::npos);
}

TEST_CASE("workloads whose namespace the ClusterQueue does not select are never admitted") {
  KueueRig r;
  r.kueue(std::string(kFlavor) + R"(
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: research}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: research}
spec: {clusterQueue: q}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: sales}
spec: {clusterQueue: q}
)");
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  r.tw.pod("ok").gpus(1).queue("q").ns("research").add();
  r.tw.pod("no").gpus(1).queue("q").ns("sales").add();
  r.run(kHour);
  CHECK(r.start_s("ok") == 0);
  CHECK(r.start_s("no") == -1);
  const auto why = r.events("admission-pending");
  REQUIRE(why.size() == 1);
  CHECK(why[0].find("doesn't match the namespaceSelector") != std::string::npos);
}

TEST_CASE("a ClusterQueue's namespaceSelector matches the labels of the Namespace objects") {
  // Kueue matches spec.namespaceSelector against the Namespace's labels: research carries
  // team=ml, sales team=sales, and adhoc has no Namespace object (only its metadata.name label).
  KueueRig r;
  r.kueue(std::string(kFlavor) + R"(
---
apiVersion: v1
kind: Namespace
metadata: {name: research, labels: {team: ml}}
---
apiVersion: v1
kind: Namespace
metadata: {name: sales, labels: {team: sales}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector:
    matchExpressions: [{key: team, operator: In, values: [ml]}]
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
)" + [] {
    std::string lqs;
    for (const char* ns : {"research", "sales", "adhoc"}) {
      lqs += fmt::format(
          "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
          "metadata: {{name: q, namespace: {}}}\nspec: {{clusterQueue: q}}\n",
          ns);
    }
    return lqs;
  }());
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
  r.tw.pod("ml").gpus(1).queue("q").ns("research").add();
  r.tw.pod("sell").gpus(1).queue("q").ns("sales").add();
  r.tw.pod("misc").gpus(1).queue("q").ns("adhoc").add();
  r.run(kHour);
  CHECK(r.start_s("ml") == 0);
  CHECK(r.start_s("sell") == -1);
  CHECK(r.start_s("misc") == -1);
  const auto why = r.events("admission-pending");
  CHECK(why.size() == 2);
  for (const auto& w : why)
    CHECK(w.find("doesn't match the namespaceSelector of ClusterQueue q") != std::string::npos);
}

TEST_CASE(
    "pods of queues without a LocalQueue bypass Kueue and runs without Kueue objects are "
    "unchanged") {
  // Same pods, with and without Kueue objects that do not name their queue: identical runs.
  auto build = [](KueueRig& r) {
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 6; ++i)
      r.tw.pod(fmt::format("p-{}", i)).gpus(2).queue("other").arrival(i * kMinute).add();
  };
  KueueRig plain;
  build(plain);
  plain.run();
  KueueRig kueue;
  kueue.kueue(std::string(kFlavor) + cq("q", 4, "", "", ""));
  build(kueue);
  kueue.run();
  CHECK(plain.rec.events.size() == kueue.rec.events.size());
  for (int i = 0; i < 6; ++i) {
    CHECK(plain.start_s(fmt::format("p-{}", i)) == kueue.start_s(fmt::format("p-{}", i)));
  }
  CHECK(plain.metric("kueue.workloads") == -1e300);  // no Kueue metrics without Kueue
  CHECK(kueue.metric("kueue.workloads") == 0);
}

TEST_CASE("at most one borrowing admission per cohort per cycle lets non-borrowing work go first") {
  // team-a: nominal 4; team-b: nominal 0 (borrows). Both at t=0: A1, A2 (2 GPUs each, team-a)
  // and B1 (2 GPUs, team-b). Cycle 1 heads: A1 (within nominal) and B1 (borrowing).
  struct Case {
    const char* rule;
    double want_a2, want_b1;
  };
  const Case cases[] = {
      // With the rule B1 is skipped after A1's admission; cycle 2 admits A2 (team-a's own
      // quota) and B1 finds nothing left until A1 ends at 1h.
      {"true", 0, 3600},
      // Without it B1 borrows team-a's other 2 GPUs in cycle 1 and A2 waits for 1h.
      {"false", 3600, 0},
  };
  for (const Case& c : cases) {
    const std::string label = c.rule;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) + cq("team-a", 4) + cq("team-b", 0),
            fmt::format("oneBorrowingAdmissionPerCohortPerCycle: {}", c.rule));
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.pod("A1").gpus(2).queue("team-a").duration(kHour).add();
    r.tw.pod("A2").gpus(2).queue("team-a").duration(kHour).add();
    r.tw.pod("B1").gpus(2).queue("team-b").duration(kHour).add();
    r.run();
    CHECK(r.start_s("A1") == 0);
    CHECK(r.start_s("A2") == c.want_a2);
    CHECK(r.start_s("B1") == c.want_b1);
  }
}

TEST_CASE(
    "withinClusterQueue preempts lower-priority work of the same queue by workload priority") {
  // One ClusterQueue of 8 GPUs. t=0: two 4-GPU low jobs (WorkloadPriorityClass low = 10) for 10h.
  // t=1h: an 8-GPU high job (high = 1000). LowerPriority: both low jobs are the minimal set;
  // after their 30s grace the high job starts at 3630. Never: it waits until 10h.
  struct Case {
    const char* policy;
    double want_high;
    int want_preempted;
  };
  const Case cases[] = {{"LowerPriority", 3630, 2}, {"Never", 36000, 0}};
  for (const Case& c : cases) {
    const std::string label = c.policy;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) +
            cq("q", 8, "", fmt::format("preemption: {{withinClusterQueue: {}}}", c.policy), "") +
            testing::kLowHighPriorityClasses);
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 2; ++i) {
      r.tw.pod(fmt::format("low-{}", i))
          .gpus(4)
          .queue("q")
          .label("kueue.x-k8s.io/priority-class", "low")
          .duration(10 * kHour)
          .add();
    }
    r.tw.pod("high")
        .gpus(8)
        .queue("q")
        .label("kueue.x-k8s.io/priority-class", "high")
        .arrival(kHour)
        .duration(kHour)
        .add();
    r.run();
    CHECK(r.start_s("high") == c.want_high);
    CHECK(r.metric("clusterqueue.q.preemptions") == c.want_preempted);
    if (c.want_preempted > 0) {
      CHECK(r.events("workload-preempted")[0].find("prioritization in the ClusterQueue") !=
            std::string::npos);
    }
  }
}

TEST_CASE("borrowWithinCohort lets a borrowing workload preempt lower-priority borrowers") {
  // team-a: nominal 4, wants 8 (borrowing 4) at high priority (1000) at t=1h.
  // team-b: nominal 4, runs four 4-GPU low-priority (10) jobs from t=0 for 10h: it borrows the
  // 12 GPUs of team-a and team-c (idle, nominal 8). The cohort has 16 GPUs, all in use.
  // Without borrowWithinCohort team-a cannot preempt while it would borrow: it waits for 10h.
  // With policy LowerPriority, the minimal set is two of team-b's jobs (the most recently
  // admitted; packed on one node): team-a starts at 3630, after their 30s grace.
  struct Case {
    const char* name;
    const char* preemption;
    double want_a;
  };
  const Case cases[] = {
      {"reclaim only", "preemption: {reclaimWithinCohort: Any}", 36000},
      {"borrowWithinCohort",
       "preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority}}", 3630},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    KueueRig r;
    r.kueue(std::string(kFlavor) + cq("team-a", 4, "", c.preemption) + cq("team-b", 4) +
            cq("team-c", 8) + testing::kLowHighPriorityClasses);
    r.tw.node("n1").cpu("64").memory("512Gi").gpus(8).add();
    r.tw.node("n2").cpu("64").memory("512Gi").gpus(8).add();
    for (int i = 0; i < 4; ++i) {
      r.tw.pod(fmt::format("b-{}", i))
          .gpus(4)
          .queue("team-b")
          .label("kueue.x-k8s.io/priority-class", "low")
          .duration(10 * kHour)
          .add();
    }
    r.tw.pod("a")
        .gpus(8)
        .queue("team-a")
        .label("kueue.x-k8s.io/priority-class", "high")
        .arrival(kHour)
        .duration(kHour)
        .add();
    r.run(kEndOfTime, kMinute, "gpu-binpack");
    CHECK(r.start_s("a") == c.want_a);
  }
}

TEST_CASE("resource transformations turn a pod's requests into what it is charged") {
  // Kueue's applyResourceTransformations (pkg/workload/workload.go), after the
  // excludeResourcePrefixes drop. Transformations:
  //   mig-1g.10gb -> 0.5 credit, Replace;  mig-3g.40gb -> 2 credits, Retain;
  //   cpu -> 3 example.com/core-credits (excluded prefix, but outputs are not dropped);
  //   nvidia.com/gpu -> 1 credit, multiplyBy capsim.io/hours.
  World world;
  auto id = [&](const char* n) { return *world.resources.intern(n); };
  const ResourceId mig1 = id("nvidia.com/mig-1g.10gb"), mig3 = id("nvidia.com/mig-3g.40gb");
  const ResourceId credit = id("credits.capsim.io/gpu"), core = id("example.com/core-credits");
  const ResourceId foo = id("example.com/foo"), hours = id("capsim.io/hours");
  queueing::KueueSettings s;
  s.exclude_resource_prefixes = {"example.com/"};
  // Factors as the loader keeps them: amount x 10^scale in the output's capsim units.
  s.transformations.push_back({mig1, true, kNoResource, {{credit, 500, 3}}, {}});
  s.transformations.push_back({mig3, false, kNoResource, {{credit, 2, 0}}, {}});
  s.transformations.push_back({kCpu, false, kNoResource, {{core, 3, 0}}, {}});
  s.transformations.push_back({kNvidiaGpu, true, hours, {{credit, 1, 0}}, {}});
  auto list = [](std::vector<std::pair<ResourceId, std::int64_t>> items) {
    ResourceList l;
    for (auto [r, v] : items)
      l.set(r, v);
    return l;
  };
  struct Case {
    const char* name;
    ResourceList pod;
    ResourceList want;
  };
  const Case cases[] = {
      // 2 x 0.5 = 1 credit; the slices are replaced.
      {"Replace charges only the outputs", list({{mig1, 2}}), list({{credit, 1}})},
      // 3 x 0.5 = 1.5, rounded up to 2 credits (Value()).
      {"a fractional output rounds up", list({{mig1, 3}}), list({{credit, 2}})},
      // 1 x 2 = 2 credits, and the slice stays (Retain).
      {"Retain keeps the input", list({{mig3, 1}}), list({{mig3, 1}, {credit, 2}})},
      // 1 x 0.5 + 1 x 2 = 2.5 -> 3 credits: outputs add up before rounding.
      {"outputs of two inputs add up", list({{mig1, 1}, {mig3, 1}}),
       list({{mig3, 1}, {credit, 3}})},
      // cpu 1500m has Value() 2: 2 x 3 = 6 core credits, cpu kept; example.com/foo dropped.
      {"cpu counts in whole cores; excluded requests are dropped first",
       list({{kCpu, 1500}, {foo, 4}}), list({{kCpu, 1500}, {core, 6}})},
      // 2 GPUs x 3 hours = 6 credits; the gpus are replaced, hours kept.
      {"multiplyBy scales the input", list({{kNvidiaGpu, 2}, {hours, 3}}),
       list({{hours, 3}, {credit, 6}})},
      // Without the multiplyBy resource the input counts alone: 2 credits.
      {"multiplyBy without that request", list({{kNvidiaGpu, 2}}), list({{credit, 2}})},
      // No transformation matches: only the exclusion applies.
      {"no matching input leaves the requests", list({{kMemory, 1024}, {foo, 1}}),
       list({{kMemory, 1024}})},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(queueing::charged_pod_requests(s, world.resources, c.pod).items == c.want.items);
  }
}

TEST_CASE("deviceClassMappings charge the devices of a pod's ResourceClaimTemplates") {
  // Kueue's pkg/dra/claims.go: only ResourceClaimTemplates count; an ExactCount request of a
  // mapped DeviceClass adds its count to the mapping's resource; adminAccess adds nothing.
  World world;
  const ResourceId gpus = *world.resources.intern("whole-gpus");
  auto request = [](const char* name, const char* cls, std::int32_t count, bool admin) {
    dra::Request r;
    r.name = name;
    dra::SubRequest sub;
    sub.name = name;
    sub.device_class = cls;
    sub.count = count;
    sub.admin_access = admin;
    r.subrequests.push_back(sub);
    return r;
  };
  dra::Claim tmpl;
  tmpl.name = "two-gpus";
  tmpl.from_template = true;
  tmpl.spec.requests = {request("a", "gpu.nvidia.com", 2, false),
                        request("b", "gpu.nvidia.com", 1, true),
                        request("c", "mig.nvidia.com", 3, false)};
  dra::Claim shared = tmpl;
  shared.name = "shared";
  shared.from_template = false;
  world.dra.claims = {tmpl, shared};
  PodSpec pod;
  PodClaimRef t;
  t.template_name = "two-gpus";
  t.claim = 0;
  PodClaimRef c;
  c.claim_name = "shared";
  c.claim = 1;
  pod.claims = {t, c};
  queueing::KueueSettings s;
  CHECK(queueing::dra_charged_requests(s, world, pod).items.empty());  // no mappings: nothing
  s.device_class_mappings.push_back({gpus, {"gpu.nvidia.com", "mig.nvidia.com"}, {}});
  // 2 + 3 from the template; the adminAccess request and the shared claim add nothing.
  const ResourceList got = queueing::dra_charged_requests(s, world, pod);
  CHECK(got.get(gpus) == 5);
  CHECK(got.items.size() == 1);
}

TEST_CASE("a partially admitted Job's pod preempted by the scheduler is recreated and runs") {
  // Quota 4 on a 4-GPU node: `train` (6 one-GPU pods, job-min-parallelism 2) is admitted with 4
  // and fills the node. At 10m a pod outside Kueue with priority 1000 preempts one of them
  // (DefaultPreemption); the Job's pod is recreated and, as one of the 4 it may run, goes back to
  // the scheduler: it runs when `vip` ends at 40m, and the Job finishes.
  KueueRig r;
  r.kueue(std::string(kFlavor) + cq("q", 4) + R"(---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {kueue.x-k8s.io/job-min-parallelism: "2", capsim.io/duration: 1h}
spec:
  parallelism: 6
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: trainer, resources: {limits: {nvidia.com/gpu: 1}}}
)");
  r.tw.node("n1").cpu("64").memory("512Gi").gpus(4).add();
  r.tw.pod("vip").gpus(1).priority(1000).arrival(10 * kMinute).duration(30 * kMinute).add();
  r.run();
  CHECK(r.start_s("vip") > 600.0);
  CHECK(r.metric("pods_completed") == 7);
  CHECK(r.metric("pods_pending_at_end") == 0);
  CHECK(r.metric("preemptions") == 1);
}
