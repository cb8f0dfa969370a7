// One scheduling cycle for one pod, as kube-scheduler's schedulePod/scheduleOne does it:
//   1. PreFilter;
//   2. the nominated node first, if the pod preempted earlier and it still fits;
//   3. Filter over nodes starting at a rotating index, stopping once
//      numFeasibleNodesToFind(percentageOfNodesToScore) feasible nodes are found;
//   4. no feasible node: PostFilter (preemption) and a FitError message;
//   5. one feasible node: take it; several: PreScore, Score, NormalizeScore, weights, selectHost;
//   6. Reserve (device choice) and Bind.
// The Scheduler does not change the cluster; it returns a decision the Simulation applies.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/framework/evaluation.hpp"
#include "sim/framework/framework.hpp"
#include "sim/framework/quick_meets_cache.hpp"
#include "sim/random.hpp"

namespace capsim {
class Engine;
}

namespace capsim::fw {

struct ScheduleResult {
  enum class Outcome : std::uint8_t { kScheduled, kUnschedulable, kError };
  Outcome outcome = Outcome::kUnschedulable;
  Placement placement;
  std::string message;                 // upstream-style "0/12 nodes are available: ..." on failure
  std::uint64_t rejector_plugins = 0;  // bit per plugin index: which plugins said no
  bool unresolvable_everywhere = false;
  NodeId nominated_node = kNoNode;  // set when PostFilter preempted
  std::vector<PodId> victims;
  std::int32_t evaluated_nodes = 0;
  std::int32_t feasible_nodes = 0;
};

// How many nodes one plugin rejected with one reason in a failed cycle: the counts upstream's
// FitError message is made of ("3 Insufficient nvidia.com/gpu"). A PreFilter rejection counts
// every node.
struct ReasonCount {
  std::int16_t plugin = -1;  // -1: the framework
  ReasonId reason = 0;
  std::int32_t nodes = 0;
};

// What a cycle looked like, for a CycleObserver.
struct CycleReport {
  SimTime time = 0;
  PodId pod = kNoPod;
  const Cluster* cluster = nullptr;  // as the cycle saw it (nothing is bound yet)
  const ScheduleResult* result = nullptr;
  std::span<const ReasonCount> reasons;  // failed (unschedulable) cycles; by plugin, reason
  // Explained cycles only: the pod evaluated exhaustively on the same state (evaluate_pod with
  // the nominations and start index the cycle had), and PostFilter's candidates if it ran.
  const PodEvaluation* evaluation = nullptr;
  const std::vector<PreemptionCandidate>* candidates = nullptr;
  std::int32_t chosen_candidate = -1;
  bool post_filter_ran = false;
};

// Told of scheduling cycles (capsim run: the pending reasons; --explain: the explained pods).
// Without one, a cycle costs one branch more.
class CycleObserver {
 public:
  virtual ~CycleObserver() = default;
  // Whether `pod`'s cycles are explained (asked once per cycle when explains_any()).
  virtual bool explains(const PodSpec& pod) const = 0;
  virtual bool explains_any() const = 0;
  // After every unschedulable cycle, and after every explained cycle.
  virtual void on_cycle(const CycleReport& report) = 0;
  // After the run's last event, before the recorder closes the run.
  virtual void finish() {}
};

// kube-scheduler's numFeasibleNodesToFind: all nodes below 100; otherwise
// max(100, N * p / 100) with p = percentageOfNodesToScore, or adaptively
// p = max(5, 50 - N/125) when it is 0.
std::int32_t num_feasible_nodes_to_find(std::int32_t percentage, std::int32_t num_all_nodes);

class Scheduler {
 public:
  Scheduler(const Framework& framework, const Cluster& cluster, ReasonTable& reasons,
            RandomStream tie_break_stream);

  ScheduleResult schedule_one(PodId pod);

  // Reports cycles to `observer` (nullptr: none), timed by `clock`. Both outlive the Scheduler.
  void set_observer(CycleObserver* observer, const Engine* clock);

  // Pods that preempted and wait for their victims to leave hold a nomination: lower- or
  // equal-priority pods see the nominated pod's requests as taken on that node.
  void nominate(PodId pod, NodeId node);
  void clear_nomination(PodId pod);
  NodeId nominated_node(PodId pod) const;
  // Every nomination held: pod -> node.
  const std::unordered_map<PodId, NodeId>& nominations() const { return nomination_; }

