// Parsers for the Kubernetes sub-structures every loader shares: labels, taints, tolerations,
// node affinity and resource lists. They validate the way the API server does (label syntax,
// operator rules, whole-number extended resources, no negative quantities) and report through
// YamlNode, so a message reads "pod.yaml:14:9: spec.tolerations[0]: value must be empty when
// operator is 'Exists'". Every string is interned through the WorldBuilder and every resource name
// gets its run-wide id there. Stateless apart from the builder; not thread-safe with it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/labels.hpp"
#include "sim/pod_affinity.hpp"
#include "sim/resources.hpp"
#include "sim/result.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

// What is wrong with a label key (a Kubernetes qualified name: optional DNS-subdomain prefix and
// '/', then a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric),
// or with a label value (empty, or a name as above). Empty when valid.
std::string label_key_problem(std::string_view key);
std::string label_value_problem(std::string_view value);

// What the API server would say of an object's metadata.name (most kinds, Pods and Nodes among
// them: a lowercase RFC 1123 subdomain of at most 253 characters) or of a namespace's name (a
// lowercase RFC 1123 label of at most 63). Empty when valid.
std::string object_name_problem(std::string_view name);
std::string namespace_name_problem(std::string_view name);

// A string -> string mapping (metadata.labels, spec.nodeSelector). A null value counts as "".
LabelSet parse_labels(const YamlNode& map, WorldBuilder& b);

// [{key, value, effect}] (Node spec.taints): key and effect required, value optional, timeAdded
// accepted and ignored; a (key, effect) pair may appear once.
std::vector<Taint> parse_taints(const YamlNode& list, WorldBuilder& b);

// [{key, operator, value, effect, tolerationSeconds}]: operator Equal (default) or Exists; an
// empty key needs Exists; Exists takes no value; tolerationSeconds only with effect NoExecute
// (accepted, not modelled: capsim does not evict for NoExecute taints added at run time).
std::vector<Toleration> parse_tolerations(const YamlNode& list, WorldBuilder& b);

// spec.affinity.nodeAffinity: requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
// (at least one term) and preferredDuringSchedulingIgnoredDuringExecution [{weight 1..100,
// preference}]. Requirement rules: In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt take
// exactly one integer; matchFields allow only metadata.name with In/NotIn and one value.
NodeAffinity parse_node_affinity(const YamlNode& node_affinity, WorldBuilder& b);
NodeSelectorTerm parse_node_selector_term(const YamlNode& term, WorldBuilder& b);

// A metav1.LabelSelector {matchLabels, matchExpressions (In, NotIn, Exists, DoesNotExist)}; a
// null node is an absent selector (selects nothing).
LabelSelector parse_label_selector(const YamlNode& selector, WorldBuilder& b);

// Where a parser reports a field it accepts but does not model (the manifest loader's warning).
using FieldWarning = std::function<void(const YamlNode& at, const std::string& message)>;

// spec.topologySpreadConstraints: maxSkew >= 1, topologyKey and whenUnsatisfiable
// (DoNotSchedule, ScheduleAnyway) required; minDomains >= 1 only with DoNotSchedule;
// nodeAffinityPolicy / nodeTaintsPolicy Honor or Ignore; matchLabelKeys only with a
// labelSelector and not among its keys; one constraint per (topologyKey, whenUnsatisfiable).
std::vector<TopologySpreadConstraint> parse_topology_spread_constraints(const YamlNode& list,
                                                                        WorldBuilder& b);

// spec.affinity.podAffinity or podAntiAffinity: required terms and preferred [{weight 1..100,
// podAffinityTerm}]. A term needs a topologyKey; matchLabelKeys / mismatchLabelKeys follow the
// rules above and may not share a key. A namespaceSelector matches v1 Namespace objects' labels
// (World::namespace_labels); a key no Namespace object carries is warned about at
// WorldBuilder::finalize() (`warn` is kept until then).
PodAffinityRules parse_pod_affinity(const YamlNode& node, WorldBuilder& b,
                                    const FieldWarning& warn);

// Resource names and amounts, before they get ids. A container may name cpu, memory,
// ephemeral-storage, hugepages-<size> and extended resources (domain-prefixed, e.g.
// nvidia.com/gpu); a node may also name pods and attachable-volumes-*.
enum class ResourceScope : std::uint8_t { kContainer, kNode };

struct ResourceAmount {
  std::string name;
  std::int64_t value = 0;  // millicores for cpu, bytes for memory/storage/hugepages, else units
  YamlNode where;
};

// Extended resources (nvidia.com/gpu, example.com/foo) cannot be overcommitted and are counted in
// whole units; true for every domain-prefixed resource name.
bool is_extended_resource(std::string_view name);

// Converts a quantity for `resource`: cpu to millicores, memory, ephemeral-storage, storage and
// hugepages-* to bytes (rounded up, as Quantity.Value()), anything else to whole units; a fraction
// of a whole-unit resource ("0.5" nvidia.com/gpu, "1500m") and a negative amount are errors.
Result<std::int64_t> resource_quantity(std::string_view resource, std::string_view text);

// Checks a resource name for `scope`; the error names the close valid names.
std::string resource_name_problem(std::string_view name, ResourceScope scope);

// Every entry of a resource mapping, in file order, validated (name and amount).
std::vector<ResourceAmount> parse_resource_amounts(const YamlNode& map, ResourceScope scope);

// A container- or pod-level mapping as a ResourceList (zero amounts dropped).
ResourceList parse_resource_list(const YamlNode& map, WorldBuilder& b);

// A node's capacity or allocatable. Zero amounts are not interned, so that a node dump listing
// hugepages-1Gi: "0" does not use up resource ids.
ResourceVec parse_resource_vec(const YamlNode& map, WorldBuilder& b);

}  // namespace capsim
