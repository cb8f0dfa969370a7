#include "tools/loaders/scenario_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "models/cost_model.hpp"
#include "models/plugin_registry.hpp"
#include "models/workload/synthetic.hpp"
#include "sim/quantity.hpp"
#include "tools/loaders/alibaba_openb.hpp"
#include "tools/loaders/device_config.hpp"
#include "tools/loaders/dra_manifests.hpp"
#include "tools/loaders/duration_rules.hpp"
#include "tools/loaders/failure_config.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/job_trace.hpp"
#include "tools/loaders/k8s_fields.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/kueue_manifests.hpp"
#include "tools/loaders/maintenance_config.hpp"
#include "tools/loaders/scaling.hpp"
#include "tools/loaders/sha256.hpp"
#include "tools/loaders/spot_config.hpp"
#include "tools/loaders/trace_csv.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kCannotOpenScenario =
    "cannot open the scenario file (does it exist and is it readable?)";

// The text of a field naming a file. An empty value (`path:`, or a YAML tag with nothing after it
// such as `[!a.yaml]` or `extends: !base.yaml`) would name the scenario's own directory, and the
// error about opening it no file: it is refused at its field.
std::string path_text(const YamlNode& n) {
  std::string p = n.str();
  if (p.empty()) n.fail("a file path is needed here, and the value is empty");
  return p;
}

struct Ctx {
  fs::path base;  // directory of the scenario file
  FileSource* files = nullptr;
  std::string data_dir;
  WorldBuilder* b;
  Scenario* s;
  const CostConfig* cost = nullptr;       // the `cost:` section, when there is one
  std::vector<std::string> racked_pools;  // pools with a `topology:`
  DeviceConfigs devices;
  // The scheduler section's profiles and KubeSchedulerConfiguration-level knobs, compiled into
  // Scenario::profiles once the World is complete.
  std::vector<YamlNode> profiles;
  std::optional<YamlNode> scheduler_globals;
  // The pools' `spot:` fields (pool name, field), read in 11b against the finished World.
  std::vector<std::pair<std::string, YamlNode>> spot_pools;

  // Resolves a path given in the scenario: {data_dir} expansion, then relative to the file.
  std::string resolve(const YamlNode& n) const {
    std::string p = path_text(n);
    const std::string key = "{data_dir}";
    bool expanded = false;
    if (auto pos = p.find(key); pos != std::string::npos) {
      if (data_dir.empty()) {
        n.fail(
            "the path uses {data_dir} but the scenario sets no data_dir and --data-dir was not "
            "given");
      }
      p.replace(pos, key.size(), data_dir);
      expanded = true;
    }
    fs::path fp(p);
    // data_dir is already resolved (against the scenario's directory, or the working directory
    // for --data-dir), so an expanded path is not rebased.
    if (fp.is_relative() && !expanded) fp = base / fp;
    return fp.lexically_normal().string();
  }
};

double seconds_of(const YamlNode& n) {
  return to_seconds(n.duration());
}

// ---- cluster -------------------------------------------------------------------------------

void read_node_fields(MapReader& m, Ctx& c, NodeSpec& node, const GpuModel*& model,
                      std::int32_t& gpus, std::optional<double>& price) {
  WorldBuilder& b = *c.b;
  if (auto g = m.opt("gpu")) {
    MapReader gm = g->map();
    YamlNode mn = gm.req("model");
    model = &b.gpu_model(mn.str(), mn.where());
    gpus = static_cast<std::int32_t>(gm.req("count").integer(0, 64));
    gm.finish();
  }
  // MIG layout and device-plugin sharing: pool fields, else the node labels the GPU Operator
  // reads (nvidia.com/mig.config, nvidia.com/device-plugin.config).
  std::string mig_config;
  std::optional<MigStrategy> strategy;
  std::string plugin_config;
  std::optional<YamlNode> where_devices;
  if (auto mg = m.opt("mig")) {
    where_devices = mg;
    if (mg->is_scalar()) {
      mig_config = mg->str();
    } else {
      MapReader mm = mg->map();
      mig_config = mm.req("config").str();
      if (auto st = mm.opt("strategy")) {
        strategy = parse_mig_strategy(st->str());
        if (!strategy)
          st->fail(fmt::format("strategy must be none, single or mixed, not '{}'", st->str()));
      }
      mm.finish();
    }
  }
  if (auto sh = m.opt("sharing")) {
    where_devices = sh;
    if (sh->is_scalar()) {
      plugin_config = sh->str();
    } else {
      plugin_config = "inline:" + (node.pool.empty() ? node.name : node.pool);
      c.devices.add_device_plugin_inline(*sh, plugin_config);
    }
  }
  if (auto v = m.opt("cpu")) {
    node.capacity[kCpu] = v->quantity(3);
  } else {
    m.req("cpu");
  }
  if (auto v = m.opt("memory")) {
    node.capacity[kMemory] = v->quantity(0);
  } else {
    m.req("memory");
  }
  if (auto v = m.opt("pods")) node.capacity[kPods] = v->integer(1, 100000);
  if (auto v = m.opt("ephemeral_storage")) node.capacity[kEphemeralStorage] = v->quantity(0);
  if (auto v = m.opt("resources")) {
    for (const auto& [k, q] : v->entries()) {
      const ResourceId r = b.resource(k, q.where());
      node.capacity[r] = q.quantity(0);
    }
  }
  node.allocatable = node.capacity;
  if (auto v = m.opt("reserved")) {
    // kube-reserved + system-reserved: allocatable = capacity - reserved.
    for (const auto& [k, q] : v->entries()) {
      const ResourceId r = b.resource(k, q.where());
      const std::int64_t amount = q.quantity(r == kCpu ? 3 : 0);
      if (amount > node.capacity[r]) q.fail(fmt::format("reserving more {} than the node has", k));
      node.allocatable[r] -= amount;
    }
  }
  if (auto v = m.opt("labels")) {
    node.labels = parse_labels(*v, b);
    const StringPool& pool = b.world().strings;
    if (mig_config.empty()) {
      if (Sym l = node.labels.get(b.sym("nvidia.com/mig.config")); l != kNoSym)
        mig_config = pool.str(l);
    }
    if (plugin_config.empty()) {
      if (Sym l = node.labels.get(b.sym("nvidia.com/device-plugin.config")); l != kNoSym)
        plugin_config = pool.str(l);
    }
  }
  if (!mig_config.empty() || !plugin_config.empty()) {
    const InputLocation at = where_devices ? where_devices->where() : m.node().where();
    if (model == nullptr || gpus == 0)
      throw InputError(InputErrorKind::kInvalid, at,
                       "MIG and sharing need GPUs (gpu: {model, count})");
    node.devices = c.devices.resolve(*model, to_model_info(*model), gpus, mig_config, strategy,
                                     plugin_config, at, &c.s->warnings);
  }
  if (auto v = m.opt("dra")) {
    // NVIDIA's DRA driver publishes the GPUs instead of the device plugin (docs/dra.md).
    const DraNodeConfig dra = read_dra_node_config(*v);
    if (dra.enabled) {
      if (model == nullptr || gpus == 0) v->fail("dra needs GPUs (gpu: {model, count})");
      if (!plugin_config.empty()) {
        v->fail("a DRA node's GPUs are not shared through the device plugin; drop `sharing`");
      }
      if (dra.partitionable && !model->mig_capable()) {
        v->fail(fmt::format("{} does not support MIG, so it cannot be partitionable", model->name));
      }
      if (dra.partitionable && !mig_config.empty()) {
        v->fail(
            "a partitionable node's GPUs start whole and are partitioned on demand; drop `mig`");
      }
      node.devices.mig_strategy = MigStrategy::kNone;  // no device plugin on the node
    }
    node.devices.dra = dra;
  }
  if (auto v = m.opt("taints")) node.taints = parse_taints(*v, b);
  node.unschedulable = m.bool_or("unschedulable", false);
  if (auto v = m.opt("price_per_hour")) price = v->number(0, 1e9);
}

