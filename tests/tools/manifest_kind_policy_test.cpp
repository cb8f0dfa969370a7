// Whole manifest files as users keep them: kinds that change nothing capsim simulates are skipped
// with one note per kind and file, kinds that would change the answer are refused with a message
// that says capsim does not model them (never that the apiVersion is wrong), generateName gives
// deterministic names, and Kueue quota resources follow the API's qualified-name rule.
#include "tools/loaders/manifest_kind_policy.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"
#include "tools/loaders/duration_rules.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/k8s_manifests.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {

RealFiles disk;
const std::string kData = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/";

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::vector<std::string> warnings;
  ManifestOptions opt;

  Fixture() {
    opt.kinds = &loader_registry().manifests;
    opt.warnings = &warnings;
    opt.horizon = kDay;
  }
  void load(const std::string& text, const std::string& file = "m.yaml") {
    load_manifest_docs(YamlNode::load_all_string(text, file), b, opt);
  }
  std::size_t warnings_with(const std::string& part) const {
    return static_cast<std::size_t>(
        std::count_if(warnings.begin(), warnings.end(),
                      [&](const std::string& w) { return w.find(part) != std::string::npos; }));
  }
};

std::optional<InputError> input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a file mixing kinds that change nothing with workloads loads, one note per kind") {
  Fixture f;
  // The file is as upstream writes it, without capsim annotations: a durations rule times the
  // Job, and the Deployment's replicas are long-running by default.
  const YamlNode rules_yaml =
      YamlNode::load_string("- {match: {kind: Job}, duration: 30m}\n", "s.yaml");
  const DurationRules rules = DurationRules::parse(rules_yaml, 1);
  f.opt.durations = &rules;
  load_manifest_file(disk, kData + "whole-app.yaml", f.b, f.opt);

  // The workloads: 3 Deployment replicas and one Job.
  CHECK(f.world.pods.size() == 3);
  REQUIRE(f.world.jobs.size() == 1);
  CHECK(f.world.jobs[0].pod_template.duration == 30 * kMinute);
  // One note for each skipped kind, with the file and the line of its first document's kind.
  for (const char* kind :
       {"v1 ServiceAccount", "rbac.authorization.k8s.io/v1 Role",
        "rbac.authorization.k8s.io/v1 RoleBinding", "v1 ConfigMap", "v1 Secret", "v1 Service",
        "networking.k8s.io/v1 NetworkPolicy", "v1 PersistentVolumeClaim"}) {
    INFO(kind);
    CHECK(f.warnings_with(std::string(kind) + " ") == 1);
  }
  CHECK(f.warnings.size() == 8);
  // Two ConfigMaps, one note that counts them.
  CHECK(f.warnings_with("v1 ConfigMap") == 1);
  CHECK(f.warnings_with("(2 documents of this kind in the file)") == 1);
  CHECK(f.warnings_with("skipped") == 8);
  // The Namespace is read, not skipped: its labels are what namespaceSelectors match, with the
  // kubernetes.io/metadata.name label the API server adds.
  CHECK(f.warnings_with("Namespace") == 0);
  StringPool& pool = f.world.strings;
  REQUIRE(f.world.namespace_labels.count(pool.find("inference")) == 1);
  const LabelSet& ns = f.world.namespace_labels.at(pool.find("inference"));
  CHECK(ns.get(pool.find("team")) == pool.find("ml"));
  CHECK(ns.get(pool.find("kubernetes.io/metadata.name")) == pool.find("inference"));
}

TEST_CASE("the note for a skipped kind is given once per file, not once per load") {
  Fixture f;
  const std::string sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n";
  f.load(sa + "---\n" + sa, "a.yaml");
  f.load(sa, "b.yaml");
  CHECK(f.warnings.size() == 2);
  CHECK(f.warnings_with("a.yaml:2") == 1);
  CHECK(f.warnings_with("b.yaml:2") == 1);
}

