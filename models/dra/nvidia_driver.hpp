// What NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu, driver `gpu.nvidia.com`)
// publishes for a modelled node: one pool per node (named after the node) holding
//   - a full GPU device `gpu-<n>` per GPU (type gpu) with the attributes uuid, productName, brand,
//     architecture, cudaComputeCapability, driverVersion, cudaDriverVersion and the standard
//     resource.kubernetes.io/pciBusID, pcieRoot and numaNode, and capacity memory and
//     multiprocessors;
//   - on MIG-enabled GPUs (a static layout) a device per MIG instance (type mig, name
//     `gpu-<n>-mig-<profile without dots>-<GI profile id>-<start>`) with parentUUID and profile,
//     its memory and multiprocessors, and a memorySlice<i> capacity per memory slice it spans;
//   - on partitionable GPUs (KEP-4815 "dynamic MIG") a counter set `gpu-<n>-counter-set` with a
//     counter per capacity and `memory-slice-<i>` (1 each), the full GPU consuming all of it and a
//     device per possible MIG placement consuming its capacities and its slices, so that a whole
//     GPU and its partitions exclude each other and partitions never overlap; as upstream, the
//     full GPU then advertises the largest profile's capacities (e.g. 7g's memory).
// and the driver's default DeviceClasses gpu.nvidia.com (with extendedResourceName
// nvidia.com/gpu) and mig.nvidia.com. Values the catalog lacks (UUIDs, PCI addresses, NUMA
// placement, driver versions) are synthesized deterministically from the node and its
// DraNodeConfig.
#pragma once

#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/dra.hpp"
#include "sim/node.hpp"

namespace capsim::dra {

inline constexpr const char* kNvidiaDriver = "gpu.nvidia.com";
inline constexpr const char* kStandardDomain = "resource.kubernetes.io";

// The devices of `node` (whose DeviceConfig::dra is enabled) with GPUs of catalog model `model`.
NodeDevices nvidia_node_devices(const NodeSpec& node, const GpuModel& model);

// gpu.nvidia.com and mig.nvidia.com.
std::vector<DeviceClass> nvidia_device_classes();

// The product name NVML reports ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3").
std::string nvidia_product_name(const GpuModel& model);

// The canonical MIG device name: gpu-0-mig-1g10gb-19-0 ("1g.10gb+me" becomes "1g10gb-me").
std::string nvidia_mig_device_name(std::uint16_t gpu, const std::string& profile,
                                   std::int32_t profile_id, std::int32_t start);

}  // namespace capsim::dra
