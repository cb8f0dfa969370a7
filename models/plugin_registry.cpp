#include "models/plugin_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "models/fgd_profiles.hpp"
#include "models/plugins/balanced_allocation.hpp"
#include "models/plugins/best_fit_score.hpp"
#include "models/plugins/compute_domains.hpp"
#include "models/plugins/default_binder.hpp"
#include "models/plugins/default_preemption.hpp"
#include "models/plugins/dot_product_score.hpp"
#include "models/plugins/dynamic_resources.hpp"
#include "models/plugins/fgd_score.hpp"
#include "models/plugins/gpu_clustering_score.hpp"
#include "models/plugins/gpu_devices.hpp"
#include "models/plugins/gpu_packing_score.hpp"
#include "models/plugins/inter_pod_affinity.hpp"
#include "models/plugins/node_affinity.hpp"
#include "models/plugins/node_resources_fit.hpp"
#include "models/plugins/node_unschedulable.hpp"
#include "models/plugins/open_gpu_share.hpp"
#include "models/plugins/pod_topology_spread.hpp"
#include "models/plugins/priority_sort.hpp"
#include "models/plugins/random_score.hpp"
#include "models/plugins/taint_toleration.hpp"
#include "models/plugins/topology_packing.hpp"

namespace capsim {

namespace {

ResourceId resource_arg(PluginContext& ctx, const YamlNode& n) {
  const std::string name = n.str();
  // Resource names in args refer to resources nodes or pods know; the World interned them.
  auto id = ctx.world.resources.find(name);
  if (!id) {
    std::vector<std::string> known;
    for (ResourceId r = 0; r < ctx.world.resources.size(); ++r)
      known.push_back(ctx.world.resources.name(r));
    n.fail(fmt::format("unknown resource '{}'{}", name, did_you_mean(name, known)));
  }
  return *id;
}

std::vector<plugins::ResourceWeight> resource_weights(PluginContext& ctx, const YamlNode& list) {
  std::vector<plugins::ResourceWeight> out;
  for (const YamlNode& item : list.seq()) {
    MapReader m = item.map();
    plugins::ResourceWeight w;
    w.resource = resource_arg(ctx, m.req("name"));
    w.weight = m.int_or("weight", 1, 1, 100);
    m.finish();
    out.push_back(w);
  }
  if (out.empty()) list.fail("at least one resource is required");
  return out;
}

// Reads a plugin's args (its pluginConfig entry; apiVersion and kind are accepted and ignored)
// with `read`, which takes the fields it knows; any other field is an error.
template <typename Read>
void read_args(const YamlNode* args, Read&& read) {
  if (args == nullptr) return;
  MapReader m = args->map();
  m.ignore("kind");
  m.ignore("apiVersion");
  read(m);
  m.finish();
}

std::unique_ptr<fw::Plugin> make_fit(PluginContext& ctx, const YamlNode* args) {
  plugins::NodeResourcesFitArgs a;
  read_args(args, [&](MapReader& m) {
    if (auto ign = m.opt("ignoredResources")) {
      for (const YamlNode& r : ign->seq()) {
        auto id = ctx.world.resources.find(r.str());
        if (id) a.ignored_resources.push_back(*id);
      }
    }
    if (auto groups = m.opt("ignoredResourceGroups")) {
      for (const YamlNode& g : groups->seq()) {
        const std::string prefix = g.str() + "/";
        for (ResourceId r = kFixedResources - 1; r < ctx.world.resources.size(); ++r) {
          if (ctx.world.resources.name(r).rfind(prefix, 0) == 0) a.ignored_resources.push_back(r);
        }
      }
    }
    if (auto ss = m.opt("scoringStrategy")) {
      MapReader s = ss->map();
      const std::string type = s.str_or("type", "LeastAllocated");
      if (type == "LeastAllocated") {
        a.strategy = plugins::ScoringStrategy::kLeastAllocated;
      } else if (type == "MostAllocated") {
        a.strategy = plugins::ScoringStrategy::kMostAllocated;
      } else if (type == "RequestedToCapacityRatio") {
        a.strategy = plugins::ScoringStrategy::kRequestedToCapacityRatio;
      } else {
        s.req("type").fail(fmt::format(
            "unknown scoring strategy '{}'{}", type,
            did_you_mean(type, {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"})));
      }
      if (auto res = s.opt("resources")) a.resources = resource_weights(ctx, *res);
      if (auto rtcr = s.opt("requestedToCapacityRatio")) {
        MapReader r = rtcr->map();
        YamlNode shape = r.req("shape");
        std::int64_t last = -1;
        for (const YamlNode& pt : shape.seq()) {
          MapReader p = pt.map();
          plugins::UtilizationShapePoint sp;
          sp.utilization = p.req("utilization").integer(0, 100);
          sp.score = p.req("score").integer(0, 10);
          p.finish();
          if (sp.utilization <= last) pt.fail("utilization values must increase strictly");
          last = sp.utilization;
          a.shape.push_back(sp);
        }
        r.finish();
      }
      s.finish();
      if (a.strategy == plugins::ScoringStrategy::kRequestedToCapacityRatio && a.shape.empty()) {
        ss->fail("RequestedToCapacityRatio needs requestedToCapacityRatio.shape");
      }
    }
  });
  return std::make_unique<plugins::NodeResourcesFit>(ctx, std::move(a));
}

std::unique_ptr<fw::Plugin> make_balanced(PluginContext& ctx, const YamlNode* args) {
  std::vector<plugins::ResourceWeight> res = {{kCpu, 1}, {kMemory, 1}};
  read_args(args, [&](MapReader& m) {
    if (auto r = m.opt("resources")) res = resource_weights(ctx, *r);
  });
  return std::make_unique<plugins::BalancedAllocation>(std::move(res));
}

std::unique_ptr<fw::Plugin> make_preemption(PluginContext& ctx, const YamlNode* args) {
  plugins::DefaultPreemptionArgs a;
  read_args(args, [&](MapReader& m) {
    a.min_candidate_nodes_percentage =
        static_cast<std::int32_t>(m.int_or("minCandidateNodesPercentage", 10, 0, 100));
    a.min_candidate_nodes_absolute =
        static_cast<std::int32_t>(m.int_or("minCandidateNodesAbsolute", 100, 0, 1000000));
    a.random_offset = m.bool_or("randomOffset", false);
  });
  return std::make_unique<plugins::DefaultPreemption>(ctx, a);
}

std::unique_ptr<fw::Plugin> make_open_gpu_share(PluginContext& ctx, const YamlNode* args) {
  plugins::GpuSelection sel = plugins::GpuSelection::kBest;
  read_args(args, [&](MapReader& m) {
    if (auto v = m.opt("gpuSelection")) {
      const std::string t = v->str();
      if (t == "best") {
        sel = plugins::GpuSelection::kBest;
      } else if (t == "worst") {
        sel = plugins::GpuSelection::kWorst;
      } else if (t == "random") {
        sel = plugins::GpuSelection::kRandom;
      } else if (t == "fgd") {
        sel = plugins::GpuSelection::kFgd;
      } else {
        v->fail(fmt::format("unknown gpuSelection '{}'{}", t,
                            did_you_mean(t, {"best", "worst", "random", "fgd"})));
      }
    }
  });
  return std::make_unique<plugins::OpenGpuShare>(ctx, sel);
}

// PodTopologySpreadArgs: defaultingType System (the built-in defaults) or List (the listed
// defaultConstraints, which carry no selector: the owner's is used), as upstream validates them.
std::unique_ptr<fw::Plugin> make_spread(PluginContext& ctx, const YamlNode* args) {
  plugins::PodTopologySpreadArgs a;
  read_args(args, [&](MapReader& m) {
    std::optional<YamlNode> type_node = m.opt("defaultingType");
    if (type_node) {
      const std::string t = type_node->str();
      if (t == "System") {
        a.defaulting = plugins::SpreadDefaulting::kSystem;
      } else if (t == "List") {
        a.defaulting = plugins::SpreadDefaulting::kList;
      } else {
        type_node->fail(fmt::format("unknown defaultingType '{}'{}; use System or List", t,
                                    did_you_mean(t, {"System", "List"})));
      }
    }
    if (auto dc = m.opt("defaultConstraints")) {
      for (const YamlNode& item : dc->seq()) {
        MapReader c = item.map();
        TopologySpreadConstraint t;
        t.max_skew = static_cast<std::int32_t>(c.req("maxSkew").integer(1, 1000000));
        const std::string key = c.req("topologyKey").str();
        // A key no node carries stays unknown (kNoSym): no node is in its domains.
        t.topology_key = ctx.world.strings.find(key);
        YamlNode when = c.req("whenUnsatisfiable");
        const std::string w = when.str();
        if (w == "DoNotSchedule") {
          t.when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
        } else if (w == "ScheduleAnyway") {
          t.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
        } else {
          when.fail(fmt::format("unknown whenUnsatisfiable '{}'{}", w,
                                did_you_mean(w, {"DoNotSchedule", "ScheduleAnyway"})));
        }
        if (auto sel = c.opt("labelSelector")) {
          sel->fail("a default constraint must not define a selector: it is the owner's");
        }
        c.finish();
        a.default_constraints.push_back(std::move(t));
      }
      if (!a.default_constraints.empty() && a.defaulting == plugins::SpreadDefaulting::kSystem) {
        dc->fail("when defaultingType is System, defaultConstraints must be empty");
      }
    }
  });
  return std::make_unique<plugins::PodTopologySpread>(ctx, std::move(a));
}

std::unique_ptr<fw::Plugin> make_inter_pod_affinity(PluginContext& ctx, const YamlNode* args) {
  plugins::InterPodAffinityArgs a;
  read_args(args, [&](MapReader& m) {
    a.hard_pod_affinity_weight =
        static_cast<std::int32_t>(m.int_or("hardPodAffinityWeight", 1, 0, 100));
    a.ignore_preferred_terms_of_existing_pods =
        m.bool_or("ignorePreferredTermsOfExistingPods", false);
  });
  return std::make_unique<plugins::InterPodAffinity>(ctx, a);
}

std::unique_ptr<fw::Plugin> make_compute_domains(PluginContext& ctx, const YamlNode* args) {
  plugins::ComputeDomainsArgs a;
  read_args(args, [&](MapReader& m) {
    if (auto span = m.opt("span")) {
      const std::string v = span->str();
      if (v == "Any") {
        a.one_domain = false;
      } else if (v != "OneDomain") {
        span->fail(fmt::format("unknown span '{}'{}; use OneDomain or Any", v,
                               did_you_mean(v, {"OneDomain", "Any"})));
      }
    }
  });
  return std::make_unique<plugins::ComputeDomains>(ctx, a);
}

std::unique_ptr<fw::Plugin> make_topology_packing(PluginContext& ctx, const YamlNode* args) {
  plugins::TopologyPackingArgs a;
  read_args(args, [&](MapReader& m) {
    if (auto f = m.opt("fading")) a.fading = f->number(0, 10);
  });
  return std::make_unique<plugins::TopologyPacking>(ctx, a);
}

template <typename T>
PluginFactory no_args() {
  return [](PluginContext& ctx, const YamlNode* args) -> std::unique_ptr<fw::Plugin> {
    read_args(args, [](MapReader&) {});
    if constexpr (std::is_constructible_v<T, PluginContext&>) {
      return std::make_unique<T>(ctx);
    } else {
      (void)ctx;
      return std::make_unique<T>();
    }
  };
}

// kube-scheduler's default plugin set restricted to what capsim models, in upstream order, with
// upstream's default score weights; plus GpuDevices, which stands in for the kubelet device
// manager's choice of GPUs. DynamicResources sits before DefaultPreemption, as upstream inserts
// it when DRA is enabled; it skips pods without resource claims. ComputeDomains, capsim's model of
// NVIDIA's compute-domain driver, follows it in runs that have ComputeDomain objects (as the
// driver is installed), and skips pods that join none.
const std::vector<std::pair<std::string, std::int64_t>>& default_plugins() {
  static const std::vector<std::pair<std::string, std::int64_t>> d = {
      {"PrioritySort", 0},     {"NodeUnschedulable", 0}, {"TaintToleration", 3},
      {"NodeAffinity", 2},     {"NodeResourcesFit", 1},  {"GpuDevices", 0},
      {"DynamicResources", 0}, {"ComputeDomains", 0},    {"PodTopologySpread", 2},
      {"InterPodAffinity", 2}, {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
      {"DefaultBinder", 0},
  };
  return d;
}

}  // namespace

const std::vector<PluginRegistration>& plugin_registry() {
  static const std::vector<PluginRegistration> r = {
      {"PrioritySort", no_args<plugins::PrioritySort>()},
      {"NodeUnschedulable", no_args<plugins::NodeUnschedulable>()},
      {"TaintToleration", no_args<plugins::TaintToleration>()},
      {"NodeAffinity", no_args<plugins::NodeAffinityPlugin>()},
      {"NodeResourcesFit", make_fit},
      {"NodeResourcesBalancedAllocation", make_balanced},
      {"GpuDevices", no_args<plugins::GpuDevices>()},
      {"DynamicResources", no_args<plugins::DynamicResources>()},
      {"ComputeDomains", make_compute_domains},
      {"PodTopologySpread", make_spread},
      {"InterPodAffinity", make_inter_pod_affinity},
      {"DefaultPreemption", make_preemption},
      {"DefaultBinder", no_args<plugins::DefaultBinder>()},
      // capsim's packing of GPU pods into the fullest topology domains (Volcano-style).
      {"TopologyPacking", make_topology_packing},
      // The FGD study's GPU-share filter and placement policies (docs/fgd.md).
      {"OpenGpuShare", make_open_gpu_share},
      {"RandomScore", no_args<plugins::RandomScore>()},
      {"DotProductScore", no_args<plugins::DotProductScore>()},
      {"GpuClusteringScore", no_args<plugins::GpuClusteringScore>()},
      {"GpuPackingScore", no_args<plugins::GpuPackingScore>()},
      {"BestFitScore", no_args<plugins::BestFitScore>()},
      {"FGDScore", no_args<plugins::FgdScore>()},
  };
  return r;
}

const std::vector<std::string>& unmodelled_upstream_plugins() {
  static const std::vector<std::string> u = {
      "SchedulingGates", "NodeName",    "NodePorts",        "VolumeRestrictions",
      "EBSLimits",       "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits",
      "VolumeBinding",   "VolumeZone",  "ImageLocality",
  };
  return u;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names = {"default-scheduler", "gpu-binpack", "gpu-spread"};
  for (auto& n : fgd_profile_names())
    names.push_back(std::move(n));
  return names;
}

std::optional<std::string> builtin_profile_yaml(const std::string& name) {
  if (name == "default-scheduler") return std::string("schedulerName: default-scheduler\n");
  if (name == "gpu-binpack") {
    // Pack GPU pods onto the fullest nodes: MostAllocated with nvidia.com/gpu weighted up.
    return std::string(R"(schedulerName: gpu-binpack
pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
          - {name: cpu, weight: 1}
          - {name: memory, weight: 1}
          - {name: nvidia.com/gpu, weight: 5}
)");
  }
  if (name == "gpu-spread") {
    return std::string(R"(schedulerName: gpu-spread
pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources:
          - {name: cpu, weight: 1}
          - {name: memory, weight: 1}
          - {name: nvidia.com/gpu, weight: 5}
)");
  }
  return fgd_profile_yaml(name);
}

namespace {

enum Point : std::size_t {
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kBind,
  kPoints
};
constexpr const char* kPointNames[kPoints] = {"queueSort", "preFilter", "filter",  "postFilter",
                                              "preScore",  "score",     "reserve", "bind"};

bool implements(const fw::Plugin& p, std::size_t point) {
  switch (point) {
    case kQueueSort:
      return dynamic_cast<const fw::QueueSortPlugin*>(&p) != nullptr;
    case kPreFilter:
      return dynamic_cast<const fw::PreFilterPlugin*>(&p) != nullptr;
    case kFilter:
      return dynamic_cast<const fw::FilterPlugin*>(&p) != nullptr;
    case kPostFilter:
      return dynamic_cast<const fw::PostFilterPlugin*>(&p) != nullptr;
    case kPreScore:
      return dynamic_cast<const fw::PreScorePlugin*>(&p) != nullptr;
    case kScore:
      return dynamic_cast<const fw::ScorePlugin*>(&p) != nullptr;
    case kReserve:
      return dynamic_cast<const fw::ReservePlugin*>(&p) != nullptr;
    case kBind:
      return dynamic_cast<const fw::BindPlugin*>(&p) != nullptr;
    default:
      return false;
  }
}

struct Builder {
  PluginContext& ctx;
  std::map<std::string, YamlNode> args;  // pluginConfig
  std::vector<std::unique_ptr<fw::Plugin>> instances;
  std::map<std::string, std::size_t> index;
  std::vector<std::pair<std::string, std::int64_t>> points[kPoints];
  std::vector<std::string> warnings;

  // Returns the plugin's instance index, creating it on first use; nullopt for an unmodelled
  // upstream plugin (warned about).
  std::optional<std::size_t> instance(const std::string& name, const YamlNode& where) {
    if (auto it = index.find(name); it != index.end()) return it->second;
    const auto& reg = plugin_registry();
    auto r = std::find_if(reg.begin(), reg.end(), [&](const auto& x) { return x.name == name; });
    if (r == reg.end()) {
      const auto& um = unmodelled_upstream_plugins();
      if (std::find(um.begin(), um.end(), name) != um.end()) {
        warnings.push_back(fmt::format("{}: plugin {} is not modelled by capsim and is ignored",
                                       where.where().to_string(), name));
        return std::nullopt;
      }
      std::vector<std::string> known;
      for (const auto& x : reg)
        known.push_back(x.name);
      where.fail(fmt::format("unknown plugin '{}'{}", name, did_you_mean(name, known)));
    }
    auto a = args.find(name);
    auto p = r->factory(ctx, a == args.end() ? nullptr : &a->second);
    instances.push_back(std::move(p));
    index[name] = instances.size() - 1;
    return instances.size() - 1;
  }

  void enable(std::size_t point, const std::string& name, std::int64_t weight) {
    auto& v = points[point];
    auto it = std::find_if(v.begin(), v.end(), [&](const auto& x) { return x.first == name; });
    if (it != v.end()) {
      if (weight > 0) it->second = weight;
      return;
    }
    v.emplace_back(name, weight);
  }
  void disable(std::size_t point, const std::string& name) {
    auto& v = points[point];
    if (name == "*") {
      v.clear();
      return;
    }
    v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& x) { return x.first == name; }),
            v.end());
  }
};

void apply_plugin_set(Builder& b, const YamlNode& set, std::optional<std::size_t> only_point) {
  MapReader m = set.map();
  if (auto dis = m.opt("disabled")) {
    for (const YamlNode& d : dis->seq()) {
      MapReader dm = d.map();
      const std::string name = dm.req("name").str();
      dm.finish();
      for (std::size_t p = 0; p < kPoints; ++p) {
        if (!only_point || *only_point == p) b.disable(p, name);
      }
    }
  }
  if (auto en = m.opt("enabled")) {
    for (const YamlNode& e : en->seq()) {
      MapReader em = e.map();
      YamlNode name_node = em.req("name");
      const std::string name = name_node.str();
      const std::int64_t weight = em.int_or("weight", 0, 0, 1000000);
      em.finish();
      auto idx = b.instance(name, name_node);
      if (!idx) continue;
      const fw::Plugin& p = *b.instances[*idx];
      bool any = false;
      for (std::size_t pt = 0; pt < kPoints; ++pt) {
        if (only_point && *only_point != pt) continue;
        if (!implements(p, pt)) continue;
        b.enable(pt, name, pt == kScore ? (weight > 0 ? weight : 1) : 0);
        any = true;
      }
      if (!any) {
        name_node.fail(fmt::format("plugin {} does not implement the {} extension point", name,
                                   only_point ? kPointNames[*only_point] : "any"));
      }
    }
  }
  m.finish();
}

}  // namespace

BuiltProfile build_profile(const YamlNode& profile, const YamlNode* globals, PluginContext& ctx) {
  Builder b{ctx, {}, {}, {}, {}, {}};
  fw::ProfileConfig cfg;
  MapReader m = profile.map();
  cfg.name = m.str_or("schedulerName", "default-scheduler");
  if (auto pc = m.opt("pluginConfig")) {
    for (const YamlNode& entry : pc->seq()) {
      MapReader em = entry.map();
      const std::string name = em.req("name").str();
      if (auto a = em.opt("args")) b.args.emplace(name, *a);
      em.finish();
    }
  }
  // Defaults first, at every point each default plugin implements.
  for (const auto& [name, weight] : default_plugins()) {
    if (name == "ComputeDomains" && ctx.world.dra.compute_domains.empty()) continue;
    auto idx = b.instance(name, profile);
    for (std::size_t pt = 0; pt < kPoints; ++pt) {
      if (implements(*b.instances[*idx], pt)) b.enable(pt, name, pt == kScore ? weight : 0);
    }
  }
  if (auto plugins = m.opt("plugins")) {
    MapReader pm = plugins->map();
    if (auto mp = pm.opt("multiPoint")) apply_plugin_set(b, *mp, std::nullopt);
    for (std::size_t pt = 0; pt < kPoints; ++pt) {
      if (auto s = pm.opt(kPointNames[pt])) apply_plugin_set(b, *s, pt);
    }
    pm.ignore("preEnqueue");
    pm.ignore("permit");
    pm.ignore("preBind");
    pm.ignore("postBind");
    pm.finish();
  }
  // Args given for plugins that ended up unused are still validated by building them.
  for (const auto& [name, node] : b.args)
    (void)b.instance(name, node);

  auto read_knobs = [&](MapReader& r) {
    if (auto v = r.opt("percentageOfNodesToScore")) {
      cfg.percentage_of_nodes_to_score = static_cast<std::int32_t>(v->integer(0, 100));
    }
    if (auto v = r.opt("podInitialBackoffSeconds"))
      cfg.pod_initial_backoff = v->integer(0, 86400) * kSecond;
    if (auto v = r.opt("podMaxBackoffSeconds"))
      cfg.pod_max_backoff = v->integer(0, 86400) * kSecond;
    if (auto v = r.opt("podMaxInUnschedulablePodsDuration"))
      cfg.max_unschedulable_duration = v->duration();
    if (auto v = r.opt("tieBreak")) {
      const std::string t = v->str();
      if (t == "first") {
        cfg.tie_break = fw::TieBreak::kFirst;
      } else if (t == "random") {
        cfg.tie_break = fw::TieBreak::kRandom;
      } else {
        v->fail(fmt::format("tieBreak must be 'first' or 'random', not '{}'", t));
      }
    }
  };
  if (globals) {
    MapReader g = globals->map();
    read_knobs(g);  // unknown global keys are the caller's business
  }
  read_knobs(m);
  m.finish();
  if (cfg.pod_max_backoff < cfg.pod_initial_backoff) {
    profile.fail("podMaxBackoffSeconds must be at least podInitialBackoffSeconds");
  }

  // A plugin whose Score reads what its own PreScore computed cannot score without it: upstream's
  // Score then fails every cycle ("reading ... from cycleState: not found"). Refused here instead.
  static const std::vector<std::string> kScoreNeedsPreScore = {
      "PodTopologySpread", "InterPodAffinity", "TopologyPacking"};
  for (const auto& [n, w] : b.points[kScore]) {
    if (std::find(kScoreNeedsPreScore.begin(), kScoreNeedsPreScore.end(), n) ==
        kScoreNeedsPreScore.end()) {
      continue;
    }
    const auto& pre = b.points[kPreScore];
    // (n is a structured binding: clang 14 cannot capture one, so it is bound by name.)
    if (std::none_of(pre.begin(), pre.end(),
                     [&name = n](const auto& x) { return x.first == name; })) {
      profile.fail(
          fmt::format("plugin {} scores with what its PreScore computes: enable it at "
                      "preScore too (multiPoint enables every point it implements)",
                      n));
    }
  }

  // Assemble: instance order is creation order; points reference instance indices.
  auto idx_of = [&](const std::string& n) { return b.index.at(n); };
  if (b.points[kQueueSort].size() != 1) {
    profile.fail(fmt::format("exactly one queueSort plugin must be enabled (found {})",
                             b.points[kQueueSort].size()));
  }
  cfg.queue_sort = idx_of(b.points[kQueueSort][0].first);
  for (const auto& [n, w] : b.points[kPreFilter])
    cfg.pre_filter.push_back(idx_of(n));
  for (const auto& [n, w] : b.points[kFilter])
    cfg.filter.push_back(idx_of(n));
  for (const auto& [n, w] : b.points[kPostFilter])
    cfg.post_filter.push_back(idx_of(n));
  for (const auto& [n, w] : b.points[kPreScore])
    cfg.pre_score.push_back(idx_of(n));
  for (const auto& [n, w] : b.points[kScore])
    cfg.score.emplace_back(idx_of(n), w > 0 ? w : 1);
  for (const auto& [n, w] : b.points[kReserve])
    cfg.reserve.push_back(idx_of(n));
  for (const auto& [n, w] : b.points[kBind])
    cfg.bind.push_back(idx_of(n));
  // A plugin's PreScore state is only useful if its Score runs; PreFilter likewise for Filter.
  cfg.plugins = std::move(b.instances);
  return BuiltProfile{std::move(cfg), std::move(b.warnings)};
}

BuiltProfile build_builtin_profile(const std::string& name, PluginContext& ctx) {
  auto text = builtin_profile_yaml(name);
  CAPSIM_CHECK(text.has_value(), "unknown built-in profile " + name);
  YamlNode doc = YamlNode::load_string(*text, "<built-in profile " + name + ">");
  return build_profile(doc, nullptr, ctx);
}

ProfileSet ProfileSet::compile(const std::vector<YamlNode>& defined,
                               const std::optional<YamlNode>& globals, PluginContext& ctx) {
  ProfileSet set;
  set.globals_ = globals;
  const YamlNode* g = globals ? &*globals : nullptr;
  for (const YamlNode& p : defined) {
    MapReader pm = p.map();
    const std::string name = pm.str_or("schedulerName", "default-scheduler");
    if (set.contains(name)) p.fail(fmt::format("two profiles are named '{}'", name));
    (void)build_profile(p, g, ctx);
    set.entries_.push_back(Entry{name, p});
  }
  bool built_in_checked = false;
  for (const std::string& name : builtin_profile_names()) {
    if (set.contains(name)) continue;
    YamlNode doc =
        YamlNode::load_string(*builtin_profile_yaml(name), "<built-in profile " + name + ">");
    if (!built_in_checked) {
      (void)build_profile(doc, g, ctx);
      built_in_checked = true;
    }
    set.entries_.push_back(Entry{name, std::move(doc)});
  }
  return set;
}

const ProfileSet::Entry* ProfileSet::find(const std::string& name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> ProfileSet::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    out.push_back(e.name);
  return out;
}

std::optional<BuiltProfile> ProfileSet::instantiate(const std::string& name,
                                                    PluginContext& ctx) const {
  const Entry* e = find(name);
  if (e == nullptr) return std::nullopt;
  return build_profile(e->profile, globals_ ? &*globals_ : nullptr, ctx);
}

}  // namespace capsim
