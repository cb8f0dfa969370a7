// The Simulation's autoscaled node groups (sim/run/autoscaler.hpp decides; this applies): the
// periodic scan, scale-ups billed from their request and Ready after the pool's provisioning
// delay, scale-downs, the summary figures and the node-hours invariant. docs/autoscaling.md
// says what follows cluster-autoscaler and what departs.
#include <fmt/format.h>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/run/autoscaler.hpp"
#include "sim/simulation.hpp"

namespace capsim {

void Simulation::start_autoscaler() {
  engine_.schedule(world_->autoscaler.scan_interval, kAutoscalerScan);
}

void Simulation::on_autoscaler_scan(const Event& e) {
  const SimTime now = e.time;
  if (cycle_scheduled_ && e.data == 0) {
    // A scheduling cycle is due now (a node just became Ready, pods finished): let the
    // scheduler try the pods first, as upstream looks at pods the scheduler has marked
    // unschedulable. Once: data 1.
    engine_.schedule(now, kAutoscalerScan, 0, 1);
    return;
  }
  scale_up(now);
  scale_down(now);
  // As the leftover flush: while there is work, or a horizon to reach.
  if (has_hard_work() || (config_.horizon != kEndOfTime && now < config_.horizon)) {
    engine_.schedule(now + world_->autoscaler.scan_interval, kAutoscalerScan);
  }
}

namespace {

// The pods the scheduler tried and could not place (not those waiting for admission, nor those
// nominated to a node where preemption makes room), DaemonSet pods aside.
std::vector<PodId> unschedulable(const Cluster& cluster, const fw::SchedulingQueue& queue) {
  std::vector<PodId> pending;
  for (PodId p = 0; p < cluster.pods().size(); ++p) {
    const PodState& s = cluster.pod(p);
    if (s.phase == PodPhase::kPending && s.node == kNoNode && s.attempts > 0 &&
        s.nominated_node == kNoNode && queue.contains(p) &&
        *cluster.spec(p).controller_kind != "DaemonSet") {
      pending.push_back(p);
    }
  }
  return pending;
}

}  // namespace

void Simulation::scale_up(SimTime now) {
  const std::vector<PodId> pending = unschedulable(cluster_, queue_);
  if (pending.empty()) return;
  std::optional<Autoscaler::Option> o = autoscaler_->plan_scale_up(pending);
  if (!o) return;
  const PoolAutoscaling& group = autoscaler_->group(o->group);
  const std::vector<NodeId> nodes = autoscaler_->provision(o->group, o->nodes);
  autoscaler_->note_scale_up(now);
  integrate();
  Autoscaler::Books& b = autoscaler_->books;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const NodeId n = nodes[k];
    ledger_.set_billed(n, true);  // cloud instances bill from launch
    b.billed_since[n] = now;
    b.requested_at[n] = now;
    // The pods are counted once, against the first node (all of a scale-up's nodes are Ready
    // together).
    if (k == 0) b.waiting[n] = o->pods;
    ++b.nodes_added;
    engine_.schedule(now + group.provisioning_delay, kNodeProvisioned, n);
    record("scale-up", kNoPod, n,
           fmt::format("pool {}: {} node(s) for {} pending pod(s), Ready in {}", group.pool,
                       nodes.size(), o->pods.size(), format_duration(group.provisioning_delay)));
  }
}

void Simulation::on_node_provisioned(const Event& e) {
  const NodeId node = e.subject;
  const SimTime now = engine_.now();
  integrate();
  autoscaler_->books.advance_fleet(now, cluster_.totals());
  cluster_.set_absent(node, false);
  ledger_.node_changed(node);
  autoscaler_->mark_ready(node);
  Autoscaler::Books& b = autoscaler_->books;
  for (PodId p : b.waiting[node]) {
    const PodState& s = cluster_.pod(p);
    if (s.phase != PodPhase::kPending || s.node != kNoNode) continue;  // placed elsewhere
    b.provisioning_wait_seconds +=
        to_seconds(now - std::max(b.requested_at[node], s.pending_since));
  }
  b.waiting[node].clear();
  b.requested_at[node] = -1;
  record("node-ready", kNoPod, node, fmt::format("pool {}", world_->nodes[node].pool));
  cluster_event(fw::kEvNodeAdded);
  // Consolidation's replacement is Ready: the node it replaces is drained now.
  const NodeId old = autoscaler_->take_replaced(node);
  if (old != kNoNode && autoscaler_->state(old) == Autoscaler::State::kDraining)
    begin_drain_evictions(old);
}

