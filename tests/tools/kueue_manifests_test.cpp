// Kueue's objects load from real kueue.x-k8s.io YAML in both API versions, and every mistake —
// an unknown field, a contradiction, a reference to nothing — is reported at its file, line and
// field, following Kueue's webhooks.
#include "tools/loaders/kueue_manifests.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {
// Every file these tests read comes from disk; the reads it records are not looked at.
RealFiles disk;

using namespace capsim::queueing;

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::vector<std::string> warnings;
  ManifestOptions opt;
  Fixture() {
    opt.warnings = &warnings;
    opt.extra_kinds = kueue_manifest_kinds();
  }
  void load(const std::string& text) {
    load_manifest_docs(YamlNode::load_all_string(text, "m.yaml"), b, opt);
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

const char* kFlavor = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
)";

}  // namespace

TEST_CASE("Kueue objects load in both API versions with their renamed fields") {
  Fixture f;
  load_manifest_file(disk, std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/kueue.yaml", f.b,
                     f.opt);
  f.b.finalize();
  const QueueConfig& q = f.world.queues;
  REQUIRE(q.flavors.size() == 2);
  CHECK(q.flavors[1].node_taints.size() == 1);
  CHECK(q.flavors[1].tolerations.size() == 1);
  REQUIRE(q.cluster_queues.size() == 2);
  const ClusterQueueSpec& r = q.cluster_queues[0];
  CHECK(r.cohort == "gpus");                    // v1beta1 `cohort`
  CHECK(q.cluster_queues[1].cohort == "gpus");  // v1beta2 `cohortName`
  CHECK(r.strategy == QueueingStrategy::kStrictFifo);
  CHECK(r.within_cluster_queue == PreemptPolicy::kLowerPriority);
  CHECK(r.reclaim_within_cohort == PreemptPolicy::kAny);
  CHECK(r.borrow_within_cohort == PreemptPolicy::kLowerPriority);
  CHECK(r.borrow_max_priority_threshold == 100);
  CHECK(r.when_can_borrow == FungibilityPolicy::kMayStopSearch);  // v1beta1 "Borrow"
  CHECK(r.fair_weight == 2.0);
  REQUIRE(r.resource_groups.size() == 1);
  const auto& gpu = r.resource_groups[0].flavors[0].resources[2];
  CHECK(gpu.nominal == 8);
  CHECK(gpu.borrowing_limit == 8);
  CHECK(gpu.lending_limit == 4);
  CHECK(r.resource_groups[0].flavors[0].resources[0].nominal == 224000);  // millicores
  CHECK(r.resource_groups[0].flavors[0].resources[1].nominal == 2LL << 40);
  REQUIRE(q.cohorts.size() == 1);
  CHECK(q.cohorts[0].parent == "org");  // v1alpha1 `parent`; org has no object (implicit)
  REQUIRE(q.local_queues.size() == 2);
  CHECK(q.local_queues[0].namespace_ == "research");
  REQUIRE(q.priority_classes.size() == 1);
  CHECK(q.priority_classes[0].value == 1000);
  CHECK(q.active());
}

