// The ResourceSlices capsim publishes for DRA nodes, as NVIDIA's driver does: device names and
// attributes, and the partitionable-device counters, which must admit every MIG layout the
// placement rules allow and refuse a whole GPU next to any partition.
#include "models/dra/nvidia_driver.hpp"

#include <doctest/doctest.h>

#include <map>

#include "models/mig_layout.hpp"

using namespace capsim;

namespace {

NodeSpec dra_node(const GpuModel& m, std::int32_t gpus, bool partitionable) {
  NodeSpec n;
  n.name = "node-a";
  n.gpu_count = gpus;
  n.devices.dra.enabled = true;
  n.devices.dra.partitionable = partitionable;
  n.devices.layouts.assign(static_cast<std::size_t>(gpus), GpuLayout{});
  (void)m;
  return n;
}

const dra::Attribute* attr(const dra::Device& d, const std::string& name) {
  for (const auto& a : d.attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Counters a set of devices draws from one pool, keyed by (set, counter).
bool fits(const dra::NodeDevices& nd, const std::vector<const dra::Device*>& devices) {
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::int64_t> drawn;
  for (const dra::Device* d : devices) {
    for (const auto& cc : d->consumes) {
      for (const auto& [ci, amount] : cc.counters) {
        drawn[{cc.counter_set, ci}] += amount;
        if (drawn[{cc.counter_set, ci}] >
            nd.pools[d->pool].counter_sets[cc.counter_set].counters[ci].second) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

TEST_CASE("a DRA node publishes its GPUs with the NVIDIA driver's names and attributes") {
  const GpuCatalog& cat = GpuCatalog::builtin();
  const GpuModel& b200 = *cat.find("B200");
  NodeSpec n = dra_node(b200, 8, false);
  n.devices.dra.gpus_per_pcie_root = 2;
  const dra::NodeDevices nd = dra::nvidia_node_devices(n, b200);
  REQUIRE(nd.pools.size() == 1);
  CHECK(nd.pools[0].driver == "gpu.nvidia.com");
  CHECK(nd.pools[0].name == "node-a");
  REQUIRE(nd.devices.size() == 8);
  const dra::Device& g3 = nd.devices[3];
  CHECK(g3.name == "gpu-3");
  CHECK(g3.gpu == 3);
  CHECK(attr(g3, "type")->value.s == "gpu");
  CHECK(attr(g3, "productName")->value.s == "NVIDIA B200");
  CHECK(attr(g3, "architecture")->value.s == "Blackwell");
  CHECK(attr(g3, "cudaComputeCapability")->value.s == "10.0.0");
  CHECK(attr(g3, "cudaComputeCapability")->value.kind == dra::AttrValue::Kind::kVersion);
  CHECK(attr(g3, "driverVersion")->value.s == "580.126.20");
  CHECK(attr(g3, "uuid")->value.s.rfind("GPU-", 0) == 0);
  // GPUs 2 and 3 share a PCIe root; 3 and 4 do not. NUMA: 0-3 on node 0, 4-7 on node 1.
  CHECK(attr(nd.devices[2], "pcieRoot")->value == attr(g3, "pcieRoot")->value);
  CHECK_FALSE(attr(nd.devices[4], "pcieRoot")->value == attr(g3, "pcieRoot")->value);
  CHECK(attr(g3, "pcieRoot")->domain == "resource.kubernetes.io");
  CHECK(attr(g3, "numaNode")->value.i == 0);
  CHECK(attr(nd.devices[4], "numaNode")->value.i == 1);
  // Memory in bytes (x1000 for milli): the catalog's 183359 MiB.
  CHECK(g3.capacity[0].name == "memory");
  CHECK(g3.capacity[0].milli == std::int64_t{183359} * 1024 * 1024 * 1000);
  CHECK(dra::nvidia_mig_device_name(0, "1g.10gb+me", 20, 3) == "gpu-0-mig-1g10gb-me-20-3");
}

TEST_CASE("partitionable GPUs' counters admit every placed MIG layout and nothing overlapping") {
  const GpuCatalog& cat = GpuCatalog::builtin();
  int models = 0;
  for (const GpuModel& m : cat.models()) {
    if (!m.mig_capable()) continue;
    ++models;
    CAPTURE(m.name);
    const GpuModelInfo info = to_model_info(m);
    const dra::NodeDevices nd = dra::nvidia_node_devices(dra_node(m, 1, true), m);
    const dra::Device* whole = nullptr;
    std::map<std::pair<int, int>, const dra::Device*> placement;  // (profile, start) -> device
    for (const dra::Device& d : nd.devices) {
      if (d.profile < 0) {
        whole = &d;
      } else {
        placement[{d.profile, d.start}] = &d;
      }
    }
    REQUIRE(whole != nullptr);
    std::size_t placements = 0;
    for (const MigProfile& p : m.mig_profiles)
      placements += p.start_slots.size();
    CHECK(placement.size() == placements);
    for (bool me : {false, true}) {
      for (const ProfileMultiset& layout : maximal_layouts(info, me)) {
        auto placed = place_profiles(info, layout);
        REQUIRE(placed.ok());
        std::vector<const dra::Device*> devs;
        for (const MigInstance& inst : placed->instances)
          devs.push_back(placement.at({inst.profile, inst.start}));
        CAPTURE(describe(info, layout));
        CHECK(fits(nd, devs));
        devs.push_back(whole);
        CHECK_FALSE(fits(nd, devs));  // the whole GPU excludes its partitions
      }
    }
    // Two placements sharing a memory slice never fit together.
    for (const auto& [ka, a] : placement) {
      for (const auto& [kb, b] : placement) {
        if (a == b) continue;
        const int sa = ka.second, sb = kb.second;
        const int za = info.mig_profiles[static_cast<std::size_t>(ka.first)].memory_slices;
        const int zb = info.mig_profiles[static_cast<std::size_t>(kb.first)].memory_slices;
        const bool overlap = sa < sb + zb && sb < sa + za;
        if (overlap) CHECK_FALSE(fits(nd, {a, b}));
      }
    }
  }
  CHECK(models >= 5);
}
