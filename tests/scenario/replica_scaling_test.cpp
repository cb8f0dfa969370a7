// Scaling over time, end to end through the real binary: a scenario's `scaling:` steps (inline
// or a CSV trace) change a Deployment's or StatefulSet's replicas during the run. A step up adds
// pods arriving at the step's time; a step down deletes the pods upstream's ReplicaSet controller
// would (pkg/controller/controller_utils.go, ActivePodsWithRanks: unassigned first, then more
// pods of the controller on the node, then the most recently started), or a StatefulSet's
// highest ordinals, each after its grace period. Runs are paranoid.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

struct PodRow {
  std::string name, status, node;
  double start = -1, end = -1;
};

// The run's pod rows, by name.
std::vector<PodRow> pods_of(const std::string& db) {
  RunReader reader(db);
  auto st = reader.db().prepare(
      "SELECT pod, status, coalesce(node, ''), coalesce(start_s, -1), coalesce(end_s, -1) "
      "FROM pod WHERE run_id = 1 ORDER BY pod");
  std::vector<PodRow> out;
  while (st.step()) {
    out.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_double(3),
                   st.column_double(4)});
  }
  return out;
}

const PodRow& row_of(const std::vector<PodRow>& rows, const std::string& name) {
  for (const PodRow& r : rows) {
    if (r.name == name) return r;
  }
  FAIL("no pod " << name);
  return rows.front();
}

std::string scenario(const std::string& nodes, const std::string& scaling) {
  return "name: scaling\nsimulation: {horizon: 6h, paranoid: true}\ncluster:\n  nodes:\n" + nodes +
         "manifests: [m.yaml]\nscaling:\n" + scaling;
}

// A Deployment of `replicas` pods of `cpu` CPUs each, with a 30 s grace period.
std::string deployment(const std::string& name, int replicas, int cpu) {
  return "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
         "}\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  selector: {matchLabels: {app: " + name +
         "}}\n  template:\n    metadata: {labels: {app: " + name +
         "}}\n    spec:\n      terminationGracePeriodSeconds: 30\n      containers:\n      - "
         "name: c\n        image: server\n        resources: {requests: {cpu: " +
         std::to_string(cpu) + "}}\n";
}

// A StatefulSet of three 1-CPU pods, db-0 to db-2.
const char* kStatefulSet = R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: c, image: db, resources: {requests: {cpu: 1}}}
)";

