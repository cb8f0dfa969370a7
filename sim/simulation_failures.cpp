// The Simulation's failures: modelled and traced failures of GPUs and nodes, what they do to the
// pods on them, the repairs, and the summary figures of failures and checkpoints. Kubernetes'
// behaviour it follows:
//   - a GPU that fails (an Xid error, an HBM or NVLink fault) is reported Unhealthy by NVIDIA's
//     device plugin: the node's allocatable drops by it, and the containers using it die. Every
//     pod holding it goes: a whole-GPU pod, the pods on its MIG instances, its time-slice and
//     MPS replicas, its GPU-share holders.
//   - a node that fails (host, NIC) stops posting status; the node lifecycle controller marks it
//     NotReady/Unknown and taints it node.kubernetes.io/unreachable (NoSchedule, and NoExecute,
//     which evicts its pods after their tolerationSeconds, 300 s by default). capsim takes the
//     pods down at once (their containers are gone with the host) and keeps the NoSchedule taint
//     until the repair.
//   - a pod of a Job that fails this way counts as a failed pod of the Job, and the Job
//     controller replaces it while its failures stay within backoffLimit: upstream, a pod
//     disrupted by its node carries the DisruptionTarget condition, which only a podFailurePolicy
//     rule (`action: Ignore, onPodConditions: [{type: DisruptionTarget}]`) stops from counting;
//     capsim reads no podFailurePolicy, so it counts (docs/scenario-format.md, "failures").
//     Pods of a trace (recreated by their controller) come back as after a preemption; bare pods
//     fail. A gang member's loss stops its gang (GangCoordinator), as a preemption does.
#include <fmt/format.h>

#include <map>

#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/simulation.hpp"

