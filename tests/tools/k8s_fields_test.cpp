// Labels, taints, tolerations, node affinity and resource lists parse and validate as the
// Kubernetes API server does.
#include "tools/loaders/k8s_fields.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"

namespace capsim {
namespace {

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

struct Fixture {
  World world;
  WorldBuilder b{world, GpuCatalog::builtin()};

  // The value of `key` in a one-document YAML text, as the parsers receive it.
  static YamlNode field(const std::string& text, const std::string& key) {
    YamlNode doc = YamlNode::load_string(text, "f.yaml");
    MapReader m = doc.map();
    return m.req(key);
  }
  const std::string& str(Sym s) const { return world.strings.str(s); }
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

TEST_CASE("labels are interned key by key and an empty value is kept") {
  Fixture f;
  const LabelSet l = parse_labels(
      Fixture::field("labels:\n  app: trainer\n  nvidia.com/gpu.product: NVIDIA-B200\n  empty:\n",
                     "labels"),
      f.b);
  REQUIRE(l.items().size() == 3);
  CHECK(f.str(l.get(f.b.sym("app"))) == "trainer");
  CHECK(f.str(l.get(f.b.sym("nvidia.com/gpu.product"))) == "NVIDIA-B200");
  CHECK(l.get(f.b.sym("empty")) == f.b.sym(""));
  // Interned: the same string gives the same symbol.
  CHECK(l.get(f.b.sym("app")) == f.world.strings.find("trainer"));
}

TEST_CASE("label keys and values follow Kubernetes' qualified-name rules") {
  struct Case {
    const char* name;
    std::string key;
    bool want_ok;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"plain name", "app", true, ""},
      {"prefixed", "nvidia.com/gpu.product", true, ""},
      {"name with dash, dot, underscore", "kueue.x-k8s.io/queue_name.v-1", true, ""},
      {"63-character name", std::string(63, 'a'), true, ""},
      {"64-character name", std::string(64, 'a'), false, "no more than 63 characters"},
      {"starts with a dash", "-app", false, "start and end with an alphanumeric"},
      {"space inside", "my app", false, "alphanumeric characters"},
      {"uppercase prefix", "Example.com/x", false, "lowercase RFC 1123 subdomain"},
      {"two slashes", "a/b/c", false, "at most one '/'"},
      {"empty name after prefix", "example.com/", false, "must not be empty"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const std::string problem = label_key_problem(c.key);
    CHECK(problem.empty() == c.want_ok);
    CHECK(contains(problem, c.want_part));
  }
  CHECK(label_value_problem("").empty());
  CHECK(label_value_problem("v1.2_b-c").empty());
  CHECK(contains(label_value_problem("a b"), "alphanumeric"));
  CHECK(contains(label_value_problem(std::string(64, 'v')), "63"));
}

TEST_CASE("a malformed label key is reported at its line") {
  Fixture f;
  auto e = input_error([&] {
    (void)parse_labels(Fixture::field("labels:\n  ok: yes\n  bad key: x\n", "labels"), f.b);
  });
  REQUIRE(e);
  CHECK(e->where().line == 3);
  CHECK(e->where().field == "labels.bad key");
  CHECK(contains(e->message(), "invalid label key 'bad key'"));
}

TEST_CASE("taints need a key and an effect; the value is optional") {
  Fixture f;
  const auto taints = parse_taints(
      Fixture::field(
          "taints:\n  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
          "  - {key: spot, effect: PreferNoSchedule, timeAdded: \"2024-01-01T00:00:00Z\"}\n",
          "taints"),
      f.b);
  REQUIRE(taints.size() == 2);
  CHECK(f.str(taints[0].key) == "nvidia.com/gpu");
  CHECK(f.str(taints[0].value) == "present");
  CHECK(taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(taints[1].value == f.b.sym(""));
  CHECK(taints[1].effect == TaintEffect::kPreferNoSchedule);
}

TEST_CASE("malformed taints are rejected with the field that is wrong") {
  struct Case {
    const char* name;
    const char* yaml;
    int want_line;
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"missing effect", "taints:\n  - key: a\n    value: b\n", 2, "taints[0]",
       "missing required field 'effect'"},
      {"unknown effect with a suggestion", "taints:\n  - key: a\n    effect: NoSchedul\n", 3,
       "taints[0].effect", "did you mean 'NoSchedule'"},
      {"duplicate key and effect",
       "taints:\n  - {key: a, effect: NoSchedule}\n  - {key: a, value: x, effect: NoSchedule}\n", 3,
       "taints[1]", "unique by key and effect"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e = input_error([&] { (void)parse_taints(Fixture::field(c.yaml, "taints"), f.b); });
    REQUIRE(e);
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("tolerations default to Equal, and Exists with no key tolerates everything") {
  Fixture f;
  const auto ts = parse_tolerations(
      Fixture::field("tolerations:\n"
                     "  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
                     "  - {key: spot, operator: Exists}\n"
                     "  - {operator: Exists}\n"
                     "  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, "
                     "tolerationSeconds: 300}\n",
                     "tolerations"),
      f.b);
  REQUIRE(ts.size() == 4);
  CHECK(ts[0].op == TolerationOp::kEqual);
  CHECK(f.str(ts[0].value) == "present");
  CHECK(ts[0].effect == TaintEffect::kNoSchedule);
  CHECK(ts[1].op == TolerationOp::kExists);
  CHECK_FALSE(ts[1].effect.has_value());
  CHECK(ts[2].key == kNoSym);
  CHECK(ts[3].effect == TaintEffect::kNoExecute);
  // The parsed tolerations behave as Kubernetes says.
  const Taint gpu{f.b.sym("nvidia.com/gpu"), f.b.sym("present"), TaintEffect::kNoSchedule};
  const Taint other{f.b.sym("dedicated"), f.b.sym("x"), TaintEffect::kNoExecute};
  CHECK(tolerates(ts[0], gpu));
  CHECK_FALSE(tolerates(ts[0], other));
  CHECK(tolerates(ts[2], other));
}

TEST_CASE("malformed tolerations are rejected as the API server rejects them") {
  struct Case {
    const char* name;
    const char* yaml;
    int want_line;
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"Exists with a value", "tolerations:\n  - key: a\n    operator: Exists\n    value: b\n", 4,
       "tolerations[0].value", "value must be empty when operator is 'Exists'"},
      {"unknown operator", "tolerations:\n  - key: a\n    operator: Equals\n", 3,
       "tolerations[0].operator", "unknown toleration operator 'Equals' (did you mean 'Equal'"},
      {"empty key with Equal", "tolerations:\n  - value: b\n", 2, "tolerations[0]",
       "operator must be Exists when key is empty"},
      {"tolerationSeconds without NoExecute",
       "tolerations:\n  - key: a\n    operator: Exists\n    effect: NoSchedule\n"
       "    tolerationSeconds: 30\n",
       5, "tolerations[0].tolerationSeconds", "effect must be 'NoExecute'"},
      {"typo in a field name", "tolerations:\n  - key: a\n    efect: NoSchedule\n", 3,
       "tolerations[0].efect", "did you mean 'effect'"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e =
        input_error([&] { (void)parse_tolerations(Fixture::field(c.yaml, "tolerations"), f.b); });
    REQUIRE(e);
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("node affinity reads required terms, preferred weights, Gt values and matchFields") {
  Fixture f;
  const NodeAffinity a = parse_node_affinity(
      Fixture::field(
          "nodeAffinity:\n"
          "  requiredDuringSchedulingIgnoredDuringExecution:\n"
          "    nodeSelectorTerms:\n"
          "      - matchExpressions:\n"
          "          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-B200, "
          "NVIDIA-H200]}\n"
          "          - {key: nvidia.com/gpu.memory, operator: Gt, values: [\"80000\"]}\n"
          "      - matchFields:\n"
          "          - {key: metadata.name, operator: In, values: [gpu-node-1]}\n"
          "  preferredDuringSchedulingIgnoredDuringExecution:\n"
          "    - weight: 30\n"
          "      preference:\n"
          "        matchExpressions:\n"
          "          - {key: spot, operator: DoesNotExist}\n",
          "nodeAffinity"),
      f.b);
  REQUIRE(a.required.has_value());
  REQUIRE(a.required->size() == 2);
  const auto& t0 = (*a.required)[0].match_expressions;
  REQUIRE(t0.size() == 2);
  CHECK(t0[0].op == SelectorOp::kIn);
  REQUIRE(t0[0].values.size() == 2);
  CHECK(f.str(t0[0].values[1]) == "NVIDIA-H200");
  CHECK(t0[1].op == SelectorOp::kGt);
  CHECK(t0[1].number == 80000);
  const auto& fields = (*a.required)[1].match_fields;
  REQUIRE(fields.size() == 1);
  CHECK(f.str(fields[0].key) == "metadata.name");
  REQUIRE(a.preferred.size() == 1);
  CHECK(a.preferred[0].weight == 30);
  CHECK(a.preferred[0].preference.match_expressions[0].op == SelectorOp::kDoesNotExist);
}

TEST_CASE("malformed node affinity names the requirement that breaks a rule") {
  const std::string head =
      "nodeAffinity:\n"
      "  requiredDuringSchedulingIgnoredDuringExecution:\n"
      "    nodeSelectorTerms:\n"
      "      - matchExpressions:\n";  // the requirement is on line 5
  struct Case {
    const char* name;
    std::string yaml;
    int want_line;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"In without values", head + "          - {key: a, operator: In}\n", 5,
       "values must be given when operator is 'In'"},
      {"Exists with values", head + "          - {key: a, operator: Exists, values: [x]}\n", 5,
       "may not be given when operator is 'Exists'"},
      {"Gt with a word", head + "          - {key: a, operator: Gt, values: [big]}\n", 5,
       "'big' is not an integer"},
      {"Lt with two values", head + "          - {key: a, operator: Lt, values: [\"1\", \"2\"]}\n",
       5, "exactly one value"},
      {"unknown operator", head + "          - {key: a, operator: NotExists}\n", 5,
       "unknown operator 'NotExists'"},
      {"matchFields on a label",
       "nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n"
       "    nodeSelectorTerms:\n      - matchFields:\n"
       "          - {key: metadata.labels, operator: In, values: [x]}\n",
       5, "only metadata.name"},
      {"no terms",
       "nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n"
       "    nodeSelectorTerms: []\n",
       3, "at least one term"},
      {"weight above 100",
       "nodeAffinity:\n  preferredDuringSchedulingIgnoredDuringExecution:\n"
       "    - weight: 101\n      preference: {}\n",
       3, "between 1 and 100"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e = input_error(
        [&] { (void)parse_node_affinity(Fixture::field(c.yaml, "nodeAffinity"), f.b); });
    REQUIRE(e);
    CHECK(e->where().line == c.want_line);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("resource lists convert cpu to millicores, memory to bytes and GPUs to units") {
  Fixture f;
  const ResourceList l = parse_resource_list(
      Fixture::field("r:\n  cpu: 500m\n  memory: 64Gi\n  nvidia.com/gpu: 8\n"
                     "  ephemeral-storage: 1G\n  example.com/widget: 1000m\n  hugepages-2Mi: 0\n",
                     "r"),
      f.b);
  CHECK(l.get(kCpu) == 500);
  CHECK(l.get(kMemory) == 64 * kGi);
  CHECK(l.get(kNvidiaGpu) == 8);
  CHECK(l.get(kEphemeralStorage) == 1000000000);
  const auto widget = f.world.resources.find("example.com/widget");
  REQUIRE(widget.has_value());
  CHECK(l.get(*widget) == 1);  // 1000m of a whole-unit resource is 1
  // Zero amounts are dropped.
  CHECK(l.items.size() == 5);
  CHECK(parse_resource_list(Fixture::field("r:\n  cpu: \"2\"\n", "r"), f.b).get(kCpu) == 2000);
}

TEST_CASE("node resource vectors accept pods and do not intern zero amounts") {
  Fixture f;
  const std::size_t before = f.world.resources.size();
  const ResourceVec v = parse_resource_vec(
      Fixture::field("c:\n  cpu: \"96\"\n  memory: 1Ti\n  pods: \"110\"\n  hugepages-1Gi: \"0\"\n"
                     "  nvidia.com/mig-1g.10gb: \"14\"\n",
                     "c"),
      f.b);
  CHECK(v[kCpu] == 96000);
  CHECK(v[kMemory] == 1024 * kGi);
  CHECK(v[kPods] == 110);
  CHECK(f.world.resources.size() == before + 1);  // only the MIG resource is new
  CHECK_FALSE(f.world.resources.find("hugepages-1Gi").has_value());
  CHECK(v[*f.world.resources.find("nvidia.com/mig-1g.10gb")] == 14);
}

TEST_CASE("bad resource amounts and names are errors at their line") {
  struct Case {
    const char* name;
    const char* yaml;
    int want_line;
    const char* want_field;
    const char* want_part;
  };
  const std::vector<Case> cases = {
      {"negative memory", "r:\n  cpu: 1\n  memory: -1Gi\n", 3, "r.memory", "is negative"},
      {"unknown suffix", "r:\n  cpu: 500x\n", 2, "r.cpu", "unknown suffix 'x'"},
      {"fractional GPU", "r:\n  nvidia.com/gpu: 0.5\n", 2, "r.nvidia.com/gpu",
       "'0.5' is not a whole number"},
      {"fractional GPU in milli", "r:\n  nvidia.com/gpu: 1500m\n", 2, "r.nvidia.com/gpu",
       "Kubernetes rejects fractional amounts"},
      {"typo in a resource name", "r:\n  cpus: 1\n", 2, "r.cpus",
       "unknown resource 'cpus' (did you mean 'cpu'?)"},
      {"a GPU without its domain", "r:\n  gpu: 1\n", 2, "r.gpu", "did you mean 'nvidia.com/gpu'"},
      {"pods is not a container resource", "r:\n  pods: 1\n", 2, "r.pods", "unknown resource"},
      {"reserved domain", "r:\n  kubernetes.io/foo: 1\n", 2, "r.kubernetes.io/foo", "reserved"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto e = input_error([&] { (void)parse_resource_list(Fixture::field(c.yaml, "r"), f.b); });
    REQUIRE(e);
    CHECK(e->kind() == InputErrorKind::kInvalid);
    CHECK(e->where().line == c.want_line);
    CHECK(e->where().field == c.want_field);
    CHECK(contains(e->message(), c.want_part));
  }
}

TEST_CASE("resource_quantity rounds bytes up and keeps whole units whole") {
  struct Case {
    const char* resource;
    const char* text;
    std::int64_t want;
  };
  const std::vector<Case> cases = {
      {"cpu", "0.1", 100},
      {"cpu", "1.0001", 1001},  // 1000.1m rounds up
      {"memory", "1.5Ki", 1536},
      {"memory", "1k", 1000},
      {"hugepages-1Gi", "2Gi", 2 * kGi},
      {"nvidia.com/gpu", "2e0", 2},
      {"example.com/x", "1k", 1000},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.resource));
    INFO(std::string(c.text));
    auto r = resource_quantity(c.resource, c.text);
    REQUIRE(r.ok());
    CHECK(*r == c.want);
  }
  CHECK_FALSE(resource_quantity("nvidia.com/gpu", "0.5").ok());
  CHECK_FALSE(resource_quantity("cpu", "-1").ok());
}

}  // namespace
}  // namespace capsim
