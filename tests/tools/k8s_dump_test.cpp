// capsim import kubernetes: the corpus in tests/data/k8s-dump is a small GPU cluster's
// `kubectl get -A -o yaml` dump (and the same as -o json) with finished, running and pending pods,
// MIG and time-sliced nodes. Imported and run, pods that ran are where they ran, running ones are
// bound on their nodes, the pending one stays pending; what the importer cannot carry over is
// reported by kind, field or node name; bad input is located in the dump.
#include "tools/loaders/k8s_dump.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "fixtures/imported_scenario.hpp"
#include "reports/run_reader.hpp"
#include "sim/input_error.hpp"
#include "tools/loaders/scenario_loader.hpp"

namespace capsim {

namespace {

std::string corpus(const std::string& name) {
  return testing::source_path("tests/data/k8s-dump/" + name);
}

// The document of pod `name` in a pods.yaml text, from its "---" to the next.
std::string pod_doc(const std::string& pods, const std::string& name) {
  const std::size_t at = pods.find("\n  name: " + name + "\n");
  REQUIRE(at != std::string::npos);
  const std::size_t begin = pods.rfind("---", at);
  const std::size_t end = pods.find("---", at);
  return pods.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The error importing `text` (as bad.yaml) gives: refused as invalid input, with its message.
std::string import_error(const std::string& text) {
  MemoryFiles files;
  files.add("bad.yaml", text);
  try {
    (void)import_kubernetes_dump(files, {"bad.yaml"}, {});
  } catch (const InputError& e) {
    CHECK(e.kind() == InputErrorKind::kInvalid);
    return e.what();
  }
  FAIL("no error");
  return "";
}

struct PodRow {
  std::string status, node, job;
  double submit = -1, start = -1, end = -1;
};

std::map<std::string, PodRow> pod_rows(const std::string& db) {
  RunReader reader(db);
  auto st = reader.db().prepare(
      "SELECT pod, status, coalesce(node, ''), coalesce(job, ''), submit_s, "
      "coalesce(start_s, -1), coalesce(end_s, -1) FROM pod WHERE run_id = 1");
  std::map<std::string, PodRow> rows;
  while (st.step()) {
    rows[st.column_text(0)] = PodRow{st.column_text(1),   st.column_text(2),   st.column_text(3),
                                     st.column_double(4), st.column_double(5), st.column_double(6)};
  }
  return rows;
}

}  // namespace

TEST_CASE("parse_rfc3339 reads the API server's times, with fractions and offsets") {
  struct Case {
    const char* text;
    std::optional<std::int64_t> want;
  };
  const Case cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      // 2026-11-30 is day 20,787 after 1970-01-01: 20,787 x 86,400 + 8 h.
      {"2026-11-30T08:00:00Z", 20787LL * 86400 + 8 * 3600},
      {"2026-11-30T08:00:00.123456Z", 20787LL * 86400 + 8 * 3600},
      {"2026-11-30T10:00:00+02:00", 20787LL * 86400 + 8 * 3600},
      {"2024-02-29T00:00:00Z", 19782LL * 86400},  // a leap day
      {"2026-11-30 08:00:00Z", std::nullopt},
      {"2026-13-01T00:00:00Z", std::nullopt},
      {"2026-11-30T08:00:00", std::nullopt},
      {"yesterday", std::nullopt},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(parse_rfc3339(c.text) == c.want);
  }
}

TEST_CASE("a dump read as -o yaml and as -o json imports to the same scenario") {
  RealFiles files;
  const DumpImport y = import_kubernetes_dump(files, {corpus("cluster.yaml")}, {});
  const DumpImport j = import_kubernetes_dump(files, {corpus("cluster.json")}, {});
  REQUIRE(y.files.size() == j.files.size());
  for (std::size_t i = 0; i < y.files.size(); ++i) {
    CAPTURE(y.files[i].name);
    CHECK(y.files[i].name == j.files[i].name);
    CHECK(testing::without_import_header(y.files[i].text) ==
          testing::without_import_header(j.files[i].text));
  }
  CHECK(y.report == j.report);
  // 6 nodes in the dump, odd-0's GPU is unknown; 11 pods, one never ran.
  CHECK(y.nodes == 5);
  CHECK(y.pods == 9);
}

namespace {

// A generated dump of `nodes` nodes and `pods` pods, as its objects' texts (each at column 0).
// Object `odd` (a pod) has an anchor and an alias, which the fast path declines.
std::vector<std::string> generated_objects(int nodes, int pods, int odd) {
  std::vector<std::string> objects;
  for (int n = 0; n < nodes; ++n) {
    objects.push_back(fmt::format(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n-{}\n  labels:\n"
        "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n    nvidia.com/gpu.count: \"8\"\n"
        "status:\n  capacity: {{cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"}}\n",
        n));
  }
  for (int p = 0; p < pods; ++p) {
    const int i = static_cast<int>(objects.size());
    const char* requests = i == odd ? "      requests: &r {cpu: \"1\", memory: 1Gi}\n"
                                      "      limits: *r\n"
                                    : "      requests: {cpu: \"1\", memory: 1Gi}\n";
    objects.push_back(fmt::format(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{}\n  namespace: default\n"
        "  creationTimestamp: \"2026-11-30T08:{:02}:{:02}Z\"\n"
        "# a comment line at column 0, inside the item\n"
        "spec:\n  containers:\n  - name: c\n    resources:\n{}"
        "  nodeName: n-{}\nstatus:\n  phase: Succeeded\n  containerStatuses:\n  - name: c\n"
        "    state:\n      terminated:\n        startedAt: \"2026-11-30T09:00:00Z\"\n"
        "        finishedAt: \"2026-11-30T09:{:02}:00Z\"\n",
        p, p / 60 % 60, p % 60, requests, p % nodes, 1 + p % 50));
  }
  return objects;
}

