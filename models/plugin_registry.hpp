// Builds scheduler profiles: the registry of plugins capsim implements, the built-in profiles,
// and KubeSchedulerConfiguration-shaped profile YAML (plugins per extension point with
// enabled/disabled lists and weights, multiPoint, pluginConfig args). Adding a policy is one
// plugin file in models/plugins/ and one line in the table in plugin_registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/plugins/plugin_context.hpp"
#include "models/yaml_reader.hpp"
#include "sim/framework/framework.hpp"

namespace capsim {

// A plugin factory: builds the plugin from its pluginConfig args (nullptr when there are none).
using PluginFactory =
    std::function<std::unique_ptr<fw::Plugin>(PluginContext& ctx, const YamlNode* args)>;

struct PluginRegistration {
  std::string name;
  PluginFactory factory;
};

const std::vector<PluginRegistration>& plugin_registry();
// kube-scheduler plugins capsim accepts in a configuration but does not model (volumes, ports,
// topology spread, ...): enabling one warns and does nothing.
const std::vector<std::string>& unmodelled_upstream_plugins();

// Built-in profiles selectable by name without defining them in the scenario.
std::vector<std::string> builtin_profile_names();
std::optional<std::string> builtin_profile_yaml(const std::string& name);

struct BuiltProfile {
  fw::ProfileConfig config;
  std::vector<std::string> warnings;  // e.g. "VolumeBinding is not modelled; ignored"
};

// Builds a profile from one `profiles[]` entry of a KubeSchedulerConfiguration (plus capsim's
// extra knobs: tieBreak). `globals` is the enclosing configuration mapping, for top-level knobs
// (percentageOfNodesToScore, podInitialBackoffSeconds, podMaxBackoffSeconds); may be null.
BuiltProfile build_profile(const YamlNode& profile, const YamlNode* globals, PluginContext& ctx);
BuiltProfile build_builtin_profile(const std::string& name, PluginContext& ctx);

// The scheduler profiles a scenario offers, compiled once when it is loaded (kube-scheduler's
// profile.NewMap): its own profiles[] entries, then the built-in profiles it does not redefine.
// compile() builds each defined profile, and one built-in one with the scenario's top-level
// knobs (the built-ins differ only in their fixed YAML, so that checks the knobs for all of
// them), against the finished World: an unknown plugin, malformed args, a missing queueSort or
// a bad knob is an error with file, line and field at load time, for `validate` and `run`
// alike. Plugins keep per-run state, so a run instantiates the profile it names afresh, from
// what was checked. Immutable after compile().
class ProfileSet {
 public:
  // `defined`: the scenario's profiles (names must be unique: "two profiles are named 'x'" at
  // the second). `globals`: the enclosing KubeSchedulerConfiguration's top-level knobs, which
  // apply to every profile, the built-in ones included.
  static ProfileSet compile(const std::vector<YamlNode>& defined,
                            const std::optional<YamlNode>& globals, PluginContext& ctx);

  bool contains(const std::string& name) const { return find(name) != nullptr; }
  // Defined profiles first, then the built-in ones, in order.
  std::vector<std::string> names() const;
  // A fresh build of profile `name` for a run; nullopt when there is no such profile.
  std::optional<BuiltProfile> instantiate(const std::string& name, PluginContext& ctx) const;

 private:
  struct Entry {
    std::string name;
    YamlNode profile;  // the checked profiles[] entry, or the built-in profile's document
  };
  const Entry* find(const std::string& name) const;

  std::vector<Entry> entries_;
  std::optional<YamlNode> globals_;
};

}  // namespace capsim
