// docs/grafana/capsim.json queries only series that `capsim report --prometheus` writes: every
// metric name in every panel query is a family of the export of a run with queues
// (team-quotas) or with time-slicing (ts4). tools/check-grafana-dashboard.sh runs the queries
// against Prometheus itself (docs/grafana.md).
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fixtures/cli_run.hpp"

using namespace capsim::testing;

TEST_CASE("every metric the Grafana dashboard queries is one the Prometheus export writes") {
  ScratchDir dir("grafana");
  std::set<std::string> families;
  for (const std::string scenario :
       {"scenarios/team-quotas/team-quotas.yaml", "scenarios/mig-vs-timeslicing/ts4.yaml"}) {
    const std::string db = dir.file("run.db"), om = dir.file("run.om");
    REQUIRE(
        run_capsim("run '" + source_path(scenario) + "' -o '" + db + "' --quiet", dir).exit_code ==
        0);
    REQUIRE(run_capsim("report '" + db + "' --prometheus '" + om + "' -q", dir).exit_code == 0);
    std::istringstream in(slurp(om));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# TYPE ", 0) == 0) families.insert(line.substr(7, line.find(' ', 7) - 7));
    }
  }
  const std::string dashboard = slurp(source_path("docs/grafana/capsim.json"));
  const std::regex expr(R"re("expr": "((?:[^"\\]|\\.)*)")re");
  const std::regex metric(R"(\b((?:DCGM_FI|capsim|kueue)_[A-Za-z0-9_]+))");
  int queries = 0;
  for (auto e = std::sregex_iterator(dashboard.begin(), dashboard.end(), expr);
       e != std::sregex_iterator(); ++e) {
    ++queries;
    const std::string q = (*e)[1].str();
    for (auto m = std::sregex_iterator(q.begin(), q.end(), metric); m != std::sregex_iterator();
         ++m) {
      std::string name = (*m)[1].str();
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
            families.count(name.substr(0, name.size() - s.size()))) {
          name = name.substr(0, name.size() - s.size());
        }
      }
      CAPTURE(q);
      CHECK_MESSAGE(families.count(name) == 1, name);
    }
  }
  CHECK(queries >= 12);
}