std::string as_list(const std::vector<std::string>& objects) {
  std::string text = "apiVersion: v1\nitems:\n";
  for (const std::string& o : objects) {
    bool first = true;
    for (std::size_t at = 0; at < o.size();) {
      const std::size_t eol = o.find('\n', at);
      const std::string_view line(o.data() + at, eol - at);
      text += line.starts_with("#") ? "" : first ? "- " : "  ";
      text += line;
      text += '\n';
      first = false;
      at = eol + 1;
    }
  }
  return text + "kind: List\nmetadata:\n  resourceVersion: \"\"\n";
}

std::string as_documents(const std::vector<std::string>& objects) {
  std::string text;
  for (const std::string& o : objects)
    text += "---\n" + o;
  return text;
}

}  // namespace

TEST_CASE("a long List's items read as a document stream import as each item read alone") {
  // 30 nodes and 700 pods: several chunks of items through one parser, one item the fast path
  // declines in the middle of a chunk (read alone, the chunk resumed after it). The reference
  // is the same objects as a multi-document file, which is parsed whole, not in items.
  const std::vector<std::string> objects = generated_objects(30, 700, 333);
  MemoryFiles list_files, doc_files;
  list_files.add("dump.yaml", as_list(objects));
  doc_files.add("dump.yaml", as_documents(objects));
  const DumpImport list = import_kubernetes_dump(list_files, {"dump.yaml"}, {});
  const DumpImport docs = import_kubernetes_dump(doc_files, {"dump.yaml"}, {});
  CHECK(list.nodes == 30);
  CHECK(list.pods == 700);
  REQUIRE(list.files.size() == docs.files.size());
  for (std::size_t i = 0; i < list.files.size(); ++i) {
    CAPTURE(list.files[i].name);
    CHECK(list.files[i].text == docs.files[i].text);
  }
  CHECK(list.report == docs.report);
  // The item with the alias kept its meaning: limits equal to its requests.
  const std::string pods = list.files[1].text;
  const std::string doc = pod_doc(pods, "p-303");
  CHECK(doc.find("limits:") != std::string::npos);
}

