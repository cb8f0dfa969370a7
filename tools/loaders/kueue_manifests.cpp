#include "tools/loaders/kueue_manifests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "sim/quantity.hpp"
#include "tools/loaders/k8s_fields.hpp"

namespace capsim {

namespace {

using namespace capsim::queueing;

constexpr const char* kGroup = "kueue.x-k8s.io";
constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
constexpr const char* kPodGroupLabel = "kueue.x-k8s.io/pod-group-name";

[[noreturn]] void fail_at(const InputLocation& where, const std::string& msg) {
  throw InputError(InputErrorKind::kInvalid, where, msg);
}

// The location a pod's "file:line" source string stands for.
InputLocation location_of(const std::string& source) {
  InputLocation loc;
  const auto colon = source.rfind(':');
  if (colon != std::string::npos && colon + 1 < source.size() &&
      source.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    loc.file = source.substr(0, colon);
    loc.line = std::stoi(source.substr(colon + 1));
  } else {
    loc.file = source;
  }
  return loc;
}

template <typename E>
E enum_value(const YamlNode& n, const std::vector<std::pair<std::string, E>>& values) {
  const std::string s = n.str();
  std::vector<std::string> names;
  for (const auto& [name, v] : values) {
    if (name == s) return v;
    names.push_back(name);
  }
  n.fail(fmt::format("unknown value '{}'{}; use {}", s, did_you_mean(s, names),
                     fmt::join(names, ", ")));
}

void warn(std::vector<std::string>* warnings, const YamlNode& at, const std::string& message) {
  if (warnings != nullptr) warnings->push_back(at.where().to_string() + ": " + message);
}

// --- Shared pieces ------------------------------------------------------------------------------

// Kueue validates a quota resource name (covered resources, transformation inputs and outputs,
// deviceClassMappings) as a Kubernetes qualified name: an optional DNS-subdomain prefix and '/',
// then a name of at most 63 characters. `at` is where a bad one is reported.
void check_resource_name(const std::string& name, const YamlNode& at) {
  if (auto p = label_key_problem(name); !p.empty()) {
    at.fail(
        fmt::format("'{}' is not a valid resource name (a qualified name, like cpu, pods or "
                    "nvidia.com/gpu): {}",
                    name, p));
  }
}

// resourceGroups of a ClusterQueue or Cohort. Limits need a parent (`has_parent`); `what` names
// the object kind for messages.
std::vector<ResourceGroupSpec> parse_resource_groups(const YamlNode& list, WorldBuilder& b,
                                                     bool has_parent, const char* what) {
  std::vector<ResourceGroupSpec> groups;
  std::map<std::string, InputLocation> flavor_seen, resource_seen;
  const std::vector<YamlNode> items = list.seq();
  if (items.size() > 16) list.fail("at most 16 resourceGroups are allowed");
  for (const YamlNode& g : items) {
    MapReader gm = g.map();
    ResourceGroupSpec group;
    std::vector<std::string> covered_names;
    const YamlNode covered = gm.req("coveredResources");
    const std::vector<YamlNode> covered_items = covered.seq();
    if (covered_items.empty() || covered_items.size() > 64) {
      covered.fail("coveredResources needs between 1 and 64 resources");
    }
    for (const YamlNode& r : covered_items) {
      const std::string name = r.str();
      // `pods`, `count` or example.com/foo are all quota resources; only the syntax is checked.
      check_resource_name(name, r);
      if (auto it = resource_seen.find(name); it != resource_seen.end()) {
        r.fail(
            fmt::format("resource {} is covered twice (first at {}); a resource may be in one "
                        "resource group only",
                        name, short_location(it->second)));
      }
      resource_seen.emplace(name, r.where());
      covered_names.push_back(name);
      group.covered.push_back(b.resource(name, r.where()));
    }
    const YamlNode flavors = gm.req("flavors");
    const std::vector<YamlNode> flavor_items = flavors.seq();
    if (flavor_items.empty() || flavor_items.size() > 64) {
      flavors.fail("flavors needs between 1 and 64 entries");
    }
    for (const YamlNode& f : flavor_items) {
      MapReader fm = f.map();
      FlavorQuotasSpec fq;
      const YamlNode name_node = fm.req("name");
      fq.flavor = name_node.str();
      fq.where = name_node.where();
      if (auto it = flavor_seen.find(fq.flavor); it != flavor_seen.end()) {
        name_node.fail(
            fmt::format("flavor {} is listed twice (first at {}); a flavor may be in "
                        "one resource group only",
                        fq.flavor, short_location(it->second)));
      }
      flavor_seen.emplace(fq.flavor, fq.where);
      const YamlNode resources = fm.req("resources");
      const std::vector<YamlNode> res_items = resources.seq();
      if (res_items.size() != covered_names.size()) {
        resources.fail(fmt::format(
            "flavor {} lists {} resource(s) but coveredResources has {}; each flavor must list "
            "the covered resources, in the same order",
            fq.flavor, res_items.size(), covered_names.size()));
      }
      for (std::size_t i = 0; i < res_items.size(); ++i) {
        MapReader rm = res_items[i].map();
        const YamlNode rn = rm.req("name");
        const std::string rname = rn.str();
        if (rname != covered_names[i]) {
          rn.fail(
              fmt::format("resource {} is at position {} of flavor {}, but coveredResources "
                          "has {} there (same resources, same order)",
                          rname, i + 1, fq.flavor, covered_names[i]));
        }
        auto amount = [&](const YamlNode& q) {
          auto v = resource_quantity(rname, q.str());
          if (!v) q.fail(v.error());
          return *v;
        };
        ResourceQuotaSpec quota;
        quota.resource = group.covered[i];
        quota.nominal = amount(rm.req("nominalQuota"));
        if (auto bl = rm.opt("borrowingLimit")) {
          if (!has_parent) {
            bl->fail(fmt::format("borrowingLimit is only allowed when the {} has a {}", what,
                                 std::string_view(what) == "ClusterQueue" ? "cohort" : "parent"));
          }
          quota.borrowing_limit = amount(*bl);
        }
        if (auto ll = rm.opt("lendingLimit")) {
          if (!has_parent) {
            ll->fail(fmt::format("lendingLimit is only allowed when the {} has a {}", what,
                                 std::string_view(what) == "ClusterQueue" ? "cohort" : "parent"));
          }
          quota.lending_limit = amount(*ll);
          if (quota.lending_limit > quota.nominal) {
            ll->fail(fmt::format("lendingLimit ({}) must not exceed nominalQuota ({})", ll->str(),
                                 rm.req("nominalQuota").str()));
          }
        }
        rm.finish();
        fq.resources.push_back(quota);
      }
      fm.finish();
      group.flavors.push_back(std::move(fq));
    }
    gm.finish();
    groups.push_back(std::move(group));
  }
  return groups;
}

double parse_weight(const YamlNode& fair_sharing) {
  MapReader m = fair_sharing.map();
  double w = 1.0;
  if (auto v = m.opt("weight")) {
    w = static_cast<double>(v->quantity(3)) / 1000.0;
    if (w != 0 && w < 1e-9) v->fail("the weight must be 0 or larger than 1e-9");
  }
  m.finish();
  return w;
}

StopPolicy parse_stop_policy(const YamlNode& n) {
  return enum_value<StopPolicy>(n, {{"None", StopPolicy::kNone},
                                    {"Hold", StopPolicy::kHold},
                                    {"HoldAndDrain", StopPolicy::kHoldAndDrain}});
}

LabelSelectorSpec parse_label_selector(const YamlNode& n) {
  LabelSelectorSpec sel;
  MapReader m = n.map();
  if (auto ml = m.opt("matchLabels")) {
    for (const auto& [k, v] : ml->entries()) {
      if (auto p = label_key_problem(k); !p.empty()) v.fail(fmt::format("label key: {}", p));
      const std::string value = v.is_null() ? "" : v.str();
      if (auto p = label_value_problem(value); !p.empty()) v.fail(p);
      sel.match_labels.emplace_back(k, value);
    }
  }
  if (auto me = m.opt("matchExpressions")) {
    using Op = LabelSelectorSpec::Requirement::Op;
    for (const YamlNode& e : me->seq()) {
      MapReader em = e.map();
      LabelSelectorSpec::Requirement req;
      req.key = em.req("key").str();
      const YamlNode op = em.req("operator");
      req.op = enum_value<Op>(op, {{"In", Op::kIn},
                                   {"NotIn", Op::kNotIn},
                                   {"Exists", Op::kExists},
                                   {"DoesNotExist", Op::kDoesNotExist}});
      if (auto vs = em.opt("values")) {
        for (const YamlNode& v : vs->seq())
          req.values.push_back(v.str());
      }
      const bool needs_values = req.op == Op::kIn || req.op == Op::kNotIn;
      if (needs_values && req.values.empty()) op.fail("In and NotIn need at least one value");
      if (!needs_values && !req.values.empty()) {
        op.fail("Exists and DoesNotExist take no values");
      }
      em.finish();
      sel.match_expressions.push_back(std::move(req));
    }
  }
  m.finish();
  return sel;
}

QueueConfig& queues(WorldBuilder& b) {
  return b.world().queues;
}

template <typename T>
void check_unique(const std::vector<T>& existing, const std::string& name, const char* kind,
                  const YamlNode& at) {
  for (const T& e : existing) {
    if (e.name == name) {
      at.fail(fmt::format("duplicate {} '{}' (first defined at {})", kind, name,
                          short_location(e.where)));
    }
  }
}

// --- Handlers -----------------------------------------------------------------------------------

void load_resource_flavor(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {});
  ResourceFlavorSpec f;
  f.name = meta.name;
  f.where = meta_node.where();
  check_unique(queues(b).flavors, f.name, "ResourceFlavor", meta_node);
  if (auto spec_node = doc.opt("spec")) {
    MapReader spec = spec_node->map();
    if (auto v = spec.opt("nodeLabels")) f.node_labels = parse_labels(*v, b);
    if (auto v = spec.opt("nodeTaints")) {
      f.node_taints = parse_taints(*v, b);
      if (f.node_taints.size() > 8) v->fail("at most 8 nodeTaints are allowed");
    }
    if (auto v = spec.opt("tolerations")) {
      f.tolerations = parse_tolerations(*v, b);
      if (f.tolerations.size() > 8) v->fail("at most 8 tolerations are allowed");
    }
    if (auto v = spec.opt("topologyName")) {
      // Topology-aware scheduling (docs/queues.md): the Topology is resolved once all is read.
      f.topology_name = v->str();
      f.topology_where = v->where();
      if (f.topology_name.empty()) v->fail("topologyName must not be empty");
    }
    spec.finish();
  }
  doc.ignore("status");
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).flavors.push_back(std::move(f));
}