testing::CommandResult run(testing::ScratchDir& dir, const std::string& s, const std::string& m) {
  testing::write_file(dir.file("scenario.yaml"), s);
  testing::write_file(dir.file("m.yaml"), m);
  return testing::run_capsim(
      "run '" + dir.file("scenario.yaml") + "' -o '" + dir.file("out.db") + "'", dir);
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("a step down deletes the pending replica first, at once") {
    // Two 3-CPU replicas fit the 8-CPU node, the third waits; scaled to 2, the waiting one goes.
    testing::ScratchDir dir("scaling-pending");
    const auto r = run(dir,
                       scenario("    - {name: n1, cpu: 8, memory: 64Gi}\n",
                                "  - {kind: Deployment, name: web, at: 1h, replicas: 2}\n"),
                       deployment("web", 3, 3));
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    int running = 0;
    for (const PodRow& p : pods_of(dir.file("out.db"))) {
      CAPTURE(p.name);
      if (p.status == "deleted") {
        CHECK(p.start == -1);
        CHECK(p.end == 3600.0);
      } else {
        CHECK(p.status == "running");
        ++running;
      }
    }
    CHECK(running == 2);
    RunReader reader(dir.file("out.db"));
    auto m = reader.db().prepare(
        "SELECT value FROM summary WHERE run_id = 1 AND metric = 'pods_deleted'");
    REQUIRE(m.step());
    CHECK(m.column_double(0) == 1.0);
  }

  TEST_CASE("a step down deletes the unassigned replica, then a doubled-up one, after its grace") {
    // n1 fits two 3-CPU pods, n2 one: the three replicas are two on n1 and one on n2. At 1h a
    // fourth has no room and waits. At 3h, down to 2: the waiting one goes at once (upstream's
    // rank 1, unassigned first), then one of n1's (rank 5: more of the controller's pods on its
    // node), after its 30 s grace period.
    testing::ScratchDir dir("scaling-ranks");
    const auto r = run(dir,
                       scenario("    - {name: n1, cpu: 7, memory: 64Gi}\n"
                                "    - {name: n2, cpu: 4, memory: 64Gi}\n",
                                "  - {kind: Deployment, name: web, at: 1h, replicas: 4}\n"
                                "  - {kind: Deployment, name: web, at: 3h, replicas: 2}\n"),
                       deployment("web", 3, 3));
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    std::map<std::string, int> deleted_on, kept_on;
    for (const PodRow& p : pods_of(dir.file("out.db"))) {
      CAPTURE(p.name);
      if (p.status == "deleted") {
        ++deleted_on[p.node];
        CHECK(p.end == (p.node.empty() ? 3 * 3600.0 : 3 * 3600.0 + 30.0));
      } else {
        CHECK(p.status == "running");
        ++kept_on[p.node];
      }
    }
    CHECK(deleted_on == std::map<std::string, int>{{"", 1}, {"n1", 1}});
    CHECK(kept_on == std::map<std::string, int>{{"n1", 1}, {"n2", 1}});
  }

  TEST_CASE("of replicas alike, a step down deletes the one started most recently") {
    // Two replicas from 0h, a third from 1h, all on one node; at 3h, down to 2: the third goes
    // (upstream's rank 6 on its logarithmic scale: 2h ago and 3h ago differ in rank).
    testing::ScratchDir dir("scaling-newest");
    const auto r = run(dir,
                       scenario("    - {name: n1, cpu: 16, memory: 64Gi}\n",
                                "  - {kind: Deployment, name: web, at: 1h, replicas: 3}\n"
                                "  - {kind: Deployment, name: web, at: 3h, replicas: 2}\n"),
                       deployment("web", 2, 1));
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    int checked = 0;
    for (const PodRow& p : pods_of(dir.file("out.db"))) {
      CAPTURE(p.name);
      CHECK(p.status == (p.start == 3600.0 ? "deleted" : "running"));
      ++checked;
    }
    CHECK(checked == 3);
  }

  TEST_CASE("a StatefulSet grows by new ordinals and shrinks from its highest, from a trace") {
    testing::ScratchDir dir("scaling-statefulset");
    testing::write_file(dir.file("replicas.csv"),
                        "# kube_statefulset_replicas, sampled\n"
                        "time,kind,namespace,name,replicas\n"
                        "1h,StatefulSet,default,db,5\n"
                        "2h,StatefulSet,default,db,2\n");
    const auto r = run(
        dir, scenario("    - {name: n1, cpu: 16, memory: 64Gi}\n", "  - {trace: replicas.csv}\n"),
        kStatefulSet);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto pods = pods_of(dir.file("out.db"));
    REQUIRE(pods.size() == 5);
    for (const char* kept : {"db-0", "db-1"}) {
      CAPTURE(kept);
      CHECK(row_of(pods, kept).status == "running");
    }
    CHECK(row_of(pods, "db-3").start == 3600.0);
    CHECK(row_of(pods, "db-4").start == 3600.0);
    for (const char* gone : {"db-2", "db-3", "db-4"}) {
      CAPTURE(gone);
      CHECK(row_of(pods, gone).status == "deleted");
      CHECK(row_of(pods, gone).end == 2 * 3600.0 + 30.0);  // the default 30 s grace period
    }
  }

  TEST_CASE("scaling errors name the file, line and field") {
    testing::ScratchDir dir("scaling-errors");
    auto error = [&](const std::string& scaling, const std::string& m) {
      const auto r = run(dir, scenario("    - {name: n1, cpu: 8, memory: 64Gi}\n", scaling), m);
      CHECK(r.exit_code == 65);
      return r.err;
    };
    std::string e =
        error("  - {kind: Deployment, name: wbe, at: 1h, replicas: 2}\n", deployment("web", 1, 1));
    CHECK(e.find("scenario.yaml:8:30: scaling[0].name: no Deployment 'wbe' in namespace "
                 "default is read from the manifests") != std::string::npos);
    e = error("  - {kind: Deploymnet, name: web, at: 1h, replicas: 2}\n", deployment("web", 1, 1));
    CHECK(e.find("scaling[0].kind: 'Deploymnet' is not a controller capsim scales (did you mean "
                 "'Deployment'?)") != std::string::npos);
    e = error(
        "  - {kind: Deployment, name: web, at: 1h, replicas: 2}\n"
        "  - {kind: Deployment, name: web, at: 1h, replicas: 3}\n",
        deployment("web", 1, 1));
    CHECK(e.find("has two scaling steps at 1h") != std::string::npos);
    e = error(
        "  - {kind: StatefulSet, name: db, at: 1h, replicas: 1}\n"
        "  - {kind: StatefulSet, name: db, at: 2h, replicas: 3}\n",
        kStatefulSet);
    CHECK(e.find("scenario.yaml:9:39: scaling[1].at: StatefulSet 'db' would make pod db-1 again "
                 "after deleting it") != std::string::npos);
    // A trace swinging between 0 and 100,000 replicas is refused before any pod is made.
    std::string swing = "time,kind,name,replicas\n";
    for (int i = 0; i < 50; ++i)
      swing +=
          std::to_string(60 * (i + 1)) + ",Deployment,web," + (i % 2 == 0 ? "100000" : "0") + "\n";
    testing::write_file(dir.file("swing.csv"), swing);
    e = error("  - {trace: swing.csv}\n", deployment("web", 1, 1));
    CHECK(e.find("swing.csv:42: column time: the scaling steps up to here create 2099999 "
                 "replicas, above the limit of 2000000 (docs/cli.md#limits); pass --force") !=
          std::string::npos);
    testing::write_file(dir.file("bad.csv"), "time,kind,name,replicas\n1h,Deployment,web,two\n");
    e = error("  - {trace: bad.csv}\n", deployment("web", 1, 1));
    CHECK(e.find("bad.csv:2: column replicas: 'two' is not a replica count") != std::string::npos);
  }
}

}  // namespace capsim