// cluster.topology: the levels above the node (top to bottom, each a node label key, the host
// last) and the rate factor of a multi-pod job by the widest level it spans (docs/scenario-
// format.md#topology). Without it, a pool's `topology:` gets the default levels.
void read_cluster_topology(const std::optional<YamlNode>& n, ClusterTopology& t) {
  std::optional<MapReader> m;
  if (n) m.emplace(n->map());
  t.levels.clear();
  if (auto lv = m ? m->opt("levels") : std::nullopt) {
    for (const YamlNode& l : lv->seq()) {
      MapReader lm = l.map();
      const YamlNode name_node = lm.req("name");
      const YamlNode label_node = lm.req("node_label");
      TopologyLevel level{name_node.str(), label_node.str()};
      if (level.name.empty() || level.name == "cluster") {
        name_node.fail("a level needs a name other than \"\" and \"cluster\"");
      }
      if (level.node_label.empty()) label_node.fail("node_label must not be empty");
      for (const TopologyLevel& other : t.levels) {
        if (other.name == level.name)
          name_node.fail(fmt::format("level {} is listed twice", level.name));
        if (other.node_label == level.node_label) {
          label_node.fail(
              fmt::format("node label {} is already level {}", level.node_label, other.name));
        }
      }
      if (!t.levels.empty() && t.levels.back().node_label == kHostLabel) {
        label_node.fail(fmt::format("{} is the lowest level; list it last", kHostLabel));
      }
      t.levels.push_back(std::move(level));
      lm.finish();
    }
    if (t.levels.empty()) lv->fail("levels must list at least one level");
  } else {
    t.levels = {{"block", std::string(kBlockLabel)},
                {"rack", std::string(kRackLabel)},
                {"nvlink", std::string(kNvlinkLabel)}};
  }
  if (t.levels.back().node_label != kHostLabel) {
    for (const TopologyLevel& l : t.levels) {
      if (l.name == "host") {
        m->req("levels").fail(fmt::format("the level named host must be {}, the last", kHostLabel));
      }
    }
    t.levels.push_back({"host", std::string(kHostLabel)});
  }
  // Default factors [U], assumptions to tune: inside an NVLink domain nothing is lost; a rack's
  // network costs 10 %, a block's 20 %, crossing blocks 30 %.
  auto default_factor = [](const std::string& name) {
    if (name == "rack") return 0.9;
    if (name == "block") return 0.8;
    return 1.0;
  };
  t.slowdown.clear();
  for (const TopologyLevel& l : t.levels)
    t.slowdown.push_back(default_factor(l.name));
  t.cluster_slowdown = 0.7;
  if (auto sd = m ? m->opt("slowdown") : std::nullopt) {
    std::vector<std::string> names;
    for (const TopologyLevel& l : t.levels)
      names.push_back(l.name);
    names.push_back("cluster");
    for (const auto& [key, v] : sd->entries()) {
      const double f = v.number(0, 1);
      if (!(f > 0)) v.fail(fmt::format("the factor of {} must be above 0 and at most 1", key));
      if (key == "cluster") {
        t.cluster_slowdown = f;
        continue;
      }
      const std::int32_t i = t.level_index(key);
      if (i < 0) {
        v.fail(fmt::format("'{}' is not a level{}; the factors are per level: {}", key,
                           did_you_mean(key, names), fmt::join(names, ", ")));
      }
      t.slowdown[static_cast<std::size_t>(i)] = f;
    }
  }
  if (m) m->finish();
}

// A pool's `topology: {racks, nodes_per_rack, blocks}`: its nodes in order fill rack after rack,
// racks fill blocks evenly, and a rack-scale NVLink model's nodes share an NVLink domain per
// nvlink_domain_nodes consecutive nodes of a rack. The labels of the levels named block, rack
// and nvlink are set (unless the pool's labels already set them).
struct PoolTopology {
  std::int64_t racks = 0, nodes_per_rack = 0, blocks = 1, nvlink_nodes = 0;
};

PoolTopology read_pool_topology(const YamlNode& n, const GpuModel* model) {
  MapReader m = n.map();
  PoolTopology t;
  t.racks = m.req("racks").integer(1, 100000);
  // The NVLink domain's size in nodes: the model's (GB200 NVL72: 18), or a smaller rack-scale
  // build of the same GPUs (NVL36: 9 nodes of 4 GPUs).
  std::int64_t domain = model != nullptr ? model->nvlink_domain_nodes : 0;
  if (auto v = m.opt("nvlink_domain_nodes")) {
    if (model == nullptr || model->nvlink_domain_nodes <= 0) {
      v->fail(fmt::format("{} has no NVLink domain across nodes (its NVLink domain is the node)",
                          model != nullptr ? model->name : std::string("a pool without GPUs")));
    }
    domain = v->integer(1, model->nvlink_domain_nodes);
  }
  if (auto v = m.opt("nodes_per_rack")) {
    t.nodes_per_rack = v->integer(1, 100000);
  } else if (domain > 0) {
    t.nodes_per_rack = domain;  // an NVL72 rack is its NVLink domain
  } else {
    m.req("nodes_per_rack");
  }
  t.blocks = m.int_or("blocks", 1, 1, 100000);
  if (t.racks % t.blocks != 0) {
    m.req("blocks").fail(
        fmt::format("{} racks do not split evenly into {} blocks", t.racks, t.blocks));
  }
  if (domain > 0) {
    t.nvlink_nodes = domain;
    if (t.nodes_per_rack % t.nvlink_nodes != 0) {
      m.req("nodes_per_rack")
          .fail(fmt::format("a rack of {} nodes is no whole number of {}'s NVLink domains ({} "
                            "nodes each)",
                            t.nodes_per_rack, model->name, t.nvlink_nodes));
    }
  }
  m.finish();
  return t;
}

