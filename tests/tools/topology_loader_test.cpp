// Topology input: the scenario's cluster.topology and a pool's topology: (levels as node labels,
// NVL72 racks from the catalog's NVLink domain size), Kueue's Topology kind and a
// ResourceFlavor's topologyName, and the PodSet annotations on pod templates. Every mistake names
// its file, line and field.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <string>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/kueue_manifests.hpp"
#include "tools/loaders/scenario_loader.hpp"

using namespace capsim;

namespace {

Scenario load(const std::string& scenario, const std::string& manifests = "") {
  MemoryFiles files;
  files.add("/s/scenario.yaml", scenario);
  if (!manifests.empty()) files.add("/s/m.yaml", manifests);
  return load_scenario("/s/scenario.yaml", LoadOptions{}, files);
}

std::optional<InputError> load_error(const std::string& scenario,
                                     const std::string& manifests = "") {
  try {
    (void)load(scenario, manifests);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

std::string label(const World& w, const NodeSpec& n, const std::string& key) {
  const Sym k = w.strings.find(key);
  const Sym v = k == kNoSym ? kNoSym : n.labels.get(k);
  return v == kNoSym ? "" : w.strings.str(v);
}

const char* kNvl72 = R"(name: t
cluster:
  pools:
    - name: nvl
      gpu: {model: GB200, count: 4}
      cpu: 144
      memory: 960Gi
      topology: {racks: 4, blocks: 2}
workload:
  synthetic:
    tenants:
      - {name: t1, rate_per_hour: 1, gpus: 1, duration: 10m}
)";

}  // namespace

TEST_CASE("A pool of NVL72 racks gets 18 nodes a rack, one NVLink clique each, racks in blocks") {
  const Scenario s = load(kNvl72);
  const World& w = *s.world;
  REQUIRE(w.nodes.size() == 72);  // 4 racks x GB200's 18 nodes per NVLink domain
  CHECK(label(w, w.nodes[0], "cloud.provider.com/topology-rack") == "nvl-rack-0");
  CHECK(label(w, w.nodes[17], "cloud.provider.com/topology-rack") == "nvl-rack-0");
  CHECK(label(w, w.nodes[18], "cloud.provider.com/topology-rack") == "nvl-rack-1");
  CHECK(label(w, w.nodes[17], "nvidia.com/gpu.clique") == "nvl-rack-0.0");
  CHECK(label(w, w.nodes[18], "nvidia.com/gpu.clique") == "nvl-rack-1.0");
  CHECK(label(w, w.nodes[35], "cloud.provider.com/topology-block") == "nvl-block-0");
  CHECK(label(w, w.nodes[36], "cloud.provider.com/topology-block") == "nvl-block-1");
  // The default levels, host last, and the spans they give.
  const ClusterTopology& t = w.topology;
  REQUIRE(t.levels.size() == 4);
  CHECK(t.levels[2].node_label == "nvidia.com/gpu.clique");
  CHECK(t.levels[3].node_label == "kubernetes.io/hostname");
  CHECK(t.span({0}) == 3);
  CHECK(t.span_name(t.span({0, 17})) == "nvlink");
  CHECK(t.span_name(t.span({0, 18})) == "block");
  CHECK(t.span_name(t.span({0, 36})) == "cluster");
  CHECK(t.factor(t.span({0, 36})) == 0.7);
  CHECK(t.factor(t.span({0, 18})) == 0.8);
}

TEST_CASE("NVL36 racks of GB200: nvlink_domain_nodes sets the NVLink domain's size") {
  std::string text = kNvl72;
  text.replace(text.find("topology: {racks: 4, blocks: 2}"), 31,
               "topology: {racks: 4, blocks: 2, nvlink_domain_nodes: 9}");
  const Scenario s = load(text);
  const World& w = *s.world;
  REQUIRE(w.nodes.size() == 36);  // 4 racks x 9 nodes: a rack is one NVL36 domain
  CHECK(label(w, w.nodes[8], "nvidia.com/gpu.clique") == "nvl-rack-0.0");
  CHECK(label(w, w.nodes[9], "nvidia.com/gpu.clique") == "nvl-rack-1.0");
  // Two NVL36 domains in one 18-node rack.
  text.replace(text.find("nvlink_domain_nodes: 9"), 22,
               "nvlink_domain_nodes: 9, nodes_per_rack: 18");
  const Scenario s2 = load(text);
  CHECK(label(*s2.world, s2.world->nodes[9], "nvidia.com/gpu.clique") == "nvl-rack-0.1");
  CHECK(label(*s2.world, s2.world->nodes[18], "nvidia.com/gpu.clique") == "nvl-rack-1.0");
}

TEST_CASE("A scenario without topology adds no topology labels and no levels") {
  std::string plain = kNvl72;
  plain.replace(plain.find("      topology: {racks: 4, blocks: 2}\n"),
                std::string("      topology: {racks: 4, blocks: 2}\n").size(), "      count: 2\n");
  const Scenario s = load(plain);
  CHECK_FALSE(s.world->topology.enabled());
  CHECK(s.world->strings.find("nvidia.com/gpu.clique") == kNoSym);
}

TEST_CASE("Mistakes in the topology sections are reported at their line and field") {
  struct Case {
    const char* name;
    std::string from, to;
    int line;
    const char* field;
    const char* message;
  };
  const std::string topo = "      topology: {racks: 4, blocks: 2}\n";
  const Case cases[] = {
      {"racks that do not split into blocks", topo, "      topology: {racks: 3, blocks: 2}\n", 8,
       "cluster.pools[0].topology.blocks", "3 racks do not split evenly into 2 blocks"},
      {"a count that is not racks x nodes", topo, topo + "      count: 10\n", 9,
       "cluster.pools[0].count", "count 10 is not racks x nodes_per_rack = 4 x 18"},
      {"a rack of part of an NVLink domain", topo,
       "      topology: {racks: 4, nodes_per_rack: 9}\n", 8,
       "cluster.pools[0].topology.nodes_per_rack", "no whole number of GB200's NVLink domains"},
      {"an NVLink domain larger than the model's", topo,
       "      topology: {racks: 4, nvlink_domain_nodes: 36}\n", 8,
       "cluster.pools[0].topology.nvlink_domain_nodes",
       "36 is out of range: it must be between 1 and 18"},
      {"a rack of part of a smaller NVLink domain", topo,
       "      topology: {racks: 4, nvlink_domain_nodes: 9, nodes_per_rack: 12}\n", 8,
       "cluster.pools[0].topology.nodes_per_rack", "no whole number of GB200's NVLink domains (9"},
      {"an NVLink domain on a model whose domain is the node",
       "GB200, count: 4}\n      cpu: 144\n      memory: 960Gi\n" + topo,
       "H100-80GB, count: 8}\n      cpu: 144\n      memory: 960Gi\n"
       "      topology: {racks: 4, nodes_per_rack: 2, nvlink_domain_nodes: 2}\n",
       8, "cluster.pools[0].topology.nvlink_domain_nodes",
       "H100-80GB has no NVLink domain across nodes"},
      {"a misspelt topology field", topo, "      topology: {racks: 4, block: 2}\n", 8,
       "cluster.pools[0].topology.block", "unknown field 'block'"},
      {"a slowdown for a level that does not exist", "cluster:\n",
       "cluster:\n  topology: {slowdown: {racks: 0.9}}\n", 3, "cluster.topology.slowdown.racks",
       "'racks' is not a level"},
      {"a slowdown above 1", "cluster:\n", "cluster:\n  topology: {slowdown: {block: 1.5}}\n", 3,
       "cluster.topology.slowdown.block", ""},
      {"the host level not last", "cluster:\n",
       "cluster:\n  topology:\n    levels:\n      - {name: host, node_label: "
       "kubernetes.io/hostname}\n"
       "      - {name: rack, node_label: r}\n",
       6, "cluster.topology.levels[1].node_label", "is the lowest level; list it last"},
  };
  for (const Case& c : cases) {
    const std::string label_text = c.name;
    CAPTURE(label_text);
    std::string text = kNvl72;
    text.replace(text.find(c.from), c.from.size(), c.to);
    auto err = load_error(text);
    REQUIRE(err.has_value());
    CAPTURE(std::string(err->what()));
    CHECK(err->where().line == c.line);
    CHECK(err->where().field == c.field);
    CHECK(err->message().find(c.message) != std::string::npos);
  }
}

TEST_CASE("Kueue's Topology and a flavor's topologyName load, with their mistakes located") {
  const std::string head = R"(name: t
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: B200, count: 8}, cpu: 8, memory: 64Gi}
manifests: [m.yaml]
)";
  const std::string topology = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: default}
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {topologyName: default}
)";
  const Scenario s = load(head, topology);
  REQUIRE(s.world->queues.topologies.size() == 1);
  CHECK(s.world->queues.topologies[0].levels.size() == 2);
  REQUIRE(s.world->queues.flavors.size() == 1);
  CHECK(s.world->queues.flavors[0].topology == 0);

  // A flavor naming a Topology nobody defined.
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  const std::string missing =
      replace(topology, "spec: {topologyName: default}", "spec: {topologyName: defualt}");
  auto err = load_error(head, missing);
  REQUIRE(err.has_value());
  CHECK(err->where().file == "/s/m.yaml");
  CHECK(err->where().line == 12);
  CHECK(err->message().find("names Topology 'defualt', which does not exist (did you mean "
                            "'default'?)") != std::string::npos);
  // The hostname above another level.
  const std::string order =
      replace(replace(topology, "  - nodeLabel: cloud.provider.com/topology-block\n", ""),
              "  - nodeLabel: kubernetes.io/hostname\n",
              "  - nodeLabel: kubernetes.io/hostname\n  - nodeLabel: rack\n");
  err = load_error(head, order);
  REQUIRE(err.has_value());
  CHECK(err->where().line == 7);
  CHECK(err->message().find("kubernetes.io/hostname can only be the lowest level") !=
        std::string::npos);
}

