// `capsim score SCENARIO.yaml --pod NAME [--at TIME]`: simulates the scenario up to TIME (every
// event before it; default: the pod's arrival), then evaluates the pod there against every node
// with every plugin of the profile, without binding it (sim/framework/evaluation.hpp), and prints
// what each plugin said: a table, or JSON with --json (the field names are a contract:
// docs/cli.md).
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <deque>
#include <iostream>
#include <map>
#include <optional>

#include "models/yaml_reader.hpp"
#include "sim/framework/evaluation.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/capsim/runner.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

// Nodes beyond this are grouped by identical filter outcome unless --all-nodes.
constexpr std::size_t kListedNodes = 20;

std::string qualified(const PodSpec& p) {
  return p.namespace_ + "/" + p.name;
}

// The pod named `name` ("ns/name" or a name unique over namespaces) among `pods`; kNoPod when
// there is none. Throws UsageError when a bare name is in several namespaces.
PodId find_pod(const std::deque<PodSpec>& pods, const std::string& name) {
  const bool has_ns = name.find('/') != std::string::npos;
  PodId found = kNoPod;
  std::vector<std::string> all;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const std::string q = qualified(pods[i]);
    if ((has_ns ? q : pods[i].name) != name) continue;
    if (found != kNoPod) {
      throw UsageError(
          fmt::format("--pod {}: pods of that name are in several namespaces ({} and "
                      "{}); give namespace/name",
                      name, qualified(pods[found]), q));
    }
    found = static_cast<PodId>(i);
  }
  return found;
}

std::string suggestion(const std::deque<PodSpec>& pods, const std::string& name) {
  std::vector<std::string> names;
  names.reserve(pods.size());
  const bool has_ns = name.find('/') != std::string::npos;
  for (const PodSpec& p : pods)
    names.push_back(has_ns ? qualified(p) : p.name);
  return did_you_mean(name, names);
}

struct Evaluated {
  fw::PodEvaluation ev;
  std::vector<std::string> plugin_names;  // by plugin index
  std::vector<std::string> node_names;    // by node id
  std::string pod;
  std::string profile;
  bool random_tie_break = false;
  std::string phase;      // the pod's phase at TIME
  std::string nominated;  // the node its earlier preemption nominated, if any
};

std::string verdicts_json(const std::vector<fw::PluginVerdict>& vs, const Evaluated& e) {
  std::string s = "[";
  for (std::size_t k = 0; k < vs.size(); ++k) {
    s += fmt::format("{}{{\"plugin\": \"{}\", \"code\": \"{}\", \"reason\": \"{}\"}}",
                     k ? ", " : "", json_escape(e.plugin_names[vs[k].plugin]),
                     fw::code_name(vs[k].code), json_escape(vs[k].reason));
  }
  return s + "]";
}

