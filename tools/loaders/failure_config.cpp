#include "tools/loaders/failure_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "models/workload/distribution.hpp"
#include "reports/compare.hpp"
#include "sim/random.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

namespace {

const std::vector<std::string>& cause_names() {
  static const std::vector<std::string> names = {"gpu", "hbm", "nvlink", "nic", "host"};
  return names;
}

std::optional<FailureCause> cause_of(std::string_view name) {
  for (std::size_t i = 0; i < cause_names().size(); ++i) {
    if (cause_names()[i] == name) return static_cast<FailureCause>(i);
  }
  return std::nullopt;
}

std::string cause_error(std::string_view name) {
  return fmt::format("unknown failure cause '{}'{} (causes: gpu, hbm, nvlink, nic, host)", name,
                     did_you_mean(name, cause_names()));
}

RepairDraw parse_repair(const YamlNode& n) {
  Distribution d =
      Distribution::parse(n, [](const YamlNode& v) { return to_seconds(v.duration()); });
  return [d](RandomStream& rng) { return d.sample(rng); };
}

}  // namespace

FailureConfig parse_failures(const YamlNode& section, const World& world, const GpuCatalog& catalog,
                             std::uint64_t run_seed, FileSource& files,
                             const std::function<std::string(const YamlNode&)>& resolve) {
  FailureConfig out;
  MapReader m = section.map();
  // The default seed is a draw of its own stream of the run seed: changing `failures.seed`
  // changes the failures only, and the run seed still changes everything.
  out.seed = RandomStream(run_seed, "failures").next_u64();
  if (auto s = m.opt("seed")) out.seed = static_cast<std::uint64_t>(s->integer(0));
  std::vector<std::string> pools;
  for (const NodeSpec& n : world.nodes) {
    if (std::find(pools.begin(), pools.end(), n.pool) == pools.end()) pools.push_back(n.pool);
  }
  if (auto rates = m.opt("rates")) {
    for (const YamlNode& item : rates->seq()) {
      MapReader r = item.map();
      FailureRate rate;
      rate.source = short_location(item.where());
      if (auto p = r.opt("pool")) {
        rate.pool = p->str();
        if (std::find(pools.begin(), pools.end(), rate.pool) == pools.end())
          p->fail(
              fmt::format("no node is in pool '{}'{}", rate.pool, did_you_mean(rate.pool, pools)));
      }
      if (auto g = r.opt("gpu_model")) {
        const GpuModel* model = catalog.find(g->str());
        if (model == nullptr) g->fail(fmt::format("unknown GPU model '{}'", g->str()));
        for (std::size_t i = 0; i < world.gpu_models.size(); ++i) {
          if (world.gpu_models[i].name == model->name) rate.gpu_model = static_cast<GpuModelId>(i);
        }
        if (rate.gpu_model == kNoGpuModel)
          g->fail(fmt::format("no node of the scenario has GPU model {}", model->name));
      }
      const YamlNode c = r.req("cause");
      const auto cause = cause_of(c.str());
      if (!cause) c.fail(cause_error(c.str()));
      rate.cause = *cause;
      const bool per_node = node_scoped(rate.cause);
      const char* own = per_node ? "per_node_day" : "per_gpu_day";
      const char* other = per_node ? "per_gpu_day" : "per_node_day";
      if (auto o = r.opt(other)) {
        o->fail(fmt::format("cause {} fails {}: give {} or mtbf", c.str(),
                            per_node ? "whole nodes" : "single GPUs", own));
      }
      auto per_day = r.opt(own);
      auto mtbf = r.opt("mtbf");
      if (per_day && mtbf) mtbf->fail(fmt::format("give {} or mtbf, not both", own));
      if (!per_day && !mtbf) item.fail(fmt::format("a rate needs {} or mtbf", own));
      if (per_day) rate.per_day = per_day->number(0);
      if (mtbf) {
        const SimDuration t = mtbf->duration();
        if (t <= 0) mtbf->fail("the MTBF must be positive");
        rate.per_day = static_cast<double>(kDay) / static_cast<double>(t);
      }
      rate.repair = parse_repair(r.req("repair"));
      r.finish();
      out.rates.push_back(std::move(rate));
    }
  }
  if (auto t = m.opt("trace")) {
    out.trace = read_failure_trace(files.csv(resolve(*t), CsvOptions{'#', true}), world);
  }
  m.finish();
  return out;
}

