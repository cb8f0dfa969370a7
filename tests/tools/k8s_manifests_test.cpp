// Kubernetes manifests (Node, Pod, Job, PriorityClass, List) load into the World with Kubernetes'
// defaulting and validation, and every mistake is reported at its file, line and field.
#include "tools/loaders/k8s_manifests.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {
// Every file these tests read comes from disk; the reads it records are not looked at.
RealFiles disk;

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
const std::string kData = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/";

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};
  std::vector<std::string> warnings;
  ManifestOptions opt;

  Fixture() { opt.warnings = &warnings; }

  void load(const std::string& text) {
    load_manifest_docs(YamlNode::load_all_string(text, "m.yaml"), b, opt);
  }
  std::string label(const LabelSet& l, const std::string& key) const {
    return label_value(l, key, world.strings).value_or("<absent>");
  }
};

template <typename F>
std::optional<InputError> input_error(F&& f) {
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

// A pod with the annotations every bare pod needs, and `spec` (indented by 2) appended.
std::string pod(const std::string& spec, const std::string& name = "p") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  annotations: {capsim.io/duration: 1h}\nspec:\n" + spec;
}

TEST_CASE("a Node with the GFD product label resolves to the catalog model") {
  Fixture f;
  load_manifest_file(disk, kData + "cluster.yaml", f.b, f.opt);
  REQUIRE(f.world.nodes.size() == 2);
  const NodeSpec& n = f.world.nodes[0];
  CHECK(n.name == "gpu-node-1");
  REQUIRE(n.gpu_model != kNoGpuModel);
  CHECK(f.world.gpu_models[n.gpu_model].name == "A100-80GB");
  CHECK(n.gpu_count == 8);
  CHECK(n.capacity[kCpu] == 96000);
  CHECK(n.allocatable[kCpu] == 95690);
  CHECK(n.allocatable[kMemory] == 1130 * kGi);
  // Not listed in allocatable: defaults to capacity.
  CHECK(n.allocatable[kEphemeralStorage] == 7 * 1024 * kGi);
  CHECK(n.allocatable[kPods] == 110);
  CHECK(n.allocatable[kNvidiaGpu] == 8);
  CHECK(n.pool == "p4de.24xlarge");  // from node.kubernetes.io/instance-type
  CHECK(n.price_per_hour == doctest::Approx(40.96));
  REQUIRE(n.taints.size() == 1);
  CHECK(f.world.strings.str(n.taints[0].key) == "nvidia.com/gpu");
  CHECK(f.label(n.labels, "topology.kubernetes.io/zone") == "us-east-1a");
  CHECK(f.label(n.labels, "nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-80GB");
  CHECK_FALSE(f.world.resources.find("hugepages-1Gi").has_value());  // "0" is not interned

  const NodeSpec& c = f.world.nodes[1];
  CHECK(c.gpu_count == 0);
  CHECK(c.gpu_model == kNoGpuModel);
  CHECK(c.unschedulable);
  CHECK(c.pool == "cpu");
  CHECK(c.allocatable[kMemory] == 128 * kGi);
  CHECK(c.source == kData + "cluster.yaml:50");

  REQUIRE(f.world.priority_classes.size() == 1);
  CHECK(f.world.priority_classes[0].value == 1000);
  CHECK(f.world.priority_classes[0].preemption_policy == PreemptionPolicy::kNever);
  CHECK(f.warnings.empty());
}

TEST_CASE("capsim.io/gpu-model overrides the product label and time-sliced GPUs are divided") {
  Fixture f;
  f.load(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: ts\n  labels:\n"
      "    nvidia.com/gpu.product: NVIDIA-GeForce-RTX-4090-SHARED\n"
      "    capsim.io/gpu-model: H100-80GB\n"
      "    nvidia.com/gpu.sharing-strategy: time-slicing\n"
      "    nvidia.com/gpu.replicas: \"4\"\n"
      "status:\n  capacity: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"32\"}\n");
  const NodeSpec& n = f.world.nodes.at(0);
  CHECK(f.world.gpu_models[n.gpu_model].name == "H100-80GB");
  CHECK(n.gpu_count == 8);              // 32 advertised / 4 replicas
  CHECK(n.capacity[kNvidiaGpu] == 32);  // what the scheduler counts
  CHECK(n.sharing == GpuSharing::kTimeSlicing);
}

TEST_CASE(
    "a Pod's requests follow Kubernetes: limits default requests, init containers take the "
    "max, sidecars and overhead add") {
  Fixture f;
  f.load(
      pod("  containers:\n"
          "    - name: a\n"
          "      resources:\n"
          "        requests: {cpu: 500m, memory: 1Gi}\n"
          "        limits: {cpu: \"1\", nvidia.com/gpu: 2}\n"  // gpu request = limit
          "    - name: b\n"
          "      resources: {requests: {cpu: 250m, memory: 3Gi}}\n"
          "  initContainers:\n"
          "    - name: download\n"
          "      resources: {requests: {cpu: \"2\", memory: 1Gi}}\n"
          "    - name: proxy\n"
          "      restartPolicy: Always\n"
          "      resources: {requests: {cpu: 100m, memory: 512Mi}}\n"
          "    - name: migrate\n"
          "      resources: {requests: {cpu: 200m, memory: 5Gi}}\n"
          "  overhead: {cpu: 50m, memory: 64Mi}\n"));
  REQUIRE(f.world.pods.size() == 1);
  const PodSpec& p = f.world.pods[0];
  // cpu: containers 500+250 + sidecar 100 = 850; inits: download 2000, migrate 200+100 = 300;
  //      max(850, 2000) = 2000; + overhead 50 = 2050.
  CHECK(p.requests.get(kCpu) == 2050);
  // memory: containers 1+3 Gi + sidecar 0.5 Gi = 4.5 Gi; inits: download 1 Gi,
  //         migrate 5 Gi + 0.5 Gi = 5.5 Gi; max = 5.5 Gi; + 64 Mi.
  CHECK(p.requests.get(kMemory) == 5 * kGi + 512 * 1024 * 1024 + 64 * 1024 * 1024);
  CHECK(p.requests.get(kNvidiaGpu) == 2);
  CHECK(p.gpu_count == 2);
}

TEST_CASE("each request rule changes the pod's cpu request as Kubernetes computes it") {
  struct Case {
    const char* name;
    std::string spec;  // under `spec:`
    std::int64_t want_cpu_milli;
  };
  const std::string c1 = "  containers: [{resources: {requests: {cpu: \"1\"}}}]\n";
  const std::vector<Case> cases = {
      {"one container", c1, 1000},
      {"containers add: 1000 + 300",
       "  containers:\n    - resources: {requests: {cpu: \"1\"}}\n"
       "    - resources: {requests: {cpu: 300m}}\n",
       1300},
      {"limit only sets the request", "  containers: [{resources: {limits: {cpu: 700m}}}]\n", 700},
      {"request below limit stays",
       "  containers: [{resources: {requests: {cpu: 200m}, "
       "limits: {cpu: \"2\"}}}]\n",
       200},
      {"smaller init container: max(1000, 400)",
       c1 + "  initContainers: [{resources: {requests: {cpu: 400m}}}]\n", 1000},
      {"larger init container: max(1000, 3000)",
       c1 + "  initContainers: [{resources: {requests: {cpu: \"3\"}}}]\n", 3000},
      {"init containers do not add: max(1000, 1500, 1200)",
       c1 + "  initContainers:\n    - resources: {requests: {cpu: 1500m}}\n"
            "    - resources: {requests: {cpu: 1200m}}\n",
       1500},
      {"a sidecar adds to the containers: 1000 + 500",
       c1 + "  initContainers: [{restartPolicy: Always, resources: {requests: {cpu: 500m}}}]\n",
       1500},
      {"a sidecar runs beside later inits: max(1000 + 500, 500 + 1200)",
       c1 + "  initContainers:\n"
            "    - {restartPolicy: Always, resources: {requests: {cpu: 500m}}}\n"
            "    - resources: {requests: {cpu: 1200m}}\n",
       1700},
      {"a sidecar after an init does not add to it: max(1000 + 500, 1200, 500)",
       c1 + "  initContainers:\n"
            "    - resources: {requests: {cpu: 1200m}}\n"
            "    - {restartPolicy: Always, resources: {requests: {cpu: 500m}}}\n",
       1500},
      {"overhead adds last: 1000 + 250", c1 + "  overhead: {cpu: 250m}\n", 1250},
      {"pod-level request replaces the total", c1 + "  resources: {requests: {cpu: \"2\"}}\n",
       2000},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    f.load(pod(c.spec));
    REQUIRE(f.world.pods.size() == 1);
    CHECK(f.world.pods[0].requests.get(kCpu) == c.want_cpu_milli);
  }
}

TEST_CASE("pod-level resources replace the containers' cpu and memory total") {
  Fixture f;
  f.load(
      pod("  resources: {requests: {cpu: \"4\"}, limits: {memory: 8Gi}}\n"
          "  containers:\n"
          "    - resources: {requests: {cpu: \"1\", memory: 2Gi}}\n"));
  const PodSpec& p = f.world.pods.at(0);
  CHECK(p.requests.get(kCpu) == 4000);
  CHECK(p.requests.get(kMemory) == 8 * kGi);  // the pod-level limit defaults the request
}

TEST_CASE("a bare Pod reads metadata, placement, priority and the capsim annotations") {
  Fixture f;
  f.load(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
      "value: 5000\n---\n"
      "apiVersion: v1\nkind: Pod\n"
      "metadata:\n"
      "  name: p1\n  namespace: ml\n"
      "  labels: {app: train, kueue.x-k8s.io/queue-name: lq}\n"
      "  annotations:\n"
      "    capsim.io/arrival: 1h30m\n    capsim.io/duration: \"7200\"\n"
      "    capsim.io/gpu-util: \"0.5\"\n    capsim.io/gpu-memory: 40Gi\n"
      "    capsim.io/fails: \"true\"\n    capsim.io/queue: ignored-because-of-the-label\n"
      "    kubectl.kubernetes.io/last-applied-configuration: '{\"kind\":\"Pod\"}'\n"
      "  uid: 1234\n  creationTimestamp: \"2024-05-01T00:00:00Z\"\n"
      "  ownerReferences: [{kind: Job, name: x}]\n"
      "spec:\n"
      "  priorityClassName: high\n"
      "  priority: 5000\n"
      "  preemptionPolicy: Never\n"
      "  restartPolicy: OnFailure\n"
      "  terminationGracePeriodSeconds: 5\n"
      "  schedulerName: default-scheduler\n"
      "  serviceAccountName: trainer\n"
      "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-B200}\n"
      "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "  affinity:\n"
      "    nodeAffinity:\n"
      "      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "        - {weight: 10, preference: {matchExpressions: [{key: spot, operator: "
      "DoesNotExist}]}}\n"
      "    podAntiAffinity: {}\n"
      "  volumes: [{name: data, emptyDir: {}}]\n"
      "  containers:\n"
      "    - name: main\n      image: busybox\n      command: [sleep, \"3600\"]\n"
      "      env: [{name: A, value: b}]\n      volumeMounts: [{name: data, mountPath: /d}]\n"
      "      resources: {limits: {nvidia.com/gpu: 1}}\n"
      "status: {phase: Pending}\n");
  f.b.finalize();
  REQUIRE(f.world.pods.size() == 1);
  const PodSpec& p = f.world.pods[0];
  CHECK(p.name == "p1");
  CHECK(p.namespace_ == "ml");
  CHECK(p.queue == "lq");  // the Kueue label wins over the annotation
  CHECK(f.label(p.labels, "app") == "train");
  CHECK(*p.priority_class == "high");
  CHECK(p.priority == 5000);  // from the class, after finalize()
  CHECK(p.preemption_policy == PreemptionPolicy::kNever);
  CHECK(p.restart_policy == RestartPolicy::kOnFailure);
  CHECK(p.termination_grace == 5 * kSecond);
  CHECK(p.arrival == 90 * kMinute);
  CHECK(p.duration == 2 * kHour);
  CHECK(p.gpu_util == doctest::Approx(0.5));
  CHECK(p.gpu_memory_used == 40 * kGi);
  CHECK(p.fails);
  CHECK_FALSE(p.requeue_on_preemption);  // nothing recreates a bare pod
  CHECK(f.label(p.node_selector, "nvidia.com/gpu.product") == "NVIDIA-B200");
  REQUIRE(p.tolerations.size() == 1);
  CHECK(p.tolerations[0].op == TolerationOp::kExists);
  REQUIRE(p.affinity->preferred.size() == 1);
  CHECK(p.affinity->preferred[0].weight == 10);
  CHECK_FALSE(p.affinity->required.has_value());
  // An empty podAntiAffinity is read (InterPodAffinity models it) and holds no term.
  CHECK(p.pod_rules->anti_affinity.empty());
  CHECK(f.warnings.empty());
}

TEST_CASE(
    "a pod's queue falls back to the capsim.io/queue annotation, then the namespace; a "
    "class-less priority is kept") {
  Fixture f;
  f.load(pod("  priority: 42\n  containers: [{name: c}]\n", "a") + "---\n" +
         "apiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  namespace: team-x\n"
         "  annotations: {capsim.io/long-running: \"true\"}\nspec:\n  containers: [{name: c}]\n" +
         "---\n" +
         "apiVersion: v1\nkind: Pod\nmetadata:\n  name: c\n"
         "  annotations: {capsim.io/duration: 10m, capsim.io/queue: q1, capsim.io/gpu-milli: "
         "\"250\"}\nspec:\n  containers: [{name: c}]\n");
  f.b.finalize();
  REQUIRE(f.world.pods.size() == 3);
  CHECK(f.world.pods[0].queue == "default");
  CHECK(f.world.pods[0].priority == 42);
  CHECK(f.world.pods[0].restart_policy == RestartPolicy::kAlways);  // the Pod default
  CHECK(f.world.pods[1].queue == "team-x");
  CHECK(f.world.pods[1].duration == kEndOfTime);
  CHECK(f.world.pods[2].queue == "q1");
  CHECK(f.world.pods[2].gpu_milli == 250);
}

TEST_CASE("a List file holds a Pod and a Job; the Job's fields and template are read") {
  Fixture f;
  load_manifest_file(disk, kData + "cluster.yaml", f.b, f.opt);
  load_manifest_file(disk, kData + "workload.yaml", f.b, f.opt);
  f.b.finalize();
  REQUIRE(f.world.pods.size() == 1);
  const PodSpec& nb = f.world.pods[0];
  CHECK(nb.name == "notebook");
  CHECK(nb.queue == "research");
  CHECK(nb.arrival == 10 * kMinute);
  CHECK(nb.duration == 2 * kHour);
  CHECK(nb.requests.get(kNvidiaGpu) == 1);
  CHECK(nb.requests.get(kCpu) == 4000);
  CHECK(nb.requests.get(kMemory) == 16 * kGi);
  CHECK(nb.gpu_util == doctest::Approx(0.25));

  REQUIRE(f.world.jobs.size() == 1);
  const JobSpec& j = f.world.jobs[0];
  CHECK(j.name == "train");
  CHECK(j.queue == "team-a-queue");
  CHECK(j.arrival == kHour);
  CHECK(j.parallelism == 4);
  CHECK(j.completions == 8);
  const PodSpec& t = j.pod_template;
  CHECK(t.name == "train");
  CHECK(t.namespace_ == "team-a");
  CHECK(t.duration == 30 * kMinute);  // from the template's annotation
  CHECK(t.max_restarts == 2);         // backoffLimit
  CHECK(t.requeue_on_preemption);
  CHECK(t.restart_policy == RestartPolicy::kOnFailure);
  CHECK(t.requests.get(kCpu) == 12000);
  CHECK(t.requests.get(kMemory) == 100 * kGi);
  CHECK(t.gpu_count == 2);
  CHECK(t.priority == 1000);  // class "training" from cluster.yaml
  CHECK(t.preemption_policy == PreemptionPolicy::kNever);
  CHECK(f.label(t.labels, "batch.kubernetes.io/job-name") == "train");
}

TEST_CASE("a Job without completions runs parallelism pods; backoffLimit defaults to 6") {
  Fixture f;
  f.load(
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: wq\n"
      "  annotations: {capsim.io/duration: 5m}\n"
      "spec:\n  parallelism: 3\n  suspend: true\n  completionMode: NonIndexed\n"
      "  ttlSecondsAfterFinished: 60\n"
      "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: w}]\n");
  REQUIRE(f.world.jobs.size() == 1);
  CHECK(f.world.jobs[0].parallelism == 3);
  CHECK(f.world.jobs[0].completions == 3);
  CHECK(f.world.jobs[0].pod_template.max_restarts == 6);
  CHECK(f.world.jobs[0].queue == "default");
}

TEST_CASE("typed lists (PodList) give their items a kind") {
  Fixture f;
  f.load(
      "apiVersion: v1\nkind: PodList\nitems:\n"
      "  - metadata: {name: x, annotations: {capsim.io/duration: 1m}}\n"
      "    spec: {containers: [{name: c}]}\n");
  REQUIRE(f.world.pods.size() == 1);
  CHECK(f.world.pods[0].name == "x");
}

TEST_CASE("new kinds plug in through the options or the registry without changing the loader") {
  Fixture f;
  std::vector<std::string> seen;
  f.opt.extra_kinds.push_back(ManifestKind{"kueue.x-k8s.io",
                                           "ResourceFlavor",
                                           {"v1beta2", "v1beta1"},
                                           [&](MapReader& doc, ManifestContext& ctx) {
                                             const ObjectMeta m = parse_object_meta(
                                                 doc.req("metadata"), ctx.builder, false, {});
                                             doc.ignore("spec");
                                             seen.push_back(ctx.api_version + " " + m.name);
                                           }});
  f.load(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
      "spec: {nodeLabels: {x: y}}\n");
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == "kueue.x-k8s.io/v1beta1 a100");
  const auto kinds = supported_manifest_kinds(f.opt);
  CHECK(std::find(kinds.begin(), kinds.end(), "kueue.x-k8s.io/v1beta2 ResourceFlavor") !=
        kinds.end());

  // Unknown fields are still errors for the new kind: the loader finishes the document.
  auto e = input_error([&] {
    f.load(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: b}\n"
        "spek: {}\n");
  });
  REQUIRE(e);
  CHECK(e->where().line == 4);
  CHECK(contains(e->message(), "did you mean 'spec'"));

  // A kind table is a value: the core kinds plus a new one, for this load only.
  int calls = 0;
  ManifestKinds table = core_manifest_kinds();
  table.push_back(
      ManifestKind{"test.capsim.io", "Widget", {"v1"}, [&calls](MapReader& doc, ManifestContext&) {
                     doc.ignore("metadata");
                     ++calls;
                   }});
  Fixture g;
  g.opt.kinds = &table;
  g.load("apiVersion: test.capsim.io/v1\nkind: Widget\nmetadata: {name: w}\n");
  CHECK(calls == 1);
  Fixture h;  // other loads do not see it
  CHECK(input_error(
      [&] { h.load("apiVersion: test.capsim.io/v1\nkind: Widget\nmetadata: {name: w}\n"); }));
}

TEST_CASE("unknown kinds can be skipped with a warning") {
  Fixture f;
  f.opt.skip_unknown_kinds = true;
  f.load("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: d}\nspec: {}\n");
  REQUIRE(f.warnings.size() == 1);
  CHECK(contains(f.warnings[0], "m.yaml:2"));
  CHECK(contains(f.warnings[0], "Widget"));
}

TEST_CASE("malformed manifests are rejected with file, line and field") {
  const std::string node_head = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n";
  struct Case {
    const char* name;
    std::string yaml;
    int want_line;
    const char* want_field;
    std::vector<const char*> want_parts;
  };
  const std::vector<Case> cases = {
      {"typo in a PodSpec field",
       pod("  nodeSelecter: {a: b}\n  containers: [{name: c}]\n"),
       7,
       "spec.nodeSelecter",
       {"unknown field 'nodeSelecter'", "did you mean 'nodeSelector'"}},
      {"typo in a container field",
       pod("  containers:\n    - name: c\n      resource: {limits: {cpu: 1}}\n"),
       9,
       "spec.containers[0].resource",
       {"did you mean 'resources'"}},
      {"unknown kind",
       "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: d}\n",
       2,
       "kind",
       {"unknown kind 'Widget'", "v1 Node", "v1 Pod", "batch/v1 Job", "apps/v1 Deployment",
        "scheduling.k8s.io/v1 PriorityClass"}},
      {"kind in the wrong API group",
       "apiVersion: v1\nkind: Job\nmetadata: {name: j}\n",
       1,
       "apiVersion",
       {"kind Job is served by apiVersion batch/v1"}},
      {"unsupported version",
       "apiVersion: batch/v2\nkind: Job\nmetadata: {name: j}\n",
       1,
       "apiVersion",
       {"batch/v1"}},
      {"fractional GPU limit",
       pod("  containers:\n    - resources: {limits: {nvidia.com/gpu: 0.5}}\n"),
       8,
       "spec.containers[0].resources.limits.nvidia.com/gpu",
       {"'0.5' is not a whole number"}},
      {"negative cpu request",
       pod("  containers:\n    - resources: {requests: {cpu: -1}}\n"),
       8,
       "spec.containers[0].resources.requests.cpu",
       {"negative"}},
      {"malformed memory quantity",
       pod("  containers:\n    - resources: {requests: {memory: 500x}}\n"),
       8,
       "spec.containers[0].resources.requests.memory",
       {"unknown suffix 'x'"}},
      {"GPU request without a limit",
       pod("  containers:\n    - resources: {requests: {nvidia.com/gpu: 1}}\n"),
       8,
       "spec.containers[0].resources.requests.nvidia.com/gpu",
       {"needs a limit equal to its request"}},
      {"request above limit",
       pod("  containers:\n    - resources: {requests: {cpu: \"2\"}, limits: {cpu: \"1\"}}\n"),
       8,
       "spec.containers[0].resources.requests.cpu",
       {"more than its limit"}},
      {"Exists toleration with a value",
       pod("  tolerations:\n    - {key: a, operator: Exists, value: b}\n"
           "  containers: [{name: c}]\n"),
       8,
       "spec.tolerations[0].value",
       {"value must be empty when operator is 'Exists'"}},
      {"unknown selector operator",
       pod("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
           "        nodeSelectorTerms:\n          - matchExpressions: [{key: a, operator: Has}]\n"
           "  containers: [{name: c}]\n"),
       11,
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].operator",
       {"unknown operator 'Has'"}},
      {"pod without a duration",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c}]\n",
       4,
       "metadata",
       {"has no run time", "annotation capsim.io/duration", "capsim.io/long-running",
        "durations section"}},
      {"misspelt capsim annotation",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
       "    capsim.io/duraton: 1h\nspec:\n  containers: [{name: c}]\n",
       6,
       "metadata.annotations.capsim.io/duraton",
       {"did you mean 'capsim.io/duration'"}},
      {"GPU util above 1",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
       "    capsim.io/duration: 1h\n    capsim.io/gpu-util: \"1.5\"\nspec:\n"
       "  containers: [{name: c}]\n",
       7,
       "metadata.annotations.capsim.io/gpu-util",
       {"between 0 and 1"}},
      {"unknown GPU product label",
       node_head + "  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-81GB}\n"
                   "status:\n  capacity: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"8\"}\n",
       5,
       "metadata.labels.nvidia.com/gpu.product",
       {"unknown GPU product 'NVIDIA-A100-SXM4-81GB'", "did you mean", "capsim.io/gpu-model"}},
      {"GPU node without a model",
       node_head + "status:\n  capacity: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"8\"}\n",
       6,
       "status.capacity",
       {"no GPU model", "nvidia.com/gpu.product", "capsim.io/gpu-model"}},
      {"node without memory",
       node_head + "status:\n  capacity: {cpu: \"8\"}\n",
       6,
       "status.capacity",
       {"needs cpu and memory"}},
      {"allocatable above capacity",
       node_head + "status:\n  capacity: {cpu: \"8\", memory: 64Gi}\n"
                   "  allocatable: {cpu: \"9\"}\n",
       7,
       "status.allocatable.cpu",
       {"more than capacity"}},
      {"Job template with restartPolicy Always",
       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
       "  annotations: {capsim.io/duration: 1h}\n"
       "spec:\n  template:\n    spec:\n      containers: [{name: c}]\n",
       9,
       "spec.template.spec",
       {"restartPolicy OnFailure or Never"}},
      {"Job annotations that disagree with its template",
       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
       "  annotations: {capsim.io/duration: 1h}\n"
       "spec:\n  template:\n    metadata:\n      annotations: {capsim.io/duration: 2h}\n"
       "    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n",
       9,
       "spec.template.metadata.annotations.capsim.io/duration",
       {"also set on the Job"}},
      {"duplicate pod name",
       pod("  containers: [{name: c}]\n", "same") + "---\n" +
           pod("  containers: [{name: c}]\n", "same"),
       9,
       "",
       {"duplicate pod 'default/same'", "m.yaml:1"}},
      {"missing kind",
       "apiVersion: v1\nmetadata: {name: x}\n",
       1,
       "",
       {"missing required field 'kind'"}},
      {"PriorityClass without value",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
       "metadata: {name: x}\n",
       1,
       "",
       {"missing required field 'value'"}},
      // Names the API server refuses (apimachinery's IsDNS1123Subdomain and IsDNS1123Label).
      {"a Pod name in upper case",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: Trainer-0\n",
       4,
       "metadata.name",
       {"metadata.name 'Trainer-0' is one the API server refuses", "lowercase RFC 1123 subdomain"}},
      {"a Node name with an underscore",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu_node_1\n",
       4,
       "metadata.name",
       {"'gpu_node_1'", "lowercase RFC 1123 subdomain"}},
      {"a Job name ending in a dash",
       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-\n",
       4,
       "metadata.name",
       {"'train-'", "starting and ending with an alphanumeric"}},
      {"a name of 254 characters",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + std::string(254, 'a') + "\n",
       4,
       "metadata.name",
       {"no more than 253 characters (it has 254)"}},
      {"a namespace with a dot",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: team.a\n",
       5,
       "metadata.namespace",
       {"metadata.namespace 'team.a'", "lowercase RFC 1123 label"}},
      {"a Namespace named with a dot",
       "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team.a\n",
       4,
       "metadata",
       {"Namespace 'team.a'", "lowercase RFC 1123 label"}},
      {"a generateName that makes refused names",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: Worker-\n",
       4,
       "metadata.generateName",
       {"metadata.generateName 'Worker-' makes names like 'Worker-"}},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e = input_error([&] { f.load(c.yaml); });
    REQUIRE(e);
    CHECK(e->kind() == InputErrorKind::kInvalid);
    CHECK(e->where().file == "m.yaml");
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    for (const char* part : c.want_parts) {
      INFO(std::string(part));
      CHECK(contains(e->message(), part));
    }
  }
}

TEST_CASE("a missing manifest file is a kMissing error naming the file") {
  Fixture f;
  auto e = input_error([&] { load_manifest_file(disk, kData + "no-such-file.yaml", f.b, f.opt); });
  REQUIRE(e);
  CHECK(e->kind() == InputErrorKind::kMissing);
  CHECK(e->where().file == kData + "no-such-file.yaml");
}

}  // namespace
}  // namespace capsim