TEST_CASE("mistakes in Kueue objects are reported at their file, line and field") {
  struct Case {
    const char* name;
    std::string yaml;
    int want_line;
    const char* want_field;
    const char* want_message;
  };
  const std::string cq_head =
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n";
  const std::string group =
      "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
      "    flavors:\n    - name: gpu\n      resources:\n";
  const Case cases[] = {
      {"a misspelt field", cq_head + "  cohortNme: x\n", 5, "spec.cohortNme",
       "unknown field 'cohortNme' (did you mean 'cohortName'"},
      {"cohort and cohortName disagree", cq_head + "  cohort: a\n  cohortName: b\n", 6,
       "spec.cohortName", "name the same field"},
      {"a lending limit above the nominal quota",
       cq_head + "  cohortName: c\n" + group +
           "      - {name: nvidia.com/gpu, nominalQuota: 4, lendingLimit: 5}\n",
       11, "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
       "lendingLimit (5) must not exceed nominalQuota (4)"},
      {"a borrowing limit without a cohort",
       cq_head + group + "      - {name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2}\n", 10,
       "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
       "borrowingLimit is only allowed when the ClusterQueue has a cohort"},
      {"resources in another order than coveredResources",
       cq_head +
           "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
           "    - name: gpu\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 4}\n"
           "      - {name: cpu, nominalQuota: 4}\n",
       10, "spec.resourceGroups[0].flavors[0].resources[0].name",
       "resource nvidia.com/gpu is at position 1 of flavor gpu, but coveredResources has cpu"},
      {"a fractional GPU quota",
       cq_head + group + "      - {name: nvidia.com/gpu, nominalQuota: 1.5}\n", 10,
       "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "not a whole number"},
      {"v1beta2 does not know v1beta1's Borrow",
       cq_head + "  flavorFungibility: {whenCanBorrow: Borrow}\n", 5,
       "spec.flavorFungibility.whenCanBorrow", "unknown value 'Borrow'"},
      {"a preference needs TryNextFlavor twice",
       cq_head + "  flavorFungibility: {preference: PreemptionOverBorrowing}\n", 5,
       "spec.flavorFungibility.preference", "preference can only be set when both"},
      {"borrowWithinCohort without reclaimWithinCohort",
       cq_head + "  preemption: {borrowWithinCohort: {policy: LowerPriority}}\n", 5,
       "spec.preemption.borrowWithinCohort.policy", "needs reclaimWithinCohort"},
      {"an unknown queueing strategy", cq_head + "  queueingStrategy: FIFO\n", 5,
       "spec.queueingStrategy", "unknown value 'FIFO'"},
      {"an unserved API version",
       "apiVersion: kueue.x-k8s.io/v1alpha2\nkind: LocalQueue\nmetadata: {name: q}\n", 1,
       "apiVersion", "apiVersion kueue.x-k8s.io/v1alpha2 is not supported for LocalQueue"},
      {"a LocalQueue without its ClusterQueue",
       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec: {}\n", 4,
       "spec", "missing required field 'clusterQueue'"},
      {"a duplicate ClusterQueue", cq_head + "  {}\n---\n" + cq_head + "  {}\n", 9, "metadata",
       "duplicate ClusterQueue 'q' (first defined at m.yaml:3)"},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    Fixture f;
    auto err = input_error([&] { f.load(c.yaml); });
    REQUIRE(err.has_value());
    const std::string what = err->what();
    CAPTURE(what);
    CHECK(err->where().file == "m.yaml");
    CHECK(err->where().line == c.want_line);
    CHECK(err->where().field == c.want_field);
    CHECK(err->message().find(c.want_message) != std::string::npos);
  }
}

TEST_CASE("references between Kueue objects are checked once every file is read") {
  struct Case {
    const char* name;
    std::string yaml;
    int want_line;
    const char* want_message;
  };
  const Case cases[] = {
      {"a LocalQueue naming a missing ClusterQueue",
       std::string(kFlavor) +
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a}\n"
           "spec: {}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
           "metadata: {name: q}\nspec: {clusterQueue: team-b}\n",
       13, "points at ClusterQueue 'team-b', which does not exist (did you mean 'team-a'?)"},
      {"a ClusterQueue naming a missing ResourceFlavor",
       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
       "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
       "    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 1}]\n",
       8, "ResourceFlavor 'h100' does not exist"},
      {"cohorts whose parents form a cycle",
       "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\n"
       "spec: {parentName: b}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
       "metadata: {name: b}\nspec: {parentName: a}\n",
       4, "the Cohort parents form a cycle (a -> b -> a)"},
  };
  for (const Case& c : cases) {
    const std::string label = c.name;
    CAPTURE(label);
    Fixture f;
    f.load(c.yaml);
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    const std::string what = err->what();
    CAPTURE(what);
    CHECK(err->where().line == c.want_line);
    CHECK(err->message().find(c.want_message) != std::string::npos);
  }
}

TEST_CASE("Jobs take their Kueue labels to their pods, and pods name existing queues") {
  const std::string queues = std::string(kFlavor) + R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: q}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
