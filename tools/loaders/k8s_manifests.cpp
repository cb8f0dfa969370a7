#include "tools/loaders/k8s_manifests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "sim/check.hpp"
#include "sim/random.hpp"
#include "sim/resources.hpp"
#include "tools/loaders/cron_schedule.hpp"
#include "tools/loaders/dra_manifests.hpp"
#include "tools/loaders/duration_rules.hpp"
#include "tools/loaders/k8s_fields.hpp"
#include "tools/loaders/manifest_kind_policy.hpp"

namespace capsim {

namespace {

// The simulation annotations (see docs/kubernetes-manifests.md).
constexpr const char* kArrival = "capsim.io/arrival";
constexpr const char* kDuration = "capsim.io/duration";
constexpr const char* kLongRunning = "capsim.io/long-running";
constexpr const char* kGpuUtil = "capsim.io/gpu-util";
constexpr const char* kGpuSmFraction = "capsim.io/gpu-sm-fraction";
constexpr const char* kGpuMemory = "capsim.io/gpu-memory";
constexpr const char* kGpuMilli = "capsim.io/gpu-milli";
constexpr const char* kFails = "capsim.io/fails";
constexpr const char* kQueue = "capsim.io/queue";
constexpr const char* kPricePerHour = "capsim.io/price-per-hour";
constexpr const char* kGang = "capsim.io/gang";
constexpr const char* kCheckpointInterval = "capsim.io/checkpoint-interval";
constexpr const char* kCheckpointCost = "capsim.io/checkpoint-cost";
constexpr const char* kCheckpointRestart = "capsim.io/checkpoint-restart";

const std::vector<std::string>& pod_annotations() {
  static const std::vector<std::string> k = {
      kArrival,          kDuration, kLongRunning, kGpuUtil, kGpuSmFraction,      kGpuMemory,
      kGpuMilli,         kFails,    kQueue,       kGang,    kCheckpointInterval, kCheckpointCost,
      kCheckpointRestart};
  return k;
}

constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// Fields the API server sets or that capsim does not model, accepted silently per object level.
// A field missing from these lists and not read is an error (typos like `nodeSelecter`).
const std::vector<std::string> kIgnoredMetadata = {"uid",
                                                   "resourceVersion",
                                                   "generation",
                                                   "creationTimestamp",
                                                   "deletionTimestamp",
                                                   "deletionGracePeriodSeconds",
                                                   "managedFields",
                                                   "finalizers",
                                                   "selfLink",
                                                   "generateName",
                                                   "clusterName"};
const std::vector<std::string> kIgnoredPodSpec = {"automountServiceAccountToken",
                                                  "dnsConfig",
                                                  "dnsPolicy",
                                                  "enableServiceLinks",
                                                  "ephemeralContainers",
                                                  "hostAliases",
                                                  "hostIPC",
                                                  "hostNetwork",
                                                  "hostPID",
                                                  "hostUsers",
                                                  "hostname",
                                                  "hostnameOverride",
                                                  "imagePullSecrets",
                                                  "os",
                                                  "readinessGates",
                                                  "runtimeClassName",
                                                  "schedulerName",
                                                  "securityContext",
                                                  "serviceAccount",
                                                  "serviceAccountName",
                                                  "setHostnameAsFQDN",
                                                  "shareProcessNamespace",
                                                  "subdomain",
                                                  "volumes"};
// Accepted, but they change scheduling in a real cluster, so the user hears that capsim ignores
// them.
const std::vector<std::pair<std::string, std::string>> kWarnedPodSpec = {
    {"schedulingGates", "scheduling gates are not modelled: the pod is schedulable at once"},
    {"activeDeadlineSeconds", "activeDeadlineSeconds is not modelled"}};
const std::vector<std::string> kIgnoredContainer = {"image",
                                                    "imagePullPolicy",
                                                    "command",
                                                    "args",
                                                    "workingDir",
                                                    "ports",
                                                    "env",
                                                    "envFrom",
                                                    "volumeMounts",
                                                    "volumeDevices",
                                                    "livenessProbe",
                                                    "readinessProbe",
                                                    "startupProbe",
                                                    "lifecycle",
                                                    "terminationMessagePath",
                                                    "terminationMessagePolicy",
                                                    "securityContext",
                                                    "stdin",
                                                    "stdinOnce",
                                                    "tty",
                                                    "resizePolicy",
                                                    "restartPolicyRules"};
const std::vector<std::string> kIgnoredNodeSpec = {"podCIDR", "podCIDRs", "providerID",
                                                   "externalID", "configSource"};
const std::vector<std::string> kIgnoredNodeStatus = {
    "conditions", "addresses",       "daemonEndpoints", "nodeInfo",
    "images",     "volumesInUse",    "volumesAttached", "phase",
    "config",     "runtimeHandlers", "features",        "declaredFeatures"};
const std::vector<std::string> kIgnoredJobSpec = {"selector", "manualSelector",
                                                  "ttlSecondsAfterFinished", "managedBy"};
const std::vector<std::pair<std::string, std::string>> kWarnedJobSpec = {
    {"activeDeadlineSeconds", "activeDeadlineSeconds is not modelled"},
    {"podFailurePolicy", "podFailurePolicy is not modelled: failures count against backoffLimit"},
    {"successPolicy", "successPolicy is not modelled: the Job needs `completions` successes"},
    {"backoffLimitPerIndex", "backoffLimitPerIndex is not modelled; backoffLimit applies"},
    {"maxFailedIndexes", "maxFailedIndexes is not modelled"},
    {"podReplacementPolicy", "podReplacementPolicy is not modelled"}};

// YamlNode::where() reports a document that starts at the first byte of its file as line 0
// (the mark it would have as a --set value); a document root is always in the file, so use its
// line.
InputLocation located(const YamlNode& n) {
  InputLocation loc = n.where();
  if (loc.line == 0 && n.line() > 0) {
    loc.file = n.file();
    loc.line = n.line();
  }
  return loc;
}

void ignore_all(MapReader& r, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    r.ignore(k);
}

void warn_present(MapReader& r, const std::vector<std::pair<std::string, std::string>>& keys,
                  const ManifestContext& ctx) {
  for (const auto& [key, message] : keys) {
    if (auto v = r.opt(key)) ctx.warn(*v, message);
  }
}

std::optional<YamlNode> find_entry(const std::optional<YamlNode>& map, std::string_view key) {
  if (!map || !map->is_map()) return std::nullopt;
  for (auto& [k, v] : map->entries()) {
    if (k == key) return v;
  }
  return std::nullopt;
}

// --- Pod spec -------------------------------------------------------------------------------

// The value of field `n`, which must be one of `allowed` (an enum of the API): otherwise
// "unknown <what> 'x' (did you mean ...?); use A, B or C". `also` are accepted without being
// suggested (an older spelling).
std::string enum_value_of(const YamlNode& n, std::string_view what,
                          const std::vector<std::string>& allowed,
                          const std::vector<std::string>& also = {}) {
  std::string v = n.str();
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end() ||
      std::find(also.begin(), also.end(), v) != also.end()) {
    return v;
  }
  std::string choices;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    choices += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
  }
  n.fail(fmt::format("unknown {} '{}'{}; use {}", what, v, did_you_mean(v, allowed), choices));
}

// Who makes the pod decides which restartPolicy its template may have: any for a bare pod,
// OnFailure or Never for a Job's; a JobSet's Job likewise, but an unset one is OnFailure (the
// JobSet webhook's default); a training operator sets it from its replica spec (kOperator).
enum class PodOwner : std::uint8_t { kBare, kJob, kJobSetJob, kOperator };

// A container's effective requests, after defaulting requests to limits, with Kubernetes'
// request/limit rules checked.
// `claims` collects the name nodes of the container's resources.claims (DRA), checked against
// the pod's spec.resourceClaims by parse_pod_spec.
ResourceVec container_requests(const YamlNode& resources, ManifestContext& ctx,
                               std::vector<YamlNode>& claims) {
  WorldBuilder& b = ctx.builder;
  ResourceVec out;
  if (resources.is_null()) return out;
  MapReader r = resources.map();
  std::vector<ResourceAmount> requests;
  std::vector<ResourceAmount> limits;
  if (auto q = r.opt("requests")) {
    requests = parse_resource_amounts(*q, ResourceScope::kContainer);
  }
  if (auto l = r.opt("limits")) limits = parse_resource_amounts(*l, ResourceScope::kContainer);
  if (auto c = r.opt("claims")) {
    for (const YamlNode& e : c->seq()) {
      MapReader cm = e.map();
      claims.push_back(cm.req("name"));
      if (auto req = cm.opt("request")) (void)req->str();  // a request of that claim
      cm.finish();
    }
  }
  r.finish();

  auto find = [](const std::vector<ResourceAmount>& v, const std::string& name) {
    const ResourceAmount* hit = nullptr;
    for (const auto& a : v) {
      if (a.name == name) hit = &a;
    }
    return hit;
  };
  for (const ResourceAmount& req : requests) {
    const ResourceAmount* lim = find(limits, req.name);
    const bool no_overcommit =
        is_extended_resource(req.name) || req.name.rfind("hugepages-", 0) == 0;
    if (no_overcommit && lim == nullptr) {
      req.where.fail(fmt::format(
          "{} needs a limit equal to its request: Kubernetes does not overcommit {} (set "
          "limits.{} to the same amount, or give only the limit)",
          req.name, is_extended_resource(req.name) ? "extended resources" : "huge pages",
          req.name));
    }
    if (lim != nullptr && no_overcommit && lim->value != req.value) {
      req.where.fail(fmt::format("the {} request must equal its limit ({} vs {})", req.name,
                                 req.value, lim->value));
    }
    if (lim != nullptr && req.value > lim->value) {
      req.where.fail(fmt::format("the {} request {} is more than its limit {}", req.name, req.value,
                                 lim->value));
    }
    if (req.value != 0) out[b.resource(req.name, req.where.where())] = req.value;
  }
  // A limit without a request sets the request (Kubernetes' defaulting).
  for (const ResourceAmount& lim : limits) {
    if (find(requests, lim.name) == nullptr && lim.value != 0) {
      out[b.resource(lim.name, lim.where.where())] = lim.value;
    }
  }
  return out;
}

ResourceVec read_container(const YamlNode& c, bool init, bool& sidecar, ManifestContext& ctx,
                           std::vector<YamlNode>& claims) {
  MapReader r = c.map();
  std::string name;
  if (auto n = r.opt("name")) name = n->str();
  ResourceVec req;
  const ContainerResourcesOverride* o = ctx.container_resources;
  if (!init && o != nullptr &&
      std::find(o->containers.begin(), o->containers.end(), name) != o->containers.end()) {
    r.ignore("resources");  // replaced wholesale, as the Trainer's builder replaces it
    req = container_requests(o->resources, ctx, claims);
  } else if (auto res = r.opt("resources")) {
    req = container_requests(*res, ctx, claims);
  }
  sidecar = false;
  if (auto rp = r.opt("restartPolicy")) {
    const std::string s = rp->str();
    if (init) {
      if (s != "Always") {
        rp->fail(
            fmt::format("an init container's restartPolicy can only be Always (a sidecar), "
                        "not '{}'",
                        s));
      }
      sidecar = true;
    } else if (s != "Always" && s != "OnFailure" && s != "Never") {
      rp->fail(fmt::format("unknown restartPolicy '{}'; use Always, OnFailure or Never", s));
    }
  }
  ignore_all(r, kIgnoredContainer);
  r.finish();
  return req;
}

void max_into(ResourceVec& acc, const ResourceVec& v) {
  for (std::size_t i = 0; i < kMaxResources; ++i)
    acc.v[i] = std::max(acc.v[i], v.v[i]);
}
void add_into(ResourceVec& acc, const ResourceVec& v) {
  for (std::size_t i = 0; i < kMaxResources; ++i)
    acc.v[i] += v.v[i];
}

// The pod's requests as the scheduler sees them (resourcehelper.PodRequests):
//   max(sum(containers) + sum(sidecars), max_i(init_i + sidecars started before i)) + overhead,
// with pod-level resources (spec.resources) replacing the aggregate for cpu and memory.
ResourceList pod_requests(MapReader& spec, ManifestContext& ctx, std::vector<YamlNode>& claims) {
  WorldBuilder& b = ctx.builder;
  const YamlNode containers = spec.req("containers");
  ResourceVec total;
  std::size_t count = 0;
  for (const YamlNode& c : containers.seq()) {
    bool sidecar = false;
    add_into(total, read_container(c, false, sidecar, ctx, claims));
    ++count;
  }
  if (count == 0) containers.fail("a pod needs at least one container");
  ResourceVec sidecars;
  ResourceVec init_max;
  if (auto inits = spec.opt("initContainers")) {
    for (const YamlNode& c : inits->seq()) {
      bool sidecar = false;
      ResourceVec req = read_container(c, true, sidecar, ctx, claims);
      if (sidecar) {
        add_into(total, req);
        add_into(sidecars, req);
        max_into(init_max, sidecars);
      } else {
        add_into(req, sidecars);
        max_into(init_max, req);
      }
    }
  }
  max_into(total, init_max);

  if (auto pod_level = spec.opt("resources")) {
    MapReader r = pod_level->map();
    std::vector<ResourceAmount> requests;
    std::vector<ResourceAmount> limits;
    if (auto q = r.opt("requests"))
      requests = parse_resource_amounts(*q, ResourceScope::kContainer);
    if (auto l = r.opt("limits")) limits = parse_resource_amounts(*l, ResourceScope::kContainer);
    r.finish();
    std::map<std::string, const ResourceAmount*> effective;
    for (const auto& a : limits)
      effective[a.name] = &a;
    for (const auto& a : requests)
      effective[a.name] = &a;  // a request wins over the limit
    for (const auto& a : requests) {
      for (const auto& l : limits) {
        if (l.name == a.name && a.value > l.value) {
          a.where.fail(fmt::format("the pod-level {} request {} is more than its limit {}", a.name,
                                   a.value, l.value));
        }
      }
    }
    for (const auto& [name, a] : effective) {
      if (name != "cpu" && name != "memory" && name.rfind("hugepages-", 0) != 0) {
        a->where.fail(fmt::format(
            "pod-level resources support only cpu, memory and hugepages-*, not {}", name));
      }
      const ResourceId id = b.resource(name, a->where.where());
      if (a->value < total[id]) {
        a->where.fail(fmt::format("the pod-level {} ({}) is less than its containers ask for ({})",
                                  name, a->value, total[id]));
      }
      total[id] = a->value;
    }
  }
  if (auto overhead = spec.opt("overhead")) {
    parse_resource_list(*overhead, b).add_to(total);
  }
  ResourceList out;
  for (std::size_t i = 0; i < kMaxResources; ++i) {
    if (total.v[i] != 0) out.set(static_cast<ResourceId>(i), total.v[i]);
  }
  return out;
}

// spec.resourceClaims: [{name, resourceClaimName | resourceClaimTemplateName}]. The claims and
// templates are looked up when the World is finalized (tools/loaders/dra_manifests).
std::vector<PodClaimRef> parse_pod_resource_claims(const YamlNode& list) {
  std::vector<PodClaimRef> out;
  for (const YamlNode& e : list.seq()) {
    MapReader m = e.map();
    PodClaimRef ref;
    const YamlNode name = m.req("name");
    ref.name = name.str();
    if (!is_dns_label(ref.name)) {
      name.fail(
          fmt::format("'{}' is not a valid claim name (a DNS label: lower-case letters, "
                      "digits and '-', at most 63)",
                      ref.name));
    }
    for (const PodClaimRef& other : out) {
      if (other.name == ref.name)
        name.fail(fmt::format("duplicate resource claim name '{}'", ref.name));
    }
    if (auto src = m.opt("source")) {
      src->fail(
          "the `source` wrapper is from the alpha API (Kubernetes 1.26-1.30); put "
          "resourceClaimName or resourceClaimTemplateName directly in the entry");
    }
    const std::optional<YamlNode> claim = m.opt("resourceClaimName");
    const std::optional<YamlNode> tmpl = m.opt("resourceClaimTemplateName");
    if (claim.has_value() == tmpl.has_value()) {
      e.fail("exactly one of resourceClaimName and resourceClaimTemplateName must be set");
    }
    if (claim) {
      ref.claim_name = claim->str();
      ref.where = claim->where();
    } else {
      ref.template_name = tmpl->str();
      ref.where = tmpl->where();
    }
    m.finish();
    out.push_back(std::move(ref));
  }
  return out;
}

