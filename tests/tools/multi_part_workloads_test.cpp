// The multi-part workloads capsim expands when it reads the files (jobset.x-k8s.io JobSet,
// kubeflow.org PyTorchJob, leaderworkerset.x-k8s.io LeaderWorkerSet): the Jobs and pods each
// makes, with the names and labels their controllers give them, the one Kueue workload group each
// object (or LeaderWorkerSet group) is admitted as, gangs on request, one run time per object,
// and the fields capsim does not model, warned about by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kCluster =
    "simulation: {horizon: 1d}\n"
    "cluster:\n  nodes:\n"
    "    - {name: gpu-1, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, count: 8}}\n"
    "manifests: [m.yaml]\n";

struct Loaded {
  Scenario s;
  std::vector<std::string> warnings;
};

Loaded load(const std::string& manifests, const std::string& extra = "") {
  MemoryFiles files;
  files.add("mem/s.yaml", std::string(kCluster) + extra).add("mem/m.yaml", manifests);
  LoadOptions lo;
  Loaded out{load_scenario("mem/s.yaml", lo, files), {}};
  out.warnings = out.s.warnings;
  return out;
}

std::optional<InputError> load_error(const std::string& manifests, const std::string& extra = "") {
  try {
    (void)load(manifests, extra);
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

std::string label(const Scenario& s, const PodSpec& p, const std::string& key) {
  const Sym k = s.world->strings.find(key);
  const Sym v = k == kNoSym ? kNoSym : p.labels.get(k);
  return v == kNoSym ? "<absent>" : s.world->strings.str(v);
}

const JobSpec* job(const Scenario& s, const std::string& name) {
  for (const JobSpec& j : s.world->jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

// A JobSet of a 1-pod driver Job and two 2-pod worker Jobs, as its users write it.
const char* kJobSet =
    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: pretrain\n"
    "  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: training}\n"
    "spec:\n  suspend: true\n  network: {enableDNSHostnames: true}\n  replicatedJobs:\n"
    "  - name: driver\n    template:\n      spec:\n        template:\n          spec:\n"
    "            restartPolicy: Never\n            containers: [{name: d}]\n"
    "  - name: workers\n    replicas: 2\n    template:\n      spec:\n        parallelism: 2\n"
    "        completions: 2\n        template:\n          spec:\n"
    "            restartPolicy: Never\n"
    "            containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]\n";

const char* kDurations =
    "durations:\n  - match: {kind: JobSet}\n    duration: {uniform: [1h, 5h]}\n"
    "  - match: {kind: PyTorchJob}\n    duration: {uniform: [1h, 5h]}\n";

}  // namespace

TEST_CASE("a JobSet makes replicas Jobs per replicated Job, named and labelled as its controller") {
  const Loaded l = load(kJobSet, kDurations);
  const Scenario& s = l.s;
  REQUIRE(s.world->jobs.size() == 3);
  const JobSpec* driver = job(s, "pretrain-driver-0");
  const JobSpec* w0 = job(s, "pretrain-workers-0");
  const JobSpec* w1 = job(s, "pretrain-workers-1");
  REQUIRE(driver != nullptr);
  REQUIRE(w0 != nullptr);
  REQUIRE(w1 != nullptr);
  CHECK(driver->parallelism == 1);
  CHECK(w0->parallelism == 2);
  CHECK(w1->completions == 2);
  const PodSpec& p = w1->pod_template;
  CHECK(p.namespace_ == "ml");
  CHECK(p.queue == "training");  // from the JobSet's label
  CHECK(label(s, p, "jobset.sigs.k8s.io/jobset-name") == "pretrain");
  CHECK(label(s, p, "jobset.sigs.k8s.io/replicatedjob-name") == "workers");
  CHECK(label(s, p, "jobset.sigs.k8s.io/job-index") == "1");
  CHECK(label(s, p, "jobset.sigs.k8s.io/job-global-index") == "2");  // driver-0, workers-0, -1
  CHECK(label(s, p, "batch.kubernetes.io/job-name") == "pretrain-workers-1");
  // One workload group of 1 + 2 x 2 pods; no gang unless asked.
  REQUIRE(s.world->workload_groups.size() == 1);
  const WorkloadGroupSpec& g = s.world->workload_groups[0];
  CHECK(g.name == "pretrain");
  CHECK(g.kind == "JobSet");
  CHECK(g.pods == 5);
  for (const JobSpec& j : s.world->jobs) {
    CHECK(j.pod_template.workload_group == 0);
    CHECK(j.pod_template.gang == kNoGang);
  }
  // The rule matches the JobSet, so every Job draws the same run time from the uniform range.
  CHECK(driver->pod_template.duration == w0->pod_template.duration);
  CHECK(w0->pod_template.duration == w1->pod_template.duration);
  CHECK(driver->pod_template.duration >= 1 * kHour);
  CHECK(driver->pod_template.duration <= 5 * kHour);
}

TEST_CASE("capsim.io/gang on a JobSet makes one gang over all its Jobs") {
  std::string yaml = kJobSet;
  yaml.replace(yaml.find("  namespace: ml\n"), 15,
               "  namespace: ml\n  annotations: {capsim.io/gang: \"true\"}");
  const Loaded l = load(yaml, kDurations);
  REQUIRE(l.s.world->gangs.size() == 1);
  CHECK(l.s.world->gangs[0].name == "pretrain");
  CHECK(l.s.world->gangs[0].min_member == 5);
  for (const JobSpec& j : l.s.world->jobs)
    CHECK(j.pod_template.gang == 0);
}

TEST_CASE("a JobSet without a durations rule or annotation names itself and a rule") {
  auto e = load_error(kJobSet);
  REQUIRE(e);
  CHECK(contains(e->message(), "pretrain"));
  CHECK(contains(e->message(), "JobSet"));
}

TEST_CASE("JobSet fields capsim does not model are warned about by name; mistakes are refused") {
  std::string yaml = kJobSet;
  yaml.replace(
      yaml.find("  suspend: true\n"), 16,
      "  suspend: true\n  successPolicy: {operator: Any, targetReplicatedJobs: [driver]}\n"
      "  failurePolicy: {maxRestarts: 3}\n  startupPolicy: {startupPolicyOrder: InOrder}\n");
  const Loaded l = load(yaml, kDurations);
  CHECK(warnings_with(l, "successPolicy is not modelled") == 1);
  CHECK(warnings_with(l, "failurePolicy is not modelled") == 1);
  CHECK(warnings_with(l, "InOrder is not modelled") == 1);

  std::string dup = kJobSet;
  dup.replace(dup.find("- name: workers"), 15, "- name: driver");
  auto e = load_error(dup, kDurations);
  REQUIRE(e);
  CHECK(contains(e->message(), "replicated Job name 'driver' is used twice"));
  CHECK(e->where().line > 0);

  std::string typo = kJobSet;
  typo.replace(typo.find("    replicas: 2\n"), 16, "    replica: 2\n");
  auto e2 = load_error(typo, kDurations);
  REQUIRE(e2);
  CHECK(contains(e2->message(), "replica"));
  CHECK(contains(e2->message(), "did you mean"));
}

// The JobSet webhook's checks of the policies (sigs.k8s.io/jobset pkg/webhooks): what they name
// must be a replicated Job, enums take their values, dependsOn points back. Each refusal names
// the file, line and field.
TEST_CASE("JobSet policies that name missing replicated Jobs or bad values are refused") {
  struct Case {
    const char* name;
    std::string policy;    // inserted after `suspend: true`
    std::string from, to;  // an edit of the replicated Jobs, if any
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"a success target that is not a replicated Job",
       "  successPolicy: {operator: All, targetReplicatedJobs: [worker]}\n", "", "",
       "spec.successPolicy.targetReplicatedJobs[0]",
       "'worker' is not one of the replicated Jobs (driver, workers) (did you mean 'workers'?)"},
      {"a failure rule's target that is not a replicated Job",
       "  failurePolicy:\n    maxRestarts: 2\n    rules:\n"
       "    - {name: r, action: RestartJobSet, targetReplicatedJobs: [drivers]}\n",
       "", "", "spec.failurePolicy.rules[0].targetReplicatedJobs[0]",
       "'drivers' is not one of the replicated Jobs"},
      {"an unknown failure action", "  failurePolicy: {rules: [{action: RestartJobs}]}\n", "", "",
       "spec.failurePolicy.rules[0].action", "unknown failure policy action 'RestartJobs'"},
      {"an unknown job failure reason",
       "  failurePolicy: {rules: [{action: FailJobSet, onJobFailureReasons: [BackoffLimit]}]}\n",
       "", "", "spec.failurePolicy.rules[0].onJobFailureReasons[0]",
       "unknown job failure reason 'BackoffLimit'"},
      {"a rule name the webhook rejects",
       "  failurePolicy: {rules: [{name: 1st, action: FailJobSet}]}\n", "", "",
       "spec.failurePolicy.rules[0].name", "invalid failure policy rule name '1st'"},
      {"two rules of one name",
       "  failurePolicy: {rules: [{name: r, action: FailJobSet}, {name: r, action: "
       "FailJobSet}]}\n",
       "", "", "spec.failurePolicy.rules[1].name", "'r' is used twice"},
      {"dependsOn on the first replicated Job", "", "  - name: driver\n",
       "  - name: driver\n    dependsOn: [{name: workers, status: Ready}]\n",
       "spec.replicatedJobs[0].dependsOn", "can't be set for the first replicated Job"},
      {"dependsOn naming a later or unknown Job", "", "  - name: workers\n",
       "  - name: workers\n    dependsOn: [{name: workers, status: Ready}]\n",
       "spec.replicatedJobs[1].dependsOn[0].name", "names an earlier replicated Job"},
      {"a dependsOn status that does not exist", "", "  - name: workers\n",
       "  - name: workers\n    dependsOn: [{name: driver, status: Done}]\n",
       "spec.replicatedJobs[1].dependsOn[0].status", "unknown dependsOn status 'Done'"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string yaml = kJobSet;
    yaml.replace(yaml.find("  suspend: true\n"), 16, "  suspend: true\n" + c.policy);
    if (!c.from.empty()) yaml.replace(yaml.find(c.from), c.from.size(), c.to);
    auto e = load_error(yaml, kDurations);
    REQUIRE(e);
    INFO(e->message());
    CHECK(e->where().file == "mem/m.yaml");
    CHECK(e->where().line > 0);
    CHECK(e->where().field == c.want_field);
    CHECK(contains(e->message(), c.want_part));
  }
  // Valid policies load, each warned about with what it asks for.
  std::string yaml = kJobSet;
  yaml.replace(yaml.find("  suspend: true\n"), 16,
               "  suspend: true\n  successPolicy: {operator: All, targetReplicatedJobs: [driver, "
               "workers]}\n  failurePolicy:\n    maxRestarts: 3\n    rules:\n"
               "    - {action: RestartJobSet, onJobFailureReasons: [PodFailurePolicy]}\n"
               "    - {name: fail_fast, action: FailJobSet, targetReplicatedJobs: [driver]}\n");
  const Loaded l = load(yaml, kDurations);
  // All over every replicated Job is what capsim does: no warning.
  CHECK(warnings_with(l, "successPolicy") == 0);
  CHECK(warnings_with(l,
                      "failurePolicy is not modelled (maxRestarts 3, restartStrategy "
                      "Recreate, rules failurePolicyRule0, fail_fast)") == 1);
}

TEST_CASE("a PyTorchJob makes a master and a worker Job, admitted as one workload") {
  const std::string yaml =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: ft\n"
      "  labels: {kueue.x-k8s.io/queue-name: training}\n"
      "spec:\n  runPolicy: {backoffLimit: 2, cleanPodPolicy: None}\n"
      "  pytorchReplicaSpecs:\n"
      "    Master:\n      replicas: 1\n      restartPolicy: OnFailure\n      template:\n"
      "        spec:\n          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: "
      "4}}}]\n"
      "    worker:\n      replicas: 3\n      template:\n"
      "        spec:\n          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: "
      "4}}}]\n";
  const Loaded l = load(yaml, kDurations);
  const Scenario& s = l.s;
  const JobSpec* master = job(s, "ft-master");
  const JobSpec* worker = job(s, "ft-worker");  // "worker" is turned to camel case, as upstream
  REQUIRE(master != nullptr);
  REQUIRE(worker != nullptr);
  CHECK(master->parallelism == 1);
  CHECK(worker->parallelism == 3);
  CHECK(worker->completions == 3);
  // The operator's default restartPolicy is OnFailure, whatever the template says.
  CHECK(worker->pod_template.restart_policy == RestartPolicy::kOnFailure);
  CHECK(worker->pod_template.max_restarts == 2);
  CHECK(label(s, worker->pod_template, "training.kubeflow.org/replica-type") == "worker");
  CHECK(label(s, master->pod_template, "training.kubeflow.org/job-role") == "master");
  CHECK(worker->pod_template.queue == "training");
  REQUIRE(s.world->workload_groups.size() == 1);
  CHECK(s.world->workload_groups[0].pods == 4);
  CHECK(master->pod_template.workload_group == 0);
  CHECK(worker->pod_template.workload_group == 0);
  CHECK(master->pod_template.duration == worker->pod_template.duration);

  std::string two_masters = yaml;
  two_masters.replace(two_masters.find("replicas: 1"), 11, "replicas: 2");
  auto e = load_error(two_masters, kDurations);
  REQUIRE(e);
  CHECK(contains(e->message(), "exactly one Master"));

  std::string bad_type = yaml;
  bad_type.replace(bad_type.find("    worker:"), 11, "    Wroker:");
  auto e2 = load_error(bad_type, kDurations);
  REQUIRE(e2);
  CHECK(contains(e2->message(), "unknown PyTorchJob replica type 'Wroker'"));
  CHECK(contains(e2->message(), "Worker"));

  std::string elastic = yaml;
  elastic.replace(elastic.find("  runPolicy:"), 12,
                  "  elasticPolicy: {minReplicas: 1, maxReplicas: 3}\n  runPolicy:");
  const Loaded le = load(elastic, kDurations);
  CHECK(warnings_with(le, "elasticPolicy is not modelled") == 1);
}

TEST_CASE("a LeaderWorkerSet makes groups of a leader and workers, each group one workload") {
  const std::string yaml =
      "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: llm\n"
      "  annotations: {capsim.io/gang: \"true\"}\n"
      "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 3\n"
      "    leaderTemplate:\n      metadata: {labels: {role: leader}}\n"
      "      spec:\n        containers: [{name: s, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
      "    workerTemplate:\n"
      "      spec:\n        containers: [{name: s, resources: {limits: {nvidia.com/gpu: 2}}}]\n";
  const Loaded l = load(yaml);
  const Scenario& s = l.s;
  std::set<std::string> names;
  for (const PodSpec& p : s.world->pods)
    names.insert(p.name);
  CHECK(names ==
        std::set<std::string>{"llm-0", "llm-0-1", "llm-0-2", "llm-1", "llm-1-1", "llm-1-2"});
  REQUIRE(s.world->workload_groups.size() == 2);
  CHECK(s.world->workload_groups[1].name == "llm-1");
  CHECK(s.world->workload_groups[1].pods == 3);
  REQUIRE(s.world->gangs.size() == 2);
  CHECK(s.world->gangs[0].min_member == 3);
  for (const PodSpec& p : s.world->pods) {
    CAPTURE(p.name);
    CHECK(p.duration == kEndOfTime);  // a controller keeps its pods running
    const bool leader = p.name == "llm-0" || p.name == "llm-1";
    CHECK(label(s, p, "role") == (leader ? "leader" : "<absent>"));
    CHECK(p.gpu_count == (leader ? 1 : 2));
    const int group = p.name.rfind("llm-1", 0) == 0 ? 1 : 0;
    CHECK(p.workload_group == group);
    CHECK(p.gang == static_cast<GangId>(group));
    CHECK(label(s, p, "leaderworkerset.sigs.k8s.io/group-index") == std::to_string(group));
  }
}

TEST_CASE("Jobs and pods a read JobSet or LeaderWorkerSet made are not counted twice") {
  // A `kubectl get -o yaml` dump holds the JobSet and the Job it made, owned by it.
  const std::string child =
      "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pretrain-driver-0\n"
      "  namespace: ml\n  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet,"
      " name: pretrain, uid: u1, controller: true}]\n"
      "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: d}]\n";
  const Loaded l = load(std::string(kJobSet) + child, kDurations);
  CHECK(l.s.world->jobs.size() == 3);
  CHECK(warnings_with(l, "is made by its controller JobSet/ml/pretrain") == 1);
}

// Every spec field of the three kinds' API types (JobSet v1alpha2 JobSetSpec and ReplicatedJob,
// Kubeflow v1 PyTorchJobSpec and RunPolicy, LeaderWorkerSet v1 LeaderWorkerSetSpec and
// LeaderWorkerTemplate) is read, accepted without effect, or accepted with a warning naming it.
TEST_CASE("every spec field of JobSet, PyTorchJob and LeaderWorkerSet is read or warned about") {
  const std::string pod = "{containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}";
  const std::string m =
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n"
      "  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}\nspec:\n"
      "  network: {enableDNSHostnames: true, subdomain: s, publishNotReadyAddresses: true}\n"
      "  successPolicy: {operator: All, targetReplicatedJobs: [a]}\n"
      "  failurePolicy: {maxRestarts: 2, restartStrategy: Recreate, rules: [{name: r, action: "
      "FailJobSet}]}\n"
      "  startupPolicy: {startupPolicyOrder: AnyOrder}\n  suspend: false\n"
      "  coordinator: {replicatedJob: a, jobIndex: 0, podIndex: 0}\n"
      "  managedBy: jobset.sigs.k8s.io/jobset-controller\n  ttlSecondsAfterFinished: 60\n"
      "  volumeClaimPolicies: [{templates: [{metadata: {name: cache}}]}]\n"
      "  replicatedJobs:\n  - name: a\n    groupName: g\n    replicas: 1\n"
      "    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}}\n"
      "  - name: b\n    dependsOn: [{name: a, status: Ready}]\n"
      "    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}}\n"
      "---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: pt}\nspec:\n"
      "  runPolicy: {cleanPodPolicy: None, ttlSecondsAfterFinished: 60, activeDeadlineSeconds: "
      "3600,\n    backoffLimit: 3, schedulingPolicy: {minAvailable: 2}, suspend: false, managedBy: "
      "kubeflow.org/training-operator}\n"
      "  elasticPolicy: {minReplicas: 1, maxReplicas: 2}\n  nprocPerNode: auto\n"
      "  pytorchReplicaSpecs:\n    Worker: {replicas: 2, restartPolicy: ExitCode, template: "
      "{spec: " +
      pod +
      "}}\n"
      "---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n"
      "  name: lws\n  annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}\nspec:\n"
      "  replicas: 1\n  startupPolicy: LeaderReady\n"
      "  rolloutStrategy: {type: RollingUpdate, rollingUpdateConfiguration: {maxUnavailable: 1}}\n"
      "  networkConfig: {subdomainPolicy: Shared}\n"
      "  leaderWorkerTemplate:\n    size: 2\n    restartPolicy: None\n"
      "    subGroupPolicy: {subGroupSize: 1}\n    workerTemplate: {spec: " +
      pod + "}\n";
  const Loaded l = load(m, kDurations);
  CHECK(l.s.world->jobs.size() == 3);  // js-a-0, js-b-0, pt-worker
  CHECK(l.s.world->workload_groups.size() == 3);
  for (const char* warned :
       {"spec.failurePolicy: failurePolicy is not modelled",
        "spec.replicatedJobs[1].dependsOn: dependsOn is not modelled",
        "spec.volumeClaimPolicies: volumeClaimPolicies are not modelled",
        "exclusive-topology: exclusive placement per topology domain is not modelled",
        "spec.runPolicy.activeDeadlineSeconds: activeDeadlineSeconds is not modelled",
        "spec.runPolicy.schedulingPolicy: schedulingPolicy is read by the operator's",
        "spec.elasticPolicy: elasticPolicy is not modelled",
        "spec.startupPolicy: startupPolicy LeaderReady is not modelled",
        "spec.leaderWorkerTemplate.subGroupPolicy: subGroupPolicy is not modelled"}) {
    INFO(warned);
    CHECK(warnings_with(l, warned) >= 1);
  }
  // successPolicy All with targets is what capsim does for All over all Jobs only when the
  // targets are all; any target list is warned about.
  CHECK(warnings_with(l, "successPolicy is not modelled") == 1);
}

}  // namespace capsim