// A Topology (kueue.x-k8s.io/v1beta1, v1beta2): spec.levels[].nodeLabel, top to bottom.
void load_topology(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {});
  TopologySpec t;
  t.name = meta.name;
  t.where = meta_node.where();
  check_unique(queues(b).topologies, t.name, "Topology", meta_node);
  MapReader spec = doc.req("spec").map();
  const YamlNode levels = spec.req("levels");
  for (const YamlNode& l : levels.seq()) {
    MapReader lm = l.map();
    const YamlNode label = lm.req("nodeLabel");
    std::string key = label.str();
    if (key.empty()) label.fail("nodeLabel must not be empty");
    if (std::find(t.levels.begin(), t.levels.end(), key) != t.levels.end()) {
      label.fail(fmt::format("nodeLabel {} is already a level of Topology {}", key, t.name));
    }
    if (!t.levels.empty() && t.levels.back() == "kubernetes.io/hostname") {
      label.fail("kubernetes.io/hostname can only be the lowest level of a Topology");
    }
    t.levels.push_back(std::move(key));
    lm.finish();
  }
  if (t.levels.empty()) levels.fail("a Topology needs at least one level");
  if (t.levels.size() > 16) levels.fail("a Topology has at most 16 levels");
  spec.finish();
  doc.ignore("status");
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).topologies.push_back(std::move(t));
}