void parse_pod_spec(const YamlNode& spec_node, ManifestContext& ctx, PodSpec& p, PodOwner owner) {
  WorldBuilder& b = ctx.builder;
  MapReader spec = spec_node.map();
  std::vector<YamlNode> container_claims;
  p.requests = pod_requests(spec, ctx, container_claims);
  if (auto rc = spec.opt("resourceClaims")) p.claims = parse_pod_resource_claims(*rc);
  for (const YamlNode& name : container_claims) {
    // Kubernetes: "must be the name of one entry in pod.spec.resourceClaims".
    const std::string n = name.str();
    const bool known = std::any_of(p.claims.begin(), p.claims.end(),
                                   [&](const PodClaimRef& c) { return c.name == n; });
    if (!known) {
      std::vector<std::string> names;
      for (const PodClaimRef& c : p.claims)
        names.push_back(c.name);
      name.fail(fmt::format("'{}' must be the name of one entry in the pod's spec.resourceClaims{}",
                            n, did_you_mean(n, names)));
    }
  }

  bool has_class = false;
  if (auto pc = spec.opt("priorityClassName")) {
    p.priority_class = pc->str();
    has_class = !p.priority_class->empty();
  }
  if (auto prio = spec.opt("priority")) {
    const auto v = static_cast<std::int32_t>(prio->integer(
        std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    if (!has_class) {  // with a class, this is the value admission filled in
      p.priority = v;
      p.explicit_priority = true;
    }
  }
  if (auto pp = spec.opt("preemptionPolicy")) {
    const std::string s = pp->str();
    if (s == "Never") {
      p.preemption_policy = PreemptionPolicy::kNever;
    } else if (s == "PreemptLowerPriority") {
      p.preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
    } else {
      pp->fail(fmt::format("unknown preemptionPolicy '{}'{}; use PreemptLowerPriority or Never", s,
                           did_you_mean(s, {"PreemptLowerPriority", "Never"})));
    }
  }
  std::optional<YamlNode> restart = spec.opt("restartPolicy");
  const std::string rp = restart                         ? restart->str()
                         : owner == PodOwner::kJobSetJob ? std::string("OnFailure")
                                                         : std::string("Always");
  if (rp == "Always") {
    p.restart_policy = RestartPolicy::kAlways;
  } else if (rp == "OnFailure") {
    p.restart_policy = RestartPolicy::kOnFailure;
  } else if (rp == "Never") {
    p.restart_policy = RestartPolicy::kNever;
  } else {
    restart->fail(fmt::format("unknown restartPolicy '{}'{}; use Always, OnFailure or Never", rp,
                              did_you_mean(rp, {"Always", "OnFailure", "Never"})));
  }
  // The kubelet restarts a bare pod's containers without limit; a Job's backoffLimit bounds its
  // pods (set by the Job loader).
  if (owner == PodOwner::kBare) p.max_restarts = std::numeric_limits<std::int32_t>::max();
  if ((owner == PodOwner::kJob || owner == PodOwner::kJobSetJob) &&
      p.restart_policy == RestartPolicy::kAlways) {
    (restart ? *restart : spec_node)
        .fail(
            "a Job's pod template needs restartPolicy OnFailure or Never (Kubernetes rejects "
            "Always, the default)");
  }
  if (auto g = spec.opt("terminationGracePeriodSeconds")) {
    p.termination_grace =
        g->integer(0, std::numeric_limits<std::int64_t>::max() / kSecond) * kSecond;
  }
  // spec.nodeName: bound there at arrival, no scheduling cycle (the loader checks the node).
  if (auto nn = spec.opt("nodeName")) p.node_name = nn->str();
  if (auto ns = spec.opt("nodeSelector")) p.node_selector = parse_labels(*ns, b);
  if (auto aff = spec.opt("affinity")) {
    MapReader ar = aff->map();
    if (auto na = ar.opt("nodeAffinity")) p.affinity = parse_node_affinity(*na, b);
    // Kept past this document (a namespaceSelector's keys are checked once every Namespace is
    // read), so it holds the warnings list, not the context.
    const FieldWarning warn = [warnings = ctx.options.warnings](const YamlNode& at,
                                                                const std::string& message) {
      if (warnings != nullptr) warnings->push_back(at.where().to_string() + ": " + message);
    };
    if (auto pa = ar.opt("podAffinity"))
      p.pod_rules.mut().affinity = parse_pod_affinity(*pa, b, warn);
    if (auto paa = ar.opt("podAntiAffinity")) {
      p.pod_rules.mut().anti_affinity = parse_pod_affinity(*paa, b, warn);
    }
    ar.finish();
  }
  if (auto tsc = spec.opt("topologySpreadConstraints")) {
    p.pod_rules.mut().spread = parse_topology_spread_constraints(*tsc, b);
  }
  if (auto t = spec.opt("tolerations")) p.tolerations = parse_tolerations(*t, b);
  warn_present(spec, kWarnedPodSpec, ctx);
  ignore_all(spec, kIgnoredPodSpec);
  spec.finish();
}

// The capsim.io/* annotations of a pod, gathered from one or two objects (a Job and its
// template); the same key with different values on both is an error.
class SimAnnotations {
 public:
  void add(const ObjectMeta& meta, const char* owner) {
    for (const auto& [key, node] : meta.annotations) {
      if (key.rfind("capsim.io/", 0) != 0) continue;
      for (const auto& [k, prev] : values_) {
        if (k == key && prev.str() != node.str()) {
          node.fail(fmt::format("{} is also set on the {} ({}:{}) to a different value; keep one",
                                key, owners_[k], prev.file(), prev.line()));
        }
      }
      values_.emplace_back(key, node);
      owners_[key] = owner;
    }
  }
  std::optional<YamlNode> get(std::string_view key) const {
    for (const auto& [k, v] : values_) {
      if (k == key) return v;
    }
    return std::nullopt;
  }
  // Removes `key` and returns its value: for an annotation the caller applies itself (a JobSet's
  // capsim.io/gang covers all its Jobs, not each one).
  std::optional<YamlNode> take(std::string_view key) {
    for (auto it = values_.begin(); it != values_.end(); ++it) {
      if (it->first == key) {
        YamlNode v = it->second;
        values_.erase(it);
        return v;
      }
    }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string, YamlNode>> values_;
  std::map<std::string, std::string> owners_;
};

// Kueue's topology-aware scheduling annotations of a pod template (a PodSet): at most one of
// podset-required-topology, podset-preferred-topology (a node label key of the flavor's
// Topology) and podset-unconstrained-topology ("true"); podset-slice-required-topology with
// podset-slice-size (both or neither). Annotations capsim does not model are warned about.
void read_topology_annotations(const ObjectMeta& meta, PodSpec& p, const ManifestContext& ctx) {
  constexpr std::string_view kPrefix = "kueue.x-k8s.io/podset-";
  TopologyRequest t = *p.topology;
  std::optional<YamlNode> mode_node, slice_level, slice_size;
  auto set_mode = [&](TopologyMode m, const YamlNode& v) {
    if (mode_node) {
      v.fail(
          fmt::format("only one of podset-required-topology, podset-preferred-topology and "
                      "podset-unconstrained-topology may be set (also set at line {})",
                      mode_node->line()));
    }
    mode_node = v;
    t.mode = m;
  };
  for (const auto& [key, v] : meta.annotations) {
    if (key.rfind(kPrefix, 0) != 0) continue;
    const std::string_view name = std::string_view(key).substr(kPrefix.size());
    if (name == "required-topology" || name == "preferred-topology") {
      set_mode(name == "required-topology" ? TopologyMode::kRequired : TopologyMode::kPreferred, v);
      t.level = v.str();
      if (t.level.empty()) v.fail(fmt::format("{} names a node label key of the Topology", key));
    } else if (name == "unconstrained-topology") {
      const std::string value = v.str();
      if (value != "true" && value != "false") {
        v.fail(fmt::format("{} is \"true\" or \"false\", not '{}'", key, value));
      }
      if (value == "true") set_mode(TopologyMode::kUnconstrained, v);
    } else if (name == "slice-required-topology") {
      slice_level = v;
      t.slice_level = v.str();
      if (t.slice_level.empty()) v.fail(fmt::format("{} names a node label key", key));
    } else if (name == "slice-size") {
      slice_size = v;
      t.slice_size = static_cast<std::int32_t>(v.integer(1, 1'000'000));
    } else if (name == "group-name" || name == "slice-required-topology-constraints") {
      ctx.warn(v, fmt::format("{} is not modelled: capsim places each PodSet on its own", key));
    }
  }
  if (slice_level && !slice_size) {
    slice_level->fail(
        "kueue.x-k8s.io/podset-slice-required-topology needs "
        "kueue.x-k8s.io/podset-slice-size");
  }
  if (slice_size && !slice_level) {
    slice_size->fail(
        "kueue.x-k8s.io/podset-slice-size needs "
        "kueue.x-k8s.io/podset-slice-required-topology");
  }
  p.topology = std::move(t);  // kept out of line only if an annotation set something
}

// Kueue's other annotations of a Pod, Job or pod template (the TAS ones are read above):
// pod-group-total-count on a bare Pod (`pod` set) is the pod group's size, job-min-parallelism on
// a Job Kueue admits on its own (`job` set, its parallelism and completions read) allows partial
// admission; those capsim does not model are warned about by name, so that none is silently
// dropped.
void read_kueue_annotations(const ObjectMeta& meta, PodSpec* pod, const ManifestContext& ctx,
                            JobSpec* job = nullptr) {
  constexpr std::string_view kPrefix = "kueue.x-k8s.io/";
  for (const auto& [key, v] : meta.annotations) {
    if (key.rfind(kPrefix, 0) != 0 || key.rfind("kueue.x-k8s.io/podset-", 0) == 0) continue;
    if (key == "kueue.x-k8s.io/pod-group-total-count" && pod != nullptr) {
      pod->pod_group_total = static_cast<std::int32_t>(v.integer(1, 1'000'000));
    } else if (key == "kueue.x-k8s.io/pod-group-total-count") {
      ctx.warn(v, fmt::format("{} applies to the Pods of a pod group, not to a Job: ignored", key));
    } else if (key == "kueue.x-k8s.io/job-min-parallelism" && job != nullptr) {
      // Kueue's Job webhook (validatePartialAdmissionCreate): an integer in
      // (0, min(parallelism, completions)).
      const std::int64_t pods = std::min(job->parallelism, job->completions);
      const std::int64_t n = v.integer();
      if (n <= 0 || n >= pods) {
        v.fail(
            fmt::format("must be between 1 and {}, below the {} pod(s) the Job runs at once "
                        "(min(parallelism, completions)), as Kueue's Job webhook requires",
                        pods - 1, pods));
      }
      job->min_parallelism = static_cast<std::int32_t>(n);
    } else if (key == "kueue.x-k8s.io/job-min-parallelism") {
      ctx.warn(v, fmt::format("{} applies to a Job that Kueue admits on its own (a batch/v1 Job "
                              "or a CronJob's), not here: ignored",
                              key));
    } else if (key == "kueue.x-k8s.io/job-completions-equal-parallelism" && job != nullptr) {
      // Kueue reads it with strconv.ParseBool, and its webhook refuses anything else.
      const std::string b = v.str();
      const bool on = b == "1" || b == "t" || b == "T" || b == "true" || b == "TRUE" || b == "True";
      if (!on && b != "0" && b != "f" && b != "F" && b != "false" && b != "FALSE" && b != "False")
        v.fail("must be true or false (as Go's strconv.ParseBool reads it)");
      if (on) {
        ctx.warn(v, fmt::format("{} is not modelled: after a partial admission capsim lowers "
                                "the Job's parallelism but keeps its completions ({})",
                                key, job->completions));
      }
    } else {
      ctx.warn(v, fmt::format("annotation {} is not modelled", key));
    }
  }
}

// Where a pod's run time comes from when no annotation gives it: the scenario's durations rules
// (ManifestOptions::durations) for `subject`, else `fallback` (long-running for controllers that
// never finish), else an error at `at` naming the object and a rule that would cover it.
struct DurationSource {
  const ManifestContext& ctx;
  DurationSubject subject;
  std::optional<SimDuration> fallback;
  // Set for an object a controller made (a dump's Job of a JobSet, Pod of a Job): it is skipped
  // when the controller is read too, so a missing run time is an error only if it is kept. The
  // error is stored here instead of raised, and the pod left long-running meanwhile.
  std::function<void()>* deferred_failure = nullptr;
};

// Applies the simulation annotations; `at` is where a missing duration is reported.
void apply_sim_annotations(const SimAnnotations& a, PodSpec& p, const YamlNode& at,
                           std::string_view what, const DurationSource& from) {
  if (auto v = a.get(kArrival)) p.arrival = v->duration();
  bool long_running = false;
  if (auto v = a.get(kLongRunning)) long_running = v->boolean();
  const std::optional<YamlNode> duration = a.get(kDuration);
  const DurationRules* rules = from.ctx.options.durations;
  if (long_running) {
    if (duration) {
      duration->fail(fmt::format("{} and {}: \"true\" contradict each other; keep one", kDuration,
                                 kLongRunning));
    }
    p.duration = kEndOfTime;
  } else if (duration) {
    p.duration = duration->duration();
  } else if (auto d = rules != nullptr ? rules->duration_for(from.subject) : std::nullopt) {
    p.duration = *d;
  } else if (from.fallback) {
    p.duration = *from.fallback;
  } else {
    std::string message = fmt::format(
        "{} ({} in namespace {}) has no run time: give it the annotation {} (its run time on a "
        "reference GPU, e.g. \"2h\") or {}: \"true\" for a pod that never finishes, or cover it "
        "with a rule in the scenario's durations section{}, e.g.\n{}",
        what, from.subject.kind, from.subject.namespace_, kDuration, kLongRunning,
        rules == nullptr || rules->empty() ? " (the scenario has none)"
                                           : " (none of its rules matches)",
        DurationRules::suggestion(from.subject));
    if (from.deferred_failure == nullptr) at.fail(message);
    *from.deferred_failure = [at, message = std::move(message)] { at.fail(message); };
    p.duration = kEndOfTime;
  }
  if (auto v = a.get(kGpuUtil)) p.gpu_util = v->number(0.0, 1.0);
  if (auto v = a.get(kGpuSmFraction)) p.gpu_sm_fraction = v->number(0.001, 1.0);
  if (auto v = a.get(kGpuMemory)) p.gpu_memory_used = v->quantity(0);
  if (auto v = a.get(kGpuMilli)) p.gpu_milli = static_cast<std::int32_t>(v->integer(1, 999));
  if (auto v = a.get(kFails)) p.fails = v->boolean();
  // Checkpoints (docs/scenario-format.md, "Failures and checkpoints"): the annotations win over
  // the scenario's checkpoints rules.
  const std::optional<YamlNode> interval = a.get(kCheckpointInterval);
  if (interval) {
    p.checkpoint.interval = interval->duration();
    if (p.checkpoint.interval <= 0) {
      interval->fail(
          fmt::format("{} must be a positive duration (e.g. \"1h\")", kCheckpointInterval));
    }
  }
  for (const auto& [key, field] : {std::pair{kCheckpointCost, &CheckpointPolicy::cost},
                                   std::pair{kCheckpointRestart, &CheckpointPolicy::restart}}) {
    const std::optional<YamlNode> v = a.get(key);
    if (!v) continue;
    if (!interval) v->fail(fmt::format("{} needs {}", key, kCheckpointInterval));
    p.checkpoint.*field = v->duration();
    if (p.checkpoint.*field < 0) v->fail(fmt::format("{} must not be negative", key));
  }
}

// Queue: the Kueue label, else the capsim.io/queue annotation, else the namespace.
std::string queue_of(const std::vector<const ObjectMeta*>& metas, const SimAnnotations& a,
                     const StringPool& pool, const std::string& ns) {
  for (const ObjectMeta* m : metas) {
    if (auto q = label_value(m->labels, kQueueNameLabel, pool)) return *q;
  }
  if (auto q = a.get(kQueue)) return q->str();
  return ns;
}

// --- Handlers ---------------------------------------------------------------------------------

void load_node(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {kPricePerHour});
  const std::optional<YamlNode> labels_node = meta_node.map().opt("labels");
  const StringPool& pool = b.world().strings;

  NodeSpec node;
  node.name = meta.name;
  node.labels = meta.labels;
  if (auto spec = doc.opt("spec")) {
    MapReader s = spec->map();
    if (auto t = s.opt("taints")) node.taints = parse_taints(*t, b);
    node.unschedulable = s.bool_or("unschedulable", false);
    ignore_all(s, kIgnoredNodeSpec);
    s.finish();
  }
  const YamlNode status_node = doc.req("status");
  MapReader status = status_node.map();
  const YamlNode cap_node = status.req("capacity");
  node.capacity = parse_resource_vec(cap_node, b);
  if (node.capacity[kCpu] == 0 || node.capacity[kMemory] == 0) {
    cap_node.fail("a Node's status.capacity needs cpu and memory");
  }
  node.allocatable = node.capacity;
  if (auto alloc = status.opt("allocatable")) {
    // Resources the allocatable list names replace capacity's; the others default to capacity.
    for (const ResourceAmount& a : parse_resource_amounts(*alloc, ResourceScope::kNode)) {
      if (a.value == 0) {
        if (auto id = b.world().resources.find(a.name)) node.allocatable[*id] = 0;
        continue;
      }
      const ResourceId id = b.resource(a.name, a.where.where());
      if (a.value > node.capacity[id] && node.capacity[id] != 0) {
        a.where.fail(fmt::format("allocatable {} ({}) is more than capacity ({})", a.name, a.value,
                                 node.capacity[id]));
      }
      node.allocatable[id] = a.value;
    }
  }
  ignore_all(status, kIgnoredNodeStatus);
  status.finish();

  // GPUs: the advertised count, divided by the replicas of a time-sliced or MPS-shared node
  // (GPU Feature Discovery's nvidia.com/gpu.replicas and gpu.sharing-strategy labels).
  std::int64_t gpus = node.capacity[kNvidiaGpu];
  bool renamed = false;
  if (auto sid = b.world().resources.find("nvidia.com/gpu.shared"); sid && gpus == 0) {
    gpus = node.capacity[*sid];  // renameByDefault: the shared resource carries the count
    renamed = gpus > 0;
  }
  const auto strategy = label_value(node.labels, "nvidia.com/gpu.sharing-strategy", pool);
  if (strategy && (*strategy == "time-slicing" || *strategy == "mps")) {
    const std::optional<YamlNode> rep = find_entry(labels_node, "nvidia.com/gpu.replicas");
    const std::int64_t replicas = rep ? rep->integer(1, 1000) : 1;
    if (gpus % replicas != 0) {
      cap_node.fail(
          fmt::format("nvidia.com/gpu {} is not a multiple of the label "
                      "nvidia.com/gpu.replicas={}",
                      gpus, replicas));
    }
    gpus /= replicas;
    node.sharing = *strategy == "mps" ? GpuSharing::kMps : GpuSharing::kTimeSlicing;
    if (replicas > 1) {
      node.devices.sharing = *strategy == "mps" ? ShareMode::kMps : ShareMode::kTimeSliced;
      node.devices.shared = {SharedResource{"nvidia.com/gpu", static_cast<std::int32_t>(replicas)}};
      node.devices.rename_by_default = renamed;
    }
  }

  const GpuModel* model = nullptr;
  if (auto m = find_entry(labels_node, "capsim.io/gpu-model")) {
    model = &b.gpu_model(m->str(), m->where());
  } else if (auto prod = find_entry(labels_node, "nvidia.com/gpu.product")) {
    std::string product = prod->str();
    constexpr std::string_view kShared = "-SHARED";
    if (product.size() > kShared.size() &&
        product.compare(product.size() - kShared.size(), kShared.size(), kShared) == 0) {
      product.resize(product.size() - kShared.size());
    }
    if (product.find("-MIG-") != std::string::npos) {
      prod->fail(
          fmt::format("'{}' is a MIG device (single strategy); capsim does not read MIG "
                      "nodes from Node manifests yet: describe the node in a scenario pool",
                      product));
    }
    model = b.catalog().find(product);
    if (model == nullptr) {
      const auto close = b.catalog().suggestions(product);
      const std::string hint =
          close.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(close, ", "));
      prod->fail(
          fmt::format("unknown GPU product '{}'{}; add the label capsim.io/gpu-model with a "
                      "catalog model name (`capsim catalog` lists them)",
                      product, hint));
    }
  }
  if (gpus > 0 && model == nullptr) {
    cap_node.fail(fmt::format(
        "node '{}' has {} nvidia.com/gpu but no GPU model: set the label nvidia.com/gpu.product "
        "(as GPU Feature Discovery does, e.g. NVIDIA-A100-SXM4-80GB) or capsim.io/gpu-model (a "
        "catalog name, e.g. A100-80GB)",
        node.name, gpus));
  }
  for (const char* key :
       {"capsim.io/pool", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}) {
    if (auto v = label_value(node.labels, key, pool)) {
      node.pool = *v;
      break;
    }
  }
  std::optional<double> price;
  if (auto v = meta.annotation(kPricePerHour)) price = v->number(0.0);
  // The builder rejects more GPUs than a node can hold; the clamp only keeps the cast exact.
  const auto gpu_count = static_cast<std::int32_t>(
      std::min<std::int64_t>(gpus, std::numeric_limits<std::int32_t>::max()));
  b.add_node(std::move(node), model, gpu_count, price, located(doc.node()));
}

// The kinds whose objects capsim expands into what their controllers make.
bool is_expanded_controller(std::string_view kind) {
  return kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" ||
         kind == "DaemonSet" || kind == "Job" || kind == "CronJob" || kind == "JobSet" ||
         kind == "PyTorchJob" || kind == "LeaderWorkerSet" || kind == "TrainJob";
}

// Whether `meta` names, as its controller, an object of a kind capsim expands: the object may be
// skipped for the controller's own expansion (add_unless_owner_read).
bool made_by_expanded_controller(const ObjectMeta& meta) {
  return !meta.owner_kind.empty() && is_expanded_controller(meta.owner_kind);
}

std::string controller_key(std::string_view kind, std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}/{}", kind, ns, name);
}