void label_pool_node(NodeSpec& n, std::int64_t i, const PoolTopology& t,
                     const ClusterTopology& levels, WorldBuilder& b) {
  const std::int64_t rack = i / t.nodes_per_rack;
  const std::int64_t block = rack / (t.racks / t.blocks);
  auto set = [&](const char* level, const std::string& value) {
    const std::int32_t l = levels.level_index(level);
    if (l < 0) return;
    const Sym key = b.sym(levels.levels[static_cast<std::size_t>(l)].node_label);
    if (!n.labels.has(key)) n.labels.set(key, b.sym(value));
  };
  set("block", fmt::format("{}-block-{}", n.pool, block));
  set("rack", fmt::format("{}-rack-{}", n.pool, rack));
  // GFD publishes nvidia.com/gpu.clique as <cluster UUID>.<clique id>; capsim names it by pool,
  // rack and domain.
  if (t.nvlink_nodes > 0) {
    set("nvlink",
        fmt::format("{}-rack-{}.{}", n.pool, rack, (i % t.nodes_per_rack) / t.nvlink_nodes));
  }
}

// A pool's `autoscaling:` (docs/autoscaling.md): min, max, provisioning_delay,
// scale_down_unneeded_time, priority. `count` is the initial size, clamped to [min, max]
// (default: min).
PoolAutoscaling read_pool_autoscaling(const YamlNode& node, const std::string& pool,
                                      const std::optional<YamlNode>& count_node, Ctx& c) {
  MapReader m = node.map();
  PoolAutoscaling a;
  a.pool = pool;
  a.source = node.where().to_string();
  a.min = static_cast<std::int32_t>(m.req("min").integer(0, 100000));
  const YamlNode max_node = m.req("max");
  a.max = static_cast<std::int32_t>(max_node.integer(1, 100000));
  if (a.max < a.min) max_node.fail(fmt::format("max {} is below min {}", a.max, a.min));
  if (auto d = m.opt("provisioning_delay")) {
    a.provisioning_delay = d->duration();
    if (a.provisioning_delay < 0) d->fail("provisioning_delay must not be negative");
  }
  if (auto d = m.opt("scale_down_unneeded_time")) {
    a.unneeded_time = d->duration();
    if (a.unneeded_time < 0) d->fail("scale_down_unneeded_time must not be negative");
  }
  a.priority = static_cast<std::int32_t>(m.int_or("priority", 0, -1000000, 1000000));
  m.finish();
  a.initial = a.min;
  if (count_node) {
    const std::int64_t count = count_node->integer(0, 100000);
    a.initial = static_cast<std::int32_t>(std::clamp<std::int64_t>(count, a.min, a.max));
    if (a.initial != count) {
      c.s->warnings.push_back(
          fmt::format("{}: pool {}: count {} is outside autoscaling's [{}, {}]; "
                      "the pool starts with {} nodes",
                      count_node->where().to_string(), pool, count, a.min, a.max, a.initial));
    }
  }
  return a;
}

// The top-level `autoscaler:` section: expander, scan_interval, max_nodes_total.
void load_autoscaler(const YamlNode& node, Ctx& c) {
  MapReader m = node.map();
  AutoscalerConfig& cfg = c.b->world().autoscaler;
  ScaleDownConfig& sd = c.s->sim.scale_down;
  cfg.enabled = true;
  if (auto e = m.opt("expander")) {
    const std::string v = e->str();
    if (v == "least-waste") {
      cfg.expander = Expander::kLeastWaste;
    } else if (v == "random") {
      cfg.expander = Expander::kRandom;
    } else if (v == "priority") {
      cfg.expander = Expander::kPriority;
    } else {
      e->fail(fmt::format("unknown expander '{}' (supported: least-waste, random, priority)", v));
    }
  }
  if (auto d = m.opt("scan_interval")) {
    cfg.scan_interval = d->duration();
    if (cfg.scan_interval <= 0) d->fail("scan_interval must be positive");
  }
  cfg.max_nodes_total = static_cast<std::int32_t>(m.int_or("max_nodes_total", 0, 0, 10000000));
  if (auto v = m.opt("scale_down_utilization_threshold"))
    sd.utilization_threshold = v->number(0, 1);
  if (auto v = m.opt("scale_down_gpu_utilization_threshold"))
    sd.gpu_utilization_threshold = v->number(0, 1);
  auto non_negative = [&](const char* key, SimDuration& out) {
    if (auto d = m.opt(key)) {
      out = d->duration();
      if (out < 0) d->fail(fmt::format("{} must not be negative", key));
    }
  };
  non_negative("scale_down_delay_after_add", sd.delay_after_add);
  non_negative("max_graceful_termination", sd.max_graceful_termination);
  if (auto cn = m.opt("consolidation")) {
    // Karpenter's NodePool disruption block, for the autoscaled pools (docs/autoscaling.md).
    MapReader cm = cn->map();
    ConsolidationConfig& k = sd.consolidation;
    k.enabled = true;
    if (auto p = cm.opt("policy")) {
      const std::string v = p->str();
      if (v == "when-empty-or-underutilized") {
        k.policy = ConsolidationPolicy::kWhenEmptyOrUnderutilized;
      } else if (v == "when-empty") {
        k.policy = ConsolidationPolicy::kWhenEmpty;
      } else {
        p->fail(fmt::format(
            "unknown consolidation policy '{}' (supported: when-empty-or-underutilized, "
            "when-empty)",
            v));
      }
    }
    if (auto d = cm.opt("consolidate_after")) {
      k.consolidate_after = d->duration();
      if (k.consolidate_after < 0) d->fail("consolidate_after must not be negative");
    }
    if (auto r = cm.opt("replace")) k.replace = r->boolean();
    cm.finish();
  }
  m.finish();
}