  const Framework& framework() const { return *fw_; }
  ReasonTable& reasons() { return *reasons_; }
  std::uint64_t cycles() const { return cycles_; }
  // A cycle for `pod` that changes nothing and is counted nowhere: what an attempt would find
  // now (bulk retries ask it whether pods attempted after a placement fail as before it). The
  // start index, the random streams and the counters are put back.
  ScheduleResult probe(PodId pod);
  // Whether `a` and `b` filter alike in a cycle like the last one (its PreFilter skips), and
  // which Filter plugins that cycle skipped.
  bool filter_alike_last(const PodSpec& a, const PodSpec& b) const {
    return fw_->filters_alike(state_, a, b);
  }
  const auto& last_skipped_filters() const { return state_.skip_filter(); }
  // What pods that filter alike share (equal hashes only shortlist; filters_alike decides).
  static std::uint64_t likeness_hash(const PodSpec& spec);
  // Where the next cycle's Filter loop starts (upstream's nextStartNodeIndex): with the
  // first-top-score tie-break, which of several equal nodes wins depends on it.
  std::size_t next_start_node_index() const { return next_start_node_index_; }

  // Builds the FitError message from a diagnosis: fit_error_counts, then PostFilter's message.
  std::string fit_error(std::int32_t num_nodes, const Diagnosis& d,
                        const std::string& post_filter) const;
  // The message's part made of the diagnosis: "0/N nodes are available: 3 Insufficient cpu,
  // 9 node(s) had untolerated taint {...}." (the counts by reason, sorted as strings).
  std::string fit_error_counts(std::int32_t num_nodes, const Diagnosis& d) const;
  // How many cycles ended with a failure remembered from an earlier, alike pod (failure memo).
  std::uint64_t remembered_failures() const { return remembered_failures_; }
  // How many of those first brought the memo up to date with the nodes that changed since.
  std::uint64_t refreshed_failures() const { return refreshed_failures_; }

 private:
  // Runs the filters, with the pods nominated to the node counted as placed; uses the node's
  // QuickNode to skip plugins that can accept from it when no pod is nominated there.
  Status filter_with_nominated(PodId pod, const PodSpec& spec, const NodeInfo& node);
  ScheduleResult cycle(PodId pod);
  ScheduleResult observed_cycle(PodId pod);

  // The failure memo. A cycle in which no node passed the filters is remembered with its
  // diagnosis and message. A later cycle reuses them instead of filtering every node again when
  // its pod holds no nomination, the nominations are the same, the pod has the priority of the
  // remembered pod (nominated pods count by priority), PreFilter skipped the same Filter plugins,
  // and every Filter plugin that runs says the two pods filter alike (FilterPlugin::filters_alike:
  // it reads only the pod and the node). Off with use_quick_checks = false and for explained
  // cycles, so the reference path never takes it.
  //
  // Such a cycle evaluates every node, as the remembered one did, and each node that has not
  // changed since gives it the same status. So: if the start index moved, the statuses are
  // rotated to the new evaluation order; if the cluster's generation moved, the nodes that
  // changed (Cluster::changed_since) are filtered again for the new pod and their statuses
  // replaced. If the change log no longer reaches back, the memo is dropped and the cycle runs
  // in full. If a changed node now passes, the cycle runs in full too (the pod will likely be
  // placed), but the memo is kept at its old generation: the statuses it already replaced are
  // as current as any, and its next refresh filters every node changed since that generation
  // again, so the alike pods still waiting need no full failing cycle to remember it anew. The
  // result is the diagnosis, message and order a full cycle would make, so everything
  // PostFilter does with them is the same. The counts the message is made of are kept with the
  // statuses.
  struct FailureMemo {
    bool valid = false;
    PodId pod = kNoPod;            // the pod whose cycle filled it
    std::uint64_t hash = 0;        // likeness_hash of its spec
    std::uint64_t generation = 0;  // the cluster's when its statuses were last made
    std::size_t start = 0;         // the start index of the cycle it last stood for
    // The start index its statuses are stored in evaluation order from. A cycle from another
    // start sees them rotated to begin there; they are moved only when something reads them in
    // order (PostFilter::reads_node_order), as counts do not depend on it.
    std::size_t order_start = 0;
    std::bitset<kMaxPlugins> skipped;
    Diagnosis diagnosis;  // a status for every node, in evaluation order from `start`
    std::int32_t evaluated = 0;
    std::string message;  // fit_error_counts
    // The last PostFilter message a cycle served by this memo got, and fit_error's message with
    // it (a backlog's attempts mostly end with the same one).
    std::string post_filter;
    std::string message_with_post_filter;
    bool unresolvable = false;
    bool counted = false;  // reason_counts is filled
    std::vector<ReasonCount> reason_counts;
    // What the message and flags are made of: nodes per reason, statuses per rejecting plugin,
    // unresolvable statuses.
    std::vector<std::pair<ReasonId, std::int32_t>> by_reason;
    std::array<std::int32_t, kMaxPlugins> by_plugin{};
    std::int32_t unresolvable_nodes = 0;
    void tally(const Status& s, std::int32_t sign);
  };
  static constexpr std::size_t kMaxMemos = 32;
  FailureMemo* find_memo(const PodSpec& spec, std::uint64_t hash);
  // Brings a memo made at an older generation up to date for `pod` (see FailureMemo), or says
  // why it cannot stand for this cycle.
  enum class Refresh : std::uint8_t {
    kDone,    // up to date: it stands for the cycle
    kPasses,  // a changed node passes: the cycle runs in full, the memo stays for later pods
    kLost,    // the change log no longer reaches back: the memo is dropped
  };
  Refresh refresh_memo(FailureMemo& m, PodId pod, const PodSpec& spec);
  // The message, flags and counts of a memo from its tallies.
  void finish_memo(FailureMemo& m, std::int32_t num_nodes) const;
  // The slot a new memo goes in: a free one, else the one made longest ago.
  FailureMemo* memo_slot();
  // "0/N nodes are available: ..." from nodes per reason (the parts sorted as strings).
  std::string format_counts(std::int32_t num_nodes, ReasonId prefilter_reason,
                            const std::vector<std::pair<ReasonId, std::int32_t>>& by_reason) const;
  // The reason counts of a failed cycle's diagnosis, into reason_counts_.
  void count_reasons(const Diagnosis& d);

