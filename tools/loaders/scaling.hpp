// The scenario's `scaling:` section: the replica count of a Deployment, ReplicaSet or StatefulSet
// over time, given step by step or as a CSV trace (docs/kubernetes-manifests.md, "Scaling over
// time"; docs/trace-format.md, "Replica traces"):
//
//   scaling:
//     - {kind: Deployment, name: web, namespace: serving, at: 2h, replicas: 12}
//     - {trace: replicas.csv}          # time,kind,namespace,name,replicas
//
// Each controller named must be read from the manifests. A step up adds the pods it creates,
// arriving at the step's time (made from the controller's template, named as the controller
// names them); a step down is played during the run (sim/simulation_scaling.cpp). The World's
// scaled_controllers get the steps and every pod of each controller.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/time.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

// Reads `section` and applies it to the World `b` builds (after its manifests are read and
// finalized). `resolve` resolves a trace path as the scenario resolves paths. Steps at or after
// `horizon` never happen: a warning. The replicas all steps up create are a soft limit
// (docs/cli.md#limits) that `force` lifts.
void apply_scaling(const YamlNode& section, WorldBuilder& b, FileSource& files,
                   const std::function<std::string(const YamlNode&)>& resolve, SimTime horizon,
                   bool force, std::vector<std::string>* warnings);

}  // namespace capsim
