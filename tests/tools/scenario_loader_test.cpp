// Scenario-level loading: `extends:` merging with errors attributed to the right file, and
// --set overrides.
#include "tools/loaders/scenario_loader.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

using namespace capsim;
namespace fs = std::filesystem;

namespace {
struct Dir {
  fs::path path;
  Dir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("capsim-sl-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

const char* kBase = R"(name: base
cluster:
  pools:
    - name: a
      count: 2
      gpu: {model: A100-80GB, count: 8}
      cpu: 64
      memory: 512Gi
    - name: b
      count: 1
      cpu: 8
      memory: 32Gi
workload:
  synthetic:
    tenants:
      - {name: t1, rate_per_hour: 5, gpus: 1, duration: 10m}
      - {name: t2, rate_per_hour: 5, gpus: 2, duration: 10m}
)";
}  // namespace

TEST_CASE("extends merges mappings key by key and named lists item by item") {
  Dir d;
  d.write("base.yaml", kBase);
  const std::string v = d.write("v.yaml", R"(extends: base.yaml
name: variant
cluster:
  pools:
    - {name: a, count: 3}
    - {name: c, count: 1, cpu: 4, memory: 8Gi}
workload:
  synthetic:
    tenants:
      - {name: t2, gpus: 4}
)");
  Scenario s = load_scenario(v, {});
  CHECK(s.name == "variant");
  // Pool a now has 3 nodes (count overridden, the rest from the base), b kept, c appended.
  std::map<std::string, int> per_pool;
  for (const auto& n : s.world->nodes)
    per_pool[n.pool]++;
  CHECK(per_pool["a"] == 3);
  CHECK(per_pool["b"] == 1);
  CHECK(per_pool["c"] == 1);
  CHECK(s.world->nodes.front().gpu_count == 8);
  // Tenant t2 asks for 4 GPUs now; t1 is untouched.
  bool saw_t2 = false;
  for (const auto& p : s.world->pods) {
    if (p.queue == "t2") {
      saw_t2 = true;
      CHECK(p.gpu_count == 4);
    }
    if (p.queue == "t1") CHECK(p.gpu_count == 1);
  }
  CHECK(saw_t2);
}

TEST_CASE(
    "an error in an extended file names that file and its line, one in the overlay the overlay") {
  Dir d;
  std::string bad_base = kBase;
  bad_base.replace(bad_base.find("memory: 32Gi"), 12, "memory: 32GB");  // line 12 of base.yaml
  d.write("base.yaml", bad_base);
  const std::string v =
      d.write("v.yaml", "extends: base.yaml\ncluster:\n  pools:\n    - {name: a, count: 3}\n");
  try {
    (void)load_scenario(v, {});
    FAIL("no error");
  } catch (const InputError& e) {
    CAPTURE(e.what());
    CHECK(e.where().file.find("base.yaml") != std::string::npos);
    CHECK(e.where().line == 12);
    CHECK(e.where().field == "cluster.pools[1].memory");
  }
  d.write("base.yaml", kBase);
  const std::string v2 =
      d.write("v2.yaml", "extends: base.yaml\ncluster:\n  pools:\n    - {name: a, count: many}\n");
  try {
    (void)load_scenario(v2, {});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().file.find("v2.yaml") != std::string::npos);
    CHECK(e.where().line == 4);
    CHECK(e.where().field == "cluster.pools[0].count");
  }
  // --set wins over both, and is named as the source of a bad value.
  LoadOptions lo;
  lo.overrides = {"cluster.pools.b.cpu=lots"};
  const std::string v3 = d.write("v3.yaml", "extends: base.yaml\n");
  try {
    (void)load_scenario(v3, lo);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().file == "--set cluster.pools.b.cpu=lots");
    CHECK(e.where().field == "cluster.pools[1].cpu");
  }
}

TEST_CASE("the scenario digest covers the extended file, so editing the base changes it") {
  Dir d;
  d.write("base.yaml", kBase);
  const std::string v = d.write("v.yaml", "extends: base.yaml\n");
  const std::string first = load_scenario(v, {}).sha256;
  std::string changed = kBase;
  changed.replace(changed.find("count: 1"), 8, "count: 2");
  d.write("base.yaml", changed);
  CHECK(load_scenario(v, {}).sha256 != first);
}

