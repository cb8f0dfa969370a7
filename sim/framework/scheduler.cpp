#include "sim/framework/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

#include "sim/check.hpp"
#include "sim/engine.hpp"

namespace capsim::fw {
namespace {
// Adds `delta` to the count of each of the status's reasons. A failed cycle has a handful of
// distinct reasons, so a short list beats a map; its order does not matter (the message sorts).
void add_reason_counts(std::vector<std::pair<ReasonId, std::int32_t>>& counts, const Status& s,
                       std::int32_t delta) {
  for (std::uint8_t i = 0; i < s.count; ++i) {
    const ReasonId r = s.reasons[i];
    auto it =
        std::find_if(counts.begin(), counts.end(), [r](const auto& c) { return c.first == r; });
    if (it == counts.end()) {
      counts.emplace_back(r, delta);
    } else {
      it->second += delta;
    }
  }
}

// FitError's message: the counts, then PostFilter's message as its own sentence.
std::string with_post_filter(std::string counts, const std::string& post_filter) {
  if (!post_filter.empty()) counts += fmt::format(" {}.", post_filter);
  return counts;
}
}  // namespace

std::int32_t num_feasible_nodes_to_find(std::int32_t percentage, std::int32_t num_all_nodes) {
  constexpr std::int32_t kMinFeasibleNodesToFind = 100;
  constexpr std::int32_t kMinFeasibleNodesPercentageToFind = 5;
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage <= 0) {
    // Adaptive: 50% of a 0-node cluster, falling by 1% per 125 nodes, never below 5%.
    percentage = std::max(50 - num_all_nodes / 125, kMinFeasibleNodesPercentageToFind);
  }
  if (percentage >= 100) return num_all_nodes;
  const std::int32_t n = static_cast<std::int32_t>(std::int64_t{num_all_nodes} * percentage / 100);
  return std::max(n, kMinFeasibleNodesToFind);
}

Scheduler::Scheduler(const Framework& framework, const Cluster& cluster, ReasonTable& reasons,
                     RandomStream tie_break_stream)
    : fw_(&framework),
      cluster_(&cluster),
      snap_(cluster),
      reasons_(&reasons),
      tie_rng_(tie_break_stream),
      state_(framework.plugin_count()) {
  memos_.reserve(kMaxMemos);  // memo_ points into it: never reallocated
}

void Scheduler::nominate(PodId pod, NodeId node) {
  clear_nomination(pod);
  ++nominations_version_;
  nomination_[pod] = node;
  nominated_by_node_[node].push_back(pod);
}

void Scheduler::clear_nomination(PodId pod) {
  auto it = nomination_.find(pod);
  if (it == nomination_.end()) return;
  auto& v = nominated_by_node_[it->second];
  v.erase(std::remove(v.begin(), v.end(), pod), v.end());
  if (v.empty()) nominated_by_node_.erase(it->second);
  nomination_.erase(it);
  ++nominations_version_;
}

NodeId Scheduler::nominated_node(PodId pod) const {
  auto it = nomination_.find(pod);
  return it == nomination_.end() ? kNoNode : it->second;
}

Status Scheduler::filter_with_nominated(PodId pod, const PodSpec& spec, const NodeInfo& node) {
  // addNominatedPods: pods nominated to this node with priority >= ours count as placed.
  if (!nominated_by_node_.empty()) {
    auto it = nominated_by_node_.find(node.id);
    if (it != nominated_by_node_.end()) {
      bool any = false;
      for (PodId other : it->second) {
        if (other == pod) continue;
        const PodSpec& os = cluster_->spec(other);
        if (os.priority < spec.priority) continue;
        if (!any) {
          scratch_node_ = node;
          any = true;
        }
        scratch_node_.add_requests(os);
        scratch_node_.pods.push_back(other);  // upstream's AddPod: the pod counting plugins see it
      }
      if (any) return fw_->run_filters(state_, spec, scratch_node_);
    }
  }
  return fw_->run_filters(state_, spec, node, quick_ready_ ? &cluster_->quick()[node.id] : nullptr);
}

