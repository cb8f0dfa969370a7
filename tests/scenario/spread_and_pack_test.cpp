// scenarios/spread-and-pack end to end through the real binary: the inference Deployment's six
// replicas spread 2/2/2 over zones za, zb, zc under PodTopologySpread (za has four of the six
// nodes, so spreading by node alone would put four there), and the training Job's four workers
// share one node under their required pod affinity (LeastAllocated alone would spread them).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Pool names are the zones: node "zb-0" is in zone zb.
std::string zone_of(const std::string& node) {
  return node.substr(0, node.find('-'));
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("spread-and-pack: inference spreads over zones, training packs onto one node") {
    testing::ScratchDir dir("spread-and-pack");
    const auto r = testing::run_capsim(
        "run '" + testing::source_path("scenarios/spread-and-pack/scenario.yaml") + "' -o '" +
            dir.file("s.db") + "'",
        dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    RunReader reader(dir.file("s.db"));
    auto st = reader.db().prepare(
        "SELECT pod, coalesce(node, ''), status FROM pod WHERE run_id = 1 ORDER BY pod");
    std::map<std::string, int> infer_per_zone;
    std::map<std::string, int> train_per_node;
    int infer = 0, train = 0;
    while (st.step()) {
      const std::string pod = st.column_text(0), node = st.column_text(1);
      INFO(pod << " on " << node << ": " << st.column_text(2));
      REQUIRE(!node.empty());  // every pod ran
      if (starts_with(pod, "infer-")) {
        ++infer;
        ++infer_per_zone[zone_of(node)];
      } else if (starts_with(pod, "train-")) {
        ++train;
        ++train_per_node[node];
        CHECK(st.column_text(2) == "completed");
      }
    }
    CHECK(infer == 6);
    CHECK(infer_per_zone == std::map<std::string, int>{{"za", 2}, {"zb", 2}, {"zc", 2}});
    CHECK(train == 4);
    REQUIRE(train_per_node.size() == 1);
    CHECK(train_per_node.begin()->second == 4);
  }
}

}  // namespace capsim
