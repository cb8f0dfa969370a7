// The workload controllers capsim expands when it reads the files (apps/v1 Deployment,
// ReplicaSet, StatefulSet, DaemonSet; batch/v1 CronJob): how many pods or Jobs each makes, their
// names, owners and run times, a DaemonSet's pod per matching node, a CronJob's Jobs over the
// horizon, and the mistakes Kubernetes rejects.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "tools/loaders/scenario_loader.hpp"

namespace capsim {
namespace {

const char* kCluster =
    "simulation: {horizon: 1d}\n"
    "cluster:\n  nodes:\n"
    "    - {name: gpu-1, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, count: 8},\n"
    "       labels: {nvidia.com/gpu.present: \"true\"}}\n"
    "    - {name: gpu-2, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, count: 8},\n"
    "       labels: {nvidia.com/gpu.present: \"true\"},\n"
    "       taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}\n"
    "    - {name: cpu-1, cpu: 32, memory: 128Gi, unschedulable: true}\n"
    "manifests: [m.yaml]\n";

Scenario load(const std::string& manifests, const std::string& extra = "") {
  MemoryFiles files;
  files.add("mem/s.yaml", std::string(kCluster) + extra).add("mem/m.yaml", manifests);
  return load_scenario("mem/s.yaml", {}, files);
}

std::optional<InputError> load_error(const std::string& manifests, const std::string& extra = "") {
  try {
    (void)load(manifests, extra);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

std::vector<const PodSpec*> pods_of(const Scenario& s, const std::string& owner) {
  std::vector<const PodSpec*> out;
  for (const PodSpec& p : s.world->pods) {
    if (p.job_name == owner) out.push_back(&p);
  }
  return out;
}

std::string label(const Scenario& s, const PodSpec& p, const std::string& key) {
  const Sym k = s.world->strings.find(key);
  const Sym v = k == kNoSym ? kNoSym : p.labels.get(k);
  return v == kNoSym ? "<absent>" : s.world->strings.str(v);
}

std::string controller(const std::string& kind, const std::string& name, int replicas,
                       const std::string& pod_spec = "      containers: [{name: c}]\n",
                       const std::string& meta = "") {
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n" + meta +
         "spec:\n" + (replicas >= 0 ? "  replicas: " + std::to_string(replicas) + "\n" : "") +
         "  selector: {matchLabels: {app: " + name +
         "}}\n  template:\n    metadata: {labels: "
         "{app: " +
         name + "}}\n    spec:\n" + pod_spec + "---\n";
}

}  // namespace

TEST_CASE("Deployments, ReplicaSets and StatefulSets make their replicas, long-running") {
  const Scenario s = load(controller("Deployment", "web", 3) + controller("ReplicaSet", "rs", -1) +
                          controller("StatefulSet", "db", 2));
  const auto web = pods_of(s, "web");
  REQUIRE(web.size() == 3);
  // The ReplicaSet the Deployment makes labels its pods with pod-template-hash and names them
  // <deployment>-<hash>-<5 characters>.
  const std::string hash = label(s, *web[0], "pod-template-hash");
  REQUIRE(hash.size() == 10);
  for (const PodSpec* p : web) {
    CHECK(label(s, *p, "pod-template-hash") == hash);
    CHECK(p->name.rfind("web-" + hash + "-", 0) == 0);
    CHECK(p->name.size() == 4 + 10 + 1 + 5);
    CHECK(p->duration == kEndOfTime);
    CHECK(p->restart_policy == RestartPolicy::kAlways);
    CHECK(p->requeue_on_preemption);  // the controller recreates a preempted replica
    CHECK(label(s, *p, "app") == "web");
  }
  CHECK(web[0]->name != web[1]->name);
  CHECK(pods_of(s, "rs").size() == 1);  // replicas defaults to 1
  CHECK(label(s, *pods_of(s, "rs")[0], "pod-template-hash") == "<absent>");
  CHECK(pods_of(s, "rs")[0]->name.size() == 3 + 5);
  const auto db = pods_of(s, "db");
  REQUIRE(db.size() == 2);
  CHECK(db[0]->name == "db-0");
  CHECK(db[1]->name == "db-1");
  CHECK(label(s, *db[1], "statefulset.kubernetes.io/pod-name") == "db-1");
  CHECK(label(s, *db[1], "apps.kubernetes.io/pod-index") == "1");
}

TEST_CASE(
    "two Deployments selecting the same labels do not count each other's pods in the default "
    "spread constraints: pod-template-hash tells their ReplicaSets apart") {
  const Scenario s = load(controller("Deployment", "web", 1) +
                          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web2}\nspec:\n"
                          "  selector: {matchLabels: {app: web}}\n"
                          "  template:\n    metadata: {labels: {app: web}}\n"
                          "    spec: {containers: [{name: c}]}\n");
  const PodSpec& a = *pods_of(s, "web").at(0);
  const PodSpec& b = *pods_of(s, "web2").at(0);
  CHECK(label(s, a, "pod-template-hash") != label(s, b, "pod-template-hash"));
  CHECK(selector_matches(a.pod_rules->owner_selector, a.labels));
  CHECK_FALSE(selector_matches(a.pod_rules->owner_selector, b.labels));
  CHECK_FALSE(selector_matches(b.pod_rules->owner_selector, a.labels));
}

TEST_CASE("a durations rule or an annotation can time a controller's replicas") {
  const Scenario s =
      load(controller("Deployment", "batchy", 2) +
               controller("StatefulSet", "ann", 1, "      containers: [{name: c}]\n",
                          "  annotations: {capsim.io/duration: 2h}\n"),
           "durations:\n  - match: {kind: Deployment, name: \"batch*\"}\n    duration: 30m\n");
  for (const PodSpec* p : pods_of(s, "batchy"))
    CHECK(p->duration == 30 * kMinute);
  REQUIRE(pods_of(s, "ann").size() == 1);
  CHECK(pods_of(s, "ann")[0]->duration == 2 * kHour);
}

TEST_CASE("a DaemonSet runs one pod on each node it matches, pinned there") {
  const std::string ds =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dcgm, namespace: gpu-operator}\n"
      "spec:\n  selector: {matchLabels: {app: dcgm}}\n  template:\n    metadata: {labels: {app: "
      "dcgm}}\n    spec:\n      nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "      containers:\n        - name: exporter\n          resources: {requests: {cpu: 100m, "
      "memory: 128Mi}}\n---\n"
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: logs}\nspec:\n"
      "  selector: {matchLabels: {app: logs}}\n  template:\n    metadata: {labels: {app: logs}}\n"
      "    spec:\n      containers: [{name: c, resources: {requests: {cpu: 50m}}}]\n---\n"
      // A Node manifest after the DaemonSets still gets its daemons.
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: late\n  labels: {nvidia.com/gpu.present: "
      "\"true\"}\nstatus:\n  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n";
  const Scenario s = load(ds);
  // dcgm: the two GPU nodes (gpu-2's taint tolerated) and the late node; not cpu-1.
  const auto dcgm = pods_of(s, "dcgm");
  REQUIRE(dcgm.size() == 3);
  std::vector<std::string> pinned;
  for (const PodSpec* p : dcgm) {
    REQUIRE(p->affinity->required.has_value());
    REQUIRE(p->affinity->required->size() == 1);
    const auto& fields = (*p->affinity->required)[0].match_fields;
    REQUIRE(fields.size() == 1);
    CHECK(s.world->strings.str(fields[0].key) == "metadata.name");
    pinned.push_back(s.world->strings.str(fields[0].values.at(0)));
    CHECK(p->namespace_ == "gpu-operator");
    CHECK(p->duration == kEndOfTime);
    CHECK(p->requests.get(kCpu) == 100);
  }
  CHECK(pinned == std::vector<std::string>{"gpu-1", "gpu-2", "late"});
  // logs: no nodeSelector, but gpu-2's taint is not tolerated; the cordoned cpu-1 is (the
  // controller adds node.kubernetes.io/unschedulable to every daemon).
  const auto logs = pods_of(s, "logs");
  CHECK(logs.size() == 3);  // gpu-1, cpu-1, late
}

TEST_CASE("a CronJob makes a Job at each scheduled time before the horizon") {
  const std::string cron =
      "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n"
      "  schedule: \"0 */6 * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
      "          restartPolicy: OnFailure\n          containers: [{name: c, resources: {limits: "
      "{nvidia.com/gpu: 1}}}]\n";
  const Scenario s =
      load(cron, "durations:\n  - match: {kind: CronJob}\n    duration: {uniform: [10m, 50m]}\n");
  // 06:00, 12:00, 18:00 (00:00 is the creation itself, 24:00 the horizon).
  REQUIRE(s.world->jobs.size() == 3);
  CHECK(s.world->jobs[0].name == "nightly-360");  // minutes since time 0, as upstream names them
  CHECK(s.world->jobs[0].arrival == 6 * kHour);
  CHECK(s.world->jobs[2].arrival == 18 * kHour);
  // Each run draws its own time.
  CHECK(s.world->jobs[0].pod_template.duration != s.world->jobs[1].pod_template.duration);
  for (const JobSpec& j : s.world->jobs) {
    CHECK(j.pod_template.duration >= 10 * kMinute);
    CHECK(j.pod_template.duration <= 50 * kMinute);
    CHECK(j.pod_template.name == j.name);
  }
  // Without a horizon there is nothing to expand over.
  MemoryFiles files;
  std::string no_horizon = kCluster;
  no_horizon.replace(0, std::string("simulation: {horizon: 1d}\n").size(), "");
  files.add("mem/s.yaml", no_horizon).add("mem/m.yaml", cron);
  try {
    (void)load_scenario("mem/s.yaml", {}, files);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().field == "spec.schedule");
    CHECK(e.message().find("set simulation.horizon") != std::string::npos);
  }
}

TEST_CASE("controller mistakes Kubernetes rejects are refused with file, line and field") {
  struct Case {
    const char* name;
    std::string yaml;
    int want_line;
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"a selector that does not select the template",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: "
       "{matchLabels: {app: other}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: "
       "{containers: [{name: c}]}\n",
       5, "spec.selector.matchLabels.app", "does not select the pod template"},
      {"no selector",
       "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: d}\nspec:\n  template:\n    "
       "spec: {containers: [{name: c}]}\n",
       5, "spec", "'selector'"},
      {"restartPolicy Never in a Deployment",
       controller("Deployment", "d", 1,
                  "      restartPolicy: Never\n      containers: [{name: c}]\n"),
       11, "spec.template.spec.restartPolicy", "needs restartPolicy Always"},
      {"a misspelt Deployment field",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replica: 2\n", 5,
       "spec.replica", "did you mean 'replicas'"},
      {"a malformed schedule",
       "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: \"0 * *\"\n"
       "  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: "
       "c}]}}}}\n",
       5, "spec.schedule", "has 5 fields"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto e = load_error(c.yaml);
    REQUIRE(e);
    CHECK(e->where().file == "mem/m.yaml");
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    CHECK(e->message().find(c.want_part) != std::string::npos);
  }
}

}  // namespace capsim

namespace capsim {

// Every field of each controller's spec in the apps/v1 and batch/v1 API reference, set: the
// load accepts them all (no unknown field), and those that would change a real cluster's answer
// but are not modelled are warned about by name.
TEST_CASE("every spec field of the controller kinds is read, or accepted with a warning") {
  const std::string tmpl =
      "  selector: {matchLabels: {app: x}, matchExpressions: [{key: app, operator: In, values: "
      "[x]}]}\n  template:\n    metadata: {labels: {app: x}}\n    spec: {containers: [{name: "
      "c}]}\n";
  const std::string m =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n"
      "  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n"
      "  minReadySeconds: 5\n  revisionHistoryLimit: 3\n  paused: true\n"
      "  progressDeadlineSeconds: 600\n" +
      tmpl +
      "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: 1\n"
      "  minReadySeconds: 5\n" +
      tmpl +
      "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  replicas: 1\n"
      "  serviceName: s\n  podManagementPolicy: OrderedReady\n"
      "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}\n"
      "  revisionHistoryLimit: 3\n  minReadySeconds: 5\n"
      "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}\n"
      "  ordinals: {start: 3}\n"
      "  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce]}}]\n" +
      tmpl +
      "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec:\n"
      "  updateStrategy: {type: RollingUpdate}\n  minReadySeconds: 5\n  revisionHistoryLimit: 3\n" +
      tmpl +
      "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: cj}\nspec:\n"
      "  schedule: \"@hourly\"\n  timeZone: Europe/Paris\n  startingDeadlineSeconds: 60\n"
      "  concurrencyPolicy: Forbid\n  suspend: false\n  successfulJobsHistoryLimit: 3\n"
      "  failedJobsHistoryLimit: 1\n  jobTemplate:\n    metadata: {labels: {a: b}}\n    spec:\n"
      "      template:\n        spec: {restartPolicy: Never, containers: [{name: c}]}\n";
  MemoryFiles files;
  files
      .add("mem/s.yaml",
           std::string(kCluster) + "durations:\n  - {match: {kind: CronJob}, duration: 5m}\n")
      .add("mem/m.yaml", m);
  const Scenario s = load_scenario("mem/s.yaml", {}, files);
  CHECK(s.world->jobs.size() == 23);  // @hourly, 01:00 to 23:00
  bool ordinal_3 = false;
  for (const PodSpec& p : s.world->pods)
    ordinal_3 = ordinal_3 || p.name == "s-3";
  CHECK(ordinal_3);
  for (const char* field :
       {"spec.paused: a paused Deployment", "spec.podManagementPolicy: podManagementPolicy",
        "spec.volumeClaimTemplates: volumeClaimTemplates", "spec.timeZone: time zone Europe/Paris",
        "spec.concurrencyPolicy: concurrencyPolicy Forbid"}) {
    INFO(field);
    bool found = false;
    for (const std::string& w : s.warnings)
      found = found || w.find(field) != std::string::npos;
    CHECK(found);
  }
}

}  // namespace capsim

namespace capsim {

// A `kubectl get deploy,rs,pods -o yaml` dump holds the Deployment, the ReplicaSet it made and
// the Pods that one made; capsim expands the Deployment, so the others would count twice.
TEST_CASE("objects a read controller made are skipped once, kept when the controller is absent") {
  auto owned = [](const std::string& kind, const std::string& name) {
    return "  ownerReferences: [{apiVersion: apps/v1, kind: " + kind + ", name: " + name +
           ", uid: 0e5c, controller: true, blockOwnerDeletion: true}]\n";
  };
  const std::string rs =
      "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-6d4f\n" +
      owned("Deployment", "web") +
      "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: "
      "{labels: {app: web}}\n    spec: {containers: [{name: c}]}\n---\n";
  auto pod = [&](const std::string& name) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  labels: {app: web}\n" +
           owned("ReplicaSet", "web-6d4f") +
           "spec: {containers: [{name: c}]}\nstatus: {phase: Running}\n---\n";
  };
  // The pods come first, the Deployment last: the decision waits for every file.
  const std::string dump =
      pod("web-6d4f-aaaaa") + pod("web-6d4f-bbbbb") + rs + controller("Deployment", "web", 2);
  MemoryFiles files;
  files
      .add("mem/s.yaml",
           std::string(kCluster) + "durations:\n  - {match: {kind: Pod}, long_running: true}\n")
      .add("mem/m.yaml", dump);
  const Scenario s = load_scenario("mem/s.yaml", {}, files);
  REQUIRE(s.world->pods.size() == 2);  // the Deployment's two replicas, nothing else
  for (const PodSpec& p : s.world->pods)
    CHECK(p.job_name == "web");
  int notes = 0;
  for (const std::string& w : s.warnings) {
    if (w.find("which is read too: skipped") != std::string::npos) ++notes;
  }
  CHECK(notes == 2);  // one for the ReplicaSet, one for the ReplicaSet's pods

  // Without the controllers the pods are all there is: they are kept.
  MemoryFiles alone;
  alone
      .add("mem/s.yaml",
           std::string(kCluster) + "durations:\n  - {match: {kind: Pod}, long_running: true}\n")
      .add("mem/m.yaml", pod("web-6d4f-aaaaa") + pod("web-6d4f-bbbbb"));
  const Scenario t = load_scenario("mem/s.yaml", {}, alone);
  REQUIRE(t.world->pods.size() == 2);
  // They carry their owner, name and kind, for the report's job and owner_kind columns.
  for (const PodSpec& p : t.world->pods) {
    CHECK(p.job_name == "web-6d4f");
    CHECK(*p.controller_kind == "ReplicaSet");
  }
}

}  // namespace capsim