---
)";
  auto job = [](const std::string& labels, const std::string& annotations) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  labels: {" + labels +
           "}\n  annotations: {capsim.io/duration: 1h" + annotations +
           "}\nspec:\n  parallelism: 4\n  template:\n    spec:\n      restartPolicy: Never\n"
           "      containers: [{name: c}]\n";
  };
  SUBCASE("the queue and the workload priority class come from the Job") {
    Fixture f;
    f.load(queues + job("kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: urgent",
                        ", capsim.io/gang: \"true\""));
    f.b.finalize();
    REQUIRE(f.world.jobs.size() == 1);
    const PodSpec& t = f.world.jobs[0].pod_template;
    CHECK(t.queue == "q");
    CHECK(label_value(t.labels, "kueue.x-k8s.io/priority-class", f.world.strings) == "urgent");
    REQUIRE(t.gang != kNoGang);  // capsim.io/gang: all 4 pods together
    CHECK(f.world.gangs[t.gang].min_member == 4);
  }
  SUBCASE("a workload priority class that does not exist") {
    Fixture f;
    f.load(queues + job("kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: urgnet", ""));
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    CHECK(err->where().line == 20);
    const std::string what = err->what();
    CAPTURE(what);
    CHECK(err->message().find("names WorkloadPriorityClass 'urgnet' (label "
                              "kueue.x-k8s.io/priority-class), which does not exist (did you mean "
                              "'urgent'?)") != std::string::npos);
  }
  SUBCASE("a queue-name label naming no LocalQueue") {
    Fixture f;
    f.load(queues + job("kueue.x-k8s.io/queue-name: nope", ""));
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    CHECK(err->message().find("names LocalQueue 'nope'") != std::string::npos);
  }
}

TEST_CASE("the kueue: section reads Kueue's configuration fields") {
  Fixture f;
  const YamlNode section = YamlNode::load_string(R"(
fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare]}
waitForPodsReady:
  enable: true
  timeout: 10m
  requeuingStrategy: {timestamp: Creation, backoffLimitCount: 3, backoffBaseSeconds: 30}
resources: {excludeResourcePrefixes: [example.com/]}
oneBorrowingAdmissionPerCohortPerCycle: false
)",
                                                 "s.yaml");
  load_kueue_section(
      section, f.b, [](const YamlNode& n) { return n.str(); }, &f.warnings);
  const KueueSettings& s = f.world.queues.settings;
  CHECK(s.fair_sharing);
  REQUIRE(s.preemption_strategies.size() == 1);
  CHECK(s.preemption_strategies[0] == FairSharingStrategy::kLessThanInitialShare);
  CHECK(s.wait_for_pods_ready);
  CHECK(s.pods_ready_timeout == 10 * kMinute);
  CHECK(!s.requeue_at_eviction_time);
  CHECK(s.backoff_limit_count == 3);
  CHECK(s.backoff_base == 30 * kSecond);
  CHECK(s.exclude_resource_prefixes == std::vector<std::string>{"example.com/"});
  CHECK(!s.one_borrowing_admission_per_cohort);

  Fixture g;
  auto err = input_error([&] {
    load_kueue_section(
        YamlNode::load_string("waitForPodsReady: {enable: true, timout: 1m}\n", "s.yaml"), g.b,
        [](const YamlNode& n) { return n.str(); }, &g.warnings);
  });
  REQUIRE(err.has_value());
  CHECK(err->where().line == 1);
  CHECK(err->message().find("unknown field 'timout' (did you mean 'timeout'?)") !=
        std::string::npos);
}

TEST_CASE("the kueue: section can point at a Kueue Configuration file") {
  Fixture f;
  const YamlNode section = YamlNode::load_string("config: kueue-config.yaml\n", "s.yaml");
  load_kueue_section(
      section, f.b,
      [](const YamlNode& n) {
        return std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/" + n.str();
      },
      &f.warnings);
  const KueueSettings& s = f.world.queues.settings;
  CHECK(s.wait_for_pods_ready);
  CHECK(s.pods_ready_timeout == 7 * kMinute);
  CHECK(s.backoff_base == 30 * kSecond);
  CHECK(s.fair_sharing);
}

}  // namespace capsim