void load_preemption(const YamlNode& n, ClusterQueueSpec& cq) {
  MapReader m = n.map();
  const std::vector<std::pair<std::string, PreemptPolicy>> within = {
      {"Never", PreemptPolicy::kNever},
      {"LowerPriority", PreemptPolicy::kLowerPriority},
      {"LowerOrNewerEqualPriority", PreemptPolicy::kLowerOrNewerEqualPriority}};
  if (auto v = m.opt("withinClusterQueue")) cq.within_cluster_queue = enum_value(*v, within);
  std::optional<YamlNode> reclaim = m.opt("reclaimWithinCohort");
  if (reclaim) {
    cq.reclaim_within_cohort =
        enum_value<PreemptPolicy>(*reclaim, {{"Never", PreemptPolicy::kNever},
                                             {"LowerPriority", PreemptPolicy::kLowerPriority},
                                             {"Any", PreemptPolicy::kAny}});
  }
  if (auto bwc = m.opt("borrowWithinCohort")) {
    MapReader bm = bwc->map();
    if (auto p = bm.opt("policy")) {
      cq.borrow_within_cohort = enum_value<PreemptPolicy>(
          *p, {{"Never", PreemptPolicy::kNever}, {"LowerPriority", PreemptPolicy::kLowerPriority}});
      if (cq.borrow_within_cohort != PreemptPolicy::kNever &&
          cq.reclaim_within_cohort == PreemptPolicy::kNever) {
        p->fail(
            "borrowWithinCohort.policy needs reclaimWithinCohort other than Never (Kueue rejects "
            "reclaimWithinCohort=Never with borrowWithinCohort.policy!=Never)");
      }
    }
    if (auto t = bm.opt("maxPriorityThreshold")) {
      cq.borrow_max_priority_threshold = static_cast<std::int32_t>(t->integer(
          std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    }
    bm.finish();
  }
  m.finish();
}

void load_fungibility(const YamlNode& n, ClusterQueueSpec& cq, const std::string& version) {
  MapReader m = n.map();
  // v1beta1 spelled MayStopSearch as Borrow (whenCanBorrow) and Preempt (whenCanPreempt).
  const bool v1 = version == "v1beta1";
  std::vector<std::pair<std::string, FungibilityPolicy>> borrow = {
      {"MayStopSearch", FungibilityPolicy::kMayStopSearch},
      {"TryNextFlavor", FungibilityPolicy::kTryNextFlavor}};
  std::vector<std::pair<std::string, FungibilityPolicy>> preempt = borrow;
  if (v1) {
    borrow.emplace_back("Borrow", FungibilityPolicy::kMayStopSearch);
    preempt.emplace_back("Preempt", FungibilityPolicy::kMayStopSearch);
  }
  if (auto v = m.opt("whenCanBorrow")) cq.when_can_borrow = enum_value(*v, borrow);
  if (auto v = m.opt("whenCanPreempt")) cq.when_can_preempt = enum_value(*v, preempt);
  if (auto v = m.opt("preference")) {
    cq.preference = enum_value<FungibilityPreference>(
        *v, {{"BorrowingOverPreemption", FungibilityPreference::kBorrowingOverPreemption},
             {"PreemptionOverBorrowing", FungibilityPreference::kPreemptionOverBorrowing}});
    if (cq.when_can_borrow != FungibilityPolicy::kTryNextFlavor ||
        cq.when_can_preempt != FungibilityPolicy::kTryNextFlavor) {
      v->fail(
          "preference can only be set when both whenCanBorrow and whenCanPreempt are "
          "TryNextFlavor");
    }
  }
  m.finish();
}

// cohort (v1beta1) and cohortName (v1beta2) name the same thing; either is accepted.
std::optional<YamlNode> renamed_field(MapReader& m, const char* older, const char* newer) {
  std::optional<YamlNode> a = m.opt(older);
  std::optional<YamlNode> b = m.opt(newer);
  if (a && b && a->str() != b->str()) {
    b->fail(
        fmt::format("{} and {} name the same field (v1beta1 and v1beta2 spellings) but "
                    "differ ('{}' vs '{}'); keep one",
                    older, newer, a->str(), b->str()));
  }
  return b ? b : a;
}

void load_cluster_queue(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {});
  ClusterQueueSpec cq;
  cq.name = meta.name;
  cq.where = meta_node.where();
  check_unique(queues(b).cluster_queues, cq.name, "ClusterQueue", meta_node);
  const std::string version = ctx.api_version.substr(ctx.api_version.find('/') + 1);
  if (auto spec_node = doc.opt("spec")) {
    MapReader spec = spec_node->map();
    if (auto c = renamed_field(spec, "cohort", "cohortName")) {
      cq.cohort = c->str();
      cq.cohort_where = c->where();
    }
    if (auto v = spec.opt("queueingStrategy")) {
      cq.strategy =
          enum_value<QueueingStrategy>(*v, {{"BestEffortFIFO", QueueingStrategy::kBestEffortFifo},
                                            {"StrictFIFO", QueueingStrategy::kStrictFifo}});
    }
    if (auto v = spec.opt("namespaceSelector")) cq.namespace_selector = parse_label_selector(*v);
    if (auto v = spec.opt("resourceGroups")) {
      cq.resource_groups = parse_resource_groups(*v, b, !cq.cohort.empty(), "ClusterQueue");
    }
    if (auto v = spec.opt("preemption")) load_preemption(*v, cq);
    if (auto v = spec.opt("flavorFungibility")) load_fungibility(*v, cq, version);
    if (auto v = spec.opt("fairSharing")) cq.fair_weight = parse_weight(*v);
    if (auto v = spec.opt("stopPolicy")) cq.stop_policy = parse_stop_policy(*v);
    for (const char* key : {"admissionChecks", "admissionChecksStrategy"}) {
      if (auto v = spec.opt(key)) {
        ctx.warn(*v, "admission checks are not modelled: capsim treats them as passed");
      }
    }
    if (auto v = spec.opt("admissionScope")) {
      ctx.warn(*v, "admission fair sharing (admissionScope) is not modelled");
    }
    if (auto v = spec.opt("concurrentAdmissionPolicy")) {
      ctx.warn(*v, "concurrent admission (flavor migration) is not modelled");
    }
    spec.finish();
  }
  doc.ignore("status");
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).cluster_queues.push_back(std::move(cq));
}

