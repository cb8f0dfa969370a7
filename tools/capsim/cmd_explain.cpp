// `capsim explain RUN.db POD [--attempt N] [--json | --format kss]`: reads back the scheduling
// cycles `capsim run --explain` recorded for a pod (the explain_* tables, docs/report-schema.md)
// and prints them attempt by attempt: what every plugin said on every node, the cycle's result
// and, when PostFilter ran, the preemption candidates, their victims and why each lost. The node
// tables, the JSON node objects and the kss annotations are capsim score's
// (tools/capsim/evaluation_output.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/program_options.hpp>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "models/yaml_reader.hpp"
#include "reports/run_reader.hpp"
#include "reports/sqlite_db.hpp"
#include "sim/input_error.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/capsim/evaluation_output.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

struct Candidate {
  std::string node;
  std::vector<std::string> victims;
  bool chosen = false;
  std::int64_t pdb_violations = 0, highest_priority = 0, priority_sum = 0;
  double earliest_start_s = 0;
  std::string lost_on;
};

struct Attempt {
  std::int64_t attempt = 0;
  double time_s = 0;
  std::string result, node, message;
  std::int64_t evaluated_nodes = 0, feasible_nodes = 0;
  bool post_filter = false;
  Evaluated e;
  std::vector<Candidate> candidates;
};

[[noreturn]] void bad(const std::string& file, const std::string& field, const std::string& msg) {
  throw InputError(InputErrorKind::kInvalid, InputLocation{file, 0, 0, field}, msg);
}