// Adds what `add` adds, unless the object was made by a controller this load also reads (a
// `kubectl get -o yaml` dump holds a Deployment, its ReplicaSet and their Pods): capsim expands
// the controller itself, so the object would be counted twice. Decided once every file is read
// (the controller may come later), with one note per controller.
void add_unless_owner_read(ManifestContext& ctx, const ObjectMeta& meta, const char* kind,
                           const InputLocation& where, std::function<void()> add) {
  if (meta.owner_kind.empty() || !is_expanded_controller(meta.owner_kind)) {
    add();
    return;
  }
  WorldBuilder& b = ctx.builder;
  const std::string owner = controller_key(meta.owner_kind, meta.namespace_, meta.owner_name);
  std::vector<std::string>* warnings = ctx.options.warnings;
  b.before_finalize([&b, owner, add = std::move(add), warnings, where, kind] {
    if (!b.has_controller(owner)) {
      add();
      return;
    }
    if (warnings != nullptr && b.first_time("owned:" + owner)) {
      warnings->push_back(fmt::format(
          "{}: this {} (and any other of {}'s) is made by its controller {}, which is read too: "
          "skipped, as capsim expands the controller itself",
          where.to_string(), kind, owner, owner));
    }
  });
}

void load_pod(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  PodSpec p;
  p.name = meta.name;
  p.namespace_ = meta.namespace_;
  p.labels = meta.labels;
  // A pod whose controller is not read (a dump's Pod of a ReplicaSet or Job) reports under its
  // owner, so the report groups the owner's pods; its kind also tells drains to leave a
  // DaemonSet's pods, as `kubectl drain --ignore-daemonsets` does.
  p.job_name = meta.owner_name;
  p.controller_kind = meta.owner_kind;
  parse_pod_spec(doc.req("spec"), ctx, p, PodOwner::kBare);
  doc.ignore("status");
  read_topology_annotations(meta, p, ctx);
  read_kueue_annotations(meta, &p, ctx);
  SimAnnotations a;
  a.add(meta, "Pod");
  if (auto g = a.get(kGang)) {
    g->fail(
        "capsim.io/gang applies to Jobs; group pods with the label "
        "kueue.x-k8s.io/pod-group-name");
  }
  p.queue = queue_of({&meta}, a, b.world().strings, p.namespace_);
  std::function<void()> untimed;
  const DurationSource from{
      ctx,
      {"Pod", p.namespace_, p.name, &p.labels, &b.world().strings, p.queue, "", meta.generate_name},
      std::nullopt,
      made_by_expanded_controller(meta) ? &untimed : nullptr};
  apply_sim_annotations(a, p, meta_node, fmt::format("pod '{}'", p.name), from);
  p.requeue_on_preemption = false;  // nothing recreates a bare pod
  const InputLocation where = located(doc.node());
  add_unless_owner_read(ctx, meta, "Pod", where,
                        [&b, p = std::move(p), where, untimed = std::move(untimed)]() mutable {
                          if (untimed) untimed();  // kept, so it needs its run time after all
                          b.add_pod(std::move(p), where);
                        });
}

// A Job as its object or a CronJob's jobTemplate gives it: `meta` is the Job's metadata (for a
// CronJob's Job: the template's labels under the CronJob's name and namespace), `annotations`
// the capsim.io/* annotations of the objects above the pod template, `subject` the object a
// durations rule matches (the Job, or the CronJob). `size`, when set, replaces parallelism and
// completions (a TrainJob's node count); `owner` says who defaults the template's
// restartPolicy. Returns the Job, not yet added; a gang it asks for is
// added to the World under the Job's name.
JobSpec read_job(const ObjectMeta& meta, const YamlNode& meta_node, const YamlNode& spec_node,
                 ManifestContext& ctx, SimAnnotations a, std::string_view subject_kind,
                 std::string_view subject_name = {},
                 std::function<void()>* deferred_failure = nullptr,
                 std::optional<std::int32_t> size = std::nullopt, PodOwner owner = PodOwner::kJob) {
  WorldBuilder& b = ctx.builder;
  MapReader spec = spec_node.map();
  constexpr std::int64_t kMaxI32 = std::numeric_limits<std::int32_t>::max();

  JobSpec job;
  job.name = meta.name;
  const std::optional<YamlNode> par = spec.opt("parallelism");
  const std::optional<YamlNode> comp = spec.opt("completions");
  if (par && par->integer(0, kMaxI32) == 0) {
    par->fail("parallelism 0 (a paused Job) is not supported: capsim would never run it");
  }
  if (comp && comp->integer(0, kMaxI32) == 0) {
    comp->fail("completions 0 (a Job with nothing to do) is not supported");
  }
  job.parallelism = par ? static_cast<std::int32_t>(par->integer()) : 1;
  // completions unset: Kubernetes runs `parallelism` pods and is done when one succeeds and the
  // rest have stopped (a work queue). capsim models that as every running pod finishing its work,
  // i.e. completions = parallelism.
  job.completions = comp ? static_cast<std::int32_t>(comp->integer()) : job.parallelism;
  // A TrainJob's trainer step: Kubeflow Trainer sets both to its node count.
  if (size) job.parallelism = job.completions = *size;
  const std::int64_t backoff = spec.int_or("backoffLimit", 6, 0, kMaxI32);
  if (auto mode = spec.opt("completionMode")) {
    const std::string m = enum_value_of(*mode, "completionMode", {"NonIndexed", "Indexed"});
    if (m == "Indexed" && !comp) mode->fail("an Indexed Job needs spec.completions");
  }
  // A suspended Job waits for Kueue (or a user) to resume it; capsim's queues admit it.
  (void)spec.bool_or("suspend", false);
  warn_present(spec, kWarnedJobSpec, ctx);
  ignore_all(spec, kIgnoredJobSpec);

  const YamlNode template_node = spec.req("template");
  spec.finish();
  MapReader tmpl = template_node.map();
  std::optional<ObjectMeta> tmeta;
  if (auto tm = tmpl.opt("metadata")) {
    tmeta = parse_object_meta(*tm, b, true, pod_annotations(), /*name_required=*/false);
  }
  PodSpec& p = job.pod_template;
  p.name = job.name;
  p.namespace_ = meta.namespace_;
  if (tmeta) p.labels = tmeta->labels;
  if (tmeta) read_topology_annotations(*tmeta, p, ctx);
  // Kueue reads the Job's own annotations; partial admission is its Job integration's alone.
  read_kueue_annotations(meta, nullptr, ctx, owner == PodOwner::kJob ? &job : nullptr);
  if (tmeta) read_kueue_annotations(*tmeta, nullptr, ctx);
  p.labels.set(b.sym("batch.kubernetes.io/job-name"), b.sym(job.name));
  p.labels.set(b.sym("job-name"), b.sym(job.name));
  // Kueue reads its labels (queue name, workload priority class) from the Job object.
  for (const char* key : {kQueueNameLabel, "kueue.x-k8s.io/priority-class"}) {
    const Sym k = b.world().strings.find(key);
    if (k != kNoSym && meta.labels.has(k) && !p.labels.has(k)) p.labels.set(k, meta.labels.get(k));
  }
  parse_pod_spec(tmpl.req("spec"), ctx, p, owner);
  tmpl.finish();

  if (tmeta) a.add(*tmeta, "pod template");
  std::vector<const ObjectMeta*> metas = {&meta};
  if (tmeta) metas.push_back(&*tmeta);
  job.queue = queue_of(metas, a, b.world().strings, meta.namespace_);
  const DurationSource from{ctx,
                            {subject_kind, meta.namespace_,
                             subject_name.empty() ? std::string_view(job.name) : subject_name,
                             &meta.labels, &b.world().strings, job.queue, "", meta.generate_name},
                            std::nullopt,
                            deferred_failure};
  apply_sim_annotations(a, p, meta_node, fmt::format("job '{}'", job.name), from);
  job.arrival = p.arrival;
  p.arrival = 0;
  p.queue = job.queue;
  p.max_restarts = static_cast<std::int32_t>(backoff);
  p.requeue_on_preemption = true;  // the Job controller recreates a preempted pod
  // capsim.io/gang: "true" (all pods of a wave) or a minimum count places them all-or-nothing.
  if (auto g = a.get(kGang)) {
    const std::int32_t wave = std::min(job.parallelism, job.completions);
    std::int32_t min_member = 0;
    const std::string v = g->str();
    if (v == "true") {
      min_member = wave;
    } else if (v != "false") {
      min_member = static_cast<std::int32_t>(g->integer(1, wave));
    }
    if (min_member > 0 && job.min_parallelism > 0) {
      g->fail(
          "capsim.io/gang cannot be combined with kueue.x-k8s.io/job-min-parallelism: a partial "
          "admission could never place the whole gang");
    }
    if (min_member > 0) {
      b.world().gangs.push_back(GangSpec{job.name, min_member, short_location(g->where())});
      p.gang = static_cast<GangId>(b.world().gangs.size() - 1);
    }
  }
  return job;
}

