#include "models/dra/nvidia_driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace capsim::dra {

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

AttrValue str(std::string s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kString;
  v.s = std::move(s);
  return v;
}
AttrValue version(std::string s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kVersion;
  v.s = std::move(s);
  return v;
}
AttrValue integer(std::int64_t i) {
  AttrValue v;
  v.kind = AttrValue::Kind::kInt;
  v.i = i;
  return v;
}

// "8.0" -> "8.0.0", "10" -> "10.0.0".
std::string semver_of(const std::string& v) {
  const auto dots = std::count(v.begin(), v.end(), '.');
  if (dots >= 2) return v;
  return dots == 1 ? v + ".0" : v + ".0.0";
}

// A stable 128-bit-looking identifier from a string (FNV-1a, twice with different seeds).
std::string fake_uuid(const std::string& prefix, const std::string& key) {
  auto fnv = [](const std::string& s, std::uint64_t h) {
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
    return h;
  };
  const std::uint64_t a = fnv(key, 14695981039346656037ull);
  const std::uint64_t b = fnv(key + "#", 0x9e3779b97f4a7c15ull);
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", prefix, a >> 32, (a >> 16) & 0xffff,
                     a & 0xffff, b >> 48, b & 0xffffffffffffull);
}

}  // namespace

std::string nvidia_product_name(const GpuModel& model) {
  static const std::map<std::string, std::string> names = {
      {"A100-40GB", "NVIDIA A100-SXM4-40GB"},
      {"A100-80GB", "NVIDIA A100-SXM4-80GB"},
      {"H100-80GB", "NVIDIA H100 80GB HBM3"},
      {"H100-NVL-94GB", "NVIDIA H100 NVL"},
      {"H200-141GB", "NVIDIA H200"},
      {"B200", "NVIDIA B200"},
      {"GB200", "NVIDIA GB200"},
      {"A10", "NVIDIA A10"},
      {"T4", "Tesla T4"},
      {"V100M16", "Tesla V100-SXM2-16GB"},
      {"V100M32", "Tesla V100-SXM2-32GB"},
      {"P100", "Tesla P100-PCIE-16GB"},
  };
  if (auto it = names.find(model.name); it != names.end()) return it->second;
  // GPU Feature Discovery's label is the NVML name with spaces turned into dashes.
  for (const auto& a : model.aliases) {
    if (a.rfind("NVIDIA-", 0) == 0) return "NVIDIA " + a.substr(7);
  }
  return "NVIDIA " + model.name;
}

std::string nvidia_mig_device_name(std::uint16_t gpu, const std::string& profile,
                                   std::int32_t profile_id, std::int32_t start) {
  // toRFC1123Compliant(profile without dots): lower case, anything else than [a-z0-9-] a dash.
  std::string p;
  for (char c : profile) {
    if (c == '.') continue;
    const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    p += ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-') ? l : '-';
  }
  return fmt::format("gpu-{}-mig-{}-{}-{}", gpu, p, profile_id, start);
}

std::vector<DeviceClass> nvidia_device_classes() {
  DeviceClass gpu;
  gpu.name = "gpu.nvidia.com";
  gpu.selectors.push_back(
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
       "<the NVIDIA DRA driver's DeviceClass gpu.nvidia.com>"});
  gpu.extended_resource_name = "nvidia.com/gpu";
  gpu.builtin = true;
  gpu.where = "<the NVIDIA DRA driver's DeviceClass gpu.nvidia.com>";
  DeviceClass mig;
  mig.name = "mig.nvidia.com";
  mig.selectors.push_back(
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
       "<the NVIDIA DRA driver's DeviceClass mig.nvidia.com>"});
  mig.builtin = true;
  mig.where = "<the NVIDIA DRA driver's DeviceClass mig.nvidia.com>";
  return {gpu, mig};
}

