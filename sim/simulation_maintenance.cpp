// The Simulation's maintenance windows: cordon, drain through the Eviction API (respecting
// PodDisruptionBudgets), the planned downtime of the work itself, and the return of the node.
// sim/run/maintenance.hpp says which upstream behaviour each step follows.
#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/simulation.hpp"

namespace capsim {

bool Simulation::only_background_events() const {
  return engine_.pending() ==
             static_cast<std::size_t>(failure_events_ + maintenance_events_ + spot_events_) &&
         !has_hard_work() && queue_.size() == 0 && gangs_.parked() == 0 &&
         models_.admission->held_pods() == 0;
}

void Simulation::on_maintenance_open(const Event& e) {
  --maintenance_events_;
  const MaintenanceWindow& w = maintenance_.window(e.data);
  record("maintenance-open", kNoPod, kNoNode,
         fmt::format("{}: {} node(s), {} at a time", w.name, w.nodes.size(), w.max_parallel));
  take_maintenance_nodes(e.data);
}

void Simulation::take_maintenance_nodes(std::size_t window) {
  for (NodeId node = maintenance_.take_next(window); node != kNoNode;
       node = maintenance_.take_next(window)) {
    MaintenanceProgress::NodeProgress& np = maintenance_.node(node);
    const std::string& name = cluster_.node(node).spec->name;
    const bool spot_gone = spot_on_ && spot_nodes_[node].step != SpotStep::kUp;
    if (np.step != MaintenanceProgress::Step::kIdle || health_.node_down(node) || spot_gone) {
      // Down (failed), reclaimed (spot) or already taken by another window: there is nothing
      // to drain.
      record("maintenance-skip", kNoPod, node,
             fmt::format("{}: node {} is {}", maintenance_.window(window).name, name,
                         health_.node_down(node) ? "down"
                         : spot_gone             ? "reclaimed (spot)"
                                                 : "already in maintenance"));
      ++maintenance_.skipped;
      maintenance_.release(window);
      continue;
    }
    np.step = MaintenanceProgress::Step::kDraining;
    np.drain_started = engine_.now();
    np.refused.clear();
    cluster_.set_cordoned(node, true);
    record("cordon", kNoPod, node, maintenance_.window(window).name);
    drain(node, window);
  }
  if (maintenance_.finished(window)) {
    record("maintenance-close", kNoPod, kNoNode, maintenance_.window(window).name);
  }
}

void Simulation::drain(NodeId node, std::size_t window) {
  MaintenanceProgress::NodeProgress& np = maintenance_.node(node);
  const MaintenanceWindow& w = maintenance_.window(window);
  const SimTime now = engine_.now();
  if (health_.node_down(node)) {
    // It failed while draining: its pods are gone with it, and the failure's repair brings it
    // back; the maintenance of this node is dropped.
    record("maintenance-skip", kNoPod, node,
           fmt::format("{}: the node failed while draining", w.name));
    ++maintenance_.skipped;
    end_node_maintenance(node, window);
    return;
  }
  bool waiting = false;
  // Evictions change the node's pod list (a gang's siblings go too): walk a copy.
  const std::vector<PodId> pods = cluster_.node(node).pods;
  for (PodId pod : pods) {
    const PodState& s = cluster_.pod(pod);
    if (s.node != node) continue;
    const PodSpec& spec = cluster_.spec(pod);
    if (*spec.controller_kind == "DaemonSet") continue;  // kubectl drain --ignore-daemonsets
    if (s.phase == PodPhase::kTerminating) {
      waiting = true;  // its grace period runs
      continue;
    }
    const EvictionVerdict v = budgets_.may_evict(cluster_, pod);
    if (!v.allowed) {
      waiting = true;
      if (std::find(np.refused.begin(), np.refused.end(), pod) == np.refused.end()) {
        np.refused.push_back(pod);
        ++maintenance_.refusals;
        record("evict-refused", pod, node, v.reason);
      }
      continue;
    }
    ++maintenance_.evictions;
    terminate(
        pod, "drain",
        fmt::format("evicted: node {} is drained for {}", cluster_.node(node).spec->name, w.name));
    waiting = true;
  }
  if (!waiting) {
    // What is left is DaemonSet pods: they stop with the node and come back with it (their
    // controller's pods are pending meanwhile: the down node's taint keeps them off it).
    for (PodId pod : std::vector<PodId>(cluster_.node(node).pods)) {
      lifecycle_.terminate(pod);
      record("drain", pod, node, "its node goes down for maintenance");
      end_termination(pod, "its node went down for maintenance");
    }
    integrate();
    maintenance_.drain_seconds += to_seconds(now - np.drain_started);
    np.step = MaintenanceProgress::Step::kWorking;
    health_.take_node_down(node, now, Interruption::kPlanned);
    ledger_.node_changed(node);
    record("maintenance-start", kNoPod, node,
           fmt::format("{}: drained in {}; back in {}", w.name,
                       format_duration(now - np.drain_started), format_duration(w.duration)));
    ++maintenance_events_;
    engine_.schedule(now + w.duration, kMaintenanceDone, node, window);
    return;
  }
  if (w.drain_timeout > 0 && now - np.drain_started >= w.drain_timeout) {
    record("drain-timeout", kNoPod, node,
           fmt::format("{}: not drained after {}; the node is {}", w.name,
                       format_duration(now - np.drain_started),
                       w.keep_cordoned_on_timeout ? "left cordoned" : "uncordoned"));
    ++maintenance_.blocked;
    end_node_maintenance(node, window, /*uncordon=*/!w.keep_cordoned_on_timeout);
    return;
  }
  SimTime next = now + kDrainRetry;
  if (w.drain_timeout > 0) next = std::min(next, np.drain_started + w.drain_timeout);
  ++maintenance_events_;
  engine_.schedule(next, kDrainPoll, node, window);
}

void Simulation::on_drain_poll(const Event& e) {
  --maintenance_events_;
  if (maintenance_.node(e.subject).step != MaintenanceProgress::Step::kDraining) return;
  drain(e.subject, e.data);
}

void Simulation::on_maintenance_done(const Event& e) {
  --maintenance_events_;
  const NodeId node = e.subject;
  integrate();
  health_.bring_node_up(node, engine_.now());
  ledger_.node_changed(node);
  ++maintenance_.drained;
  record("maintenance-end", kNoPod, node, maintenance_.window(e.data).name);
  end_node_maintenance(node, e.data);
}

void Simulation::end_node_maintenance(NodeId node, std::size_t window, bool uncordon) {
  MaintenanceProgress::NodeProgress& np = maintenance_.node(node);
  np.step = MaintenanceProgress::Step::kIdle;
  np.refused.clear();
  if (uncordon && cluster_.node(node).cordoned) {
    cluster_.set_cordoned(node, false);
    record("uncordon", kNoPod, node, maintenance_.window(window).name);
  }
  maintenance_.release(window);
  cluster_event(fw::kEvNodeChanged);  // pending pods may fit on it again
  take_maintenance_nodes(window);
}

void Simulation::add_maintenance_summary(Summary& summary, SimTime end) {
  auto put = [&](const char* k, double v) { put_metric(summary, k, v); };
  put("maintenance_drains", static_cast<double>(maintenance_.drained));
  put("maintenance_drains_blocked", static_cast<double>(maintenance_.blocked));
  put("maintenance_nodes_skipped", static_cast<double>(maintenance_.skipped));
  put("maintenance_evictions", static_cast<double>(maintenance_.evictions));
  put("maintenance_evictions_refused", static_cast<double>(maintenance_.refusals));
  put("maintenance_drain_seconds_mean",
      maintenance_.drained > 0
          ? maintenance_.drain_seconds / static_cast<double>(maintenance_.drained)
          : 0.0);
  put("gpu_hours_lost_to_maintenance", maintenance_.gpu_seconds_lost / 3600.0);
  if (!failures_on_) health_.add_summary(summary, end);
}

}  // namespace capsim
