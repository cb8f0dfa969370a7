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
#include "tools/capsim/evaluation_output.hpp"
#include "tools/capsim/runner.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

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

void print_json(const Evaluated& e, SimTime at) {
  std::string s = "{";
  s += fmt::format("\"pod\": \"{}\", \"time_s\": {}, \"profile\": \"{}\", \"phase\": \"{}\",\n",
                   json_escape(e.pod), to_seconds(at), json_escape(e.profile), e.phase);
  s += e.nominated.empty()
           ? std::string(" \"nominated_node\": null,\n")
           : fmt::format(" \"nominated_node\": \"{}\",\n", json_escape(e.nominated));
  s += evaluation_json_fields(e) + "}\n";
  std::cout << s;
}

void print_table(const Evaluated& e, SimTime at, bool all_nodes) {
  std::size_t feasible = 0;
  for (const auto& ne : e.ev.nodes)
    feasible += ne.feasible ? 1 : 0;
  std::cout << fmt::format("capsim score: pod {} ({}{}) at {}, profile {}: {}/{} nodes feasible\n",
                           e.pod, e.phase,
                           e.nominated.empty() ? "" : ", nominated to " + e.nominated,
                           format_duration(at), e.profile, feasible, e.ev.nodes.size());
  print_evaluation_table(e, all_nodes, std::cout);
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
    std::string scenario, pod_name, at_text, profile, data_dir, format;
    std::vector<std::string> sets;
    std::string seed_text;
    opts.add_options()("help,h", "show this help")("pod", po::value(&pod_name),
                                                   "the pod to evaluate: NAME or NAMESPACE/NAME")(
        "at", po::value(&at_text),
        "virtual time to evaluate at, e.g. 90, 1h30m (default: the pod's arrival); every event "
        "before it has happened")("profile", po::value(&profile),
                                  "scheduler profile (default: the scenario's)")(
        "json", "print JSON (the contract in docs/cli.md)")(
        "format", po::value(&format),
        "kss: a Pod manifest with the annotations kube-scheduler-simulator writes")(
        "all-nodes", "list every node (default: more than 20 are grouped by filter outcome)")(
        "seed", po::value(&seed_text), "master seed (overrides the scenario's seed)")(
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
    if (vm.count("format") && format != "kss")
      throw UsageError(fmt::format("--format '{}': the only format is kss", format));

    LoadOptions lo;
    lo.overrides = sets;
    if (vm.count("seed")) lo.seed = parse_seed(seed_text);
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
    if (vm.count("format")) {
      std::cout << kss_pod_yaml(
          e, PostFilterOutcome{},
          fmt::format("capsim score at {}: the pod evaluated, not bound", format_duration(t)));
    } else if (vm.count("json")) {
      print_json(e, t);
    } else {
      print_table(e, t, vm.count("all-nodes") > 0);
    }
    return kOk;
  });
}

}  // namespace capsim::cli
