// Loads Kubernetes manifests (YAML files of one or more `---` documents, `kind: List` or
// `<Kind>List` with items) into a World through the WorldBuilder. Each document is dispatched on
// its API group and kind to a handler in a table: the core kinds (v1 Node, v1 Pod, batch/v1 Job,
// scheduling.k8s.io/v1 PriorityClass) are the core table; a load dispatches on the table its
// options name (loader_registry().manifests in tools/loaders/input_kinds.hpp adds the Kueue and
// DRA kinds) plus per-call ManifestOptions::extra_kinds, without touching this loader. Every
// field a handler does not read or explicitly ignore is an error with a did-you-mean hint; every
// error carries file, line and field path. The tables are constant values, so loads on several
// threads share them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/labels.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

struct ManifestOptions;
class DurationRules;

// Resources that replace a container's own while a pod template is read: a TrainJob's
// spec.trainer.resourcesPerNode, which Kubeflow Trainer puts on its runtime's containers named
// `node` (and `launcher`, when the launcher also trains).
struct ContainerResourcesOverride {
  std::vector<std::string> containers;  // the container names it applies to
  YamlNode resources;                   // a ResourceRequirements mapping (limits, requests)
};

// What a handler gets besides the document: the builder, the options, the document's apiVersion
// and kind, and a place for warnings.
struct ManifestContext {
  WorldBuilder& builder;
  const ManifestOptions& options;
  std::string api_version;  // "v1", "batch/v1", "kueue.x-k8s.io/v1beta2"
  std::string kind;
  // Set while a TrainJob's runtime template is read; nullptr otherwise.
  const ContainerResourcesOverride* container_resources = nullptr;

  // Appends "file:line: field: message" to options.warnings (if set).
  void warn(const YamlNode& at, const std::string& message) const;
};

// Reads one document. apiVersion and kind are already consumed; the loader calls finish() on
// `doc` after the handler returns, so a handler only reads or ignore()s the keys it knows.
using ManifestHandler = std::function<void(MapReader& doc, ManifestContext& ctx)>;

struct ManifestKind {
  std::string group;                  // "" for the core group, "batch", "kueue.x-k8s.io"
  std::string kind;                   // "Node", "ClusterQueue"
  std::vector<std::string> versions;  // served versions, e.g. {"v1beta2", "v1beta1"}
  ManifestHandler handler;
};

using ManifestKinds = std::vector<ManifestKind>;

// v1 Node, v1 Pod, batch/v1 Job, scheduling.k8s.io/v1 PriorityClass.
const ManifestKinds& core_manifest_kinds();

struct ManifestOptions {
  // The kinds a load knows; nullptr: the core kinds only.
  const ManifestKinds* kinds = nullptr;
  // Warnings (pod affinity is not modelled, a field that is accepted but changes nothing) go
  // here; nullptr drops them.
  std::vector<std::string>* warnings = nullptr;
  // Handlers for this call only; they take precedence over `kinds` of the same name.
  std::vector<ManifestKind> extra_kinds;
  // The scenario's `durations:` rules, for workloads no capsim.io/duration annotation times;
  // nullptr: none (such a workload is an error).
  const DurationRules* durations = nullptr;
  // The run's horizon, over which a CronJob's schedule is expanded into Jobs; kEndOfTime when
  // the scenario sets none (a CronJob then is an error).
  SimDuration horizon = kEndOfTime;
  // Warn about, instead of failing on, documents of an unknown kind (e.g. a Deployment or a
  // Service in a directory of cluster manifests).
  bool skip_unknown_kinds = false;
};

// "v1 Node, v1 Pod, batch/v1 Job, ..." for messages and `capsim validate --help`.
std::vector<std::string> supported_manifest_kinds(const ManifestOptions& opt = {});

// Loads every document of a file. A missing file is InputErrorKind::kMissing.
void load_manifest_file(FileSource& files, const std::string& path, WorldBuilder& b,
                        const ManifestOptions& opt);
void load_manifest_docs(const std::vector<YamlNode>& docs, WorldBuilder& b,
                        const ManifestOptions& opt);

// --- Pieces for handlers of other kinds ---------------------------------------------------

// metadata: name (required unless `name_required` is false, as in a pod template), namespace
// ("default" for namespaced kinds; ignored for cluster-scoped ones), labels, annotations (keys
// validated; a capsim.io/* key must be one of `capsim_annotations`), and the fields the server
// sets (uid, resourceVersion, creationTimestamp, managedFields, ownerReferences, ...) ignored.
struct ObjectMeta {
  std::string name;
  std::string generate_name;  // metadata.generateName, when `name` was made from it
  // The ownerReference with controller: true, if any (a dump's Pod of a ReplicaSet).
  std::string owner_kind;
  std::string owner_name;
  std::string namespace_;
  LabelSet labels;
  std::vector<std::pair<std::string, YamlNode>> annotations;  // in file order
  std::optional<YamlNode> node;                               // the metadata mapping

  std::optional<YamlNode> annotation(std::string_view key) const;
};

ObjectMeta parse_object_meta(const YamlNode& metadata, WorldBuilder& b, bool namespaced,
                             const std::vector<std::string>& capsim_annotations,
                             bool name_required = true);

// The value of label `key` in `labels`, if present.
std::optional<std::string> label_value(const LabelSet& labels, std::string_view key,
                                       const StringPool& pool);

// What a Deployment, ReplicaSet or StatefulSet makes its pods from, kept in the WorldBuilder
// (WorldBuilder::keep, under replica_template_key) for the scenario's `scaling:` steps
// (tools/loaders/scaling.hpp), which add the pods a step up creates.
struct ReplicaTemplate {
  std::string kind;  // "Deployment", "ReplicaSet", "StatefulSet"
  std::string name;
  PodSpec pod;                     // every replica's spec but its name (and ordinal labels)
  std::string name_prefix;         // Deployment "<name>-<pod-template-hash>-", ReplicaSet "<name>-"
  std::int64_t first_ordinal = 0;  // StatefulSet: spec.ordinals.start
  std::int64_t replicas = 0;       // spec.replicas
  InputLocation where;
};
std::string replica_template_key(std::string_view kind, std::string_view ns, std::string_view name);
// Replica `index` (0-based, in creation order) of a controller: a StatefulSet's is ordinal
// first_ordinal + index, named <name>-<ordinal>; the others get a generated name.
PodSpec make_replica(const ReplicaTemplate& t, std::int64_t index, WorldBuilder& b);

}  // namespace capsim