void load_cohort(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {});
  CohortSpec c;
  c.name = meta.name;
  c.where = meta_node.where();
  check_unique(queues(b).cohorts, c.name, "Cohort", meta_node);
  if (auto spec_node = doc.opt("spec")) {
    MapReader spec = spec_node->map();
    if (auto p = renamed_field(spec, "parent", "parentName")) {
      c.parent = p->str();
      c.parent_where = p->where();
      if (c.parent == c.name) p->fail("a Cohort cannot be its own parent");
    }
    if (auto v = spec.opt("resourceGroups")) {
      c.resource_groups = parse_resource_groups(*v, b, !c.parent.empty(), "Cohort");
    }
    if (auto v = spec.opt("fairSharing")) c.fair_weight = parse_weight(*v);
    spec.finish();
  }
  doc.ignore("status");
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).cohorts.push_back(std::move(c));
}

void load_local_queue(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, true, {});
  LocalQueueSpec lq;
  lq.name = meta.name;
  lq.namespace_ = meta.namespace_;
  lq.where = meta_node.where();
  for (const LocalQueueSpec& e : queues(b).local_queues) {
    if (e.name == lq.name && e.namespace_ == lq.namespace_) {
      meta_node.fail(fmt::format("duplicate LocalQueue '{}/{}' (first defined at {})",
                                 lq.namespace_, lq.name, short_location(e.where)));
    }
  }
  const YamlNode spec_node = doc.req("spec");
  MapReader spec = spec_node.map();
  const YamlNode cq = spec.req("clusterQueue");
  lq.cluster_queue = cq.str();
  lq.cluster_queue_where = cq.where();
  if (auto v = spec.opt("stopPolicy")) lq.stop_policy = parse_stop_policy(*v);
  if (auto v = spec.opt("fairSharing")) {
    (void)parse_weight(*v);
    ctx.warn(*v, "LocalQueue fair sharing (admission fair sharing) is not modelled");
  }
  spec.finish();
  doc.ignore("status");
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).local_queues.push_back(std::move(lq));
}

