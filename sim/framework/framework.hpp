// A scheduler profile at run time: the plugin instances and, per extension point, which of them
// run in which order (and with which weight, for Score). Framework runs one extension point at a
// time; the Scheduler strings the points together into a scheduling cycle. Profiles are built by
// models/plugin_registry from KubeSchedulerConfiguration-shaped YAML; nothing here knows plugin
// names.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/framework/plugin.hpp"

namespace capsim::fw {

enum class TieBreak : std::uint8_t {
  kFirst,   // capsim default: the first top-scoring node in evaluation order
  kRandom,  // kube-scheduler: uniformly among the top-scoring nodes (seeded stream)
};

struct ProfileConfig {
  std::string name = "default-scheduler";
  std::vector<std::unique_ptr<Plugin>> plugins;
  // Indices into `plugins`, in run order, per extension point.
  std::size_t queue_sort = 0;
  std::vector<std::size_t> pre_filter, filter, post_filter, pre_score, reserve, bind;
  std::vector<std::pair<std::size_t, std::int64_t>> score;  // (plugin, weight)
  // KubeSchedulerConfiguration knobs.
  std::int32_t percentage_of_nodes_to_score = 0;  // 0: adaptive, as kube-scheduler
  TieBreak tie_break = TieBreak::kFirst;
  SimDuration pod_initial_backoff = 1 * kSecond;
  SimDuration pod_max_backoff = 10 * kSecond;
  SimDuration max_unschedulable_duration = 5 * kMinute;  // 0: never flush on a timer
  // Skip plugin calls on nodes that fail a quick check (same results, less work); off only in
  // the test that proves the results are the same.
  bool use_quick_checks = true;
  // Fail alike pods of a backlog as groups where that changes no result (the Simulation's bulk
  // retries); off only in the test that proves the results are the same.
  bool bulk_retries = true;
};

class Framework {
 public:
  explicit Framework(ProfileConfig config);

  const std::string& name() const { return cfg_.name; }
  const ProfileConfig& config() const { return cfg_; }
  std::size_t plugin_count() const { return cfg_.plugins.size(); }
  const Plugin& plugin(std::size_t i) const { return *cfg_.plugins[i]; }
  std::string_view plugin_name(std::int16_t i) const {
    return i < 0 ? std::string_view("framework")
                 : cfg_.plugins[static_cast<std::size_t>(i)]->name();
  }
  // The state of every plugin's random stream (Plugin::random_stream), and its restoration.
  std::vector<RandomStream> save_random_streams() const;
  void restore_random_streams(const std::vector<RandomStream>& saved) const;
  // Plugins (by bit) whose events_to_register() intersects `events`.
  std::uint64_t plugins_interested_in(EventMask events) const;
  // The events that move a pod these plugins rejected (every event when none is to blame).
  EventMask events_moving(std::uint64_t rejector_plugins) const;

  bool queue_less(const QueuedPodInfo& a, const QueuedPodInfo& b) const;

  // PreFilter: runs every PreFilter plugin; a Skip marks the plugin's Filter as skipped for this
  // cycle. Returns the first rejection (with `plugin` set) or success.
  Status run_pre_filter(CycleState& state, const PodSpec& pod, const Snapshot& snap) const;
  // Asks the Filter plugins that run for this cycle's pod (after PreFilter) what a QuickNode must
  // show for them to accept (necessary) and what is enough (sufficient); `device` is the
  // resource QuickNode::device counts. Run once per cycle before quick_necessary(),
  // quick_feasible() and run_filters(quick).
  void prepare_quick(const CycleState& state, const PodSpec& pod, ResourceId device) const;
  // What every filter that runs needs of a node's copy: one that does not meet it is rejected
  // (so it is infeasible; no plugin needs calling). Used only with use_quick_checks.
  const QuickRequirement& quick_necessary() const { return quick_necessary_; }
  // Every filter accepts a node with this copy (so it is feasible; no plugin needs calling).
  bool quick_feasible(const QuickNode& node) const {
    return quick_all_ && quick_combined_.met_by(node);
  }
  // The requirement quick_feasible() checks, or null when it accepts no node.
  const QuickRequirement* quick_sufficient() const {
    return quick_all_ ? &quick_combined_ : nullptr;
  }
  // Whether quick_feasible() is quick_necessary().met_by() (the requirements are equal): then a
  // node that meets the necessary requirement is feasible without a second look.
  bool necessary_sufficient() const { return necessary_sufficient_; }
  // Filter: the first failing plugin's status, or success. With `quick` (the node's QuickNode,
  // exact for `node`), a plugin whose prepared requirement the copy meets is not called.
  Status run_filters(const CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     const QuickNode* quick = nullptr) const;
  // Whether every Filter plugin that runs for this cycle (not skipped at PreFilter) says pods
  // `a` and `b` filter alike (FilterPlugin::filters_alike).
  bool filters_alike(const CycleState& state, const PodSpec& a, const PodSpec& b) const;
  bool has_post_filter() const { return !cfg_.post_filter.empty(); }
  // Whether some PostFilter plugin reads the diagnosis's statuses in order for this pod.
  bool post_filter_reads_node_order(const PodSpec& spec, const Snapshot& snap) const;
  PostFilterResult run_post_filter(CycleState& state, PodId pod, const PodSpec& spec,
                                   const Diagnosis& diagnosis, const Snapshot& snap) const;
  Status run_pre_score(CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                       const Snapshot& snap) const;
  // Score + NormalizeScore + weights: totals[i] receives the weighted sum for nodes[i].
  void run_score(const CycleState& state, const PodSpec& pod, std::span<const NodeId> nodes,
                 const Snapshot& snap, std::span<std::int64_t> totals) const;
  Status run_reserve(CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     Placement& placement) const;
  void run_unreserve(CycleState& state, const PodSpec& pod, const NodeInfo& node,
                     Placement& placement) const;
  Status run_bind(CycleState& state, const PodSpec& pod, const Placement& placement) const;

 private:
  ProfileConfig cfg_;
  const QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<std::pair<std::size_t, PreFilterPlugin*>> pre_filter_;
  std::vector<std::pair<std::size_t, const FilterPlugin*>> filter_;
  std::vector<std::pair<std::size_t, PostFilterPlugin*>> post_filter_;
  std::vector<std::pair<std::size_t, PreScorePlugin*>> pre_score_;
  struct ScoreEntry {
    std::size_t index;
    const ScorePlugin* plugin;
    std::int64_t weight;
  };
  std::vector<ScoreEntry> score_;
  std::vector<std::pair<std::size_t, ReservePlugin*>> reserve_;
  std::vector<std::pair<std::size_t, BindPlugin*>> bind_;
  mutable std::vector<std::int64_t> scratch_;
  // Per cycle (prepare_quick): what every running filter needs, merged; per filter_ entry,
  // whether it stated a sufficient requirement and which; and all of those merged, valid when
  // every running filter stated one.
  mutable std::vector<std::uint8_t> quick_known_;
  mutable std::vector<QuickRequirement> quick_req_;
  mutable QuickRequirement quick_necessary_;
  mutable QuickRequirement quick_combined_;
  mutable bool quick_all_ = false;
  mutable bool necessary_sufficient_ = false;
};

}  // namespace capsim::fw
