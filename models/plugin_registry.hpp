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

}  // namespace capsim