TEST_CASE("an error in a List's item far into the file is at the file's line") {
  // Items after the first chunks: an error found while a chunk is streamed (a bad time), and
  // one the fast path declines (a repeated key, found by the whole-text check), each at the
  // line of the file the item's text is on.
  std::vector<std::string> objects = generated_objects(5, 600, -1);
  const std::string good = objects[500];
  struct Case {
    const char* name;
    std::string from, to;
    std::string at;          // the text the error is at
    std::string want_field;  // the field the message names (none for a text-level error)
    std::string want;
  };
  const Case cases[] = {
      {"a time that is not RFC 3339",
       "creationTimestamp: \"2026-11-30T08:", "creationTimestamp: \"x", "creationTimestamp: \"x",
       "items[500].metadata.creationTimestamp", "is not an RFC 3339 time"},
      {"a key given twice", "  namespace: default\n", "  namespace: default\n  namespace: a\n",
       "  namespace: a\n", "", "duplicate key 'namespace'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string bad = good;
    bad.replace(bad.find(c.from), c.from.size(), c.to);
    objects[500] = bad;
    const std::string text = as_list(objects);
    // The line (1-based) of the changed text in the file.
    const std::size_t at = text.find(c.at);
    REQUIRE(at != std::string::npos);
    const int line = 1 + static_cast<int>(std::count(
                             text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    const std::string what = import_error(text);
    CAPTURE(what);
    CHECK(what.rfind(fmt::format("bad.yaml:{}:", line), 0) == 0);
    if (!c.want_field.empty()) CHECK(what.find(c.want_field) != std::string::npos);
    CHECK(what.find(c.want) != std::string::npos);
  }
}

TEST_CASE("an imported dump replays: pods that ran where they ran, running ones bound, pending") {
  testing::ScratchDir dir("k8s-dump");
  const auto imp = testing::run_capsim(
      "import kubernetes '" + corpus("cluster.yaml") + "' -o '" + dir.file("out") + "'", dir);
  INFO(imp.err);
  REQUIRE(imp.exit_code == 0);
  // What is not carried over is reported: the node by name, kinds and fields counted.
  CHECK(imp.err.find("node odd-0 is not carried over: GPU product 'NVIDIA-Imaginary-9000'") !=
        std::string::npos);
  CHECK(imp.err.find("1 x Pod Failed without a container run (UnexpectedAdmissionError)") !=
        std::string::npos);
  CHECK(imp.err.find("1 x apps/v1 ReplicaSet (its pods are carried over") != std::string::npos);
  CHECK(imp.err.find("1 x v1 Service") != std::string::npos);
  CHECK(imp.err.find("1 x Pod status.containerStatuses[].restartCount > 0") != std::string::npos);
  CHECK(imp.err.find("5 node(s) (1 pool(s), 3 single node(s)), 9 pod(s): 3 finished (1 failed), "
                     "5 running at the dump (bound on their nodes), 1 pending") !=
        std::string::npos);
  const std::string scenario = testing::slurp(dir.file("out/scenario.yaml"));
  CHECK(scenario.find("# Time 0 is 2026-11-30T08:00:00Z") != std::string::npos);
  CHECK(scenario.find("durations:\n  - long_running: true") != std::string::npos);

  const auto run = testing::run_capsim(
      "run '" + dir.file("out/scenario.yaml") + "' -o '" + dir.file("replay.db") + "' --quiet",
      dir);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto rows = pod_rows(dir.file("replay.db"));
  CHECK(rows.size() == 9);
  CHECK(rows.count("rejected") == 0);
  auto row = [&](const std::string& pod) {
    CAPTURE(pod);
    REQUIRE(rows.count(pod) == 1);
    return rows.at(pod);
  };
  // Finished: arrive at creation, run for startedAt -> finishedAt, on the node they ran on.
  const PodRow a = row("train-a-x7k2p");
  CHECK(a.status == "completed");
  CHECK(a.node == "a100-0");
  CHECK(a.job == "train-a");
  CHECK(a.submit == 0);
  CHECK(a.end - a.start == doctest::Approx(3600));  // 08:00:05 -> 09:00:05
  const PodRow b = row("train-b-q9m4d");
  CHECK(b.status == "failed");
  CHECK(b.node == "a100-1");
  CHECK(b.submit == 600);
  CHECK(b.end - b.start == doctest::Approx(1800));
  CHECK(row("mig-eval").node == "mig-0");
  CHECK(row("mig-eval").status == "completed");
  // Running at the dump: bound on their node from the time they were scheduled there.
  for (const auto& [pod, node] :
       std::map<std::string, std::string>{{"long-train", "a100-1"},
                                          {"infer-7d9f-abcde", "a100-0"},
                                          {"mig-notebook", "mig-0"},
                                          {"t4-demo", "t4-0"},
                                          {"node-agent-r2d2x", "cpu-0"}}) {
    const std::string& pod_name = pod;  // CAPTURE copies no structured binding (clang++ 14)
    CAPTURE(pod_name);
    CHECK(row(pod).status == "running");
    CHECK(row(pod).node == node);
  }
  CHECK(row("infer-7d9f-abcde").submit == 3910);  // PodScheduled at 09:05:10
  CHECK(row("infer-7d9f-abcde").job == "infer-7d9f");
  CHECK(row("mig-notebook").submit == 1803);  // no PodScheduled condition: startedAt 08:30:03
  // Pending at the dump, and still pending: both A100 nodes are taken at 11:00.
  const PodRow p = row("big-train-zz9qp");
  CHECK(p.status == "pending");
  CHECK(p.submit == 10800);
}

TEST_CASE("a finished pod prefers its node, beside the affinity it has of its own") {
  // train-b gets a preferred term of its own; train-a has none (its affinity is the one shared
  // by every pod that ran on a100-0, written once).
  std::string dump = testing::slurp(corpus("cluster.yaml"));
  const std::string own =
      "    affinity:\n"
      "      nodeAffinity:\n"
      "        preferredDuringSchedulingIgnoredDuringExecution:\n"
      "        - weight: 5\n"
      "          preference:\n"
      "            matchExpressions:\n"
      "            - {key: zone, operator: In, values: [a]}\n";
  const std::size_t at = dump.find("  spec:\n", dump.find("name: train-b-q9m4d"));
  REQUIRE(at != std::string::npos);
  dump.insert(at + 8, own);
  MemoryFiles files;
  files.add("dump.yaml", dump);
  const DumpImport r = import_kubernetes_dump(files, {"dump.yaml"}, {});
  const std::string& pods = r.files.at(1).text;
  CHECK(pod_doc(pods, "train-a-x7k2p")
            .find("spec:\n"
                  "  affinity:\n"
                  "    nodeAffinity:\n"
                  "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                  "        - preference:\n"
                  "            matchFields:\n"
                  "              - key: metadata.name\n"
                  "                operator: In\n"
                  "                values:\n"
                  "                  - a100-0\n"
                  "          weight: 100\n"
                  "  containers:\n") != std::string::npos);
  CHECK(pod_doc(pods, "train-b-q9m4d")
            .find("  affinity:\n"
                  "    nodeAffinity:\n"
                  "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                  "        - preference:\n"
                  "            matchExpressions:\n"
                  "              - key: zone\n"
                  "                operator: In\n"
                  "                values:\n"
                  "                  - a\n"
                  "          weight: 5\n"
                  "        - preference:\n"
                  "            matchFields:\n"
                  "              - key: metadata.name\n"
                  "                operator: In\n"
                  "                values:\n"
                  "                  - a100-1\n"
                  "          weight: 100\n"
                  "  containers:\n") != std::string::npos);
}

TEST_CASE("--placement free and bind, --running pin change only how pods reach their node") {
  RealFiles files;
  DumpImportOptions bind;
  bind.placement = DumpImportOptions::Placement::kBind;
  bind.running = DumpImportOptions::Running::kPin;
  const DumpImport r = import_kubernetes_dump(files, {corpus("cluster.yaml")}, bind);
  const std::string& pods = r.files.at(1).text;
  // train-a is bound where it ran, arriving when it was scheduled (08:00:01).
  const std::string train_a = pod_doc(pods, "train-a-x7k2p");
  CHECK(train_a.find("nodeName: a100-0") != std::string::npos);
  CHECK(train_a.find("capsim.io/arrival: 1s") != std::string::npos);
  // long-train is pinned by a required node affinity, not bound.
  const std::string long_train = pod_doc(pods, "long-train");
  CHECK(long_train.find("nodeName") == std::string::npos);
  CHECK(long_train.find("requiredDuringSchedulingIgnoredDuringExecution") != std::string::npos);

  DumpImportOptions free;
  free.placement = DumpImportOptions::Placement::kFree;
  const DumpImport f = import_kubernetes_dump(files, {corpus("cluster.yaml")}, free);
  const std::string free_a = pod_doc(f.files.at(1).text, "train-a-x7k2p");
  CHECK(free_a.find("nodeName") == std::string::npos);
  CHECK(free_a.find("affinity") == std::string::npos);
}

TEST_CASE("a replay spanning decades samples coarsely enough to run without --force") {
  // Found by the k8s_dump fuzz target: a dump whose times span decades imported into a scenario
  // whose sample table (horizon / 1 minute x series) `capsim run` refuses without --force. The
  // dump time 40 years on gives a horizon of about 21.04 million minutes: with the corpus's pools
  // p, series = 1 + p, at most 20,000,000 / (1 + p) samples, so a coarser interval is written.
  RealFiles files;
  DumpImportOptions late;
  late.dump_time = parse_rfc3339("2066-11-30T08:00:00Z");
  const DumpImport r = import_kubernetes_dump(files, {corpus("cluster.yaml")}, late);
  const std::string& sc = r.files.at(0).text;
  CHECK(sc.find("sample_interval: ") != std::string::npos);
  MemoryFiles written;
  for (const DumpOutputFile& f : r.files)
    written.add("out/" + f.name, f.text);
  // The load checks the limit (it threw before the fix) without --force.
  const Scenario s = load_scenario("out/scenario.yaml", LoadOptions{}, written);
  CHECK(s.sim.horizon > 21'000'000 * kMinute);
  CHECK(s.sim.sample_interval > kMinute);
  // The corpus as dumped (a replay of hours) keeps the default interval.
  CHECK(import_kubernetes_dump(files, {corpus("cluster.yaml")}, {})
            .files.at(0)
            .text.find("sample_interval") == std::string::npos);
}

TEST_CASE("a pod the dump shows bound before it was created arrives when it was created") {
  // Found by the k8s_dump fuzz target: with --placement bind a finished pod arrives when it was
  // scheduled; a PodScheduled time before the pod's creationTimestamp (clocks apart) made an
  // arrival before time 0, which the loader refuses. train-a-x7k2p, created at 08:00:00 (time
  // 0), is scheduled a year earlier here: it arrives at 0 s, not at -365 d.
  std::string dump = testing::slurp(corpus("cluster.yaml"));
  const std::string scheduled = "- lastTransitionTime: \"2026-11-30T08:00:01Z\"";
  const std::size_t at = dump.find(scheduled, dump.find("name: train-a-x7k2p"));
  REQUIRE(at != std::string::npos);
  dump.replace(at, scheduled.size(), "- lastTransitionTime: \"2025-11-30T08:00:01Z\"");
  MemoryFiles files;
  files.add("dump.yaml", dump);
  DumpImportOptions bind;
  bind.placement = DumpImportOptions::Placement::kBind;
  const DumpImport r = import_kubernetes_dump(files, {"dump.yaml"}, bind);
  CHECK(pod_doc(r.files.at(1).text, "train-a-x7k2p").find("capsim.io/arrival: 0s") !=
        std::string::npos);
  MemoryFiles written;
  for (const DumpOutputFile& f : r.files)
    written.add("out/" + f.name, f.text);
  CHECK_NOTHROW((void)load_scenario("out/scenario.yaml", LoadOptions{}, written));
}

TEST_CASE("a kube-scheduler-simulator export imports like a kubectl dump") {
  RealFiles files;
  const DumpImport r = import_kubernetes_dump(files, {corpus("kss-export.json")}, {});
  CHECK(r.nodes == 2);
  CHECK(r.pods == 2);
  bool noted = false;
  for (const std::string& line : r.report)
    noted = noted || line == "not carried over: 1 x StorageClass";
  CHECK(noted);
  const std::string& scenario = r.files.at(0).text;
  CHECK(scenario.find("model: H100-80GB") != std::string::npos);
  // Namespaces come along with their labels (namespaceSelectors match them), before the pods.
  const std::string& pods = r.files.at(1).text;
  const std::size_t ns = pods.find("kind: Namespace\n");
  REQUIRE(ns != std::string::npos);
  const std::string doc = pods.substr(ns, pods.find("---", ns) - ns);
  CHECK(doc.find("\n  name: default\n") != std::string::npos);
  CHECK(doc.find("\n    team: web\n") != std::string::npos);
  CHECK(ns < pods.find("name: web-0"));
}

TEST_CASE("a MIG layout from the GPU Operator's mig-parted ConfigMap is carried over") {
  RealFiles files;
  const std::string node = corpus("custom-mig-node.yaml");
  // Without the config the node cannot be modelled, and says so by name; with no other node
  // the replay would have no cluster, which `capsim run` refuses, so the import refuses it.
  try {
    (void)import_kubernetes_dump(files, {node}, {});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message().find("no Node of the dump is carried over, so the replay would have no "
                           "cluster: node mig-custom-0 is not carried over: its MIG layout "
                           "nvidia.com/mig.config=team-mix") == 0);
  }
  const DumpImport with =
      import_kubernetes_dump(files, {node, corpus("mig-parted-configmap.yaml")}, {});
  CHECK(with.nodes == 1);
  REQUIRE(with.files.size() == 3);
  CHECK(with.files.at(2).name == "mig-parted-0.yaml");
  CHECK(with.files.at(0).text.find("mig_configs:\n  - mig-parted-0.yaml") != std::string::npos);
  CHECK(with.files.at(0).text.find("config: team-mix") != std::string::npos);
}

TEST_CASE("bad dumps are refused with the file, line and field") {
  struct Case {
    const char* name;
    const char* text;
    const char* want_at;  // the start of the message: file:line:column: field
    const char* want;     // a part of the message
  };
  const Case cases[] = {
      {"a time that is not RFC 3339, in the 8th line of a List (its item parsed alone)",
       "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
       "    name: p\n    creationTimestamp: yesterday\n  spec:\n    containers: [{name: c}]\n",
       "bad.yaml:8:24: items[0].metadata.creationTimestamp", "'yesterday' is not an RFC 3339 time"},
      {"a misspelt pod field, as the Pod loader reads it",
       "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
       "    name: p\n    creationTimestamp: \"2026-11-30T08:00:00Z\"\n  spec:\n"
       "    nodeSelecter: {a: b}\n    containers: [{name: c}]\n",
       "bad.yaml:10:", "unknown field 'nodeSelecter' (did you mean 'nodeSelector'?)"},
      {"a pod without its creation time",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c}]\n",
       "bad.yaml:", "creationTimestamp"},
      {"a document that is no object", "pods_and_nodes: []\n", "bad.yaml",
       "neither a Kubernetes object (no kind), a List (kind: List, items) nor a "
       "kube-scheduler-simulator export"},
      {"a key given twice inside a List's item (refused as the loader refuses it)",
       "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
       "    name: p\n    name: q\n",
       "bad.yaml:8:5", "duplicate key 'name' (first given on line 7)"},
      {"a key given twice in the List's own mapping, after its items",
       "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
       "    name: p\nkind: List\n",
       "bad.yaml:8:1", "duplicate key 'kind' (first given on line 1)"},
      {"nesting past the limit inside a List's item (which sits two levels deep in the file)",
       "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"
       "  x: "
       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
       "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
       "bad.yaml:7:67", "nesting deeper than 64 levels of mappings and lists"},
      {"an empty dump, whose replay would have no cluster (found by the k8s_dump fuzz target)", "",
       "bad.yaml: ", "the dump holds no Node, so the replay would have no cluster"},
      {"pods without their nodes",
       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  creationTimestamp: "
       "\"2026-11-30T08:00:00Z\"\nspec:\n  containers: [{name: c}]\nstatus: {phase: Pending}\n",
       "bad.yaml: ", "the dump holds no Node"},
      {"a Namespace whose kubernetes.io/metadata.name label is not its name, which the loader of "
       "the replay refuses (found by the k8s_dump fuzz target)",
       "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels:\n"
       "    kubernetes.io/metadata.name: team-b\n",
       "bad.yaml:6:34: metadata.labels.kubernetes.io/metadata.name",
       "label kubernetes.io/metadata.name is 'team-b'"},
      {"a PriorityClass name the API server refuses, checked as the loader checks it",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: High_Prio\n"
       "value: 10\n",
       "bad.yaml:", "High_Prio"},
      {"a taint key the scenario loader refuses (found by the k8s_dump fuzz target)",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints:\n"
       "  - {key: nvidia*com/gpu, effect: NoSchedule}\nstatus:\n"
       "  capacity: {cpu: '4', memory: 1Gi}\n",
       "bad.yaml:6:11: spec.taints[0].key", "invalid taint key 'nvidia*com/gpu'"},
      {"a node label value the API server refuses",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {team: 'a b'}\nstatus:\n"
       "  capacity: {cpu: '4', memory: 1Gi}\n",
       "bad.yaml:5:", "invalid label value 'a b'"},
      {"a node's pod capacity past the scenario loader's bound (found by the k8s_dump fuzz "
       "target)",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n"
       "  capacity: {cpu: '4', memory: 1Gi, pods: '130010'}\n",
       "bad.yaml:5:43: status.capacity.pods", "130010 pods is out of range"},
      {"a node advertising a typo of a GPU resource, which the scenario loader refuses (found "
       "by the k8s_dump fuzz target)",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n"
       "  capacity: {cpu: '4', memory: 1Gi, knvidia.com/gpu: '8'}\n",
       "bad.yaml:5:", "status.capacity.knvidia.com/gpu: unknown GPU resource 'knvidia.com/gpu'"},
      {"a node without cpu",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  capacity: {memory: 1Gi}\n",
       "bad.yaml:5:13: status.capacity", "a Node's status.capacity needs cpu and memory"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string what = import_error(c.text);
    CAPTURE(what);
    CHECK(what.rfind(c.want_at, 0) == 0);
    CHECK(what.find(c.want) != std::string::npos);
  }
}

TEST_CASE("capsim import kubernetes exits 65 on a bad dump and writes nothing") {
  testing::ScratchDir dir("k8s-dump-bad");
  testing::write_file(dir.file("bad.yaml"),
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: x}\n"
                      "spec: {containers: [{name: c}]}\n");
  const auto r = testing::run_capsim(
      "import kubernetes '" + dir.file("bad.yaml") + "' -o '" + dir.file("out") + "'", dir);
  CHECK(r.exit_code == 65);
  CHECK(r.err.find("bad.yaml:3:") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.file("out/scenario.yaml")));
}

}  // namespace capsim
