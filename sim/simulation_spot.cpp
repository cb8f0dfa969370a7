// The Simulation's spot pools: modelled and traced reclaims, the interruption notice (cordon, and
// graceful termination of the pods without asking PodDisruptionBudgets: a cloud reclaim does not
// go through the Eviction API), the node's removal at the end of the notice (absent and not
// billed, killing whatever still runs on it), its return, and the summary figures. What each step
// follows upstream is in docs/spot.md:
//   - AWS gives a spot instance a two-minute interruption notice; AWS Node Termination Handler
//     taints the node aws-node-termination-handler/spot-itn, cordons it and drains it, and the
//     kubelet gives each pod its terminationGracePeriodSeconds. GCE's preemption notice is 30 s.
//   - at the end of the notice the instance is terminated: the node goes away with its pods, and
//     the pods' controllers recreate them elsewhere (a Job's pod does not count against its
//     backoffLimit, as after a drain); a bare pod, which nothing recreates, is deleted.
//   - the cloud may give the capacity back later (`return_after`): the node joins again, empty.
#include <fmt/format.h>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/run/autoscaler.hpp"
#include "sim/simulation.hpp"

namespace capsim {

void Simulation::arm_reclaim(std::size_t pool) {
  if (spot_armed_[pool] != 0 || !spot_.modelled(pool)) return;
  const SimTime now = engine_.now();
  const bool until_horizon = config_.horizon != kEndOfTime && now < config_.horizon;
  if (!until_horizon && !has_hard_work()) return;  // nothing runs: bind_pod arms it again
  const SimTime t = spot_.next_time(pool, now);
  spot_armed_[pool] = 1;
  // Past the horizon the process is over; it stays armed (as arm_failure does), so that a pod
  // starting later does not draw it a new time.
  if (t == kEndOfTime || (config_.horizon != kEndOfTime && t > config_.horizon)) return;
  ++spot_events_;
  engine_.schedule(t, kSpotReclaim, 0, pool);
}

void Simulation::on_spot_reclaim(const Event& e) {
  const auto pool = static_cast<std::size_t>(e.data);
  spot_armed_[pool] = 0;
  --spot_events_;
  const bool until_horizon = config_.horizon != kEndOfTime && engine_.now() < config_.horizon;
  if (!until_horizon && !has_hard_work()) return;  // the work ended before it
  const SpotProcess::Reclaim r = spot_.draw(pool);
  // Thinning: a node that is not up (under notice, reclaimed, down, absent, cordoned for
  // maintenance) has no rate, so its draw is no reclaim.
  const NodeInfo& n = cluster_.node(r.node);
  if (spot_nodes_[r.node].step == SpotStep::kUp && !n.absent && !n.down && !n.cordoned) {
    apply_reclaim(r, "");
  }
  arm_reclaim(pool);
}

void Simulation::on_traced_reclaim(const Event& e) {
  const auto& trace = spot_.trace();
  const std::size_t i = e.data;
  --spot_events_;
  if (i + 1 < trace.size()) {
    ++spot_events_;
    engine_.schedule(trace[i + 1].time, kTracedReclaim, 0, i + 1);
  }
  const TracedReclaim& t = trace[i];
  const NodeInfo& n = cluster_.node(t.node);
  if (spot_nodes_[t.node].step != SpotStep::kUp || n.absent || n.down || n.cordoned) {
    ++spot_skipped_;
    record(
        "spot-reclaim-skip", kNoPod, t.node,
        fmt::format("{}: node {} is not up (reclaimed, down or cordoned)", t.source, n.spec->name));
    return;
  }
  apply_reclaim(SpotProcess::Reclaim{t.node, t.notice, t.return_after}, t.source);
}

void Simulation::apply_reclaim(const SpotProcess::Reclaim& r, std::string_view source) {
  const SimTime now = engine_.now();
  const NodeId node = r.node;
  SpotNode& sn = spot_nodes_[node];
  sn.step = SpotStep::kNotice;
  sn.return_after = r.return_after;
  ++spot_notices_;
  const std::string& name = cluster_.node(node).spec->name;
  cluster_.set_cordoned(node, true);
  record("spot-notice", kNoPod, node,
         fmt::format("pool {}: tainted {}:NoSchedule and cordoned; reclaimed in {}{}{}",
                     world_->nodes[node].pool, kSpotNoticeTaint, format_duration(r.notice),
                     source.empty() ? "" : "; ", source));
  // Every pod but a DaemonSet's is terminated with its grace period; no budget is asked.
  // Terminations change the node's pod list (a gang's siblings go too): walk a copy.
  const std::string detail =
      fmt::format("evicted: node {} is reclaimed (spot) in {}", name, format_duration(r.notice));
  for (PodId pod : std::vector<PodId>(cluster_.node(node).pods)) {
    const PodState& s = cluster_.pod(pod);
    if (s.node != node || *cluster_.spec(pod).controller_kind == "DaemonSet") continue;
    terminate(pod, kSpotReclaimKind, detail);
  }
  ++spot_events_;
  engine_.schedule(now + r.notice, kReclaimEnd, node);
}

void Simulation::on_reclaim_end(const Event& e) {
  const NodeId node = e.subject;
  const SimTime now = engine_.now();
  --spot_events_;
  SpotNode& sn = spot_nodes_[node];
  CAPSIM_CHECK(sn.step == SpotStep::kNotice,
               fmt::format("node {}: a reclaim ends without its notice", world_->nodes[node].name));
  const NodeInfo& n = cluster_.node(node);
  bool overtaken = n.down;
  for (const GpuDeviceState& g : n.gpus)
    overtaken = overtaken || g.failed || g.reconfiguring;
  if (overtaken) {
    // A failure (or a MIG re-layout) overtook the reclaim: its repair brings the node back, and
    // this reclaim is dropped.
    ++spot_skipped_;
    sn.step = SpotStep::kUp;
    cluster_.set_cordoned(node, false);
    record("spot-reclaim-skip", kNoPod, node, "a failure or MIG re-layout overtook the reclaim");
    cluster_event(fw::kEvNodeChanged);
    return;
  }
  // What still runs (a grace period longer than the notice, DaemonSet pods) is killed.
  for (PodId pod : std::vector<PodId>(cluster_.node(node).pods)) {
    PodState& s = cluster_.pod(pod);
    if (s.node != node) continue;
    if (*cluster_.spec(pod).controller_kind == "DaemonSet") {
      lifecycle_.terminate(pod);
      record("spot-kill", pod, node, "its node is reclaimed");
      end_termination(pod, "its node was reclaimed");
      continue;
    }
    if (s.phase == PodPhase::kRunning || s.phase == PodPhase::kCrashBackoff)
      terminate(pod, kSpotReclaimKind, "its node is reclaimed");
    if (cluster_.pod(pod).node != node) continue;  // a gang restart moved it already
    cluster_.pod(pod).run.cancel();                // its grace period is cut short
    ++spot_kills_;
    record("spot-kill", pod, node, "still terminating when its node was reclaimed");
    end_termination(pod, "its node was reclaimed");
  }
  integrate();
  spot_fleet_changes();
  cluster_.set_cordoned(node, false);
  cluster_.set_absent(node, true);
  ledger_.set_billed(node, false);
  if (autoscaling_on_) {
    Autoscaler::Books& b = autoscaler_->books;
    b.billed_seconds[node] += to_seconds(now - b.billed_since[node]);
    b.billed_since[node] = -1;
  }
  sn.step = SpotStep::kReclaimed;
  ++spot_reclaims_;
  ++pool_reclaims_[static_cast<std::size_t>(spot_.pool_of(node))];
  record(
      "spot-reclaim", kNoPod, node,
      fmt::format("pool {}: removed; {}", world_->nodes[node].pool,
                  sn.return_after >= 0 ? fmt::format("back in {}", format_duration(sn.return_after))
                                       : std::string("not coming back")));
  if (sn.return_after >= 0) {
    ++spot_events_;
    engine_.schedule(now + sn.return_after, kSpotReturn, node);
  }
}

void Simulation::on_spot_return(const Event& e) {
  const NodeId node = e.subject;
  const SimTime now = engine_.now();
  --spot_events_;
  SpotNode& sn = spot_nodes_[node];
  CAPSIM_CHECK(sn.step == SpotStep::kReclaimed,
               fmt::format("node {} returns but was not reclaimed", world_->nodes[node].name));
  integrate();
  spot_fleet_changes();
  cluster_.set_absent(node, false);
  ledger_.set_billed(node, true);
  if (autoscaling_on_) autoscaler_->books.billed_since[node] = now;
  sn.step = SpotStep::kUp;
  sn.return_after = -1;
  ++spot_returns_;
  record("spot-return", kNoPod, node, fmt::format("pool {}", world_->nodes[node].pool));
  cluster_event(fw::kEvNodeAdded);
}

void Simulation::spot_fleet_changes() {
  const SimTime now = engine_.now();
  const ClusterTotals& t = cluster_.totals();
  const double dt = to_seconds(now - spot_fleet_last_);
  spot_fleet_gpu_seconds_ += t.gpus_total * dt;
  for (std::size_t m = 0; m < kGpuSharingModes; ++m)
    spot_fleet_mode_gpu_seconds_[m] += t.mode_gpus[m] * dt;
  spot_fleet_last_ = now;
  if (autoscaling_on_) autoscaler_->books.advance_fleet(now, t);
}

void Simulation::add_spot_summary(Summary& summary, SimTime end) {
  auto put = [&](std::string k, double v) { put_metric(summary, std::move(k), v); };
  std::int64_t reclaimed = 0;
  for (std::size_t p = 0; p < pod_reclaimed_.size(); ++p)
    reclaimed += pod_reclaimed_[p];
  put("spot_reclaims", static_cast<double>(spot_reclaims_));
  put("spot_notices", static_cast<double>(spot_notices_));
  put("spot_returns", static_cast<double>(spot_returns_));
  put("spot_reclaims_skipped", static_cast<double>(spot_skipped_));
  put("pods_interrupted_by_reclaim", static_cast<double>(reclaimed));
  put("pods_killed_by_reclaim", static_cast<double>(spot_kills_));
  put("gpu_hours_lost_to_reclaims", spot_gpu_seconds_lost_ / 3600.0);
  for (std::size_t p = 0; p < spot_.pools(); ++p)
    put(fmt::format("pool.{}.spot_reclaims", spot_.pool(p).pool),
        static_cast<double>(pool_reclaims_[p]));
  if (!failures_on_) {
    std::int64_t interrupted = 0;
    for (PodId p = 0; p < cluster_.pods().size(); ++p)
      interrupted += cluster_.pod(p).interruptions > 0 ? 1 : 0;
    put("pods_interrupted", static_cast<double>(interrupted));
  }
  if (autoscaling_on_) return;  // its summary gives node-hours and the fleet's ratios
  const double dt = to_seconds(end - spot_fleet_last_);
  const ClusterTotals& t = cluster_.totals();
  std::array<double, kGpuSharingModes> modes{};
  for (std::size_t m = 0; m < kGpuSharingModes; ++m)
    modes[m] = spot_fleet_mode_gpu_seconds_[m] + t.mode_gpus[m] * dt;
  put_fleet_summary(summary, spot_fleet_gpu_seconds_ + t.gpus_total * dt, modes);
}

void Simulation::check_spot_invariants() const {
  // A reclaimed node is absent, holds no pod and is not billed; a node under notice is cordoned.
  for (NodeId n = 0; n < spot_nodes_.size(); ++n) {
    const NodeInfo& info = cluster_.node(n);
    switch (spot_nodes_[n].step) {
      case SpotStep::kUp:
        break;
      case SpotStep::kNotice:
        CAPSIM_CHECK(info.cordoned, fmt::format("node {} is under a spot notice but not cordoned",
                                                info.spec->name));
        break;
      case SpotStep::kReclaimed:
        CAPSIM_CHECK(info.absent && info.pods.empty() && !ledger_.billed(n),
                     fmt::format("node {} is reclaimed but present, billed or holds {} pod(s)",
                                 info.spec->name, info.pods.size()));
        break;
    }
  }
}

}  // namespace capsim