TEST_CASE(
    "PodSet topology annotations are read from a Job's template, and contradictions refused") {
  const std::string head = R"(name: t
cluster:
  pools:
    - {name: n, count: 1, gpu: {model: B200, count: 8}, cpu: 8, memory: 64Gi}
manifests: [m.yaml]
)";
  auto job = [](const std::string& annotations) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
           "  annotations: {capsim.io/duration: 1h}\nspec:\n  parallelism: 4\n"
           "  template:\n    metadata:\n      annotations: {" +
           annotations +
           "}\n    spec:\n      restartPolicy: Never\n      containers:\n"
           "      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  };
  const Scenario s =
      load(head, job("kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack, "
                     "kueue.x-k8s.io/podset-slice-required-topology: kubernetes.io/hostname, "
                     "kueue.x-k8s.io/podset-slice-size: \"2\""));
  REQUIRE(s.world->jobs.size() == 1);
  const TopologyRequest& t = *s.world->jobs[0].pod_template.topology;
  CHECK(t.mode == TopologyMode::kRequired);
  CHECK(t.level == "cloud.provider.com/topology-rack");
  CHECK(t.slice_level == "kubernetes.io/hostname");
  CHECK(t.slice_size == 2);

  auto err = load_error(head, job("kueue.x-k8s.io/podset-required-topology: a, "
                                  "kueue.x-k8s.io/podset-preferred-topology: b"));
  REQUIRE(err.has_value());
  CHECK(err->where().line == 10);
  CHECK(err->message().find("only one of podset-required-topology") != std::string::npos);
  err = load_error(head, job("kueue.x-k8s.io/podset-slice-size: \"2\""));
  REQUIRE(err.has_value());
  CHECK(err->message().find("needs kueue.x-k8s.io/podset-slice-required-topology") !=
        std::string::npos);
  err = load_error(head, job("kueue.x-k8s.io/podset-unconstrained-topology: \"yes\""));
  REQUIRE(err.has_value());
  CHECK(err->message().find("is \"true\" or \"false\"") != std::string::npos);
}