std::vector<Attempt> read_attempts(const RunReader& reader, std::int64_t run,
                                   const std::string& pod) {
  SqliteDb& db = reader.db();
  std::vector<Attempt> out;
  std::map<std::int64_t, std::size_t> index;
  // Each row of `sql` (the run bound as ?1, the pod as ?2).
  auto rows = [&](const char* sql, const std::function<void(Statement&)>& row) {
    Statement st = db.prepare(sql);
    st.bind_int64(1, run);
    st.bind_text(2, pod);
    while (st.step())
      row(st);
  };
  rows(
      "SELECT attempt, time_s, namespace, profile, tie_break, result, node, message, "
      "evaluated_nodes, feasible_nodes, selected_node, error, post_filter FROM explain_attempt "
      "WHERE run_id = ?1 AND pod = ?2 ORDER BY rowid",
      [&](Statement& st) {
        Attempt& a = out.emplace_back();
        a.attempt = st.column_int64(0);
        a.time_s = st.column_double(1);
        a.e.pod = st.column_text(2) + "/" + pod;
        a.e.profile = st.column_text(3);
        a.e.random_tie_break = st.column_text(4) == "random";
        a.result = st.column_text(5);
        a.node = st.column_text(6);
        a.message = st.column_text(7);
        a.evaluated_nodes = st.column_int64(8);
        a.feasible_nodes = st.column_int64(9);
        a.e.phase = st.column_text(10);  // the selected node's name, resolved below
        a.e.ev.error = st.column_text(11);
        a.post_filter = st.column_int64(12) != 0;
        index[a.attempt] = out.size() - 1;
      });
  auto attempt_of = [&](std::int64_t n) -> Attempt* {
    auto it = index.find(n);
    return it == index.end() ? nullptr : &out[it->second];
  };
  // Each row of `sql` whose first column is a recorded attempt, with that attempt.
  auto for_attempts = [&](const char* sql, const std::function<void(Statement&, Attempt&)>& row) {
    rows(sql, [&](Statement& st) {
      if (Attempt* a = attempt_of(st.column_int64(0))) row(st, *a);
    });
  };
  auto plugin_id = [](Evaluated& e, const std::string& name) {
    for (std::size_t i = 0; i < e.plugin_names.size(); ++i) {
      if (e.plugin_names[i] == name) return i;
    }
    e.plugin_names.push_back(name);
    return e.plugin_names.size() - 1;
  };
  // By (attempt, node name): the node's index, and the plugin a cycle reports rejecting it.
  std::map<std::pair<std::int64_t, std::string>, NodeId> node_ids;
  std::map<std::pair<std::int64_t, std::string>, std::string> rejected_by;
  for_attempts(
      "SELECT attempt, node, feasible, rejected_by, scored, total FROM explain_node "
      "WHERE run_id = ?1 AND pod = ?2 ORDER BY rowid",
      [&](Statement& st, Attempt& a) {
        const auto id = static_cast<NodeId>(a.e.ev.nodes.size());
        fw::NodeEvaluation& ne = a.e.ev.nodes.emplace_back();
        ne.node = id;
        ne.feasible = st.column_int64(2) != 0;
        ne.total = st.column_int64(5);
        a.e.node_names.push_back(st.column_text(1));
        node_ids[{a.attempt, a.e.node_names.back()}] = id;
        rejected_by[{a.attempt, a.e.node_names.back()}] = st.column_text(3);
      });
  for_attempts(
      "SELECT attempt, point, node, plugin, code, reason FROM explain_filter WHERE run_id = ?1 "
      "AND pod = ?2 ORDER BY rowid",
      [&](Statement& st, Attempt& a) {
        const std::string point = st.column_text(1);
        fw::PluginVerdict v;
        v.plugin = plugin_id(a.e, st.column_text(3));
        v.code = code_from_name(st.column_text(4));
        v.reason = st.column_text(5);
        if (point == "prefilter") {
          if (v.code == fw::Code::kUnschedulable ||
              v.code == fw::Code::kUnschedulableAndUnresolvable)
            a.e.ev.pre_filter_rejected = true;
          a.e.ev.pre_filter.push_back(std::move(v));
        } else if (point == "prescore") {
          a.e.ev.pre_score.push_back(std::move(v));
        } else {
          const std::pair<std::int64_t, std::string> key{a.attempt, st.column_text(2)};
          auto it = node_ids.find(key);
          if (it == node_ids.end()) return;
          fw::NodeEvaluation& ne = a.e.ev.nodes[it->second];
          const bool rejects = v.code != fw::Code::kSuccess && v.code != fw::Code::kSkip;
          if (ne.first_rejection < 0 && rejects && a.e.plugin_names[v.plugin] == rejected_by[key])
            ne.first_rejection = static_cast<std::int32_t>(ne.filter.size());
          ne.filter.push_back(std::move(v));
        }
      });
  for_attempts(
      "SELECT attempt, node, plugin, raw, normalized, weight, skipped FROM explain_score "
      "WHERE run_id = ?1 AND pod = ?2 ORDER BY rowid",
      [&](Statement& st, Attempt& a) {
        auto it = node_ids.find({a.attempt, st.column_text(1)});
        if (it == node_ids.end()) return;
        fw::ScoreVerdict v;
        v.plugin = plugin_id(a.e, st.column_text(2));
        v.raw = st.column_int64(3);
        v.normalized = st.column_int64(4);
        v.weight = st.column_int64(5);
        v.skipped = st.column_int64(6) != 0;
        a.e.ev.nodes[it->second].score.push_back(v);
      });
  for_attempts(
      "SELECT attempt, node, chosen, victims, pdb_violations, highest_priority, priority_sum, "
      "earliest_start_s, lost_on FROM explain_candidate WHERE run_id = ?1 AND pod = ?2 "
      "ORDER BY rowid",
      [&](Statement& st, Attempt& a) {
        Candidate& c = a.candidates.emplace_back();
        c.node = st.column_text(1);
        c.chosen = st.column_int64(2) != 0;
        const std::string victims = st.column_text(3);
        for (std::size_t start = 0; start < victims.size();) {
          const std::size_t comma = std::min(victims.find(", ", start), victims.size());
          c.victims.push_back(victims.substr(start, comma - start));
          start = comma + 2;
        }
        c.pdb_violations = st.column_int64(4);
        c.highest_priority = st.column_int64(5);
        c.priority_sum = st.column_int64(6);
        c.earliest_start_s = st.column_double(7);
        c.lost_on = st.column_text(8);
      });
  // The selected node and the top-scoring ones (in node order: the evaluation order is not
  // recorded).
  for (Attempt& a : out) {
    fw::PodEvaluation& ev = a.e.ev;
    const std::string selected = a.e.phase;
    a.e.phase.clear();
    for (std::size_t n = 0; n < a.e.node_names.size(); ++n) {
      if (a.e.node_names[n] == selected) ev.selected = static_cast<NodeId>(n);
    }
    std::optional<std::int64_t> best;
    for (const auto& ne : ev.nodes) {
      if (ne.feasible && !ne.score.empty()) best = std::max(best.value_or(ne.total), ne.total);
    }
    for (const auto& ne : ev.nodes) {
      if (best && ne.feasible && !ne.score.empty() && ne.total == *best) ev.top.push_back(ne.node);
    }
    if (!best) {
      for (const auto& ne : ev.nodes) {
        if (ne.feasible) ev.top.push_back(ne.node);
      }
    }
  }
  return out;
}