void load_cluster(const YamlNode& cluster, Ctx& c) {
  MapReader m = cluster.map();
  ClusterTopology& topology = c.b->world().topology;
  if (auto t = m.opt("topology")) read_cluster_topology(*t, topology);
  if (auto pools = m.opt("pools")) {
    for (const YamlNode& p : pools->seq()) {
      MapReader pm = p.map();
      const YamlNode pool_name = pm.req("name");
      const std::string pool = pool_name.str();
      // Its nodes are named <pool>-<i>, so the pool's name must make Node names the API server
      // takes.
      if (auto problem = object_name_problem(pool); !problem.empty()) {
        pool_name.fail(
            fmt::format("pool '{}' would name its nodes '{}-0'; {}", pool, pool, problem));
      }
      const std::optional<YamlNode> count_node = pm.opt("count");
      NodeSpec proto;
      proto.pool = pool;
      const GpuModel* model = nullptr;
      std::int32_t gpus = 0;
      std::optional<double> price;
      read_node_fields(pm, c, proto, model, gpus, price);
      std::optional<PoolTopology> pt;
      if (auto t = pm.opt("topology")) {
        if (!topology.enabled()) read_cluster_topology(std::nullopt, topology);
        pt = read_pool_topology(*t, model);
        if (topology.level_index("rack") < 0) {
          t->fail(
              "a pool's topology labels the levels named rack, block and nvlink; "
              "cluster.topology.levels has no level named rack");
        }
        if (model != nullptr && model->node_gpus > 0 && gpus != model->node_gpus) {
          c.s->warnings.push_back(
              fmt::format("{}: {} nodes have {} GPUs each (catalog node_gpus), not {}",
                          t->where().to_string(), model->name, model->node_gpus, gpus));
        }
      }
      // A rack's own price is shared by its nodes, so it is billed with them
      // (docs/scenario-format.md, "Racks"); the shares join the nodes' prices in step 11b.
      if (pt) {
        c.racked_pools.push_back(pool);
        const double rack = c.cost != nullptr ? c.cost->rack_price_per_hour(pool) : 0.0;
        if (rack > 0) {
          c.s->sim.rack_prices.push_back({pool, rack / static_cast<double>(pt->nodes_per_rack)});
        }
      }
      std::optional<PoolAutoscaling> as;
      if (auto a = pm.opt("autoscaling")) as = read_pool_autoscaling(*a, pool, count_node, c);
      if (auto sp = pm.opt("spot")) {
        if (as) {
          sp->fail(
              "a spot pool cannot be autoscaled yet (docs/spot.md): declare spot capacity as a "
              "fixed pool");
        }
        c.spot_pools.emplace_back(pool, *sp);
      }
      std::int64_t count = 0;
      if (as) {
        count = as->max;  // every node the group may have; those beyond `initial` start absent
        if (pt && count != pt->racks * pt->nodes_per_rack) {
          p.fail(fmt::format("autoscaling.max {} is not racks x nodes_per_rack = {} x {}", count,
                             pt->racks, pt->nodes_per_rack));
        }
      } else if (count_node) {
        count = count_node->integer(0, 100000);
        if (pt && count != pt->racks * pt->nodes_per_rack) {
          count_node->fail(fmt::format("count {} is not racks x nodes_per_rack = {} x {}", count,
                                       pt->racks, pt->nodes_per_rack));
        }
      } else if (pt) {
        count = pt->racks * pt->nodes_per_rack;
      } else {
        pm.req("count");
      }
      pm.finish();
      for (std::int64_t i = 0; i < count; ++i) {
        NodeSpec n = proto;
        n.name = fmt::format("{}-{}", pool, i);
        if (pt) label_pool_node(n, i, *pt, topology, *c.b);
        const NodeId id = c.b->add_node(std::move(n), model, gpus, price, p.where());
        if (as) as->nodes.push_back(id);
      }
      if (as) {
        AutoscalerConfig& cfg = c.b->world().autoscaler;
        cfg.enabled = true;
        cfg.pools.push_back(std::move(*as));
      }
    }
  }
  if (auto nodes = m.opt("nodes")) {
    for (const YamlNode& p : nodes->seq()) {
      MapReader nm = p.map();
      NodeSpec n;
      const YamlNode name = nm.req("name");
      n.name = name.str();
      if (auto problem = object_name_problem(n.name); !problem.empty()) {
        name.fail(fmt::format("node '{}' has a name the API server refuses: {}", n.name, problem));
      }
      n.pool = nm.str_or("pool", "");
      const GpuModel* model = nullptr;
      std::int32_t gpus = 0;
      std::optional<double> price;
      read_node_fields(nm, c, n, model, gpus, price);
      nm.finish();
      c.b->add_node(std::move(n), model, gpus, price, p.where());
    }
  }
  if (auto lists = m.opt("node_lists")) {
    // Node list files of public traces: [{path, format: alibaba-openb, pods}].
    for (const YamlNode& l : lists->seq()) {
      MapReader lm = l.map();
      const std::string path = c.resolve(lm.req("path"));
      const std::string format = lm.req("format").str();
      OpenbNodeOptions opt;
      opt.pods = lm.int_or("pods", 110, 1, 100000);
      if (format != "alibaba-openb") {
        lm.req("format").fail(
            fmt::format("unknown node list format '{}' (supported: alibaba-openb)", format));
      }
      lm.finish();
      load_openb_nodes(*c.files, path, *c.b, opt);
    }
  }
  m.finish();
}

// ---- workload ------------------------------------------------------------------------------

