#include "tools/loaders/spot_config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/workload/distribution.hpp"
#include "reports/compare.hpp"
#include "sim/random.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

namespace {

SpotPool read_spot_pool(const std::string& pool, const YamlNode& node) {
  SpotPool sp;
  sp.pool = pool;
  sp.source = short_location(node.where());
  MapReader m = node.map();
  sp.discount = m.req("discount").number(0, 1);
  if (auto r = m.opt("reclaim")) {
    MapReader rm = r->map();
    auto per_day = rm.opt("per_node_day");
    auto mtbr = rm.opt("mtbr");
    if (per_day && mtbr) mtbr->fail("give per_node_day or mtbr, not both");
    if (!per_day && !mtbr) r->fail("reclaim needs per_node_day or mtbr");
    if (per_day) sp.per_node_day = per_day->number(0);
    if (mtbr) {
      const SimDuration t = mtbr->duration();
      if (t <= 0) mtbr->fail("the mean time between reclaims must be positive");
      sp.per_node_day = static_cast<double>(kDay) / static_cast<double>(t);
    }
    rm.finish();
  }
  if (auto n = m.opt("notice")) {
    sp.notice = n->duration();
    if (sp.notice < 0) n->fail("the notice must not be negative");
  }
  if (auto b = m.opt("return_after")) {
    Distribution d =
        Distribution::parse(*b, [](const YamlNode& v) { return to_seconds(v.duration()); });
    sp.return_after = [d](RandomStream& rng) { return d.sample(rng); };
  }
  m.finish();
  return sp;
}

}  // namespace

SpotConfig parse_spot(const std::vector<std::pair<std::string, YamlNode>>& pools,
                      const std::optional<YamlNode>& section, World& world, std::uint64_t run_seed,
                      FileSource& files,
                      const std::function<std::string(const YamlNode&)>& resolve) {
  SpotConfig out;
  // The default seed is a draw of its own stream of the run seed: changing `spot.seed` changes
  // the reclaims only.
  out.seed = RandomStream(run_seed, "spot").next_u64();
  for (const auto& [pool, node] : pools) {
    out.pools.push_back(read_spot_pool(pool, node));
    const double factor = 1.0 - out.pools.back().discount;
    for (NodeSpec& n : world.nodes) {
      if (n.pool == pool) n.price_per_hour *= factor;  // on-demand x (1 - discount)
    }
  }
  if (!section) return out;
  MapReader m = section->map();
  if (out.pools.empty())
    section->fail("spot: no pool is declared spot (give a pool `spot: {discount, ...}`)");
  if (auto s = m.opt("seed")) out.seed = static_cast<std::uint64_t>(s->integer(0));
  if (auto t = m.opt("trace")) {
    out.trace = read_reclaim_trace(files.csv(resolve(*t), CsvOptions{'#', true}), world, out);
  }
  m.finish();
  return out;
}

std::vector<TracedReclaim> read_reclaim_trace(const CsvFile& csv, const World& world,
                                              const SpotConfig& config) {
  static const std::vector<std::string> columns = {"time", "node", "notice", "return_after"};
  for (const std::string& h : csv.header()) {
    if (std::find(columns.begin(), columns.end(), h) == columns.end())
      csv.fail_header(fmt::format("unknown column '{}'{}", h, did_you_mean(h, columns)));
  }
  for (const char* need : {"time", "node"}) {
    if (!csv.has_column(need)) csv.fail_header(fmt::format("the column '{}' is missing", need));
  }
  std::vector<TracedReclaim> out;
  for (const CsvRow& row : csv.rows()) {
    TracedReclaim r;
    r.source = fmt::format("{}:{}", csv.name(), row.line);
    auto duration = [&](std::string_view col, const std::string& text) {
      auto d = parse_duration(text);
      if (!d.ok()) csv.fail(row, col, d.error());
      if (d.value() < 0) csv.fail(row, col, "must not be negative");
      return d.value();
    };
    r.time = duration("time", csv.field(row, "time"));
    const std::string& node = csv.field(row, "node");
    for (NodeId n = 0; n < world.nodes.size(); ++n) {
      if (world.nodes[n].name == node) r.node = n;
    }
    if (r.node == kNoNode) csv.fail(row, "node", fmt::format("no node is named '{}'", node));
    const std::string& pool = world.nodes[r.node].pool;
    const auto sp = std::find_if(config.pools.begin(), config.pools.end(),
                                 [&](const SpotPool& p) { return p.pool == pool; });
    if (sp == config.pools.end()) {
      csv.fail(row, "node",
               fmt::format("node {} is in pool '{}', which is not a spot pool", node, pool));
    }
    const std::string notice = csv.field_or(row, "notice", "");
    r.notice = notice.empty() ? sp->notice : duration("notice", notice);
    const std::string back = csv.field_or(row, "return_after", "");
    r.return_after = back.empty() ? -1 : duration("return_after", back);
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TracedReclaim& a, const TracedReclaim& b) { return a.time < b.time; });
  return out;
}

}  // namespace capsim