std::string Scheduler::fit_error(std::int32_t num_nodes, const Diagnosis& d,
                                 const std::string& post_filter) const {
  return with_post_filter(fit_error_counts(num_nodes, d), post_filter);
}

std::string Scheduler::fit_error_counts(std::int32_t num_nodes, const Diagnosis& d) const {
  // Nodes per reason.
  std::vector<std::pair<ReasonId, std::int32_t>> histogram;
  for (const auto& [node, st] : d.node_statuses)
    add_reason_counts(histogram, st, 1);
  return format_counts(num_nodes, d.prefilter_reason, histogram);
}

std::string Scheduler::format_counts(
    std::int32_t num_nodes, ReasonId prefilter_reason,
    const std::vector<std::pair<ReasonId, std::int32_t>>& by_reason) const {
  std::string msg = fmt::format("0/{} nodes are available:", num_nodes);
  if (prefilter_reason != 0) msg += fmt::format(" {}.", reasons_->text(prefilter_reason));
  std::vector<std::string> parts;
  parts.reserve(by_reason.size());
  for (const auto& [r, n] : by_reason) {
    if (n > 0) parts.push_back(fmt::format("{} {}", n, reasons_->text(r)));
  }
  std::sort(parts.begin(), parts.end());  // sort.Strings, as upstream
  if (!parts.empty()) msg += fmt::format(" {}.", fmt::join(parts, ", "));
  return msg;
}

std::uint64_t Scheduler::likeness_hash(const PodSpec& spec) {
  // FNV-1a over what pods that filter alike share; equal hashes only shortlist a memo, the
  // Filter plugins decide.
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(spec.priority)));
  for (const auto& [r, v] : spec.requests.items) {
    mix(r);
    mix(static_cast<std::uint64_t>(v));
  }
  for (const auto& [r, c] : spec.device_requests) {
    mix(r);
    mix(static_cast<std::uint64_t>(c));
  }
  for (GpuModelId m : spec.gpu_models)
    mix(m);
  mix(static_cast<std::uint64_t>(spec.gpu_milli));
  mix(spec.tolerations.size());
  mix(spec.node_selector.items().size());
  return h;
}

Scheduler::FailureMemo* Scheduler::find_memo(const PodSpec& spec, std::uint64_t hash) {
  for (std::size_t i = 0; i < memo_count_; ++i) {
    FailureMemo& m = memos_[i];
    if (!m.valid || m.hash != hash || m.skipped != state_.skip_filter()) continue;
    const PodSpec& other = cluster_->spec(m.pod);
    if (other.priority == spec.priority && fw_->filters_alike(state_, other, spec)) return &m;
  }
  return nullptr;
}

Scheduler::FailureMemo* Scheduler::memo_slot() {
  FailureMemo* oldest = nullptr;
  for (std::size_t i = 0; i < memo_count_; ++i) {
    FailureMemo& m = memos_[i];
    if (!m.valid) return &m;
    if (oldest == nullptr || m.generation < oldest->generation) oldest = &m;
  }
  if (memo_count_ < kMaxMemos) {
    if (memo_count_ == memos_.size()) memos_.emplace_back();
    return &memos_[memo_count_++];
  }
  return oldest;
}

void Scheduler::FailureMemo::tally(const Status& s, std::int32_t sign) {
  add_reason_counts(by_reason, s, sign);
  if (s.plugin >= 0) by_plugin[static_cast<std::size_t>(s.plugin)] += sign;
  if (s.code == Code::kUnschedulableAndUnresolvable) unresolvable_nodes += sign;
  if (s.code == Code::kUnschedulable) diagnosis.unschedulable_nodes += sign;
}