namespace capsim {

namespace {

KueueSettings settings_from(const std::string& file, std::vector<std::string>* warnings) {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  load_kueue_section(
      YamlNode::load_string("config: " + file + "\n", "s.yaml"), b,
      [](const YamlNode& n) { return n.str(); }, warnings);
  return world.queues.settings;
}

}  // namespace

TEST_CASE("a v1beta2 Kueue Configuration turns a feature on by its section, as Kueue does") {
  // kueue #7583 and #7628 removed fairSharing.enable and waitForPodsReady.enable from v1beta2.
  const std::string dir = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/";
  std::vector<std::string> w1, w2;
  const KueueSettings v1 = settings_from(dir + "kueue-config.yaml", &w1);
  const KueueSettings v2 = settings_from(dir + "kueue-config-v1beta2.yaml", &w2);
  CHECK(v2.fair_sharing);
  CHECK(v2.wait_for_pods_ready);
  // The same meaning in both versions gives the same settings.
  CHECK(v1.fair_sharing == v2.fair_sharing);
  CHECK(v1.wait_for_pods_ready == v2.wait_for_pods_ready);
  CHECK(v1.pods_ready_timeout == v2.pods_ready_timeout);
  CHECK(v1.requeue_at_eviction_time == v2.requeue_at_eviction_time);
  CHECK(v1.backoff_base == v2.backoff_base);
  CHECK(v1.preemption_strategies == v2.preemption_strategies);
  CHECK(w2.empty());

  testing::ScratchDir tmp("kueue-v1beta2");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(tmp.file(name)) << text;
    return tmp.file(name);
  };
  // A leftover `enable: true` is ignored with a warning naming the field.
  std::vector<std::string> w3;
  const KueueSettings s3 =
      settings_from(write("a.yaml",
                          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                          "waitForPodsReady: {enable: true, timeout: 5m}\n"),
                    &w3);
  CHECK(s3.wait_for_pods_ready);
  REQUIRE(w3.size() == 1);
  CHECK(w3[0].find("waitForPodsReady.enable") != std::string::npos);
  // `enable: false` would mean the opposite of what Kueue does with the file: refused, located.
  std::vector<std::string> w4;
  auto err = input_error([&] {
    (void)settings_from(write("b.yaml",
                              "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                              "fairSharing:\n  enable: false\n"),
                        &w4);
  });
  REQUIRE(err.has_value());
  CHECK(err->where().line == 4);
  CHECK(err->message().find("remove the section to turn it off") != std::string::npos);
  // In v1beta1 `enable: false` keeps the feature off.
  std::vector<std::string> w5;
  const KueueSettings s5 =
      settings_from(write("c.yaml",
                          "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
                          "fairSharing: {enable: false}\n"),
                    &w5);
  CHECK(!s5.fair_sharing);
  auto bad = input_error([&] {
    (void)settings_from(
        write("d.yaml", "apiVersion: config.kueue.x-k8s.io/v2\nkind: Configuration\n"), &w5);
  });
  REQUIRE(bad.has_value());
  CHECK(bad->message().find("config.kueue.x-k8s.io/v1beta2") != std::string::npos);
}

}  // namespace capsim