std::string lost_text(const Candidate& c, const Candidate& chosen) {
  if (c.lost_on == "pdb_violations") {
    return fmt::format("more PDB violations ({} > {})", c.pdb_violations, chosen.pdb_violations);
  }
  if (c.lost_on == "highest_priority") {
    return fmt::format("higher highest-victim priority ({} > {})", c.highest_priority,
                       chosen.highest_priority);
  }
  if (c.lost_on == "priority_sum") {
    return fmt::format("higher sum of victim priorities ({} > {}, each + 2^31)", c.priority_sum,
                       chosen.priority_sum);
  }
  if (c.lost_on == "victims") {
    return fmt::format("more victims ({} > {})", c.victims.size(), chosen.victims.size());
  }
  if (c.lost_on == "start_time") {
    return fmt::format("its highest-priority victims started earlier ({}s < {}s)",
                       format_number(c.earliest_start_s), format_number(chosen.earliest_start_s));
  }
  if (c.lost_on == "order") return "equal on every criterion; an earlier candidate wins";
  return c.lost_on;
}

const Candidate* chosen_of(const Attempt& a) {
  for (const Candidate& c : a.candidates) {
    if (c.chosen) return &c;
  }
  return nullptr;
}

std::string result_text(const Attempt& a) {
  if (a.result == "scheduled") return "scheduled to " + a.node;
  if (a.result == "nominated") return "unschedulable; preempts on " + a.node + " (nominated)";
  return a.result;
}

void print_attempt_table(const Attempt& a, bool all_nodes) {
  std::size_t feasible = 0;
  for (const auto& ne : a.e.ev.nodes)
    feasible += ne.feasible ? 1 : 0;
  std::cout << fmt::format(
      "== attempt {} at {}: {} (the cycle evaluated {} node(s), {} feasible; exhaustively: "
      "{}/{} feasible)\n",
      a.attempt, format_duration(from_seconds(a.time_s)), result_text(a), a.evaluated_nodes,
      a.feasible_nodes, feasible, a.e.ev.nodes.size());
  if (!a.message.empty()) std::cout << "message: " << a.message << "\n";
  print_evaluation_table(a.e, all_nodes, std::cout);
  if (!a.post_filter) return;
  std::cout << "\nPreemption (DefaultPreemption): ";
  const Candidate* chosen = chosen_of(a);
  if (a.candidates.empty() || chosen == nullptr) {
    std::cout << "no candidate node (no set of lower-priority victims makes room)\n";
    return;
  }
  std::cout << fmt::format(
      "{} candidate(s), compared by fewest PDB violations, then lowest highest-victim priority, "
      "lowest sum of victim priorities, fewest victims, latest start of the highest-priority "
      "victims, candidate order:\n",
      a.candidates.size());
  std::size_t w = 4;
  for (const Candidate& c : a.candidates)
    w = std::max(w, c.node.size());
  for (const Candidate& c : a.candidates) {
    std::cout << fmt::format("  {:<{}}  {} victim(s): {}\n", c.node, w, c.victims.size(),
                             fmt::join(c.victims, ", "));
    std::cout << fmt::format("  {:<{}}  highest priority {}, started {}s; {}\n", "", w,
                             c.highest_priority, format_number(c.earliest_start_s),
                             c.chosen ? "CHOSEN" : "lost: " + lost_text(c, *chosen));
  }
}