namespace {
const char* kTraced = R"(name: traced
cluster:
  pools:
    - {name: a, count: 2, gpu: {model: A100-80GB, count: 8}, cpu: 64, memory: 512Gi}
workload:
  traces:
    - {path: traces/t.csv}
)";
const char* kTrace = "pod,submit,duration,gpu\np0,0,1h,1\np1,10s,2h,2\n";
}  // namespace

TEST_CASE("the scenario digest covers the trace: editing the CSV changes it, a reload does not") {
  Dir d;
  fs::create_directories(d.path / "traces");
  d.write("traces/t.csv", kTrace);
  const std::string v = d.write("s.yaml", kTraced);
  const std::string first = load_scenario(v, {}).sha256;
  CHECK(first.size() == 64);
  CHECK(load_scenario(v, {}).sha256 == first);
  std::string changed = kTrace;
  changed.replace(changed.find("2h"), 2, "3h");  // one duration, same length
  d.write("traces/t.csv", changed);
  CHECK(load_scenario(v, {}).sha256 != first);
  d.write("traces/t.csv", kTrace);
  CHECK(load_scenario(v, {}).sha256 == first);
  // An override is part of the variant too.
  LoadOptions lo;
  lo.overrides = {"cluster.pools.a.count=3"};
  CHECK(load_scenario(v, lo).sha256 != first);
}

TEST_CASE("a scenario loads entirely from memory, and the source lists every file it read") {
  MemoryFiles files;
  files.add("mem/base.yaml", kTraced)
      .add("mem/s.yaml", "extends: base.yaml\nname: from-memory\n")
      .add("mem/traces/t.csv", kTrace);
  const Scenario s = load_scenario("mem/s.yaml", {}, files);
  CHECK(s.name == "from-memory");
  CHECK(s.world->nodes.size() == 2);
  REQUIRE(s.world->pods.size() == 2);
  CHECK(s.world->pods[1].duration == 2 * kHour);
  REQUIRE(files.reads().size() == 3);
  CHECK(files.reads()[0].path == "mem/s.yaml");
  CHECK(files.reads()[1].path == "mem/base.yaml");
  CHECK(files.reads()[2].path == "mem/traces/t.csv");
  // The digest names files relative to the scenario's directory, so it is the same on disk.
  Dir d;
  fs::create_directories(d.path / "traces");
  d.write("base.yaml", kTraced);
  d.write("traces/t.csv", kTrace);
  const std::string v = d.write("s.yaml", "extends: base.yaml\nname: from-memory\n");
  CHECK(load_scenario(v, {}).sha256 == s.sha256);
}

TEST_CASE("a file missing from memory is a missing input named by its path") {
  MemoryFiles files;
  files.add("mem/s.yaml", kTraced);
  try {
    (void)load_scenario("mem/s.yaml", {}, files);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kMissing);
    CHECK(e.where().file == "mem/traces/t.csv");
  }
}

TEST_CASE("an empty file path is refused at its field (found by the scenario fuzz target)") {
  // A YAML tag with nothing after it (`!kueue.yaml` in a flow sequence, `extends: !base.yaml`)
  // tags an empty value: it names no file, and opening the scenario's own directory in its place
  // gave an error that named no file either.
  struct Case {
    const char* text;
    const char* error;  // how the message starts
  };
  const Case cases[] = {
      {"name: s\nmanifests: [m.yaml, !kueue.yaml]\n",
       "mem/s.yaml:2:21: manifests[1]: a file path is needed"},
      {"extends: !base.yaml\nname: s\n", "mem/s.yaml:1:10: extends: a file path is needed"},
      {"extends: ''\nname: s\n", "mem/s.yaml:1:10: extends: a file path is needed"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    MemoryFiles files;
    files.add("mem/s.yaml", c.text);
    files.add("mem/m.yaml", "");
    try {
      (void)load_scenario("mem/s.yaml", {}, files);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.kind() == InputErrorKind::kInvalid);
      CHECK(e.where().file == "mem/s.yaml");  // the field's place, not a directory opened
      CHECK(std::string(e.what()).rfind(c.error, 0) == 0);
    }
  }
}

