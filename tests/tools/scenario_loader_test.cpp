// Scenario-level loading: `extends:` merging with errors attributed to the right file, and
// --set overrides.
#include "tools/loaders/scenario_loader.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

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