NodeDevices nvidia_node_devices(const NodeSpec& node, const GpuModel& model) {
  const DraNodeConfig& cfg = node.devices.dra;
  NodeDevices out;
  out.source = "published by capsim's model of the gpu.nvidia.com DRA driver";
  Pool pool;
  pool.driver = kNvidiaDriver;
  pool.name = node.name;
  pool.generation = 1;
  const std::string product = nvidia_product_name(model);
  const std::int32_t gpus = node.gpu_count;
  const std::int32_t per_root = std::max(1, cfg.gpus_per_pcie_root);
  const std::int32_t numa = std::max(1, cfg.numa_nodes);

  // Partitionable GPUs: the largest value of each capacity over the MIG profiles (upstream's
  // maxCapacities), which the full device advertises and the counter set holds.
  std::int64_t max_sms = 0;
  std::int64_t max_memory = 0;
  for (const MigProfile& p : model.mig_profiles) {
    max_sms = std::max<std::int64_t>(max_sms, p.sms);
    max_memory = std::max(max_memory, p.memory_mib * kMiB);
  }
  const bool partitionable = cfg.partitionable && model.mig_capable();

  for (std::int32_t gi = 0; gi < gpus; ++gi) {
    const auto g = static_cast<std::uint16_t>(gi);
    const GpuLayout layout = static_cast<std::size_t>(gi) < node.devices.layouts.size()
                                 ? node.devices.layouts[static_cast<std::size_t>(gi)]
                                 : GpuLayout{};
    // PCI topology: `per_root` GPUs behind each root complex, roots numbered from bus 0x10 in
    // steps of 0x20 (eight per PCI domain); GPUs split evenly across NUMA nodes.
    const std::int32_t root = gi / per_root;
    const std::int32_t root_bus = 0x10 + (root % 8) * 0x20;
    const std::string pcie_root = fmt::format("pci{:04x}:{:02x}", root / 8, root_bus);
    const std::string bus_id =
        fmt::format("{:04x}:{:02x}:00.0", root / 8, root_bus + 1 + gi % per_root);
    const std::int64_t numa_node = static_cast<std::int64_t>(gi) * numa / std::max(1, gpus);
    const std::string uuid = fake_uuid("GPU", node.name + "/" + std::to_string(gi));

    auto common = [&](Device& d) {
      d.attributes.push_back({kNvidiaDriver, "productName", str(product)});
      d.attributes.push_back({kNvidiaDriver, "brand", str("Nvidia")});
      d.attributes.push_back({kNvidiaDriver, "architecture", str(model.architecture)});
      d.attributes.push_back(
          {kNvidiaDriver, "cudaComputeCapability", version(semver_of(model.compute_capability))});
      d.attributes.push_back(
          {kNvidiaDriver, "driverVersion", version(semver_of(cfg.driver_version))});
      d.attributes.push_back(
          {kNvidiaDriver, "cudaDriverVersion", version(semver_of(cfg.cuda_driver_version))});
      d.attributes.push_back({kStandardDomain, "pciBusID", str(bus_id)});
      d.attributes.push_back({kStandardDomain, "pcieRoot", str(pcie_root)});
      d.attributes.push_back({kStandardDomain, "numaNode", integer(numa_node)});
      d.pool = 0;
      d.gpu = g;
    };

    std::uint16_t set_index = 0;
    if (partitionable) {
      CounterSet set;
      set.name = fmt::format("gpu-{}-counter-set", gi);
      set.counters.emplace_back("memory", max_memory * 1000);
      set.counters.emplace_back("multiprocessors", max_sms * 1000);
      set.counters.emplace_back("ofa-engines", 1000);  // one media-extension (+me) instance per GPU
      for (std::int32_t k = 0; k < model.mig_memory_slots; ++k) {
        set.counters.emplace_back(fmt::format("memory-slice-{}", k), 1000);
      }
      set_index = static_cast<std::uint16_t>(pool.counter_sets.size());
      pool.counter_sets.push_back(std::move(set));
    }
    auto slice_counters = [&](CounterConsumption& cc, std::int32_t start, std::int32_t size) {
      for (std::int32_t k = start; k < start + size; ++k) {
        cc.counters.emplace_back(static_cast<std::uint16_t>(3 + k), 1000);
      }
    };

    std::vector<Device> devices;
    if (!layout.mig_enabled) {
      Device d;
      d.name = fmt::format("gpu-{}", gi);
      d.attributes.push_back({kNvidiaDriver, "type", str("gpu")});
      d.attributes.push_back({kNvidiaDriver, "uuid", str(uuid)});
      common(d);
      if (partitionable) {
        d.capacity.push_back({kNvidiaDriver, "memory", max_memory * 1000});
        d.capacity.push_back({kNvidiaDriver, "multiprocessors", max_sms * 1000});
        CounterConsumption cc;
        cc.counter_set = set_index;
        cc.counters = {{0, max_memory * 1000}, {1, max_sms * 1000}, {2, 1000}};
        slice_counters(cc, 0, model.mig_memory_slots);
        d.consumes.push_back(std::move(cc));
      } else {
        d.capacity.push_back({kNvidiaDriver, "memory", model.memory_mib * kMiB * 1000});
        if (model.sms > 0)
          d.capacity.push_back({kNvidiaDriver, "multiprocessors", model.sms * 1000});
      }
      devices.push_back(std::move(d));
    }
    auto mig_device = [&](std::size_t pi, std::int32_t start) {
      const MigProfile& p = model.mig_profiles[pi];
      Device d;
      d.name = nvidia_mig_device_name(g, p.name, p.profile_id, start);
      d.attributes.push_back({kNvidiaDriver, "type", str("mig")});
      d.attributes.push_back({kNvidiaDriver, "parentUUID", str(uuid)});
      d.attributes.push_back({kNvidiaDriver, "profile", str(p.name)});
      common(d);
      d.capacity.push_back({kNvidiaDriver, "memory", p.memory_mib * kMiB * 1000});
      d.capacity.push_back({kNvidiaDriver, "multiprocessors", std::int64_t{p.sms} * 1000});
      d.profile = static_cast<std::int16_t>(pi);
      d.start = static_cast<std::uint8_t>(start);
      return d;
    };
    std::vector<Device> migs;
    if (layout.mig_enabled) {
      for (const MigInstance& inst : layout.instances) {
        Device d = mig_device(inst.profile, inst.start);
        d.attributes.push_back(
            {kNvidiaDriver, "uuid",
             str(fake_uuid("MIG", fmt::format("{}/{}/{}", node.name, gi, d.name)))});
        for (std::int32_t k = inst.start; k < inst.start + inst.size; ++k) {
          d.capacity.push_back({kNvidiaDriver, fmt::format("memorySlice{}", k), 1000});
        }
        d.static_mig = true;
        migs.push_back(std::move(d));
      }
    } else if (partitionable) {
      for (std::size_t pi = 0; pi < model.mig_profiles.size(); ++pi) {
        const MigProfile& p = model.mig_profiles[pi];
        for (std::int32_t start : p.start_slots) {
          Device d = mig_device(pi, start);
          CounterConsumption cc;
          cc.counter_set = set_index;
          cc.counters = {{0, p.memory_mib * kMiB * 1000}, {1, std::int64_t{p.sms} * 1000}};
          if (p.media_extensions) cc.counters.emplace_back(2, 1000);
          slice_counters(cc, start, p.memory_slices);
          d.consumes.push_back(std::move(cc));
          migs.push_back(std::move(d));
        }
      }
    }
    // The driver sorts a slice's devices by name, which the scheduler then tries in order.
    std::sort(migs.begin(), migs.end(),
              [](const Device& a, const Device& b) { return a.name < b.name; });
    for (Device& d : migs)
      devices.push_back(std::move(d));
    for (Device& d : devices)
      out.devices.push_back(std::move(d));
  }
  out.pools.push_back(std::move(pool));
  return out;
}

}  // namespace capsim::dra
