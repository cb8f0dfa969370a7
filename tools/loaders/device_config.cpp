#include "tools/loaders/device_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "models/mig_layout.hpp"

namespace capsim {

namespace {

[[noreturn]] void fail_at(const InputLocation& where, const std::string& msg) {
  throw InputError(InputErrorKind::kInvalid, where, msg);
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A ConfigMap's data values are YAML documents in strings; returns (key, document) pairs, or the
// document itself under "" when it is not a ConfigMap.
std::vector<std::pair<std::string, YamlNode>> unwrap_configmap(const YamlNode& doc) {
  bool is_cm = false;
  for (const auto& [k, v] : doc.entries()) {
    if (k == "kind" && v.is_scalar() && v.str() == "ConfigMap") is_cm = true;
  }
  if (!is_cm) return {{"", doc}};
  std::vector<std::pair<std::string, YamlNode>> out;
  MapReader m = doc.map();
  m.ignore("apiVersion");
  m.ignore("kind");
  m.ignore("metadata");
  m.ignore("binaryData");
  YamlNode data = m.req("data");
  m.finish();
  for (const auto& [key, value] : data.entries()) {
    // The value is YAML text; errors inside it point at the ConfigMap key.
    const std::string name = doc.file() + " (ConfigMap key " + key + ")";
    out.emplace_back(key, YamlNode::load_string(value.str(), name));
  }
  return out;
}

}  // namespace

std::optional<MigStrategy> parse_mig_strategy(const std::string& s) {
  if (s == "none") return MigStrategy::kNone;
  if (s == "single") return MigStrategy::kSingle;
  if (s == "mixed") return MigStrategy::kMixed;
  return std::nullopt;
}

bool DeviceConfigs::add_mig_parted_file(const std::vector<YamlNode>& docs,
                                        std::vector<std::string>* notes) {
  bool found = false;
  auto note = [&](const YamlNode& at, const std::string& message) {
    if (notes != nullptr) notes->push_back(at.where().to_string() + ": " + message);
  };
  for (const YamlNode& doc : docs) {
    if (!doc.is_map()) {
      add_mig_parted(doc);  // fails with the reader's message
      continue;
    }
    std::string kind;
    std::optional<YamlNode> kind_node;
    for (const auto& [k, v] : doc.entries()) {
      if (k == "kind" && v.is_scalar()) {
        kind = v.str();
        kind_node = v;
      }
    }
    if (kind.empty()) {  // a raw mig-parted config
      add_mig_parted(doc);
      found = true;
      continue;
    }
    if (kind != "ConfigMap") {
      // The GPU Operator's manifests keep the mig-manager's DaemonSet, ServiceAccount and RBAC
      // beside its ConfigMap; only the ConfigMap is a MIG configuration.
      note(*kind_node, fmt::format("{} is not a mig-parted configuration: skipped", kind));
      continue;
    }
    // A ConfigMap: the keys holding mig-parted YAML are read; others (hook scripts, another
    // tool's config) are noted and skipped.
    MapReader m = doc.map();
    m.ignore("apiVersion");
    m.ignore("kind");
    m.ignore("metadata");
    m.ignore("binaryData");
    const std::optional<YamlNode> data = m.opt("data");
    m.finish();
    if (!data) {
      note(*kind_node, "a ConfigMap without data: skipped");
      continue;
    }
    for (const auto& [key, value] : data->entries()) {
      if (value.is_scalar() && value.str().find("mig-configs") != std::string::npos) {
        const std::string name = doc.file() + " (ConfigMap key " + key + ")";
        add_mig_parted(YamlNode::load_string(value.str(), name));
        found = true;
      } else {
        note(value, fmt::format("ConfigMap key {} holds no mig-configs: skipped", key));
      }
    }
  }
  return found;
}

void DeviceConfigs::add_mig_parted(const YamlNode& doc) {
  for (const auto& [key, d] : unwrap_configmap(doc)) {
    MapReader m = d.map();
    const std::string version = m.str_or("version", "v1");
    if (version != "v1")
      m.req("version").fail(fmt::format("unsupported version '{}' (v1)", version));
    YamlNode configs = m.req("mig-configs");
    m.finish();
    for (const auto& [name, list] : configs.entries()) {
      std::vector<MigConfigEntry> entries;
      for (const YamlNode& e : list.seq()) {
        MapReader em = e.map();
        MigConfigEntry entry;
        entry.where = e.where();
        if (auto f = em.opt("device-filter")) {
          if (f->is_seq()) {
            for (const YamlNode& x : f->seq())
              entry.device_filter.push_back(x.str());
          } else {
            entry.device_filter.push_back(f->str());
          }
        }
        YamlNode devices = em.req("devices");
        if (devices.is_scalar()) {
          if (devices.str() != "all")
            devices.fail("devices must be 'all' or a list of GPU indices");
        } else {
          entry.all_devices = false;
          for (const YamlNode& i : devices.seq())
            entry.devices.push_back(static_cast<std::int32_t>(i.integer(0, 63)));
        }
        entry.mig_enabled = em.req("mig-enabled").boolean();
        if (auto md = em.opt("mig-devices")) {
          for (const auto& [prof, count] : md->entries()) {
            entry.mig_devices.emplace_back(prof, static_cast<std::int32_t>(count.integer(0, 7)));
          }
        }
        if (!entry.mig_enabled && !entry.mig_devices.empty()) {
          e.fail("mig-devices is set but mig-enabled is false");
        }
        em.finish();
        entries.push_back(std::move(entry));
      }
      mig_[name] = std::move(entries);
    }
  }
}

void DeviceConfigs::add_device_plugin_inline(const YamlNode& d, const std::string& name) {
  PluginConfig pc;
  pc.where = d.where();
  MapReader m = d.map();
  const std::string version = m.str_or("version", "v1");
  if (version != "v1") m.req("version").fail(fmt::format("unsupported version '{}' (v1)", version));
  if (auto flags = m.opt("flags")) {
    MapReader fm = flags->map();
    if (auto ms = fm.opt("migStrategy")) {
      auto s = parse_mig_strategy(ms->str());
      if (!s)
        ms->fail(fmt::format("migStrategy must be none, single or mixed, not '{}'", ms->str()));
      pc.mig_strategy = s;
    }
    for (const char* ignored : {"failOnInitError", "nvidiaDriverRoot", "gdsEnabled", "mofedEnabled",
                                "plugin", "gfd", "useNodeFeatureAPI", "deviceDiscoveryStrategy"}) {
      fm.ignore(ignored);
    }
    fm.finish();
  }
  m.ignore("resources");  // resource renaming patterns of newer plugin versions: not modelled
  if (auto sharing = m.opt("sharing")) {
    MapReader sm = sharing->map();
    auto ts = sm.opt("timeSlicing");
    auto mps = sm.opt("mps");
    sm.finish();
    if (ts && mps) sharing->fail("time-slicing and MPS cannot be combined");
    if (ts || mps) {
      const YamlNode& s = ts ? *ts : *mps;
      pc.sharing = ts ? ShareMode::kTimeSliced : ShareMode::kMps;
      MapReader x = s.map();
      pc.rename_by_default = x.bool_or("renameByDefault", false);
      pc.fail_requests_greater_than_one = x.bool_or("failRequestsGreaterThanOne", mps.has_value());
      for (const YamlNode& r : x.req("resources").seq()) {
        MapReader rm = r.map();
        SharedResource res;
        YamlNode rn = rm.req("name");
        res.name = rn.str();
        if (res.name != "nvidia.com/gpu" && res.name.rfind("nvidia.com/mig-", 0) != 0) {
          rn.fail(
              fmt::format("'{}' cannot be shared: only nvidia.com/gpu and MIG resources "
                          "(nvidia.com/mig-<profile>) can",
                          res.name));
        }
        if (mps && res.name != "nvidia.com/gpu") {
          rn.fail("MPS shares only nvidia.com/gpu on whole GPUs, not MIG devices");
        }
        YamlNode rep = rm.req("replicas");
        res.replicas = static_cast<std::int32_t>(rep.integer(2, 1000));
        if (mps && res.replicas > 48) rep.fail("MPS allows at most 48 clients per GPU");
        rm.ignore("rename");   // in the schema but ignored by the plugin, with a warning
        rm.ignore("devices");  // likewise
        rm.finish();
        pc.shared.push_back(res);
      }
      x.finish();
      if (pc.shared.empty()) s.fail("at least one resource must be listed");
    }
  }
  m.finish();
  plugin_[name] = std::move(pc);
}

void DeviceConfigs::add_device_plugin(const YamlNode& doc, const std::string& name) {
  for (const auto& [key, d] : unwrap_configmap(doc))
    add_device_plugin_inline(d, key.empty() ? name : key);
}

std::vector<std::string> DeviceConfigs::plugin_config_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : plugin_)
    out.push_back(k);
  return out;
}