void Scheduler::finish_memo(FailureMemo& m, std::int32_t num_nodes) const {
  m.diagnosis.rejector_plugins = 0;
  for (std::size_t p = 0; p < kMaxPlugins; ++p) {
    if (m.by_plugin[p] > 0) m.diagnosis.rejector_plugins |= std::uint64_t{1} << p;
  }
  m.message = format_counts(num_nodes, 0, m.by_reason);
  m.message_with_post_filter.clear();
  // unresolvable_everywhere: every node's status is UnschedulableAndUnresolvable.
  m.unresolvable =
      m.unresolvable_nodes == static_cast<std::int32_t>(m.diagnosis.node_statuses.size());
  m.counted = false;
  m.reason_counts.clear();
}

Scheduler::Refresh Scheduler::refresh_memo(FailureMemo& m, PodId pod, const PodSpec& spec) {
  const auto& nodes = cluster_->nodes();
  const std::size_t n = nodes.size();
  if (m.diagnosis.node_statuses.size() != n) return Refresh::kLost;
  changed_.clear();
  if (!cluster_->changed_since(m.generation, changed_)) return Refresh::kLost;
  fw_->prepare_quick(state_, spec, cluster_->quick_device());
  quick_ready_ = true;
  for (NodeId id : changed_) {
    Status s = filter_with_nominated(pod, spec, nodes[id]);
    // It passes (or errs): the cycle runs in full. The statuses replaced so far are tallied,
    // and m.generation stays, so the next refresh filters them again with the rest.
    if (!s.is_rejection()) return Refresh::kPasses;
    auto& [node, status] = m.diagnosis.node_statuses[(id + n - m.order_start) % n];
    CAPSIM_CHECK(node == id, "a remembered diagnosis is out of evaluation order");
    m.tally(status, -1);
    status = s;
    m.tally(s, +1);
  }
  m.generation = cluster_->generation();
  finish_memo(m, static_cast<std::int32_t>(n));
  ++refreshed_failures_;
  return Refresh::kDone;
}

void Scheduler::count_reasons(const Diagnosis& d) {
  reason_counts_.clear();
  auto add = [&](std::int16_t plugin, ReasonId reason, std::int32_t nodes) {
    for (ReasonCount& c : reason_counts_) {
      if (c.plugin == plugin && c.reason == reason) {
        c.nodes += nodes;
        return;
      }
    }
    reason_counts_.push_back({plugin, reason, nodes});
  };
  if (d.prefilter_reason != 0) {
    add(prefilter_plugin_, d.prefilter_reason, static_cast<std::int32_t>(cluster_->nodes().size()));
  }
  for (const auto& [node, st] : d.node_statuses) {
    for (std::uint8_t i = 0; i < st.count; ++i)
      add(st.plugin, st.reasons[i], 1);
  }
  std::sort(reason_counts_.begin(), reason_counts_.end(), [](const auto& a, const auto& b) {
    return a.nodes != b.nodes ? a.nodes > b.nodes
                              : (a.plugin != b.plugin ? a.plugin < b.plugin : a.reason < b.reason);
  });
}

void Scheduler::set_observer(CycleObserver* observer, const Engine* clock) {
  CAPSIM_CHECK(observer == nullptr || clock != nullptr, "an observed scheduler needs a clock");
  observer_ = observer;
  clock_ = clock;
}

ScheduleResult Scheduler::schedule_one(PodId pod) {
  if (observer_ == nullptr) return cycle(pod);
  return observed_cycle(pod);
}

ScheduleResult Scheduler::probe(PodId pod) {
  const std::vector<RandomStream> streams = fw_->save_random_streams();
  const RandomStream tie = tie_rng_;
  const std::size_t start = next_start_node_index_;
  const std::uint64_t cycles = cycles_, remembered = remembered_failures_,
                      refreshed = refreshed_failures_;
  ScheduleResult r = cycle(pod);
  fw_->restore_random_streams(streams);
  tie_rng_ = tie;
  next_start_node_index_ = start;
  cycles_ = cycles;
  remembered_failures_ = remembered;
  refreshed_failures_ = refreshed;
  return r;
}