std::string attempt_json(const Attempt& a) {
  std::string s = "  {";
  s += fmt::format(
      "\"attempt\": {}, \"time_s\": {}, \"profile\": \"{}\", \"result\": \"{}\", \"node\": {}, "
      "\"message\": \"{}\", \"evaluated_nodes\": {}, \"feasible_nodes\": {},\n",
      a.attempt, format_number(a.time_s), json_escape(a.e.profile), a.result,
      a.node.empty() ? "null" : "\"" + json_escape(a.node) + "\"", json_escape(a.message),
      a.evaluated_nodes, a.feasible_nodes);
  s += evaluation_json_fields(a.e, "   ") + ",\n";
  if (!a.post_filter) {
    s += "   \"preemption\": null}";
    return s;
  }
  s += "   \"preemption\": {\"candidates\": [";
  const Candidate* chosen = chosen_of(a);
  for (std::size_t i = 0; i < a.candidates.size(); ++i) {
    const Candidate& c = a.candidates[i];
    std::vector<std::string> victims;
    for (const auto& v : c.victims)
      victims.push_back("\"" + json_escape(v) + "\"");
    s += fmt::format(
        "{}\n    {{\"node\": \"{}\", \"victims\": [{}], \"chosen\": {}, \"pdb_violations\": {}, "
        "\"highest_victim_priority\": {}, \"victim_priority_sum\": {}, "
        "\"earliest_start_of_highest_s\": {}, \"lost_on\": {}, \"why\": {}}}",
        i ? "," : "", json_escape(c.node), fmt::join(victims, ", "), c.chosen ? "true" : "false",
        c.pdb_violations, c.highest_priority, c.priority_sum, format_number(c.earliest_start_s),
        c.lost_on.empty() ? "null" : "\"" + c.lost_on + "\"",
        c.chosen || chosen == nullptr ? "null" : "\"" + json_escape(lost_text(c, *chosen)) + "\"");
  }
  s += fmt::format("], \"chosen_node\": {}}}}}",
                   chosen == nullptr ? "null" : "\"" + json_escape(chosen->node) + "\"");
  return s;
}

}  // namespace

