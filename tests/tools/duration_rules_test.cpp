// The scenario's `durations:` rules time manifest workloads that carry no capsim annotation: the
// first matching rule wins, an annotation wins over every rule, controllers default to
// long-running, a draw depends only on the seed and the object, and a finite workload nothing
// times is an error naming the object and the rule that would cover it.
#include "tools/loaders/duration_rules.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kCluster =
    "simulation: {horizon: 2d}\n"
    "cluster:\n  nodes:\n    - {name: n1, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, "
    "count: 8}}\n"
    "manifests: [m.yaml]\n";

Scenario load(const std::string& scenario, const std::string& manifests,
              std::optional<std::uint64_t> seed = std::nullopt) {
  MemoryFiles files;
  files.add("mem/s.yaml", std::string(kCluster) + scenario).add("mem/m.yaml", manifests);
  LoadOptions lo;
  lo.seed = seed;
  return load_scenario("mem/s.yaml", lo, files);
}

const PodSpec* pod(const Scenario& s, const std::string& name) {
  for (const PodSpec& p : s.world->pods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const JobSpec* job(const Scenario& s, const std::string& name) {
  for (const JobSpec& j : s.world->jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

std::string bare_pod(const std::string& name, const std::string& ns = "default",
                     const std::string& labels = "{}", const std::string& annotations = "{}") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\n  labels: " + labels + "\n  annotations: " + annotations +
         "\nspec:\n  containers: [{name: c}]\n---\n";
}

}  // namespace

TEST_CASE("durations rules match on kind, namespace, labels, name and queue; first one wins") {
  const std::string rules =
      "durations:\n"
      "  - match: {kind: Pod, namespace: research, labels: {tier: big}}\n    duration: 5h\n"
      "  - match: {name: \"eval-*\"}\n    duration: 20m\n"
      "  - match: {queue: interactive}\n    long_running: true\n"
      "  - match: {kind: Pod}\n    duration: 1h\n";
  const std::string m =
      bare_pod("a", "research", "{tier: big}") +    // rule 1
      bare_pod("b", "research", "{tier: small}") +  // rule 4 (labels differ)
      bare_pod("eval-7", "default") +               // rule 2 (name glob)
      bare_pod("nb", "default", "{kueue.x-k8s.io/queue-name: interactive}") +  // rule 3
      bare_pod("ann", "research", "{tier: big}", "{capsim.io/duration: 3m}");  // annotation wins
  const Scenario s = load(rules, m);
  CHECK(pod(s, "a")->duration == 5 * kHour);
  CHECK(pod(s, "b")->duration == kHour);
  CHECK(pod(s, "eval-7")->duration == 20 * kMinute);
  CHECK(pod(s, "nb")->duration == kEndOfTime);
  CHECK(pod(s, "ann")->duration == 3 * kMinute);
}

TEST_CASE("a distribution rule draws per object: same seed same durations, other seed others") {
  const std::string rules =
      "durations:\n  - match: {kind: Pod}\n    duration: {uniform: [10m, 10h]}\n";
  std::string m;
  for (int i = 0; i < 6; ++i)
    m += bare_pod("p" + std::to_string(i));
  const Scenario a = load(rules, m, 7);
  const Scenario b = load(rules, m, 7);
  const Scenario c = load(rules, m, 8);
  int differ = 0;
  for (int i = 0; i < 6; ++i) {
    const std::string n = "p" + std::to_string(i);
    CHECK(pod(a, n)->duration == pod(b, n)->duration);
    CHECK(pod(a, n)->duration >= 10 * kMinute);
    CHECK(pod(a, n)->duration <= 10 * kHour);
    if (pod(a, n)->duration != pod(c, n)->duration) ++differ;
  }
  CHECK(differ == 6);
  CHECK(pod(a, "p0")->duration != pod(a, "p1")->duration);
  // The draw is the object's own: reading the pods in another order changes nothing.
  std::string reversed;
  for (int i = 5; i >= 0; --i)
    reversed += bare_pod("p" + std::to_string(i));
  const Scenario r = load(rules, reversed, 7);
  for (int i = 0; i < 6; ++i) {
    const std::string n = "p" + std::to_string(i);
    CHECK(pod(r, n)->duration == pod(a, n)->duration);
  }
}

TEST_CASE("a finite workload nothing times is an error naming it and the rule that would") {
  const std::string m =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n"
      "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n";
  for (const std::string& rules :
       {std::string(""), std::string("durations:\n  - match: {kind: Pod}\n"
                                     "    duration: 1h\n")}) {
    INFO(rules);
    try {
      (void)load(rules, m);
      FAIL("no error");
    } catch (const InputError& e) {
      const std::string msg = e.message();
      CHECK(e.where().file == "mem/m.yaml");
      CHECK(e.where().line == 3);
      CHECK(e.where().field == "metadata");
      CHECK(msg.find("job 'train' (Job in namespace ml) has no run time") != std::string::npos);
      CHECK(msg.find("- match: {kind: Job, namespace: ml, name: \"train\"}") != std::string::npos);
      CHECK(msg.find(rules.empty() ? "the scenario has none" : "none of its rules matches") !=
            std::string::npos);
    }
  }
  // The suggested rule, pasted in, covers it.
  const Scenario s = load(
      "durations:\n  - match: {kind: Job, namespace: ml, name: \"train\"}\n    duration: 1h\n", m);
  REQUIRE(job(s, "train") != nullptr);
  CHECK(job(s, "train")->pod_template.duration == kHour);
}

TEST_CASE("for a generated name the suggested rule matches the generateName prefix") {
  const std::string m =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: eval-}\nspec:\n"
      "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n";
  try {
    (void)load("", m);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message().find("name: \"eval-*\"") != std::string::npos);
  }
  const Scenario s =
      load("durations:\n  - match: {kind: Job, name: \"eval-*\"}\n    duration: 45m\n", m);
  REQUIRE(s.world->jobs.size() == 1);
  CHECK(s.world->jobs[0].pod_template.duration == 45 * kMinute);
}

TEST_CASE("malformed durations rules are refused at their field") {
  struct Case {
    const char* name;
    const char* yaml;
    const char* want_field;
    const char* want_part;
  };
  const Case cases[] = {
      {"an unknown kind", "- {match: {kind: Deploymnt}, long_running: true}\n", "[0].match.kind",
       "did you mean 'Deployment'"},
      {"neither duration nor long_running", "- {match: {kind: Pod}}\n", "[0]", "needs `duration`"},
      {"both", "- {match: {kind: Pod}, duration: 1h, long_running: true}\n", "[0].duration",
       "not both"},
      {"an unknown match field", "- {match: {nmae: x}, duration: 1h}\n", "[0].match.nmae",
       "did you mean 'name'"},
      {"a duration that is not one", "- {duration: soon}\n", "[0].duration", "soon"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    try {
      (void)DurationRules::parse(YamlNode::load_string(c.yaml, "r.yaml"), 1);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.where().file == "r.yaml");
      CHECK(e.where().line == 1);
      CHECK(e.where().field == c.want_field);
      CHECK(e.message().find(c.want_part) != std::string::npos);
    }
  }
}

}  // namespace capsim
