// Reads Dynamic Resource Allocation objects (resource.k8s.io) into the World's DraWorld through
// the manifest loader's kind table: DeviceClass, ResourceClaim, ResourceClaimTemplate and
// ResourceSlice, in the v1 shape (also served as v1beta2) and the v1beta1 shape (request fields
// inline instead of under `exactly`, device fields under `basic`). CEL selectors are compiled as
// they are read, so a bad expression is an error naming file, line, field and the position in the
// expression. Pods' spec.resourceClaims are read by the Pod loader; finalize_dra() then resolves
// every reference (claims and templates by namespace, device classes by name), places the
// ResourceSlices on their nodes, publishes the devices of DRA-managed modelled nodes as NVIDIA's
// driver does (models/dra/nvidia_driver) and adds its default DeviceClasses unless the manifests
// define classes of those names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/device.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

// The DRA kinds, for loader_registry().manifests or ManifestOptions::extra_kinds.
std::vector<ManifestKind> dra_manifest_kinds();

// A pool's or node's `dra:` setting: `true`/`false`, or a mapping {enabled, partitionable,
// driver_version, cuda_driver_version, gpus_per_pcie_root, numa_nodes}.
DraNodeConfig read_dra_node_config(const YamlNode& n);

// Resolves DRA references and publishes devices (see above). Call after every source is read,
// after WorldBuilder::finalize(). Warnings (fields accepted but not modelled, stale pool
// generations) go to `warnings` when given.
void finalize_dra(WorldBuilder& b, std::vector<std::string>* warnings);

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
bool is_dns_label(std::string_view s);

}  // namespace capsim