int cmd_explain(const std::vector<std::string>& args) {
  return guarded("explain", [&]() -> int {
    po::options_description opts(
        "Usage: capsim explain RUN.db POD [--attempt N] [--json | --format kss]\n\nOptions");
    std::string db, pod_arg, format;
    std::int64_t run_id = 0, attempt = 0;
    opts.add_options()("help,h", "show this help")("attempt", po::value(&attempt),
                                                   "only this attempt (1 = the pod's first cycle)")(
        "json", "print JSON: capsim score's node objects per attempt (docs/cli.md)")(
        "format", po::value(&format),
        "kss: one Pod manifest per attempt with kube-scheduler-simulator's annotations")(
        "all-nodes", "list every node (default: more than 20 are grouped by filter outcome)")(
        "run", po::value(&run_id), "run_id to read (default: the latest complete run)");
    const po::variables_map vm = parse_command_line(
        opts, args, {{"db", po::value(&db), 1}, {"pod", po::value(&pod_arg), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nReads the cycles `capsim run SCENARIO --explain POD` recorded. POD is the "
                   "pod's name\n(NAMESPACE/NAME is accepted).\n";
      return kOk;
    }
    if (db.empty()) throw UsageError("a report file (RUN.db) is required");
    if (pod_arg.empty()) throw UsageError("a pod name is required");
    if (vm.count("format") && format != "kss")
      throw UsageError(fmt::format("--format '{}': the only format is kss", format));
    if (vm.count("format") && vm.count("json"))
      throw UsageError("--json and --format kss are two outputs: choose one");

    RunReader reader(db);
    if (!vm.count("run")) {
      const std::optional<std::int64_t> latest = reader.latest_complete_run();
      if (!latest) bad(db, "run", "the file holds no complete run");
      run_id = *latest;
    }
    reader.require_complete(run_id);
    if (!reader.has_table("explain_attempt")) {
      bad(db, "explain_attempt",
          fmt::format("written by an older capsim (report schema {}), which did not record "
                      "explained cycles; re-run the scenario with capsim run --explain {}",
                      reader.schema_version(), pod_arg));
    }
    if (const RecordLevel level = reader.run(run_id)->record; level != RecordLevel::kFull) {
      // A valid file without the rows asked for: its own exit code, so a script can tell it from
      // a damaged file (65) and re-run the scenario.
      std::cerr << fmt::format(
          "capsim explain: {}: run {}: {}, which keeps no scheduling cycles; re-run the scenario "
          "with capsim run SCENARIO --record full --explain {}\n",
          db, run_id, not_recorded_note(level), pod_arg);
      return kNotRecorded;
    }
    // The report names pods by name; a namespace/ prefix is checked against the explained rows.
    const std::size_t slash = pod_arg.find('/');
    const std::string pod = slash == std::string::npos ? pod_arg : pod_arg.substr(slash + 1);
    std::vector<std::string> names;
    bool known = false;
    {
      Statement st = reader.db().prepare("SELECT pod FROM pod WHERE run_id = ?1 ORDER BY rowid");
      st.bind_int64(1, run_id);
      while (st.step()) {
        names.push_back(st.column_text(0));
        known = known || names.back() == pod;
      }
    }
    if (!known) {
      bad(db, "pod", fmt::format("no pod '{}' in run {}{}", pod, run_id, did_you_mean(pod, names)));
    }
    std::vector<Attempt> attempts = read_attempts(reader, run_id, pod);
    if (slash != std::string::npos && !attempts.empty() && attempts.front().e.pod != pod_arg) {
      bad(db, "pod",
          fmt::format("pod '{}' of run {} is {}, not {}", pod, run_id, attempts.front().e.pod,
                      pod_arg));
    }
    if (attempts.empty()) {
      bad(db, "pod",
          fmt::format("pod '{}' was not explained in run {}: re-run the scenario with capsim run "
                      "SCENARIO --explain {} (every cycle of a matching pod is recorded)",
                      pod, run_id, pod));
    }
    if (vm.count("attempt")) {
      std::vector<std::string> have;
      std::vector<Attempt> one;
      for (Attempt& a : attempts) {
        have.push_back(std::to_string(a.attempt));
        if (a.attempt == attempt) one.push_back(std::move(a));
      }
      if (one.empty()) {
        throw UsageError(fmt::format("--attempt {}: pod {} has attempts {}", attempt, pod,
                                     fmt::join(have, ", ")));
      }
      attempts = std::move(one);
    }

    if (vm.count("format")) {
      for (std::size_t i = 0; i < attempts.size(); ++i) {
        const Attempt& a = attempts[i];
        const Candidate* chosen = chosen_of(a);
        PostFilterOutcome pf{a.post_filter, "DefaultPreemption",
                             chosen == nullptr ? std::string() : chosen->node};
        std::cout << (i ? "---\n" : "")
                  << kss_pod_yaml(a.e, pf,
                                  fmt::format("capsim explain: attempt {} at {}s: {}", a.attempt,
                                              format_number(a.time_s), result_text(a)));
      }
    } else if (vm.count("json")) {
      std::string s = fmt::format("{{\"pod\": \"{}\", \"run_id\": {}, \"attempts\": [\n",
                                  json_escape(attempts.front().e.pod), run_id);
      for (std::size_t i = 0; i < attempts.size(); ++i)
        s += (i ? ",\n" : "") + attempt_json(attempts[i]);
      std::cout << s << "\n]}\n";
    } else {
      std::cout << fmt::format("capsim explain: pod {}, run {} of {}: {} attempt(s) recorded\n\n",
                               attempts.front().e.pod, run_id, db, attempts.size());
      for (std::size_t i = 0; i < attempts.size(); ++i) {
        if (i) std::cout << "\n";
        print_attempt_table(attempts[i], vm.count("all-nodes") > 0);
      }
    }
    return kOk;
  });
}

}  // namespace capsim::cli