TenantSpec read_tenant(const YamlNode& t, Ctx& c, SimDuration window) {
  WorldBuilder& b = *c.b;
  MapReader m = t.map();
  TenantSpec ts;
  ts.name = m.req("name").str();
  ts.queue = m.str_or("queue", ts.name);
  ts.priority_class = m.str_or("priority_class", "");
  ts.rate_per_hour = m.req("rate_per_hour").number(0, 1e7);
  if (auto dc = m.opt("daily_cycle")) {
    MapReader d = dc->map();
    ts.cycle_amplitude = d.num_or("amplitude", 0.5, 0, 1);
    ts.peak_hour = d.num_or("peak_hour", 14, 0, 24);
    d.finish();
  }
  ts.start = m.duration_or("start", 0);
  ts.end = m.duration_or("end", window);
  if (ts.end < ts.start) m.req("end").fail("end is before start");
  auto count = [](const YamlNode& n) { return n.number(0, 64); };
  auto fraction = [](const YamlNode& n) { return n.number(0, 1); };
  auto bytes = [](const YamlNode& n) { return static_cast<double>(n.quantity(0)); };
  if (auto v = m.opt("gpus")) ts.gpus = Distribution::parse(*v, count);
  if (auto v = m.opt("duration")) ts.duration = Distribution::parse(*v, seconds_of);
  if (auto v = m.opt("gpu_util")) ts.gpu_util = Distribution::parse(*v, fraction);
  if (auto v = m.opt("gpu_memory")) ts.gpu_memory = Distribution::parse(*v, bytes);
  if (auto v = m.opt("gpu_sm_fraction")) ts.gpu_sm_fraction = Distribution::parse(*v, fraction);
  if (auto v = m.opt("cpu_per_gpu")) ts.cpu_per_gpu_milli = v->quantity(3);
  if (auto v = m.opt("memory_per_gpu")) ts.memory_per_gpu = v->quantity(0);
  if (auto v = m.opt("cpu_only")) {
    MapReader co = v->map();
    if (auto x = co.opt("cpu")) ts.cpu_milli_cpu_only = x->quantity(3);
    if (auto x = co.opt("memory")) ts.memory_cpu_only = x->quantity(0);
    co.finish();
  }
  ts.fail_probability = m.num_or("fail_probability", 0, 0, 1);
  if (auto v = m.opt("gpu_models")) {
    for (const YamlNode& g : v->seq())
      ts.gpu_models.push_back(b.use_gpu_model(b.gpu_model(g.str(), g.where())));
  }
  if (auto v = m.opt("node_selector")) ts.node_selector = parse_labels(*v, b);
  if (auto v = m.opt("node_affinity")) ts.affinity = parse_node_affinity(*v, b);
  if (auto v = m.opt("tolerations")) ts.tolerations = parse_tolerations(*v, b);
  if (auto v = m.opt("termination_grace")) ts.termination_grace = v->duration();
  if (auto v = m.opt("gpu_resource")) {
    const std::string name = v->str();
    if (!is_device_resource(name)) {
      v->fail(
          fmt::format("'{}' is not a GPU device resource (nvidia.com/gpu, nvidia.com/gpu.shared "
                      "or nvidia.com/mig-<profile>)",
                      name));
    }
    ts.gpu_resource = b.resource(name, v->where());
  }
  m.finish();
  return ts;
}

void load_workload(const YamlNode& w, Ctx& c, SimDuration default_window) {
  MapReader m = w.map();
  if (auto syn = m.opt("synthetic")) {
    MapReader sm = syn->map();
    const SimDuration window = sm.duration_or("window", default_window);
    std::vector<TenantSpec> tenants;
    std::vector<InputLocation> where;
    for (const YamlNode& t : sm.req("tenants").seq()) {
      tenants.push_back(read_tenant(t, c, window));
      where.push_back(t.where());
      for (std::size_t i = 0; i + 1 < tenants.size(); ++i) {
        if (tenants[i].name == tenants.back().name)
          t.fail(fmt::format("duplicate tenant '{}'", tenants.back().name));
      }
    }
    sm.finish();
    std::vector<std::string> sources;
    for (const InputLocation& loc : where)
      sources.push_back(short_location(loc));
    generate_synthetic(tenants, c.s->seed, [&](std::size_t tenant, PodSpec&& p) {
      p.source = sources[tenant];
      c.b->add_pod(std::move(p), where[tenant]);
    });
  }
  if (auto traces = m.opt("traces")) {
    for (const YamlNode& t : traces->seq()) {
      MapReader tm = t.map();
      const std::string path = c.resolve(tm.req("path"));
      const std::string format = tm.str_or("format", "capsim");
      const TraceFormat* f = loader_registry().trace(format);
      if (f == nullptr) {
        tm.req("format").fail(fmt::format("unknown trace format '{}' (supported: {})", format,
                                          loader_registry().trace_names()));
      }
      TraceRequest request{*c.files, path, tm, *c.b, &c.s->warnings};
      f->load(*f, request);
    }
  }
  m.finish();
}

void load_priority_classes(const YamlNode& list, Ctx& c) {
  for (const YamlNode& p : list.seq()) {
    MapReader m = p.map();
    PriorityClassInfo pc;
    pc.name = m.req("name").str();
    pc.value = static_cast<std::int32_t>(m.req("value").integer(-2147483648LL, 1000000000));
    pc.global_default = m.bool_or("global_default", false);
    const std::string policy = m.str_or("preemption_policy", "PreemptLowerPriority");
    if (policy == "Never") {
      pc.preemption_policy = PreemptionPolicy::kNever;
    } else if (policy != "PreemptLowerPriority") {
      m.req("preemption_policy").fail("preemption_policy must be PreemptLowerPriority or Never");
    }
    m.finish();
    c.b->add_priority_class(pc, p.where());
  }
}

void load_scheduler(const YamlNode& sched, Ctx& c) {
  MapReader m = sched.map();
  c.s->default_profile = m.str_or("profile", "default-scheduler");
  auto add_config = [&](const YamlNode& cfg) {
    // A KubeSchedulerConfiguration: profiles plus top-level knobs.
    MapReader cm = cfg.map();
    cm.ignore("apiVersion");
    cm.ignore("kind");
    cm.ignore("leaderElection");
    cm.ignore("clientConnection");
    cm.ignore("parallelism");
    cm.ignore("extenders");
    cm.ignore("percentageOfNodesToScore");
    cm.ignore("podInitialBackoffSeconds");
    cm.ignore("podMaxBackoffSeconds");
    cm.ignore("podMaxInUnschedulablePodsDuration");
    cm.ignore("tieBreak");
    if (auto ps = cm.opt("profiles")) {
      for (const YamlNode& p : ps->seq())
        c.profiles.push_back(p);
    }
    cm.finish();
    c.scheduler_globals = cfg;
  };
  if (auto f = m.opt("config")) {
    const std::string path = c.resolve(*f);
    auto docs = c.files->yaml_docs(path);
    if (docs.empty()) f->fail("the scheduler configuration file is empty");
    add_config(docs.front());
  }
  if (m.has("profiles") || m.has("percentageOfNodesToScore") || m.has("tieBreak") ||
      m.has("podInitialBackoffSeconds") || m.has("podMaxBackoffSeconds") ||
      m.has("podMaxInUnschedulablePodsDuration")) {
    // Inline: the `scheduler` mapping itself carries KubeSchedulerConfiguration fields.
    m.ignore("profiles");
    m.ignore("percentageOfNodesToScore");
    m.ignore("tieBreak");
    m.ignore("podInitialBackoffSeconds");
    m.ignore("podMaxBackoffSeconds");
    m.ignore("podMaxInUnschedulablePodsDuration");
    for (const auto& [k, v] : sched.entries()) {
      if (k == "profiles") {
        for (const YamlNode& p : v.seq())
          c.profiles.push_back(p);
      }
    }
    c.scheduler_globals = sched;
  }
  m.ignore("config");
  m.finish();
}