void print_json(const Evaluated& e, SimTime at) {
  const fw::PodEvaluation& ev = e.ev;
  std::string s = "{";
  s += fmt::format("\"pod\": \"{}\", \"time_s\": {}, \"profile\": \"{}\", \"phase\": \"{}\",\n",
                   json_escape(e.pod), to_seconds(at), json_escape(e.profile), e.phase);
  s += e.nominated.empty()
           ? std::string(" \"nominated_node\": null,\n")
           : fmt::format(" \"nominated_node\": \"{}\",\n", json_escape(e.nominated));
  s += fmt::format(" \"prefilter\": {},\n", verdicts_json(ev.pre_filter, e));
  s += " \"nodes\": [";
  for (std::size_t n = 0; n < ev.nodes.size(); ++n) {
    const fw::NodeEvaluation& ne = ev.nodes[n];
    s += fmt::format("{}\n  {{\"node\": \"{}\", \"feasible\": {}, \"filter\": {}", n ? "," : "",
                     json_escape(e.node_names[ne.node]), ne.feasible ? "true" : "false",
                     verdicts_json(ne.filter, e));
    if (ne.first_rejection >= 0) {
      s += fmt::format(
          ", \"rejected_by\": \"{}\"",
          json_escape(
              e.plugin_names[ne.filter[static_cast<std::size_t>(ne.first_rejection)].plugin]));
    }
    s += ",\n   \"score\": [";
    for (std::size_t k = 0; k < ne.score.size(); ++k) {
      const fw::ScoreVerdict& v = ne.score[k];
      s += fmt::format(
          "{}{{\"plugin\": \"{}\", \"raw\": {}, \"normalized\": {}, \"weight\": {}, "
          "\"skipped\": {}}}",
          k ? ", " : "", json_escape(e.plugin_names[v.plugin]), v.raw, v.normalized, v.weight,
          v.skipped ? "true" : "false");
    }
    s += fmt::format("], \"total\": {}}}", ne.total);
  }
  s += "],\n";
  std::vector<std::string> top;
  for (NodeId id : ev.top)
    top.push_back(fmt::format("\"{}\"", json_escape(e.node_names[id])));
  s += fmt::format(" \"top_nodes\": [{}], \"tie_break\": \"{}\",\n", fmt::join(top, ", "),
                   e.random_tie_break ? "random" : "first");
  if (!ev.error.empty()) s += fmt::format(" \"error\": \"{}\",\n", json_escape(ev.error));
  s += ev.selected == kNoNode
           ? std::string(" \"selected_node\": null}\n")
           : fmt::format(" \"selected_node\": \"{}\"}}\n", json_escape(e.node_names[ev.selected]));
  std::cout << s;
}

std::string short_code(fw::Code c) {
  switch (c) {
    case fw::Code::kSuccess:
      return "ok";
    case fw::Code::kSkip:
      return "skip";
    case fw::Code::kUnschedulable:
      return "NO";
    case fw::Code::kUnschedulableAndUnresolvable:
      return "NO!";
    case fw::Code::kError:
      return "ERROR";
  }
  return "?";
}