void Simulation::scale_down(SimTime now) {
  const std::vector<PodId> pending = config_.scale_down.consolidation.enabled
                                         ? unschedulable(cluster_, queue_)
                                         : std::vector<PodId>{};
  Autoscaler::ScaleDown d = autoscaler_->plan_scale_down(now, budgets_, pending);
  for (NodeId n : d.removed)
    remove_group_node(n, "empty");
  Autoscaler::Books& b = autoscaler_->books;
  for (const auto& [n, why] : d.blocked) {
    ++b.blocked;
    record("scale-down-blocked", kNoPod, n, why);
  }
  if (d.drain != kNoNode) {
    cluster_.set_cordoned(d.drain, true);  // upstream's ToBeDeletedByClusterAutoscaler taint
    record("scale-down-drain", kNoPod, d.drain, d.drain_why);
    begin_drain_evictions(d.drain);
  }
  if (d.replace_old != kNoNode) {
    // Karpenter launches the replacement first and drains the old node once it is Ready; the
    // old node is tainted (karpenter.sh/disrupted) meanwhile.
    const PoolAutoscaling& group = autoscaler_->group(d.replace_group);
    const NodeId fresh = autoscaler_->provision(d.replace_group, 1).front();
    autoscaler_->set_replacement(fresh, d.replace_old);
    integrate();
    cluster_.set_cordoned(d.replace_old, true);
    ledger_.set_billed(fresh, true);
    b.billed_since[fresh] = now;
    b.requested_at[fresh] = now;
    ++b.nodes_added;
    ++b.replacements;
    engine_.schedule(now + group.provisioning_delay, kNodeProvisioned, fresh);
    record("consolidation-replace", kNoPod, d.replace_old,
           fmt::format("{}; replaced by {}", d.replace_why, world_->nodes[fresh].name));
    record(
        "scale-up", kNoPod, fresh,
        fmt::format("pool {}: 1 node(s) to replace {}, Ready in {}", group.pool,
                    world_->nodes[d.replace_old].name, format_duration(group.provisioning_delay)));
  }
  // Drains that outlived max_graceful_termination end now (upstream removes the node anyway).
  for (NodeId n : autoscaler_->draining()) {
    const SimTime since = autoscaler_->drain_started(n);
    if (since < 0) continue;  // waiting for its replacement
    finish_drain(n, now - since >= config_.scale_down.max_graceful_termination);
  }
}

void Simulation::begin_drain_evictions(NodeId node) {
  const SimTime now = engine_.now();
  autoscaler_->begin_evictions(node, now);
  Autoscaler::Books& b = autoscaler_->books;
  const NodeInfo& n = cluster_.node(node);
  if (!n.down) {
    // Evictions change the node's pod list (a gang's siblings go too): walk a copy.
    for (PodId pod : std::vector<PodId>(n.pods)) {
      const PodState& s = cluster_.pod(pod);
      if (s.node != node || *cluster_.spec(pod).controller_kind == "DaemonSet") continue;
      if (s.phase != PodPhase::kRunning && s.phase != PodPhase::kCrashBackoff) continue;
      ++b.evictions;
      terminate(pod, kScaleDownEvictKind,
                fmt::format("evicted: node {} is removed by a scale-down", n.spec->name));
    }
  }
  finish_drain(node, false);
}