// `experiment: {kind: fill, inflate_to, shuffle, spacing}` (models/fill_experiment.hpp): the
// workload is rewritten into one-by-one arrivals that never leave, each placed once or failed.
void apply_experiment(const YamlNode& ex, Scenario& s) {
  MapReader m = ex.map();
  YamlNode kind = m.req("kind");
  const ExperimentKind* k = loader_registry().experiment(kind.str());
  if (k == nullptr) {
    kind.fail(fmt::format("unknown experiment kind '{}' (supported: {})", kind.str(),
                          loader_registry().experiment_names()));
  }
  k->apply(m, ex, s);
}

}  // namespace

void apply_fill_experiment(MapReader& m, const YamlNode& ex, Scenario& s) {
  FillOptions fo;
  fo.inflate_to = m.num_or("inflate_to", 0, 0, 1000);
  fo.shuffle = m.bool_or("shuffle", true);
  fo.shuffle_nodes = m.bool_or("shuffle_nodes", true);
  fo.spacing = m.duration_or("spacing", kSecond);
  if (fo.spacing <= 0) m.req("spacing").fail("the spacing between arrivals must be positive");
  m.finish();
  if (!s.world->jobs.empty()) ex.fail("a fill experiment replays pods; the scenario has Jobs");
  if (fo.inflate_to > 0) {
    std::int64_t requested = 0;
    for (const PodSpec& p : s.world->pods)
      requested += pod_gpu_request_milli(p);
    if (requested == 0) ex.fail("inflate_to needs pods that request GPUs");
  }
  s.fill = prepare_fill(*s.world, fo, s.seed);
  s.sim.horizon = s.fill->last_arrival + fo.spacing;
}

std::string scenario_digest(const FileSource& files, const std::string& root,
                            const std::vector<std::string>& overrides) {
  std::string text = files.read_log(root);
  for (const auto& o : overrides)
    text += "--set " + o + "\n";
  return sha256_hex(text);
}

Scenario load_scenario(const std::string& path, const LoadOptions& options) {
  RealFiles files;
  return load_scenario(path, options, files);
}

