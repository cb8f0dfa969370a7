#include "sim/framework/cycle_recorder.hpp"

#include <algorithm>

namespace capsim::fw {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point (the last '*').
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

CycleRecorder::CycleRecorder(Recorder& recorder, const Framework& framework,
                             const ReasonTable& reasons, std::vector<std::string> explain_patterns)
    : recorder_(&recorder),
      fw_(&framework),
      reasons_(&reasons),
      patterns_(std::move(explain_patterns)) {}

bool CycleRecorder::explains(const PodSpec& pod) const {
  const std::string qualified = pod.namespace_ + "/" + pod.name;
  for (const std::string& p : patterns_) {
    if (glob_match(p, p.find('/') != std::string::npos ? std::string_view(qualified)
                                                       : std::string_view(pod.name))) {
      return true;
    }
  }
  return false;
}

void CycleRecorder::write(PodId pod, OpenRun& run) {
  for (const ReasonCount& c : run.reasons) {
    recorder_->record_pending_reason(
        PendingReasonRecord{run.first, pod, run.attempt, fw_->plugin_name(c.plugin),
                            reasons_->text(c.reason), c.nodes, run.attempts, run.last});
  }
  run.attempts = 0;
  run.reasons.clear();
}

void CycleRecorder::finish() {
  for (std::size_t p = 0; p < open_.size(); ++p) {
    if (open_[p].attempts > 0) write(static_cast<PodId>(p), open_[p]);
  }
}

void CycleRecorder::on_cycle(const CycleReport& r) {
  const PodState& state = r.cluster->pod(r.pod);
  if (!r.reasons.empty()) {
    if (open_.size() <= static_cast<std::size_t>(r.pod))
      open_.resize(static_cast<std::size_t>(r.pod) + 1);
    OpenRun& run = open_[static_cast<std::size_t>(r.pod)];
    auto same = [](const ReasonCount& a, const ReasonCount& b) {
      return a.plugin == b.plugin && a.reason == b.reason && a.nodes == b.nodes;
    };
    // Consecutive attempt numbers: no cycle of the pod (a successful one) came between.
    if (run.attempts > 0 && state.attempts == run.attempt + run.attempts &&
        std::equal(r.reasons.begin(), r.reasons.end(), run.reasons.begin(), run.reasons.end(),
                   same)) {
      ++run.attempts;
      run.last = r.time;
    } else {
      if (run.attempts > 0) write(r.pod, run);
      run.first = run.last = r.time;
      run.attempt = state.attempts;
      run.attempts = 1;
      run.reasons.assign(r.reasons.begin(), r.reasons.end());
    }
  }
  if (r.evaluation == nullptr) return;
  ++explained_;
  const ScheduleResult& res = *r.result;
  const PodEvaluation& ev = *r.evaluation;
  ExplainRecord& e = record_;
  e = ExplainRecord{};
  e.time = r.time;
  e.pod = r.pod;
  e.attempt = state.attempts;
  e.profile = fw_->name();
  e.tie_break = fw_->config().tie_break == TieBreak::kRandom ? "random" : "first";
  switch (res.outcome) {
    case ScheduleResult::Outcome::kScheduled:
      e.result = "scheduled";
      e.node = res.placement.node;
      break;
    case ScheduleResult::Outcome::kError:
      e.result = "error";
      break;
    case ScheduleResult::Outcome::kUnschedulable:
      e.result = res.nominated_node != kNoNode ? "nominated" : "unschedulable";
      e.node = res.nominated_node;
      break;
  }
  e.message = res.outcome == ScheduleResult::Outcome::kScheduled ? std::string() : res.message;
  e.evaluated_nodes = res.evaluated_nodes;
  e.feasible_nodes = res.feasible_nodes;
  e.selected = ev.selected;
  e.error = ev.error;
  e.post_filter = r.post_filter_ran;
  auto name = [&](std::size_t plugin) { return fw_->plugin(plugin).name(); };
  for (const PluginVerdict& v : ev.pre_filter)
    e.verdicts.push_back({kNoNode, "prefilter", name(v.plugin), code_name(v.code), v.reason});
  for (const NodeEvaluation& ne : ev.nodes) {
    for (const PluginVerdict& v : ne.filter)
      e.verdicts.push_back({ne.node, "filter", name(v.plugin), code_name(v.code), v.reason});
    for (const ScoreVerdict& v : ne.score)
      e.scores.push_back({ne.node, name(v.plugin), v.raw, v.normalized, v.weight, v.skipped});
    ExplainRecord::Node& n = e.nodes.emplace_back();
    n.node = ne.node;
    n.feasible = ne.feasible;
    if (ne.first_rejection >= 0)
      n.rejected_by = name(ne.filter[static_cast<std::size_t>(ne.first_rejection)].plugin);
    n.scored = !ne.score.empty();
    n.total = ne.total;
  }
  for (const PluginVerdict& v : ev.pre_score)
    e.verdicts.push_back({kNoNode, "prescore", name(v.plugin), code_name(v.code), v.reason});
  if (r.candidates != nullptr) {
    for (std::size_t i = 0; i < r.candidates->size(); ++i) {
      const PreemptionCandidate& c = (*r.candidates)[i];
      e.candidates.push_back({c.node, c.victims, static_cast<std::int32_t>(i) == r.chosen_candidate,
                              c.pdb_violations, c.highest_priority, c.priority_sum,
                              c.earliest_start_of_highest, c.lost_on});
    }
  }
  recorder_->record_explain(e);
}

}  // namespace capsim::fw