void load_workload_priority_class(MapReader& doc, ManifestContext& ctx) {
  WorldBuilder& b = ctx.builder;
  const YamlNode meta_node = doc.req("metadata");
  const ObjectMeta meta = parse_object_meta(meta_node, b, false, {});
  WorkloadPriorityClassSpec pc;
  pc.name = meta.name;
  pc.where = meta_node.where();
  check_unique(queues(b).priority_classes, pc.name, "WorkloadPriorityClass", meta_node);
  pc.value = static_cast<std::int32_t>(doc.req("value").integer(
      std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
  if (auto d = doc.opt("description")) (void)d->str();
  require_kueue_checks(b, ctx.options.warnings);
  queues(b).priority_classes.push_back(std::move(pc));
}

// --- Cross-file checks (at WorldBuilder::finalize) ----------------------------------------------

std::optional<std::string> label_of(const World& w, const LabelSet& labels, const char* key) {
  return label_value(labels, key, w.strings);
}

void check_kueue(World& world, std::vector<std::string>* warnings) {
  QueueConfig& q = world.queues;
  auto note = [&](const InputLocation& at, const std::string& msg) {
    if (warnings != nullptr) warnings->push_back(at.to_string() + ": " + msg);
  };
  // 1. References: LocalQueue -> ClusterQueue -> ResourceFlavor; Cohort parents, no cycles.
  std::vector<std::string> cq_names, flavor_names, cohort_names;
  for (const auto& c : q.cluster_queues)
    cq_names.push_back(c.name);
  for (const auto& f : q.flavors)
    flavor_names.push_back(f.name);
  for (const auto& c : q.cohorts)
    cohort_names.push_back(c.name);
  for (const LocalQueueSpec& lq : q.local_queues) {
    if (std::find(cq_names.begin(), cq_names.end(), lq.cluster_queue) == cq_names.end()) {
      fail_at(lq.cluster_queue_where,
              fmt::format("LocalQueue {}/{} points at ClusterQueue '{}', which does not exist{}",
                          lq.namespace_, lq.name, lq.cluster_queue,
                          did_you_mean(lq.cluster_queue, cq_names)));
    }
  }
  for (ResourceFlavorSpec& f : q.flavors) {
    if (f.topology_name.empty()) continue;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < q.topologies.size(); ++i) {
      names.push_back(q.topologies[i].name);
      if (q.topologies[i].name == f.topology_name) f.topology = static_cast<std::int32_t>(i);
    }
    if (f.topology < 0) {
      fail_at(f.topology_where,
              fmt::format("ResourceFlavor {} names Topology '{}', which does not exist{}", f.name,
                          f.topology_name, did_you_mean(f.topology_name, names)));
    }
  }
  std::set<std::string> used_cqs;
  for (const LocalQueueSpec& lq : q.local_queues)
    used_cqs.insert(lq.cluster_queue);
  for (const ClusterQueueSpec& cq : q.cluster_queues) {
    for (const ResourceGroupSpec& g : cq.resource_groups) {
      for (const FlavorQuotasSpec& fq : g.flavors) {
        if (std::find(flavor_names.begin(), flavor_names.end(), fq.flavor) == flavor_names.end()) {
          fail_at(fq.where, fmt::format("ResourceFlavor '{}' does not exist{} (Kueue keeps the "
                                        "ClusterQueue {} inactive)",
                                        fq.flavor, did_you_mean(fq.flavor, flavor_names), cq.name));
        }
      }
    }
    if (!cq.namespace_selector && used_cqs.count(cq.name) != 0) {
      note(cq.where,
           fmt::format("ClusterQueue {} has no namespaceSelector, which admits no namespace: its "
                       "workloads will never be admitted (namespaceSelector: {{}} admits all)",
                       cq.name));
    }
    if (q.settings.fair_sharing && cq.borrow_within_cohort != PreemptPolicy::kNever) {
      note(cq.where, fmt::format("ClusterQueue {}: borrowWithinCohort works with classical "
                                 "preemption only; with fair sharing its threshold still limits "
                                 "who may be preempted while borrowing",
                                 cq.name));
    }
  }
  for (const CohortSpec& c : q.cohorts) {
    std::vector<std::string> path = {c.name};
    std::string at = c.parent;
    while (!at.empty()) {
      if (std::find(path.begin(), path.end(), at) != path.end()) {
        path.push_back(at);
        fail_at(c.parent_where,
                fmt::format("the Cohort parents form a cycle ({}); Kueue disables every member "
                            "of such a tree",
                            fmt::join(path, " -> ")));
      }
      path.push_back(at);
      std::string next;
      for (const CohortSpec& o : q.cohorts) {
        if (o.name == at) next = o.parent;
      }
      at = next;
    }
  }
  if (!q.active()) {
    if (!q.flavors.empty() || !q.cohorts.empty() || q.settings_given) {
      note(InputLocation{}, "Kueue objects or settings without any ClusterQueue have no effect");
    }
    return;
  }

  // 2. Which pods and Jobs Kueue manages: those whose queue names a LocalQueue of their namespace.
  auto find_lq = [&](const std::string& ns, const std::string& name) {
    for (const LocalQueueSpec& lq : q.local_queues) {
      if (lq.namespace_ == ns && lq.name == name) return true;
    }
    return false;
  };
  std::vector<std::string> wpc_names;
  for (const auto& pc : q.priority_classes)
    wpc_names.push_back(pc.name);
  std::set<std::string> unmanaged_queues;
  std::size_t unmanaged = 0;
  auto check_pod = [&](const PodSpec& p, bool managed) {
    const InputLocation at = location_of(p.source);
    if (auto label = label_of(world, p.labels, kQueueNameLabel); label && !managed) {
      fail_at(at, fmt::format("{} names LocalQueue '{}' (label {}), which does not exist in "
                              "namespace {}",
                              p.name, *label, kQueueNameLabel, p.namespace_));
    }
    if (auto wpc = label_of(world, p.labels, kPriorityClassLabel)) {
      if (std::find(wpc_names.begin(), wpc_names.end(), *wpc) == wpc_names.end()) {
        fail_at(at, fmt::format("{} names WorkloadPriorityClass '{}' (label {}), which does not "
                                "exist{}",
                                p.name, *wpc, kPriorityClassLabel, did_you_mean(*wpc, wpc_names)));
      }
    }
    if (!managed) {
      ++unmanaged;
      unmanaged_queues.insert(p.queue);
    }
  };
  // 2b. With resources.deviceClassMappings, Kueue charges the devices a managed pod's
  // ResourceClaimTemplates request; a request it cannot charge (firstAvailable, allocationMode
  // All, a DeviceClass no mapping names) leaves the workload inadmissible for good. capsim
  // refuses it here, where the pod is named, instead of leaving it pending for the whole run.
  auto check_claims = [&](const PodSpec& p, bool managed) {
    if (!managed || q.settings.device_class_mappings.empty()) return;
    for (const PodClaimRef& ref : p.claims) {
      if (ref.shared()) continue;  // ResourceClaims are not charged
      for (const dra::Claim& c : world.dra.claims) {
        if (!c.from_template || c.name != ref.template_name || c.namespace_ != p.namespace_)
          continue;
        for (const dra::Request& r : c.spec.requests) {
          std::string why;
          if (r.first_available) {
            why = "firstAvailable device selection is not supported";
          } else if (!r.subrequests.empty() && !r.subrequests.front().admin_access) {
            const dra::SubRequest& sub = r.subrequests.front();
            bool mapped = false;
            for (const auto& m : q.settings.device_class_mappings) {
              for (const std::string& dc : m.device_classes)
                mapped = mapped || dc == sub.device_class;
            }
            if (sub.mode == dra::AllocationMode::kAll) {
              why = "allocationMode All is not supported";
            } else if (!mapped) {
              why = fmt::format("DeviceClass {} is not mapped in deviceClassMappings",
                                sub.device_class);
            }
          }
          if (!why.empty()) {
            fail_at(location_of(p.source),
                    fmt::format("{} claims ResourceClaimTemplate {} whose request {}: {}; Kueue "
                                "leaves such a workload inadmissible",
                                p.name, c.name, r.name, why));
          }
        }
      }
    }
  };
  for (const PodSpec& p : world.pods)
    check_claims(p, find_lq(p.namespace_, p.queue));
  for (const JobSpec& j : world.jobs) {
    PodSpec probe = j.pod_template;
    probe.name = "job " + j.name;
    probe.source = j.source;
    check_claims(probe, find_lq(j.pod_template.namespace_, j.queue));
  }
  // 3. Pod groups become gangs; with gangJobs, so do managed Jobs of more than one pod.
  std::map<std::pair<std::string, std::string>, GangId> pod_groups;
  std::map<GangId, std::pair<std::int32_t, const PodSpec*>> group_totals;  // total, first giver
  std::map<GangId, const PodSpec*> without_total;  // a member without the total count
  for (PodSpec& p : world.pods) {
    const bool managed = find_lq(p.namespace_, p.queue);
    check_pod(p, managed);
    auto group = label_of(world, p.labels, kPodGroupLabel);
    if (!group) {
      if (p.pod_group_total > 0) {
        note(location_of(p.source),
             fmt::format("{} has kueue.x-k8s.io/pod-group-total-count but no label {}: ignored",
                         p.name, kPodGroupLabel));
      }
      continue;
    }
    if (p.gang != kNoGang) {
      fail_at(location_of(p.source), fmt::format("{} is in pod group {} and in gang {}; keep one",
                                                 p.name, *group, world.gangs[p.gang].name));
    }
    auto [it, fresh] = pod_groups.emplace(std::make_pair(p.namespace_, *group), GangId{0});
    if (fresh) {
      world.gangs.push_back(GangSpec{*group, 0, p.source});
      it->second = static_cast<GangId>(world.gangs.size() - 1);
    }
    p.gang = it->second;
    ++world.gangs[it->second].min_member;
    // kueue.x-k8s.io/pod-group-total-count: the same on every member that gives it.
    if (p.pod_group_total > 0) {
      auto [t, first] = group_totals.emplace(p.gang, std::make_pair(p.pod_group_total, &p));
      if (!first && t->second.first != p.pod_group_total) {
        fail_at(location_of(p.source),
                fmt::format("{} gives pod group {} a kueue.x-k8s.io/pod-group-total-count of {}, "
                            "{} gives {}; every member must give the same",
                            p.name, *group, p.pod_group_total, t->second.second->name,
                            t->second.first));
      }
    } else {
      without_total.emplace(p.gang, &p);
    }
  }
  // A group's size is its total count when its members give one (Kueue requires it on each and
  // waits until that many exist; capsim, given none, takes the members the files hold). More
  // members than the count is an error; fewer, and Kueue waits for pods that never come.
  for (const auto& [gang, total] : group_totals) {
    GangSpec& g = world.gangs[gang];
    if (auto w = without_total.find(gang); w != without_total.end()) {
      fail_at(location_of(w->second->source),
              fmt::format("{} is in pod group {} without kueue.x-k8s.io/pod-group-total-count, "
                          "which {} gives; Kueue requires it on every member",
                          w->second->name, g.name, total.second->name));
    }
    if (g.min_member > total.first) {
      fail_at(location_of(total.second->source),
              fmt::format("pod group {} has {} pods but kueue.x-k8s.io/pod-group-total-count "
                          "{}; Kueue admits only groups whose pods are no more than it",
                          g.name, g.min_member, total.first));
    }
    if (g.min_member < total.first) {
      note(location_of(total.second->source),
           fmt::format("pod group {} has {} of its {} pods (kueue.x-k8s.io/pod-group-total-count)"
                       ": Kueue waits for the rest, so the group is never admitted",
                       g.name, g.min_member, total.first));
    }
    g.min_member = total.first;
  }
  for (JobSpec& j : world.jobs) {
    const bool managed = find_lq(j.pod_template.namespace_, j.queue);
    PodSpec probe = j.pod_template;
    probe.name = "job " + j.name;
    probe.source = j.source;
    check_pod(probe, managed);
    const std::int32_t count = std::min(j.parallelism, j.completions);
    if (managed && q.settings.gang_jobs && count > 1 && j.pod_template.gang == kNoGang) {
      world.gangs.push_back(GangSpec{j.name, count, j.source});
      j.pod_template.gang = static_cast<GangId>(world.gangs.size() - 1);
    }
  }
  if (unmanaged > 0) {
    note(InputLocation{},
         fmt::format("{} pod(s) and Job(s) name no LocalQueue of their namespace (queues: {}); "
                     "they bypass Kueue and go straight to the scheduler",
                     unmanaged, fmt::join(unmanaged_queues, ", ")));
  }
}

// --- The `kueue:` section
// -------------------------------------------------------------------------

// Where the settings come from: capsim's own `kueue:` section, or a Kueue Configuration file of
// API version v1beta1 or v1beta2.
enum class SettingsSource : std::uint8_t { kScenario, kConfigV1beta1, kConfigV1beta2 };

// Whether a feature section (fairSharing, waitForPodsReady) turns its feature on. In v1beta1 and
// capsim's section, `enable: true` does. In v1beta2 Kueue removed `enable`: the section's
// presence turns the feature on (kueue #7583 for fairSharing, #7628 for waitForPodsReady), so a
// leftover `enable: true` is ignored with a warning and `enable: false` is an error, since
// Kueue would run the feature that the file seems to turn off.
bool feature_enabled(MapReader& section, const char* feature, SettingsSource from,
                     std::vector<std::string>* warnings) {
  if (from != SettingsSource::kConfigV1beta2) return section.bool_or("enable", false);
  if (auto e = section.opt("enable")) {
    if (!e->boolean()) {
      e->fail(
          fmt::format("config.kueue.x-k8s.io/v1beta2 has no {}.enable: the section's "
                      "presence turns the feature on; remove the section to turn it off",
                      feature));
    }
    warn(warnings, *e,
         fmt::format("config.kueue.x-k8s.io/v1beta2 has no {}.enable (a v1beta1 field): ignored, "
                     "the section's presence turns the feature on",
                     feature));
  }
  return true;
}

// resources.transformations[] (Kueue's Configuration API: input, strategy Retain|Replace,
// outputs as a resource -> quantity per unit of input, multiplyBy). Each input at most once.
// resources.deviceClassMappings, checked as Kueue's config validation does
// (pkg/config/validation.go, validateDeviceClassMappings): at most 16 mappings, each a unique
// resource name with 1 to 8 device class names; a class is mapped once.
void load_device_class_mappings(const YamlNode& list, KueueSettings& s, WorldBuilder& b,
                                std::vector<std::string>* warnings) {
  const std::vector<YamlNode> items = list.seq();
  if (items.size() > 16) {
    list.fail(fmt::format("{} deviceClassMappings; Kueue allows at most 16", items.size()));
  }
  std::map<std::string, InputLocation> names, classes;
  for (const YamlNode& item : items) {
    MapReader mm = item.map();
    DeviceClassMappingSpec d;
    d.where = item.where();
    const YamlNode name = mm.req("name");
    const std::string n = name.str();
    check_resource_name(n, name);
    if (auto it = names.find(n); it != names.end()) {
      name.fail(
          fmt::format("resource {} is mapped twice (first at {})", n, short_location(it->second)));
    }
    names.emplace(n, name.where());
    d.resource = b.resource(n, name.where());
    const YamlNode cls = mm.req("deviceClassNames");
    const std::vector<YamlNode> cl = cls.seq();
    if (cl.empty()) cls.fail("at least one device class name is required");
    if (cl.size() > 8)
      cls.fail(fmt::format("{} device class names; Kueue allows at most 8", cl.size()));
    for (const YamlNode& c : cl) {
      const std::string dc = c.str();
      if (auto p = label_key_problem(dc); !p.empty()) {
        c.fail(fmt::format("'{}' is not a valid device class name: {}", dc, p));
      }
      if (auto it = classes.find(dc); it != classes.end()) {
        c.fail(fmt::format("device class {} is mapped twice (first at {})", dc,
                           short_location(it->second)));
      }
      classes.emplace(dc, c.where());
      d.device_classes.push_back(dc);
    }
    if (auto src = mm.opt("sources")) {
      warn(warnings, *src,
           "deviceClassMappings sources (counters, consumable capacity) are not modelled: each "
           "device is charged as one unit");
    }
    mm.finish();
    s.device_class_mappings.push_back(std::move(d));
  }
}

void load_transformations(const YamlNode& list, KueueSettings& s, WorldBuilder& b) {
  std::map<std::string, InputLocation> seen;
  for (const YamlNode& item : list.seq()) {
    MapReader tm = item.map();
    ResourceTransformationSpec t;
    t.where = item.where();
    auto resource_name = [](const YamlNode& n) {
      const std::string name = n.str();
      check_resource_name(name, n);
      return name;
    };
    const YamlNode input = tm.req("input");
    const std::string in_name = resource_name(input);
    if (auto it = seen.find(in_name); it != seen.end()) {
      input.fail(
          fmt::format("resource {} is transformed twice (first at {}); each input may "
                      "have one transformation",
                      in_name, short_location(it->second)));
    }
    seen.emplace(in_name, input.where());
    t.input = b.resource(in_name, input.where());
    if (auto st = tm.opt("strategy")) {
      t.replace = enum_value<bool>(*st, {{"Retain", false}, {"Replace", true}});
    }
    if (auto mb = tm.opt("multiplyBy")) t.multiply_by = b.resource(resource_name(*mb), mb->where());
    if (auto outs = tm.opt("outputs")) {
      for (const auto& [name, value] : outs->entries()) {
        check_resource_name(name, value);
        // The factor exactly, in capsim's units of the output (millicores for cpu) x 10^k, with
        // the largest k <= 9 that fits (a huge factor keeps fewer decimals, rounded up).
        const int unit = name == "cpu" ? 3 : 0;
        ResourceTransformationSpec::Output o;
        o.resource = b.resource(name, value.where());
        bool parsed = false;
        for (int k = 9; k >= 0 && !parsed; k -= 3) {
          auto q = parse_quantity_scaled(value.str(), unit + k);
          if (q) {
            o.factor = *q;
            o.scale = k;
            parsed = true;
          } else if (k == 0) {
            value.fail(q.error());
          }
        }
        t.outputs.push_back(o);
      }
    }
    tm.finish();
    s.transformations.push_back(std::move(t));
  }
}

void load_settings_map(MapReader& m, KueueSettings& s, std::vector<std::string>* warnings,
                       SettingsSource from, WorldBuilder& b) {
  const bool config_file = from != SettingsSource::kScenario;
  if (auto fs = m.opt("fairSharing")) {
    MapReader f = fs->map();
    s.fair_sharing = feature_enabled(f, "fairSharing", from, warnings);
    if (auto ps = f.opt("preemptionStrategies")) {
      s.preemption_strategies.clear();
      for (const YamlNode& p : ps->seq()) {
        s.preemption_strategies.push_back(enum_value<FairSharingStrategy>(
            p, {{"LessThanOrEqualToFinalShare", FairSharingStrategy::kLessThanOrEqualToFinalShare},
                {"LessThanInitialShare", FairSharingStrategy::kLessThanInitialShare}}));
      }
      if (s.preemption_strategies.empty() || s.preemption_strategies.size() > 2 ||
          (s.preemption_strategies.size() == 2 &&
           s.preemption_strategies[1] != FairSharingStrategy::kLessThanInitialShare)) {
        ps->fail(
            "preemptionStrategies takes LessThanOrEqualToFinalShare and/or "
            "LessThanInitialShare, the latter last");
      }
    }
    f.finish();
  }
  if (auto w = m.opt("waitForPodsReady")) {
    MapReader wm = w->map();
    s.wait_for_pods_ready = feature_enabled(wm, "waitForPodsReady", from, warnings);
    if (auto t = wm.opt("timeout")) {
      s.pods_ready_timeout = t->duration();
      if (s.pods_ready_timeout <= 0) t->fail("the timeout must be positive");
    }
    if (auto bl = wm.opt("blockAdmission"); bl && bl->boolean()) {
      warn(warnings, *bl, "blockAdmission is not modelled: admission is not blocked");
    }
    if (auto rt = wm.opt("recoveryTimeout")) {
      warn(warnings, *rt, "recoveryTimeout is not modelled");
    }
    if (auto rs = wm.opt("requeuingStrategy")) {
      MapReader r = rs->map();
      if (auto ts = r.opt("timestamp")) {
        s.requeue_at_eviction_time =
            enum_value<bool>(*ts, {{"Eviction", true}, {"Creation", false}});
      }
      if (auto v = r.opt("backoffLimitCount")) {
        s.backoff_limit_count = static_cast<std::int32_t>(v->integer(0, 1000000));
      }
      if (auto v = r.opt("backoffBaseSeconds")) {
        s.backoff_base = v->integer(1, 86400 * 365) * kSecond;
      }
      if (auto v = r.opt("backoffMaxSeconds")) s.backoff_max = v->integer(1, 86400 * 365) * kSecond;
      r.finish();
    }
    wm.finish();
  }
  if (auto r = m.opt("resources")) {
    MapReader rm = r->map();
    if (auto v = rm.opt("quotaCheckStrategy")) {
      s.ignore_undeclared_resources =
          enum_value<bool>(*v, {{"BlockUndeclared", false}, {"IgnoreUndeclared", true}});
    }
    if (auto v = rm.opt("excludeResourcePrefixes")) {
      for (const YamlNode& p : v->seq())
        s.exclude_resource_prefixes.push_back(p.str());
      if (s.ignore_undeclared_resources && !s.exclude_resource_prefixes.empty()) {
        v->fail(
            "excludeResourcePrefixes is not allowed when quotaCheckStrategy is "
            "IgnoreUndeclared");
      }
    }
    if (auto t = rm.opt("transformations")) load_transformations(*t, s, b);
    if (auto d = rm.opt("deviceClassMappings")) load_device_class_mappings(*d, s, b, warnings);
    rm.finish();
  }
  if (config_file) {
    // The rest of a Kueue Configuration is about running the controller, not about admission.
    for (const char* key :
         {"kind", "namespace", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
          "internalCertManagement", "clientConnection", "controller", "health", "metrics",
          "webhook", "leaderElection", "integrations", "queueVisibility", "multiKueue",
          "featureGates", "objectRetentionPolicies", "admissionFairSharing", "pprofBindAddress"}) {
      m.ignore(key);
    }
  } else {
    // capsim's own knobs.
    s.one_borrowing_admission_per_cohort =
        m.bool_or("oneBorrowingAdmissionPerCohortPerCycle", s.one_borrowing_admission_per_cohort);
    s.gang_jobs = m.bool_or("gangJobs", s.gang_jobs);
  }
}

}  // namespace

