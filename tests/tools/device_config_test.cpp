// Device-plugin and mig-parted configurations as the loaders read them: resource names under each
// MIG strategy, time-slicing replica counts and renaming, MPS limits, and the errors.
#include "tools/loaders/device_config.hpp"

#include <doctest/doctest.h>

#include "sim/cluster.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

using namespace capsim;

namespace {

struct Node {
  World world;
  NodeId id = 0;
};

// Builds a one-node World from a device configuration.
std::unique_ptr<Node> make_node(const char* gpu, int gpus, const std::string& mig_config,
                                std::optional<MigStrategy> strategy,
                                const std::string& plugin_yaml) {
  auto out = std::make_unique<Node>();
  const GpuCatalog& cat = GpuCatalog::builtin();
  WorldBuilder b(out->world, cat);
  DeviceConfigs configs;
  std::string plugin_name;
  if (!plugin_yaml.empty()) {
    plugin_name = "cfg";
    configs.add_device_plugin(YamlNode::load_string(plugin_yaml, "plugin.yaml"), plugin_name);
  }
  const GpuModel* m = cat.find(gpu);
  NodeSpec n;
  n.name = "n0";
  n.capacity[kCpu] = 64000;
  n.capacity[kMemory] = 512LL << 30;
  n.allocatable = n.capacity;
  n.devices = configs.resolve(*m, to_model_info(*m), gpus, mig_config, strategy, plugin_name,
                              InputLocation{"test", 1, 1, ""});
  out->id = b.add_node(n, m, gpus, std::nullopt, InputLocation{"test", 1, 1, ""});
  return out;
}

std::int64_t alloc(const Node& n, const std::string& resource) {
  auto r = n.world.resources.find(resource);
  return r ? n.world.nodes[n.id].allocatable[*r] : 0;
}

std::string label(const Node& n, const std::string& key) {
  const Sym k = n.world.strings.find(key);
  if (k == kNoSym) return "";
  const Sym v = n.world.nodes[n.id].labels.get(k);
  return v == kNoSym ? "" : n.world.strings.str(v);
}

}  // namespace

