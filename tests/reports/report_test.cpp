// `capsim report` end to end through the real binary on the quickstart: every figure the HTML
// tags with data-metric equals the summary table (to the digits shown, and exactly in
// data-value), every summary metric appears, every chart is there, and nothing needs a script or
// the network; the markdown and Prometheus exports agree with the report file; bad inputs get
// their exit codes.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_db.hpp"

using namespace capsim;
using namespace capsim::testing;

namespace {

// The quickstart's report file, made once for all the cases here.
const std::string& quickstart_db() {
  static ScratchDir dir("report-qs");
  static const std::string db = [] {
    const std::string path = dir.file("quickstart.db");
    const CommandResult r = run_capsim(
        "run '" + source_path("scenarios/quickstart.yaml") + "' -o '" + path + "' --quiet", dir);
    REQUIRE(r.exit_code == 0);
    return path;
  }();
  return db;
}

std::map<std::string, double> summary_of(const std::string& db) {
  RunReader reader(db);
  std::map<std::string, double> out;
  for (const auto& [k, v] : reader.summary(*reader.latest_complete_run()))
    out[k] = v;
  return out;
}

std::string html_unescape(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1))
      s.replace(p, std::string(from).size(), to);
  }
  return s;
}

// The displayed text of a figure back to a number, and half a unit of its last digit.
std::pair<double, double> parse_figure(std::string text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  const std::size_t dot = digits.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
  return {std::stod(digits), 0.5 * std::pow(10.0, -decimals)};
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("every figure in the quickstart's HTML report equals the summary table") {
    ScratchDir dir("report-html");
    const std::string html_path = dir.file("report.html");
    const CommandResult r =
        run_capsim("report '" + quickstart_db() + "' -o '" + html_path + "'", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.empty());  // data goes to the file; notes to stderr
    CHECK(r.err.find("wrote " + html_path) != std::string::npos);
    const std::string html = slurp(html_path);
    const auto summary = summary_of(quickstart_db());
    REQUIRE(summary.size() > 40);

    const std::regex tagged(
        R"re(<span class="num" data-metric="([^"]+)" data-value="([^"]+)">([^<]*)</span>)re");
    std::set<std::string> shown;
    int figures = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), tagged);
         it != std::sregex_iterator(); ++it) {
      const std::string metric = html_unescape((*it)[1].str());
      const std::string exact = (*it)[2].str();
      const std::string text = (*it)[3].str();
      CAPTURE(metric);
      CAPTURE(text);
      REQUIRE(summary.count(metric) == 1);
      const double want = summary.at(metric);
      CHECK(std::stod(exact) == want);  // shortest round-trip text: exact
      const auto [value, half_unit] = parse_figure(text);
      CHECK(std::fabs(value - want) <= half_unit * (1 + 1e-9) + 1e-12);
      shown.insert(metric);
      ++figures;
    }
    // Every summary metric appears (the full table), the headline ones several times.
    for (const auto& [k, v] : summary) {
      const std::string& metric = k;  // CAPTURE copies no structured binding (clang++ 14)
      CAPTURE(metric);
      CHECK(shown.count(k) == 1);
    }
    CHECK(figures > static_cast<int>(summary.size()) + 20);

    // Every chart: allocation for all pools and each GPU pool, pending pods, wait CDF,
    // fragmentation, the cost bar and the pending-reasons bars.
    for (const char* title :
         {"GPUs allocated and busy, all pools", "GPUs allocated and busy, pool a100",
          "GPUs allocated and busy, pool b200", "Pending and running pods over time",
          "Cumulative distribution of wait time per queue", "Free and fragmented GPUs over time",
          "Cost by queue, idle and stranded", "Most frequent pending reasons"}) {
      CAPTURE(title);
      CHECK(html.find(std::string("<title>") + title + "</title>") != std::string::npos);
    }
    // The cpu pool has no GPUs: no allocation chart; no shared GPUs: no sharing section.
    CHECK(html.find("GPUs allocated and busy, pool cpu") == std::string::npos);
    CHECK(html.find("id=\"sharing\"") == std::string::npos);
    // Each queue is in the wait table, and the most frequent pending reason is the GPU.
    for (const char* q : {"research", "inference", "notebooks", "data-prep"})
      CHECK(html.find(std::string("queue.") + q + ".wait_seconds_p95") != std::string::npos);
    CHECK(html.find("Insufficient nvidia.com/gpu") != std::string::npos);
    // Self-contained: no scripts, no network references.
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
  }

  TEST_CASE("the markdown headline numbers equal the summary table") {
    ScratchDir dir("report-md");
    const CommandResult r = run_capsim("report '" + quickstart_db() + "' --markdown -", dir);
    REQUIRE(r.exit_code == 0);
    const auto summary = summary_of(quickstart_db());
    const std::regex row(R"(\| `([a-z_0-9.]+)` \| ([-0-9.,]+) \|)");
    int rows = 0;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row);
         it != std::sregex_iterator(); ++it) {
      const std::string metric = (*it)[1].str();
      CAPTURE(metric);
      REQUIRE(summary.count(metric) == 1);
      const auto [value, half_unit] = parse_figure((*it)[2].str());
      CHECK(std::fabs(value - summary.at(metric)) <= half_unit * (1 + 1e-9));
      ++rows;
    }
    CHECK(rows >= 15);
    CHECK(r.out.find("| research |") != std::string::npos);
  }

  TEST_CASE("the Prometheus export carries every pool sample with DCGM and capsim names") {
    ScratchDir dir("report-prom");
    const std::string om = dir.file("m.om");
    const CommandResult r = run_capsim("report '" + quickstart_db() + "' --prometheus '" + om +
                                           "' --prometheus-start 2025-01-01T00:00:00Z",
                                       dir);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(dir.file("quickstart.html")));  // only what was asked
    const std::string text = slurp(om);
    REQUIRE(text.size() > 1000);
    CHECK(text.substr(text.size() - 6) == "# EOF\n");
    RunReader reader(quickstart_db());
    const auto pools = reader.pool_samples(1);
    const auto samples = reader.samples(1);
    // Families with HELP and TYPE, and their sample counts.
    std::map<std::string, int> count;
    std::map<std::string, double> last_time;  // per series: timestamps increase
    std::set<std::string> typed;
    std::istringstream in(text);
    std::string line;
    const std::regex sample(R"(^([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\} (\S+) (\S+)$)");
    while (std::getline(in, line)) {
      if (line.rfind("# TYPE ", 0) == 0) {
        const std::string name = line.substr(7, line.find(' ', 7) - 7);
        CHECK(line == "# TYPE " + name + " gauge");
        typed.insert(name);
        continue;
      }
      if (line.empty() || line[0] == '#') continue;
      std::smatch m;
      REQUIRE_MESSAGE(std::regex_match(line, m, sample), line);
      const std::string name = m[1].str();
      CHECK(typed.count(name) == 1);  // "# TYPE" comes before the samples
      ++count[name];
      const std::string series = name + "{" + m[2].str() + "}";
      const double ts = std::stod(m[4].str());
      if (last_time.count(series)) CHECK(ts > last_time[series]);
      last_time[series] = ts;
    }
    // Origin 2025-01-01T00:00:00Z = 1735689600; the last sample is sim_seconds later.
    const double end = 1735689600.0 + reader.run(1)->sim_seconds;
    CHECK(last_time["capsim_pods_pending{scenario=\"quickstart\",profile=\"default-scheduler\","
                    "seed=\"42\",run_id=\"1\"}"] == doctest::Approx(end));
    // One sample per distinct sample time (the closing sample may repeat the last tick's time).
    std::set<SimTime> times;
    for (const SampleRecord& s : samples)
      times.insert(s.time);
    const int pool_count = 3;
    CHECK(pools.size() == samples.size() * pool_count);
    // The pools add up to the cluster-wide sample of the same time.
    for (std::size_t i = 0; i < samples.size(); ++i) {
      double alloc = 0, busy = 0, power = 0, used = 0;
      std::int64_t running = 0;
      for (int p = 0; p < pool_count; ++p) {
        const PoolSampleRecord& ps = pools[i * pool_count + static_cast<std::size_t>(p)];
        CHECK(ps.time == samples[i].time);
        alloc += ps.gpus_allocated;
        busy += ps.gpus_busy;
        power += ps.power_w;
        used += ps.gpu_memory_used_mib;
        running += ps.pods_running;
      }
      CHECK(alloc == doctest::Approx(samples[i].gpus_allocated));
      CHECK(busy == doctest::Approx(samples[i].gpus_busy));
      CHECK(power == doctest::Approx(samples[i].power_w));
      CHECK(used == doctest::Approx(samples[i].gpu_memory_used_mib));
      CHECK(running == samples[i].pods_running);
    }
    CHECK(count["capsim_gpus_allocated"] == static_cast<int>(times.size()) * pool_count);
    CHECK(count["capsim_pods_pending"] == static_cast<int>(times.size()));
    // DCGM series exist for GPU pools only (a100, b200: two of the three pools).
    CHECK(count["DCGM_FI_DEV_GPU_UTIL"] == static_cast<int>(times.size()) * 2);
    for (const char* f :
         {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE",
          "capsim_gpu_memory_used_bytes", "capsim_cost_usd_per_hour", "capsim_fragmented_gpus"}) {
      CAPTURE(f);
      CHECK(count[f] > 0);
    }
    CHECK(text.find(R"(pool="a100",modelName="A100-80GB")") != std::string::npos);

    // The classic text format: millisecond integer timestamps, no # EOF.
    const CommandResult t = run_capsim(
        "report '" + quickstart_db() + "' --prometheus - --prometheus-format text -q", dir);
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find("# EOF") == std::string::npos);
    CHECK(std::regex_search(t.out, std::regex(R"(\} [-0-9.e+]+ \d{13}\n)")));
  }

  TEST_CASE("report rejects bad input with the exit codes of design.md") {
    ScratchDir dir("report-bad");
    // 66: the file is missing.
    CommandResult r = run_capsim("report '" + dir.file("nope.db") + "'", dir);
    CHECK(r.exit_code == 66);
    CHECK(r.err.find("nope.db") != std::string::npos);
    // 65: not SQLite at all.
    write_file(dir.path / "text.db", "hello, not a database\n");
    r = run_capsim("report '" + dir.file("text.db") + "'", dir);
    CHECK(r.exit_code == 65);
    CHECK(r.err.find("not an SQLite database") != std::string::npos);
    // 65: SQLite, but not a capsim report.
    {
      SqliteDb db(dir.file("other.db"), OpenMode::kReadWriteCreate);
      db.exec("CREATE TABLE t (x INTEGER)");
    }
    r = run_capsim("report '" + dir.file("other.db") + "'", dir);
    CHECK(r.exit_code == 65);
    CHECK(r.err.find("not a capsim report") != std::string::npos);
    // 65: the only run did not finish.
    std::filesystem::copy_file(quickstart_db(), dir.path / "running.db");
    {
      SqliteDb db(dir.file("running.db"), OpenMode::kReadWriteCreate);
      db.exec("UPDATE run SET status = 'running'");
    }
    r = run_capsim("report '" + dir.file("running.db") + "'", dir);
    CHECK(r.exit_code == 65);
    CHECK(r.err.find("no complete run") != std::string::npos);
    r = run_capsim("report '" + dir.file("running.db") + "' --run 1", dir);
    CHECK(r.exit_code == 65);
    CHECK(r.err.find("run 1 has status 'running'") != std::string::npos);
    // 74: the output cannot be written, and nothing is left behind.
    r = run_capsim("report '" + quickstart_db() + "' -o '" + dir.file("no/such/dir/r.html") + "'",
                   dir);
    CHECK(r.exit_code == 74);
    CHECK(r.err.find("does not exist") != std::string::npos);
    // 2: usage.
    CHECK(run_capsim("report", dir).exit_code == 2);
    CHECK(run_capsim("report '" + quickstart_db() + "' --prometheus-format xml --prometheus -", dir)
              .exit_code == 2);
    r = run_capsim("report --help", dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--prometheus") != std::string::npos);
  }
}