void load_job(MapReader& doc, ManifestContext& ctx) {
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, ctx.builder, true, pod_annotations());
  doc.ignore("status");
  SimAnnotations a;
  a.add(meta, "Job");
  std::function<void()> untimed;
  JobSpec job = read_job(meta, meta_node, doc.req("spec"), ctx, std::move(a), "Job", {},
                         made_by_expanded_controller(meta) ? &untimed : nullptr);
  WorldBuilder& b = ctx.builder;
  b.note_controller(controller_key("Job", meta.namespace_, meta.name));
  const InputLocation where = located(doc.node());
  add_unless_owner_read(ctx, meta, "Job", where,
                        [&b, job = std::move(job), where, untimed = std::move(untimed)]() mutable {
                          if (untimed) untimed();  // kept, so it needs its run time after all
                          b.add_job(std::move(job), where);
                        });
}

void load_priority_class(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, false, {});
  PriorityClassInfo pc;
  pc.name = meta.name;
  pc.value = static_cast<std::int32_t>(doc.req("value").integer(
      std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
  pc.global_default = doc.bool_or("globalDefault", false);
  if (auto pp = doc.opt("preemptionPolicy")) {
    const std::string s = pp->str();
    if (s == "Never") {
      pc.preemption_policy = PreemptionPolicy::kNever;
    } else if (s != "PreemptLowerPriority") {
      pp->fail(fmt::format("unknown preemptionPolicy '{}'{}; use PreemptLowerPriority or Never", s,
                           did_you_mean(s, {"PreemptLowerPriority", "Never"})));
    }
  }
  if (auto d = doc.opt("description")) (void)d->str();
  ctx.builder.add_priority_class(std::move(pc), located(doc.node()));
}

// policy/v1 PodDisruptionBudget: which pods a maintenance drain may evict (sim/disruption.hpp).
// minAvailable and maxUnavailable are an integer or a percentage ("50%"), at most one of them;
// status is what the disruption controller writes and is ignored.
IntOrPercent parse_int_or_percent(const YamlNode& n, const char* field) {
  IntOrPercent out;
  const std::string text = n.str();
  if (!text.empty() && text.back() == '%') {
    std::int64_t v = -1;
    const char* end = text.data() + text.size() - 1;
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || ptr != end || v < 0 || v > 100) {
      n.fail(fmt::format("{} '{}' is not a percentage from 0% to 100%", field, text));
    }
    out.value = static_cast<std::int32_t>(v);
    out.percent = true;
    return out;
  }
  out.value = static_cast<std::int32_t>(n.integer(0, std::numeric_limits<std::int32_t>::max()));
  return out;
}

void load_pod_disruption_budget(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, true, {});
  DisruptionBudgetSpec b;
  b.name = meta.name;
  b.namespace_ = meta.namespace_;
  b.source = short_location(located(doc.node()));
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  if (auto sel = spec.opt("selector")) {
    b.selector = parse_label_selector(*sel, ctx.builder);
  } else {
    // An absent selector selects no pod: the budget protects nothing.
    ctx.warn(spec_node, "spec.selector is not set: this PodDisruptionBudget selects no pods");
  }
  const std::optional<YamlNode> min = spec.opt("minAvailable");
  const std::optional<YamlNode> max = spec.opt("maxUnavailable");
  if (min && max) {
    max->fail("minAvailable and maxUnavailable cannot both be set");
  }
  if (min) b.min_available = parse_int_or_percent(*min, "minAvailable");
  if (max) b.max_unavailable = parse_int_or_percent(*max, "maxUnavailable");
  if (auto u = spec.opt("unhealthyPodEvictionPolicy")) {
    const std::string v = u->str();
    if (v == "AlwaysAllow") {
      b.unhealthy = UnhealthyPodEvictionPolicy::kAlwaysAllow;
    } else if (v != "IfHealthyBudget") {
      u->fail(
          fmt::format("unknown unhealthyPodEvictionPolicy '{}'{}; use IfHealthyBudget or "
                      "AlwaysAllow",
                      v, did_you_mean(v, {"IfHealthyBudget", "AlwaysAllow"})));
    }
  }
  spec.finish();
  doc.ignore("status");
  ctx.builder.world().disruption_budgets.push_back(std::move(b));
}

// v1 Namespace: its labels are what namespaceSelectors match (pod affinity terms, Kueue
// ClusterQueues). spec.finalizers and status (phase Active/Terminating) do not affect scheduling.
void load_namespace(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, false, {});
  if (meta.name.empty()) doc.req("metadata").fail("metadata.name is required for a Namespace");
  if (auto p = namespace_name_problem(meta.name); !p.empty()) {
    doc.req("metadata").fail(fmt::format("metadata.name: Namespace '{}': {}", meta.name, p));
  }
  if (auto spec = doc.opt("spec")) {
    MapReader sr = spec->map();
    if (auto f = sr.opt("finalizers")) {
      for (const YamlNode& n : f->seq())
        (void)n.str();
    }
    sr.finish();
  }
  doc.ignore("status");
  // An error about the kubernetes.io/metadata.name label points at the label.
  // (A missing key reads as an invalid node, which only IsDefined() may be asked about.)
  InputLocation where = located(doc.node());
  const YAML::Node& raw = doc.node().raw();
  const YAML::Node meta_raw = raw["metadata"];  // a mapping: parse_object_meta read it
  const YAML::Node labels_raw = meta_raw["labels"];
  if (labels_raw.IsDefined() && labels_raw.IsMap()) {
    const YAML::Node own = labels_raw["kubernetes.io/metadata.name"];
    if (own.IsDefined()) {
      where = doc.node()
                  .child(meta_raw, "metadata")
                  .child(labels_raw, "labels")
                  .child(own, "kubernetes.io/metadata.name")
                  .where();
    }
  }
  ctx.builder.add_namespace(meta.name, meta.labels, where);
}

// --- Workload controllers (apps/v1, batch/v1 CronJob) ------------------------------------------
//
// capsim has no run-time Deployment, StatefulSet, DaemonSet or CronJob controller (sim/ has only
// the Job controller): they are expanded when the files are read, into the pods (and Jobs) the
// controller would create and keep. A pod records its owner's name in PodSpec::job_name, the
// field the reports group by, and the owner's kind in PodSpec::controller_kind (a drain leaves a
// DaemonSet's pods).

enum class Controller : std::uint8_t { kDeployment, kReplicaSet, kStatefulSet, kDaemonSet };

const char* controller_kind(Controller c) {
  switch (c) {
    case Controller::kDeployment:
      return "Deployment";
    case Controller::kReplicaSet:
      return "ReplicaSet";
    case Controller::kStatefulSet:
      return "StatefulSet";
    case Controller::kDaemonSet:
      return "DaemonSet";
  }
  return "?";
}

// Spec fields each controller accepts without modelling: rollout and history settings change how
// an update rolls out, never where the pods of one revision run.
const std::vector<std::string>& ignored_controller_spec(Controller c) {
  static const std::vector<std::string> deployment = {
      "strategy", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"};
  static const std::vector<std::string> replica_set = {"minReadySeconds"};
  static const std::vector<std::string> stateful_set = {"serviceName", "updateStrategy",
                                                        "revisionHistoryLimit", "minReadySeconds",
                                                        "persistentVolumeClaimRetentionPolicy"};
  static const std::vector<std::string> daemon_set = {"updateStrategy", "minReadySeconds",
                                                      "revisionHistoryLimit"};
  switch (c) {
    case Controller::kDeployment:
      return deployment;
    case Controller::kReplicaSet:
      return replica_set;
    case Controller::kStatefulSet:
      return stateful_set;
    case Controller::kDaemonSet:
      return daemon_set;
  }
  return replica_set;
}

// spec.selector: required in apps/v1, and it must select the template's labels (the API server
// rejects a selector that does not: "selector does not match template labels").
void check_selector(const YamlNode& selector, const LabelSet& template_labels, WorldBuilder& b) {
  const LabelSelector parsed = parse_label_selector(selector, b);
  MapReader r = selector.map();
  if (auto ml = r.opt("matchLabels")) {
    for (const auto& [key, value] : ml->entries()) {
      const std::string v = value.is_null() ? std::string() : value.str();
      const std::optional<std::string> have = label_value(template_labels, key, b.world().strings);
      if (!have || *have != v) {
        value.fail(fmt::format(
            "spec.selector.matchLabels {}={} does not select the pod template (its labels "
            "must include it; Kubernetes rejects such a selector)",
            key, v));
      }
    }
  }
  if (!selector_matches(parsed, template_labels)) {
    r.req("matchExpressions")
        .fail(
            "spec.selector.matchExpressions do not select the pod template's labels (Kubernetes "
            "rejects such a selector)");
  }
}

// What every controller's pod template gives: the pod, the template's metadata and the
// annotations of controller and template together.
struct TemplatePod {
  PodSpec pod;
  std::optional<ObjectMeta> meta;
  SimAnnotations annotations;
};

// `gang`: where a controller that accepts capsim.io/gang (a LeaderWorkerSet, per group) receives
// it; nullptr: the annotation is an error.
TemplatePod read_pod_template(const YamlNode& template_node, const ObjectMeta& owner,
                              const YamlNode& owner_meta_node, const char* kind,
                              ManifestContext& ctx, std::optional<YamlNode>* gang = nullptr) {
  WorldBuilder& b = ctx.builder;
  TemplatePod t;
  MapReader tmpl = template_node.map();
  if (auto tm = tmpl.opt("metadata")) {
    t.meta = parse_object_meta(*tm, b, true, pod_annotations(), /*name_required=*/false);
  }
  PodSpec& p = t.pod;
  p.namespace_ = owner.namespace_;
  p.controller_kind = std::string(kind);
  if (t.meta) p.labels = t.meta->labels;
  if (t.meta) read_topology_annotations(*t.meta, p, ctx);
  if (t.meta) read_kueue_annotations(*t.meta, nullptr, ctx);
  const YamlNode spec_node = tmpl.req("spec");
  parse_pod_spec(spec_node, ctx, p, PodOwner::kBare);
  tmpl.finish();
  // Kubernetes: a Deployment's, ReplicaSet's, StatefulSet's or DaemonSet's template must have
  // restartPolicy Always (the default).
  if (p.restart_policy != RestartPolicy::kAlways) {
    spec_node.map()
        .req("restartPolicy")
        .fail(fmt::format(
            "a {}'s pod template needs restartPolicy Always (Kubernetes rejects any other)", kind));
  }
  t.annotations.add(owner, kind);
  if (t.meta) t.annotations.add(*t.meta, "pod template");
  if (gang != nullptr) {
    *gang = t.annotations.take(kGang);
  } else if (auto g = t.annotations.get(kGang)) {
    g->fail(fmt::format("capsim.io/gang applies to Jobs, not to a {}", kind));
  }
  std::vector<const ObjectMeta*> metas = {&owner};
  if (t.meta) metas.push_back(&*t.meta);
  p.queue = queue_of(metas, t.annotations, b.world().strings, owner.namespace_);
  const DurationSource from{ctx,
                            {kind, owner.namespace_, owner.name, &owner.labels, &b.world().strings,
                             p.queue, "", owner.generate_name},
                            kEndOfTime};  // a controller keeps its pods running
  apply_sim_annotations(t.annotations, p, owner_meta_node, fmt::format("{} '{}'", kind, owner.name),
                        from);
  p.job_name = owner.name;
  p.requeue_on_preemption = true;  // the controller recreates a preempted pod
  return t;
}

// A pod-template-hash value: 10 characters of apimachinery's rand.SafeEncodeString alphabet from
// a 64-bit FNV-1a hash of `seed` (upstream encodes a 32-bit FNV-1a of the pod template).
std::string pod_template_hash(const std::string& seed) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::uint64_t h = fnv1a64(seed);
  std::string out;
  for (int i = 0; i < 10; ++i) {
    out += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return out;
}

// Deployment, ReplicaSet, StatefulSet: spec.replicas pods (default 1), long-running unless an
// annotation or a durations rule times them. Deployment pods are named
// `<name>-<pod-template-hash>-<5 characters>`, ReplicaSet pods `<name>-<5 characters>`,
// StatefulSet pods `<name>-<ordinal>` from spec.ordinals.start.
void load_replicated(MapReader& doc, ManifestContext& ctx, Controller c) {
  WorldBuilder& b = ctx.builder;
  const char* kind = controller_kind(c);
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  constexpr std::int64_t kMaxReplicas = 100000;
  const std::int64_t replicas = spec.int_or("replicas", 1, 0, kMaxReplicas);
  std::int64_t first_ordinal = 0;
  if (c == Controller::kStatefulSet) {
    if (auto o = spec.opt("ordinals")) {
      MapReader om = o->map();
      first_ordinal = om.int_or("start", 0, 0, std::numeric_limits<std::int32_t>::max());
      om.finish();
    }
    if (auto pm = spec.opt("podManagementPolicy")) {
      const std::string v = enum_value_of(*pm, "podManagementPolicy", {"OrderedReady", "Parallel"});
      if (v == "OrderedReady") {
        ctx.warn(*pm,
                 "podManagementPolicy OrderedReady is not modelled: capsim creates the pods "
                 "together, as Parallel does");
      }
    }
    if (auto v = spec.opt("volumeClaimTemplates")) {
      ctx.warn(*v, "volumeClaimTemplates are not modelled: capsim does not simulate storage");
    }
  }
  if (c == Controller::kDeployment) {
    if (auto pz = spec.opt("paused"); pz && pz->boolean()) {
      ctx.warn(*pz, "a paused Deployment keeps its pods running; capsim runs them");
    }
  }
  ignore_all(spec, ignored_controller_spec(c));
  // Unknown fields first (a misspelt `replica` says so, not that `selector` is missing).
  const std::optional<YamlNode> selector = spec.opt("selector");
  const std::optional<YamlNode> template_node = spec.opt("template");
  spec.finish();
  if (!selector) spec.req("selector");
  if (!template_node) spec.req("template");
  TemplatePod t = read_pod_template(*template_node, meta, meta_node, kind, ctx);
  check_selector(*selector, t.pod.labels, b);
  // What the default spread constraints select (upstream's helper.DefaultSelector: the
  // ReplicaSet's or StatefulSet's selector).
  t.pod.pod_rules.mut().owner_selector = parse_label_selector(*selector, b);
  // A Deployment's pods come from a ReplicaSet it makes, which labels them pod-template-hash and
  // adds that label to its selector (pkg/controller/deployment/sync.go): so matchLabelKeys:
  // [pod-template-hash] and the default constraints count only this Deployment's pods. Upstream
  // hashes the pod template; capsim hashes the Deployment's namespace and name (two Deployments
  // with identical templates get different hashes here, the same upstream). Pods are named
  // <deployment>-<hash>-<5 characters>, as the ReplicaSet names them.
  std::string pod_prefix = meta.name + "-";
  if (c == Controller::kDeployment) {
    const std::string hash = pod_template_hash(meta.namespace_ + "/" + meta.name);
    const Sym key = b.sym("pod-template-hash");
    t.pod.labels.set(key, b.sym(hash));
    t.pod.pod_rules.mut().owner_selector.requirements.push_back({key, LabelOp::kIn, {b.sym(hash)}});
    pod_prefix += hash + "-";
  }
  if (replicas == 0) {
    ctx.warn(spec_node, fmt::format("{} '{}' has 0 replicas: no pods", kind, meta.name));
  }
  b.note_controller(controller_key(kind, meta.namespace_, meta.name));
  const InputLocation where = located(doc.node());
  ReplicaTemplate rt{kind, meta.name, std::move(t.pod), pod_prefix, first_ordinal, replicas, where};
  b.keep(replica_template_key(kind, meta.namespace_, meta.name), rt);
  auto make = [&b, rt = std::move(rt)] {
    for (std::int64_t i = 0; i < rt.replicas; ++i)
      b.add_pod(make_replica(rt, i, b), rt.where);
  };
  // A ReplicaSet a read Deployment made is the Deployment's replicas again.
  add_unless_owner_read(ctx, meta, kind, where, make);
}

// The tolerations the DaemonSet controller adds to every pod it makes (upstream
// pkg/controller/daemon/util: AddOrUpdateDaemonPodTolerations), so node conditions and cordoning
// do not keep a daemon off its node.
void add_daemon_tolerations(PodSpec& p, WorldBuilder& b) {
  struct Auto {
    const char* key;
    TaintEffect effect;
  };
  static const std::array<Auto, 6> kAuto = {{
      {"node.kubernetes.io/not-ready", TaintEffect::kNoExecute},
      {"node.kubernetes.io/unreachable", TaintEffect::kNoExecute},
      {"node.kubernetes.io/disk-pressure", TaintEffect::kNoSchedule},
      {"node.kubernetes.io/memory-pressure", TaintEffect::kNoSchedule},
      {"node.kubernetes.io/pid-pressure", TaintEffect::kNoSchedule},
      {"node.kubernetes.io/unschedulable", TaintEffect::kNoSchedule},
  }};
  for (const Auto& a : kAuto) {
    Toleration t;
    t.key = b.sym(a.key);
    t.op = TolerationOp::kExists;
    t.value = b.sym("");
    t.effect = a.effect;
    p.tolerations.push_back(t);
  }
}

// Whether the DaemonSet controller would run `p` on `node`: its nodeSelector, required node
// affinity and NoSchedule/NoExecute taints (upstream: the daemon's predicates).
bool daemon_fits(const PodSpec& p, const NodeSpec& node, const StringPool& pool, Sym node_name) {
  if (!node.labels.contains_all(p.node_selector)) return false;
  const NodeView view{&node.labels, node_name};
  if (p.affinity->required && !matches_any_term(*p.affinity->required, view, pool)) return false;
  for (const Taint& taint : node.taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!tolerates_any(p.tolerations, taint)) return false;
  }
  return true;
}

