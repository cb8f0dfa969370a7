// Kueue's metric names in `capsim report --prometheus`, for a run with ClusterQueues (the
// team-quotas scenario): the families and their types, Kueue's label names, the admission-wait
// histogram with Kueue's buckets (cumulative, +Inf = count, one observation per admission the
// events record, the waits they state), usage equal to the queue samples; and, where Debian's
// Prometheus tools are installed, promtool accepts the text and backfills the OpenMetrics file.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_db.hpp"

using namespace capsim;
using namespace capsim::testing;

namespace {

const std::string& team_quotas_db() {
  static ScratchDir dir("kueue-metrics");
  static const std::string db = [] {
    const std::string path = dir.file("tq.db");
    const CommandResult r =
        run_capsim("run '" + source_path("scenarios/team-quotas/team-quotas.yaml") + "' -o '" +
                       path + "' --quiet",
                   dir);
    REQUIRE(r.exit_code == 0);
    return path;
  }();
  return db;
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0, time = 0;
};

std::vector<Sample> parse_samples(const std::string& text,
                                  std::map<std::string, std::string>& types,
                                  std::map<std::string, std::string>& units) {
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  const std::regex sample(R"(^([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\} (\S+) (\S+)$)");
  const std::regex label(R"re(([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream f(line.substr(7));
      std::string name, type;
      f >> name >> type;
      types[name] = type;
      continue;
    }
    if (line.rfind("# UNIT ", 0) == 0) {
      std::istringstream f(line.substr(7));
      std::string name, unit;
      f >> name >> unit;
      units[name] = unit;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, sample)) continue;
    Sample s;
    s.name = m[1].str();
    const std::string labels = m[2].str();
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label);
         it != std::sregex_iterator(); ++it)
      s.labels[(*it)[1].str()] = (*it)[2].str();
    s.value =
        m[3].str() == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(m[3].str());
    s.time = std::stod(m[4].str());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

