// spec.topologySpreadConstraints and spec.affinity.podAffinity / podAntiAffinity in manifests:
// every field read with upstream's defaults, the API server's validation rules enforced with
// file, line and field, and a namespaceSelector key no Namespace object carries warned about.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"
#include "tools/loaders/k8s_manifests.hpp"

namespace capsim {
namespace {

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::vector<std::string> warnings;
  ManifestOptions opt;
  Fixture() { opt.warnings = &warnings; }
  void load(const std::string& text) {
    load_manifest_docs(YamlNode::load_all_string(text, "m.yaml"), b, opt);
  }
  Sym sym(const std::string& s) { return world.strings.find(s); }
};

std::optional<InputError> load_error(const std::string& text) {
  Fixture f;
  try {
    f.load(text);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A bare pod whose spec is `spec` (indented by 2) after line 6.
std::string pod(const std::string& spec) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
         "  annotations: {capsim.io/duration: 1h}\nspec:\n" +
         spec + "  containers: [{name: c}]\n";
}

}  // namespace

TEST_CASE("a Deployment's spread constraints, pod affinity and owner selector are read") {
  Fixture f;
  f.load(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n"
      "spec:\n"
      "  replicas: 2\n"
      "  selector: {matchLabels: {app: web}}\n"
      "  template:\n"
      "    metadata: {labels: {app: web, rev: r1}}\n"
      "    spec:\n"
      "      topologySpreadConstraints:\n"
      "        - maxSkew: 2\n"
      "          topologyKey: topology.kubernetes.io/zone\n"
      "          whenUnsatisfiable: DoNotSchedule\n"
      "          labelSelector: {matchLabels: {app: web}}\n"
      "          minDomains: 3\n"
      "          nodeAffinityPolicy: Ignore\n"
      "          nodeTaintsPolicy: Honor\n"
      "          matchLabelKeys: [rev]\n"
      "        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: "
      "ScheduleAnyway}\n"
      "      affinity:\n"
      "        podAffinity:\n"
      "          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "            - labelSelector: {matchExpressions: [{key: app, operator: In, values: "
      "[cache]}]}\n"
      "              topologyKey: kubernetes.io/hostname\n"
      "              namespaces: [infra]\n"
      "        podAntiAffinity:\n"
      "          preferredDuringSchedulingIgnoredDuringExecution:\n"
      "            - weight: 40\n"
      "              podAffinityTerm:\n"
      "                labelSelector: {matchLabels: {app: web}}\n"
      "                namespaceSelector: {}\n"
      "                topologyKey: kubernetes.io/hostname\n"
      "                mismatchLabelKeys: [rev]\n"
      "      containers: [{name: c}]\n");
  f.b.finalize();
  REQUIRE(f.world.pods.size() == 2);
  const PodTopologyRules& t = *f.world.pods[0].pod_rules;
  REQUIRE(t.spread.size() == 2);
  const TopologySpreadConstraint& c = t.spread[0];
  CHECK(c.max_skew == 2);
  CHECK(c.topology_key == f.sym("topology.kubernetes.io/zone"));
  CHECK(c.when_unsatisfiable == WhenUnsatisfiable::kDoNotSchedule);
  CHECK(c.min_domains == 3);
  CHECK(c.node_affinity_policy == NodeInclusionPolicy::kIgnore);
  CHECK(c.node_taints_policy == NodeInclusionPolicy::kHonor);
  REQUIRE(c.match_label_keys.size() == 1);
  CHECK(c.match_label_keys[0] == f.sym("rev"));
  REQUIRE(c.selector.requirements.size() == 1);
  CHECK(c.selector.requirements[0].op == LabelOp::kIn);
  // Upstream's defaults for the second: minDomains 1, Honor node affinity, Ignore taints.
  const TopologySpreadConstraint& d = t.spread[1];
  CHECK(d.when_unsatisfiable == WhenUnsatisfiable::kScheduleAnyway);
  CHECK(d.min_domains == 1);
  CHECK(d.node_affinity_policy == NodeInclusionPolicy::kHonor);
  CHECK(d.node_taints_policy == NodeInclusionPolicy::kIgnore);
  CHECK_FALSE(d.selector.present);  // absent: selects nothing
  REQUIRE(t.affinity.required.size() == 1);
  CHECK(t.affinity.required[0].namespaces == std::vector<Sym>{f.sym("infra")});
  CHECK(t.affinity.required[0].selector.requirements[0].values == std::vector<Sym>{f.sym("cache")});
  REQUIRE(t.anti_affinity.preferred.size() == 1);
  CHECK(t.anti_affinity.preferred[0].weight == 40);
  CHECK(t.anti_affinity.preferred[0].term.namespace_selector.empty());  // {}: every namespace
  CHECK(t.anti_affinity.preferred[0].term.mismatch_label_keys == std::vector<Sym>{f.sym("rev")});
  // The default spread constraints select with the Deployment's selector and, as its
  // ReplicaSet's, the pod-template-hash it labels its pods with.
  REQUIRE(t.owner_selector.present);
  REQUIRE(t.owner_selector.requirements.size() == 2);
  CHECK(t.owner_selector.requirements[1].key == f.sym("pod-template-hash"));
  CHECK(f.warnings.empty());
}

TEST_CASE("a bare pod has no owner selector, so no default spread constraints") {
  Fixture f;
  f.load(pod(""));
  f.b.finalize();
  REQUIRE(f.world.pods.size() == 1);
  CHECK_FALSE(f.world.pods[0].pod_rules->owner_selector.present);
  CHECK_FALSE(f.world.pods[0].pod_rules->has_pod_affinity());
}

TEST_CASE("a namespaceSelector key no Namespace object carries is warned about, once read") {
  const std::string affine =
      pod("  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
          "        - topologyKey: zone\n          labelSelector: {}\n"
          "          namespaceSelector: {matchLabels: {team: a}}\n");
  SUBCASE("no Namespace object: warned at finalize, with the selector's line") {
    Fixture f;
    f.load(affine);
    CHECK(f.warnings.empty());  // a Namespace may still come, from a later file
    f.b.finalize();
    REQUIRE(f.warnings.size() == 1);
    CHECK(contains(f.warnings[0], "m.yaml:12"));
    CHECK(contains(f.warnings[0], "namespaceSelector key 'team' is on no Namespace object"));
  }
  SUBCASE("a later Namespace carries the key: no warning, and its labels are kept") {
    Fixture f;
    f.load(affine);
    f.load("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml, labels: {team: a}}\n");
    f.b.finalize();
    CHECK(f.warnings.empty());
    const LabelSet& ml = f.world.namespace_labels.at(f.sym("ml"));
    CHECK(ml.get(f.sym("team")) == f.sym("a"));
    CHECK(ml.get(f.sym("kubernetes.io/metadata.name")) == f.sym("ml"));
  }
}

TEST_CASE("a Namespace is described once and its metadata.name label is its name") {
  auto e = load_error(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n"
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n");
  REQUIRE(e);
  CHECK(contains(e->message(), "duplicate Namespace 'ml'"));
  e = load_error(
      "apiVersion: v1\nkind: Namespace\n"
      "metadata: {name: ml, labels: {kubernetes.io/metadata.name: prod}}\n");
  REQUIRE(e);
  CHECK(contains(e->message(), "a Namespace's must be its name 'ml'"));
  e = load_error("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\nspec: {size: 3}\n");
  REQUIRE(e);
  CHECK(contains(e->message(), "size"));
}

TEST_CASE("malformed spread constraints and pod affinity terms are rejected with line and field") {
  struct Case {
    const char* name;
    std::string spec;
    int want_line;
    const char* want_field;
    const char* want_part;
  };
  const std::string tsc = "  topologySpreadConstraints:\n";
  const std::vector<Case> cases = {
      {"maxSkew 0", tsc + "    - {maxSkew: 0, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n",
       8, "spec.topologySpreadConstraints[0].maxSkew", "must be between 1 and"},
      {"unknown whenUnsatisfiable",
       tsc + "    - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: Never}\n", 8,
       "spec.topologySpreadConstraints[0].whenUnsatisfiable", "unknown whenUnsatisfiable 'Never'"},
      {"minDomains with ScheduleAnyway",
       tsc +
           "    - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n",
       8, "spec.topologySpreadConstraints[0].minDomains", "only be used with whenUnsatisfiable"},
      {"missing topologyKey", tsc + "    - {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}\n", 8,
       "spec.topologySpreadConstraints[0]", "topologyKey"},
      {"duplicate constraint",
       tsc + "    - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n" +
           "    - {maxSkew: 2, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n",
       9, "spec.topologySpreadConstraints[1]", "duplicate constraint"},
      {"matchLabelKeys without labelSelector",
       tsc + "    - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, "
             "matchLabelKeys: [rev]}\n",
       8, "spec.topologySpreadConstraints[0]", "cannot be set when labelSelector isn't set"},
      {"bad selector operator",
       tsc + "    - maxSkew: 1\n      topologyKey: z\n      whenUnsatisfiable: DoNotSchedule\n"
             "      labelSelector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}\n",
       11, "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator",
       "unknown operator 'Gt'"},
      {"typo in a spread field",
       tsc + "    - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, minDomain: 2}\n",
       8, "spec.topologySpreadConstraints[0].minDomain", "did you mean 'minDomains'"},
      {"preferred weight 0",
       "  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
       "        - weight: 0\n          podAffinityTerm: {topologyKey: z}\n",
       10,
       "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
       "must be between 1 and 100"},
      {"affinity term without topologyKey",
       "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
       "        - labelSelector: {}\n",
       10, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]",
       "topologyKey"},
      {"In without values",
       "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
       "        - topologyKey: z\n          labelSelector: {matchExpressions: [{key: a, "
       "operator: In}]}\n",
       11,
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
       "labelSelector.matchExpressions[0]",
       "values must be given"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    auto e = load_error(pod(c.spec));
    REQUIRE(e);
    CHECK(e->kind() == InputErrorKind::kInvalid);
    CHECK(e->where().file == "m.yaml");
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    INFO(e->message());
    CHECK(contains(e->message(), c.want_part));
  }
}

}  // namespace capsim