// DaemonSet: one pod per matching node, pinned to it as the controller pins it (a
// matchFields metadata.name term in every required node-affinity term). The nodes are known only
// once every file is read, so the pods are made at the start of WorldBuilder::finalize().
void load_daemon_set(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  ignore_all(spec, ignored_controller_spec(Controller::kDaemonSet));
  const std::optional<YamlNode> selector = spec.opt("selector");
  const std::optional<YamlNode> template_node = spec.opt("template");
  spec.finish();
  if (!selector) spec.req("selector");
  if (!template_node) spec.req("template");
  TemplatePod t = read_pod_template(*template_node, meta, meta_node, "DaemonSet", ctx);
  check_selector(*selector, t.pod.labels, b);
  add_daemon_tolerations(t.pod, b);
  b.note_controller(controller_key("DaemonSet", meta.namespace_, meta.name));
  const InputLocation where = located(doc.node());
  std::vector<std::string>* warnings = ctx.options.warnings;
  b.before_finalize([&b, pod = std::move(t.pod), name = meta.name, where, warnings] {
    World& w = b.world();
    const Sym field = b.sym("metadata.name");
    std::size_t made = 0;
    const std::size_t nodes = w.nodes.size();
    for (std::size_t i = 0; i < nodes; ++i) {
      const NodeSpec& node = w.nodes[i];
      const Sym node_name = b.sym(node.name);
      if (!daemon_fits(pod, node, w.strings, node_name)) continue;
      PodSpec p = pod;
      p.name = b.generate_name(name + "-");
      NodeSelectorRequirement pin;
      pin.key = field;
      pin.op = SelectorOp::kIn;
      pin.values = {node_name};
      if (!p.affinity->required) p.affinity.mut().required = std::vector<NodeSelectorTerm>{{}};
      for (NodeSelectorTerm& term : *p.affinity.mut().required)
        term.match_fields = {pin};
      b.add_pod(std::move(p), where);
      ++made;
    }
    if (made == 0 && warnings != nullptr) {
      warnings->push_back(fmt::format("{}: DaemonSet '{}' matches none of the {} nodes: no pods",
                                      where.to_string(), name, nodes));
    }
  });
}

// batch/v1 CronJob: a Job from spec.jobTemplate at every scheduled time strictly after the
// CronJob's arrival (capsim.io/arrival, default 0) and before the horizon, named
// `<name>-<minutes since time 0>` as the controller names them (minutes since the Unix epoch).
void load_cron_job(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  const YamlNode schedule_node = spec.req("schedule");
  CronSchedule schedule;
  std::string error;
  if (!CronSchedule::parse(schedule_node.str(), schedule, error)) schedule_node.fail(error);
  if (auto tz = spec.opt("timeZone")) {
    const std::string z = tz->str();
    if (z != "UTC" && z != "Etc/UTC") {
      ctx.warn(*tz, fmt::format("time zone {} is taken as UTC: capsim's clock starts at "
                                "1970-01-01T00:00 UTC and has no time zones",
                                z));
    }
  }
  if (auto cp = spec.opt("concurrencyPolicy")) {
    const std::string v = enum_value_of(*cp, "concurrencyPolicy", {"Allow", "Forbid", "Replace"});
    if (v != "Allow") {
      ctx.warn(*cp, fmt::format("concurrencyPolicy {} is not modelled: every scheduled Job is "
                                "created, as with Allow",
                                v));
    }
  }
  const bool suspended = spec.bool_or("suspend", false);
  // History limits decide which finished Jobs are kept, and the starting deadline which missed
  // schedules still run (capsim misses none).
  for (const char* k :
       {"successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"}) {
    if (auto v = spec.opt(k)) (void)v->integer(0);
  }
  const YamlNode jt_node = spec.req("jobTemplate");
  spec.finish();
  b.note_controller(controller_key("CronJob", meta.namespace_, meta.name));
  if (ctx.options.horizon == kEndOfTime) {
    schedule_node.fail(
        "a CronJob's Jobs are made over the run's horizon, and the scenario sets none: set "
        "simulation.horizon");
  }
  MapReader jt = jt_node.map();
  ObjectMeta job_meta;
  if (auto m = jt.opt("metadata")) {
    job_meta = parse_object_meta(*m, b, true, pod_annotations(), /*name_required=*/false);
  }
  job_meta.name = meta.name;
  job_meta.generate_name = meta.generate_name;
  job_meta.namespace_ = meta.namespace_;
  SimAnnotations a;
  a.add(meta, "CronJob");
  a.add(job_meta, "jobTemplate");
  const bool annotated = a.get(kDuration) || a.get(kLongRunning);
  const JobSpec proto = read_job(job_meta, meta_node, jt.req("spec"), ctx, a, "CronJob");
  jt.finish();
  if (suspended) {
    ctx.warn(spec_node, fmt::format("CronJob '{}' is suspended: no Jobs", meta.name));
    if (proto.pod_template.gang != kNoGang) b.world().gangs.pop_back();
    return;
  }
  constexpr std::size_t kMaxJobs = 100000;
  bool truncated = false;
  const std::vector<SimTime> times =
      schedule.times(proto.arrival, ctx.options.horizon, kMaxJobs, truncated);
  if (truncated) {
    schedule_node.fail(
        fmt::format("the schedule makes more than {} Jobs over the horizon", kMaxJobs));
  }
  const GangId proto_gang = proto.pod_template.gang;
  const DurationRules* rules = ctx.options.durations;
  for (std::size_t i = 0; i < times.size(); ++i) {
    JobSpec job = proto;
    job.name = fmt::format("{}-{}", meta.name, times[i] / kMinute);
    job.arrival = times[i];
    PodSpec& p = job.pod_template;
    p.name = job.name;
    p.labels.set(b.sym("batch.kubernetes.io/job-name"), b.sym(job.name));
    p.labels.set(b.sym("job-name"), b.sym(job.name));
    if (!annotated && rules != nullptr) {
      // One draw per Job: each run of the schedule takes its own time.
      const DurationSubject subject{"CronJob",    meta.namespace_,    meta.name,
                                    &meta.labels, &b.world().strings, job.queue,
                                    job.name,     meta.generate_name};
      if (auto d = rules->duration_for(subject)) p.duration = *d;
    }
    if (proto_gang != kNoGang) {
      if (i == 0) {
        b.world().gangs[proto_gang].name = job.name;
      } else {
        GangSpec g = b.world().gangs[proto_gang];
        g.name = job.name;
        b.world().gangs.push_back(std::move(g));
        p.gang = static_cast<GangId>(b.world().gangs.size() - 1);
      }
    }
    b.add_job(std::move(job), located(doc.node()));
  }
  if (times.empty()) {
    if (proto_gang != kNoGang) b.world().gangs.pop_back();
    ctx.warn(schedule_node, fmt::format("CronJob '{}' has no scheduled time before the horizon: "
                                        "no Jobs",
                                        meta.name));
  }
}

// --- Multi-part workloads: JobSet, PyTorchJob, LeaderWorkerSet ---------------------------------
//
// Expanded when read, like the apps/v1 controllers: a JobSet into its child Jobs, a PyTorchJob
// into one Job per replica type, a LeaderWorkerSet into its groups' pods. Under Kueue each object
// (a LeaderWorkerSet: each group) is one Workload whose PodSets are its parts; the pods carry
// PodSpec::workload_group for that. kube-scheduler still places them one by one, unless
// capsim.io/gang on the object makes them a gang. What each controller does that capsim does not
// is in docs/kubernetes-manifests.md, and warned about by field.

constexpr const char* kQueuePriorityLabel = "kueue.x-k8s.io/priority-class";

std::int32_t add_workload_group(WorldBuilder& b, std::string name, const char* kind,
                                std::int32_t pods, const YamlNode& at) {
  b.world().workload_groups.push_back(
      WorkloadGroupSpec{std::move(name), kind, pods, short_location(at.where())});
  return static_cast<std::int32_t>(b.world().workload_groups.size() - 1);
}

// capsim.io/gang on a multi-part object: "true" (all `pods`) or a minimum count, one gang over
// every part. kNoGang when absent or "false".
GangId add_object_gang(const std::optional<YamlNode>& g, std::int32_t pods, const std::string& name,
                       WorldBuilder& b) {
  if (!g || pods == 0) return kNoGang;
  const std::string v = g->str();
  std::int32_t min_member = 0;
  if (v == "true") {
    min_member = pods;
  } else if (v != "false") {
    min_member = static_cast<std::int32_t>(g->integer(1, pods));
  }
  if (min_member == 0) return kNoGang;
  b.world().gangs.push_back(GangSpec{name, min_member, short_location(g->where())});
  return static_cast<GangId>(b.world().gangs.size() - 1);
}

// Kueue reads the queue name and workload priority class from the top object's labels; the parts
// (a JobSet's Jobs, an operator's pods) inherit them.
void inherit_kueue_labels(const LabelSet& from, LabelSet& to, WorldBuilder& b) {
  for (const char* key : {kQueueNameLabel, kQueuePriorityLabel}) {
    const Sym k = b.world().strings.find(key);
    if (k != kNoSym && from.has(k) && !to.has(k)) to.set(k, from.get(k));
  }
}

void warn_annotation(const ObjectMeta& meta, std::string_view key, ManifestContext& ctx,
                     const std::string& message) {
  if (auto v = meta.annotation(key)) ctx.warn(*v, message);
}

// jobset.x-k8s.io JobSet: replicatedJobs[i].replicas Jobs named <jobset>-<replicatedJob>-<index>
// (the JobSet controller's names), each from the replicated Job's template, with the jobset.sigs.
// k8s.io labels the controller sets. Kueue admits a JobSet as one Workload with a PodSet per
// replicated Job of replicas x min(parallelism, completions) pods (Kueue docs: "Run A JobSet").
// Durations rules match the JobSet (kind JobSet, its name), so all its Jobs draw one run time.
//
// A TrainJob's JobSet is read here too, from its runtime's template (`trainer`): the JobSet takes
// the TrainJob's name, namespace, labels and annotations, durations rules and Kueue see the
// TrainJob, and Kubeflow Trainer's builder (pkg/runtime/framework/plugins/jobset/builder.go)
// changes the template: replicated Jobs labelled trainer.kubeflow.org/trainjob-ancestor-step
// (trainer, dataset-initializer, model-initializer) get one replica, the trainer step's Job
// parallelism = completions = the node count, and the TrainJob's resourcesPerNode replaces the
// resources of every container named `node`.
struct TrainerShape {
  std::int32_t nodes = 1;
  std::optional<ContainerResourcesOverride> resources;
};

constexpr const char* kAncestorStep = "trainer.kubeflow.org/trainjob-ancestor-step";

