#include "tools/loaders/maintenance_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "reports/compare.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

MaintenanceConfig parse_maintenance(const YamlNode& section, const World& world) {
  MaintenanceConfig out;
  std::vector<std::string> pools;
  std::vector<std::string> node_names;
  for (const NodeSpec& n : world.nodes) {
    if (std::find(pools.begin(), pools.end(), n.pool) == pools.end()) pools.push_back(n.pool);
    node_names.push_back(n.name);
  }
  std::set<std::string> names;
  for (const YamlNode& item : section.seq()) {
    MapReader r = item.map();
    MaintenanceWindow w;
    w.source = short_location(item.where());
    const YamlNode name = r.req("name");
    w.name = name.str();
    if (w.name.empty()) name.fail("a maintenance window needs a name");
    if (!names.insert(w.name).second)
      name.fail(fmt::format("a maintenance window named '{}' is already defined", w.name));
    w.start = r.req("start").duration();
    const std::optional<YamlNode> pool = r.opt("pool");
    const std::optional<YamlNode> nodes = r.opt("nodes");
    if (pool && nodes) nodes->fail("give `pool` or `nodes`, not both");
    if (pool) {
      const std::string p = pool->str();
      if (std::find(pools.begin(), pools.end(), p) == pools.end())
        pool->fail(fmt::format("no node is in pool '{}'{}", p, did_you_mean(p, pools)));
      for (NodeId i = 0; i < world.nodes.size(); ++i) {
        if (world.nodes[i].pool == p) w.nodes.push_back(i);
      }
    } else if (nodes) {
      for (const YamlNode& n : nodes->seq()) {
        const std::string nn = n.str();
        const auto it = std::find(node_names.begin(), node_names.end(), nn);
        if (it == node_names.end())
          n.fail(fmt::format("no node is named '{}'{}", nn, did_you_mean(nn, node_names)));
        const auto id = static_cast<NodeId>(it - node_names.begin());
        if (std::find(w.nodes.begin(), w.nodes.end(), id) != w.nodes.end())
          n.fail(fmt::format("node '{}' is named twice", nn));
        w.nodes.push_back(id);
      }
      if (w.nodes.empty()) nodes->fail("`nodes` names no node");
    } else {
      for (NodeId i = 0; i < world.nodes.size(); ++i)
        w.nodes.push_back(i);
    }
    if (auto mp = r.opt("max_parallel"))
      w.max_parallel = static_cast<std::int32_t>(mp->integer(1, 1 << 20));
    if (auto d = r.opt("duration")) w.duration = d->duration();
    if (auto t = r.opt("drain_timeout")) w.drain_timeout = t->duration();
    if (auto ot = r.opt("on_timeout")) {
      const std::string v = ot->str();
      if (v == "keep-cordoned") {
        w.keep_cordoned_on_timeout = true;
      } else if (v != "uncordon") {
        ot->fail(fmt::format("unknown on_timeout '{}'{}; use uncordon or keep-cordoned", v,
                             did_you_mean(v, {"uncordon", "keep-cordoned"})));
      }
    }
    r.finish();
    out.windows.push_back(std::move(w));
  }
  return out;
}

}  // namespace capsim