  const Framework* fw_;
  const Cluster* cluster_;
  Snapshot snap_;
  ReasonTable* reasons_;
  RandomStream tie_rng_;
  CycleState state_;
  std::size_t next_start_node_index_ = 0;
  std::uint64_t cycles_ = 0;
  std::unordered_map<NodeId, std::vector<PodId>> nominated_by_node_;
  std::unordered_map<PodId, NodeId> nomination_;
  std::uint64_t nominations_version_ = 0;  // bumped whenever a nomination is made or cleared
  // Failure memos, valid for memo_nominations_ (memo_count_ of memos_ have been used; those not
  // `valid` are free).
  std::vector<FailureMemo> memos_;
  std::size_t memo_count_ = 0;
  std::uint64_t memo_nominations_ = ~std::uint64_t{0};
  FailureMemo* memo_ = nullptr;      // the memo this cycle's failure reads (or filled)
  const Diagnosis* diag_ = nullptr;  // this cycle's diagnosis: diagnosis_ or memo_->diagnosis
  std::uint64_t remembered_failures_ = 0;
  std::uint64_t refreshed_failures_ = 0;
  std::vector<NodeId> changed_;  // refresh_memo's nodes that changed
  // Reused buffers.
  std::vector<NodeId> feasible_;
  std::vector<std::int64_t> totals_;
  Diagnosis diagnosis_;
  std::vector<NodeId> skipped_;  // nodes a quick check rejected, in evaluation order
  std::vector<std::uint64_t> quick_candidates_;  // the quick index's candidate nodes, a bit each
  // What nodes' quick copies said of earlier cycles' quick requirements (used with the quick index
  // while no node holds nominated pods).
  QuickMeetsCache meets_cache_;
  bool quick_ready_ = false;  // the framework's quick requirements are for this cycle's pod
  std::vector<std::pair<NodeId, Status>> first_pass_;
  NodeInfo scratch_node_;
  // Observation (set_observer).
  CycleObserver* observer_ = nullptr;
  const Engine* clock_ = nullptr;
  std::int16_t prefilter_plugin_ = -1;  // the PreFilter plugin that rejected this cycle's pod
  bool post_filter_ran_ = false;
  std::vector<PreemptionCandidate> candidates_;  // explained cycles: PostFilter's candidates
  std::int32_t chosen_candidate_ = -1;
  std::vector<ReasonCount> reason_counts_;
  std::vector<RandomStream> random_before_;  // explained cycles: the plugins' streams before it
};

}  // namespace capsim::fw