// `meta`/`meta_node`: the JobSet's (or the TrainJob's) metadata; `spec_node` the JobSet spec;
// `kind` the object the user wrote ("JobSet" or "TrainJob"); `where` its document.
void expand_job_set(const ObjectMeta& meta, const YamlNode& meta_node, const YamlNode& spec_node,
                    const InputLocation& where, ManifestContext& ctx, const char* kind,
                    const TrainerShape* trainer) {
  WorldBuilder& b = ctx.builder;
  MapReader spec = spec_node.map();
  const YamlNode rjobs_node = spec.req("replicatedJobs");
  // A suspended JobSet waits for Kueue (or a user) to resume it; capsim's queues admit it.
  (void)spec.bool_or("suspend", false);
  // successPolicy and failurePolicy name replicated Jobs, checked once those are read (the
  // JobSet webhook's validation); neither is modelled, as their warnings say.
  std::vector<YamlNode> job_refs;
  std::optional<YamlNode> success;
  std::string success_operator;
  std::vector<std::string> success_targets;
  if (auto sp = spec.opt("successPolicy")) {
    success = sp;
    MapReader r = sp->map();
    success_operator = enum_value_of(r.req("operator"), "successPolicy operator", {"All", "Any"});
    if (auto t = r.opt("targetReplicatedJobs")) {
      for (const YamlNode& n : t->seq()) {
        success_targets.push_back(n.str());
        job_refs.push_back(n);
      }
    }
    r.finish();
  }
  if (auto fp = spec.opt("failurePolicy")) {
    MapReader r = fp->map();
    const std::int64_t max_restarts =
        r.int_or("maxRestarts", 0, 0, std::numeric_limits<std::int32_t>::max());
    std::string strategy = "Recreate";
    if (auto rs = r.opt("restartStrategy")) {
      strategy =
          enum_value_of(*rs, "restartStrategy", {"Recreate", "BlockingRecreate", "InPlaceRestart"});
    }
    std::vector<std::string> rule_names;
    if (auto rules = r.opt("rules")) {
      std::size_t i = 0;
      for (const YamlNode& rule : rules->seq()) {
        MapReader rr = rule.map();
        // The webhook names an unnamed rule failurePolicyRule<i>; a name is 1-128 characters of
        // ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ and unique.
        std::string name = fmt::format("failurePolicyRule{}", i++);
        if (auto n = rr.opt("name")) {
          name = n->str();
          const bool ok =
              !name.empty() && name.size() <= 128 &&
              std::isalpha(static_cast<unsigned char>(name[0])) &&
              std::all_of(name.begin(), name.end(),
                          [](unsigned char c) {
                            return std::isalnum(c) || c == '_' || c == ',' || c == ':';
                          }) &&
              (std::isalnum(static_cast<unsigned char>(name.back())) || name.back() == '_');
          if (!ok) {
            n->fail(fmt::format(
                "invalid failure policy rule name '{}': it starts with a letter, then letters, "
                "digits or '_,:', and ends with a letter, digit or '_' (at most 128)",
                name));
          }
          if (std::find(rule_names.begin(), rule_names.end(), name) != rule_names.end()) {
            n->fail(fmt::format("failure policy rule name '{}' is used twice", name));
          }
        }
        rule_names.push_back(name);
        (void)enum_value_of(rr.req("action"), "failure policy action",
                            {"FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts",
                             "RestartJob", "RestartJobAndIgnoreMaxRestarts"});
        if (auto reasons = rr.opt("onJobFailureReasons")) {
          for (const YamlNode& reason : reasons->seq()) {
            (void)enum_value_of(reason, "job failure reason",
                                {"BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes",
                                 "MaxFailedIndexesExceeded", "PodFailurePolicy"});
          }
        }
        if (auto patterns = rr.opt("onJobFailureMessagePatterns")) {
          for (const YamlNode& pattern : patterns->seq())
            (void)pattern.str();
        }
        if (auto t = rr.opt("targetReplicatedJobs")) {
          for (const YamlNode& n : t->seq())
            job_refs.push_back(n);
        }
        rr.finish();
      }
    }
    r.finish();
    ctx.warn(*fp, fmt::format("failurePolicy is not modelled (maxRestarts {}, restartStrategy {}"
                              "{}{}): a child Job that fails fails alone, and the JobSet is not "
                              "restarted",
                              max_restarts, strategy, rule_names.empty() ? "" : ", rules ",
                              fmt::join(rule_names, ", ")));
  }
  if (auto st = spec.opt("startupPolicy")) {
    MapReader r = st->map();
    const YamlNode order = r.req("startupPolicyOrder");
    const std::string v = enum_value_of(order, "startupPolicyOrder", {"AnyOrder", "InOrder"});
    r.finish();
    if (v == "InOrder") {
      ctx.warn(order,
               "startupPolicyOrder InOrder is not modelled: capsim creates every Job at once");
    }
  }
  if (auto v = spec.opt("volumeClaimPolicies")) {
    ctx.warn(*v, "volumeClaimPolicies are not modelled: capsim does not simulate storage");
  }
  // DNS, the coordinator's address, who reconciles it and when it is deleted: none places a pod.
  ignore_all(spec, {"network", "coordinator", "managedBy", "ttlSecondsAfterFinished"});
  spec.finish();
  warn_annotation(meta, "alpha.jobset.sigs.k8s.io/exclusive-topology", ctx,
                  "exclusive placement per topology domain is not modelled: capsim places the "
                  "JobSet's pods without it");

  SimAnnotations base;
  base.add(meta, kind);
  const std::optional<YamlNode> gang = base.take(kGang);
  const std::vector<YamlNode> rjobs = rjobs_node.seq();
  if (rjobs.empty()) rjobs_node.fail("a JobSet needs at least one replicated Job");

  constexpr std::int64_t kMaxReplicas = 100000;
  std::vector<JobSpec> jobs;
  std::vector<std::string> names;
  std::int64_t total_pods = 0;
  std::int64_t global_index = 0;
  for (const YamlNode& rj_node : rjobs) {
    MapReader rj = rj_node.map();
    const YamlNode name_node = rj.req("name");
    const std::string rj_name = name_node.str();
    if (!is_dns_label(rj_name)) {
      name_node.fail(
          fmt::format("replicated Job name '{}' is not a DNS label (lower-case letters, "
                      "digits and '-', at most 63)",
                      rj_name));
    }
    if (std::find(names.begin(), names.end(), rj_name) != names.end()) {
      name_node.fail(fmt::format("replicated Job name '{}' is used twice", rj_name));
    }
    names.push_back(rj_name);
    std::int64_t replicas = rj.int_or("replicas", 1, 0, kMaxReplicas);
    if (auto d = rj.opt("dependsOn")) {
      // The webhook: not on the first replicated Job, and naming an earlier one; one entry.
      if (names.size() == 1) d->fail("dependsOn can't be set for the first replicated Job");
      const std::vector<YamlNode> deps = d->seq();
      if (deps.size() > 1) d->fail("dependsOn takes one entry (the API supports only one yet)");
      for (const YamlNode& dep : deps) {
        MapReader dm = dep.map();
        const YamlNode dn = dm.req("name");
        const std::string target = dn.str();
        if (std::find(names.begin(), names.end() - 1, target) == names.end() - 1) {
          dn.fail(
              fmt::format("replicated Job '{}' cannot depend on '{}': dependsOn names an "
                          "earlier replicated Job",
                          rj_name, target));
        }
        (void)enum_value_of(dm.req("status"), "dependsOn status", {"Ready", "Complete"});
        dm.finish();
      }
      ctx.warn(*d, "dependsOn is not modelled: capsim creates every replicated Job at once");
    }
    rj.ignore("groupName");  // labels and the group's index only
    const YamlNode tmpl_node = rj.req("template");
    rj.finish();
    MapReader jt = tmpl_node.map();
    ObjectMeta child;
    if (auto m = jt.opt("metadata")) {
      child = parse_object_meta(*m, b, true, pod_annotations(), /*name_required=*/false);
    }
    const YamlNode job_spec = jt.req("spec");
    jt.finish();
    std::optional<std::int32_t> size;
    if (trainer != nullptr) {
      const std::optional<std::string> step =
          label_value(child.labels, kAncestorStep, b.world().strings);
      if (step == "trainer" || step == "dataset-initializer" || step == "model-initializer") {
        replicas = 1;
      }
      if (step == "trainer") size = trainer->nodes;
    }
    if (replicas == 0) {
      ctx.warn(rj_node, fmt::format("replicated Job '{}' has 0 replicas: no Jobs", rj_name));
      continue;
    }
    warn_annotation(child, "alpha.jobset.sigs.k8s.io/exclusive-topology", ctx,
                    "exclusive placement per topology domain is not modelled");
    child.name = fmt::format("{}-{}-0", meta.name, rj_name);
    child.generate_name = meta.generate_name;
    child.namespace_ = meta.namespace_;
    inherit_kueue_labels(meta.labels, child.labels, b);
    SimAnnotations a = base;
    a.add(child, "replicated Job template");
    // One read per replicated Job (so its warnings come once); its replicas are copies.
    ctx.container_resources =
        trainer != nullptr && trainer->resources ? &*trainer->resources : nullptr;
    const JobSpec proto = read_job(child, meta_node, job_spec, ctx, a, kind, meta.name, nullptr,
                                   size, PodOwner::kJobSetJob);
    ctx.container_resources = nullptr;
    total_pods += replicas * std::min(proto.parallelism, proto.completions);
    if (total_pods > std::numeric_limits<std::int32_t>::max()) {
      rj_node.fail("the JobSet makes more pods than capsim can hold");
    }
    const GangId proto_gang = proto.pod_template.gang;
    for (std::int64_t i = 0; i < replicas; ++i, ++global_index) {
      JobSpec job = proto;
      job.name = fmt::format("{}-{}-{}", meta.name, rj_name, i);
      PodSpec& p = job.pod_template;
      p.name = job.name;
      p.labels.set(b.sym("batch.kubernetes.io/job-name"), b.sym(job.name));
      p.labels.set(b.sym("job-name"), b.sym(job.name));
      p.labels.set(b.sym("jobset.sigs.k8s.io/jobset-name"), b.sym(meta.name));
      p.labels.set(b.sym("jobset.sigs.k8s.io/replicatedjob-name"), b.sym(rj_name));
      p.labels.set(b.sym("jobset.sigs.k8s.io/job-index"), b.sym(std::to_string(i)));
      p.labels.set(b.sym("jobset.sigs.k8s.io/job-global-index"),
                   b.sym(std::to_string(global_index)));
      p.labels.set(b.sym("jobset.sigs.k8s.io/replicatedjob-replicas"),
                   b.sym(std::to_string(replicas)));
      if (proto_gang != kNoGang && i > 0) {  // a gang per Job, as the template asks
        GangSpec g = b.world().gangs[proto_gang];
        g.name = job.name;
        b.world().gangs.push_back(std::move(g));
        p.gang = static_cast<GangId>(b.world().gangs.size() - 1);
      } else if (proto_gang != kNoGang) {
        b.world().gangs[proto_gang].name = job.name;
      }
      b.note_controller(controller_key("Job", meta.namespace_, job.name));
      jobs.push_back(std::move(job));
    }
  }
  // The webhook: every replicated Job a policy names is one of the JobSet's.
  for (const YamlNode& ref : job_refs) {
    const std::string n = ref.str();
    if (std::find(names.begin(), names.end(), n) == names.end()) {
      ref.fail(fmt::format("'{}' is not one of the replicated Jobs ({}){}", n,
                           fmt::join(names, ", "), did_you_mean(n, names)));
    }
  }
  // All over every replicated Job is what capsim does: each child Job runs to completion.
  if (success && (success_operator == "Any" ||
                  (!success_targets.empty() &&
                   std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                     return std::find(success_targets.begin(), success_targets.end(), n) ==
                            success_targets.end();
                   })))) {
    ctx.warn(
        *success,
        fmt::format("successPolicy is not modelled (operator {} over {}): capsim runs "
                    "every child Job to completion, as operator All over all "
                    "replicated Jobs",
                    success_operator,
                    success_targets.empty() ? std::string("all replicated Jobs")
                                            : fmt::format("{}", fmt::join(success_targets, ", "))));
  }
  const auto pods = static_cast<std::int32_t>(total_pods);
  const GangId whole = add_object_gang(gang, pods, meta.name, b);
  const std::int32_t group = add_workload_group(b, meta.name, kind, pods, meta_node);
  for (JobSpec& job : jobs) {
    if (whole != kNoGang && job.pod_template.gang != kNoGang) {
      gang->fail(fmt::format(
          "capsim.io/gang is set on the {} and on a replicated Job's template; keep one", kind));
    }
    job.pod_template.workload_group = group;
    if (whole != kNoGang) job.pod_template.gang = whole;
  }
  b.note_controller(controller_key("JobSet", meta.namespace_, meta.name));
  add_unless_owner_read(ctx, meta, kind, where, [&b, jobs = std::move(jobs), where]() mutable {
    for (JobSpec& job : jobs)
      b.add_job(std::move(job), where);
  });
}

void load_job_set(MapReader& doc, ManifestContext& ctx) {
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, ctx.builder, true, pod_annotations());
  doc.ignore("status");
  expand_job_set(meta, meta_node, doc.req("spec"), located(doc.node()), ctx, "JobSet", nullptr);
}

// --- Kubeflow Trainer v2: TrainJob and its (Cluster)TrainingRuntime -----------------------------
//
// trainer.kubeflow.org/v1alpha1. A runtime is a JobSet template with an ML policy; a TrainJob
// names one (spec.runtimeRef) and says how many nodes and what each gets. The runtime may come in
// any file of the load, so runtimes are kept when read and a TrainJob is expanded, into the JobSet
// its runtime makes, once every file is read (expand_job_set with a TrainerShape).

// A runtime as read: what the TrainJobs naming it need.
struct TrainingRuntimeDef {
  std::string kind;  // ClusterTrainingRuntime or TrainingRuntime
  std::string name;
  std::optional<std::int32_t> nodes;      // mlPolicy.numNodes
  ObjectMeta template_meta;               // template.metadata: the JobSet's labels and annotations
  std::optional<YamlNode> template_spec;  // template.spec: a JobSet spec, read per TrainJob
  InputLocation where;
};

// The runtimes of this load by "<kind>/<namespace>/<name>" (cluster-scoped: empty namespace).
using TrainingRuntimes = std::map<std::string, TrainingRuntimeDef>;
constexpr const char* kTrainingRuntimes = "trainer.kubeflow.org/runtimes";

TrainingRuntimes& training_runtimes(WorldBuilder& b) {
  if (std::any* r = b.kept(kTrainingRuntimes)) return *std::any_cast<TrainingRuntimes>(r);
  return *std::any_cast<TrainingRuntimes>(&b.keep(kTrainingRuntimes, TrainingRuntimes{}));
}

std::string runtime_key(std::string_view kind, std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}/{}", kind, ns, name);
}

// ClusterTrainingRuntime (cluster-scoped) and TrainingRuntime (namespaced): mlPolicy (numNodes;
// torch's numProcPerNode is processes, not resources), podGroupPolicy (warned: the coscheduling
// or Volcano gang is not modelled), template (metadata and a JobSet spec). The JobSet spec is
// read for each TrainJob that names the runtime, with that TrainJob's shape; a runtime no TrainJob
// names is checked only down to template.spec.
void load_training_runtime(MapReader& doc, ManifestContext& ctx, bool cluster_scoped) {
  WorldBuilder& b = ctx.builder;
  const char* kind = cluster_scoped ? "ClusterTrainingRuntime" : "TrainingRuntime";
  TrainingRuntimeDef rt;
  rt.kind = kind;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, !cluster_scoped, {});
  rt.name = meta.name;
  rt.where = located(doc.node());
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  if (auto ml = spec.opt("mlPolicy")) {
    MapReader m = ml->map();
    if (auto n = m.opt("numNodes")) {
      rt.nodes = static_cast<std::int32_t>(n->integer(1, 100000));
    }
    if (auto t = m.opt("torch")) {
      MapReader tm = t->map();
      tm.ignore("numProcPerNode");  // torchrun's processes per node, not resources
      if (auto e = tm.opt("elasticPolicy")) {
        ctx.warn(*e,
                 "elasticPolicy is not modelled: capsim runs the TrainJob's numNodes (else the "
                 "runtime's, else 1) nodes for the whole run");
      }
      tm.finish();
    }
    for (const char* other : {"mpi", "flux"}) {
      if (auto o = m.opt(other)) {
        o->fail(fmt::format(
            "mlPolicy.{} is not modelled yet (its launcher and node counts differ from the "
            "TrainJob's numNodes); capsim reads runtimes with a torch policy or none: write the "
            "JobSet this runtime makes (jobset.x-k8s.io/v1alpha2) instead",
            other));
      }
    }
    m.finish();
  }
  if (auto pg = spec.opt("podGroupPolicy")) {
    ctx.warn(*pg,
             "podGroupPolicy is read by the coscheduling or Volcano gang scheduler, which capsim "
             "does not model; put capsim.io/gang on the TrainJob to place its pods "
             "all-or-nothing");
  }
  const YamlNode tmpl_node = spec.req("template");
  spec.finish();
  MapReader tmpl = tmpl_node.map();
  if (auto m = tmpl.opt("metadata")) {
    rt.template_meta = parse_object_meta(*m, b, true, pod_annotations(), /*name_required=*/false);
  }
  rt.template_spec = tmpl.req("spec");
  tmpl.finish();
  if (!rt.template_spec->is_map()) rt.template_spec->fail("a JobSet spec (a mapping) is required");
  const std::string key = runtime_key(kind, meta.namespace_, meta.name);
  TrainingRuntimes& all = training_runtimes(b);
  if (auto it = all.find(key); it != all.end()) {
    meta_node.fail(fmt::format("{} '{}' is described twice (also at {})", kind, meta.name,
                               it->second.where.to_string()));
  }
  all.emplace(key, std::move(rt));
}

