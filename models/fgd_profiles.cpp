#include "models/fgd_profiles.hpp"

#include <fmt/format.h>

#include <array>

namespace capsim {

namespace {

struct FgdPolicy {
  const char* profile;
  const char* score_plugin;
  const char* gpu_selection;  // the study's -gpusel for the policy (best by default)
  bool pre_score;             // the plugin has a PreScore step
};

constexpr std::array<FgdPolicy, 6> kPolicies = {{
    {"Random", "RandomScore", "random", true},
    {"DotProd", "DotProductScore", "best", false},
    {"GpuClustering", "GpuClusteringScore", "best", false},
    {"GpuPacking", "GpuPackingScore", "best", false},
    {"BestFit", "BestFitScore", "best", false},
    {"FGD", "FGDScore", "fgd", true},
}};

}  // namespace

std::vector<std::string> fgd_profile_names() {
  std::vector<std::string> out;
  for (const FgdPolicy& p : kPolicies)
    out.emplace_back(p.profile);
  return out;
}

std::optional<std::string> fgd_profile_yaml(const std::string& name) {
  for (const FgdPolicy& p : kPolicies) {
    if (name != p.profile) continue;
    std::string pre_score = "    disabled: [{name: '*'}]\n";
    if (p.pre_score) pre_score += fmt::format("    enabled: [{{name: {}}}]\n", p.score_plugin);
    return fmt::format(R"(schedulerName: {0}
percentageOfNodesToScore: 100
tieBreak: first
plugins:
  multiPoint:
    enabled: [{{name: OpenGpuShare}}]
    disabled: [{{name: GpuDevices}}]
  postFilter:
    disabled: [{{name: DefaultPreemption}}]
  preScore:
{3}  score:
    disabled: [{{name: '*'}}]
    enabled: [{{name: {1}, weight: 1000}}]
pluginConfig:
  - name: OpenGpuShare
    args: {{gpuSelection: {2}}}
)",
                       p.profile, p.score_plugin, p.gpu_selection, pre_score);
  }
  return std::nullopt;
}

}  // namespace capsim