ScheduleResult Scheduler::observed_cycle(PodId pod) {
  const bool explain = observer_->explains_any() && observer_->explains(cluster_->spec(pod));
  const std::size_t start_index = next_start_node_index_;
  if (explain) random_before_ = fw_->save_random_streams();
  state_.set_explain(explain);
  candidates_.clear();
  chosen_candidate_ = -1;
  ScheduleResult r = cycle(pod);
  state_.set_explain(false);
  const bool failed = r.outcome == ScheduleResult::Outcome::kUnschedulable;
  if (!failed && !explain) return r;

  // The counts fit_error's message is made of, by plugin and reason (a remembered failure's
  // once).
  reason_counts_.clear();
  if (failed) {
    if (memo_ != nullptr && memo_->counted) {
      reason_counts_ = memo_->reason_counts;
    } else {
      count_reasons(*diag_);
      if (memo_ != nullptr) {
        memo_->reason_counts = reason_counts_;
        memo_->counted = true;
      }
    }
  }
  CycleReport report;
  report.time = clock_->now();
  report.pod = pod;
  report.cluster = cluster_;
  report.result = &r;
  report.reasons = reason_counts_;
  report.post_filter_ran = post_filter_ran_;
  PodEvaluation evaluation;
  if (explain) {
    // The cycle changed nothing in the cluster: the evaluation sees what the cycle saw, and its
    // plugins draw what the cycle's drew (RandomScore), after which the streams are put back
    // where the cycle left them.
    const std::vector<RandomStream> after = fw_->save_random_streams();
    fw_->restore_random_streams(random_before_);
    evaluation =
        evaluate_pod(*fw_, *cluster_, *reasons_, pod, EvaluationContext{&nomination_, start_index});
    fw_->restore_random_streams(after);
    report.evaluation = &evaluation;
    report.candidates = &candidates_;
    report.chosen_candidate = chosen_candidate_;
  }
  observer_->on_cycle(report);
  return r;
}

namespace {
// Nodes whose status is plain Unschedulable (PostFilter's preemption candidates).
std::int32_t count_unschedulable(const Diagnosis& d) {
  return static_cast<std::int32_t>(
      std::count_if(d.node_statuses.begin(), d.node_statuses.end(),
                    [](const auto& p) { return p.second.code == Code::kUnschedulable; }));
}
// Whether no node could take the pod whatever other pods do.
bool unresolvable_everywhere(std::int32_t num_nodes, const Diagnosis& d) {
  return num_nodes == 0 || d.prefilter_reason != 0 ||
         std::all_of(d.node_statuses.begin(), d.node_statuses.end(), [](const auto& p) {
           return p.second.code == Code::kUnschedulableAndUnresolvable;
         });
}
}  // namespace

