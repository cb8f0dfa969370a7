// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob is read with the
// ClusterTrainingRuntime or TrainingRuntime it names, from any file of the load and in any order,
// into the JobSet its runtime makes (the Trainer's builder: one replica per ancestor step, the
// trainer step's parallelism = completions = numNodes, resourcesPerNode on the `node`
// containers), admitted by Kueue as one workload. A TrainJob whose runtime is not given is an
// error at runtimeRef.name that says which runtime and what capsim accepts instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tools/loaders/scenario_loader.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {

std::string corpus(const std::string& name) {
  std::ifstream in(std::string(CAPSIM_SOURCE_DIR) + "/tests/data/manifests/trainer/" + name);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const char* kDurations =
    "durations:\n  - match: {kind: TrainJob}\n    duration: {uniform: [1h, 5h]}\n";

struct Loaded {
  Scenario s;
  std::vector<std::string> warnings;
};

// A scenario reading `files` (name, text) as its manifests, in that order.
Loaded load(const std::vector<std::pair<std::string, std::string>>& files,
            const std::string& extra = kDurations) {
  MemoryFiles mem;
  std::string list;
  for (const auto& [name, text] : files) {
    mem.add("mem/" + name, text);
    list += (list.empty() ? "" : ", ") + name;
  }
  mem.add("mem/s.yaml",
          "simulation: {horizon: 1d}\n"
          "cluster:\n  nodes:\n"
          "    - {name: gpu-1, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, count: 8}}\n"
          "manifests: [" +
              list + "]\n" + extra);
  LoadOptions lo;
  Loaded out{load_scenario("mem/s.yaml", lo, mem), {}};
  out.warnings = out.s.warnings;
  return out;
}

std::optional<InputError> load_error(const std::vector<std::pair<std::string, std::string>>& f,
                                     const std::string& extra = kDurations) {
  try {
    (void)load(f, extra);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::size_t warnings_with(const Loaded& l, const std::string& part) {
  return static_cast<std::size_t>(
      std::count_if(l.warnings.begin(), l.warnings.end(),
                    [&](const std::string& w) { return contains(w, part); }));
}

const JobSpec* job(const Scenario& s, const std::string& name) {
  for (const JobSpec& j : s.world->jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

std::string label(const Scenario& s, const PodSpec& p, const std::string& key) {
  const Sym k = s.world->strings.find(key);
  const Sym v = k == kNoSym ? kNoSym : p.labels.get(k);
  return v == kNoSym ? "<absent>" : s.world->strings.str(v);
}

std::int64_t request(const Scenario& s, const PodSpec& p, const std::string& resource) {
  const auto id = s.world->resources.find(resource);
  return id ? p.requests.get(*id) : 0;
}

}  // namespace

TEST_CASE("a TrainJob becomes the JobSet its runtime makes, with its nodes and resources") {
  const Loaded l = load(
      {{"runtimes.yaml", corpus("runtimes.yaml")}, {"trainjobs.yaml", corpus("trainjobs.yaml")}});
  const Scenario& s = l.s;
  // llama-ft: the dataset initializer Job and the trainer step's Job; resnet: its trainer step.
  REQUIRE(s.world->jobs.size() == 3);
  const JobSpec* init = job(s, "llama-ft-dataset-initializer-0");
  const JobSpec* nodes = job(s, "llama-ft-node-0");
  const JobSpec* resnet = job(s, "resnet-node-0");
  REQUIRE(init != nullptr);
  REQUIRE(nodes != nullptr);
  REQUIRE(resnet != nullptr);

  // The TrainJob's numNodes (4) over the runtime's (1): parallelism = completions = 4.
  CHECK(nodes->parallelism == 4);
  CHECK(nodes->completions == 4);
  CHECK(init->parallelism == 1);
  // resourcesPerNode replaces the `node` container's resources: 8 GPUs (limit = request),
  // 16 cpu = 16000 millicores, 128Gi = 137438953472 bytes; the initializer keeps its own.
  const PodSpec& p = nodes->pod_template;
  CHECK(request(s, p, "nvidia.com/gpu") == 8);
  CHECK(request(s, p, "cpu") == 16000);
  CHECK(request(s, p, "memory") == 128LL * 1024 * 1024 * 1024);
  CHECK(request(s, init->pod_template, "cpu") == 2000);
  CHECK(request(s, init->pod_template, "nvidia.com/gpu") == 0);
  // The runtime leaves restartPolicy unset: the JobSet webhook's OnFailure.
  CHECK(p.restart_policy == RestartPolicy::kOnFailure);
  CHECK(p.namespace_ == "research");
  CHECK(p.queue == "training");  // the TrainJob's queue-name label
  CHECK(label(s, p, "jobset.sigs.k8s.io/jobset-name") == "llama-ft");
  CHECK(label(s, p, "jobset.sigs.k8s.io/replicatedjob-name") == "node");

  // resnet on its team's TrainingRuntime: the runtime's numNodes (2), one replica although the
  // template says 3, 4 GPUs per node as the template gives them.
  CHECK(resnet->parallelism == 2);
  CHECK(resnet->completions == 2);
  CHECK(request(s, resnet->pod_template, "nvidia.com/gpu") == 4);
  CHECK(resnet->pod_template.namespace_ == "vision");
  CHECK(job(s, "resnet-node-1") == nullptr);

  // One Kueue workload per TrainJob: llama-ft 1 + 4 pods, resnet 2.
  REQUIRE(s.world->workload_groups.size() == 2);
  for (const WorkloadGroupSpec& g : s.world->workload_groups) {
    CHECK(g.kind == "TrainJob");
    CHECK(g.pods == (g.name == "llama-ft" ? 5 : 2));
  }
  // The rule matches kind TrainJob: one draw for both of llama-ft's Jobs.
  CHECK(init->pod_template.duration == p.duration);
  CHECK(p.duration >= 1 * kHour);
  CHECK(p.duration <= 5 * kHour);
  // dependsOn in the runtime's JobSet is warned about once, not once per TrainJob using it.
  CHECK(warnings_with(l, "dependsOn is not modelled") == 1);
}

TEST_CASE("a TrainJob loads the same whether its runtime's file comes before or after it") {
  const Loaded a = load(
      {{"runtimes.yaml", corpus("runtimes.yaml")}, {"trainjobs.yaml", corpus("trainjobs.yaml")}});
  const Loaded b = load(
      {{"trainjobs.yaml", corpus("trainjobs.yaml")}, {"runtimes.yaml", corpus("runtimes.yaml")}});
  REQUIRE(a.s.world->jobs.size() == b.s.world->jobs.size());
  for (const JobSpec& ja : a.s.world->jobs) {
    INFO(ja.name);
    const JobSpec* jb = job(b.s, ja.name);
    REQUIRE(jb != nullptr);
    CHECK(jb->parallelism == ja.parallelism);
    CHECK(jb->pod_template.duration == ja.pod_template.duration);
    CHECK(jb->pod_template.gpu_count == ja.pod_template.gpu_count);
  }
}

TEST_CASE("a runtime's warnings come once however many TrainJobs use it") {
  const std::string second =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
      "  name: llama-ft-2\n  namespace: research\nspec:\n  runtimeRef: {name: torch-distributed}\n";
  const Loaded l = load({{"runtimes.yaml", corpus("runtimes.yaml")},
                         {"trainjobs.yaml", corpus("trainjobs.yaml")},
                         {"more.yaml", second}});
  // llama-ft (2 Jobs), resnet (1), llama-ft-2 (2: the runtime's numNodes 1 for its node Job).
  REQUIRE(l.s.world->jobs.size() == 5);
  CHECK(job(l.s, "llama-ft-2-node-0")->parallelism == 1);
  CHECK(request(l.s, job(l.s, "llama-ft-2-node-0")->pod_template, "nvidia.com/gpu") == 1);
  CHECK(warnings_with(l, "dependsOn is not modelled") == 1);
}

TEST_CASE("a TrainJob whose runtime is not given names it, where, and what capsim accepts") {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::string>> files;
    std::vector<const char*> want_parts;
  };
  // A ClusterTrainingRuntime of another name is read; the TrainingRuntime of namespace vision is
  // not one of namespace research's.
  const std::string other_runtime =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
      "metadata: {name: torch-distributd}\nspec:\n  template:\n    spec:\n"
      "      replicatedJobs: []\n";
  const std::string wrong_namespace =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
      "  name: resnet\n  namespace: research\nspec:\n  runtimeRef:\n"
      "    name: torch-2node\n    kind: TrainingRuntime\n";
  const std::vector<Case> cases = {
      {"no runtime at all",
       {{"trainjobs.yaml", corpus("trainjobs.yaml")}},
       {"TrainJob 'llama-ft' names ClusterTrainingRuntime 'torch-distributed'",
        "no file of this load describes", "kubectl get clustertrainingruntime torch-distributed",
        "jobset.x-k8s.io/v1alpha2"}},
      {"a near name",
       {{"rt.yaml", other_runtime}, {"trainjobs.yaml", corpus("trainjobs.yaml")}},
       {"(read: torch-distributd)", "did you mean 'torch-distributd'?"}},
      {"a TrainingRuntime of another namespace",
       {{"runtimes.yaml", corpus("runtimes.yaml")}, {"tj.yaml", wrong_namespace}},
       {"TrainingRuntime 'torch-2node' in namespace research",
        "kubectl get trainingruntime -n research torch-2node"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto e = load_error(c.files);
    REQUIRE(e);
    INFO(e->message());
    CHECK(e->where().field == "spec.runtimeRef.name");
    CHECK(e->where().line > 0);
    CHECK(contains(e->where().file, c.files.back().first));
    for (const char* part : c.want_parts) {
      INFO(part);
      CHECK(contains(e->message(), part));
    }
  }
}

TEST_CASE("TrainJob and runtime mistakes are refused with file, line and field") {
  struct Case {
    const char* name;
    std::string runtime_edit_from, runtime_edit_to;  // applied to runtimes.yaml
    std::string job_edit_from, job_edit_to;          // applied to trainjobs.yaml
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"an MPI runtime", "    torch:\n      numProcPerNode: auto\n",
       "    mpi: {numProcPerNode: 1, runLauncherAsNode: true}\n", "", "", "spec.mlPolicy.mpi",
       "mlPolicy.mpi is not modelled yet"},
      {"a runtime kind that does not exist", "", "", "    kind: TrainingRuntime\n",
       "    kind: TrainRuntime\n", "spec.runtimeRef.kind", "did you mean 'TrainingRuntime'?"},
      {"a misspelt trainer field", "", "", "    numNodes: 4\n", "    numNode: 4\n",
       "spec.trainer.numNode", "did you mean 'numNodes'?"},
      {"zero nodes", "", "", "    numNodes: 4\n", "    numNodes: 0\n", "spec.trainer.numNodes", ""},
      {"a runtime described twice", "kind: TrainingRuntime\nmetadata:\n  name: torch-2node\n",
       "kind: ClusterTrainingRuntime\nmetadata:\n  name: torch-distributed\n", "", "", "metadata",
       "ClusterTrainingRuntime 'torch-distributed' is described twice"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string runtimes = corpus("runtimes.yaml");
    std::string jobs = corpus("trainjobs.yaml");
    if (!c.runtime_edit_from.empty()) {
      const auto at = runtimes.find(c.runtime_edit_from);
      REQUIRE(at != std::string::npos);
      runtimes.replace(at, c.runtime_edit_from.size(), c.runtime_edit_to);
    }
    if (!c.job_edit_from.empty()) {
      const auto at = jobs.find(c.job_edit_from);
      REQUIRE(at != std::string::npos);
      jobs.replace(at, c.job_edit_from.size(), c.job_edit_to);
    }
    auto e = load_error({{"runtimes.yaml", runtimes}, {"trainjobs.yaml", jobs}});
    REQUIRE(e);
    INFO(e->message());
    CHECK(e->where().line > 0);
    CHECK(e->where().field == c.want_field);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("capsim.io/gang on a TrainJob makes one gang over the pods of its runtime's Jobs") {
  std::string jobs = corpus("trainjobs.yaml");
  jobs.replace(jobs.find("  namespace: research\n"), 22,
               "  namespace: research\n  annotations: {capsim.io/gang: \"true\"}\n");
  const Loaded l = load({{"runtimes.yaml", corpus("runtimes.yaml")}, {"trainjobs.yaml", jobs}});
  REQUIRE(l.s.world->gangs.size() == 1);
  CHECK(l.s.world->gangs[0].name == "llama-ft");
  CHECK(l.s.world->gangs[0].min_member == 5);  // 1 initializer + 4 nodes
  CHECK(job(l.s, "llama-ft-node-0")->pod_template.gang == 0);
  CHECK(job(l.s, "resnet-node-0")->pod_template.gang == kNoGang);
}

// Every spec field of the TrainJob (v1alpha1 TrainJobSpec, RuntimeRef, Initializer, Trainer, and
// the older podSpecOverrides, labels and annotations) and of the runtimes (TrainingRuntimeSpec,
// MLPolicy, TorchMLPolicySource, PodGroupPolicy, JobSetTemplateSpec) is read, accepted without
// effect, or accepted with a warning naming it.
TEST_CASE("every spec field of TrainJob and its runtimes is read or warned about") {
  const std::string runtime =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
      "metadata: {name: rt}\nspec:\n"
      "  mlPolicy:\n    numNodes: 2\n"
      "    torch: {numProcPerNode: auto, elasticPolicy: {minNodes: 1, maxNodes: 4}}\n"
      "  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 60}}\n"
      "  template:\n    metadata:\n      labels: {a: b}\n"
      "      annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}\n"
      "    spec:\n      replicatedJobs:\n      - name: node\n        template:\n"
      "          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
      "          spec: {template: {spec: {containers: [{name: node}]}}}\n";
  const std::string train_job =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
      "  runtimeRef: {name: rt, apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime}\n"
      "  initializer:\n"
      "    dataset: {storageUri: 'hf://d', env: [{name: A, value: b}], secretRef: {name: s}}\n"
      "    model: {storageUri: 'hf://m', env: [{name: A, value: b}], secretRef: {name: s}}\n"
      "  trainer:\n    image: i\n    command: [python]\n    args: [train.py]\n"
      "    env: [{name: A, value: b}]\n    numNodes: 3\n    numProcPerNode: 8\n"
      "    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}\n"
      "  runtimePatches: [{manager: kueue.x-k8s.io/manager}]\n"
      "  podSpecOverrides: [{targetJobs: [{name: node}], nodeSelector: {a: b}}]\n"
      "  labels: {x: y}\n  annotations: {x: y}\n"
      "  suspend: true\n  activeDeadlineSeconds: 3600\n"
      "  managedBy: trainer.kubeflow.org/trainjob-controller\n";
  const Loaded l = load({{"rt.yaml", runtime}, {"tj.yaml", train_job}});
  REQUIRE(l.s.world->jobs.size() == 1);
  CHECK(l.s.world->jobs[0].parallelism == 3);
  CHECK(l.s.world->jobs[0].pod_template.gpu_count == 2);
  for (const char* warned :
       {"spec.mlPolicy.torch.elasticPolicy: elasticPolicy is not modelled",
        "spec.podGroupPolicy: podGroupPolicy is read by the coscheduling or Volcano",
        "exclusive-topology: exclusive placement per topology domain is not modelled",
        "spec.activeDeadlineSeconds: activeDeadlineSeconds is not modelled",
        "spec.runtimePatches: runtimePatches are not modelled",
        "spec.podSpecOverrides: podSpecOverrides are not modelled",
        "spec.labels: spec.labels (for the JobSet the TrainJob makes) are not modelled",
        "spec.annotations: spec.annotations (for the JobSet the TrainJob makes) are not "
        "modelled"}) {
    INFO(warned);
    CHECK(warnings_with(l, warned) == 1);
  }
}

}  // namespace capsim
