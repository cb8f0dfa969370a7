// `capsim report --opencost/--focus` through the real binary, and the cost ledger's charge rows
// behind them: four pods holding a quarter of one GPU for an hour add up to one GPU-hour; the
// exports add up to the run's cost_total_usd (allocated + idle) in every window, and window splits
// to the whole; the rows match the ledger's queue totals on whole-GPU, MIG, time-slicing and MPS
// runs; energy and CPU-only nodes are charged per pod exactly; the OpenCost field names are
// OpenCost's; the FOCUS file passes the 1.2 column rules; a file written before the charge table
// and bad options get exit codes.
#include "reports/cost_export.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/cost_allocation.hpp"
#include "reports/report_data.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_db.hpp"

using namespace capsim;
using namespace capsim::testing;

namespace {

// One A100 time-sliced into 4 replicas at $4/h, four pods each holding one replica from time 0
// for the whole (1 h) run: each is charged 1/4 GPU x 1 h = 0.25 GPU-hours = $1.
constexpr const char* kQuarterScenario = R"(name: quarters
seed: 1
simulation: {horizon: 1h, sample_interval: 10m}
device_plugin_configs:
  ts4: {version: v1, sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}}
cluster:
  pools:
    - {name: ts, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 32, memory: 256Gi,
       price_per_hour: 4.0, sharing: ts4}
workload:
  traces:
    - path: quarters.csv
)";
constexpr const char* kQuarterTrace =
    "pod,submit,duration,cpu,memory,gpu,gpu_util,gpu_memory,queue\n"
    "q-0,0,2h,1,4Gi,1,0.1,4Gi,team-a\n"
    "q-1,0,2h,1,4Gi,1,0.1,4Gi,team-a\n"
    "q-2,0,2h,1,4Gi,1,0.1,4Gi,team-b\n"
    "q-3,0,2h,1,4Gi,1,0.1,4Gi,team-b\n";

std::string run_scenario_db(const ScratchDir& dir, const std::string& scenario,
                            const std::string& name) {
  const std::string db = dir.file(name + ".db");
  const CommandResult r = run_capsim("run '" + scenario + "' -o '" + db + "' --quiet", dir);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return db;
}

const std::string& quarters_db() {
  static ScratchDir dir("cost-quarters");
  static const std::string db = [] {
    write_file(dir.file("quarters.yaml"), kQuarterScenario);
    write_file(dir.file("quarters.csv"), kQuarterTrace);
    return run_scenario_db(dir, dir.file("quarters.yaml"), "quarters");
  }();
  return db;
}

// A run with an energy price (the ledger charges energy by utilisation, which the rebuild
// spreads over each queue's pods) and pods that wait, restart and are preempted.
const std::string& mixed_db() {
  static ScratchDir dir("cost-mixed");
  static const std::string db =
      run_scenario_db(dir, source_path("scenarios/regression/mixed.yaml"), "mixed");
  return db;
}

// One A100 node at $4/h and one 32-core CPU node at $1.60/h, energy at $0.20/kWh x PUE 1.5, for
// exactly one hour: g holds the GPU all hour at util 0.5; c1 requests 8 cores all hour, c2 24
// cores for the first half hour.
constexpr const char* kEnergyCpuScenario = R"(name: energy-cpu
seed: 1
simulation: {horizon: 1h, sample_interval: 10m}
cost:
  energy: {price_per_kwh: 0.20, pue: 1.5}
cluster:
  pools:
    - {name: gpu, count: 1, gpu: {model: A100-80GB, count: 1}, cpu: 16, memory: 128Gi,
       price_per_hour: 4.0}
    - {name: cpu, count: 1, cpu: 32, memory: 128Gi, price_per_hour: 1.6}
workload:
  traces:
    - path: energy-cpu.csv
)";
constexpr const char* kEnergyCpuTrace =
    "pod,submit,duration,cpu,memory,gpu,gpu_util,gpu_memory,queue\n"
    "g,0,2h,4,16Gi,1,0.5,10Gi,train\n"
    "c1,0,2h,8,8Gi,0,0,0,etl\n"
    "c2,0,30m,24,8Gi,0,0,0,etl\n";

