// Reads Kueue's objects (kueue.x-k8s.io ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
// WorkloadPriorityClass; served as v1beta2 and v1beta1, Cohort also as v1alpha1) into the World's
// QueueConfig through the manifest loader's kind table, and the scenario's `kueue:` section
// (Kueue's Configuration: fairSharing, waitForPodsReady, resources) into its settings. Both
// spellings of renamed fields are accepted (cohort / cohortName, parent / parentName,
// Borrow / MayStopSearch). Field rules follow Kueue's webhooks: errors name file, line and field.
// References between objects (LocalQueue -> ClusterQueue -> ResourceFlavor, Cohort parents,
// workload priority classes on pods) are resolved when the WorldBuilder finalizes, so objects may
// come in any order and any file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

// The Kueue kinds, for loader_registry().manifests or ManifestOptions::extra_kinds.
std::vector<ManifestKind> kueue_manifest_kinds();

// The scenario's `kueue:` mapping. `resolve` turns a path in the scenario into a file name
// (for `config: kueue-config.yaml`, a Kueue Configuration file, read through `files`). Warnings
// go to `warnings`. The form without `files` reads the file system (test rigs).
void load_kueue_section(const YamlNode& section, WorldBuilder& b, FileSource& files,
                        const std::function<std::string(const YamlNode&)>& resolve,
                        std::vector<std::string>* warnings);
void load_kueue_section(const YamlNode& section, WorldBuilder& b,
                        const std::function<std::string(const YamlNode&)>& resolve,
                        std::vector<std::string>* warnings);

// Registers the cross-file checks with the builder (done by every Kueue handler; public for
// loaders that create queue-managed pods without Kueue objects of their own).
void require_kueue_checks(WorldBuilder& b, std::vector<std::string>* warnings);

}  // namespace capsim
