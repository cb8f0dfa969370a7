#include "tools/capsim/evaluation_output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "tools/capsim/cli.hpp"

namespace capsim::cli {

namespace {

// Nodes beyond this are grouped by identical filter outcome unless all_nodes.
constexpr std::size_t kListedNodes = 20;

std::string verdicts_json(const std::vector<fw::PluginVerdict>& vs, const Evaluated& e) {
  std::string s = "[";
  for (std::size_t k = 0; k < vs.size(); ++k) {
    s += fmt::format("{}{{\"plugin\": \"{}\", \"code\": \"{}\", \"reason\": \"{}\"}}",
                     k ? ", " : "", json_escape(e.plugin_names[vs[k].plugin]),
                     fw::code_name(vs[k].code), json_escape(vs[k].reason));
  }
  return s + "]";
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

// A JSON object {"key": value, ...} with its keys sorted (as Go's json.Marshal writes a map).
std::string sorted_object(const std::map<std::string, std::string>& members) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : members) {
    s += fmt::format("{}\"{}\":{}", first ? "" : ",", json_escape(k), v);
    first = false;
  }
  return s + "}";
}

std::string quoted(const std::string& s) {
  return "\"" + json_escape(s) + "\"";
}

// A YAML single-quoted scalar.
std::string yaml_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

}  // namespace

fw::Code code_from_name(const std::string& name) {
  for (fw::Code c : {fw::Code::kSuccess, fw::Code::kSkip, fw::Code::kUnschedulable,
                     fw::Code::kUnschedulableAndUnresolvable, fw::Code::kError}) {
    if (fw::code_name(c) == name) return c;
  }
  return fw::Code::kError;
}