const std::string& energy_cpu_db() {
  static ScratchDir dir("cost-energy-cpu");
  static const std::string db = [] {
    write_file(dir.file("energy-cpu.yaml"), kEnergyCpuScenario);
    write_file(dir.file("energy-cpu.csv"), kEnergyCpuTrace);
    return run_scenario_db(dir, dir.file("energy-cpu.yaml"), "energy-cpu");
  }();
  return db;
}

const std::string& quickstart_db() {
  static ScratchDir dir("cost-qs");
  static const std::string db =
      run_scenario_db(dir, source_path("scenarios/quickstart.yaml"), "quickstart");
  return db;
}

double summary_metric(const std::string& db, const std::string& metric) {
  RunReader reader(db);
  for (const auto& [k, v] : reader.summary(*reader.latest_complete_run())) {
    if (k == metric) return v;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The OpenCost file as sets (one per window) of allocations (name -> field -> number). The
// exporter writes one allocation per line; string fields are kept in `text`.
struct OpenCostAllocation {
  std::map<std::string, double> number;
  std::map<std::string, std::string> text;
  std::vector<std::string> keys;  // top-level field names, in order
};
using OpenCostSet = std::map<std::string, OpenCostAllocation>;

std::vector<OpenCostSet> parse_opencost(const std::string& json) {
  REQUIRE(json.rfind("{\"code\":200,", 0) == 0);
  REQUIRE(json.find("\"data\":[") != std::string::npos);
  std::vector<OpenCostSet> sets;
  std::istringstream in(json);
  std::string line;
  const std::regex head(R"re(^"([^"]*)":\{"name":"([^"]*)",)re");
  const std::regex number_field(R"re("([A-Za-z]+)":(-?[0-9.eE+-]+)[,}])re");
  const std::regex text_field(R"re("(start|end)":"([^"]*)")re");
  while (std::getline(in, line)) {
    if (line.rfind("{\"code\"", 0) == 0 || line.rfind("},{", 0) == 0) sets.emplace_back();
    std::smatch m;
    if (!std::regex_search(line, m, head)) continue;
    REQUIRE_FALSE(sets.empty());
    CHECK(m[1].str() == m[2].str());
    OpenCostAllocation& a = sets.back()[m[1].str()];
    // Top-level keys: skip the nested objects' contents.
    int depth = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '{') ++depth;
      if (line[i] == '}') --depth;
      if (depth == 1 && line[i] == '"' && (line[i - 1] == '{' || line[i - 1] == ',')) {
        const std::size_t close = line.find('"', i + 1);
        if (line[close + 1] == ':') a.keys.push_back(line.substr(i + 1, close - i - 1));
      }
    }
    // Numbers and the allocation's own start/end (the last start/end on the line).
    for (auto it = std::sregex_iterator(line.begin(), line.end(), number_field);
         it != std::sregex_iterator(); ++it)
      a.number[(*it)[1].str()] = std::stod((*it)[2].str());
    for (auto it = std::sregex_iterator(line.begin(), line.end(), text_field);
         it != std::sregex_iterator(); ++it)
      a.text[(*it)[1].str()] = (*it)[2].str();
  }
  return sets;
}

// RFC 4180 CSV.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

double sum_total_cost(const std::vector<OpenCostSet>& sets) {
  double total = 0;
  for (const OpenCostSet& s : sets) {
    for (const auto& [name, a] : s)
      total += a.number.at("totalCost");
  }
  return total;
}

}  // namespace

TEST_SUITE("cost exports") {
  TEST_CASE("four pods holding a quarter of one GPU for an hour add up to one GPU-hour") {
    ScratchDir dir("cost-q");
    const std::string oc = dir.file("oc.json");
    const CommandResult r =
        run_capsim("report '" + quarters_db() + "' --opencost '" + oc + "' --idle -q", dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::vector<OpenCostSet> sets = parse_opencost(slurp(oc));
    REQUIRE(sets.size() == 1);
    double gpu_hours = 0, cost = 0;
    for (const std::string pod : {"q-0", "q-1", "q-2", "q-3"}) {
      CAPTURE(pod);
      REQUIRE(sets[0].count(pod) == 1);
      const OpenCostAllocation& a = sets[0].at(pod);
      // 1/4 GPU x 1 h at $4 per GPU-hour.
      CHECK(a.number.at("gpuHours") == doctest::Approx(0.25).epsilon(1e-9));
      CHECK(a.number.at("gpuCount") == doctest::Approx(0.25).epsilon(1e-9));
      CHECK(a.number.at("gpuCost") == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(a.number.at("totalCost") == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(a.number.at("minutes") == doctest::Approx(60.0));
      // The requests it held: 1 core and 4 GiB for the hour.
      CHECK(a.number.at("cpuCores") == doctest::Approx(1.0));
      CHECK(a.number.at("cpuCoreHours") == doctest::Approx(1.0));
      CHECK(a.number.at("ramByteHours") == doctest::Approx(4.0 * 1024 * 1024 * 1024));
      CHECK(a.number.at("ramCost") == 0);
      gpu_hours += a.number.at("gpuHours");
      cost += a.number.at("totalCost");
    }
    CHECK(gpu_hours == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(cost == doctest::Approx(summary_metric(quarters_db(), "cost_total_usd")).epsilon(1e-9));
    // Nothing was idle: the GPU was fully held.
    REQUIRE(sets[0].count("__idle__") == 1);
    CHECK(sets[0].at("__idle__").number.at("totalCost") == doctest::Approx(0.0));
  }

  TEST_CASE("windows split the charges at their boundaries in proportion to time") {
    ScratchDir dir("cost-w");
    const std::string oc = dir.file("oc.json");
    // 2025-01-01T00:15:00Z: 30-minute windows start at :00 and :30, so the run's hour falls in
    // three windows: 15, 30 and 15 minutes.
    const CommandResult r =
        run_capsim("report '" + quarters_db() + "' --opencost '" + oc +
                       "' --window 30m --aggregate queue --start 2025-01-01T00:15:00Z -q",
                   dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::vector<OpenCostSet> sets = parse_opencost(slurp(oc));
    REQUIRE(sets.size() == 3);
    const double want_minutes[] = {15, 30, 15};
    for (std::size_t w = 0; w < 3; ++w) {
      CAPTURE(w);
      REQUIRE(sets[w].count("team-a") == 1);
      REQUIRE(sets[w].count("team-b") == 1);
      // Two quarter-GPU pods per queue: 0.5 GPU x the window's minutes, at $4 per GPU-hour.
      const double hours = want_minutes[w] / 60.0;
      CHECK(sets[w].at("team-a").number.at("gpuHours") == doctest::Approx(0.5 * hours));
      CHECK(sets[w].at("team-b").number.at("totalCost") == doctest::Approx(2.0 * hours));
      CHECK(sets[w].at("team-a").number.at("minutes") == doctest::Approx(want_minutes[w]));
    }
    CHECK(sets[0].at("team-a").text.at("start") == "2025-01-01T00:15:00Z");
    CHECK(sets[2].at("team-a").text.at("end") == "2025-01-01T01:15:00Z");
    CHECK(sum_total_cost(sets) == doctest::Approx(4.0));
  }

  TEST_CASE("the OpenCost export sums to cost_total_usd, allocated plus idle, in any shape") {
    ScratchDir dir("cost-qs-oc");
    const double total = summary_metric(quickstart_db(), "cost_total_usd");
    const double idle = summary_metric(quickstart_db(), "cost_idle_usd") +
                        summary_metric(quickstart_db(), "cost_stranded_usd");
    for (const std::string shape :
         {"--aggregate pod", "--aggregate queue --window 1d", "--aggregate node --window 6h",
          "--aggregate namespace", "--aggregate label:kueue.x-k8s.io/queue-name"}) {
      CAPTURE(shape);
      const std::string oc = dir.file("oc.json");
      const CommandResult r = run_capsim(
          "report '" + quickstart_db() + "' --opencost '" + oc + "' --idle -q " + shape, dir);
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const std::vector<OpenCostSet> sets = parse_opencost(slurp(oc));
      REQUIRE_FALSE(sets.empty());
      CHECK(sum_total_cost(sets) == doctest::Approx(total).epsilon(1e-9));
      double idle_sum = 0;
      for (const OpenCostSet& s : sets)
        idle_sum += s.count("__idle__") ? s.at("__idle__").number.at("totalCost") : 0.0;
      CHECK(idle_sum == doctest::Approx(idle).epsilon(1e-9));
    }
  }

  TEST_CASE("window splits add up to the whole run, pod by pod") {
    ScratchDir dir("cost-qs-split");
    const std::string whole = dir.file("whole.json"), split = dir.file("split.json");
    REQUIRE(run_capsim("report '" + quickstart_db() + "' --opencost '" + whole + "' -q", dir)
                .exit_code == 0);
    REQUIRE(run_capsim("report '" + quickstart_db() + "' --opencost '" + split +
                           "' --window 1h --start 2025-01-01T00:20:00Z -q",
                       dir)
                .exit_code == 0);
    const std::vector<OpenCostSet> one = parse_opencost(slurp(whole));
    const std::vector<OpenCostSet> many = parse_opencost(slurp(split));
    REQUIRE(one.size() == 1);
    REQUIRE(many.size() > 20);
    std::map<std::string, std::map<std::string, double>> summed;
    for (const OpenCostSet& s : many) {
      for (const auto& [name, a] : s) {
        for (const char* f : {"totalCost", "gpuHours", "cpuCoreHours", "ramByteHours", "cpuCost"})
          summed[name][f] += a.number.at(f);
      }
    }
    REQUIRE(summed.size() == one[0].size());
    for (const auto& [name, a] : one[0]) {
      const std::string& name_ = name;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(name_);
      for (const char* f : {"totalCost", "gpuHours", "cpuCoreHours", "ramByteHours", "cpuCost"}) {
        CAPTURE(f);
        CHECK(summed[name][f] == doctest::Approx(a.number.at(f)).epsilon(1e-9));
      }
    }
  }

  TEST_CASE("energy and CPU-only nodes are charged to each pod exactly, nothing spread") {
    ScratchDir dir("cost-energy-cpu-oc");
    const std::string db = energy_cpu_db();
    const std::string oc = dir.file("oc.json");
    const CommandResult r = run_capsim("report '" + db + "' --opencost '" + oc + "' --idle", dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.err.find("note") == std::string::npos);
    const std::vector<OpenCostSet> sets = parse_opencost(slurp(oc));
    REQUIRE(sets.size() == 1);
    const OpenCostSet& s = sets[0];
    REQUIRE(s.count("g") == 1);
    REQUIRE(s.count("c1") == 1);
    REQUIRE(s.count("c2") == 1);
    // c1: 8/32 x $1.60 x 1 h = $0.40; c2: 24/32 x $1.60 x 0.5 h = $0.60; both cpuCost, no energy.
    CHECK(s.at("c1").number.at("totalCost") == doctest::Approx(0.40).epsilon(1e-12));
    CHECK(s.at("c1").number.at("cpuCost") == doctest::Approx(0.40).epsilon(1e-12));
    CHECK(s.at("c1").number.at("cpuCoreHours") == doctest::Approx(8.0));
    CHECK(s.at("c2").number.at("totalCost") == doctest::Approx(0.60).epsilon(1e-12));
    CHECK(s.at("c2").number.at("cpuCoreHours") == doctest::Approx(12.0));
    CHECK(s.at("c2").number.at("gpuCost") == 0);
    // g held the only GPU all hour: its price ($4) and all of the run's GPU energy are its own.
    const double energy = summary_metric(db, "cost_energy_usd");
    REQUIRE(energy > 0);
    CHECK(s.at("g").number.at("gpuCost") == doctest::Approx(4.0 + energy).epsilon(1e-12));
    CHECK(s.at("g").number.at("cpuCost") == 0);
    CHECK(s.at("g").number.at("gpuHours") == doctest::Approx(1.0));
    // idle: CPU node ($1.60) less $1.00 charged; the GPU node was fully held.
    CHECK(s.at("__idle__").number.at("totalCost") == doctest::Approx(0.60).epsilon(1e-12));
    CHECK(s.at("__idle__").number.at("cpuCost") == doctest::Approx(0.60).epsilon(1e-12));
    CHECK(sum_total_cost(sets) ==
          doctest::Approx(summary_metric(db, "cost_total_usd")).epsilon(1e-12));
    CHECK(summary_metric(db, "queue.etl.cost_usd") == doctest::Approx(1.0).epsilon(1e-12));
  }

  TEST_CASE("a report file written before the charge table is refused with exit 65") {
    ScratchDir dir("cost-old");
    const std::string old = dir.file("old.db");
    std::filesystem::copy_file(quarters_db(), old);
    {
      SqliteDb db(old, OpenMode::kReadWriteCreate);
      db.exec("DROP TABLE charge; UPDATE meta SET value = 1 WHERE key = 'schema_version';");
    }
    for (const std::string flag : {"--opencost", "--focus"}) {
      CAPTURE(flag);
      const std::string out = dir.file("out");
      const CommandResult r = run_capsim("report '" + old + "' " + flag + " '" + out + "'", dir);
      CHECK(r.exit_code == 65);
      CHECK(r.err.find("older capsim") != std::string::npos);
      CHECK(r.err.find("re-run") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(out));
    }
    // The file's other reports still work.
    CHECK(run_capsim("report '" + old + "' --markdown - -q", dir).exit_code == 0);
  }

  TEST_CASE("what pods pay on nodes without GPUs is OpenCost's cpuCost, the rest its gpuCost") {
    // quickstart has a CPU-only pool for its data-prep queue.
    ScratchDir dir("cost-qs-cpu");
    const std::string oc = dir.file("oc.json");
    const CommandResult r = run_capsim(
        "report '" + quickstart_db() + "' --opencost '" + oc + "' -q --aggregate node --window 1d",
        dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    double cpu = 0, gpu = 0;
    for (const OpenCostSet& s : parse_opencost(slurp(oc))) {
      for (const auto& [name, a] : s) {
        const double c = a.number.at("cpuCost"), g = a.number.at("gpuCost");
        CHECK(c + g == doctest::Approx(a.number.at("totalCost")).epsilon(1e-12));
        CHECK((c == 0.0 || g == 0.0));  // a node is a GPU node or not
        cpu += c;
        gpu += g;
      }
    }
    CHECK(cpu > 0);
    CHECK(gpu > cpu);
  }

  TEST_CASE("with an energy price both exports still add up to cost_total_usd") {
    ScratchDir dir("cost-energy");
    REQUIRE(summary_metric(mixed_db(), "cost_energy_usd") > 0);
    const double total = summary_metric(mixed_db(), "cost_total_usd");
    const std::string oc = dir.file("oc.json"), csv = dir.file("f.csv");
    const CommandResult r =
        run_capsim("report '" + mixed_db() + "' --opencost '" + oc +
                       "' --idle --window 1h --aggregate queue --focus '" + csv + "'",
                   dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(sum_total_cost(parse_opencost(slurp(oc))) == doctest::Approx(total).epsilon(1e-9));
    const auto rows = parse_csv(slurp(csv));
    std::size_t billed = 0;
    for (std::size_t i = 0; i < rows[0].size(); ++i) {
      if (rows[0][i] == "BilledCost") billed = i;
    }
    double sum = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      CHECK(std::stod(rows[i][billed]) >= -1e-9);  // no negative idle
      sum += std::stod(rows[i][billed]);
    }
    CHECK(sum == doctest::Approx(total).epsilon(1e-9));
    // Per queue, the charges are the ledger's.
    const CostAllocation a = load_cost_allocation(load_report_data(mixed_db(), std::nullopt));
    std::map<std::string, double> by_queue;
    for (const PodCharge& c : a.charges)
      by_queue[c.queue] += c.cost();
    for (const auto& [q, cost] : by_queue) {
      if (q.empty()) continue;
      const std::string& q_ = q;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(q_);
      CHECK(cost ==
            doctest::Approx(summary_metric(mixed_db(), "queue." + q + ".cost_usd")).epsilon(1e-9));
    }
  }

  TEST_CASE("an OpenCost allocation carries OpenCost's field names, in its order") {
    ScratchDir dir("cost-fields");
    const std::string oc = dir.file("oc.json");
    REQUIRE(
        run_capsim("report '" + quarters_db() + "' --opencost '" + oc + "' -q", dir).exit_code ==
        0);
    const std::vector<OpenCostSet> sets = parse_opencost(slurp(oc));
    REQUIRE(sets.size() == 1);
    const std::vector<std::string> want = {"name",
                                           "properties",
                                           "window",
                                           "start",
                                           "end",
                                           "minutes",
                                           "cpuCores",
                                           "cpuCoreRequestAverage",
                                           "cpuCoreUsageAverage",
                                           "cpuCoreHours",
                                           "cpuCost",
                                           "cpuCostAdjustment",
                                           "cpuEfficiency",
                                           "gpuCount",
                                           "gpuHours",
                                           "gpuCost",
                                           "gpuCostAdjustment",
                                           "networkTransferBytes",
                                           "networkReceiveBytes",
                                           "networkCost",
                                           "networkCostAdjustment",
                                           "loadBalancerCost",
                                           "loadBalancerCostAdjustment",
                                           "pvBytes",
                                           "pvByteHours",
                                           "pvCost",
                                           "pvCostAdjustment",
                                           "ramBytes",
                                           "ramByteRequestAverage",
                                           "ramByteUsageAverage",
                                           "ramByteHours",
                                           "ramCost",
                                           "ramCostAdjustment",
                                           "ramEfficiency",
                                           "sharedCost",
                                           "externalCost",
                                           "totalCost",
                                           "totalEfficiency"};
    CHECK(sets[0].at("q-0").keys == want);
    const std::string text = slurp(oc);
    CHECK(text.find(R"("properties":{"cluster":"quarters","node":"ts-0","pod":"q-0"})") !=
          std::string::npos);
  }

  // The pod table's owner_kind (schema 6) is OpenCost's controllerKind, in lower case: a
  // Deployment's two replicas aggregate under controller "web" of kind deployment, a Job's pod
  // under "train" of kind job; a bare pod has neither.
  TEST_CASE("OpenCost's controllerKind is the owner's kind: deployment, job, none for a bare pod") {
    ScratchDir dir("cost-controller-kind");
    write_file(dir.file("s.yaml"),
               "name: owners\nseed: 1\nsimulation: {horizon: 1h, sample_interval: 10m}\n"
               "cluster:\n  pools:\n    - {name: p, count: 1, gpu: {model: A100-80GB, count: 8}, "
               "cpu: 64, memory: 256Gi, price_per_hour: 8.0}\n"
               "manifests: [m.yaml]\n"
               "durations:\n  - {match: {kind: Job}, duration: 2h}\n"
               "  - {match: {kind: Pod}, duration: 2h}\n");
    write_file(dir.file("m.yaml"),
               "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
               "  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n"
               "    metadata: {labels: {app: web}}\n"
               "    spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
               "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n"
               "  template:\n    spec:\n      restartPolicy: Never\n"
               "      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]\n"
               "---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\n"
               "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}\n");
    const std::string db = run_scenario_db(dir, dir.file("s.yaml"), "owners");
    {
      RunReader reader(db);
      CHECK(reader.schema_version() == 6);
      auto st = reader.db().prepare(
          "SELECT coalesce(job, '-'), coalesce(owner_kind, '-'), count(*) FROM pod "
          "WHERE run_id = 1 GROUP BY job, owner_kind ORDER BY job");
      std::vector<std::string> rows;
      while (st.step()) {
        rows.push_back(st.column_text(0) + " " + st.column_text(1) + " " +
                       std::to_string(st.column_int64(2)));
      }
      CHECK(rows == std::vector<std::string>{"- - 1", "train Job 1", "web Deployment 2"});
    }
    const std::string oc = dir.file("oc.json");
    REQUIRE(run_capsim("report '" + db + "' --opencost '" + oc + "' --aggregate controller -q", dir)
                .exit_code == 0);
    const std::string text = slurp(oc);
    CHECK(text.find(R"("controller":"web","controllerKind":"deployment")") != std::string::npos);
    CHECK(text.find(R"("controller":"train","controllerKind":"job")") != std::string::npos);
    CHECK(text.find(R"("controllerKind":"pod")") == std::string::npos);
  }

  TEST_CASE("the FOCUS file follows the 1.2 column rules and sums to cost_total_usd") {
    ScratchDir dir("cost-focus");
    const std::string csv = dir.file("focus.csv");
    const CommandResult r =
        run_capsim("report '" + quickstart_db() + "' --focus '" + csv + "' -q", dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto rows = parse_csv(slurp(csv));
    REQUIRE(rows.size() > 10);
    const std::vector<std::string>& header = rows[0];
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i)
      col[header[i]] = i;
    // FOCUS 1.2's mandatory columns are all there.
    for (const std::string name :
         {"BilledCost",        "BillingAccountId",   "BillingAccountName", "BillingCurrency",
          "BillingPeriodEnd",  "BillingPeriodStart", "ChargeCategory",     "ChargeClass",
          "ChargeDescription", "ChargePeriodEnd",    "ChargePeriodStart",  "ContractedCost",
          "EffectiveCost",     "InvoiceIssuerName",  "ListCost",           "PricingQuantity",
          "PricingUnit",       "ProviderName",       "PublisherName",      "ServiceCategory",
          "ServiceName"}) {
      CAPTURE(name);
      CHECK(col.count(name) == 1);
    }
    // Columns outside the spec are x_-prefixed.
    const std::set<std::string> spec = {
        "BilledCost",          "BillingAccountId",   "BillingAccountName", "BillingCurrency",
        "BillingPeriodEnd",    "BillingPeriodStart", "ChargeCategory",     "ChargeClass",
        "ChargeDescription",   "ChargePeriodEnd",    "ChargePeriodStart",  "ContractedCost",
        "EffectiveCost",       "InvoiceIssuerName",  "ListCost",           "PricingQuantity",
        "PricingUnit",         "ProviderName",       "PublisherName",      "ServiceCategory",
        "ServiceName",         "ChargeFrequency",    "ConsumedQuantity",   "ConsumedUnit",
        "ContractedUnitPrice", "ListUnitPrice",      "PricingCategory",    "ResourceId",
        "ResourceName",        "ResourceType",       "ServiceSubcategory", "SkuId",
        "SkuPriceId",          "SubAccountId",       "SubAccountName",     "Tags"};
    for (const std::string& h : header) {
      CAPTURE(h);
      CHECK((spec.count(h) == 1 || h.rfind("x_", 0) == 0));
    }
    for (const std::string x : {"x_Queue", "x_Pool", "x_GpuModel", "x_SharingMode"})
      CHECK(col.count(x) == 1);

    const std::regex decimal(R"(^-?[0-9]+(\.[0-9]+)?$)");
    const std::regex datetime(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$)");
    double billed = 0;
    std::set<std::string> kinds;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const std::vector<std::string>& row = rows[i];
      CAPTURE(i);
      REQUIRE(row.size() == header.size());
      auto v = [&](const char* c) { return row[col.at(c)]; };
      for (const char* c : {"BilledCost", "EffectiveCost", "ListCost", "ContractedCost"})
        CHECK(std::regex_match(v(c), decimal));
      CHECK(v("BilledCost") == v("EffectiveCost"));
      for (const char* c :
           {"ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd"})
        CHECK(std::regex_match(v(c), datetime));
      CHECK(v("ChargePeriodStart") < v("ChargePeriodEnd"));
      CHECK(v("BillingPeriodStart") <= v("ChargePeriodStart"));
      CHECK(v("ChargePeriodEnd") <= v("BillingPeriodEnd"));
      CHECK(v("ChargeCategory") == "Usage");
      CHECK(v("ChargeClass").empty());  // null: not a correction
      CHECK(v("ServiceCategory") == "Compute");
      CHECK(v("BillingCurrency") == "USD");
      // Units go with their quantities (null together).
      CHECK(v("PricingQuantity").empty() == v("PricingUnit").empty());
      CHECK(v("ConsumedQuantity").empty() == v("ConsumedUnit").empty());
      CHECK(std::regex_match(v("PricingQuantity"), decimal));
      CHECK(v("PricingUnit") == "GPU-Hours");
      CHECK_FALSE(v("ProviderName").empty());
      CHECK_FALSE(v("InvoiceIssuerName").empty());
      kinds.insert(v("x_CostKind"));
      billed += std::stod(v("BilledCost"));
    }
    CHECK(kinds.count("allocated") == 1);
    CHECK(kinds.count("idle") == 1);
    CHECK(billed ==
          doctest::Approx(summary_metric(quickstart_db(), "cost_total_usd")).epsilon(1e-9));
  }

  TEST_CASE("the charge rows match the ledger's queue totals on every sharing mode") {
    // Each queue's charge rows add up to the ledger's queue cost and GPU-hours: whole GPUs, MIG
    // instances (max of memory and compute share), time-slice and MPS replicas.
    ScratchDir dir("cost-modes");
    for (const std::string scenario : {"whole", "mig-balanced", "mig-1g", "ts2", "ts4", "mps4"}) {
      CAPTURE(scenario);
      const std::string db = run_scenario_db(
          dir, source_path("scenarios/mig-vs-timeslicing/" + scenario + ".yaml"), scenario);
      const CostAllocation a = load_cost_allocation(load_report_data(db, std::nullopt));
      double cost = 0;
      std::map<std::string, double> queue_cost, queue_gpu_hours;
      for (const PodCharge& c : a.charges) {
        cost += c.cost();
        queue_cost[c.queue] += c.cost();
        queue_gpu_hours[c.queue] += c.gpu_hours();
      }
      CHECK(cost == doctest::Approx(summary_metric(db, "cost_allocated_usd")).epsilon(1e-9));
      for (const auto& [q, v] : queue_cost) {
        if (q.empty()) continue;
        const std::string& q_ = q;  // CAPTURE copies no structured binding (clang++ 14)
        CAPTURE(q_);
        CHECK(v == doctest::Approx(summary_metric(db, "queue." + q + ".cost_usd")).epsilon(1e-9));
        CHECK(queue_gpu_hours[q] ==
              doctest::Approx(summary_metric(db, "queue." + q + ".gpu_hours")).epsilon(1e-9));
      }
      CHECK(a.stranded_in(0, a.end).cost() ==
            doctest::Approx(summary_metric(db, "cost_stranded_usd")).epsilon(1e-9));
      CHECK(a.total_in(0, a.end).cost() ==
            doctest::Approx(summary_metric(db, "cost_total_usd")).epsilon(1e-9));
    }
  }

  TEST_CASE("window and aggregate texts parse as documented") {
    CHECK(parse_cost_window("30m") == 30 * kMinute);
    CHECK(parse_cost_window("1h") == kHour);
    CHECK(parse_cost_window("7d") == 7 * kDay);
    CHECK(parse_cost_window("1w") == 7 * kDay);
    for (const char* bad : {"", "h", "0h", "1.5h", "-1h", "1y", "1 h", "1hh"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_cost_window(bad).has_value());
    }
    CHECK(valid_cost_aggregate("label:app"));
    CHECK_FALSE(valid_cost_aggregate("label:"));
    CHECK_FALSE(valid_cost_aggregate("cluster"));
    CHECK(utc_timestamp(1735689600) == "2025-01-01T00:00:00Z");
  }

  TEST_CASE("bad cost export options get usage or output exit codes and leave no file") {
    ScratchDir dir("cost-bad");
    const std::string db = quarters_db();
    CommandResult r = run_capsim("report '" + db + "' --opencost - --window 1y", dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--window '1y'") != std::string::npos);
    r = run_capsim("report '" + db + "' --opencost - --aggregate cluster", dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--aggregate 'cluster'") != std::string::npos);
    CHECK(run_capsim("report '" + db + "' --idle --focus -", dir).exit_code == 2);
    CHECK(run_capsim("report '" + db + "' --window 1h", dir).exit_code == 2);
    const std::string out = dir.file("no/such/dir/oc.json");
    r = run_capsim("report '" + db + "' --opencost '" + out + "'", dir);
    CHECK(r.exit_code == 74);
    CHECK_FALSE(std::filesystem::exists(out));
    // A bad option fails before anything is written.
    const std::string focus = dir.file("f.csv");
    CHECK(run_capsim("report '" + db + "' --focus '" + focus + "' --window 0h", dir).exit_code ==
          2);
    CHECK_FALSE(std::filesystem::exists(focus));
  }
}
