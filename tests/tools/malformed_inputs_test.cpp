// Bad input never crashes capsim and never leaves a report marked complete: each case writes a
// small scenario (and any files it names), runs the real `capsim` binary, and checks the exit
// code, that stderr names the file, line and field, and that no complete report exists.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Case {
  const char* name;
  const char* scenario;    // written to <dir>/s.yaml (nullptr: not written)
  const char* extra_file;  // optional: "name|content"
  const char* args;        // extra arguments after the scenario path
  int want_exit;
  std::vector<const char*> want_in_stderr;
};

const char* kCluster = R"(cluster:
  pools:
    - name: a
      count: 2
      gpu: {model: A100-80GB, count: 8}
      cpu: 64
      memory: 512Gi
)";

std::string with_cluster(const std::string& rest) {
  return std::string(kCluster) + rest;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("malformed inputs give a located message, a distinct exit code and no complete report") {
  const std::string tenant_ok =
      "workload:\n  synthetic:\n    tenants:\n      - {name: t, rate_per_hour: 5, gpus: 1, "
      "duration: 10m}\n";
  const std::vector<std::pair<Case, std::string>> cases = {
      {{"broken YAML", nullptr, nullptr, "", 65, {"s.yaml:3:", "malformed YAML"}},
       "name: x\ncluster: {pools: [\n  - name: a\n"},
      {{"unknown top-level field with a suggestion",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:1:1", "unknown field 'clustr'", "did you mean 'cluster'"}},
       "clustr: {}\n"},
      {{"unknown pool field",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:6:7", "cluster.pools[0]", "unknown field 'cpus'", "did you mean 'cpu'"}},
       "cluster:\n  pools:\n    - name: a\n      count: 1\n      cpu: 8\n      cpus: 8\n      "
       "memory: 1Gi\n"},
      {{"negative quantity",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:6:", "cluster.pools[0].memory", "negative"}},
       "cluster:\n  pools:\n    - name: a\n      count: 1\n      cpu: 8\n      memory: -1Gi\n"},
      {{"malformed quantity",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:5:", "cluster.pools[0].cpu", "unknown suffix"}},
       "cluster:\n  pools:\n    - name: a\n      count: 1\n      cpu: 8cores\n      memory: 1Gi\n"},
      {{"unknown GPU model",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:5:", "unknown GPU model 'A100'", "A100-80GB"}},
       "cluster:\n  pools:\n    - name: a\n      count: 1\n      gpu: {model: A100, count: 8}\n    "
       "  cpu: 8\n      memory: 1Gi\n"},
      {{"missing scenario file", nullptr, nullptr, "", 66, {"nope.yaml", "cannot open"}},
       "@nope.yaml"},
      {{"missing trace file", nullptr, nullptr, "", 66, {"missing.csv"}},
       with_cluster("workload:\n  traces:\n    - {path: missing.csv}\n")},
      {{"bad CSV row",
        nullptr,
        "t.csv|pod,submit,duration,gpu\np1,0,60,1\np2,10,60,two\n",
        "",
        65,
        {"t.csv:3", "gpu", "two"}},
       with_cluster("workload:\n  traces:\n    - {path: t.csv}\n")},
      {{"unknown CSV column",
        nullptr,
        "t.csv|pod,submit,duration,gpus\np1,0,60,1\n",
        "",
        65,
        {"t.csv:1", "gpus"}},
       with_cluster("workload:\n  traces:\n    - {path: t.csv}\n")},
      {{"GPU utilisation above 1",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:", "gpu_util", "between 0 and 1"}},
       with_cluster("workload:\n  synthetic:\n    tenants:\n      - {name: t, rate_per_hour: 5, "
                    "gpu_util: 1.5}\n")},
      {{"negative node count", nullptr, nullptr, "", 65, {"s.yaml:4:", "count", "out of range"}},
       "cluster:\n  pools:\n    - name: a\n      count: -1\n      cpu: 8\n      memory: 1Gi\n"},
      {{"impossible GPU count per pod",
        nullptr,
        "t.csv|pod,submit,duration,gpu\np1,0,60,65\n",
        "",
        65,
        {"t.csv:2", "65 GPUs in one pod"}},
       with_cluster("workload:\n  traces:\n    - {path: t.csv}\n")},
      {{"unknown priority class",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:", "unknown priorityClassName 'bach'", "did you mean 'batch'"}},
       with_cluster("priority_classes:\n  - {name: batch, value: 10}\nworkload:\n  synthetic:\n    "
                    "tenants:\n      - {name: t, rate_per_hour: 5, priority_class: bach}\n")},
      {{"unknown scheduler plugin",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:", "unknown plugin 'NodeResourceFit'", "did you mean 'NodeResourcesFit'"}},
       with_cluster(
           "scheduler:\n  profiles:\n    - schedulerName: default-scheduler\n      plugins:\n      "
           "  score:\n          enabled: [{name: NodeResourceFit, weight: 2}]\n")},
      {{"unknown scoring strategy",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:", "unknown scoring strategy 'MostAllocate'", "did you mean 'MostAllocated'"}},
       with_cluster("scheduler:\n  profiles:\n    - pluginConfig:\n        - name: "
                    "NodeResourcesFit\n          args: {scoringStrategy: {type: MostAllocate}}\n")},
      {{"a node name the API server refuses",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:3:", "node 'GPU_1' has a name the API server refuses", "RFC 1123 subdomain"}},
       "cluster:\n  nodes:\n    - {name: GPU_1, cpu: 8, memory: 1Gi}\n"},
      {{"a pool name that makes refused node names",
        nullptr,
        nullptr,
        "",
        65,
        {"s.yaml:3:", "pool 'A100' would name its nodes 'A100-0'", "RFC 1123 subdomain"}},
       "cluster:\n  pools:\n    - {name: A100, count: 1, cpu: 8, memory: 1Gi}\n"},
      {{"duplicate node name", nullptr, nullptr, "", 65, {"s.yaml:", "duplicate node name 'x'"}},
       "cluster:\n  nodes:\n    - {name: x, cpu: 8, memory: 1Gi}\n    - {name: x, cpu: 8, memory: "
       "1Gi}\n"},
      {{"a manifest kind capsim refuses",
        nullptr,
        "m.yaml|apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: s}\n",
        "",
        65,
        {"m.yaml:2", "kind", "Volcano Job", "is not modelled"}},
       with_cluster("manifests: [m.yaml]\n")},
      {{"fractional nvidia.com/gpu",
        nullptr,
        "m.yaml|apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: "
        "{capsim.io/duration: 1h}\nspec:\n  containers:\n    - name: c\n      resources:\n        "
        "limits: {nvidia.com/gpu: 0.5}\n",
        "",
        65,
        {"m.yaml:", "nvidia.com/gpu"}},
       with_cluster("manifests: [m.yaml]\n")},
      {{"--set on a path that does not exist",
        nullptr,
        nullptr,
        "--set cluster.pools.gpu.count=4",
        65,
        {"--set", "no list element is named 'gpu'"}},
       with_cluster(tenant_ok)},
      {{"--set with a value the field rejects",
        nullptr,
        nullptr,
        "--set cluster.pools.a.count=lots",
        65,
        {"--set", "cluster.pools[0].count", "not a whole number"}},
       with_cluster(tenant_ok)},
      {{"malformed duration", nullptr, nullptr, "", 65, {"s.yaml:", "duration", "needs a unit"}},
       with_cluster("workload:\n  synthetic:\n    tenants:\n      - {name: t, rate_per_hour: 5, "
                    "duration: 1h30}\n")},
      {{"sample interval below a second", nullptr, nullptr, "", 65, {"s.yaml:", "sample_interval"}},
       with_cluster("simulation: {sample_interval: 10ms}\n")},
      {{"a scenario without nodes", nullptr, nullptr, "", 65, {"defines no nodes"}},
       "name: empty\n"},
      {{"unknown profile on the command line",
        nullptr,
        nullptr,
        "--profile nope",
        2,
        {"unknown profile 'nope'", "default-scheduler"}},
       with_cluster(tenant_ok)},
      {{"output into a missing directory",
        nullptr,
        nullptr,
        "-o no/such/dir/out.db",
        74,
        {"no/such/dir"}},
       with_cluster(tenant_ok)},
  };
  int n = 0;
  for (const auto& [c, scenario] : cases) {
    const std::string what = c.name;  // INFO copies no structured binding (clang++ 14)
    INFO(what);
    const fs::path dir = fs::temp_directory_path() /
                         ("capsim-bad-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string scen_arg = (dir / "s.yaml").string();
    if (scenario.rfind("@", 0) == 0) {
      scen_arg = (dir / scenario.substr(1)).string();
    } else {
      std::ofstream(dir / "s.yaml") << scenario;
    }
    if (c.extra_file) {
      const std::string spec = c.extra_file;
      const auto bar = spec.find('|');
      std::ofstream(dir / spec.substr(0, bar)) << spec.substr(bar + 1);
    }
    std::string args = c.args;
    const bool custom_out = args.find("-o ") != std::string::npos;
    if (custom_out) args.replace(args.find("-o ") + 3, 0, dir.string() + "/");
    const std::string cmd = std::string("cd '") + dir.string() + "' && '" + CAPSIM_BINARY +
                            "' run '" + scen_arg + "' " + (custom_out ? "" : "-o out.db ") + args +
                            " --quiet >stdout.txt 2>stderr.txt";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == c.want_exit);
    const std::string err = slurp(dir / "stderr.txt");
    CAPTURE(err);
    for (const char* want : c.want_in_stderr)
      CHECK(err.find(want) != std::string::npos);
    CHECK(err.find("internal error") == std::string::npos);
    // No report, and no temporary left behind.
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string f = e.path().filename().string();
      CHECK(f.find(".db") == std::string::npos);
    }
    fs::remove_all(dir);
  }
  CHECK(n >= 20);
}
