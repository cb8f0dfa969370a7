// The GPU catalog: every GPU model capsim knows, with the facts the models need (memory, SMs,
// power, price, relative speed) and, for MIG-capable parts, the MIG geometry: memory and compute
// slots and every GPU-instance profile with its memory, SMs and allowed start slots. The built-in
// catalog is models/catalog/gpus.yaml, compiled into the binary; a scenario can override prices
// or add models. Loading validates everything (a profile whose placements leave the slot range,
// a duplicate name, a negative price) and reports file, line and field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/result.hpp"
#include "sim/world.hpp"

namespace YAML {
class Node;
}

namespace capsim {

class YamlNode;

struct MigProfile {
  std::string name;                  // "1g.10gb", "1g.10gb+me"
  std::vector<std::string> aliases;  // other driver versions' names, e.g. "3g.39gb"
  std::int32_t profile_id = -1;      // NVML GPU-instance profile ID (19, 20, 15, 14, 9, 5, 0)
  std::int32_t compute_slices = 0;   // the "Ng" in the name
  std::int32_t memory_slices = 0;    // placement size in memory slots
  std::int64_t memory_mib = 0;       // as nvidia-smi mig -lgip reports
  std::int32_t sms = 0;              // multiprocessors in the instance
  std::vector<std::int32_t> start_slots;
  std::int32_t max_instances = 0;  // per GPU
  bool media_extensions = false;   // "+me": at most one per GPU
  std::string confidence;          // [V], [S], [U], [D] from the fact sheet
};

// A named MIG layout (mig-parted config entry) such as all-balanced: profile name -> count.
// Profile names are canonical (aliases are resolved when the catalog is loaded).
struct MigLayoutPreset {
  std::string name;
  std::vector<std::pair<std::string, std::int32_t>> devices;
  bool mig_enabled = true;  // false only for "all-disabled": the GPU is used whole
  bool generated = false;   // made by the loader (all-<profile>, all-enabled, all-disabled)
};

struct GpuModel {
  std::string name;                  // canonical: "A100-80GB", "B200"
  std::vector<std::string> aliases;  // accepted spellings, incl. nvidia.com/gpu.product values
  std::string architecture;          // "Ampere", "Hopper", "Blackwell"
  std::string compute_capability;    // "8.0"
  std::vector<std::string> pci_device_ids;  // "0x20B2"
  std::int64_t memory_mib = 0;              // framebuffer usable by applications
  std::int32_t sms = 0;
  double tdp_w = 0;
  double idle_w = 0;
  double price_per_hour = 0;  // USD per GPU-hour, default (volatile: override it)
  double fp16_dense_tflops = 0;
  double memory_bandwidth_gbs = 0;
  // Throughput relative to the reference GPU (A100-80GB = 1.0) used to scale job durations
  // given for the reference device.
  double relative_speed = 1.0;
  bool trace_model = false;  // a model that exists only in a trace (Alibaba "G2")
  // Rack-scale NVLink (GB200/GB300 NVL72): GPUs per Kubernetes node and nodes per NVLink domain
  // (hardware facts 10.2). 0: the NVLink domain is the node itself.
  std::int32_t node_gpus = 0;
  std::int32_t nvlink_domain_nodes = 0;
  // MIG geometry; empty profiles: MIG not supported.
  std::int32_t mig_memory_slots = 0;   // 8 on the 7-GI parts
  std::int32_t mig_compute_slots = 0;  // 7 on the 7-GI parts
  std::int32_t mig_max_instances = 0;
  std::vector<MigProfile> mig_profiles;
  std::vector<MigLayoutPreset> mig_presets;  // all-balanced and friends
  // Confidence tag per value group ("identity", "memory", "sms", "power", "price",
  // "performance"): "[V]", "[S]", "[U]" or "[D]", optionally followed by a short note.
  std::map<std::string, std::string> confidence;
  std::string notes;   // free text shown by `capsim catalog MODEL`
  std::string source;  // "file:line" of the definition

  bool mig_capable() const { return !mig_profiles.empty(); }
  const MigProfile* find_profile(std::string_view name_or_alias) const;
};

class GpuCatalog {
 public:
  // The catalog compiled into capsim (models/catalog/gpus.yaml). Loading it cannot fail at run
  // time because the build's tests validate it; a failure is reported as an InvariantError.
  static const GpuCatalog& builtin();

  // Parses a catalog document ("models:" list) and appends or overrides models. Models with a
  // name already present replace its fields that the document sets (so a scenario can change a
  // price without restating the MIG table). Throws InputError with file:line:field on bad data.
  // Matching of names, aliases and MIG profile names is case-insensitive. An entry with a new
  // name and `base: MODEL` starts as a copy of MODEL without its aliases and PCI IDs. After each
  // entry the loader regenerates the model's all-<profile>, all-enabled and all-disabled presets
  // (explicit presets of the same name win). On error the catalog is left unchanged.
  void merge_yaml(const YamlNode& doc);

  const GpuModel* find(std::string_view name_or_alias) const;
  std::optional<std::size_t> index_of(std::string_view name_or_alias) const;
  const std::vector<GpuModel>& models() const { return models_; }
  const GpuModel& at(std::size_t i) const { return models_.at(i); }
  // Closest known names, for "unknown GPU model 'A100' (did you mean A100-80GB, A100-40GB?)".
  std::vector<std::string> suggestions(std::string_view name) const;

 private:
  void rebuild_index();

  std::vector<GpuModel> models_;
  std::map<std::string, std::size_t> index_;  // lower-cased name or alias -> position
};

// The slice of a catalog model the simulation core uses (sim/world.hpp), including its MIG
// geometry and the GPU Feature Discovery product label.
GpuModelInfo to_model_info(const GpuModel& model);

}  // namespace capsim