void Simulation::finish_drain(NodeId node, bool force) {
  const NodeInfo& n = cluster_.node(node);
  if (n.down) {
    // A failure took it (and its pods) meanwhile: the repair brings it back, Ready.
    autoscaler_->abort_drain(node);
    if (n.cordoned) cluster_.set_cordoned(node, false);
    record("scale-down-abort", kNoPod, node, "the node failed while it was drained");
    return;
  }
  for (PodId pod : n.pods) {
    if (*cluster_.spec(pod).controller_kind != "DaemonSet" && !force) return;  // still leaving
  }
  Autoscaler::Books& b = autoscaler_->books;
  for (PodId pod : std::vector<PodId>(n.pods)) {
    PodState& s = cluster_.pod(pod);
    if (s.node != node || *cluster_.spec(pod).controller_kind == "DaemonSet") continue;
    // Still terminating at max_graceful_termination: its grace period is cut short.
    if (s.phase == PodPhase::kRunning || s.phase == PodPhase::kCrashBackoff)
      terminate(pod, kScaleDownEvictKind, "its node is removed by a scale-down");
    if (cluster_.pod(pod).node != node) continue;  // a gang restart moved it already
    cluster_.pod(pod).run.cancel();
    ++b.drain_kills;
    record("scale-down-kill", pod, node, "still terminating at max_graceful_termination");
    end_termination(pod, "its node was removed by a scale-down");
  }
  cluster_.set_cordoned(node, false);
  autoscaler_->drained(node);
  ++b.drains;
  remove_group_node(node, "drained");
}

void Simulation::remove_group_node(NodeId n, std::string_view why) {
  const SimTime now = engine_.now();
  integrate();
  Autoscaler::Books& b = autoscaler_->books;
  // DaemonSet pods stop with their node, as after a drain; recreated, they stay pending until
  // the node comes back (the scale-up does not count them).
  for (PodId pod : std::vector<PodId>(cluster_.node(n).pods)) {
    lifecycle_.terminate(pod);
    record("scale-down-stop", pod, n, "its node is removed by a scale-down");
    end_termination(pod, "its node was removed by a scale-down");
  }
  integrate();
  b.advance_fleet(now, cluster_.totals());
  cluster_.set_absent(n, true);
  ledger_.set_billed(n, false);
  b.billed_seconds[n] += to_seconds(now - b.billed_since[n]);
  b.billed_since[n] = -1;
  ++b.nodes_removed;
  record("scale-down", kNoPod, n, fmt::format("pool {}: {}", world_->nodes[n].pool, why));
}

void Simulation::check_autoscaler_nodes() const {
  for (NodeId n = 0; n < cluster_.nodes().size(); ++n) {
    if (!autoscaler_->is_group_node(n)) continue;
    const NodeInfo& node = cluster_.node(n);
    const Autoscaler::State st = autoscaler_->state(n);
    const bool present = st == Autoscaler::State::kReady || st == Autoscaler::State::kDraining;
    CAPSIM_CHECK(
        (st == Autoscaler::State::kAbsent) == !ledger_.billed(n) && present == !node.absent,
        fmt::format("node {}: its group state, presence and billing disagree", node.spec->name));
    // A removed (or not yet Ready) node holds no pod and offers nothing.
    CAPSIM_CHECK(
        !node.absent || (node.pods.empty() && node.allocatable[kCpu] == 0 && node.units.empty()),
        fmt::format("node {} is absent but holds a pod or offers capacity", node.spec->name));
  }
}

