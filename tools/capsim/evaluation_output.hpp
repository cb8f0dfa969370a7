// How one pod's evaluation (sim/framework/evaluation.hpp) is printed, by `capsim score` (a pod
// evaluated on the state a run reached) and `capsim explain` (an explained cycle read back from a
// report): the readable tables, the JSON node objects whose field names are a contract
// (docs/cli.md), and the Pod annotations kube-scheduler-simulator writes (--format kss).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/framework/evaluation.hpp"

namespace capsim::cli {

// An evaluation with the names its indices stand for.
struct Evaluated {
  fw::PodEvaluation ev;
  std::vector<std::string> plugin_names;  // by plugin index
  std::vector<std::string> node_names;    // by node id
  std::string pod;                        // namespace/name
  std::string profile;
  bool random_tie_break = false;
  std::string phase;      // score: the pod's phase at TIME
  std::string nominated;  // score: the node its earlier preemption nominated, if any
};

// What PostFilter decided, for the kss postfilter-result annotation.
struct PostFilterOutcome {
  bool ran = false;
  std::string plugin;          // the PostFilter plugin (DefaultPreemption)
  std::string nominated_node;  // "" when it found no candidate
};

// The JSON fields from "prefilter" to "selected_node" (no braces around them, no trailing
// comma or newline after the last): the part `score --json` and `explain --json` share.
std::string evaluation_json_fields(const Evaluated& e, const std::string& indent = " ");

// The PreFilter line, the Filter table (nodes x plugins; more than 20 nodes grouped by identical
// outcome unless all_nodes), the Score table and the selected node.
void print_evaluation_table(const Evaluated& e, bool all_nodes, std::ostream& out);

// A Pod manifest (YAML) holding the annotations kube-scheduler-simulator's debuggable scheduler
// writes for a scheduling attempt (keys kube-scheduler-simulator.sigs.k8s.io/...):
// prefilter-result, prefilter-result-status, filter-result, postfilter-result, prescore-result,
// score-result, finalscore-result and selected-node, each value a JSON object with sorted keys.
std::string kss_pod_yaml(const Evaluated& e, const PostFilterOutcome& post_filter,
                         const std::string& comment);

// "Success" -> Code::kSuccess, ... (code_name's inverse); kError for an unknown name.
fw::Code code_from_name(const std::string& name);

}  // namespace capsim::cli