namespace capsim {

void Simulation::arm_failure() {
  if (failure_armed_ || !failures_.modelled()) return;
  const SimTime now = engine_.now();
  const bool until_horizon = config_.horizon != kEndOfTime && now < config_.horizon;
  if (!until_horizon && !has_hard_work()) return;  // nothing runs: bind_pod arms it again
  const SimTime t = failures_.next_time(now);
  failure_armed_ = true;
  // Past the horizon: the process is over. It stays "armed" with nothing scheduled, so that a
  // pod starting later does not draw it a new time (which would make the failures depend on
  // the workload).
  if (t == kEndOfTime || (config_.horizon != kEndOfTime && t > config_.horizon)) return;
  ++failure_events_;
  engine_.schedule(t, kFailure);
}

void Simulation::on_failure(const Event&) {
  failure_armed_ = false;
  --failure_events_;
  const bool until_horizon = config_.horizon != kEndOfTime && engine_.now() < config_.horizon;
  if (!until_horizon && !has_hard_work()) return;  // the work ended before it: it never happens
  apply_failure(failures_.draw());
  arm_failure();
}

void Simulation::on_traced_failure(const Event& e) {
  const auto& trace = failures_.trace();
  const std::size_t i = e.data;
  --failure_events_;
  if (i + 1 < trace.size()) {
    ++failure_events_;
    engine_.schedule(trace[i + 1].time, kTracedFailure, 0, i + 1);
  }
  const TracedFailure& t = trace[i];
  apply_failure(FailureProcess::Failure{t.node, t.gpu, t.cause, t.repair});
}

void Simulation::apply_failure(const FailureProcess::Failure& f) {
  const SimTime now = engine_.now();
  const NodeInfo& n = cluster_.node(f.node);
  // A GPU that DRA publishes would stay in its ResourceSlice: its failure takes the node.
  const bool whole_node = f.gpu < 0 || n.spec->devices.dra.enabled;
  if (health_.node_down(f.node)) return;  // a down node does not fail again
  if (n.absent) return;                   // an autoscaled pool's node that does not exist
  const auto gpu = static_cast<std::uint16_t>(f.gpu < 0 ? 0 : f.gpu);
  if (!whole_node && (n.gpus.at(gpu).failed || n.gpus.at(gpu).reconfiguring)) return;
  const std::string_view cause = cause_name(f.cause);
  const std::string what = whole_node ? fmt::format("node {} failed", n.spec->name)
                                      : fmt::format("GPU {} of node {} failed", gpu, n.spec->name);
  record("failure", kNoPod, f.node,
         fmt::format("{}: {}; repair in {}", cause,
                     whole_node ? "node" : fmt::format("GPU {}", gpu), format_duration(f.repair)));
  const std::vector<PodId> pods =
      whole_node ? health_.pods_on_node(f.node) : health_.pods_on_gpu(f.node, gpu);
  for (PodId p : pods) {
    const PodState& s = cluster_.pod(p);
    // An earlier interruption (a gang sibling's) may have moved it already.
    if (s.node != f.node) continue;
    interrupt(p, f.cause, what);
  }
  integrate();
  if (whole_node) {
    // Pods that a gang restart left terminating on it are gone too.
    for (PodId p : health_.pods_on_node(f.node))
      interrupt(p, f.cause, what);
    health_.take_node_down(f.node, now, Interruption::kUnplanned);
    ++node_failures_;
  } else {
    for (PodId p : health_.pods_on_gpu(f.node, gpu))
      interrupt(p, f.cause, what);
    health_.take_gpu_down(f.node, gpu, now, Interruption::kUnplanned);
    ++gpu_failures_;
  }
  ++failures_by_cause_[static_cast<std::size_t>(f.cause)];
  ledger_.node_changed(f.node);
  ++failure_events_;
  engine_.schedule(now + f.repair, kRepair, f.node, whole_node ? 0 : gpu + 1u);
}

void Simulation::interrupt(PodId pod, FailureCause cause, const std::string& what) {
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  const std::string detail = fmt::format("{}: {}", cause_name(cause), what);
  ++s.interruptions;
  if (s.phase == PodPhase::kTerminating) {
    // Already leaving (preempted, or its gang restarts): its grace period ends now.
    s.run.cancel();
    record("interrupt", pod, node, detail);
    end_termination(pod, "recreated after a failure");
    return;
  }
  CAPSIM_CHECK(s.phase == PodPhase::kRunning || s.phase == PodPhase::kCrashBackoff,
               fmt::format("pod {} is interrupted but does not hold its node", spec.name));
  if (s.phase == PodPhase::kRunning) s.gpu_seconds_lost_failure += lost_gpu_seconds(pod);
  s.completion.cancel();
  s.run.cancel();
  if (s.phase == PodPhase::kRunning && (spec.job != kNoJob || !spec.requeue_on_preemption)) {
    // A Job's pod fails (its controller replaces it within backoffLimit); a bare pod fails.
    fail_pod(pod, PodPhase::kFailed, "interrupt", detail);
    return;
  }
  // A trace's pod is recreated by its controller, as after a preemption.
  lifecycle_.terminate(pod);
  record("interrupt", pod, node, detail);
  gang_member_stopped(pod, "interrupt");
  end_termination(pod, "recreated after a failure");
}

void Simulation::on_repair(const Event& e) {
  const NodeId node = e.subject;
  const SimTime now = engine_.now();
  --failure_events_;
  integrate();
  if (e.data == 0) {
    health_.bring_node_up(node, now);
    record("repair", kNoPod, node, "node");
  } else {
    const auto gpu = static_cast<std::uint16_t>(e.data - 1);
    health_.bring_gpu_up(node, gpu, now);
    record("repair", kNoPod, node, fmt::format("GPU {}", gpu));
  }
  ledger_.node_changed(node);
  cluster_event(fw::kEvNodeChanged);  // pending pods may fit again
}

void Simulation::add_failure_summary(Summary& summary, SimTime end) {
  auto put = [&](std::string k, double v) { put_metric(summary, std::move(k), v); };
  double lost_failure = 0;
  double lost_preempt = 0;
  double lost_oom = 0;
  double overhead = 0;
  std::int64_t interrupted = 0;
  for (PodId p = 0; p < cluster_.pods().size(); ++p) {
    const PodState& s = cluster_.pod(p);
    lost_failure += s.gpu_seconds_lost_failure;
    lost_preempt += s.gpu_seconds_lost;
    lost_oom += s.gpu_seconds_lost_oom;
    overhead += s.gpu_seconds_overhead;
    interrupted += s.interruptions > 0 ? 1 : 0;
  }
  const double allocated = integrals_.gpu_seconds_allocated;
  const double lost = lost_failure + lost_preempt + lost_oom + overhead;
  put("goodput_ratio", allocated > 0 ? std::max(0.0, 1.0 - lost / allocated) : 1.0);
  put("gpu_hours_lost_to_checkpoints", overhead / 3600.0);
  // Effective time: completed pods' time alone on their device over the time from their first
  // start to their end (waits for repairs, lost work and checkpoints included).
  std::map<std::string, std::pair<double, double>> by_queue;
  double ideal = 0;
  double spent = 0;
  for (PodId p = 0; p < cluster_.pods().size(); ++p) {
    const PodState& s = cluster_.pod(p);
    if (s.phase != PodPhase::kSucceeded || s.first_start < 0) continue;
    const double i = to_seconds(s.ideal_runtime);
    const double t = to_seconds(s.end - s.first_start);
    ideal += i;
    spent += t;
    auto& q = by_queue[cluster_.spec(p).queue];
    q.first += i;
    q.second += t;
  }
  put("effective_time_ratio", spent > 0 ? std::min(1.0, ideal / spent) : 1.0);
  for (const auto& [q, v] : by_queue) {
    if (q.empty()) continue;
    put(fmt::format("queue.{}.effective_time_ratio", q),
        v.second > 0 ? std::min(1.0, v.first / v.second) : 1.0);
  }
  if (!failures_on_) return;
  put("node_failures", static_cast<double>(node_failures_));
  put("gpu_failures", static_cast<double>(gpu_failures_));
  put("pods_interrupted", static_cast<double>(interrupted));
  put("gpu_hours_lost_to_failures", lost_failure / 3600.0);
  for (std::size_t c = 0; c < kFailureCauses; ++c) {
    put(fmt::format("failures.{}", cause_name(static_cast<FailureCause>(c))),
        static_cast<double>(failures_by_cause_[c]));
  }
  health_.add_summary(summary, end);
  check_lost_work(end);
  CAPSIM_CHECK(lost <= allocated * (1 + 1e-9) + 1e-6,
               fmt::format("lost GPU time {} s exceeds the allocated {} s", lost, allocated));
}

void Simulation::check_lost_work(SimTime now) const {
  // Lost work never exceeds the run: each pod's lost GPU time fits in its GPUs times the run.
  const double run_seconds = to_seconds(now);
  for (PodId p = 0; p < cluster_.pods().size(); ++p) {
    const PodState& s = cluster_.pod(p);
    const double lost = s.gpu_seconds_lost_failure + s.gpu_seconds_lost + s.gpu_seconds_lost_oom;
    const double gpus = std::max(1, cluster_.spec(p).gpu_count);
    CAPSIM_CHECK(lost <= gpus * run_seconds * (1 + 1e-9) + 1e-6,
                 fmt::format("pod {} lost {} GPU-seconds in a run of {} s", cluster_.spec(p).name,
                             lost, run_seconds));
  }
}

}  // namespace capsim
