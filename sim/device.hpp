// How a node's GPUs are cut up and offered to pods, the way NVIDIA's device plugin and MIG
// manager do it, as plain data the core can reason about:
//   - MigInstance: a GPU instance on a MIG-enabled GPU, at a start slot (placement), of a profile;
//   - DeviceConfig: a node's MIG strategy and layouts and its sharing (time-slicing or MPS
//     replicas per resource), read by the loaders from mig-parted and device-plugin configs;
//   - DeviceUnit: one advertised device (a whole GPU, a MIG instance), with how many pods it can
//     take (its replicas) and what one of them gets (capacity fraction, memory, thread cap).
// The geometry rules (which layouts fit) live in models/mig_layout; the performance and OOM rules
// in models/device_model. A MIG profile is an index into the node's GpuModelInfo::mig_profiles.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/resources.hpp"

namespace capsim {

enum class MigStrategy : std::uint8_t { kNone, kSingle, kMixed };
enum class ShareMode : std::uint8_t { kExclusive, kTimeSliced, kMps };

struct MigInstance {
  std::uint16_t profile = 0;  // index into GpuModelInfo::mig_profiles
  std::uint8_t start = 0;     // first memory slot
  std::uint8_t size = 0;      // memory slots
  bool operator==(const MigInstance&) const = default;
};

// The layout of one physical GPU: MIG off (whole GPU) or on with these instances.
struct GpuLayout {
  bool mig_enabled = false;
  std::vector<MigInstance> instances;
  bool operator==(const GpuLayout&) const = default;
};

// A resource the device plugin time-slices or shares with MPS, and its replicas.
struct SharedResource {
  std::string name;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  std::int32_t replicas = 1;
};

// A node whose GPUs NVIDIA's DRA driver publishes in ResourceSlices (gpu.nvidia.com) instead of
// the device plugin advertising them as extended resources. The driver models the attributes
// that are not in the catalog from these settings.
struct DraNodeConfig {
  bool enabled = false;
  // KEP-4815 partitionable devices ("dynamic MIG"): every MIG placement is a device that
  // consumes memory-slice counters of its GPU; the instance is created when a claim is allocated
  // and destroyed when it is freed. Off: MIG-enabled GPUs publish the instances of their layout.
  bool partitionable = false;
  std::string driver_version = "580.126.20";
  std::string cuda_driver_version = "13.0.0";
  std::int32_t gpus_per_pcie_root = 2;  // GPUs behind one PCIe root complex
  std::int32_t numa_nodes = 2;          // GPUs split evenly across NUMA nodes
};

struct DeviceConfig {
  DraNodeConfig dra;  // enabled: the device plugin advertises nothing on this node
  MigStrategy mig_strategy = MigStrategy::kNone;
  std::string mig_config;                     // the mig-parted config name applied (for reports)
  std::vector<GpuLayout> layouts;             // one per physical GPU; empty: every GPU whole
  ShareMode sharing = ShareMode::kExclusive;  // time-slicing or MPS for the resources below
  std::vector<SharedResource> shared;
  bool rename_by_default = false;  // <name>.shared
  bool fail_requests_greater_than_one = false;
  std::string plugin_config;  // the device-plugin config key applied (for reports)

  std::int32_t replicas_for(const std::string& resource) const {
    for (const auto& s : shared) {
      if (s.name == resource) return s.replicas;
    }
    return 1;
  }
};

// One advertised device. Units are never erased while a node has pods: a reconfigured MIG
// instance's unit is retired (replicas 0) and new ones are appended, so indices held by pods stay
// valid.
struct DeviceUnit {
  ResourceId resource = kNvidiaGpu;
  std::uint16_t gpu = 0;
  std::int16_t instance = -1;  // index into the GPU's layout instances; -1: the whole GPU
  ShareMode mode = ShareMode::kExclusive;
  std::uint16_t replicas = 1;  // pods it can take at once; 0: retired
  std::uint16_t used = 0;
  // What one holder gets, relative to the whole physical GPU.
  double capacity = 1.0;          // compute capacity fraction (MIG: from SMs and memory slices)
  double alloc_weight = 1.0;      // share of the GPU it stands for (MIG: compute slices / 7)
  double thread_cap = 1.0;        // MPS: floor(100 / replicas) / 100
  std::int64_t memory = 0;        // bytes of the device (GPU or MIG instance)
  std::int64_t memory_limit = 0;  // per holder: MPS floor(memory / replicas), else memory
  // Published through DRA (the node's DraNodeConfig is enabled): held by resource claims, not
  // advertised as an extended resource; `used` counts the claims holding it (0 or 1).
  bool dra = false;
  bool alive() const { return replicas > 0; }
};

// The compute capacity of a MIG instance relative to its whole GPU (DeviceUnit::capacity):
// compute scales with the instance's SMs, bandwidth with its memory slices, and, like the
// catalog's relative_speed, a job is taken to scale with their geometric mean.
inline double mig_instance_capacity(double instance_sms, double gpu_sms, double memory_slices,
                                    double gpu_memory_slots) {
  return std::sqrt(instance_sms / gpu_sms * memory_slices / gpu_memory_slots);
}

// What a pod holds of one device unit: one of the unit's replicas, or, for a GPU-share pod, part
// of the share pool of the unit's GPU (its whole-GPU unit stands for the pool: `milli` of 1000).
// `share` is the part of the physical GPU the holding stands for: a whole GPU 1, a MIG instance
// its compute slices / 7, a time-slice or MPS replica 1/replicas of its device, a GPU share
// milli/1000, a DRA device as its unit. It is the one answer to "how much GPU does this pod hold"
// (lost GPU time, allocation); cost charges a holding through a DeviceCharge policy instead.
struct Holding {
  std::uint16_t unit = 0;  // index into NodeInfo::units
  std::int32_t milli = 0;  // > 0: milli of the GPU's share pool, not one of the unit's replicas
  double share = 0;        // of the physical GPU, 0..1
  bool pooled() const { return milli > 0; }
  bool operator==(const Holding&) const = default;
};

}  // namespace capsim