namespace {

// What the stages of one load share. The builder adds to the scenario's World; the cost model,
// when there is one, prices every node the builder adds.
struct Load {
  const std::string& path;
  const LoadOptions& options;
  FileSource& files;
  Scenario& s;
  Ctx c;
  SimDuration window = kDay;  // the synthetic workload's default window
  std::optional<CostConfig> cost;
  std::optional<WorldBuilder> builder;
  std::optional<YamlNode> experiment;
  DurationRules durations;
  std::optional<YamlNode> failures;     // read in 11b, against the finished World
  std::optional<YamlNode> scaling;      // applied in 10, once the manifests' pods are made
  std::optional<YamlNode> maintenance;  // read in 11b too
  std::optional<YamlNode> checkpoints;
  std::optional<YamlNode> spot;  // the top-level section (seed, trace), read in 11b
};

// 1. The scenario file, the files it `extends` (relative to the extending file: the base's values
//    with this file's merged on top, docs/scenario-format.md) and the --set overrides, as one
//    document whose values still know the file or option they came from.
YamlNode read_document(Load& l) {
  const std::string text = l.files.read(l.path, kCannotOpenScenario);
  for (const auto& o : l.options.overrides)
    l.s.overrides_text += o + "\n";
  auto provenance = std::make_shared<YamlNode::Provenance>();
  std::function<YAML::Node(const std::string&, const std::string&, int)> assemble =
      [&](const std::string& file, const std::string& body, int depth) -> YAML::Node {
    YamlNode d = YamlNode::load_string(body, file);
    if (!d.is_map()) d.fail("a scenario must be a YAML mapping (name, cluster, workload, ...)");
    YAML::Node root = d.raw();
    if (!root["extends"]) return root;
    YamlNode ext(root["extends"], d.file_ptr(), "extends");
    if (depth > 8) ext.fail("extends chains more than 8 files deep (a cycle?)");
    fs::path base_path(path_text(ext));
    if (base_path.is_relative()) base_path = fs::path(file).parent_path() / base_path;
    const std::string base_file = base_path.lexically_normal().string();
    const std::string base_text = l.files.read(base_file, kCannotOpenScenario);
    const std::size_t before = provenance->files.size();
    YAML::Node merged = assemble(base_file, base_text, depth + 1);
    // Everything not yet attributed came from the base file.
    if (provenance->files.size() == before) provenance->files.emplace_back("", base_file);
    root.remove("extends");
    for (auto& p : merge_overlay(merged, root))
      provenance->files.emplace_back(p, file);
    return merged;
  };
  YAML::Node root = assemble(l.path, text, 0);
  for (const auto& o : l.options.overrides)
    provenance->set_options.emplace_back(apply_override(root, o), o);
  return YamlNode(root, std::make_shared<const std::string>(l.path), "")
      .with_provenance(provenance);
}

// 2b. The soft limits (docs/cli.md#limits) on what the raw document asks for, before any node or
//     sample exists: nodes over all pools, and the sample table's rows (horizon / interval, times
//     one series for the cluster and one per pool). --force lifts them.
void check_soft_limits(Load& l, const YamlNode& doc) {
  if (l.options.force) {
    l.files.lift_soft_limits();
    return;
  }
  const YAML::Node cluster = doc.raw()["cluster"];
  const YAML::Node pools = cluster && cluster.IsMap() ? cluster["pools"] : YAML::Node();
  std::int64_t nodes = 0;
  std::int64_t series = 1;
  if (pools && pools.IsSequence()) {
    for (std::size_t i = 0; i < pools.size(); ++i) {
      const YAML::Node count = pools[i].IsMap() ? pools[i]["count"] : YAML::Node();
      ++series;
      if (!count || !count.IsScalar()) continue;
      std::int64_t n = 0;
      if (!YAML::convert<std::int64_t>::decode(count, n) || n < 0) continue;  // read in 5
      constexpr std::int64_t kHuge = std::int64_t{1} << 60;  // saturate: the sum cannot overflow
      nodes = n > kHuge - nodes ? kHuge : nodes + n;
      if (nodes > kSoftMaxNodes) {
        doc.child(count, fmt::format("cluster.pools[{}].count", i))
            .fail(fmt::format("{} nodes in the pools so far, above the limit of {} nodes "
                              "(docs/cli.md#limits); pass --force to run it anyway",
                              nodes, kSoftMaxNodes));
      }
    }
  }
  const RunConfig& sim = l.s.sim;
  if (sim.horizon != kEndOfTime && sim.sample_interval > 0) {
    const std::int64_t samples = sim.horizon / sim.sample_interval;
    if (samples > kSoftMaxSampleRows / series) {
      doc.child(doc.raw()["simulation"], "simulation")
          .fail(fmt::format("horizon / sample_interval = {} samples x {} series is about {} "
                            "sample rows, above the limit of {} (docs/cli.md#limits); raise "
                            "sample_interval, or pass --force to run it anyway",
                            samples, series, samples * series, kSoftMaxSampleRows));
    }
  }
}

// 2. What the run is: name, seed (--seed wins), data_dir (--data-dir wins), simulation options.
void read_run_config(Load& l, MapReader& m) {
  Scenario& s = l.s;
  s.name = m.str_or("name", fs::path(l.path).stem().string());
  s.description = m.str_or("description", "");
  s.seed = static_cast<std::uint64_t>(m.int_or("seed", 1, 0));
  if (l.options.seed) s.seed = *l.options.seed;
  l.c.base = fs::path(l.path).parent_path();
  l.c.files = &l.files;
  l.c.s = &s;
  if (auto d = m.opt("data_dir")) {
    fs::path dp(d->str());
    if (dp.is_relative()) dp = l.c.base / dp;
    l.c.data_dir = dp.lexically_normal().string();
  }
  if (l.options.data_dir) l.c.data_dir = *l.options.data_dir;
  if (auto sim = m.opt("simulation")) {
    MapReader sm = sim->map();
    if (auto hz = sm.opt("horizon")) {
      s.sim.horizon = hz->duration();
      if (s.sim.horizon <= 0) hz->fail("the horizon must be positive");
      l.window = s.sim.horizon;
    }
    s.sim.sample_interval = sm.duration_or("sample_interval", kMinute);
    if (s.sim.sample_interval < kSecond)
      sm.req("sample_interval").fail("the sample interval must be at least 1s");
    s.sim.paranoid = sm.bool_or("paranoid", false);
    sm.finish();
  }
  s.sim.seed = s.seed;
}

// 3. The GPU catalog (built-in plus the scenario's overrides) and the cost model, then the World
//    and its builder: the cost model prices every node the later stages add.
void read_catalog_and_cost(Load& l, MapReader& m) {
  Scenario& s = l.s;
  s.catalog = GpuCatalog::builtin();
  if (auto cat = m.opt("catalog")) {
    MapReader cm = cat->map();
    if (auto f = cm.opt("file")) {
      cm.finish();
      s.catalog.merge_yaml(l.files.yaml(l.c.resolve(*f)));
    } else {
      cm.ignore("models");
      cm.finish();
      s.catalog.merge_yaml(*cat);
    }
  }
  if (auto co = m.opt("cost")) {
    l.cost = CostConfig::parse(*co, s.catalog);
    s.sim.energy = l.cost->energy;
  }
  s.world = std::make_unique<World>();
  WorldBuilder& b = l.builder.emplace(*s.world, s.catalog);
  if (l.cost) {
    b.set_node_pricer([&cost = *l.cost](const NodeSpec& n, const GpuModel* model, std::int32_t gpus,
                                        std::optional<double> price, const InputLocation& where) {
      return cost.node_price_per_hour(n.pool, model, gpus, price, where);
    });
    l.c.cost = &*l.cost;
  }
  l.c.b = &b;
}

// 4. Device configs the nodes refer to (mig-parted, device-plugin sharing) and the device model.
void read_device_configs(Load& l, MapReader& m) {
  Scenario& s = l.s;
  if (auto mc = m.opt("mig_configs")) {
    for (const YamlNode& e : mc->seq()) {
      if (e.is_scalar()) {
        if (!l.c.devices.add_mig_parted_file(l.files.yaml_docs(l.c.resolve(e)), &s.warnings)) {
          e.fail(
              "the file holds no mig-parted configuration (a document with mig-configs, raw or "
              "in a ConfigMap's data)");
        }
      } else {
        l.c.devices.add_mig_parted(e);
      }
    }
  }
  if (auto dp = m.opt("device_plugin_configs")) {
    for (const auto& [name, e] : dp->entries()) {
      if (e.is_scalar()) {  // a file: a raw config registered under `name`, or a ConfigMap
        for (const YamlNode& d : l.files.yaml_docs(l.c.resolve(e)))
          l.c.devices.add_device_plugin(d, name);
      } else {
        l.c.devices.add_device_plugin_inline(e, name);
      }
    }
  }
  if (auto dv = m.opt("devices")) {
    MapReader dm = dv->map();
    s.device_params.context_switch_overhead = dm.num_or("context_switch_overhead", 0.10, 0, 0.9);
    s.device_params.memory_ramp = dm.duration_or("memory_ramp", kMinute);
    if (auto rc = dm.opt("mig_reconfiguration")) {
      MapReader rm = rc->map();
      s.mig_reconfiguration = rm.bool_or("enabled", true);
      const std::string policy = rm.str_or("policy", "pending-demand");
      if (policy != "pending-demand") rm.req("policy").fail("the only policy is pending-demand");
      s.mig_reconfiguration_time = rm.duration_or("duration", 2 * kMinute);
      s.mig_reconfiguration_interval = rm.duration_or("interval", kMinute);
      if (s.mig_reconfiguration_interval < kSecond)
        rm.req("interval").fail("the interval must be at least 1s");
      rm.finish();
    }
    dm.finish();
  }
}

// 5. Priority classes, then the cluster: pools, single nodes, node list files.
void read_cluster(Load& l, MapReader& m) {
  if (auto pcs = m.opt("priority_classes")) load_priority_classes(*pcs, l.c);
  if (auto cl = m.opt("cluster")) load_cluster(*cl, l.c);
  if (auto as = m.opt("autoscaler")) load_autoscaler(*as, l.c);
}

// 6. The durations rules, then Kubernetes manifest files, dispatched on the registry's kinds
//    (core, Kueue, DRA).
void read_manifests(Load& l, MapReader& m) {
  // The `durations:` rules time the manifests' workloads that no annotation times.
  if (auto d = m.opt("durations")) l.durations = DurationRules::parse(*d, l.s.seed);
  if (auto mf = m.opt("manifests")) {
    ManifestOptions mo;
    mo.kinds = &loader_registry().manifests;
    mo.warnings = &l.s.warnings;
    mo.durations = &l.durations;
    mo.horizon = l.s.sim.horizon;
    for (const YamlNode& f : mf->seq())
      load_manifest_file(l.files, l.c.resolve(f), *l.builder, mo);
  }
}

// 7. The workload: synthetic tenants and trace files of the registry's formats.
void read_workload(Load& l, MapReader& m) {
  if (auto wl = m.opt("workload")) load_workload(*wl, l.c, l.window);
}

// 8. Kueue's settings (the scenario's `kueue:` mapping and its Configuration file).
void read_kueue(Load& l, MapReader& m) {
  if (auto k = m.opt("kueue")) {
    load_kueue_section(
        *k, *l.builder, l.files, [&c = l.c](const YamlNode& n) { return c.resolve(n); },
        &l.s.warnings);
  }
}

// 9. The scheduler section (profiles and KubeSchedulerConfiguration knobs). The experiment is
//    read here, applied in 11; every top-level key has now been read, so the rest are unknown.
void read_scheduler(Load& l, MapReader& m) {
  if (auto sc = m.opt("scheduler")) load_scheduler(*sc, l.c);
  l.failures = m.opt("failures");
  l.maintenance = m.opt("maintenance");
  l.checkpoints = m.opt("checkpoints");
  l.spot = m.opt("spot");
  l.scaling = m.opt("scaling");
  l.experiment = m.opt("experiment");
  m.finish();
}

// 10. Cross-references between everything read (priority classes, Kueue, DRA), the cost model's
//     pools, and at least one node.
void finalize(Load& l, const YamlNode& doc) {
  l.builder->finalize();
  if (l.scaling) {
    // Before DRA: a step up's replicas resolve their claims like the first ones.
    apply_scaling(
        *l.scaling, *l.builder, l.files, [&c = l.c](const YamlNode& n) { return c.resolve(n); },
        l.s.sim.horizon, l.options.force, &l.s.warnings);
  }
  index_topology(*l.s.world);
  finalize_dra(*l.builder, &l.s.warnings);
  if (l.cost) {
    std::vector<std::string> pools;
    for (const NodeSpec& n : l.s.world->nodes) {
      if (std::find(pools.begin(), pools.end(), n.pool) == pools.end()) pools.push_back(n.pool);
    }
    l.cost->check_pools(pools, l.c.racked_pools);
  }
  if (l.s.world->nodes.empty())
    doc.fail("the scenario defines no nodes (add cluster.pools, cluster.nodes or Node manifests)");
}

// 11. The experiment rewrites the workload; then every pod must end before the horizon does.
void apply_experiment_and_check_horizon(Load& l, const YamlNode& doc) {
  if (l.experiment) apply_experiment(*l.experiment, l.s);
  for (const PodSpec& p : l.s.world->pods) {
    if (p.duration == kEndOfTime && l.s.sim.horizon == kEndOfTime) {
      doc.fail(fmt::format("pod {} ({}) never finishes, so the scenario needs simulation.horizon",
                           p.name, p.source));
    }
  }
}

// 11b. Failures (their pools, models and trace nodes must exist), checkpoint rules, which
//      also cover the pods an experiment made, maintenance windows (their pools and nodes),
//      spot pools (their discount on node prices), then the racks' shares of their prices.
void read_failures_and_checkpoints(Load& l) {
  if (l.failures) {
    l.s.sim.failures = parse_failures(*l.failures, *l.s.world, l.s.catalog, l.s.seed, l.files,
                                      [&c = l.c](const YamlNode& n) { return c.resolve(n); });
  }
  if (l.checkpoints) apply_checkpoint_rules(*l.checkpoints, *l.s.world);
  if (l.maintenance) l.s.sim.maintenance = parse_maintenance(*l.maintenance, *l.s.world);
  if (!l.c.spot_pools.empty() || l.spot) {
    l.s.sim.spot = parse_spot(l.c.spot_pools, l.spot, *l.s.world, l.s.seed, l.files,
                              [&c = l.c](const YamlNode& n) { return c.resolve(n); });
  }
  // A rack's share joins its nodes' prices after any spot discount, which is the instances'.
  for (const RackPrice& r : l.s.sim.rack_prices) {
    for (NodeSpec& n : l.s.world->nodes) {
      if (n.pool == r.pool) n.price_per_hour += r.per_node_hour;
    }
  }
}

// 12. The scheduler profiles, compiled against the finished World (a profile's args may name
//     resources any source added): errors carry file, line and field, before any run.
void compile_profiles(Load& l) {
  fw::ReasonTable reasons;  // the compile's own; each run interns into a fresh table
  PluginContext ctx{*l.s.world, reasons, l.s.seed};
  l.s.profiles = ProfileSet::compile(l.c.profiles, l.c.scheduler_globals, ctx);
}

}  // namespace

Scenario load_scenario(const std::string& path, const LoadOptions& options, FileSource& files) {
  Scenario s;
  s.path = path;
  Load l{path, options, files, s, {}, kDay, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const YamlNode doc = read_document(l);  // 1
  MapReader m = doc.map();
  read_run_config(l, m);                       // 2
  check_soft_limits(l, doc);                   // 2b
  read_catalog_and_cost(l, m);                 // 3
  read_device_configs(l, m);                   // 4
  read_cluster(l, m);                          // 5
  read_manifests(l, m);                        // 6
  read_workload(l, m);                         // 7
  read_kueue(l, m);                            // 8
  read_scheduler(l, m);                        // 9
  finalize(l, doc);                            // 10
  apply_experiment_and_check_horizon(l, doc);  // 11
  read_failures_and_checkpoints(l);            // 11b
  compile_profiles(l);                         // 12
  // 13. The digest: every file read above, and the overrides.
  s.sha256 = scenario_digest(files, l.c.base.string(), options.overrides);
  return s;
}

}  // namespace capsim
