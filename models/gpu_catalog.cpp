#include "models/gpu_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <set>

#include "models/yaml_reader.hpp"
#include "sim/check.hpp"
#include "sim/cluster.hpp"
#include "sim/input_error.hpp"

// Generated from models/catalog/gpus.yaml by cmake/EmbedFile.cmake.
extern const char capsim_builtin_catalog[];
extern const std::size_t capsim_builtin_catalog_size;

namespace capsim {

namespace {

constexpr const char* kBuiltinName = "models/catalog/gpus.yaml";

const std::vector<std::string>& confidence_groups() {
  static const std::vector<std::string> groups = {"identity", "memory", "sms",
                                                  "power",    "price",  "performance"};
  return groups;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

bool has_space(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

bool valid_tag(std::string_view s) {
  for (const char* tag : {"[V]", "[S]", "[U]", "[D]"}) {
    if (s.substr(0, 3) == tag) return true;
  }
  return false;
}

std::string join_ints(const std::vector<std::int32_t>& v) {
  return fmt::format("{{{}}}", fmt::join(v, ","));
}

// Levenshtein distance, case-insensitive; for ranking model suggestions.
std::size_t distance(std::string_view a, std::string_view b) {
  const std::string x = lower(a), y = lower(b);
  std::vector<std::size_t> prev(y.size() + 1), cur(y.size() + 1);
  for (std::size_t j = 0; j <= y.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= x.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= y.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[y.size()];
}

// Where each field of one catalog entry was written, so that a check on the merged model points
// at the line that caused it. Keys are '/'-separated paths ("tdp_w", "aliases/2",
// "mig/profiles/3g.40gb/sms"; '/' because profile names contain dots). A field this entry did not
// set falls back to its closest parent that it did set, and finally to the entry itself.
class Locator {
 public:
  explicit Locator(YamlNode entry) : entry_(std::move(entry)) {}

  void set(const std::string& key, const YamlNode& node) { nodes_.insert_or_assign(key, node); }
  bool has(const std::string& key) const { return nodes_.count(key) != 0; }

  const YamlNode& at(std::string key) const {
    for (;;) {
      auto it = nodes_.find(key);
      if (it != nodes_.end()) return it->second;
      const auto slash = key.rfind('/');
      if (slash == std::string::npos) return entry_;
      key.resize(slash);
    }
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    at(key).fail(message);
  }

 private:
  YamlNode entry_;
  std::map<std::string, YamlNode> nodes_;
};

std::string profile_key(const std::string& profile, const std::string& field) {
  return "mig/profiles/" + profile + (field.empty() ? "" : "/" + field);
}

std::int32_t to_i32(std::int64_t v) {
  return static_cast<std::int32_t>(v);
}

// ---------------------------------------------------------------------------------------------
// Reading one entry.

void read_confidence(const YamlNode& node, std::map<std::string, std::string>& out, Locator& loc) {
  for (const auto& [group, value] : node.entries()) {
    const auto& groups = confidence_groups();
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
      value.fail(fmt::format("unknown confidence group '{}'{}; the groups are {}", group,
                             did_you_mean(group, groups), fmt::join(groups, ", ")));
    }
    const std::string tag = value.str();
    if (!valid_tag(tag)) {
      value.fail(
          fmt::format("'{}' does not start with a confidence tag [V], [S], [U] or [D]", tag));
    }
    out.insert_or_assign(group, tag);
    loc.set("confidence/" + group, value);
  }
}

std::vector<std::string> read_names(const YamlNode& node, const std::string& key, Locator& loc) {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (const YamlNode& item : node.seq()) {
    std::string s = item.str();
    if (s.empty() || has_space(s))
      item.fail(fmt::format("'{}' is not a valid name (empty or has spaces)", s));
    loc.set(fmt::format("{}/{}", key, i++), item);
    out.push_back(std::move(s));
  }
  return out;
}

// Reads one mig.profiles[] entry into `profiles`, overriding the profile it names (by name or
// alias) or adding a new one.
void read_profile(const YamlNode& node, std::vector<MigProfile>& profiles, Locator& loc) {
  MapReader m = node.map();
  const YamlNode name_node = m.req("name");
  const std::string name = name_node.str();
  if (name.empty() || has_space(name))
    name_node.fail(fmt::format("'{}' is not a valid profile name", name));

  MigProfile* p = nullptr;
  for (auto& existing : profiles) {
    if (iequals(existing.name, name)) p = &existing;
    for (const auto& a : existing.aliases) {
      if (iequals(a, name)) p = &existing;
    }
  }
  const bool is_new = p == nullptr;
  if (is_new) {
    profiles.push_back(MigProfile{});
    p = &profiles.back();
    p->name = name;
  }
  const std::string key = profile_key(p->name, "");
  loc.set(key, node);
  auto field = [&](const std::string& f) {
    auto v = m.opt(f);
    if (v) loc.set(profile_key(p->name, f), *v);
    return v;
  };

  if (auto v = field("aliases")) p->aliases = read_names(*v, profile_key(p->name, "aliases"), loc);
  if (auto v = field("profile_id")) p->profile_id = to_i32(v->integer(0, 1'000'000));
  if (auto v = field("compute_slices")) p->compute_slices = to_i32(v->integer(1, 64));
  if (auto v = field("memory_slices")) p->memory_slices = to_i32(v->integer(1, 64));
  if (auto v = field("memory_mib")) p->memory_mib = v->integer(1);
  if (auto v = field("sms")) p->sms = to_i32(v->integer(1, 1'000'000));
  if (auto v = field("start_slots")) {
    p->start_slots.clear();
    for (const YamlNode& s : v->seq())
      p->start_slots.push_back(to_i32(s.integer(0, 64)));
    if (p->start_slots.empty()) v->fail("a profile needs at least one start slot");
    for (std::size_t i = 1; i < p->start_slots.size(); ++i) {
      if (p->start_slots[i] <= p->start_slots[i - 1]) {
        v->fail(fmt::format("start slots must be listed in increasing order without repeats: {}",
                            join_ints(p->start_slots)));
      }
    }
  }
  if (auto v = field("max_instances")) p->max_instances = to_i32(v->integer(1, 64));
  if (auto v = field("media_extensions")) p->media_extensions = v->boolean();
  if (auto v = field("confidence")) {
    p->confidence = v->str();
    if (!valid_tag(p->confidence)) {
      v->fail(fmt::format("'{}' does not start with a confidence tag [V], [S], [U] or [D]",
                          p->confidence));
    }
  }
  m.finish();

  if (is_new) {
    for (const char* required :
         {"compute_slices", "memory_slices", "memory_mib", "sms", "start_slots", "max_instances"}) {
      if (!m.has(required)) {
        node.fail(fmt::format("missing required field '{}' for the new MIG profile '{}'", required,
                              name));
      }
    }
  }
}

// Reads the preset map: name -> {profile: count} or the word `disabled`.
void read_presets(const YamlNode& node, GpuModel& g, Locator& loc) {
  for (const auto& [name, value] : node.entries()) {
    if (name.empty() || has_space(name))
      value.fail(fmt::format("'{}' is not a valid preset name", name));
    MigLayoutPreset preset;
    preset.name = name;
    const std::string key = "mig/presets/" + name;
    loc.set(key, value);
    if (value.is_scalar() && !value.is_null()) {
      if (value.str() != "disabled") {
        value.fail(fmt::format(
            "a preset is a mapping of profile to count, or 'disabled'; found '{}'", value.str()));
      }
      preset.mig_enabled = false;
    } else {
      for (const auto& [profile, count] : value.entries()) {
        preset.devices.emplace_back(profile, to_i32(count.integer(1, 64)));
        loc.set(key + "/" + profile, count);
      }
    }
    // The lambda captures preset.name, not the structured binding `name`: capturing a binding is
    // C++20, and clang++ 14 (Debian 12) does not implement it yet.
    auto it = std::find_if(g.mig_presets.begin(), g.mig_presets.end(),
                           [&preset](const MigLayoutPreset& p) { return p.name == preset.name; });
    if (it != g.mig_presets.end()) {
      *it = std::move(preset);
    } else {
      g.mig_presets.push_back(std::move(preset));
    }
  }
}

void read_mig(const YamlNode& node, GpuModel& g, Locator& loc) {
  MapReader m = node.map();
  loc.set("mig", node);
  auto field = [&](const std::string& f) {
    auto v = m.opt(f);
    if (v) loc.set("mig/" + f, *v);
    return v;
  };
  if (auto v = field("memory_slots")) g.mig_memory_slots = to_i32(v->integer(1, 32));
  if (auto v = field("compute_slots")) g.mig_compute_slots = to_i32(v->integer(1, 32));
  if (auto v = field("max_instances")) g.mig_max_instances = to_i32(v->integer(1, 32));
  if (auto v = field("profiles")) {
    for (const YamlNode& p : v->seq())
      read_profile(p, g.mig_profiles, loc);
  }
  auto presets = field("presets");
  m.finish();
  // Presets after profiles, so that they can name profiles this same entry adds.
  if (presets) read_presets(*presets, g, loc);
}

// ---------------------------------------------------------------------------------------------
// Validation.

// Whether `instances` (one entry per GPU instance) can be placed on disjoint memory ranges.
// Backtracking over start slots; identical profiles take increasing starts to avoid re-trying
// permutations. A layout has at most a few dozen instances on any real part.
bool placeable(std::vector<const MigProfile*> instances, std::int32_t memory_slots) {
  std::stable_sort(instances.begin(), instances.end(),
                   [](const MigProfile* a, const MigProfile* b) {
                     if (a->memory_slices != b->memory_slices)
                       return a->memory_slices > b->memory_slices;
                     return a->start_slots.size() < b->start_slots.size();
                   });
  std::vector<bool> used(static_cast<std::size_t>(memory_slots), false);
  std::function<bool(std::size_t, std::int32_t)> place = [&](std::size_t i,
                                                             std::int32_t min_start) -> bool {
    if (i == instances.size()) return true;
    const MigProfile& p = *instances[i];
    for (const std::int32_t s : p.start_slots) {
      if (s < min_start) continue;
      bool free = true;
      for (std::int32_t k = s; k < s + p.memory_slices; ++k)
        free = free && !used[static_cast<std::size_t>(k)];
      if (!free) continue;
      for (std::int32_t k = s; k < s + p.memory_slices; ++k)
        used[static_cast<std::size_t>(k)] = true;
      const bool same_next = i + 1 < instances.size() && instances[i + 1] == instances[i];
      if (place(i + 1, same_next ? s + 1 : 0)) return true;
      for (std::int32_t k = s; k < s + p.memory_slices; ++k)
        used[static_cast<std::size_t>(k)] = false;
    }
    return false;
  };
  return place(0, 0);
}

// The largest number of instances of `p` with pairwise disjoint memory ranges (greedy by start,
// which is optimal for equal-length intervals).
std::int32_t disjoint_placements(const MigProfile& p) {
  std::int32_t n = 0;
  std::int32_t free_from = 0;
  for (const std::int32_t s : p.start_slots) {
    if (s >= free_from) {
      ++n;
      free_from = s + p.memory_slices;
    }
  }
  return n;
}

std::vector<std::string> profile_names(const GpuModel& g) {
  std::vector<std::string> names;
  for (const auto& p : g.mig_profiles)
    names.push_back(p.name);
  return names;
}

void validate_profile(const GpuModel& g, const MigProfile& p, const Locator& loc) {
  auto key = [&](const std::string& f) { return profile_key(p.name, f); };
  const std::int32_t mem_slots = g.mig_memory_slots;
  const std::int32_t cmp_slots = g.mig_compute_slots;

  if (p.compute_slices > cmp_slots) {
    loc.fail(key("compute_slices"),
             fmt::format("profile {} has {} compute slices but the GPU has only {} compute slots",
                         p.name, p.compute_slices, cmp_slots));
  }
  if (p.memory_slices > mem_slots) {
    loc.fail(key("memory_slices"),
             fmt::format("profile {} has {} memory slices but the GPU has only {} memory slots",
                         p.name, p.memory_slices, mem_slots));
  }
  if (p.memory_mib > g.memory_mib) {
    loc.fail(key("memory_mib"),
             fmt::format("profile {} has {} MiB, more than the whole GPU's memory_mib {}", p.name,
                         p.memory_mib, g.memory_mib));
  }
  if (p.sms > g.sms) {
    loc.fail(key("sms"), fmt::format("profile {} has {} SMs, more than the whole GPU's {}", p.name,
                                     p.sms, g.sms));
  }
  const std::int32_t last_start = mem_slots - p.memory_slices;
  for (const std::int32_t s : p.start_slots) {
    if (s > last_start) {
      loc.fail(key("start_slots"),
               fmt::format("start slot {} is out of range for profile {}: a placement of {} memory "
                           "slices must start in [0, {}] ({} memory slots - {})",
                           s, p.name, p.memory_slices, last_start, mem_slots, p.memory_slices));
    }
    // Compute slot i sits in memory slot i (fact sheet 1.1), so a placement [s, s+m) can use
    // the compute slots min(s+m, compute_slots) - s.
    const std::int32_t available = std::max(0, std::min(s + p.memory_slices, cmp_slots) - s);
    if (available < p.compute_slices) {
      loc.fail(key("start_slots"),
               fmt::format("start slot {} gives profile {} the memory slots [{}, {}), which hold "
                           "{} compute slot(s); it needs {}",
                           s, p.name, s, s + p.memory_slices, available, p.compute_slices));
    }
  }
  if (p.max_instances > g.mig_max_instances) {
    loc.fail(key("max_instances"),
             fmt::format(
                 "profile {} allows {} instances but the GPU allows at most {} (mig.max_instances)",
                 p.name, p.max_instances, g.mig_max_instances));
  }
  const std::int32_t disjoint = disjoint_placements(p);
  if (p.max_instances > disjoint) {
    loc.fail(
        key("max_instances"),
        fmt::format("profile {} allows {} instances but its start slots {} with {} memory "
                    "slices each fit at most {} side by side",
                    p.name, p.max_instances, join_ints(p.start_slots), p.memory_slices, disjoint));
  }
  if (p.max_instances * p.compute_slices > cmp_slots) {
    loc.fail(key("max_instances"),
             fmt::format("profile {} allows {} instances of {} compute slices = {}, more than the "
                         "{} compute slots",
                         p.name, p.max_instances, p.compute_slices,
                         p.max_instances * p.compute_slices, cmp_slots));
  }
  if (p.media_extensions && p.max_instances != 1) {
    loc.fail(key("max_instances"),
             fmt::format("profile {} has media extensions, which exist once per GPU: max_instances "
                         "must be 1, not {}",
                         p.name, p.max_instances));
  }
}

void validate_preset(const GpuModel& g, MigLayoutPreset& preset, const Locator& loc) {
  const std::string key = "mig/presets/" + preset.name;
  if (!preset.mig_enabled) return;
  std::vector<const MigProfile*> instances;
  std::int32_t compute = 0, memory = 0, count = 0;
  std::set<std::string> seen;
  for (auto& [name, n] : preset.devices) {
    const MigProfile* p = g.find_profile(name);
    if (p == nullptr) {
      loc.fail(key + "/" + name,
               fmt::format("preset {} uses MIG profile '{}', which {} does not have{}", preset.name,
                           name, g.name, did_you_mean(name, profile_names(g))));
    }
    const std::string where =
        preset.generated ? profile_key(p->name, "max_instances") : key + "/" + name;
    if (!seen.insert(p->name).second) {
      loc.fail(where, fmt::format("preset {} lists profile {} twice (by name and alias?)",
                                  preset.name, p->name));
    }
    name = p->name;  // canonical from here on
    if (n > p->max_instances) {
      loc.fail(where, fmt::format("preset {} asks for {} x {}, but at most {} fit on one GPU",
                                  preset.name, n, p->name, p->max_instances));
    }
    compute += n * p->compute_slices;
    memory += n * p->memory_slices;
    count += n;
    for (std::int32_t i = 0; i < n; ++i)
      instances.push_back(p);
  }
  const std::string where = preset.generated && !preset.devices.empty()
                                ? profile_key(preset.devices.front().first, "max_instances")
                                : key;
  if (count > g.mig_max_instances) {
    loc.fail(where, fmt::format("preset {} has {} instances; the GPU allows at most {}",
                                preset.name, count, g.mig_max_instances));
  }
  if (compute > g.mig_compute_slots) {
    loc.fail(where, fmt::format("preset {} needs {} compute slices; the GPU has {}", preset.name,
                                compute, g.mig_compute_slots));
  }
  if (memory > g.mig_memory_slots) {
    loc.fail(where, fmt::format("preset {} needs {} memory slices; the GPU has {}", preset.name,
                                memory, g.mig_memory_slots));
  }
  if (!placeable(instances, g.mig_memory_slots)) {
    loc.fail(where, fmt::format("preset {} cannot be placed: no choice of allowed start slots "
                                "keeps its instances' memory ranges apart",
                                preset.name));
  }
}

// Replaces the generated presets with fresh ones; explicit presets of the same name win.
void generate_presets(GpuModel& g) {
  std::erase_if(g.mig_presets, [](const MigLayoutPreset& p) { return p.generated; });
  if (!g.mig_capable()) return;
  auto add = [&](MigLayoutPreset p) {
    const bool taken = std::any_of(g.mig_presets.begin(), g.mig_presets.end(),
                                   [&](const MigLayoutPreset& q) { return q.name == p.name; });
    if (taken) return;
    p.generated = true;
    g.mig_presets.push_back(std::move(p));
  };
  for (const auto& p : g.mig_profiles) {
    if (p.media_extensions) {
      std::string base = p.name;
      if (base.size() > 3 && base.ends_with("+me")) base.resize(base.size() - 3);
      add(MigLayoutPreset{"all-" + base + ".me", {{p.name, 1}}, true, false});
    } else {
      add(MigLayoutPreset{"all-" + p.name, {{p.name, p.max_instances}}, true, false});
    }
  }
  add(MigLayoutPreset{"all-enabled", {}, true, false});
  add(MigLayoutPreset{"all-disabled", {}, false, false});
}

void validate_model(GpuModel& g, const Locator& loc) {
  if (g.tdp_w <= 0) loc.fail("tdp_w", fmt::format("tdp_w must be positive, not {}", g.tdp_w));
  if (g.idle_w > g.tdp_w) {
    loc.fail(
        loc.has("idle_w") || !loc.has("tdp_w") ? "idle_w" : "tdp_w",
        fmt::format("idle_w {} W is above tdp_w {} W: idle power cannot exceed the power limit",
                    g.idle_w, g.tdp_w));
  }
  if ((g.node_gpus > 0) != (g.nvlink_domain_nodes > 0)) {
    loc.fail(g.node_gpus > 0 ? "node_gpus" : "nvlink_domain_nodes",
             "a rack-scale NVLink model gives both node_gpus and nvlink_domain_nodes");
  }
  if (g.relative_speed <= 0) {
    loc.fail("relative_speed",
             fmt::format("relative_speed must be positive, not {}", g.relative_speed));
  }
  if (!g.compute_capability.empty()) {
    const auto dot = g.compute_capability.find('.');
    const bool ok = dot != std::string::npos && dot > 0 && dot + 1 < g.compute_capability.size() &&
                    std::all_of(g.compute_capability.begin(), g.compute_capability.end(),
                                [](char c) {
                                  return c == '.' || std::isdigit(static_cast<unsigned char>(c));
                                }) &&
                    g.compute_capability.find('.', dot + 1) == std::string::npos;
    if (!ok) {
      loc.fail("compute_capability", fmt::format("'{}' is not a compute capability such as \"9.0\"",
                                                 g.compute_capability));
    }
  }
  for (std::size_t i = 0; i < g.pci_device_ids.size(); ++i) {
    std::string& id = g.pci_device_ids[i];
    const bool ok = id.size() == 6 && (id.starts_with("0x") || id.starts_with("0X")) &&
                    std::all_of(id.begin() + 2, id.end(), [](char c) {
                      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                    });
    if (!ok) {
      loc.fail(fmt::format("pci_device_ids/{}", i),
               fmt::format("'{}' is not a PCI device ID such as \"0x2330\"", id));
    }
    // Canonical spelling "0x" + upper-case hex digits, as in NVIDIA's tables.
    for (std::size_t k = 2; k < id.size(); ++k) {
      id[k] = static_cast<char>(std::toupper(static_cast<unsigned char>(id[k])));
    }
    id[1] = 'x';
  }

  const bool any_geometry =
      g.mig_memory_slots > 0 || g.mig_compute_slots > 0 || g.mig_max_instances > 0;
  if (!g.mig_capable()) {
    if (any_geometry) {
      loc.fail("mig", fmt::format("{} has MIG geometry but no MIG profiles", g.name));
    }
    const bool explicit_presets =
        std::any_of(g.mig_presets.begin(), g.mig_presets.end(),
                    [](const MigLayoutPreset& p) { return !p.generated; });
    if (explicit_presets) {
      loc.fail("mig/presets", fmt::format("{} has MIG presets but no MIG profiles", g.name));
    }
    return;
  }
  const std::pair<const char*, std::int32_t> geometry[] = {{"memory_slots", g.mig_memory_slots},
                                                           {"compute_slots", g.mig_compute_slots},
                                                           {"max_instances", g.mig_max_instances}};
  for (const auto& [f, v] : geometry) {
    if (v <= 0) {
      loc.fail("mig", fmt::format("missing required field 'mig.{}' for a MIG-capable model", f));
    }
  }
  if (g.mig_compute_slots > g.mig_memory_slots) {
    loc.fail("mig/compute_slots",
             fmt::format("{} compute slots but {} memory slots: each compute slot sits in a memory "
                         "slot, so there cannot be more compute than memory slots",
                         g.mig_compute_slots, g.mig_memory_slots));
  }
  if (g.mig_max_instances > g.mig_compute_slots) {
    loc.fail("mig/max_instances",
             fmt::format("max_instances {} exceeds the {} compute slots (every instance needs one)",
                         g.mig_max_instances, g.mig_compute_slots));
  }

  // Profile names, aliases and IDs are unique within the model.
  std::map<std::string, std::string> names;  // lower-cased name or alias -> profile
  std::map<std::int32_t, std::string> ids;
  for (const auto& p : g.mig_profiles) {
    auto claim = [&](const std::string& n, const std::string& key) {
      auto [it, fresh] = names.emplace(lower(n), p.name);
      if (!fresh) {
        loc.fail(key, fmt::format("MIG profile name '{}' is used twice in {} (by {} and {})", n,
                                  g.name, it->second, p.name));
      }
    };
    claim(p.name, profile_key(p.name, ""));
    for (std::size_t i = 0; i < p.aliases.size(); ++i) {
      claim(p.aliases[i], profile_key(p.name, fmt::format("aliases/{}", i)));
    }
    if (p.profile_id >= 0) {
      auto [it, fresh] = ids.emplace(p.profile_id, p.name);
      if (!fresh) {
        loc.fail(profile_key(p.name, "profile_id"),
                 fmt::format("profile ID {} is used by both {} and {}", p.profile_id, it->second,
                             p.name));
      }
    }
    validate_profile(g, p, loc);
  }

  generate_presets(g);
  for (auto& preset : g.mig_presets)
    validate_preset(g, preset, loc);
}

// Names and aliases are unique across the catalog (case-insensitive).
void check_unique_names(const std::vector<GpuModel>& models, std::size_t self, const Locator& loc) {
  const GpuModel& g = models[self];
  std::map<std::string, std::string> mine;
  auto claim_own = [&](const std::string& n, const std::string& key) {
    auto [it, fresh] = mine.emplace(lower(n), key);
    if (!fresh) loc.fail(key, fmt::format("'{}' is listed twice for {}", n, g.name));
  };
  claim_own(g.name, "name");
  for (std::size_t i = 0; i < g.aliases.size(); ++i)
    claim_own(g.aliases[i], fmt::format("aliases/{}", i));

  for (std::size_t j = 0; j < models.size(); ++j) {
    if (j == self) continue;
    const GpuModel& other = models[j];
    std::vector<std::string> theirs = other.aliases;
    theirs.push_back(other.name);
    for (const auto& t : theirs) {
      auto it = mine.find(lower(t));
      if (it == mine.end()) continue;
      const std::string what = it->second == "name" ? "name" : "alias";
      loc.fail(it->second,
               fmt::format("{} '{}' is already used by model {} (defined at {}); names and aliases "
                           "must be unique across the catalog",
                           what, t, other.name, other.source));
    }
  }
}

std::string where_string(const YamlNode& n) {
  const InputLocation w = n.where();
  return w.line > 0 ? fmt::format("{}:{}", w.file, w.line) : w.file;
}

std::optional<std::size_t> find_index(const std::vector<GpuModel>& models, std::string_view name) {
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (iequals(models[i].name, name)) return i;
    for (const auto& a : models[i].aliases) {
      if (iequals(a, name)) return i;
    }
  }
  return std::nullopt;
}

// Applies one `models[]` entry to `models`.
void apply_entry(std::vector<GpuModel>& models, const YamlNode& entry,
                 const std::function<std::vector<std::string>(std::string_view)>& suggest) {
  MapReader m = entry.map();
  Locator loc(entry);
  const YamlNode name_node = m.req("name");
  loc.set("name", name_node);
  const std::string name = name_node.str();
  if (name.empty() || has_space(name))
    name_node.fail(fmt::format("'{}' is not a valid model name (empty or has spaces)", name));

  const std::optional<YamlNode> base_node = m.opt("base");
  const std::optional<std::size_t> existing = find_index(models, name);
  GpuModel g;
  bool is_new = true;
  if (existing && base_node) {
    name_node.fail(
        fmt::format("'{}' already names model {}; `base:` creates a new model, so give "
                    "it a name of its own (or drop `base:` to override {})",
                    name, models[*existing].name, models[*existing].name));
  } else if (existing) {
    g = models[*existing];
    is_new = false;
    g.source += "; overridden at " + where_string(entry);
  } else if (base_node) {
    const std::string base = base_node->str();
    const auto b = find_index(models, base);
    if (!b) {
      const auto s = suggest(base);
      base_node->fail(
          fmt::format("unknown base model '{}'{}", base,
                      s.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(s, ", "))));
    }
    g = models[*b];
    g.aliases.clear();
    g.pci_device_ids.clear();
    g.notes.clear();
    std::erase_if(g.mig_presets, [](const MigLayoutPreset& p) { return p.generated; });
    g.source = where_string(entry) + " (base " + models[*b].name + ")";
  } else {
    g.source = where_string(entry);
  }
  g.name = is_new ? name : g.name;

  auto field = [&](const std::string& f) {
    auto v = m.opt(f);
    if (v) loc.set(f, *v);
    return v;
  };
  if (auto v = field("aliases")) g.aliases = read_names(*v, "aliases", loc);
  if (auto v = field("architecture")) g.architecture = v->str();
  if (auto v = field("compute_capability")) g.compute_capability = v->str();
  if (auto v = field("pci_device_ids")) {
    g.pci_device_ids.clear();
    for (const YamlNode& id : v->seq()) {
      loc.set(fmt::format("pci_device_ids/{}", g.pci_device_ids.size()), id);
      g.pci_device_ids.push_back(id.str());
    }
  }
  if (auto v = field("memory_mib")) g.memory_mib = v->integer(1);
  if (auto v = field("sms")) g.sms = to_i32(v->integer(1, 1'000'000));
  if (auto v = field("tdp_w")) g.tdp_w = v->number(0);
  if (auto v = field("idle_w")) g.idle_w = v->number(0);
  if (auto v = field("price_per_hour")) g.price_per_hour = v->number(0);
  if (auto v = field("fp16_dense_tflops")) g.fp16_dense_tflops = v->number(0);
  if (auto v = field("memory_bandwidth_gbs")) g.memory_bandwidth_gbs = v->number(0);
  if (auto v = field("relative_speed")) g.relative_speed = v->number(0);
  if (auto v = field("trace_model")) g.trace_model = v->boolean();
  if (auto v = field("node_gpus")) g.node_gpus = to_i32(v->integer(1, 64));
  if (auto v = field("nvlink_domain_nodes")) g.nvlink_domain_nodes = to_i32(v->integer(1, 1024));
  if (auto v = field("confidence")) read_confidence(*v, g.confidence, loc);
  if (auto v = field("notes")) g.notes = v->str();
  if (auto v = field("mig")) read_mig(*v, g, loc);
  m.finish();

  if (is_new && !base_node) {
    for (const char* required :
         {"memory_mib", "sms", "tdp_w", "price_per_hour", "relative_speed"}) {
      if (!m.has(required)) {
        entry.fail(
            fmt::format("missing required field '{}' for the new model '{}' (a new model "
                        "needs memory_mib, sms, tdp_w, price_per_hour and relative_speed, "
                        "or `base: MODEL` to start from a copy of MODEL)",
                        required, name));
      }
    }
    // Without a measured idle power, assume 12.5 % of TDP (fact sheet 6.2: 10-15 % cold idle).
    if (!m.has("idle_w")) g.idle_w = 0.125 * g.tdp_w;
  }

  validate_model(g, loc);
  if (existing) {
    models[*existing] = std::move(g);
    check_unique_names(models, *existing, loc);
  } else {
    models.push_back(std::move(g));
    check_unique_names(models, models.size() - 1, loc);
  }
}

}  // namespace

const MigProfile* GpuModel::find_profile(std::string_view name_or_alias) const {
  for (const auto& p : mig_profiles) {
    if (iequals(p.name, name_or_alias)) return &p;
  }
  for (const auto& p : mig_profiles) {
    for (const auto& a : p.aliases) {
      if (iequals(a, name_or_alias)) return &p;
    }
  }
  return nullptr;
}

const GpuCatalog& GpuCatalog::builtin() {
  // A function-local static: initialized once, thread-safe since C++11.
  static const GpuCatalog catalog = [] {
    GpuCatalog c;
    try {
      c.merge_yaml(YamlNode::load_string(
          std::string(capsim_builtin_catalog, capsim_builtin_catalog_size), kBuiltinName));
    } catch (const InputError& e) {
      invariant_failed("GpuCatalog::builtin()",
                       std::string("the built-in GPU catalog does not load: ") + e.what(), __FILE__,
                       __LINE__);
    }
    return c;
  }();
  return catalog;
}

void GpuCatalog::merge_yaml(const YamlNode& doc) {
  std::vector<GpuModel> next = models_;  // work on a copy: an error leaves *this unchanged
  MapReader top = doc.map();
  const std::optional<YamlNode> list = top.opt("models");
  top.finish();  // before the missing-field check, so that "model:" gets a did-you-mean
  if (!list) doc.fail("missing required field 'models' (a list of GPU models)");
  auto suggest = [&next](std::string_view name) {
    GpuCatalog tmp;
    tmp.models_ = next;
    tmp.rebuild_index();
    return tmp.suggestions(name);
  };
  for (const YamlNode& entry : list->seq())
    apply_entry(next, entry, suggest);
  models_ = std::move(next);
  rebuild_index();
}

void GpuCatalog::rebuild_index() {
  index_.clear();
  for (std::size_t i = 0; i < models_.size(); ++i) {
    index_.emplace(lower(models_[i].name), i);
    for (const auto& a : models_[i].aliases)
      index_.emplace(lower(a), i);
  }
}

std::optional<std::size_t> GpuCatalog::index_of(std::string_view name_or_alias) const {
  auto it = index_.find(lower(name_or_alias));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

const GpuModel* GpuCatalog::find(std::string_view name_or_alias) const {
  const auto i = index_of(name_or_alias);
  return i ? &models_[*i] : nullptr;
}

std::vector<std::string> GpuCatalog::suggestions(std::string_view name) const {
  // Score each model by its closest name or alias: 0 for a case-insensitive prefix match
  // ("A100" -> A100-80GB), else the edit distance; keep scores within max(2, |name| / 3).
  const std::string word = lower(name);
  const double limit = std::max(2.0, static_cast<double>(word.size()) / 3.0);
  std::vector<std::pair<double, std::size_t>> scored;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    std::vector<std::string> all = models_[i].aliases;
    all.push_back(models_[i].name);
    double best = 1e9;
    for (const auto& s : all) {
      const std::string l = lower(s);
      if (word.size() >= 2 && l.size() > word.size() && l.starts_with(word))
        best = std::min(best, 0.0);
      best = std::min(best, static_cast<double>(distance(word, l)));
    }
    if (best <= limit) scored.emplace_back(best, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [score, i] : scored) {
    if (out.size() == 3) break;
    out.push_back(models_[i].name);
  }
  return out;
}

GpuModelInfo to_model_info(const GpuModel& model) {
  GpuModelInfo info;
  info.name = model.name;
  info.memory_bytes = model.memory_mib * 1024 * 1024;
  info.sms = model.sms;
  info.tdp_w = model.tdp_w;
  info.idle_w = model.idle_w;
  info.price_per_hour = model.price_per_hour;
  info.relative_speed = model.relative_speed > 0 ? model.relative_speed : 1.0;
  info.product_label = model.name;
  for (const auto& a : model.aliases) {
    if (a.rfind("NVIDIA-", 0) == 0) {
      info.product_label = a;
      break;
    }
  }
  info.mig_memory_slots = model.mig_memory_slots;
  info.mig_compute_slots = model.mig_compute_slots;
  for (const MigProfile& p : model.mig_profiles) {
    MigProfileInfo m;
    m.name = p.name;
    m.resource_name = mig_resource_name(p.name);
    m.compute_slices = p.compute_slices;
    m.memory_slices = p.memory_slices;
    m.memory_bytes = p.memory_mib * 1024 * 1024;
    m.sms = p.sms;
    m.start_slots = p.start_slots;
    m.max_instances = p.max_instances;
    m.media_extensions = p.media_extensions;
    info.mig_profiles.push_back(std::move(m));
  }
  return info;
}

}  // namespace capsim