void Simulation::put_fleet_summary(Summary& summary, double fleet_gpu_seconds,
                                   const std::array<double, kGpuSharingModes>& mode_gpu_seconds) {
  auto put = [&](std::string k, double v) { put_metric(summary, std::move(k), v); };
  const std::vector<double> hours = ledger_.pool_node_hours();
  double total = 0;
  for (std::size_t p = 0; p < hours.size(); ++p) {
    total += hours[p];
    if (!ledger_.pools()[p].empty())
      put(fmt::format("pool.{}.node_hours", ledger_.pools()[p]), hours[p]);
  }
  put("node_hours", total);
  // The allocation and utilisation ratios are over the GPUs that existed when (the fleet's
  // integral), not over the end's fleet times the run.
  auto value = [&](const std::string& k) -> double* {
    for (auto& [name, v] : summary) {
      if (name == k) return &v;
    }
    return nullptr;
  };
  auto ratio = [&](const std::string& ratio_name, const std::string& hours_name, double seconds) {
    double* r = value(ratio_name);
    const double* h = value(hours_name);
    if (r != nullptr && h != nullptr) *r = seconds > 0 ? *h * 3600.0 / seconds : 0.0;
  };
  ratio("gpu_allocation_ratio_mean", "gpu_hours_allocated", fleet_gpu_seconds);
  ratio("gpu_utilization_ratio_mean", "gpu_hours_busy", fleet_gpu_seconds);
  static constexpr std::array<const char*, kGpuSharingModes> kModes = {
      "none", "mig", "time-slicing", "mps", "share"};
  for (std::size_t m = 0; m < kGpuSharingModes; ++m) {
    ratio(fmt::format("sharing.{}.allocation_ratio_mean", kModes[m]),
          fmt::format("sharing.{}.gpu_hours_allocated", kModes[m]), mode_gpu_seconds[m]);
  }
}

void Simulation::add_autoscaling_summary(Summary& summary, SimTime end) {
  auto put = [&](std::string k, double v) { put_metric(summary, std::move(k), v); };
  Autoscaler::Books& b = autoscaler_->books;
  // Pods still waiting at the end for a node being provisioned for them.
  double waiting = b.provisioning_wait_seconds;
  for (NodeId n = 0; n < b.waiting.size(); ++n) {
    for (PodId p : b.waiting[n]) {
      const PodState& s = cluster_.pod(p);
      if (s.phase != PodPhase::kPending || s.node != kNoNode) continue;
      waiting += to_seconds(end - std::max(b.requested_at[n], s.pending_since));
    }
  }
  put("nodes_added", static_cast<double>(b.nodes_added));
  put("nodes_removed", static_cast<double>(b.nodes_removed));
  put("pending_seconds_due_to_provisioning", waiting);
  put("scale_down_drains", static_cast<double>(b.drains));
  put("scale_down_evictions", static_cast<double>(b.evictions));
  put("scale_down_blocked", static_cast<double>(b.blocked));
  put("consolidation_replacements", static_cast<double>(b.replacements));
  put("gpu_hours_lost_to_scale_down", b.gpu_seconds_lost / 3600.0);
  b.advance_fleet(end, cluster_.totals());
  put_fleet_summary(summary, b.fleet_gpu_seconds, b.fleet_mode_gpu_seconds);
  check_autoscaling(end);
}

void Simulation::check_autoscaling(SimTime now) const {
  // Node-hours accrue only while a node exists: the ledger's integral equals the recount of
  // each node's billed stretches, no node is billed longer than the run, a group's absent node
  // is not billed, and a provisioning node is billed but absent.
  check_autoscaler_nodes();
  const Autoscaler::Books& b = autoscaler_->books;
  double recount = 0;
  const double run = to_seconds(now);
  for (NodeId n = 0; n < cluster_.nodes().size(); ++n) {
    const double open = b.billed_since[n] >= 0 ? to_seconds(now - b.billed_since[n]) : 0.0;
    const double billed = b.billed_seconds[n] + open;
    CAPSIM_CHECK(billed <= run + 1e-6, fmt::format("node {} billed {} s in a run of {} s",
                                                   cluster_.node(n).spec->name, billed, run));
    CAPSIM_CHECK(
        (b.billed_since[n] >= 0) == ledger_.billed(n),
        fmt::format("node {}: billing and the autoscaler disagree", cluster_.node(n).spec->name));
    recount += billed;
  }
  // The ledger has integrated up to its last advance(), which is `now` at the end of a run.
  double ledger_hours = 0;
  for (double h : ledger_.pool_node_hours())
    ledger_hours += h;
  CAPSIM_CHECK(std::abs(ledger_hours * 3600.0 - recount) <= 1e-6 * (1 + recount),
               fmt::format("node-hours {} drifted from the nodes' billed time {} h", ledger_hours,
                           recount / 3600.0));
}

}  // namespace capsim
