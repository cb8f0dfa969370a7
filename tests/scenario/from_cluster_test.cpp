// scenarios/from-cluster end to end through the real binary: the committed scenario is what
// `capsim import kubernetes` makes of the committed dump; replayed, it reproduces what the dump
// records (pods running at the dump on their nodes, finished pods on the node they ran on, the
// pods no node could take still pending, as far as its README says), and the what-if of its
// README (the h100 pool removed) loads and leaves the h100 pods unschedulable.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "fixtures/cli_run.hpp"
#include "fixtures/imported_scenario.hpp"
#include "models/yaml_reader.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

const char* kImportFlags = "--running pin --at 2026-11-30T20:00:00Z --name from-cluster";

std::string dir_file(const std::string& name) {
  return testing::source_path("scenarios/from-cluster/" + name);
}

struct Recorded {
  std::string phase, node;
};

// Each pod of the dump: its phase and node.
std::map<std::string, Recorded> recorded_pods() {
  const YamlNode dump = YamlNode::load_file(dir_file("dump.yaml"));
  std::map<std::string, Recorded> out;
  for (const auto& item : dump.raw()["items"]) {
    if (item["kind"].Scalar() != "Pod") continue;
    Recorded r;
    r.phase = item["status"]["phase"].Scalar();
    if (item["spec"]["nodeName"]) r.node = item["spec"]["nodeName"].Scalar();
    out[item["metadata"]["name"].Scalar()] = r;
  }
  return out;
}

struct Replayed {
  std::string status, node;
};

std::map<std::string, Replayed> replayed_pods(const std::string& db) {
  RunReader reader(db);
  auto st = reader.db().prepare("SELECT pod, status, coalesce(node, '') FROM pod WHERE run_id = 1");
  std::map<std::string, Replayed> out;
  while (st.step())
    out[st.column_text(0)] = Replayed{st.column_text(1), st.column_text(2)};
  return out;
}

double summary(const std::string& db, const std::string& metric) {
  RunReader reader(db);
  auto st = reader.db().prepare("SELECT value FROM summary WHERE run_id = 1 AND metric = ?");
  st.bind_text(1, metric);
  REQUIRE(st.step());
  return st.column_double(0);
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("from-cluster: the committed scenario is today's import of the committed dump") {
    testing::ScratchDir dir("from-cluster-import");
    const auto r = testing::run_capsim("import kubernetes '" + dir_file("dump.yaml") + "' " +
                                           kImportFlags + " -o '" + dir.file("out") + "'",
                                       dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* f : {"scenario.yaml", "pods.yaml"}) {
      CAPTURE(f);
      CHECK(testing::without_import_header(testing::slurp(dir.file(std::string("out/") + f))) ==
            testing::without_import_header(testing::slurp(dir_file(f))));
    }
  }

  TEST_CASE("from-cluster: the replay reproduces where and how the dump's pods ran") {
    testing::ScratchDir dir("from-cluster");
    const auto r = testing::run_capsim(
        "run '" + dir_file("scenario.yaml") + "' -o '" + dir.file("replay.db") + "' --quiet", dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto dump = recorded_pods();
    const auto replay = replayed_pods(dir.file("replay.db"));
    CHECK(replay.size() == dump.size());
    // Counts of the README's table: pods of each phase in the dump, and how many of them the
    // replay has on the same node and in the same final state.
    struct Count {
      std::size_t pods = 0, same_node = 0, same_state = 0;
    };
    std::map<std::string, Count> by_phase;
    const std::map<std::string, std::string> state_of = {{"Succeeded", "completed"},
                                                         {"Failed", "failed"},
                                                         {"Running", "running"},
                                                         {"Pending", "pending"}};
    for (const auto& [pod, rec] : dump) {
      const std::string& pod_name = pod;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(pod_name);
      REQUIRE(replay.count(pod) == 1);
      REQUIRE(state_of.count(rec.phase) == 1);
      const Replayed& got = replay.at(pod);
      Count& c = by_phase[rec.phase];
      ++c.pods;
      if (!rec.node.empty() && got.node == rec.node) ++c.same_node;
      if (got.status == state_of.at(rec.phase)) ++c.same_state;
    }
    for (const auto& [phase, c] : by_phase) {
      MESSAGE(phase << ": " << c.pods << " pods, " << c.same_node << " on the same node, "
                    << c.same_state << " in the same final state");
    }
    // Every finished pod ends as its status records, for its recorded time.
    CHECK(by_phase["Succeeded"].same_state == by_phase["Succeeded"].pods);
    CHECK(by_phase["Failed"].same_state == by_phase["Failed"].pods);
    // The README's figures, measured (not targets): a change of the scheduler or the importer
    // that moves pods changes them, and must update the README with them.
    CHECK(by_phase["Succeeded"].pods == 305);
    CHECK(by_phase["Succeeded"].same_node == 270);
    CHECK(by_phase["Failed"].pods == 18);
    CHECK(by_phase["Failed"].same_node == 16);
    CHECK(by_phase["Running"].pods == 30);
    CHECK(by_phase["Running"].same_node == 25);
    CHECK(by_phase["Pending"].pods == 7);
    CHECK(by_phase["Pending"].same_state == 3);
  }

  TEST_CASE("from-cluster: without the h100 pool its pods cannot run") {
    testing::ScratchDir dir("from-cluster-whatif");
    const auto base = testing::run_capsim(
        "run '" + dir_file("scenario.yaml") + "' -o '" + dir.file("base.db") + "' --quiet", dir);
    REQUIRE(base.exit_code == 0);
    const auto fewer = testing::run_capsim("run '" + dir_file("scenario.yaml") +
                                               "' --set cluster.pools.h100.count=0 -o '" +
                                               dir.file("fewer.db") + "' --quiet",
                                           dir);
    INFO(fewer.err);
    REQUIRE(fewer.exit_code == 0);
    // The h100 pods select their pool by its label, so without it they cannot run anywhere:
    // fewer complete, and those that arrive are unschedulable.
    const double done_base = summary(dir.file("base.db"), "pods_completed");
    const double done_fewer = summary(dir.file("fewer.db"), "pods_completed");
    MESSAGE("completed " << done_base << " -> " << done_fewer << " without h100");
    CHECK(done_fewer < done_base);
    CHECK(summary(dir.file("base.db"), "pods_unschedulable") == 0);
    CHECK(summary(dir.file("fewer.db"), "pods_unschedulable") > 0);
  }
}

}  // namespace capsim