DeviceConfig DeviceConfigs::resolve(const GpuModel& model, const GpuModelInfo& info,
                                    std::int32_t gpus, const std::string& mig_config,
                                    std::optional<MigStrategy> strategy,
                                    const std::string& plugin_config, const InputLocation& where,
                                    std::vector<std::string>* notes) const {
  DeviceConfig dc;
  const PluginConfig* pc = nullptr;
  if (!plugin_config.empty()) {
    auto it = plugin_.find(plugin_config);
    if (it == plugin_.end()) {
      fail_at(where, fmt::format("unknown device-plugin config '{}'{}", plugin_config,
                                 did_you_mean(plugin_config, plugin_config_names())));
    }
    pc = &it->second;
    dc.plugin_config = plugin_config;
    dc.sharing = pc->sharing;
    dc.shared = pc->shared;
    dc.rename_by_default = pc->rename_by_default;
    dc.fail_requests_greater_than_one = pc->fail_requests_greater_than_one;
  }
  if (strategy) {
    dc.mig_strategy = *strategy;
  } else if (pc && pc->mig_strategy) {
    dc.mig_strategy = *pc->mig_strategy;
  } else {
    dc.mig_strategy = mig_config.empty() ? MigStrategy::kNone : MigStrategy::kMixed;
  }
  dc.layouts.assign(static_cast<std::size_t>(gpus), GpuLayout{});
  if (mig_config.empty() || mig_config == "all-disabled") {
    if (!mig_config.empty()) dc.mig_config = mig_config;
    return dc;
  }
  if (!model.mig_capable()) fail_at(where, fmt::format("{} does not support MIG", model.name));
  dc.mig_config = mig_config;
  // The entries that apply: a user config of that name, else the catalog's preset.
  std::vector<MigConfigEntry> entries;
  if (auto it = mig_.find(mig_config); it != mig_.end()) {
    entries = it->second;
  } else {
    const MigLayoutPreset* preset = nullptr;
    std::vector<std::string> names;
    for (const auto& p : model.mig_presets) {
      names.push_back(p.name);
      if (p.name == mig_config) preset = &p;
    }
    for (const auto& [k, v] : mig_)
      names.push_back(k);
    if (preset == nullptr) {
      fail_at(where, fmt::format("unknown MIG config '{}' for {}{}", mig_config, model.name,
                                 did_you_mean(mig_config, names)));
    }
    MigConfigEntry e;
    e.mig_enabled = preset->mig_enabled;
    e.mig_devices = preset->devices;
    e.where = where;
    entries.push_back(std::move(e));
  }
  std::vector<bool> covered(static_cast<std::size_t>(gpus), false);
  for (const MigConfigEntry& e : entries) {
    if (!e.device_filter.empty()) {
      bool match = false;
      for (const auto& f : e.device_filter) {
        // mig-parted filters are the PCI device id followed by the vendor (10DE).
        for (const auto& id : model.pci_device_ids) {
          if (lower(f) == lower(id + "10DE") || lower(f) == lower(id)) match = true;
        }
      }
      if (!match) continue;
    }
    ProfileMultiset wanted;
    for (const auto& [name, count] : e.mig_devices) {
      const MigProfile* p = model.find_profile(name);
      if (p == nullptr) {
        std::vector<std::string> names;
        for (const auto& q : model.mig_profiles)
          names.push_back(q.name);
        fail_at(e.where, fmt::format("MIG config '{}': {} has no MIG profile '{}'{}", mig_config,
                                     model.name, name, did_you_mean(name, names)));
      }
      const auto idx = static_cast<std::uint16_t>(p - model.mig_profiles.data());
      for (std::int32_t k = 0; k < count; ++k)
        wanted.push_back(idx);
    }
    GpuLayout layout;
    if (e.mig_enabled) {
      auto placed = place_profiles(info, wanted);
      if (!placed)
        fail_at(e.where,
                fmt::format("MIG config '{}' is impossible: {}", mig_config, placed.error()));
      layout = *placed;
    }
    for (std::int32_t g = 0; g < gpus; ++g) {
      const bool applies =
          e.all_devices || std::find(e.devices.begin(), e.devices.end(), g) != e.devices.end();
      if (!applies || covered[static_cast<std::size_t>(g)]) continue;
      dc.layouts[static_cast<std::size_t>(g)] = layout;
      covered[static_cast<std::size_t>(g)] = true;
    }
    for (std::int32_t idx : e.devices) {
      if (idx >= gpus)
        fail_at(e.where, fmt::format("MIG config '{}' names GPU {} but the node has {}", mig_config,
                                     idx, gpus));
    }
  }
  // mig-parted leaves a GPU that no entry of the config selects as it is; capsim leaves it
  // without MIG, and says so (a device-filter for another model is the usual cause).
  if (notes != nullptr && mig_.count(mig_config) != 0) {
    std::vector<std::string> missed;
    for (std::int32_t g = 0; g < gpus; ++g) {
      if (!covered[static_cast<std::size_t>(g)]) missed.push_back(std::to_string(g));
    }
    if (!missed.empty()) {
      notes->push_back(fmt::format(
          "{}: no entry of MIG config '{}' matches GPU {} of this {} node (device-filter or "
          "devices select other GPUs): mig-parted skips such a GPU, and capsim leaves it "
          "without MIG",
          where.to_string(), mig_config, fmt::join(missed, ", "), model.name));
    }
  }
  // The single strategy needs every GPU MIG-enabled with one and the same profile.
  if (dc.mig_strategy == MigStrategy::kSingle) {
    std::optional<std::uint16_t> only;
    for (const GpuLayout& l : dc.layouts) {
      if (!l.mig_enabled)
        fail_at(where, "the single MIG strategy needs MIG enabled on every GPU of the node");
      for (const MigInstance& i : l.instances) {
        if (only && *only != i.profile) {
          fail_at(where,
                  "the single MIG strategy allows one MIG device type per node (this layout mixes "
                  "several); use mixed");
        }
        only = i.profile;
      }
    }
  }
  if (dc.sharing == ShareMode::kMps) {
    for (const GpuLayout& l : dc.layouts) {
      if (l.mig_enabled) fail_at(where, "MPS sharing is not supported on MIG-enabled GPUs");
    }
  }
  for (const SharedResource& r : dc.shared) {
    if (r.name != "nvidia.com/gpu" && dc.mig_strategy != MigStrategy::kMixed) {
      fail_at(pc->where,
              fmt::format("{} can only be time-sliced under the mixed MIG strategy", r.name));
    }
  }
  return dc;
}

}  // namespace capsim