std::vector<TracedFailure> read_failure_trace(const CsvFile& csv, const World& world) {
  static const std::vector<std::string> columns = {"time", "node", "gpu", "cause", "repair"};
  for (const std::string& h : csv.header()) {
    if (std::find(columns.begin(), columns.end(), h) == columns.end())
      csv.fail_header(fmt::format("unknown column '{}'{}", h, did_you_mean(h, columns)));
  }
  for (const char* need : {"time", "node", "cause", "repair"}) {
    if (!csv.has_column(need)) csv.fail_header(fmt::format("the column '{}' is missing", need));
  }
  std::vector<TracedFailure> out;
  for (const CsvRow& row : csv.rows()) {
    TracedFailure f;
    f.source = fmt::format("{}:{}", csv.name(), row.line);
    auto duration = [&](std::string_view col) {
      auto d = parse_duration(csv.field(row, col));
      if (!d.ok()) csv.fail(row, col, d.error());
      if (d.value() < 0) csv.fail(row, col, "must not be negative");
      return d.value();
    };
    f.time = duration("time");
    f.repair = duration("repair");
    const std::string& node = csv.field(row, "node");
    for (NodeId n = 0; n < world.nodes.size(); ++n) {
      if (world.nodes[n].name == node) f.node = n;
    }
    if (f.node == kNoNode) csv.fail(row, "node", fmt::format("no node is named '{}'", node));
    const std::string& cause = csv.field(row, "cause");
    const auto c = cause_of(cause);
    if (!c) csv.fail(row, "cause", cause_error(cause));
    f.cause = *c;
    const std::string gpu = csv.field_or(row, "gpu", "");
    if (!gpu.empty()) {
      if (node_scoped(f.cause))
        csv.fail(row, "gpu", fmt::format("cause {} fails the whole node: leave gpu empty", cause));
      char* end = nullptr;
      const long g = std::strtol(gpu.c_str(), &end, 10);
      if (end == gpu.c_str() || *end != '\0' || g < 0)
        csv.fail(row, "gpu", fmt::format("'{}' is not a GPU index", gpu));
      if (g >= world.nodes[f.node].gpu_count) {
        csv.fail(row, "gpu",
                 fmt::format("node {} has {} GPU(s)", node, world.nodes[f.node].gpu_count));
      }
      f.gpu = static_cast<std::int32_t>(g);
    } else if (!node_scoped(f.cause)) {
      csv.fail(row, "gpu", fmt::format("cause {} fails one GPU: give its index", cause));
    }
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TracedFailure& a, const TracedFailure& b) { return a.time < b.time; });
  return out;
}

std::string check_failure_trace(const CsvFile& csv) {
  // The nodes are unknown here: check every other column against an empty fleet's rules.
  std::size_t rows = 0;
  for (const CsvRow& row : csv.rows()) {
    for (const char* col : {"time", "repair"}) {
      auto d = parse_duration(csv.field(row, col));
      if (!d.ok()) csv.fail(row, col, d.error());
    }
    if (!cause_of(csv.field(row, "cause")))
      csv.fail(row, "cause", cause_error(csv.field(row, "cause")));
    ++rows;
  }
  return fmt::format("a failure trace of {} failure(s)", rows);
}

void apply_checkpoint_rules(const YamlNode& list, World& world) {
  struct Rule {
    std::optional<std::string> queue, name, job;
    CheckpointPolicy policy;
  };
  std::vector<Rule> rules;
  for (const YamlNode& item : list.seq()) {
    MapReader r = item.map();
    Rule rule;
    if (auto m = r.opt("match")) {
      MapReader mr = m->map();
      if (auto q = mr.opt("queue")) rule.queue = q->str();
      if (auto n = mr.opt("name")) rule.name = n->str();
      if (auto j = mr.opt("job")) rule.job = j->str();
      mr.finish();
    }
    const YamlNode iv = r.req("interval");
    rule.policy.interval = iv.duration();
    if (rule.policy.interval <= 0) iv.fail("the checkpoint interval must be positive");
    rule.policy.cost = r.duration_or("cost", 0);
    rule.policy.restart = r.duration_or("restart", 0);
    if (rule.policy.cost < 0) r.req("cost").fail("must not be negative");
    if (rule.policy.restart < 0) r.req("restart").fail("must not be negative");
    r.finish();
    rules.push_back(std::move(rule));
  }
  auto apply = [&](PodSpec& p) {
    if (p.checkpoint.enabled()) return;  // its capsim.io/checkpoint-* annotations win
    for (const Rule& rule : rules) {
      if (rule.queue && *rule.queue != p.queue) continue;
      if (rule.name && !glob_match(*rule.name, p.name)) continue;
      if (rule.job && !glob_match(*rule.job, p.job_name)) continue;
      p.checkpoint = rule.policy;
      return;
    }
  };
  for (PodSpec& p : world.pods)
    apply(p);
  for (JobSpec& j : world.jobs)
    apply(j.pod_template);
}

}  // namespace capsim
