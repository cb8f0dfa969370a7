// The static description of a node: what the scenario, a pool or a Node manifest says. Its
// dynamic state (requests, pods, device occupancy) lives in NodeInfo (cluster.hpp). GPU models are
// catalog indices; the catalog itself lives in models/ and is reached through the World.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/device.hpp"
#include "sim/labels.hpp"
#include "sim/resources.hpp"

namespace capsim {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;
using GpuModelId = std::uint16_t;
inline constexpr GpuModelId kNoGpuModel = 0xffff;

// How a node's GPUs are offered to pods, in one word for reports; the details are in
// NodeSpec::devices.
enum class GpuSharing : std::uint8_t { kNone, kMig, kTimeSlicing, kMps, kShare };
inline constexpr std::size_t kGpuSharingModes = 5;  // per-mode arrays are this long

struct NodeSpec {
  std::string name;
  Sym name_sym = kNoSym;
  std::string pool;
  ResourceVec capacity;
  ResourceVec allocatable;
  GpuModelId gpu_model = kNoGpuModel;
  std::int32_t gpu_count = 0;  // physical GPUs
  GpuSharing sharing = GpuSharing::kNone;
  DeviceConfig devices;  // MIG layouts and time-slicing/MPS, as the device plugin sees them
  LabelSet labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  double price_per_hour = 0.0;  // whole node, USD (GPUs at their catalog or overridden price)
  std::string source;           // "file:line" the node came from, for messages
};

}  // namespace capsim
