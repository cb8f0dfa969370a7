// How nodes' GPUs are configured, read from the files NVIDIA's tools use:
//   - mig-parted configs (`version: v1`, `mig-configs: {name: [{device-filter, devices,
//     mig-enabled, mig-devices}]}`), raw or inside the GPU Operator's ConfigMap; the catalog's
//     presets (all-balanced, all-1g.10gb, ..., all-disabled) are always available by name;
//   - k8s-device-plugin configs (`version: v1`, `flags.migStrategy`, `sharing.timeSlicing` /
//     `sharing.mps` with `resources[].{name, replicas}`, renameByDefault,
//     failRequestsGreaterThanOne), raw or as ConfigMap keys (the `nvidia.com/device-plugin.config`
//     node label picks a key).
// resolve_device_config turns a node's choices into a DeviceConfig with one placed GpuLayout per
// GPU; a layout that cannot be placed is an error with the reason.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/yaml_reader.hpp"
#include "sim/device.hpp"

namespace capsim {

struct MigConfigEntry {
  std::vector<std::string> device_filter;  // PCI ids like "0x233010DE"; empty: any
  bool all_devices = true;
  std::vector<std::int32_t> devices;  // GPU indices when not all
  bool mig_enabled = false;
  std::vector<std::pair<std::string, std::int32_t>> mig_devices;  // profile -> count
  InputLocation where;
};

struct PluginConfig {
  std::optional<MigStrategy> mig_strategy;  // flags.migStrategy
  ShareMode sharing = ShareMode::kExclusive;
  std::vector<SharedResource> shared;
  bool rename_by_default = false;
  bool fail_requests_greater_than_one = false;
  InputLocation where;
};

class DeviceConfigs {
 public:
  // A mig-parted document (raw or a ConfigMap whose data values are mig-parted YAML).
  void add_mig_parted(const YamlNode& doc);
  // Every document of a mig-parted file as users apply it: raw configs and the ConfigMap keys
  // that hold `mig-configs` are read; other documents (the mig-manager's DaemonSet, its RBAC)
  // and other ConfigMap keys are skipped with a note in `notes` (if set). Returns whether any
  // configuration was found.
  bool add_mig_parted_file(const std::vector<YamlNode>& docs, std::vector<std::string>* notes);
  // A device-plugin document: raw (registered under `name`) or a ConfigMap (one config per key).
  void add_device_plugin(const YamlNode& doc, const std::string& name);
  void add_device_plugin_inline(const YamlNode& config, const std::string& name);

  bool has_mig_config(const std::string& name) const { return mig_.count(name) != 0; }
  bool has_plugin_config(const std::string& name) const { return plugin_.count(name) != 0; }
  std::vector<std::string> plugin_config_names() const;

  // The DeviceConfig for a node of `gpus` GPUs of `model`: the MIG config `mig_config` (may be
  // empty: none) under `strategy` (nullopt: the plugin config's flags.migStrategy, else mixed
  // when a MIG config is named), and the device-plugin config `plugin_config` (may be empty).
  // Errors point at `where` (the node or pool) or at the config entry at fault; a GPU that no
  // entry of a mig-parted config selects gets a note in `notes` (if set).
  DeviceConfig resolve(const GpuModel& model, const GpuModelInfo& info, std::int32_t gpus,
                       const std::string& mig_config, std::optional<MigStrategy> strategy,
                       const std::string& plugin_config, const InputLocation& where,
                       std::vector<std::string>* notes = nullptr) const;

 private:
  std::map<std::string, std::vector<MigConfigEntry>> mig_;
  std::map<std::string, PluginConfig> plugin_;
};

std::optional<MigStrategy> parse_mig_strategy(const std::string& s);

}  // namespace capsim
