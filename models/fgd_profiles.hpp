// The six placement policies of the FGD study as built-in scheduler profiles, named as the study
// names them: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD. Each is the study's
// configuration (its generate_config_and_run.py): every default score plugin off, the policy's
// score plugin alone with weight 1000, OpenGpuShare in place of GpuDevices with the policy's GPU
// selection, all nodes scored (percentageOfNodesToScore 100), and ties between equally scored
// nodes going to the first in node order, which the study's simulator does in effect: its node
// order is a seeded random permutation (fill experiments shuffle the nodes likewise), and its
// results match this and not kube-scheduler's random tie-break (docs/fgd.md). Preemption is
// off: the study's pods all have the same priority, so it could never act.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace capsim {

std::vector<std::string> fgd_profile_names();
std::optional<std::string> fgd_profile_yaml(const std::string& name);

}  // namespace capsim