// One line per rejecting plugin of a node (or a group of nodes with the same outcome).
std::string rejections(const fw::NodeEvaluation& ne, const Evaluated& e) {
  std::vector<std::string> parts;
  for (const fw::PluginVerdict& v : ne.filter) {
    if (v.code == fw::Code::kSuccess || v.code == fw::Code::kSkip) continue;
    parts.push_back(fmt::format("{}: {}", e.plugin_names[v.plugin], v.reason));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void print_table(const Evaluated& e, SimTime at, bool all_nodes) {
  const fw::PodEvaluation& ev = e.ev;
  std::size_t feasible = 0;
  for (const auto& ne : ev.nodes)
    feasible += ne.feasible ? 1 : 0;
  std::cout << fmt::format("capsim score: pod {} ({}{}) at {}, profile {}: {}/{} nodes feasible\n",
                           e.pod, e.phase,
                           e.nominated.empty() ? "" : ", nominated to " + e.nominated,
                           format_duration(at), e.profile, feasible, ev.nodes.size());
  if (!ev.pre_filter.empty()) {
    std::vector<std::string> parts;
    for (const auto& v : ev.pre_filter) {
      parts.push_back(fmt::format("{} {}{}", e.plugin_names[v.plugin], fw::code_name(v.code),
                                  v.reason.empty() ? "" : " (" + v.reason + ")"));
    }
    std::cout << fmt::format("PreFilter: {}\n", fmt::join(parts, ", "));
  }
  if (!ev.error.empty()) std::cout << fmt::format("error: {}\n", ev.error);
  if (ev.pre_filter_rejected) {
    std::cout << "PreFilter rejected the pod: no node is filtered.\n";
    return;
  }
  std::size_t name_w = 4;
  for (const auto& n : e.node_names)
    name_w = std::max(name_w, n.size());
  name_w += 2;  // room for the " *" of the selected node

  // Filter: nodes x plugins ("ok", "skip", "NO" unschedulable, "NO!" unresolvable).
  const std::vector<fw::PluginVerdict>* header = nullptr;
  for (const auto& ne : ev.nodes) {
    if (!ne.filter.empty()) header = &ne.filter;
  }
  if (header != nullptr) {
    std::cout << "\nFilter (every plugin on every node; NO unschedulable, NO! unresolvable; "
                 "a scheduling cycle reports the first NO):\n";
    std::string line = fmt::format(
        "  {:<{}}", all_nodes || ev.nodes.size() <= kListedNodes ? "NODE" : "NODES", name_w);
    for (const auto& v : *header)
      line += fmt::format(" {}", e.plugin_names[v.plugin]);
    std::cout << line << "\n";
    auto row = [&](const std::string& label, const fw::NodeEvaluation& ne) {
      std::string l = fmt::format("  {:<{}}", label, name_w);
      for (const auto& v : ne.filter)
        l += fmt::format(" {:<{}}", short_code(v.code), e.plugin_names[v.plugin].size());
      const std::string why = rejections(ne, e);
      if (!why.empty()) l += "  " + why;
      l.erase(l.find_last_not_of(' ') + 1);
      std::cout << l << "\n";
    };
    if (all_nodes || ev.nodes.size() <= kListedNodes) {
      for (const auto& ne : ev.nodes)
        row(e.node_names[ne.node] + (ne.node == ev.selected ? " *" : ""), ne);
    } else {
      // Group nodes by identical filter outcome, in order of first appearance.
      std::map<std::string, std::size_t> index;
      std::vector<std::vector<NodeId>> groups;
      for (const auto& ne : ev.nodes) {
        std::string key;
        for (const auto& v : ne.filter)
          key += fmt::format("{}|{}|", static_cast<int>(v.code), v.reason);
        auto [it, fresh] = index.emplace(key, groups.size());
        if (fresh) groups.emplace_back();
        groups[it->second].push_back(ne.node);
      }
      for (const auto& g : groups) {
        std::string label = fmt::format("{} node{}", g.size(), g.size() == 1 ? "" : "s");
        row(label, ev.nodes[g.front()]);
        std::vector<std::string> names;
        for (std::size_t k = 0; k < std::min<std::size_t>(g.size(), 3); ++k)
          names.push_back(e.node_names[g[k]]);
        std::cout << fmt::format("  {:<{}}   e.g. {}{}\n", "", name_w, fmt::join(names, ", "),
                                 g.size() > 3 ? ", ..." : "");
      }
      std::cout << "  (--all-nodes lists every node)\n";
    }
  }

  // Score: feasible nodes, highest total first (all of them with --all-nodes).
  std::vector<NodeId> scored;
  for (const auto& ne : ev.nodes) {
    if (ne.feasible && !ne.score.empty()) scored.push_back(ne.node);
  }
  if (!scored.empty()) {
    std::stable_sort(scored.begin(), scored.end(),
                     [&](NodeId a, NodeId b) { return ev.nodes[a].total > ev.nodes[b].total; });
    const std::size_t shown = all_nodes ? scored.size() : std::min(scored.size(), kListedNodes);
    std::cout << fmt::format(
        "\nScore (normalized x weight; raw in brackets when NormalizeScore "
        "changed it){}:\n",
        shown < scored.size() ? fmt::format(", the {} best of {}", shown, scored.size()) : "");
    std::string line = fmt::format("  {:<{}}", "NODE", name_w);
    const auto& first = ev.nodes[scored.front()].score;
    std::vector<std::size_t> widths;
    for (const auto& v : first) {
      const std::string h = fmt::format("{} x{}", e.plugin_names[v.plugin], v.weight);
      widths.push_back(std::max<std::size_t>(h.size(), 9));
      line += fmt::format(" {:<{}}", h, widths.back());
    }
    std::cout << line << " TOTAL\n";
    for (std::size_t k = 0; k < shown; ++k) {
      const auto& ne = ev.nodes[scored[k]];
      std::string l = fmt::format(
          "  {:<{}}", e.node_names[ne.node] + (ne.node == ev.selected ? " *" : ""), name_w);
      for (std::size_t j = 0; j < ne.score.size(); ++j) {
        const auto& v = ne.score[j];
        const std::string cell =
            v.skipped ? "skip"
                      : (v.raw == v.normalized ? fmt::format("{}", v.normalized)
                                               : fmt::format("{} [{}]", v.normalized, v.raw));
        l += fmt::format(" {:<{}}", cell, widths[j]);
      }
      std::cout << l << fmt::format(" {}\n", ne.total);
    }
  }
  if (ev.selected == kNoNode) {
    std::cout << "\nselected: none (no node is feasible)\n";
  } else {
    std::cout << fmt::format("\nselected: {}{}{}\n", e.node_names[ev.selected],
                             ev.nominated_selected ? " (its nominated node)" : "",
                             ev.top.size() > 1
                                 ? fmt::format(" ({} nodes tie at {}; tie-break: {})",
                                               ev.top.size(), ev.nodes[ev.selected].total,
                                               e.random_tie_break ? "random, so any of them"
                                                                  : "first in evaluation order")
                                 : "");
  }
}

std::string phase_at(const Simulation& sim, PodId pod) {
  if (pod >= sim.cluster().pods().size()) return "not created";
  return std::string(final_status_name(sim.cluster().pod(pod).phase));
}

}  // namespace

int cmd_score(const std::vector<std::string>& args) {
  return guarded("score", [&]() -> int {
    po::options_description opts(
        "Usage: capsim score SCENARIO.yaml --pod NAME [--at TIME] [options]\n\nOptions");
    std::string scenario, pod_name, at_text, profile, data_dir;
    std::vector<std::string> sets;
    std::uint64_t seed = 0;
    opts.add_options()("help,h", "show this help")("pod", po::value(&pod_name),
                                                   "the pod to evaluate: NAME or NAMESPACE/NAME")(
        "at", po::value(&at_text),
        "virtual time to evaluate at, e.g. 90, 1h30m (default: the pod's arrival); every event "
        "before it has happened")("profile", po::value(&profile),
                                  "scheduler profile (default: the scenario's)")(
        "json", "print JSON (the contract in docs/cli.md)")(
        "all-nodes", "list every node (default: more than 20 are grouped by filter outcome)")(
        "seed", po::value(&seed), "master seed (overrides the scenario's seed)")(
        "set", po::value(&sets)->composing(),
        "override a scenario value: key.path=value (repeatable)")(
        "data-dir", po::value(&data_dir), "directory that {data_dir} in scenario paths expands to");
    const po::variables_map vm =
        parse_command_line(opts, args, {{"scenario", po::value(&scenario), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nRuns PreFilter, Filter on every node, PreScore, Score and NormalizeScore on "
                   "every\nfeasible node, and prints what each plugin returned.\n";
      return kOk;
    }
    if (scenario.empty()) throw UsageError("a scenario file is required");
    if (pod_name.empty()) throw UsageError("--pod NAME is required");

    LoadOptions lo;
    lo.overrides = sets;
    if (vm.count("seed")) lo.seed = seed;
    if (vm.count("data-dir")) lo.data_dir = data_dir;
    Scenario s = load_scenario(scenario, lo);
    const SimTime horizon = s.sim.horizon;

    std::optional<SimTime> at;
    if (vm.count("at")) {
      Result<SimDuration> t = parse_duration(at_text);
      if (!t) throw UsageError(fmt::format("--at '{}': {}", at_text, t.error()));
      if (horizon != kEndOfTime && *t > horizon) {
        throw UsageError(fmt::format("--at {}: beyond the scenario's horizon ({})", at_text,
                                     format_duration(horizon)));
      }
      at = *t;
    }
    RunRequest req;
    req.profile = profile;

    // The pod: one of the workload's, or one a controller creates during the run (then the run
    // is simulated once to find it and its arrival).
    PodId pod = find_pod(s.world->pods, pod_name);
    const bool from_workload = pod != kNoPod;
    SimTime t = 0;
    if (pod != kNoPod) {
      t = at.value_or(s.world->pods[pod].arrival);
    } else {
      std::optional<SimTime> created;
      std::string hint;
      Scenario probe = load_scenario(scenario, lo);
      (void)inspect_scenario_before(
          probe, req, at.value_or(kEndOfTime),
          [&](const Simulation& sim, const fw::Framework&, const fw::ReasonTable&) {
            const auto& pods = sim.cluster().world().pods;
            const PodId p = find_pod(pods, pod_name);
            if (p == kNoPod) {
              hint = suggestion(pods, pod_name);
              return;
            }
            const SimTime submit = sim.cluster().pod(p).submit;
            created = submit >= 0 ? submit : pods[p].arrival;
          });
      if (!created) {
        throw UsageError(fmt::format("--pod {}: no such pod in {}{}{}", pod_name, scenario,
                                     at ? fmt::format(" before {}", at_text) : "", hint));
      }
      t = at.value_or(*created);
    }

    Evaluated e;
    bool found = false;
    const std::vector<std::string> warnings = inspect_scenario_before(
        s, req, t,
        [&](const Simulation& sim, const fw::Framework& framework, const fw::ReasonTable& reasons) {
          const Cluster& cluster = sim.cluster();
          const PodId p = find_pod(cluster.world().pods, pod_name);
          if (p == kNoPod || p >= cluster.pods().size()) return;
          found = true;
          e.phase = phase_at(sim, p);
          const PodState& st = cluster.pod(p);
          if (st.node != kNoNode) {
            // A workload pod can be evaluated at its arrival; one a controller made cannot
            // (it does not exist before it, and its first cycle is at that instant).
            const std::string hint =
                from_workload
                    ? fmt::format(", e.g. --at {}s (its arrival)",
                                  to_seconds(cluster.spec(p).arrival))
                    : std::string(" (a controller made it, so it exists only from its arrival)");
            throw UsageError(fmt::format(
                "--pod {}: the pod holds node {} at {} ({}); evaluate it at a time it is "
                "pending{}",
                pod_name, cluster.node(st.node).spec->name, format_duration(t), e.phase, hint));
          }
          fw::EvaluationContext ctx{&sim.scheduler().nominations(),
                                    sim.scheduler().next_start_node_index()};
          e.ev = fw::evaluate_pod(framework, cluster, reasons, p, ctx);
          if (auto it = ctx.nominations->find(p); it != ctx.nominations->end())
            e.nominated = cluster.node(it->second).spec->name;
          e.pod = qualified(cluster.spec(p));
          e.profile = framework.name();
          e.random_tie_break = framework.config().tie_break == fw::TieBreak::kRandom;
          for (std::size_t i = 0; i < framework.plugin_count(); ++i)
            e.plugin_names.emplace_back(framework.plugin(i).name());
          for (const NodeInfo& n : cluster.nodes())
            e.node_names.push_back(n.spec->name);
        });
    if (!found) {
      throw UsageError(fmt::format(
          "--pod {}: its controller creates it at {}, so the state before then does not hold it; "
          "pass --at a later time when it is pending",
          pod_name, format_duration(t)));
    }
    for (const auto& w : warnings)
      std::cerr << "capsim score: note: " << w << "\n";
    if (vm.count("json")) {
      print_json(e, t);
    } else {
      print_table(e, t, vm.count("all-nodes") > 0);
    }
    return kOk;
  });
}

}  // namespace capsim::cli