TEST_SUITE("kueue metrics") {
  TEST_CASE("the OpenMetrics export carries Kueue's metric names and labels for queued runs") {
    ScratchDir dir("kueue-om");
    const std::string om = dir.file("m.om");
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + om + "' -q", dir)
                .exit_code == 0);
    std::map<std::string, std::string> types, units;
    const std::vector<Sample> samples = parse_samples(slurp(om), types, units);
    CHECK(types["kueue_pending_workloads"] == "gauge");
    CHECK(types["kueue_admitted_active_workloads"] == "gauge");
    CHECK(types["kueue_cluster_queue_resource_usage"] == "gauge");
    CHECK(types["kueue_cluster_queue_nominal_quota"] == "gauge");
    CHECK(types["kueue_admission_wait_time_seconds"] == "histogram");
    CHECK(units["kueue_admission_wait_time_seconds"] == "seconds");

    const std::set<std::string> cqs = {"research", "product", "evals"};
    // Kueue's buckets: 1, then 2.5 doubling (pkg/metrics generateExponentialBuckets(14)).
    const std::vector<std::string> les = {"1.0",    "2.5",    "5.0",    "10.0",    "20.0",
                                          "40.0",   "80.0",   "160.0",  "320.0",   "640.0",
                                          "1280.0", "2560.0", "5120.0", "10240.0", "+Inf"};
    std::map<std::pair<std::string, double>, std::vector<std::pair<std::string, double>>> hist;
    std::map<std::pair<std::string, double>, double> count;
    std::map<std::string, double> final_count, final_sum;
    std::map<std::string, int> seen;
    for (const Sample& s : samples) {
      if (s.name.rfind("kueue_", 0) != 0) continue;
      ++seen[s.name];
      CAPTURE(s.name);
      if (s.name.rfind("kueue_local_queue_", 0) == 0) {
        // LocalQueue series: Kueue's `name` and `namespace` (checked below).
        CHECK(s.labels.count("name") == 1);
        CHECK(s.labels.count("namespace") == 1);
        continue;
      }
      REQUIRE(s.labels.count("cluster_queue") == 1);
      CHECK(cqs.count(s.labels.at("cluster_queue")) == 1);
      if (s.name == "kueue_pending_workloads") {
        CHECK((s.labels.at("status") == "active" || s.labels.at("status") == "inadmissible"));
        CHECK(s.value >= 0);
      }
      if (s.name.rfind("kueue_cluster_queue_", 0) == 0) {
        CHECK(s.labels.count("flavor") == 1);
        CHECK(s.labels.count("resource") == 1);
      }
      const std::string& q = s.labels.at("cluster_queue");
      if (s.name == "kueue_admission_wait_time_seconds_bucket")
        hist[{q, s.time}].emplace_back(s.labels.at("le"), s.value);
      if (s.name == "kueue_admission_wait_time_seconds_count") {
        count[{q, s.time}] = s.value;
        final_count[q] = s.value;
      }
      if (s.name == "kueue_admission_wait_time_seconds_sum") final_sum[q] = s.value;
    }
    for (const char* name :
         {"kueue_pending_workloads", "kueue_admitted_active_workloads",
          "kueue_cluster_queue_resource_usage", "kueue_cluster_queue_nominal_quota",
          "kueue_admission_wait_time_seconds_bucket"}) {
      CAPTURE(name);
      CHECK(seen[name] > 0);
    }
    // Each histogram point: Kueue's le values in order, cumulative, +Inf equal to the count.
    REQUIRE_FALSE(hist.empty());
    for (const auto& [key, buckets] : hist) {
      REQUIRE(buckets.size() == les.size());
      for (std::size_t i = 0; i < les.size(); ++i) {
        CHECK(buckets[i].first == les[i]);
        if (i > 0) CHECK(buckets[i].second >= buckets[i - 1].second);
      }
      CHECK(buckets.back().second == count.at(key));
    }

    // One observation per admission, with the waits the admitted events state.
    RunReader reader(team_quotas_db());
    Statement st = reader.db().prepare(
        "SELECT detail FROM event WHERE run_id = 1 AND kind = 'admitted' ORDER BY seq");
    std::map<std::string, double> want_count, want_sum;
    const std::regex admitted(R"(ClusterQueue (\S+) .*wait time since queued was ([0-9.]+)s)");
    while (st.step()) {
      const std::string d = st.column_text(0);
      std::smatch m;
      REQUIRE(std::regex_search(d, m, admitted));
      want_count[m[1].str()] += 1;
      want_sum[m[1].str()] += std::stod(m[2].str());
    }
    for (const std::string& q : cqs) {
      CAPTURE(q);
      CHECK(final_count[q] == want_count[q]);
      CHECK(final_sum[q] == doctest::Approx(want_sum[q]).epsilon(1e-9));
    }
    // The summary's per-ClusterQueue admissions agree.
    for (const auto& [metric, value] : reader.summary(1)) {
      const std::string head = "clusterqueue.", tail = ".admissions";
      if (metric.rfind(head, 0) == 0 && metric.size() > head.size() + tail.size() &&
          metric.compare(metric.size() - tail.size(), tail.size(), tail) == 0) {
        const std::string q = metric.substr(head.size(), metric.size() - head.size() - tail.size());
        CAPTURE(q);
        CHECK(final_count[q] == value);
      }
    }
  }

  TEST_CASE("Kueue's resource usage is the queue samples' per-flavor usage, cpu in cores") {
    ScratchDir dir("kueue-usage");
    const std::string om = dir.file("m.om");
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + om +
                           "' --prometheus-start 0 -q",
                       dir)
                .exit_code == 0);
    std::map<std::string, std::string> types, units;
    std::map<std::tuple<std::string, std::string, std::string, double>, double> usage;
    for (const Sample& s : parse_samples(slurp(om), types, units)) {
      if (s.name != "kueue_cluster_queue_resource_usage") continue;
      usage[{s.labels.at("cluster_queue"), s.labels.at("flavor"), s.labels.at("resource"),
             s.time}] = s.value;
    }
    RunReader reader(team_quotas_db());
    Statement st = reader.db().prepare(
        "SELECT queue, flavor, resource, time_s, usage FROM queue_sample WHERE run_id = 1 AND "
        "flavor IS NOT NULL ORDER BY rowid");
    int checked = 0;
    while (st.step()) {
      const std::string resource = st.column_text(2);
      // The exporter keeps the last row of a time; the sampler writes one per time here.
      const auto key = std::make_tuple(st.column_text(0), st.column_text(1), resource,
                                       std::round(st.column_double(3) * 1000) / 1000);
      auto it = usage.find(key);
      REQUIRE(it != usage.end());
      const double want = resource == "cpu" ? st.column_double(4) / 1000.0 : st.column_double(4);
      CHECK(it->second == doctest::Approx(want));
      ++checked;
    }
    CHECK(checked > 100);
  }

  TEST_CASE("KAI's queue gauges are the ClusterQueues' usage and quota summed over flavors") {
    ScratchDir dir("kai-queues");
    const std::string om = dir.file("m.om");
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + om +
                           "' --prometheus-start 0 -q",
                       dir)
                .exit_code == 0);
    std::map<std::string, std::string> types, units;
    // (metric, queue, time) -> value, for the KAI series and the per-flavor Kueue ones added up.
    std::map<std::tuple<std::string, std::string, double>, double> kai, kueue_sum;
    for (const Sample& s : parse_samples(slurp(om), types, units)) {
      if (s.name.rfind("kai_queue_", 0) == 0) {
        CHECK(s.labels.count("queue_name") == 1);
        kai[{s.name, s.labels.at("queue_name"), s.time}] = s.value;
      }
      const bool usage = s.name == "kueue_cluster_queue_resource_usage";
      if (!usage && s.name != "kueue_cluster_queue_nominal_quota") continue;
      const std::string& r = s.labels.at("resource");
      const std::string what = r == "nvidia.com/gpu" ? "gpus"
                               : r == "cpu"          ? "cpu_cores"
                                                     : "memory_bytes";
      const std::string name = std::string("kai_queue_") +
                               (usage ? "allocated_" : (what == "gpus" ? "deserved_" : "quota_")) +
                               what;
      kueue_sum[{name, s.labels.at("cluster_queue"), s.time}] += s.value;
    }
    for (const char* family : {"kai_queue_deserved_gpus", "kai_queue_allocated_gpus",
                               "kai_queue_quota_cpu_cores", "kai_queue_allocated_cpu_cores",
                               "kai_queue_quota_memory_bytes", "kai_queue_allocated_memory_bytes"})
      CHECK(types[family] == "gauge");
    REQUIRE(kai.size() > 100);
    CHECK(kai.size() == kueue_sum.size());
    double peak_gpus = 0;
    for (const auto& [key, v] : kueue_sum) {
      const auto it = kai.find(key);
      REQUIRE(it != kai.end());
      CHECK(it->second == doctest::Approx(v));
      if (std::get<0>(key) == "kai_queue_allocated_gpus") peak_gpus = std::max(peak_gpus, v);
    }
    CHECK(peak_gpus > 0);  // the run admits GPU work: the check above compared real usage
  }

  TEST_CASE("cluster-queue gauges carry the cohort, borrowing limits are the spec's (+Inf unset)") {
    ScratchDir dir("kueue-borrow");
    // team-quotas: three ClusterQueues in cohort gpu-pool, no borrowingLimit; the
    // queues-no-borrowing variant sets borrowingLimit: 0 on every resource.
    const std::string capped = dir.file("capped.db");
    REQUIRE(run_capsim("run '" + source_path("scenarios/team-quotas/team-quotas.yaml") + "' -o '" +
                           capped + "' --quiet --set 'manifests=[queues-no-borrowing.yaml]'",
                       dir)
                .exit_code == 0);
    for (const auto& [db, want] :
         {std::pair(team_quotas_db(), std::numeric_limits<double>::infinity()),
          std::pair(capped, 0.0)}) {
      const std::string& db_ = db;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(db_);
      const std::string om = dir.file("m.om");
      REQUIRE(run_capsim("report '" + db + "' --prometheus '" + om + "' -q", dir).exit_code == 0);
      std::map<std::string, std::string> types, units;
      std::set<std::tuple<std::string, std::string, std::string>> limited;
      int with_cohort = 0;
      for (const Sample& s : parse_samples(slurp(om), types, units)) {
        if (s.name.rfind("kueue_cluster_queue_", 0) != 0) continue;
        CAPTURE(s.name);
        REQUIRE(s.labels.count("cohort") == 1);
        CHECK(s.labels.at("cohort") == "gpu-pool");
        ++with_cohort;
        if (s.name != "kueue_cluster_queue_borrowing_limit") continue;
        CHECK(s.value == want);
        limited.insert(
            {s.labels.at("cluster_queue"), s.labels.at("flavor"), s.labels.at("resource")});
      }
      CHECK(types["kueue_cluster_queue_borrowing_limit"] == "gauge");
      CHECK(with_cohort > 100);
      // 3 ClusterQueues x 2 flavors x (cpu, memory, nvidia.com/gpu).
      CHECK(limited.size() == 18);
    }
  }

  TEST_CASE("LocalQueue series count each LocalQueue's workloads with Kueue's labels") {
    // In team-quotas each LocalQueue (namespace default) points to the ClusterQueue of its name,
    // so its pending and admitted counts are that ClusterQueue's at every time.
    ScratchDir dir("kueue-lq");
    const std::string om = dir.file("m.om");
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + om + "' -q", dir)
                .exit_code == 0);
    std::map<std::string, std::string> types, units;
    std::map<std::tuple<std::string, std::string, double>, double> cq, lq;  // (queue, what, t)
    for (const Sample& s : parse_samples(slurp(om), types, units)) {
      if (s.name == "kueue_admitted_active_workloads") {
        cq[{s.labels.at("cluster_queue"), "admitted", s.time}] = s.value;
      } else if (s.name == "kueue_pending_workloads") {
        cq[{s.labels.at("cluster_queue"), s.labels.at("status"), s.time}] = s.value;
      } else if (s.name == "kueue_local_queue_admitted_active_workloads") {
        CHECK(s.labels.at("namespace") == "default");
        lq[{s.labels.at("name"), "admitted", s.time}] = s.value;
      } else if (s.name == "kueue_local_queue_pending_workloads") {
        CHECK(s.labels.at("namespace") == "default");
        lq[{s.labels.at("name"), s.labels.at("status"), s.time}] = s.value;
      }
    }
    CHECK(types["kueue_local_queue_pending_workloads"] == "gauge");
    CHECK(types["kueue_local_queue_admitted_active_workloads"] == "gauge");
    REQUIRE(lq.size() > 100);
    CHECK(lq == cq);
    double admitted = 0;
    for (const auto& [key, v] : lq)
      admitted = std::max(admitted, v);
    CHECK(admitted > 0);
  }

  TEST_CASE("promtool accepts the Kueue series and backfills them (when installed)") {
    if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
      MESSAGE("promtool is not installed (Debian: apt-get install prometheus); skipped");
      return;
    }
    ScratchDir dir("kueue-promtool");
    const std::string text = dir.file("m.prom"), om = dir.file("m.om");
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + text +
                           "' --prometheus-format text -q",
                       dir)
                .exit_code == 0);
    REQUIRE(run_capsim("report '" + team_quotas_db() + "' --prometheus '" + om + "' -q", dir)
                .exit_code == 0);
    // `check metrics` lints too: its only complaint may be DCGM's own camelCase modelName label.
    const std::string lint = dir.file("lint.txt");
    std::system(("promtool check metrics < '" + text + "' > '" + lint + "' 2>&1").c_str());
    std::istringstream in(slurp(lint));
    std::string line;
    while (std::getline(in, line)) {
      CAPTURE(line);
      CHECK(line.find("DCGM_") == 0);
      CHECK(line.find("camelCase") != std::string::npos);
    }
    const std::string blocks = dir.file("blocks");
    CHECK(std::system(("promtool tsdb create-blocks-from openmetrics '" + om + "' '" + blocks +
                       "' > /dev/null 2>&1")
                          .c_str()) == 0);
    CHECK(std::filesystem::exists(blocks));
  }
}
