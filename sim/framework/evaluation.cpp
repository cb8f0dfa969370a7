#include "sim/framework/evaluation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"

namespace capsim::fw {

namespace {

template <typename Iface>
Iface* as(const Framework& fw, std::size_t i) {
  auto* p = dynamic_cast<Iface*>(fw.config().plugins[i].get());
  CAPSIM_CHECK(p != nullptr, "a profile lists a plugin at a point it does not implement");
  return p;
}

PluginVerdict verdict(std::size_t plugin, const Status& s, const ReasonTable& reasons) {
  PluginVerdict v{plugin, s.code, {}};
  for (std::uint8_t k = 0; k < s.count; ++k) {
    if (k > 0) v.reason += ", ";
    v.reason += reasons.text(s.reasons[k]);
  }
  return v;
}

std::string error_text(const Framework& fw, const PluginVerdict& v) {
  return fmt::format("{}: {}", fw.plugin(v.plugin).name(), v.reason);
}

}  // namespace

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kSkip:
      return "Skip";
  }
  return "Error";
}

PodEvaluation evaluate_pod(const Framework& fw, const Cluster& cluster, const ReasonTable& reasons,
                           PodId pod, const EvaluationContext& context) {
  const ProfileConfig& cfg = fw.config();
  const PodSpec& spec = cluster.spec(pod);
  const Snapshot snap(cluster);
  const auto& nodes = cluster.nodes();
  CycleState state(fw.plugin_count());
  state.begin_cycle(pod);

  PodEvaluation ev;
  ev.pod = pod;
  ev.nodes.resize(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n)
    ev.nodes[n].node = static_cast<NodeId>(n);

  // PreFilter: every plugin; a Skip skips its Filter, as Framework::run_pre_filter does.
  for (std::size_t i : cfg.pre_filter) {
    const Status s = as<PreFilterPlugin>(fw, i)->pre_filter(state, spec, snap);
    if (s.code == Code::kSkip) state.skip_filter().set(i);
    ev.pre_filter.push_back(verdict(i, s, reasons));
    if (s.code == Code::kError && ev.error.empty()) ev.error = error_text(fw, ev.pre_filter.back());
    if (s.is_rejection()) ev.pre_filter_rejected = true;
  }
  if (ev.pre_filter_rejected || !ev.error.empty()) return ev;

  // Filter: every plugin on every node, on a copy holding the nominated pods that count
  // (Scheduler::filter_with_nominated's rule: others', with priority >= the pod's).
  std::unordered_map<NodeId, std::vector<PodId>> nominated_here;
  if (context.nominations != nullptr) {
    for (const auto& [other, node] : *context.nominations) {
      if (other == pod || node == kNoNode || node >= nodes.size()) continue;
      if (cluster.spec(other).priority < spec.priority) continue;
      nominated_here[node].push_back(other);
    }
  }
  NodeInfo scratch;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    NodeEvaluation& ne = ev.nodes[n];
    const NodeInfo* node = &nodes[n];
    if (auto it = nominated_here.find(static_cast<NodeId>(n)); it != nominated_here.end()) {
      scratch = nodes[n];
      for (PodId other : it->second) {
        scratch.add_requests(cluster.spec(other));
        scratch.pods.push_back(other);
      }
      node = &scratch;
    }
    for (std::size_t i : cfg.filter) {
      Status s = state.skip_filter().test(i) ? Status::skip()
                                             : as<FilterPlugin>(fw, i)->filter(state, spec, *node);
      ne.filter.push_back(verdict(i, s, reasons));
      if (s.code == Code::kError && ev.error.empty()) ev.error = error_text(fw, ne.filter.back());
      if ((s.is_rejection() || s.code == Code::kError) && ne.first_rejection < 0) {
        ne.first_rejection = static_cast<std::int32_t>(ne.filter.size() - 1);
      }
    }
    ne.feasible = ne.first_rejection < 0;
  }
  if (!ev.error.empty()) return ev;

  // The scheduler's evaluation order: from the rotating start index.
  std::vector<NodeId> feasible;
  const std::size_t count = nodes.size();
  for (std::size_t k = 0; k < count; ++k) {
    const auto id = static_cast<NodeId>((context.start_index + k) % count);
    if (ev.nodes[id].feasible) feasible.push_back(id);
  }
  if (feasible.empty()) return ev;

  // PreScore over the feasible nodes; a Skip skips the plugin's Score.
  for (std::size_t i : cfg.pre_score) {
    const Status s = as<PreScorePlugin>(fw, i)->pre_score(state, spec, feasible, snap);
    if (s.code == Code::kSkip) state.skip_score().set(i);
    ev.pre_score.push_back(verdict(i, s, reasons));
    if (!s.is_success() && s.code != Code::kSkip && ev.error.empty()) {
      ev.error = error_text(fw, ev.pre_score.back());
    }
  }
  if (!ev.error.empty()) return ev;

  // Score, NormalizeScore and the weights, plugin by plugin (Framework::run_score's order).
  std::vector<std::int64_t> raw(feasible.size()), normalized(feasible.size());
  for (auto [i, weight] : cfg.score) {
    const bool skipped = state.skip_score().test(i);
    const auto* plugin = as<ScorePlugin>(fw, i);
    for (std::size_t k = 0; k < feasible.size(); ++k)
      raw[k] = skipped ? 0 : plugin->score(state, spec, nodes[feasible[k]]);
    normalized = raw;
    if (!skipped && plugin->has_normalize()) plugin->normalize(state, spec, normalized);
    for (std::size_t k = 0; k < feasible.size(); ++k) {
      NodeEvaluation& ne = ev.nodes[feasible[k]];
      ne.score.push_back({i, raw[k], normalized[k], weight, skipped});
      if (!skipped) ne.total += normalized[k] * weight;
    }
  }

  // selectHost.
  std::int64_t best = ev.nodes[feasible.front()].total;
  for (NodeId id : feasible)
    best = std::max(best, ev.nodes[id].total);
  for (NodeId id : feasible) {
    if (ev.nodes[id].total == best) ev.top.push_back(id);
  }
  ev.selected = ev.top.front();
  if (context.nominations != nullptr) {
    if (auto it = context.nominations->find(pod);
        it != context.nominations->end() && it->second < count && ev.nodes[it->second].feasible) {
      ev.selected = it->second;
      ev.nominated_selected = true;
    }
  }
  return ev;
}

}  // namespace capsim::fw