// trainer.kubeflow.org/v1alpha1 TrainJob: the JobSet of the runtime it names (runtimeRef: kind
// ClusterTrainingRuntime by default, or TrainingRuntime of the TrainJob's namespace), named after
// the TrainJob, with spec.trainer.numNodes (else the runtime's mlPolicy.numNodes, else 1) pods in
// its trainer step and spec.trainer.resourcesPerNode on the `node` containers. Kueue admits it as
// one Workload with a PodSet per replicated Job (Kueue docs: "Run A TrainJob"); durations rules
// match kind TrainJob.
void load_train_job(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  const YamlNode ref_node = spec.req("runtimeRef");
  MapReader ref = ref_node.map();
  const YamlNode ref_name = ref.req("name");
  const std::string runtime_name = ref_name.str();
  if (runtime_name.empty()) ref_name.fail("runtimeRef.name names the runtime; it is empty");
  if (auto g = ref.opt("apiGroup")) {
    if (g->str() != "trainer.kubeflow.org") {
      g->fail(
          fmt::format("runtimeRef.apiGroup '{}' is not a group capsim reads runtimes of; use "
                      "trainer.kubeflow.org (the default)",
                      g->str()));
    }
  }
  std::string runtime_kind = "ClusterTrainingRuntime";
  if (auto k = ref.opt("kind")) {
    runtime_kind =
        enum_value_of(*k, "runtimeRef.kind", {"ClusterTrainingRuntime", "TrainingRuntime"});
  }
  ref.finish();

  std::optional<std::int32_t> nodes;
  std::optional<YamlNode> resources;
  if (auto t = spec.opt("trainer")) {
    MapReader tr = t->map();
    if (auto n = tr.opt("numNodes")) nodes = static_cast<std::int32_t>(n->integer(1, 100000));
    if (auto r = tr.opt("resourcesPerNode")) {
      MapReader rr = r->map();
      // Upstream replaces the containers' resources only when limits or requests are given.
      const bool limits = rr.opt("limits").has_value();
      const bool requests = rr.opt("requests").has_value();  // both read: no short circuit
      const bool given = limits || requests;
      rr.ignore("claims");
      rr.finish();
      if (given) resources = *r;
    }
    // The container's image, command and environment, and torchrun's processes per node.
    ignore_all(tr, {"image", "command", "args", "env", "numProcPerNode"});
    tr.finish();
  }
  // Where the initializers fetch the dataset and model from: no resources, no placement.
  spec.ignore("initializer");
  (void)spec.bool_or("suspend", false);  // Kueue resumes it on admission
  spec.ignore("managedBy");
  if (auto ad = spec.opt("activeDeadlineSeconds")) {
    ctx.warn(*ad, "activeDeadlineSeconds is not modelled");
  }
  for (const char* patch : {"runtimePatches", "podSpecOverrides", "podTemplateOverrides"}) {
    if (auto p = spec.opt(patch)) {
      ctx.warn(*p, fmt::format("{} are not modelled: capsim places the pods as the runtime's "
                               "template says (write the change into the runtime instead)",
                               patch));
    }
  }
  for (const char* older : {"labels", "annotations"}) {
    if (auto p = spec.opt(older)) {
      ctx.warn(*p, fmt::format("spec.{} (for the JobSet the TrainJob makes) are not modelled; "
                               "put pod labels into the runtime's template",
                               older));
    }
  }
  spec.finish();

  // The JobSet the TrainJob makes, and through it its Jobs, are the TrainJob's expansion.
  b.note_controller(controller_key("TrainJob", meta.namespace_, meta.name));
  b.note_controller(controller_key("JobSet", meta.namespace_, meta.name));
  const std::string key = runtime_key(
      runtime_kind, runtime_kind == "TrainingRuntime" ? meta.namespace_ : "", runtime_name);
  const InputLocation where = located(doc.node());
  b.before_finalize([&b, options = ctx.options, api = ctx.api_version, meta, meta_node, ref_name,
                     runtime_kind, runtime_name, key, nodes, resources, where] {
    TrainingRuntimes& all = training_runtimes(b);
    const auto it = all.find(key);
    if (it == all.end()) {
      std::vector<std::string> read;
      for (const auto& [k, rt] : all) {
        if (rt.kind == runtime_kind) read.push_back(rt.name);
      }
      const std::string scope =
          runtime_kind == "TrainingRuntime" ? " in namespace " + meta.namespace_ : "";
      ref_name.fail(fmt::format(
          "TrainJob '{}' names {} '{}'{}, which no file of this load describes{}{}; capsim makes "
          "a TrainJob's pods from its runtime's JobSet template: add the file that holds the "
          "runtime (kubectl get {} {} -o yaml) to the manifests, or write the JobSet the runtime "
          "makes (jobset.x-k8s.io/v1alpha2) instead of the TrainJob",
          meta.name, runtime_kind, runtime_name, scope,
          read.empty() ? "" : fmt::format(" (read: {})", fmt::join(read, ", ")),
          did_you_mean(runtime_name, read),
          runtime_kind == "TrainingRuntime" ? "trainingruntime -n " + meta.namespace_
                                            : std::string("clustertrainingruntime"),
          runtime_name));
    }
    const TrainingRuntimeDef& rt = it->second;
    TrainerShape shape;
    shape.nodes = nodes ? *nodes : rt.nodes.value_or(1);
    if (resources) shape.resources = ContainerResourcesOverride{{"node"}, *resources};
    ObjectMeta js = meta;  // the JobSet takes the TrainJob's name, namespace and labels
    for (const auto& [k, v] : rt.template_meta.labels.items()) {
      if (!js.labels.has(k)) js.labels.set(k, v);
    }
    // A runtime's own warnings (its JobSet spec) are given once, not once per TrainJob.
    std::vector<std::string>* warnings = options.warnings;
    const std::size_t before = warnings != nullptr ? warnings->size() : 0;
    ManifestContext c{b, options, api, "TrainJob"};
    warn_annotation(rt.template_meta, "alpha.jobset.sigs.k8s.io/exclusive-topology", c,
                    "exclusive placement per topology domain is not modelled: capsim places the "
                    "TrainJob's pods without it");
    expand_job_set(js, meta_node, *rt.template_spec, where, c, "TrainJob", &shape);
    if (warnings != nullptr) {
      std::vector<std::string> fresh(warnings->begin() + static_cast<std::ptrdiff_t>(before),
                                     warnings->end());
      warnings->resize(before);
      for (std::string& w : fresh) {
        if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) {
          warnings->push_back(std::move(w));
        }
      }
    }
  });
}

// kubeflow.org/v1 PyTorchJob: one Job per replica type (Master, Worker), named <job>-master and
// <job>-worker, whose pods the Job controller names <job>-master-0, <job>-worker-<i> as the
// training operator does. The operator's defaults: replicas 1, restartPolicy OnFailure
// (training-operator pytorchjob_defaults.go); its runPolicy.backoffLimit bounds restarts (unset:
// no bound). Kueue admits the PyTorchJob as one Workload with a PodSet per replica type (Kueue
// docs: "Run a Kubeflow PyTorchJob"). capsim runs every replica to its end: upstream, the job
// succeeds when the master does and the workers are then removed (cleanPodPolicy), which ends
// them at the same time when they share one run time, as one durations rule gives them.
void load_pytorch_job(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  const YamlNode replicas_node = spec.req("pytorchReplicaSpecs");
  std::int32_t backoff = std::numeric_limits<std::int32_t>::max();
  if (auto rp = spec.opt("runPolicy")) {
    MapReader r = rp->map();
    if (auto bl = r.opt("backoffLimit")) {
      backoff = static_cast<std::int32_t>(bl->integer(0, std::numeric_limits<std::int32_t>::max()));
    }
    (void)r.bool_or("suspend", false);  // Kueue resumes it on admission
    if (auto ad = r.opt("activeDeadlineSeconds")) {
      ctx.warn(*ad, "activeDeadlineSeconds is not modelled");
    }
    if (auto sp = r.opt("schedulingPolicy")) {
      ctx.warn(*sp,
               "schedulingPolicy is read by the operator's gang-scheduling integration (Volcano "
               "or scheduler-plugins), which capsim does not model; put capsim.io/gang on the "
               "PyTorchJob to place its pods all-or-nothing");
    }
    ignore_all(r, {"cleanPodPolicy", "ttlSecondsAfterFinished", "managedBy"});
    r.finish();
  }
  if (auto ep = spec.opt("elasticPolicy")) {
    ctx.warn(*ep, "elasticPolicy is not modelled: capsim runs the replicas given");
  }
  spec.ignore("nprocPerNode");  // processes per pod, not resources
  spec.finish();

  SimAnnotations base;
  base.add(meta, "PyTorchJob");
  const std::optional<YamlNode> gang = base.take(kGang);
  std::vector<JobSpec> jobs;
  std::int64_t total_pods = 0;
  const auto entries = replicas_node.entries();
  if (entries.empty()) replicas_node.fail("a PyTorchJob needs a Master or Worker replica spec");
  for (const auto& [type_key, rs_node] : entries) {
    // The operator turns the keys to camel case ("master" -> "Master") before validating them.
    std::string type = type_key;
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type != "master" && type != "worker") {
      rs_node.fail(fmt::format("unknown PyTorchJob replica type '{}'{}; use Master or Worker",
                               type_key, did_you_mean(type_key, {"Master", "Worker"})));
    }
    MapReader rs = rs_node.map();
    const std::int64_t replicas = rs.int_or("replicas", 1, 0, 100000);
    if (type == "master" && replicas != 1) {
      rs.req("replicas")
          .fail(
              "a PyTorchJob has exactly one Master replica (the operator rejects "
              "any other count)");
    }
    RestartPolicy restart = RestartPolicy::kOnFailure;
    if (auto r = rs.opt("restartPolicy")) {
      const std::string v = r->str();
      if (v == "OnFailure") {
        restart = RestartPolicy::kOnFailure;
      } else if (v == "Never" || v == "ExitCode") {
        // ExitCode: the operator recreates a pod whose exit code is retryable; capsim has no exit
        // codes, and its Job controller recreates failed pods within backoffLimit.
        restart = RestartPolicy::kNever;
      } else if (v == "Always") {
        ctx.warn(*r,
                 "restartPolicy Always would restart a replica that finished; capsim ends it "
                 "when its work is done, as OnFailure does");
      } else {
        r->fail(
            fmt::format("unknown restartPolicy '{}'{}; use OnFailure, Never, ExitCode or Always", v,
                        did_you_mean(v, {"OnFailure", "Never", "ExitCode", "Always"})));
      }
    }
    const YamlNode template_node = rs.req("template");
    rs.finish();
    if (replicas == 0) continue;

    JobSpec job;
    job.name = fmt::format("{}-{}", meta.name, type);
    job.parallelism = static_cast<std::int32_t>(replicas);
    job.completions = job.parallelism;
    MapReader tmpl = template_node.map();
    std::optional<ObjectMeta> tmeta;
    if (auto tm = tmpl.opt("metadata")) {
      tmeta = parse_object_meta(*tm, b, true, pod_annotations(), /*name_required=*/false);
    }
    PodSpec& p = job.pod_template;
    p.name = job.name;
    p.namespace_ = meta.namespace_;
    if (tmeta) p.labels = tmeta->labels;
    inherit_kueue_labels(meta.labels, p.labels, b);
    p.labels.set(b.sym("training.kubeflow.org/job-name"), b.sym(meta.name));
    p.labels.set(b.sym("training.kubeflow.org/replica-type"), b.sym(type));
    p.labels.set(b.sym("training.kubeflow.org/operator-name"), b.sym("pytorchjob-controller"));
    if (type == "master") p.labels.set(b.sym("training.kubeflow.org/job-role"), b.sym("master"));
    parse_pod_spec(tmpl.req("spec"), ctx, p, PodOwner::kOperator);
    tmpl.finish();
    p.restart_policy = restart;
    SimAnnotations a = base;
    if (tmeta) a.add(*tmeta, "replica template");
    if (auto g = a.get(kGang)) g->fail("put capsim.io/gang on the PyTorchJob, not on a replica");
    std::vector<const ObjectMeta*> metas = {&meta};
    if (tmeta) metas.push_back(&*tmeta);
    job.queue = queue_of(metas, a, b.world().strings, meta.namespace_);
    const DurationSource from{ctx,
                              {"PyTorchJob", meta.namespace_, meta.name, &meta.labels,
                               &b.world().strings, job.queue, "", meta.generate_name},
                              std::nullopt};
    apply_sim_annotations(a, p, meta_node, fmt::format("PyTorchJob '{}'", meta.name), from);
    job.arrival = p.arrival;
    p.arrival = 0;
    p.queue = job.queue;
    p.max_restarts = backoff;
    p.requeue_on_preemption = true;  // the operator recreates a preempted replica
    total_pods += replicas;
    jobs.push_back(std::move(job));
  }
  if (jobs.size() == 2 && jobs[0].arrival != jobs[1].arrival) {
    replicas_node.fail(
        "the Master and Worker replicas have different capsim.io/arrival values; "
        "set it on the PyTorchJob");
  }
  const auto pods = static_cast<std::int32_t>(total_pods);
  const GangId whole = add_object_gang(gang, pods, meta.name, b);
  const std::int32_t group = add_workload_group(b, meta.name, "PyTorchJob", pods, meta_node);
  for (JobSpec& job : jobs) {
    job.pod_template.workload_group = group;
    if (whole != kNoGang) job.pod_template.gang = whole;
  }
  b.note_controller(controller_key("PyTorchJob", meta.namespace_, meta.name));
  const InputLocation where = located(doc.node());
  add_unless_owner_read(ctx, meta, "PyTorchJob", where,
                        [&b, jobs = std::move(jobs), where]() mutable {
                          for (JobSpec& job : jobs)
                            b.add_job(std::move(job), where);
                        });
}

// leaderworkerset.x-k8s.io/v1 LeaderWorkerSet: spec.replicas groups of leaderWorkerTemplate.size
// pods, a leader (leaderTemplate, else workerTemplate) named <name>-<group> and workers
// <name>-<group>-<index> for index 1..size-1, with the leaderworkerset.sigs.k8s.io labels the
// controller sets; long-running unless an annotation or a durations rule times them. Kueue admits
// each group as one Workload (Kueue docs: "Run LeaderWorkerSet"). capsim.io/gang on the object
// makes each group a gang (placed all-or-nothing, and stopped together, which is also what the
// default restartPolicy RecreateGroupOnPodRestart does to a group whose pod fails).
void load_leader_worker_set(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const char* kind = "LeaderWorkerSet";
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, pod_annotations());
  doc.ignore("status");
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  const std::int64_t groups = spec.int_or("replicas", 1, 0, 100000);
  if (auto sp = spec.opt("startupPolicy")) {
    const std::string v = enum_value_of(*sp, "startupPolicy", {"LeaderCreated", "LeaderReady"});
    if (v == "LeaderReady") {
      ctx.warn(*sp,
               "startupPolicy LeaderReady is not modelled: capsim creates a group's leader "
               "and workers together");
    }
  }
  // How an update rolls out and how the group's pods find each other: no placement.
  ignore_all(spec, {"rolloutStrategy", "networkConfig"});
  const YamlNode lwt_node = spec.req("leaderWorkerTemplate");
  spec.finish();
  MapReader lwt = lwt_node.map();
  const std::int64_t size = lwt.int_or("size", 1, 1, 10000);
  if (auto rp = lwt.opt("restartPolicy")) {
    // "Default" is the older name of None.
    (void)enum_value_of(*rp, "restartPolicy", {"RecreateGroupOnPodRestart", "None"}, {"Default"});
  }
  if (auto sg = lwt.opt("subGroupPolicy")) {
    ctx.warn(*sg, "subGroupPolicy is not modelled: capsim places a group's pods without it");
  }
  const std::optional<YamlNode> leader_node = lwt.opt("leaderTemplate");
  const YamlNode worker_node = lwt.req("workerTemplate");
  lwt.finish();
  warn_annotation(meta, "leaderworkerset.sigs.k8s.io/exclusive-topology", ctx,
                  "exclusive placement per topology domain is not modelled: capsim places the "
                  "groups without it");
  std::optional<YamlNode> gang;
  TemplatePod worker = read_pod_template(worker_node, meta, meta_node, kind, ctx, &gang);
  std::optional<TemplatePod> leader;
  if (leader_node) {
    std::optional<YamlNode> leader_gang;
    leader = read_pod_template(*leader_node, meta, meta_node, kind, ctx, &leader_gang);
    if (!gang) gang = leader_gang;
  }
  if (groups == 0) {
    ctx.warn(spec_node, fmt::format("LeaderWorkerSet '{}' has 0 replicas: no pods", meta.name));
  }
  std::vector<PodSpec> pods;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::string group_name = fmt::format("{}-{}", meta.name, g);
    const auto group_size = static_cast<std::int32_t>(size);
    const GangId group_gang = add_object_gang(gang, group_size, group_name, b);
    const std::int32_t group = add_workload_group(b, group_name, kind, group_size, meta_node);
    for (std::int64_t w = 0; w < size; ++w) {
      PodSpec p = (w == 0 && leader) ? leader->pod : worker.pod;
      p.name = w == 0 ? group_name : fmt::format("{}-{}", group_name, w);
      p.labels.set(b.sym("leaderworkerset.sigs.k8s.io/name"), b.sym(meta.name));
      p.labels.set(b.sym("leaderworkerset.sigs.k8s.io/group-index"), b.sym(std::to_string(g)));
      p.labels.set(b.sym("leaderworkerset.sigs.k8s.io/worker-index"), b.sym(std::to_string(w)));
      p.workload_group = group;
      p.gang = group_gang;
      pods.push_back(std::move(p));
    }
  }
  b.note_controller(controller_key(kind, meta.namespace_, meta.name));
  const InputLocation where = located(doc.node());
  add_unless_owner_read(ctx, meta, kind, where, [&b, pods = std::move(pods), where]() mutable {
    for (PodSpec& p : pods)
      b.add_pod(std::move(p), where);
  });
}