ScheduleResult Scheduler::cycle(PodId pod) {
  ++cycles_;
  const PodSpec& spec = cluster_->spec(pod);
  const auto& nodes = cluster_->nodes();
  const auto num_nodes = static_cast<std::int32_t>(nodes.size());
  ScheduleResult result;
  state_.begin_cycle(pod);
  quick_ready_ = false;
  diagnosis_.node_statuses.clear();
  diagnosis_.rejector_plugins = 0;
  diagnosis_.prefilter_reason = 0;
  diagnosis_.unschedulable_nodes = 0;
  feasible_.clear();
  prefilter_plugin_ = -1;
  post_filter_ran_ = false;
  memo_ = nullptr;
  diag_ = &diagnosis_;

  auto fail = [&](const std::string& post_filter_msg) {
    const Diagnosis& d = *diag_;
    result.outcome = ScheduleResult::Outcome::kUnschedulable;
    result.rejector_plugins = d.rejector_plugins;
    if (memo_ != nullptr) {
      if (post_filter_msg.empty()) {
        result.message = memo_->message;
      } else {
        if (memo_->message_with_post_filter.empty() || memo_->post_filter != post_filter_msg) {
          memo_->post_filter = post_filter_msg;
          memo_->message_with_post_filter = with_post_filter(memo_->message, post_filter_msg);
        }
        result.message = memo_->message_with_post_filter;
      }
      result.unresolvable_everywhere = memo_->unresolvable;
    } else {
      result.message = fit_error(num_nodes, d, post_filter_msg);
      result.unresolvable_everywhere = unresolvable_everywhere(num_nodes, d);
    }
    return result;
  };

  // 1. PreFilter.
  Status pre = fw_->run_pre_filter(state_, spec, snap_);
  if (pre.code == Code::kError) {
    result.outcome = ScheduleResult::Outcome::kError;
    result.message =
        fmt::format("{}: {}", fw_->plugin_name(pre.plugin), reasons_->text(pre.reasons[0]));
    return result;
  }
  if (!pre.is_success()) {
    diagnosis_.prefilter_reason = pre.reasons[0];
    prefilter_plugin_ = pre.plugin;
    diagnosis_.rejector_plugins |= std::uint64_t{1} << pre.plugin;
    result.evaluated_nodes = num_nodes;
    return fail({});
  }

  // A failure remembered from an alike pod on this same state stands for steps 2 and 3 (see
  // FailureMemo in the header).
  const NodeId nominated = nominated_node(pod);
  const bool memo_on =
      fw_->config().use_quick_checks && !state_.explain() && nominated == kNoNode && num_nodes > 0;
  std::uint64_t likeness = 0;
  if (memo_on) {
    if (memo_nominations_ != nominations_version_) {
      for (std::size_t i = 0; i < memo_count_; ++i)
        memos_[i].valid = false;
      memo_nominations_ = nominations_version_;
    }
    likeness = likeness_hash(spec);
    memo_ = find_memo(spec, likeness);
    if (memo_ != nullptr) memo_->start = next_start_node_index_;
    if (memo_ != nullptr && memo_->generation != cluster_->generation()) {
      const Refresh r = refresh_memo(*memo_, pod, spec);
      if (r == Refresh::kLost) memo_->valid = false;
      if (r != Refresh::kDone) memo_ = nullptr;
    }
  }
  if (memo_ != nullptr) {
    ++remembered_failures_;
    diag_ = &memo_->diagnosis;
    result.evaluated_nodes = memo_->evaluated;
  } else {
    fw_->prepare_quick(state_, spec, cluster_->quick_device());
    quick_ready_ = true;

    // 2. The nominated node, if any, is evaluated first (evaluateNominatedNode).
    if (nominated != kNoNode) {
      Status s = filter_with_nominated(pod, spec, nodes[nominated]);
      if (s.is_success()) feasible_.push_back(nominated);
    }

    // 3. Filter from the rotating start index until enough feasible nodes are found. Nodes that
    //    fail a quick check on the compact QuickNode copy are skipped without running the plugins
    //    (they would reject them); they still count as processed, as upstream would have evaluated
    //    them. If no node turns out feasible, the skipped ones are evaluated in full afterwards so
    //    that the diagnosis and its message are exactly what the plugins say.
    if (feasible_.empty() && num_nodes > 0) {
      const std::int32_t to_find =
          num_feasible_nodes_to_find(fw_->config().percentage_of_nodes_to_score, num_nodes);
      const auto& quick = cluster_->quick();
      // A local copy of what every filter needs, so the loop keeps it in registers.
      const bool quick_on = fw_->config().use_quick_checks;
      const QuickRequirement needed = fw_->quick_necessary();
      auto quick_reject = [&](NodeId id) {
        if (!quick_on || (!nominated_by_node_.empty() && nominated_by_node_.count(id)))
          return false;
        return !needed.met_by(quick[id]);
      };
      // Nodes whose QuickNode meets every filter's requirement are feasible without the plugins
      // (nodes with nominated pods never take a quick path).
      const QuickNode* quick_base = quick.data();
      const bool necessary_sufficient = fw_->necessary_sufficient();
      // The feasible nodes are written into room made up front (at most to_find of them).
      feasible_.resize(static_cast<std::size_t>(to_find));
      NodeId* const found = feasible_.data();
      std::size_t found_count = 0;
      bool skipped_any = false;
      skipped_.clear();
      std::int32_t processed = 0;
      const auto n = static_cast<std::size_t>(num_nodes);
      const std::size_t start = next_start_node_index_;
      // The quick index names a superset of the nodes `needed` accepts (plus the nodes with
      // nominated pods, which take no quick path): the rest are quick-rejected without reading
      // their copies, and recorded as skipped only if the cycle fails (below).
      const bool indexed =
          quick_on && cluster_->quick_index().candidates(std::min(needed.units, needed.device),
                                                         needed.models, quick_candidates_);
      if (indexed) {
        for (const auto& [id, pods] : nominated_by_node_)
          quick_candidates_[id / 64] |= std::uint64_t{1} << (id % 64);
      }
      // With no node holding nominated pods, what a node's copy says of `needed` and of the
      // sufficient requirement decides its visit below unless it says to ask the plugins: the
      // answers of earlier cycles with the same requirements stand for the nodes that have not
      // changed since.
      const QuickRequirement* const sufficient = fw_->quick_sufficient();
      QuickMeetsCache::Entry* const remembered =
          indexed && nominated_by_node_.empty() ? &meets_cache_.entry(*cluster_, needed, sufficient)
                                                : nullptr;
      // One node in evaluation order: quick-rejected, feasible, or filtered by the plugins.
      enum class Visit : std::uint8_t { kNext, kEnough, kError };
      auto accept = [&](NodeId id) __attribute__((always_inline)) {
        found[found_count++] = id;
        return static_cast<std::int32_t>(found_count) >= to_find ? Visit::kEnough : Visit::kNext;
      };
      auto ask_plugins = [&](NodeId id) __attribute__((always_inline)) {
        Status s = filter_with_nominated(pod, spec, nodes[id]);
        if (s.is_success()) return accept(id);
        if (s.code == Code::kError) {
          result.outcome = ScheduleResult::Outcome::kError;
          result.message =
              fmt::format("{}: {}", fw_->plugin_name(s.plugin), reasons_->text(s.reasons[0]));
          return Visit::kError;
        }
        diagnosis_.node_statuses.emplace_back(id, s);
        if (s.plugin >= 0) diagnosis_.rejector_plugins |= std::uint64_t{1} << s.plugin;
        return Visit::kNext;
      };
      auto visit = [&](NodeId id) __attribute__((always_inline)) {
        if (quick_reject(id)) {
          skipped_any = true;
          if (!indexed) skipped_.push_back(id);
          return Visit::kNext;
        }
        // quick_reject passed it, so it met the necessary requirement unless it has nominated
        // pods (then it takes no quick path).
        if ((necessary_sufficient || fw_->quick_feasible(quick_base[id])) &&
            (nominated_by_node_.empty() || !nominated_by_node_.count(id))) {
          return accept(id);
        }
        return ask_plugins(id);
      };
      // visit() when `remembered` is set (the index is used and no node has nominated pods): the
      // copy's answer, remembered or read, decides the same way.
      auto visit_remembered = [&](NodeId id) __attribute__((always_inline)) {
        switch (remembered->answer(id, quick_base[id], needed, sufficient)) {
          case QuickMeetsCache::Answer::kRejected:
            skipped_any = true;
            return Visit::kNext;
          case QuickMeetsCache::Answer::kAccepted:
            return accept(id);
          case QuickMeetsCache::Answer::kAskPlugins:
            break;
        }
        return ask_plugins(id);
      };
      Visit last = Visit::kNext;
      if (indexed) {
        // The candidates' bits, a word at a time, from the start index to the end and then from
        // the first node to the start index: every other node counts as processed and
        // quick-rejected. Without a stop every node was processed.
        std::size_t visited = 0;
        NodeId stopped_at = 0;
        auto scan = [&](std::size_t from, std::size_t to) {
          for (std::size_t w = from / 64; w * 64 < to; ++w) {
            std::uint64_t bits = quick_candidates_[w];
            if (w == from / 64) bits &= ~std::uint64_t{0} << (from % 64);
            if ((w + 1) * 64 > to) bits &= (std::uint64_t{1} << (to % 64)) - 1;
            while (bits != 0) {
              const auto id =
                  static_cast<NodeId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
              bits &= bits - 1;
              ++visited;
              const Visit v = remembered != nullptr ? visit_remembered(id) : visit(id);
              if (v != Visit::kNext) {
                stopped_at = id;
                return v;
              }
            }
          }
          return Visit::kNext;
        };
        last = scan(start, n);
        if (last == Visit::kNext) last = scan(0, start);
        if (last == Visit::kNext) {
          processed = num_nodes;
          if (visited < n) skipped_any = true;
        } else {
          processed = static_cast<std::int32_t>(
              (stopped_at >= start ? stopped_at - start : stopped_at + n - start) + 1);
        }
      } else {
        for (std::size_t k = 0; k < n && last == Visit::kNext; ++k) {
          const std::size_t at = start + k < n ? start + k : start + k - n;
          processed = static_cast<std::int32_t>(k + 1);
          last = visit(static_cast<NodeId>(at));
        }
      }
      if (last == Visit::kError) {
        feasible_.resize(found_count);
        return result;
      }
      feasible_.resize(found_count);
      next_start_node_index_ = (start + static_cast<std::size_t>(processed)) % n;
      result.evaluated_nodes = processed;
      if (feasible_.empty() && skipped_any) {
        // Every node was processed and none fits: evaluate the quick-rejected ones in full for the
        // diagnosis, merging them into the statuses in evaluation order.
        if (indexed) {
          for (std::size_t k = 0; k < n; ++k) {
            const auto id = static_cast<NodeId>((start + k) % n);
            if (quick_reject(id)) skipped_.push_back(id);
          }
        }
        first_pass_.swap(diagnosis_.node_statuses);
        diagnosis_.node_statuses.clear();
        std::size_t next_first = 0, next_skipped = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const NodeId id = static_cast<NodeId>((start + k) % n);
          if (next_skipped < skipped_.size() && skipped_[next_skipped] == id) {
            ++next_skipped;
            Status s = filter_with_nominated(pod, spec, nodes[id]);
            CAPSIM_CHECK(!s.is_success(), fmt::format("node {} passed the filters after failing a "
                                                      "quick check",
                                                      nodes[id].spec->name));
            diagnosis_.node_statuses.emplace_back(id, s);
            if (s.plugin >= 0) diagnosis_.rejector_plugins |= std::uint64_t{1} << s.plugin;
          } else {
            CAPSIM_CHECK(next_first < first_pass_.size() && first_pass_[next_first].first == id,
                         "the diagnosis lost a node");
            diagnosis_.node_statuses.push_back(first_pass_[next_first++]);
          }
        }
      }
    }
    // Remember this failure for alike pods.
    if (memo_on && feasible_.empty()) {
      FailureMemo& m = *memo_slot();
      m.valid = true;
      m.pod = pod;
      m.hash = likeness;
      m.generation = cluster_->generation();
      m.start = next_start_node_index_;  // a failure processed every node: unchanged
      m.order_start = m.start;
      m.skipped = state_.skip_filter();
      m.diagnosis.node_statuses.swap(diagnosis_.node_statuses);  // diagnosis_ is cleared next cycle
      m.diagnosis.prefilter_reason = 0;
      m.diagnosis.unschedulable_nodes = 0;
      m.by_reason.clear();
      m.by_plugin.fill(0);
      m.unresolvable_nodes = 0;
      for (const auto& [node, st] : m.diagnosis.node_statuses)
        m.tally(st, +1);
      m.evaluated = result.evaluated_nodes;
      finish_memo(m, num_nodes);
      CAPSIM_CHECK(m.diagnosis.rejector_plugins == diagnosis_.rejector_plugins &&
                       m.unresolvable == unresolvable_everywhere(num_nodes, m.diagnosis),
                   "a remembered failure's tallies disagree with its statuses");
      memo_ = &m;
      diag_ = &m.diagnosis;
    }
  }
  result.feasible_nodes = static_cast<std::int32_t>(feasible_.size());

  // 4. No feasible node: PostFilter (preemption).
  if (feasible_.empty()) {
    std::string post_msg;
    if (fw_->has_post_filter()) {
      if (diag_ == &diagnosis_) diagnosis_.unschedulable_nodes = count_unschedulable(diagnosis_);
      if (memo_ != nullptr && memo_->order_start != memo_->start &&
          fw_->post_filter_reads_node_order(spec, snap_)) {
        // The same nodes, in the order of this cycle's start.
        auto& st = memo_->diagnosis.node_statuses;
        const std::size_t n = st.size();
        std::rotate(
            st.begin(),
            st.begin() + static_cast<std::ptrdiff_t>((memo_->start + n - memo_->order_start) % n),
            st.end());
        memo_->order_start = memo_->start;
      }
      PostFilterResult pf = fw_->run_post_filter(state_, pod, spec, *diag_, snap_);
      post_msg = std::move(pf.message);
      post_filter_ran_ = true;
      if (state_.explain()) {
        candidates_ = std::move(pf.candidates);
        chosen_candidate_ = pf.chosen;
      }
      if (pf.status.is_success() && pf.nominated_node != kNoNode) {
        result.nominated_node = pf.nominated_node;
        result.victims = std::move(pf.victims);
      }
    }
    return fail(post_msg);
  }

  // 5. Choose a node.
  NodeId chosen = feasible_.front();
  if (feasible_.size() > 1) {
    Status ps = fw_->run_pre_score(state_, spec, feasible_, snap_);
    if (!ps.is_success()) {
      result.outcome = ScheduleResult::Outcome::kError;
      result.message =
          fmt::format("{}: {}", fw_->plugin_name(ps.plugin), reasons_->text(ps.reasons[0]));
      return result;
    }
    totals_.resize(feasible_.size());
    fw_->run_score(state_, spec, feasible_, snap_, totals_);
    // selectHost: the highest total; ties by evaluation order, or uniformly at random
    // (reservoir sampling) when the profile asks for upstream's random tie-break.
    std::int64_t best = totals_[0];
    std::size_t best_k = 0;
    std::uint64_t ties = 1;
    const bool random = fw_->config().tie_break == TieBreak::kRandom;
    if (!random) {
      // The first highest total, without a branch on each (the totals vary at random).
      for (std::size_t k = 1; k < feasible_.size(); ++k) {
        const bool higher = totals_[k] > best;
        best = higher ? totals_[k] : best;
        best_k = higher ? k : best_k;
      }
    }
    for (std::size_t k = 1; random && k < feasible_.size(); ++k) {
      if (totals_[k] > best) {
        best = totals_[k];
        best_k = k;
        ties = 1;
      } else if (random && totals_[k] == best) {
        ++ties;
        if (tie_rng_.below(ties) == 0) best_k = k;
      }
    }
    chosen = feasible_[best_k];
  }

  // 6. Reserve (devices) and Bind.
  result.placement.node = chosen;
  result.placement.holdings.clear();
  Status rs = fw_->run_reserve(state_, spec, nodes[chosen], result.placement);
  if (!rs.is_success()) {
    diagnosis_.node_statuses.clear();
    diagnosis_.node_statuses.emplace_back(chosen, rs);
    if (rs.plugin >= 0) diagnosis_.rejector_plugins |= std::uint64_t{1} << rs.plugin;
    return fail({});
  }
  Status bs = fw_->run_bind(state_, spec, result.placement);
  if (!bs.is_success()) {
    fw_->run_unreserve(state_, spec, nodes[chosen], result.placement);
    result.outcome = ScheduleResult::Outcome::kError;
    result.message = fmt::format("binding rejected by {}", fw_->plugin_name(bs.plugin));
    return result;
  }
  result.outcome = ScheduleResult::Outcome::kScheduled;
  return result;
}

}  // namespace capsim::fw