std::string evaluation_json_fields(const Evaluated& e, const std::string& indent) {
  const fw::PodEvaluation& ev = e.ev;
  std::string s;
  s += fmt::format("{}\"prefilter\": {},\n", indent, verdicts_json(ev.pre_filter, e));
  s += indent + "\"nodes\": [";
  for (std::size_t n = 0; n < ev.nodes.size(); ++n) {
    const fw::NodeEvaluation& ne = ev.nodes[n];
    s += fmt::format("{}\n{} {{\"node\": \"{}\", \"feasible\": {}, \"filter\": {}", n ? "," : "",
                     indent, json_escape(e.node_names[ne.node]), ne.feasible ? "true" : "false",
                     verdicts_json(ne.filter, e));
    if (ne.first_rejection >= 0) {
      s += fmt::format(
          ", \"rejected_by\": \"{}\"",
          json_escape(
              e.plugin_names[ne.filter[static_cast<std::size_t>(ne.first_rejection)].plugin]));
    }
    s += fmt::format(",\n{}  \"score\": [", indent);
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
  s += fmt::format("{}\"top_nodes\": [{}], \"tie_break\": \"{}\",\n", indent, fmt::join(top, ", "),
                   e.random_tie_break ? "random" : "first");
  if (!ev.error.empty()) s += fmt::format("{}\"error\": \"{}\",\n", indent, json_escape(ev.error));
  s += ev.selected == kNoNode ? indent + "\"selected_node\": null"
                              : fmt::format("{}\"selected_node\": \"{}\"", indent,
                                            json_escape(e.node_names[ev.selected]));
  return s;
}

void print_evaluation_table(const Evaluated& e, bool all_nodes, std::ostream& out) {
  const fw::PodEvaluation& ev = e.ev;
  if (!ev.pre_filter.empty()) {
    std::vector<std::string> parts;
    for (const auto& v : ev.pre_filter) {
      parts.push_back(fmt::format("{} {}{}", e.plugin_names[v.plugin], fw::code_name(v.code),
                                  v.reason.empty() ? "" : " (" + v.reason + ")"));
    }
    out << fmt::format("PreFilter: {}\n", fmt::join(parts, ", "));
  }
  if (!ev.error.empty()) out << fmt::format("error: {}\n", ev.error);
  if (ev.pre_filter_rejected) {
    out << "PreFilter rejected the pod: no node is filtered.\n";
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
    out << "\nFilter (every plugin on every node; NO unschedulable, NO! unresolvable; "
           "a scheduling cycle reports the first NO):\n";
    std::string line = fmt::format(
        "  {:<{}}", all_nodes || ev.nodes.size() <= kListedNodes ? "NODE" : "NODES", name_w);
    for (const auto& v : *header)
      line += fmt::format(" {}", e.plugin_names[v.plugin]);
    out << line << "\n";
    auto row = [&](const std::string& label, const fw::NodeEvaluation& ne) {
      std::string l = fmt::format("  {:<{}}", label, name_w);
      for (const auto& v : ne.filter)
        l += fmt::format(" {:<{}}", short_code(v.code), e.plugin_names[v.plugin].size());
      const std::string why = rejections(ne, e);
      if (!why.empty()) l += "  " + why;
      l.erase(l.find_last_not_of(' ') + 1);
      out << l << "\n";
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
        out << fmt::format("  {:<{}}   e.g. {}{}\n", "", name_w, fmt::join(names, ", "),
                           g.size() > 3 ? ", ..." : "");
      }
      out << "  (--all-nodes lists every node)\n";
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
    out << fmt::format(
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
    out << line << " TOTAL\n";
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
      out << l << fmt::format(" {}\n", ne.total);
    }
  }
  if (ev.selected == kNoNode) {
    out << "\nselected: none (no node is feasible)\n";
  } else {
    out << fmt::format("\nselected: {}{}{}\n", e.node_names[ev.selected],
                       ev.nominated_selected ? " (its nominated node)" : "",
                       ev.top.size() > 1
                           ? fmt::format(" ({} nodes tie at {}; tie-break: {})", ev.top.size(),
                                         ev.nodes[ev.selected].total,
                                         e.random_tie_break ? "random, so any of them"
                                                            : "first in evaluation order")
                           : "");
  }
}

std::string kss_pod_yaml(const Evaluated& e, const PostFilterOutcome& post_filter,
                         const std::string& comment) {
  // The shapes kube-scheduler-simulator's result store marshals (simulator/scheduler/plugin/
  // resultstore): plugin -> "success" or the status message for PreFilter and PreScore; node ->
  // plugin -> "passed" or the reason for Filter, as far as a cycle runs them (up to the first
  // rejecting plugin); node -> plugin -> the Score plugin's raw score, and normalized x weight for
  // finalscore; PostFilter: node -> {plugin: "preemption victim"} for the nominated node, {} for
  // every other node it looked at.
  const fw::PodEvaluation& ev = e.ev;
  auto status_text = [](const fw::PluginVerdict& v) {
    return v.code == fw::Code::kSuccess
               ? std::string("success")
               : (v.reason.empty() ? std::string(fw::code_name(v.code)) : v.reason);
  };
  std::map<std::string, std::string> prefilter_status, prescore, filter, postfilter, score, final;
  for (const auto& v : ev.pre_filter)
    prefilter_status[e.plugin_names[v.plugin]] = quoted(status_text(v));
  for (const auto& v : ev.pre_score)
    prescore[e.plugin_names[v.plugin]] = quoted(status_text(v));
  for (const auto& ne : ev.nodes) {
    const std::string& node = e.node_names[ne.node];
    if (!ne.filter.empty()) {
      std::map<std::string, std::string> per_plugin;
      for (std::size_t k = 0; k < ne.filter.size(); ++k) {
        const fw::PluginVerdict& v = ne.filter[k];
        if (v.code == fw::Code::kSkip) continue;  // upstream does not call a skipped Filter
        per_plugin[e.plugin_names[v.plugin]] =
            quoted(v.code == fw::Code::kSuccess ? std::string("passed") : status_text(v));
        if (static_cast<std::int32_t>(k) == ne.first_rejection) break;
      }
      filter[node] = sorted_object(per_plugin);
    }
    if (!ne.score.empty()) {
      std::map<std::string, std::string> raw, weighted;
      for (const auto& v : ne.score) {
        if (v.skipped) continue;  // a Score plugin whose PreScore skipped is not called
        raw[e.plugin_names[v.plugin]] = quoted(std::to_string(v.raw));
        weighted[e.plugin_names[v.plugin]] = quoted(std::to_string(v.normalized * v.weight));
      }
      score[node] = sorted_object(raw);
      final[node] = sorted_object(weighted);
    }
    if (post_filter.ran && !ne.feasible) {
      std::map<std::string, std::string> pf;
      if (node == post_filter.nominated_node) pf[post_filter.plugin] = quoted("preemption victim");
      postfilter[node] = sorted_object(pf);
    }
  }
  const std::string slash = e.pod.find('/') != std::string::npos ? "/" : "";
  const std::string ns = slash.empty() ? "default" : e.pod.substr(0, e.pod.find('/'));
  const std::string name = slash.empty() ? e.pod : e.pod.substr(e.pod.find('/') + 1);
  constexpr std::string_view kPrefix = "kube-scheduler-simulator.sigs.k8s.io/";
  std::string s;
  if (!comment.empty()) s += "# " + comment + "\n";
  s += "apiVersion: v1\nkind: Pod\nmetadata:\n";
  s += fmt::format("  name: {}\n  namespace: {}\n  annotations:\n", yaml_quoted(name),
                   yaml_quoted(ns));
  auto annotation = [&](std::string_view key, const std::string& value) {
    s += fmt::format("    {}{}: {}\n", kPrefix, key, yaml_quoted(value));
  };
  annotation("filter-result", sorted_object(filter));
  annotation("finalscore-result", sorted_object(final));
  annotation("postfilter-result", sorted_object(postfilter));
  annotation("prefilter-result", "{}");  // capsim's PreFilter plugins never narrow the nodes
  annotation("prefilter-result-status", sorted_object(prefilter_status));
  annotation("prescore-result", sorted_object(prescore));
  annotation("score-result", sorted_object(score));
  annotation("selected-node", ev.selected == kNoNode ? "" : e.node_names[ev.selected]);
  return s;
}

}  // namespace capsim::cli