std::vector<ManifestKind> kueue_manifest_kinds() {
  const std::vector<std::string> served = {"v1beta2", "v1beta1"};
  return {
      {kGroup, "ResourceFlavor", served, load_resource_flavor},
      {kGroup, "ClusterQueue", served, load_cluster_queue},
      {kGroup, "Cohort", {"v1beta2", "v1beta1", "v1alpha1"}, load_cohort},
      {kGroup, "LocalQueue", served, load_local_queue},
      {kGroup, "WorkloadPriorityClass", served, load_workload_priority_class},
      {kGroup, "Topology", served, load_topology},
  };
}

void require_kueue_checks(WorldBuilder& b, std::vector<std::string>* warnings) {
  World* world = &b.world();
  b.on_finalize("kueue", [world, warnings] { check_kueue(*world, warnings); });
}

void load_kueue_section(const YamlNode& section, WorldBuilder& b, FileSource& files,
                        const std::function<std::string(const YamlNode&)>& resolve,
                        std::vector<std::string>* warnings) {
  QueueConfig& q = b.world().queues;
  q.settings_given = true;
  MapReader m = section.map();
  if (auto cfg = m.opt("config")) {
    const YamlNode doc = files.yaml(resolve(*cfg));
    MapReader cm = doc.map();
    if (auto kind = cm.opt("kind"); kind && kind->str() != "Configuration") {
      kind->fail("a Kueue configuration file has kind: Configuration");
    }
    // Without an apiVersion the file is read as v1beta1, the version that has `enable` fields.
    SettingsSource from = SettingsSource::kConfigV1beta1;
    if (auto api = cm.opt("apiVersion")) {
      const std::string v = api->str();
      if (v == "config.kueue.x-k8s.io/v1beta2") {
        from = SettingsSource::kConfigV1beta2;
      } else if (v != "config.kueue.x-k8s.io/v1beta1") {
        api->fail(
            fmt::format("a Kueue Configuration has apiVersion config.kueue.x-k8s.io/v1beta2 "
                        "or config.kueue.x-k8s.io/v1beta1, not '{}'",
                        v));
      }
    }
    load_settings_map(cm, q.settings, warnings, from, b);
    cm.finish();
  }
  load_settings_map(m, q.settings, warnings, SettingsSource::kScenario, b);
  m.finish();
  require_kueue_checks(b, warnings);
}

void load_kueue_section(const YamlNode& section, WorldBuilder& b,
                        const std::function<std::string(const YamlNode&)>& resolve,
                        std::vector<std::string>* warnings) {
  RealFiles files;
  load_kueue_section(section, b, files, resolve, warnings);
}

}  // namespace capsim