TEST_CASE(
    "scheduler profiles are compiled at load: a bad one fails there, with file, line, field") {
  const std::string cluster =
      "cluster:\n  pools:\n    - {name: a, count: 1, gpu: {model: A100-80GB, count: 8}, cpu: 64, "
      "memory: 512Gi}\n";
  struct Case {
    const char* name;
    std::string scheduler;
    int want_line;
    const char* want_message;
  };
  const Case cases[] = {
      {"an unknown plugin in a defined profile",
       "scheduler:\n  profiles:\n    - schedulerName: p\n      plugins:\n        score:\n"
       "          enabled: [{name: MostAlocated}]\n",
       9, "unknown plugin 'MostAlocated'"},
      {"a Score that needs its PreScore, without it (TopologyPacking at score only)",
       "scheduler:\n  profiles:\n    - schedulerName: p\n      plugins:\n        score:\n"
       "          enabled: [{name: TopologyPacking}]\n",
       6, "plugin TopologyPacking scores with what its PreScore computes: enable it at preScore"},
      {"PodTopologySpread's PreScore disabled, its Score kept",
       "scheduler:\n  profiles:\n    - schedulerName: p\n      plugins:\n        preScore:\n"
       "          disabled: [{name: PodTopologySpread}]\n",
       6, "plugin PodTopologySpread scores with what its PreScore computes"},
      {"two profiles with one name",
       "scheduler:\n  profiles:\n    - schedulerName: p\n    - schedulerName: p\n", 7,
       "two profiles are named 'p'"},
      // No profile of its own: the knob applies to the built-in profiles, so they are checked.
      {"a bad top-level knob with built-in profiles only", "scheduler:\n  tieBreak: sometimes\n", 5,
       "tieBreak must be 'first' or 'random'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    MemoryFiles files;
    files.add("s.yaml", cluster + c.scheduler);
    try {
      (void)load_scenario("s.yaml", {}, files);
      FAIL("no error");
    } catch (const InputError& e) {
      CAPTURE(e.what());
      CHECK(e.where().file == "s.yaml");
      CHECK(e.where().line == c.want_line);
      CHECK(std::string(e.what()).find(c.want_message) != std::string::npos);
    }
  }
}

TEST_CASE("a scenario's profile set lists its own profiles, then the built-in ones it keeps") {
  MemoryFiles files;
  files.add("s.yaml",
            "cluster:\n  pools:\n    - {name: a, count: 1, cpu: 8, memory: 32Gi}\n"
            "scheduler:\n  profiles:\n    - schedulerName: mine\n"
            "    - schedulerName: gpu-binpack\n");
  const Scenario s = load_scenario("s.yaml", {}, files);
  const std::vector<std::string> names = s.profiles.names();
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "mine");
  CHECK(names[1] == "gpu-binpack");
  CHECK(names[2] == "default-scheduler");
  CHECK(std::count(names.begin(), names.end(), "gpu-binpack") == 1);
  CHECK(s.profiles.contains("mine"));
  CHECK(!s.profiles.contains("nope"));
}

TEST_CASE("a fleet of every MIG-capable catalog model in mixed strategy fits one run") {
  // Mixed strategy interns every MIG profile name a GPU could be re-laid out into: over the
  // seven MIG-capable models that is 39 names beside the fixed five, more than the 40 distinct
  // resource names a run once had room for.
  Dir d;
  std::string text = "name: seven\ncluster:\n  pools:\n";
  const char* models[] = {"A100-40GB",  "A100-80GB", "H100-80GB", "H100-NVL-94GB",
                          "H200-141GB", "B200",      "GB200"};
  for (const char* m : models) {
    std::string pool = m;  // a pool's name makes its nodes' names, which are lowercase
    std::transform(pool.begin(), pool.end(), pool.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    text += "    - {name: " + pool + ", count: 1, gpu: {model: " + m +
            ", count: 8}, cpu: 64, memory: 512Gi, mig: {config: all-balanced, strategy: "
            "mixed}}\n";
  }
  text +=
      "workload:\n  synthetic:\n    tenants:\n"
      "      - {name: t, rate_per_hour: 5, gpus: 1, gpu_resource: nvidia.com/mig-1g.10gb, "
      "duration: 10m}\n";
  const Scenario s = load_scenario(d.write("seven.yaml", text), {});
  std::size_t mig_names = 0;
  for (ResourceId r = 0; r < s.world->resources.size(); ++r)
    mig_names += s.world->resources.name(r).rfind("nvidia.com/mig-", 0) == 0 ? 1u : 0u;
  CHECK(mig_names >= 39);
  CHECK(s.world->resources.size() > 40);
  CHECK(s.world->nodes.size() == 7);
}
