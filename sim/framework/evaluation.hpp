// One pod evaluated against a cluster by every plugin of a profile, node by node, without
// binding it: what `capsim score` prints (and what an explained run would record per attempt).
// It walks the Framework's own extension-point lists, plugin instances and weights, so its
// numbers are the ones the scheduler computes; it differs from a scheduling cycle only in being
// exhaustive:
//   - every PreFilter plugin runs (a scheduling cycle stops at the first rejection); when one
//     rejects, no node is filtered, as in a cycle;
//   - every Filter plugin runs on every node (no percentageOfNodesToScore cut, no quick checks,
//     no stop at the first rejecting plugin); `first_rejection` names the one a cycle stops at
//     and reports; pods nominated to a node with at least the pod's priority count as placed
//     there (addNominatedPods);
//   - PreScore, Score and NormalizeScore run over every feasible node, even a single one.
// `selected` is the node selectHost would take among these totals: the pod's nominated node if it
// is feasible (evaluateNominatedNode), else the highest total, ties to the first in the
// scheduler's evaluation order (the rotating start index) or, with the random tie-break, one of
// `top` drawn by the scheduler's stream (which `selected` does not reproduce: it is the first of
// `top`). With 100 or more nodes a scheduling cycle scores only the first
// numFeasibleNodesToFind feasible nodes, so the real choice can differ from `selected` there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/framework/framework.hpp"

namespace capsim::fw {

// One plugin's answer at PreFilter or Filter (or PreScore).
struct PluginVerdict {
  std::size_t plugin = 0;  // index into the profile's plugins
  Code code = Code::kSuccess;
  std::string reason;  // the status's reasons joined by ", " (upstream's Status.Message())
};

struct ScoreVerdict {
  std::size_t plugin = 0;
  std::int64_t raw = 0;         // Score
  std::int64_t normalized = 0;  // after NormalizeScore (= raw without one)
  std::int64_t weight = 0;
  bool skipped = false;  // its PreScore returned Skip: it scored nothing
};

struct NodeEvaluation {
  NodeId node = kNoNode;
  bool feasible = false;
  std::vector<PluginVerdict> filter;  // every Filter plugin, in profile order (empty after a
                                      // PreFilter rejection)
  std::int32_t first_rejection = -1;  // index into `filter` of the one a cycle reports
  std::vector<ScoreVerdict> score;    // feasible nodes: every Score plugin, in profile order
  std::int64_t total = 0;             // sum of normalized * weight
};

struct PodEvaluation {
  PodId pod = kNoPod;
  std::vector<PluginVerdict> pre_filter;
  bool pre_filter_rejected = false;
  std::vector<PluginVerdict> pre_score;  // run when some node is feasible
  std::vector<NodeEvaluation> nodes;     // every node, in node order
  NodeId selected = kNoNode;
  std::vector<NodeId> top;          // feasible nodes with the highest total, in evaluation order
  bool nominated_selected = false;  // `selected` is the pod's feasible nominated node
  std::string error;                // a plugin returned Error: "Plugin: message"
};

// The scheduler's state a decision depends on besides the cluster.
struct EvaluationContext {
  const std::unordered_map<PodId, NodeId>* nominations = nullptr;  // Scheduler::nominations()
  std::size_t start_index = 0;  // Scheduler::next_start_node_index()
};

PodEvaluation evaluate_pod(const Framework& framework, const Cluster& cluster,
                           const ReasonTable& reasons, PodId pod,
                           const EvaluationContext& context = {});

// "Success", "Skip", "Unschedulable", "UnschedulableAndUnresolvable", "Error" (upstream's names).
std::string_view code_name(Code code);

}  // namespace capsim::fw