TEST_CASE("resource names and counts follow the device plugin's MIG strategies") {
  // none: whole GPUs.
  auto none = make_node("A100-80GB", 8, "", std::nullopt, "");
  CHECK(alloc(*none, "nvidia.com/gpu") == 8);
  CHECK(label(*none, "nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB");
  // mixed, all-balanced: per GPU 2 x 1g.10gb + 2g.20gb + 3g.40gb.
  auto mixed = make_node("A100-80GB", 8, "all-balanced", MigStrategy::kMixed, "");
  CHECK(alloc(*mixed, "nvidia.com/mig-1g.10gb") == 16);
  CHECK(alloc(*mixed, "nvidia.com/mig-2g.20gb") == 8);
  CHECK(alloc(*mixed, "nvidia.com/mig-3g.40gb") == 8);
  CHECK(alloc(*mixed, "nvidia.com/gpu") == 0);
  CHECK(label(*mixed, "nvidia.com/mig.strategy") == "mixed");
  CHECK(label(*mixed, "nvidia.com/mig-1g.10gb.count") == "16");
  // single, all-1g.10gb: MIG devices advertised as nvidia.com/gpu, 7 per GPU, product renamed.
  auto single = make_node("A100-80GB", 8, "all-1g.10gb", MigStrategy::kSingle, "");
  CHECK(alloc(*single, "nvidia.com/gpu") == 56);
  CHECK(label(*single, "nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
  CHECK(label(*single, "nvidia.com/gpu.count") == "56");
  // The media-extension profile's '+' becomes '.' in the resource name.
  auto me = make_node("A100-80GB", 1, "all-1g.10gb.me", MigStrategy::kMixed, "");
  CHECK(alloc(*me, "nvidia.com/mig-1g.10gb.me") == 1);
  // B200 names.
  auto b200 = make_node("B200", 8, "all-balanced", MigStrategy::kMixed, "");
  CHECK(alloc(*b200, "nvidia.com/mig-1g.23gb") == 16);
  CHECK(alloc(*b200, "nvidia.com/mig-3g.90gb") == 8);
}

TEST_CASE("time-slicing multiplies the advertised count by the replicas") {
  const char* ts4 =
      "version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - {name: nvidia.com/gpu, "
      "replicas: 4}\n";
  auto n = make_node("A100-80GB", 8, "", std::nullopt, ts4);
  CHECK(alloc(*n, "nvidia.com/gpu") == 32);  // 8 GPUs x 4 replicas
  CHECK(label(*n, "nvidia.com/gpu.replicas") == "4");
  CHECK(label(*n, "nvidia.com/gpu.sharing-strategy") == "time-slicing");
  CHECK(label(*n, "nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB-SHARED");
  const char* renamed =
      "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n      - "
      "{name: nvidia.com/gpu, replicas: 10}\n";
  auto r = make_node("A100-80GB", 8, "", std::nullopt, renamed);
  CHECK(alloc(*r, "nvidia.com/gpu.shared") == 80);
  CHECK(alloc(*r, "nvidia.com/gpu") == 0);
  CHECK(label(*r, "nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB");  // no -SHARED when renamed
  // A MIG resource can be time-sliced under the mixed strategy.
  const char* mig_ts =
      "version: v1\nflags: {migStrategy: mixed}\nsharing:\n  timeSlicing:\n    resources:\n      - "
      "{name: nvidia.com/mig-1g.10gb, replicas: 3}\n";
  auto m = make_node("A100-80GB", 2, "all-balanced", std::nullopt, mig_ts);
  CHECK(alloc(*m, "nvidia.com/mig-1g.10gb") == 12);  // 2 GPUs x 2 instances x 3 replicas
  CHECK(alloc(*m, "nvidia.com/mig-2g.20gb") == 2);
}

TEST_CASE("MPS gives each client an equal share of memory and threads") {
  const char* mps =
      "version: v1\nsharing:\n  mps:\n    resources:\n      - {name: nvidia.com/gpu, replicas: "
      "3}\n";
  auto n = make_node("A100-80GB", 1, "", std::nullopt, mps);
  CHECK(alloc(*n, "nvidia.com/gpu") == 3);
  Cluster c(n->world);
  const DeviceUnit& u = c.node(0).units.at(0);
  CHECK(u.mode == ShareMode::kMps);
  // floor(100 / 3) = 33 % of the threads; floor(81920 MiB / 3) = 27306 MiB of memory.
  CHECK(u.thread_cap == doctest::Approx(0.33));
  CHECK(u.memory_limit == 27306LL << 20);
  CHECK(label(*n, "nvidia.com/gpu.sharing-strategy") == "mps");
}

TEST_CASE("impossible device configurations are rejected with the reason") {
  struct Case {
    const char* name;
    const char* gpu;
    const char* mig;
    std::optional<MigStrategy> strategy;
    const char* plugin;
    const char* want;
  };
  const Case cases[] = {
      {"MIG on a GPU without it", "T4", "all-balanced", MigStrategy::kMixed, "",
       "does not support MIG"},
      {"unknown MIG config", "A100-80GB", "all-balancd", MigStrategy::kMixed, "",
       "did you mean 'all-balanced'"},
      {"single strategy with mixed profiles", "A100-80GB", "all-balanced", MigStrategy::kSingle, "",
       "one MIG device type"},
      {"time-slicing with one replica", "A100-80GB", "", std::nullopt,
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
       "1}]\n",
       "out of range"},
      {"time-slicing and MPS together", "A100-80GB", "", std::nullopt,
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
       "2}]\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
       "cannot be combined"},
      {"more than 48 MPS clients", "A100-80GB", "", std::nullopt,
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 49}]\n",
       "at most 48"},
      {"MPS on MIG devices", "A100-80GB", "all-balanced", MigStrategy::kMixed,
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
       "not supported on MIG"},
      {"sharing an unknown resource", "A100-80GB", "", std::nullopt,
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: example.com/fpga, replicas: "
       "2}]\n",
       "cannot be shared"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    try {
      (void)make_node(c.gpu, 8, c.mig, c.strategy, c.plugin);
      FAIL("no error");
    } catch (const InputError& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(c.want) != std::string::npos);
    }
  }
}

TEST_CASE("a mig-parted config can target GPUs and device ids, raw or in a ConfigMap") {
  const char* cm = R"(apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-parted-config}
data:
  config.yaml: |
    version: v1
    mig-configs:
      half-and-half:
        - devices: [0, 1, 2, 3]
          mig-enabled: false
        - device-filter: ["0x20B210DE"]
          devices: [4, 5, 6, 7]
          mig-enabled: true
          mig-devices: {"3g.40gb": 2}
)";
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  DeviceConfigs configs;
  configs.add_mig_parted(YamlNode::load_string(cm, "cm.yaml"));
  const GpuModel* m = GpuCatalog::builtin().find("A100-80GB");
  DeviceConfig dc = configs.resolve(*m, to_model_info(*m), 8, "half-and-half", MigStrategy::kMixed,
                                    "", InputLocation{"t", 1, 1, ""});
  REQUIRE(dc.layouts.size() == 8);
  for (int g = 0; g < 4; ++g)
    CHECK_FALSE(dc.layouts[static_cast<std::size_t>(g)].mig_enabled);
  for (int g = 4; g < 8; ++g)
    CHECK(dc.layouts[static_cast<std::size_t>(g)].instances.size() == 2);
  // A 3g+3g+1g entry is impossible, and the error points into the ConfigMap's document.
  const char* bad =
      "version: v1\nmig-configs:\n  broken:\n    - devices: all\n      mig-enabled: true\n      "
      "mig-devices: {\"3g.40gb\": 2, \"1g.10gb\": 1}\n";
  configs.add_mig_parted(YamlNode::load_string(bad, "bad.yaml"));
  try {
    (void)configs.resolve(*m, to_model_info(*m), 8, "broken", MigStrategy::kMixed, "",
                          InputLocation{"t", 1, 1, ""});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bad.yaml:4") != std::string::npos);
    CHECK(std::string(e.what()).find("needs 9 memory slices") != std::string::npos);
  }
}

TEST_CASE("MIG profile names from other driver versions are accepted as aliases") {
  // Drivers 535/545 called the A100-80GB 3g profile 3g.39gb; the layout resolves to 3g.40gb.
  const char* cfg =
      "version: v1\nmig-configs:\n  old-driver:\n    - devices: all\n      mig-enabled: true\n     "
      " mig-devices: {\"3g.39gb\": 2}\n";
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  DeviceConfigs configs;
  configs.add_mig_parted(YamlNode::load_string(cfg, "old.yaml"));
  const GpuModel* m = GpuCatalog::builtin().find("A100-80GB");
  const GpuModelInfo info = to_model_info(*m);
  DeviceConfig dc = configs.resolve(*m, info, 1, "old-driver", MigStrategy::kMixed, "",
                                    InputLocation{"t", 1, 1, ""});
  REQUIRE(dc.layouts.at(0).instances.size() == 2);
  CHECK(info.mig_profiles[dc.layouts[0].instances[0].profile].name == "3g.40gb");
}

TEST_CASE("a mig-parted file holding the mig-manager's other documents is read for its ConfigMap") {
  RealFiles disk;
  const std::string path =
      std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/gpu-operator-mig.yaml";
  DeviceConfigs configs;
  std::vector<std::string> notes;
  CHECK(configs.add_mig_parted_file(disk.yaml_docs(path), &notes));
  CHECK(configs.has_mig_config("a100-half"));
  CHECK(configs.has_mig_config("h100-only"));
  // The ServiceAccount, the DaemonSet and the hook script are noted, not read and not refused.
  REQUIRE(notes.size() == 3);
  CHECK(notes[0].find("gpu-operator-mig.yaml:5:") != std::string::npos);
  CHECK(notes[0].find("ServiceAccount is not a mig-parted configuration: skipped") !=
        std::string::npos);
  CHECK(notes[1].find("ConfigMap key hooks.sh holds no mig-configs") != std::string::npos);
  CHECK(notes[2].find("DaemonSet is not a mig-parted configuration") != std::string::npos);

  // A file with no configuration at all says so to its caller.
  DeviceConfigs none;
  CHECK_FALSE(none.add_mig_parted_file(
      YamlNode::load_all_string("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n",
                                "sa.yaml"),
      &notes));
}

TEST_CASE("a GPU that no entry of the chosen mig-parted config matches gets a note") {
  RealFiles disk;
  const std::string path =
      std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/gpu-operator-mig.yaml";
  DeviceConfigs configs;
  (void)configs.add_mig_parted_file(disk.yaml_docs(path), nullptr);
  const GpuModel* a100 = GpuCatalog::builtin().find("A100-80GB");
  REQUIRE(a100 != nullptr);
  const InputLocation at{"s.yaml", 7, 5, "cluster.pools[0]"};
  std::vector<std::string> notes;
  // h100-only's device-filter names the H100's PCI id: mig-parted skips every A100.
  const DeviceConfig skipped =
      configs.resolve(*a100, to_model_info(*a100), 8, "h100-only", std::nullopt, "", at, &notes);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("s.yaml:7:5: cluster.pools[0]: no entry of MIG config 'h100-only' matches "
                      "GPU 0, 1, 2, 3, 4, 5, 6, 7 of this A100-80GB node") != std::string::npos);
  for (const GpuLayout& l : skipped.layouts)
    CHECK_FALSE(l.mig_enabled);
  // a100-half selects all eight (four with MIG, four without): no note.
  notes.clear();
  const DeviceConfig half =
      configs.resolve(*a100, to_model_info(*a100), 8, "a100-half", std::nullopt, "", at, &notes);
  CHECK(notes.empty());
  CHECK(half.layouts[0].mig_enabled);
  CHECK_FALSE(half.layouts[4].mig_enabled);
}
