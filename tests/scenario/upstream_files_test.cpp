// scenarios/upstream-files end to end through the real binary: a file of upstream objects with
// no capsim annotations runs; the skipped kinds are noted once each; the DaemonSet's pods run on
// the nodes they match, one each; the Deployment's replicas run to the horizon; the CronJob's
// Jobs arrive at 02:00 each day; the generateName Job keeps its generated name.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

TEST_SUITE("scenario") {
  TEST_CASE("upstream-files: unchanged upstream objects run with durations rules and controllers") {
    testing::ScratchDir dir("upstream-files");
    const auto r = testing::run_capsim(
        "run '" + testing::source_path("scenarios/upstream-files/scenario.yaml") + "' -o '" +
            dir.file("up.db") + "'",
        dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("kind: v1 Namespace ") == std::string::npos);  // read: its labels count
    for (const char* kind :
         {"kind: v1 ServiceAccount ", "kind: rbac.authorization.k8s.io/v1 RoleBinding ",
          "kind: v1 ConfigMap ", "kind: v1 Service "}) {
      INFO(kind);
      const auto first = r.err.find(kind);
      REQUIRE(first != std::string::npos);
      CHECK(r.err.find(kind, first + 1) == std::string::npos);  // one note per kind
    }
    RunReader reader(dir.file("up.db"));
    REQUIRE(reader.runs().size() == 1);
    auto st = reader.db().prepare(
        "SELECT pod, job, submit_s, status, coalesce(node, '') FROM pod WHERE run_id = 1 "
        "ORDER BY pod");
    std::map<std::string, int> per_owner;
    std::set<std::string> daemon_nodes;
    std::set<double> eval_submits;
    while (st.step()) {
      const std::string pod = st.column_text(0);
      const std::string owner = st.column_text(1);
      CAPTURE(pod);
      per_owner[owner]++;
      if (owner == "gpu-metrics") {
        CHECK(st.column_text(3) == "running");
        daemon_nodes.insert(st.column_text(4));
      }
      if (owner == "serving") CHECK(st.column_text(3) == "running");
      if (owner.rfind("nightly-eval-", 0) == 0) {
        eval_submits.insert(st.column_double(2));
        CHECK(st.column_text(3) == "completed");
      }
      if (owner.rfind("finetune-", 0) == 0)
        CHECK(owner.size() == std::string("finetune-").size() + 5);
    }
    CHECK(per_owner["gpu-metrics"] == 3);
    CHECK(daemon_nodes == std::set<std::string>{"a100-0", "a100-1", "a100-2"});
    CHECK(per_owner["serving"] == 4);
    CHECK(eval_submits == std::set<double>{2 * 3600.0, 26 * 3600.0});
  }
}

}  // namespace capsim