namespace capsim {

TEST_CASE("resources.transformations load the same from v1beta1 and v1beta2 Configurations") {
  const std::string dir = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/";
  std::vector<std::string> w1, w2;
  World world1, world2;
  WorldBuilder b1{world1, GpuCatalog::builtin()}, b2{world2, GpuCatalog::builtin()};
  auto resolve = [](const YamlNode& n) { return n.str(); };
  load_kueue_section(
      YamlNode::load_string("config: " + dir + "kueue-config-transformations.yaml\n", "s.yaml"), b1,
      resolve, &w1);
  load_kueue_section(
      YamlNode::load_string("config: " + dir + "kueue-config-transformations-v1beta2.yaml\n",
                            "s.yaml"),
      b2, resolve, &w2);
  CHECK(w1.empty());
  CHECK(w2.empty());
  // Sorted by input name, the two files say the same: 1g.10gb -> 0.5 credit (500 x 10^-3,
  // kept at 10^9 precision: 500000000 / 10^9), Replace; 3g.40gb -> 2 credits, Retain.
  auto summary = [](const World& w) {
    std::vector<std::string> out;
    for (const auto& t : w.queues.settings.transformations) {
      std::string line = w.resources.name(t.input) + (t.replace ? " Replace" : " Retain");
      for (const auto& o : t.outputs) {
        line += fmt::format(" {}={}e-{}", w.resources.name(o.resource), o.factor, o.scale);
      }
      out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> want = {
      "nvidia.com/mig-1g.10gb Replace credits.capsim.io/gpu=500000000e-9",
      "nvidia.com/mig-3g.40gb Retain credits.capsim.io/gpu=2000000000e-9"};
  CHECK(summary(world1) == want);
  CHECK(summary(world2) == want);
  CHECK(world1.queues.settings.exclude_resource_prefixes ==
        world2.queues.settings.exclude_resource_prefixes);
}

TEST_CASE("a malformed resources section is refused at its line and field") {
  struct Case {
    const char* name;
    const char* text;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"an input transformed twice",
       "resources:\n  transformations:\n  - {input: a.io/x, outputs: {cpu: 1}}\n"
       "  - input: a.io/x\n    outputs: {cpu: 2}\n",
       4, "resource a.io/x is transformed twice (first at"},
      {"an unknown strategy",
       "resources:\n  transformations:\n  - input: a.io/x\n    strategy: Drop\n", 4, "Drop"},
      {"a negative output",
       "resources:\n  transformations:\n  - input: a.io/x\n    outputs: {cpu: -1}\n", 4,
       "negative"},
      {"an invalid resource name",
       "resources:\n  transformations:\n  - input: a.io/x\n    outputs: {\"bad name\": 1}\n", 4,
       "'bad name' is not a valid resource name"},
      {"a misspelled field",
       "resources:\n  transformations:\n  - input: a.io/x\n    output: {cpu: 1}\n", 4,
       "unknown field 'output'"},
      {"a missing input", "resources:\n  transformations:\n  - outputs: {cpu: 1}\n", 3, "input"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    World world;
    WorldBuilder b{world, GpuCatalog::builtin()};
    std::vector<std::string> warnings;
    auto err = input_error([&] {
      load_kueue_section(
          YamlNode::load_string(c.text, "s.yaml"), b, [](const YamlNode& n) { return n.str(); },
          &warnings);
    });
    REQUIRE(err.has_value());
    CHECK(err->where().line == c.line);
    CAPTURE(err->message());
    CHECK(err->message().find(c.message) != std::string::npos);
  }
  // deviceClassMappings is read; its sources are warned about by name, not dropped.
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::vector<std::string> warnings;
  load_kueue_section(
      YamlNode::load_string("resources:\n  deviceClassMappings:\n  - name: gpu.example.com\n"
                            "    deviceClassNames: [gpu.example.com, mig.example.com]\n"
                            "    sources: [{counters: {}}]\n",
                            "s.yaml"),
      b, [](const YamlNode& n) { return n.str(); }, &warnings);
  REQUIRE(world.queues.settings.device_class_mappings.size() == 1);
  CHECK(world.queues.settings.device_class_mappings[0].device_classes ==
        std::vector<std::string>{"gpu.example.com", "mig.example.com"});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("deviceClassMappings sources") != std::string::npos);
}

TEST_CASE("malformed deviceClassMappings are refused as Kueue's config validation refuses them") {
  struct Case {
    const char* name;
    const char* text;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"a resource mapped twice",
       "resources:\n  deviceClassMappings:\n  - {name: gpus, deviceClassNames: [a]}\n"
       "  - {name: gpus, deviceClassNames: [b]}\n",
       4, "resource gpus is mapped twice"},
      {"a device class mapped twice",
       "resources:\n  deviceClassMappings:\n  - {name: gpus, deviceClassNames: [a]}\n"
       "  - {name: more, deviceClassNames: [a]}\n",
       4, "device class a is mapped twice"},
      {"no device class",
       "resources:\n  deviceClassMappings:\n  - {name: gpus, deviceClassNames: []}\n", 3,
       "at least one device class name is required"},
      {"nine device classes",
       "resources:\n  deviceClassMappings:\n  - {name: gpus, deviceClassNames: [a, b, c, d, e, f, "
       "g, h, i]}\n",
       3, "9 device class names; Kueue allows at most 8"},
      {"an invalid name",
       "resources:\n  deviceClassMappings:\n  - {name: 'a b', deviceClassNames: [a]}\n", 3,
       "'a b' is not a valid resource name"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    World world;
    WorldBuilder b{world, GpuCatalog::builtin()};
    std::vector<std::string> warnings;
    auto err = input_error([&] {
      load_kueue_section(
          YamlNode::load_string(c.text, "s.yaml"), b, [](const YamlNode& n) { return n.str(); },
          &warnings);
    });
    REQUIRE(err.has_value());
    CHECK(err->where().line == c.line);
    CAPTURE(err->message());
    CHECK(err->message().find(c.message) != std::string::npos);
  }
}

}  // namespace capsim

namespace capsim {

TEST_CASE("a pod group's size is its kueue.x-k8s.io/pod-group-total-count") {
  // Kueue's plain pod groups (docs: "Run a group of plain Pods"): every member carries the label
  // kueue.x-k8s.io/pod-group-name and the annotation kueue.x-k8s.io/pod-group-total-count, and
  // Kueue admits the group once that many pods exist.
  const std::string queues = std::string(kFlavor) + R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: q}
)";
  // Pod `name` in group g, with `annotations` added to capsim.io/duration.
  auto pod = [](const std::string& name, const std::string& annotations) {
    return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
           "\n  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: g}\n"
           "  annotations: {capsim.io/duration: 1h" +
           annotations + "}\nspec:\n  containers: [{name: c}]\n";
  };
  const std::string total3 = ", kueue.x-k8s.io/pod-group-total-count: \"3\"";
  SUBCASE("every member gives the count: the group is that size") {
    Fixture f;
    f.load(queues + pod("a", total3) + pod("b", total3) + pod("c", total3));
    f.b.finalize();
    REQUIRE(f.world.pods[0].gang != kNoGang);
    CHECK(f.world.gangs[f.world.pods[0].gang].min_member == 3);
    CHECK(f.warnings.empty());
  }
  SUBCASE("fewer pods than the count: Kueue waits for the rest, and the load says so") {
    Fixture f;
    f.load(queues + pod("a", total3) + pod("b", total3));
    f.b.finalize();
    CHECK(f.world.gangs[f.world.pods[0].gang].min_member == 3);
    REQUIRE(f.warnings.size() == 1);
    CHECK(f.warnings[0].find("pod group g has 2 of its 3 pods") != std::string::npos);
  }
  SUBCASE("no count on any member: the group is the pods the files hold (capsim's departure)") {
    Fixture f;
    f.load(queues + pod("a", "") + pod("b", ""));
    f.b.finalize();
    CHECK(f.world.gangs[f.world.pods[0].gang].min_member == 2);
  }
  SUBCASE("members that disagree") {
    Fixture f;
    f.load(queues + pod("a", total3) + pod("b", ", kueue.x-k8s.io/pod-group-total-count: \"4\""));
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    CHECK(err->message().find("b gives pod group g a kueue.x-k8s.io/pod-group-total-count of 4, "
                              "a gives 3") != std::string::npos);
  }
  SUBCASE("a member without the count when others give it") {
    Fixture f;
    f.load(queues + pod("a", total3) + pod("b", "") + pod("c", total3));
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    CHECK(err->message().find("b is in pod group g without kueue.x-k8s.io/pod-group-total-count") !=
          std::string::npos);
  }
  SUBCASE("more pods than the count") {
    Fixture f;
    f.load(queues + pod("a", ", kueue.x-k8s.io/pod-group-total-count: \"1\"") +
           pod("b", ", kueue.x-k8s.io/pod-group-total-count: \"1\""));
    auto err = input_error([&] { f.b.finalize(); });
    REQUIRE(err.has_value());
    CHECK(
        err->message().find("pod group g has 2 pods but kueue.x-k8s.io/pod-group-total-count 1") !=
        std::string::npos);
  }
  SUBCASE("Kueue annotations capsim does not model are warned about by name") {
    Fixture f;
    f.load(queues +
           "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
           "  labels: {kueue.x-k8s.io/queue-name: q}\n"
           "  annotations: {capsim.io/duration: 1h, kueue.x-k8s.io/job-min-parallelism: \"2\"}\n"
           "spec:\n  parallelism: 4\n  template:\n    metadata:\n"
           "      annotations: {kueue.x-k8s.io/retriable-in-group: \"false\",\n"
           "                    kueue.x-k8s.io/job-min-parallelism: \"2\"}\n"
           "    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n");
    f.b.finalize();
    // The Job's own job-min-parallelism is modelled (partial admission); on the pod template
    // Kueue does not read it.
    REQUIRE(f.world.jobs.size() == 1);
    CHECK(f.world.jobs[0].min_parallelism == 2);
    REQUIRE(f.warnings.size() == 2);
    CHECK(f.warnings[0].find("annotation kueue.x-k8s.io/retriable-in-group is not modelled") !=
          std::string::npos);
    CHECK(f.warnings[1].find("kueue.x-k8s.io/job-min-parallelism applies to a Job that Kueue "
                             "admits on its own") != std::string::npos);
  }
}

}  // namespace capsim