TEST_CASE("kinds that would change the answer are refused naming file, line, field and why") {
  struct Case {
    const char* name;
    std::string yaml;
    std::vector<const char*> want_parts;
  };
  const std::vector<Case> cases = {
      {"a Volcano Job",
       "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec: {}\n",
       {"batch.volcano.sh/v1alpha1 Job", "Volcano Job", "is not modelled", "batch/v1 Job",
        "capsim.io/gang"}},
      {"a Volcano PodGroup",
       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n",
       {"Volcano gang", "is not modelled", "kueue.x-k8s.io/pod-group-name"}},
      {"a KAI PodGroup",
       "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: g}\n",
       {"KAI scheduler gang", "is not modelled", "capsim.io/gang"}},
      {"a KAI Queue",
       "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\n",
       {"KAI scheduler queue", "ClusterQueues"}},
      {"a ResourceQuota",
       "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n",
       {"namespace quota", "is not modelled", "ClusterQueues"}},
      {"an MPIJob",
       "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: t}\n",
       {"MPIJob is not modelled yet", "batch/v1 Job", "capsim.io/gang"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Fixture f;
    auto e = input_error([&] { f.load(c.yaml); });
    REQUIRE(e);
    CHECK(e->where().file == "m.yaml");
    CHECK(e->where().line == 2);
    CHECK(e->where().field == "kind");
    for (const char* part : c.want_parts) {
      INFO(part);
      CHECK(contains(e->message(), part));
    }
    CHECK_FALSE(contains(e->message(), "served by apiVersion"));
  }
}

TEST_CASE("a core kind under the wrong group still gets the apiVersion hint") {
  Fixture f;
  auto e = input_error([&] { f.load("apiVersion: v1\nkind: Deployment\nmetadata: {name: d}\n"); });
  REQUIRE(e);
  CHECK(contains(e->message(), "kind Deployment is served by apiVersion apps/v1"));
  // A third party's kind of a name capsim knows is not a typo of ours.
  Fixture g;
  auto e2 =
      input_error([&] { g.load("apiVersion: example.com/v1\nkind: Job\nmetadata: {name: d}\n"); });
  REQUIRE(e2);
  CHECK(contains(e2->message(), "unknown kind 'Job' (apiVersion example.com/v1)"));
  CHECK_FALSE(contains(e2->message(), "served by apiVersion"));
}

TEST_CASE("every refused kind says what to write instead, every skipped kind why") {
  for (const auto& [group, kind] : std::vector<std::pair<std::string, std::string>>{
           {"batch.volcano.sh", "Job"},
           {"scheduling.volcano.sh", "PodGroup"},
           {"scheduling.run.ai", "PodGroup"},
           {"", "LimitRange"},
           {"kubeflow.org", "TFJob"},
           {"apiextensions.k8s.io", "CustomResourceDefinition"}}) {
    const std::string what = group + " " + kind;  // INFO copies no structured binding
    INFO(what);
    const UnmodelledKind* u = unmodelled_kind(group, kind);
    REQUIRE(u != nullptr);
    CHECK(!u->why.empty());
    if (u->action == KindAction::kRefuse) {
      const std::string text = std::string(u->why) + std::string(u->instead);
      CHECK((contains(text, "instead") || contains(text, "write") || contains(text, "express")));
    }
  }
  CHECK(unmodelled_kind("", "Pod") == nullptr);        // read, not skipped
  CHECK(unmodelled_kind("", "Namespace") == nullptr);  // read: namespaceSelectors match its labels
}

TEST_CASE("generateName makes deterministic, distinct names and a given name wins") {
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: train-\n  annotations: "
      "{capsim.io/duration: 1h}\nspec:\n  containers: [{name: c}]\n";
  auto names = [&] {
    Fixture f;
    f.load(pod + "---\n" + pod + "---\n" + pod);
    std::vector<std::string> out;
    for (const PodSpec& p : f.world.pods)
      out.push_back(p.name);
    return out;
  };
  const std::vector<std::string> a = names();
  REQUIRE(a.size() == 3);
  for (const std::string& n : a) {
    CHECK(n.rfind("train-", 0) == 0);
    CHECK(n.size() == std::string("train-").size() + 5);
    CHECK(n.find_first_not_of("bcdfghjklmnpqrstvwxz2456789", 6) == std::string::npos);
  }
  CHECK(a[0] != a[1]);
  CHECK(a[1] != a[2]);
  CHECK(a == names());  // the same input gives the same names

  Fixture g;
  g.load(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: fixed\n  generateName: train-\n  "
      "annotations: {capsim.io/duration: 1h}\nspec:\n  containers: [{name: c}]\n");
  REQUIRE(g.world.pods.size() == 1);
  CHECK(g.world.pods[0].name == "fixed");

  Fixture h;
  auto e = input_error([&] {
    h.load(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  annotations: {capsim.io/duration: 1h}\n"
        "spec:\n  containers: [{name: c}]\n");
  });
  REQUIRE(e);
  CHECK(contains(e->message(), "'name'"));
}

TEST_CASE("Kueue coveredResources take any qualified resource name") {
  const std::string cq =
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
      "  resourceGroups:\n  - coveredResources: [cpu, pods, COVERED]\n    flavors:\n"
      "    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 8}\n"
      "      - {name: pods, nominalQuota: 10}\n      - {name: COVERED, nominalQuota: 3}\n";
  Fixture f;
  f.load(cq);
  CHECK(f.world.resources.find("COVERED").has_value());
  CHECK(f.world.resources.find("pods").has_value());

  Fixture g;
  std::string bad = cq;
  bad.replace(bad.find("COVERED]"), 7, "-bad-");
  auto e = input_error([&] { g.load(bad); });
  REQUIRE(e);
  CHECK(e->where().line == 10);
  CHECK(contains(e->where().field, "coveredResources[2]"));
  CHECK(contains(e->message(), "not a valid resource name"));
}

}  // namespace capsim