// --- The kind table ----------------------------------------------------------------------------

const ManifestKinds& kind_table(const ManifestOptions& opt) {
  return opt.kinds != nullptr ? *opt.kinds : core_manifest_kinds();
}

std::pair<std::string, std::string> split_api_version(const std::string& api) {
  const auto slash = api.find('/');
  if (slash == std::string::npos) return {"", api};
  return {api.substr(0, slash), api.substr(slash + 1)};
}

std::string api_version_of(const ManifestKind& k, const std::string& version) {
  return k.group.empty() ? version : k.group + "/" + version;
}

const ManifestKind* find_kind(const ManifestOptions& opt, const std::string& group,
                              const std::string& kind) {
  for (const auto& k : opt.extra_kinds) {
    if (k.group == group && k.kind == kind) return &k;
  }
  for (const auto& k : kind_table(opt)) {
    if (k.group == group && k.kind == kind) return &k;
  }
  return nullptr;
}

std::vector<const ManifestKind*> all_kinds(const ManifestOptions& opt) {
  std::vector<const ManifestKind*> out;
  for (const auto& k : opt.extra_kinds)
    out.push_back(&k);
  for (const auto& k : kind_table(opt)) {
    if (find_kind(opt, k.group, k.kind) == &k) out.push_back(&k);
  }
  return out;
}

struct ListDefaults {
  std::string api_version;
  std::string kind;
};

// What one load_manifest_docs call remembers across its documents: the note already given for
// each skipped (file, group, kind), and how many documents it covers.
struct SkipNotes {
  struct Note {
    std::size_t warning = 0;  // index into ManifestOptions::warnings
    int count = 0;
  };
  std::map<std::string, Note> by_kind;

  // Rewrites each note that covers more than one document with the count.
  void finish(const ManifestOptions& opt) const {
    if (opt.warnings == nullptr) return;
    for (const auto& [key, n] : by_kind) {
      if (n.count > 1) {
        (*opt.warnings)[n.warning] +=
            fmt::format(" ({} documents of this kind in the file)", n.count);
      }
    }
  }
};

void load_document_at(const YamlNode& doc_node, WorldBuilder& b, const ManifestOptions& opt,
                      const std::optional<ListDefaults>& defaults, SkipNotes& notes);

// Loads one document; an error reported at the document root gets the root's line (see
// located()).
void load_document(const YamlNode& doc_node, WorldBuilder& b, const ManifestOptions& opt,
                   const std::optional<ListDefaults>& defaults, SkipNotes& notes) {
  try {
    load_document_at(doc_node, b, opt, defaults, notes);
  } catch (const InputError& e) {
    const InputLocation& w = e.where();
    if (e.kind() != InputErrorKind::kInvalid || w.line != 0 || !w.field.empty() ||
        !doc_node.path().empty() || doc_node.line() == 0) {
      throw;
    }
    throw InputError(e.kind(), located(doc_node), e.message());
  }
}

void load_document_at(const YamlNode& doc_node, WorldBuilder& b, const ManifestOptions& opt,
                      const std::optional<ListDefaults>& defaults, SkipNotes& notes) {
  MapReader doc = doc_node.map();
  const std::optional<YamlNode> api_node = doc.opt("apiVersion");
  const std::optional<YamlNode> kind_node = doc.opt("kind");
  if (!defaults && !api_node) doc_node.fail("missing required field 'apiVersion'");
  if (!defaults && !kind_node) doc_node.fail("missing required field 'kind'");
  const std::string api = api_node ? api_node->str() : defaults->api_version;
  const std::string kind = kind_node ? kind_node->str() : defaults->kind;
  const YamlNode& kind_at = kind_node ? *kind_node : doc_node;
  const YamlNode& api_at = api_node ? *api_node : doc_node;
  const auto [group, version] = split_api_version(api);

  // 1. Lists: `kind: List` (items carry their own apiVersion and kind) and `<Kind>List` (items
  //    are of that kind).
  const bool typed_list = kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0 &&
                          find_kind(opt, group, kind.substr(0, kind.size() - 4)) != nullptr;
  if ((kind == "List" && group.empty()) || typed_list) {
    doc.ignore("metadata");
    const YamlNode items = doc.req("items");
    doc.finish();
    std::optional<ListDefaults> item_defaults;
    if (typed_list) item_defaults = ListDefaults{api, kind.substr(0, kind.size() - 4)};
    for (const YamlNode& item : items.seq())
      load_document(item, b, opt, item_defaults, notes);
    return;
  }

  // 2. Look the kind up.
  const ManifestKind* k = find_kind(opt, group, kind);
  if (k == nullptr) {
    // 2a. Kinds capsim knows it does not model: skipped with one note per kind and file, or
    //     refused with what to write instead.
    if (const UnmodelledKind* u = unmodelled_kind(group, kind)) {
      if (u->action == KindAction::kRefuse) {
        kind_at.fail(fmt::format("{} {} {}{}{}; capsim cannot simulate a file that holds it", api,
                                 kind, u->why, u->instead.empty() ? "" : "; ", u->instead));
      }
      for (const auto& [key, value] : doc_node.entries())
        doc.ignore(key);
      const std::string key = fmt::format("{}\n{}\n{}", kind_at.file(), group, kind);
      SkipNotes::Note& n = notes.by_kind[key];
      if (n.count++ == 0 && opt.warnings != nullptr) {
        n.warning = opt.warnings->size();
        ManifestContext ctx{b, opt, api, kind};
        ctx.warn(kind_at, fmt::format("{} {} {}: skipped", api, kind, u->why));
      }
      return;
    }
    std::vector<std::string> names;
    std::string other_group;
    // A kind of the same name in another group is only a likely mix-up when this group is one
    // capsim reads or a Kubernetes one; a third party's kind of the same name (e.g. a Volcano
    // Job) is a different object, not a wrong apiVersion.
    const bool group_is_ours =
        group.empty() || group.find('.') == std::string::npos ||
        (group.size() > 7 && group.compare(group.size() - 7, 7, ".k8s.io") == 0) ||
        std::any_of(kind_table(opt).begin(), kind_table(opt).end(),
                    [&g = group](const ManifestKind& mk) { return mk.group == g; });
    for (const ManifestKind* known : all_kinds(opt)) {
      names.push_back(known->kind);
      if (known->kind == kind && group_is_ours) {
        other_group = api_version_of(*known, known->versions.front());
      }
    }
    if (!other_group.empty()) {
      api_at.fail(
          fmt::format("kind {} is served by apiVersion {}, not {}", kind, other_group, api));
    }
    const std::string message =
        fmt::format("unknown kind '{}' (apiVersion {}){}; capsim reads {}", kind, api,
                    did_you_mean(kind, names), fmt::join(supported_manifest_kinds(opt), ", "));
    if (opt.skip_unknown_kinds) {
      ManifestContext ctx{b, opt, api, kind};
      ctx.warn(kind_at, message + "; the document is skipped");
      return;
    }
    kind_at.fail(message);
  }
  if (std::find(k->versions.begin(), k->versions.end(), version) == k->versions.end()) {
    std::vector<std::string> served;
    for (const auto& v : k->versions)
      served.push_back(api_version_of(*k, v));
    api_at.fail(fmt::format("apiVersion {} is not supported for {}; use {}", api, kind,
                            fmt::join(served, " or ")));
  }

  // 3. Run its handler; every key it did not read is an unknown field.
  ManifestContext ctx{b, opt, api, kind};
  k->handler(doc, ctx);
  doc.finish();
}

}  // namespace

void ManifestContext::warn(const YamlNode& at, const std::string& message) const {
  if (options.warnings == nullptr) return;
  options.warnings->push_back(at.where().to_string() + ": " + message);
}

std::optional<YamlNode> ObjectMeta::annotation(std::string_view key) const {
  for (const auto& [k, v] : annotations) {
    if (k == key) return v;
  }
  return std::nullopt;
}

ObjectMeta parse_object_meta(const YamlNode& metadata, WorldBuilder& b, bool namespaced,
                             const std::vector<std::string>& capsim_annotations,
                             bool name_required) {
  MapReader r = metadata.map();
  ObjectMeta m;
  m.node = metadata;
  if (name_required) {
    // metadata.generateName: the API server appends a random suffix; capsim a deterministic
    // one (WorldBuilder::generate_name). A name, when given, wins, as upstream.
    const std::optional<YamlNode> generate = r.opt("generateName");
    if (!r.has("name") && generate) {
      const std::string prefix = generate->str();
      if (prefix.empty()) generate->fail("metadata.generateName must not be empty");
      m.name = b.generate_name(prefix);
      m.generate_name = prefix;
      if (auto p = object_name_problem(m.name); !p.empty()) {
        generate->fail(
            fmt::format("metadata.generateName '{}' makes names like '{}', which the "
                        "API server refuses: {}",
                        prefix, m.name, p));
      }
    } else {
      const YamlNode n = r.req("name");
      m.name = n.str();
      if (m.name.empty()) n.fail("metadata.name must not be empty");
      if (auto p = object_name_problem(m.name); !p.empty()) {
        n.fail(fmt::format("metadata.name '{}' is one the API server refuses: {}", m.name, p));
      }
    }
  } else {
    m.name = r.str_or("name", "");
  }
  if (namespaced) {
    if (auto ns = r.opt("namespace")) {
      m.namespace_ = ns->str();
      if (auto p = namespace_name_problem(m.namespace_); !p.empty()) {
        ns->fail(fmt::format("metadata.namespace '{}': {}", m.namespace_, p));
      }
    } else {
      m.namespace_ = "default";
    }
  } else {
    r.ignore("namespace");  // cluster-scoped: the API server ignores it
  }
  if (auto l = r.opt("labels")) m.labels = parse_labels(*l, b);
  if (auto a = r.opt("annotations")) {
    for (auto& [key, value] : a->entries()) {
      if (auto p = label_key_problem(key); !p.empty()) {
        value.fail(fmt::format("invalid annotation key '{}': {}", key, p));
      }
      if (!value.is_null()) (void)value.str();
      if (key.rfind("capsim.io/", 0) == 0 &&
          std::find(capsim_annotations.begin(), capsim_annotations.end(), key) ==
              capsim_annotations.end()) {
        const std::string known = capsim_annotations.empty()
                                      ? std::string("none")
                                      : fmt::format("{}", fmt::join(capsim_annotations, ", "));
        value.fail(fmt::format("unknown capsim annotation '{}'{}; on this kind capsim reads: {}",
                               key, did_you_mean(key, capsim_annotations), known));
      }
      m.annotations.emplace_back(key, value);
    }
  }
  if (auto owners = r.opt("ownerReferences")) {
    for (const YamlNode& o : owners->seq()) {
      MapReader om = o.map();
      const std::string kind = om.req("kind").str();
      const std::string name = om.req("name").str();
      // The API server requires apiVersion and uid too; a hand-written reference may omit them,
      // and capsim identifies an owner by kind, namespace and name.
      if (auto av = om.opt("apiVersion")) (void)av->str();
      om.ignore("uid");
      (void)om.bool_or("blockOwnerDeletion", false);
      if (om.bool_or("controller", false)) {
        m.owner_kind = kind;
        m.owner_name = name;
      }
      om.finish();
    }
  }
  ignore_all(r, kIgnoredMetadata);
  r.finish();
  return m;
}

std::optional<std::string> label_value(const LabelSet& labels, std::string_view key,
                                       const StringPool& pool) {
  const Sym k = pool.find(key);
  if (k == kNoSym) return std::nullopt;
  const Sym v = labels.get(k);
  if (v == kNoSym) return std::nullopt;
  return pool.str(v);
}

const ManifestKinds& core_manifest_kinds() {
  static const ManifestKinds kinds = {
      {"", "Node", {"v1"}, load_node},
      {"", "Pod", {"v1"}, load_pod},
      {"", "Namespace", {"v1"}, load_namespace},
      {"batch", "Job", {"v1"}, load_job},
      {"batch", "CronJob", {"v1"}, load_cron_job},
      {"apps",
       "Deployment",
       {"v1"},
       [](MapReader& d, ManifestContext& c) { load_replicated(d, c, Controller::kDeployment); }},
      {"apps",
       "ReplicaSet",
       {"v1"},
       [](MapReader& d, ManifestContext& c) { load_replicated(d, c, Controller::kReplicaSet); }},
      {"apps",
       "StatefulSet",
       {"v1"},
       [](MapReader& d, ManifestContext& c) { load_replicated(d, c, Controller::kStatefulSet); }},
      {"apps", "DaemonSet", {"v1"}, load_daemon_set},
      {"jobset.x-k8s.io", "JobSet", {"v1alpha2"}, load_job_set},
      {"kubeflow.org", "PyTorchJob", {"v1"}, load_pytorch_job},
      {"leaderworkerset.x-k8s.io", "LeaderWorkerSet", {"v1"}, load_leader_worker_set},
      {"trainer.kubeflow.org", "TrainJob", {"v1alpha1"}, load_train_job},
      {"trainer.kubeflow.org",
       "ClusterTrainingRuntime",
       {"v1alpha1"},
       [](MapReader& d, ManifestContext& c) { load_training_runtime(d, c, true); }},
      {"trainer.kubeflow.org",
       "TrainingRuntime",
       {"v1alpha1"},
       [](MapReader& d, ManifestContext& c) { load_training_runtime(d, c, false); }},
      {"scheduling.k8s.io", "PriorityClass", {"v1"}, load_priority_class},
      {"policy", "PodDisruptionBudget", {"v1"}, load_pod_disruption_budget},
  };
  return kinds;
}

std::vector<std::string> supported_manifest_kinds(const ManifestOptions& opt) {
  std::vector<std::string> out;
  for (const ManifestKind* k : all_kinds(opt)) {
    out.push_back(fmt::format("{} {}", api_version_of(*k, k->versions.front()), k->kind));
  }
  out.emplace_back("v1 List");
  return out;
}

void load_manifest_docs(const std::vector<YamlNode>& docs, WorldBuilder& b,
                        const ManifestOptions& opt) {
  SkipNotes notes;
  for (const YamlNode& d : docs)
    load_document(d, b, opt, std::nullopt, notes);
  notes.finish(opt);
}

void load_manifest_file(FileSource& files, const std::string& path, WorldBuilder& b,
                        const ManifestOptions& opt) {
  // One document at a time: an imported cluster's pods.yaml holds 100,000 of them.
  SkipNotes notes;
  files.for_each_yaml_doc(
      path, [&](const YamlNode& d) { load_document(d, b, opt, std::nullopt, notes); });
  notes.finish(opt);
}

std::string replica_template_key(std::string_view kind, std::string_view ns,
                                 std::string_view name) {
  return fmt::format("replicas:{}/{}/{}", kind, ns, name);
}

PodSpec make_replica(const ReplicaTemplate& t, std::int64_t index, WorldBuilder& b) {
  PodSpec p = t.pod;
  if (t.kind == "StatefulSet") {
    const std::int64_t ordinal = t.first_ordinal + index;
    p.name = fmt::format("{}-{}", t.name, ordinal);
    p.labels.set(b.sym("statefulset.kubernetes.io/pod-name"), b.sym(p.name));
    p.labels.set(b.sym("apps.kubernetes.io/pod-index"), b.sym(std::to_string(ordinal)));
  } else {
    p.name = b.generate_name(t.name_prefix);
  }
  return p;
}

}  // namespace capsim
