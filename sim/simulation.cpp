#include "sim/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/check.hpp"
#include "sim/random.hpp"

namespace capsim {

namespace {
constexpr SimDuration kLeftoverFlushPeriod = 30 * kSecond;  // flushUnschedulablePodsLeftover
}

Simulation::Simulation(World& world, const fw::Framework& framework, fw::ReasonTable& reasons,
                       Recorder& recorder, SimulationOptions options)
    : world_(&world),
      cluster_(world),
      engine_(*this),
      fw_(&framework),
      reasons_(&reasons),
      scheduler_(framework, cluster_, reasons, RandomStream(options.seed, "tie-break")),
      queue_(framework),
      recorder_(&recorder),
      opt_(std::move(options)) {}

void Simulation::record(std::string_view kind, PodId pod, NodeId node, std::string detail) {
  recorder_->record_event(EventRecord{engine_.now(), kind, pod, node, std::move(detail)});
}

void Simulation::integrate() {
  integrals_.advance(engine_.now(), cluster_.totals());
}

bool Simulation::has_hard_work() const {
  return next_arrival_ < arrivals_.size() || pending_finishes_ > 0 || terminating_ > 0 ||
         queue_.active() > 0 || queue_.backoff() > 0 ||
         (opt_.admission != nullptr && opt_.admission->busy());
}

void Simulation::request_cycle() {
  if (cycle_scheduled_) return;
  cycle_scheduled_ = true;
  engine_.schedule(engine_.now(), kScheduleCycle);
}

void Simulation::arm_backoff_wake() {
  const SimTime t = queue_.next_backoff_expiry();
  if (t == kEndOfTime) return;
  if (backoff_wake_at_ != kEndOfTime && backoff_wake_at_ <= t &&
      backoff_wake_at_ >= engine_.now()) {
    return;  // an earlier wake-up is already armed
  }
  backoff_wake_at_ = std::max(t, engine_.now());
  engine_.schedule(backoff_wake_at_, kBackoffWake);
}

void Simulation::cluster_event(fw::EventMask ev) {
  queue_.on_cluster_event(ev, engine_.now());
  if (queue_.has_active()) request_cycle();
  arm_backoff_wake();
}

double Simulation::pod_rate(PodId pod, NodeId node) const {
  const PodSpec& s = cluster_.spec(pod);
  const NodeSpec& n = world_->nodes[node];
  if (pod_gpu_devices(s) == 0 || n.gpu_model == kNoGpuModel) return 1.0;
  return world_->gpu_models[n.gpu_model].relative_speed;
}

RunResult Simulation::run(RunInfo& info) {
  // 1. Arrivals, in time order (stable: equal times keep the workload's order; pods before jobs).
  arrivals_.clear();
  for (std::size_t i = 0; i < world_->pods.size(); ++i) {
    arrivals_.push_back({world_->pods[i].arrival, false, static_cast<std::uint32_t>(i)});
  }
  for (std::size_t j = 0; j < world_->jobs.size(); ++j) {
    arrivals_.push_back({world_->jobs[j].arrival, true, static_cast<std::uint32_t>(j)});
  }
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [](const Arrival& a, const Arrival& b) { return a.time < b.time; });
  jobs_.assign(world_->jobs.size(), JobState{});
  gangs_.assign(world_->gangs.size(), GangRun{});
  if (opt_.admission != nullptr) opt_.admission->attach(*this);
  node_frag_.assign(cluster_.nodes().size(), 0.0);
  node_frag_gen_.assign(cluster_.nodes().size(), ~std::uint64_t{0});

  recorder_->begin_run(info, *world_);
  if (!arrivals_.empty()) engine_.schedule(arrivals_.front().time, kArrival);
  engine_.schedule(0, kSample);
  engine_.schedule(kLeftoverFlushPeriod, kLeftoverFlush);

  // 2. The event loop.
  if (opt_.horizon != kEndOfTime) {
    engine_.run_until(opt_.horizon);
  } else {
    engine_.run();
  }
  if (stop_requested_) throw Interrupted();

  // 3. Close the books at the end time.
  const SimTime end = opt_.horizon != kEndOfTime ? opt_.horizon : engine_.now();
  if (end > engine_.now()) engine_.run_until(end);
  integrate();
  refresh_fragmentation();
  SampleRecord last = make_sample();
  recorder_->record_sample(last);
  if (opt_.admission != nullptr) opt_.admission->sample(engine_.now(), *recorder_);

  RunResult out;
  out.pods = make_pod_records(cluster_, end);
  cluster_.check_invariants();
  check_conservation(cluster_, out.pods);
  check_queueing_invariants();
  out.end_time = end;
  out.events = engine_.processed();
  out.cycles = scheduler_.cycles();
  out.summary =
      compute_summary(cluster_, out.pods, integrals_, sample_stats_, end, out.cycles, out.events);
  if (opt_.admission != nullptr) opt_.admission->add_summary(out.summary, end);
  info.sim_seconds = to_seconds(end);
  return out;
}

void Simulation::handle(const Event& e, Engine& engine) {
  if (opt_.should_stop && (engine.processed() & 1023) == 0 && opt_.should_stop()) {
    stop_requested_ = true;
  }
  if (stop_requested_) {
    engine.stop();
    return;
  }
  switch (e.kind) {
    case kArrival:
      on_arrival(e.time);
      break;
    case kScheduleCycle:
      on_schedule_cycle();
      break;
    case kPodFinish:
      on_pod_finish(e.subject, e.data);
      break;
    case kTerminated:
      on_terminated(e.subject, e.data);
      break;
    case kBackoffWake:
      if (backoff_wake_at_ <= e.time) backoff_wake_at_ = kEndOfTime;
      queue_.flush_backoff(e.time);
      if (queue_.has_active()) request_cycle();
      arm_backoff_wake();
      break;
    case kSample:
      on_sample();
      break;
    case kAdmissionCycle:
      admission_scheduled_ = false;
      opt_.admission->run_cycles();
      break;
    case kAdmissionTimer:
      opt_.admission->on_timer();
      break;
    case kLeftoverFlush:
      queue_.flush_unschedulable_leftover(e.time);
      if (queue_.has_active()) request_cycle();
      arm_backoff_wake();
      if (has_hard_work() || (opt_.horizon != kEndOfTime && e.time < opt_.horizon)) {
        engine.schedule(e.time + kLeftoverFlushPeriod, kLeftoverFlush);
      }
      break;
    default:
      CAPSIM_CHECK(false, fmt::format("unknown event kind {}", e.kind));
  }
  if (opt_.paranoid) {
    cluster_.check_invariants();
    check_queueing_invariants();
  }
  if (opt_.progress && (engine.processed() & 4095) == 0) {
    const double frac = opt_.horizon != kEndOfTime && opt_.horizon > 0
                            ? static_cast<double>(e.time) / static_cast<double>(opt_.horizon)
                            : (arrivals_.empty() ? 1.0
                                                 : static_cast<double>(next_arrival_) /
                                                       static_cast<double>(arrivals_.size()));
    opt_.progress(std::min(1.0, frac));
  }
}

void Simulation::on_arrival(SimTime t) {
  while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].time == t) {
    const Arrival a = arrivals_[next_arrival_++];
    if (a.is_job) {
      create_job_pods(a.index);
    } else {
      admit_pod(a.index);
    }
  }
  if (next_arrival_ < arrivals_.size()) engine_.schedule(arrivals_[next_arrival_].time, kArrival);
}

void Simulation::admit_pod(PodId pod) {
  PodState& s = cluster_.pod(pod);
  s.phase = PodPhase::kPending;
  s.submit = engine_.now();
  s.pending_since = engine_.now();
  record("arrive", pod, kNoNode, "");
  // Pods of workloads that target a Kueue LocalQueue wait for admission first.
  if (opt_.admission == nullptr || !opt_.admission->on_pod_pending(pod)) {
    enqueue_for_scheduling(pod);
  }
}

void Simulation::create_job_pods(JobId job) {
  const JobSpec& j = world_->jobs[job];
  JobState& js = jobs_[job];
  while (js.active < j.parallelism && js.succeeded + js.active < j.completions) {
    PodSpec p = j.pod_template;
    p.name = fmt::format("{}-{}", j.name, js.created);
    p.job = job;
    p.job_name = j.name;
    p.arrival = engine_.now();
    world_->pods.push_back(std::move(p));
    cluster_.sync_pod_table();
    ++js.created;
    ++js.active;
    admit_pod(static_cast<PodId>(world_->pods.size() - 1));
  }
}

void Simulation::on_schedule_cycle() {
  cycle_scheduled_ = false;
  const SimTime now = engine_.now();
  queue_.flush_backoff(now);
  while (auto popped = queue_.pop(now)) {
    const PodId pod = *popped;
    PodState& s = cluster_.pod(pod);
    ++s.attempts;
    if (const GangId g = cluster_.spec(pod).gang; g != kNoGang && gangs_[g].leader == pod) {
      place_gang(pod);  // all its members or none
      continue;
    }
    fw::ScheduleResult r = scheduler_.schedule_one(pod);
    if (r.outcome == fw::ScheduleResult::Outcome::kScheduled) {
      queue_.done(pod);
      scheduler_.clear_nomination(pod);
      bind_pod(pod, r.placement);
      continue;
    }
    // Unschedulable (or a plugin error): remember why, requeue, maybe preempt.
    const std::uint64_t reason = fnv1a64(r.message);
    if (reason != s.last_reason) {
      record(r.outcome == fw::ScheduleResult::Outcome::kError ? "error" : "pending", pod, kNoNode,
             r.message);
      s.last_reason = reason;
    }
    s.last_unresolvable = r.unresolvable_everywhere && r.victims.empty();
    queue_.add_unschedulable(pod, r.rejector_plugins, now);
    if (r.nominated_node != kNoNode && !r.victims.empty()) {
      scheduler_.nominate(pod, r.nominated_node);
      s.nominated_node = r.nominated_node;
      record("nominate", pod, r.nominated_node,
             fmt::format("preempting {} pod(s)", r.victims.size()));
      for (PodId v : r.victims)
        evict(v, pod, r.nominated_node);
    }
  }
  arm_backoff_wake();
}

void Simulation::bind_pod(PodId pod, const fw::Placement& placement, double rate_cap) {
  integrate();
  cluster_.bind(pod, placement.node, placement.gpus);
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const SimTime now = engine_.now();
  s.phase = PodPhase::kRunning;
  s.start = now;
  if (s.first_start < 0) s.first_start = now;
  s.waited += now - s.pending_since;
  s.nominated_node = kNoNode;
  ++s.runs;
  s.rate = pod_rate(pod, placement.node);
  if (rate_cap > 0) s.rate = std::min(s.rate, rate_cap);
  if (s.runs == 1 || opt_.restart_from_scratch) s.work_left = spec.duration;
  s.progress_at = now;
  s.ideal_runtime =
      static_cast<SimDuration>(std::ceil(static_cast<double>(spec.duration) / s.rate));
  ++s.finish_version;
  std::string devices;
  if (!placement.gpus.empty()) {
    devices = "gpu:";
    for (std::size_t i = 0; i < placement.gpus.size(); ++i) {
      devices += fmt::format("{}{}", i ? "," : "", placement.gpus[i]);
    }
  }
  record("start", pod, placement.node, devices);
  if (spec.duration != kEndOfTime) {
    const auto run_for =
        static_cast<SimDuration>(std::ceil(static_cast<double>(s.work_left) / s.rate));
    engine_.schedule(now + run_for, kPodFinish, pod, s.finish_version);
    ++pending_finishes_;
  }
  if (spec.gang != kNoGang) ++gangs_[spec.gang].running;
  if (opt_.admission != nullptr) opt_.admission->on_pod_started(pod);
  cluster_event(fw::kEvAssignedPodAdded);
}

void Simulation::release_pod(PodId pod) {
  integrate();
  cluster_.unbind(pod);
}

void Simulation::on_pod_finish(PodId pod, std::uint64_t version) {
  PodState& s = cluster_.pod(pod);
  if (s.finish_version != version || s.phase != PodPhase::kRunning) return;  // cancelled
  --pending_finishes_;
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  release_pod(pod);
  s.phase = spec.fails ? PodPhase::kFailed : PodPhase::kSucceeded;
  s.end = engine_.now();
  s.work_left = 0;
  record(spec.fails ? "fail" : "complete", pod, node, "");
  if (spec.gang != kNoGang) {
    --gangs_[spec.gang].running;
    ++gangs_[spec.gang].finished;
  }
  if (spec.job != kNoJob) {
    JobState& js = jobs_[spec.job];
    --js.active;
    if (spec.fails) {
      ++js.failed;
      if (js.failed <= world_->jobs[spec.job].pod_template.max_restarts) create_job_pods(spec.job);
    } else {
      ++js.succeeded;
      create_job_pods(spec.job);
    }
  }
  if (opt_.admission != nullptr) opt_.admission->on_pod_stopped(pod);
  cluster_event(fw::kEvAssignedPodDeleted);
}

void Simulation::evict(PodId victim, PodId preemptor, NodeId node) {
  (void)node;  // victims run on the nominated node
  terminate(victim, "preempt", fmt::format("preempted by {}", cluster_.spec(preemptor).name));
}

void Simulation::terminate(PodId victim, std::string_view kind, const std::string& detail) {
  PodState& s = cluster_.pod(victim);
  if (s.phase != PodPhase::kRunning) return;  // already leaving
  const PodSpec& spec = cluster_.spec(victim);
  if (spec.duration != kEndOfTime) --pending_finishes_;
  ++s.finish_version;  // cancels the pending completion
  s.phase = PodPhase::kTerminating;
  const SimTime now = engine_.now();
  if (opt_.restart_from_scratch) {
    s.gpu_seconds_lost +=
        to_seconds(now - s.start) * pod_gpu_devices(spec) * (pod_milli_per_gpu(spec) / 1000.0);
  }
  ++terminating_;
  record(kind, victim, s.node, detail);
  engine_.schedule(now + spec.termination_grace, kTerminated, victim, s.finish_version);
  if (spec.gang != kNoGang) {
    // A gang does not run partly: losing one member restarts all of them.
    --gangs_[spec.gang].running;
    const std::vector<PodId> members = gangs_[spec.gang].members;
    for (PodId m : members) {
      if (cluster_.pod(m).phase == PodPhase::kRunning) {
        terminate(m, kind,
                  fmt::format("gang {} restarts: its member {} was stopped",
                              world_->gangs[spec.gang].name, spec.name));
      }
    }
  }
}

void Simulation::on_terminated(PodId pod, std::uint64_t version) {
  PodState& s = cluster_.pod(pod);
  if (s.finish_version != version || s.phase != PodPhase::kTerminating) return;
  --terminating_;
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  release_pod(pod);
  if (spec.requeue_on_preemption) {
    ++s.restarts;
    s.phase = PodPhase::kPending;
    s.pending_since = engine_.now();
    s.last_reason = 0;
    record("requeue", pod, node, "recreated after preemption");
    if (opt_.admission != nullptr) opt_.admission->on_pod_stopped(pod);
    if (opt_.admission == nullptr || !opt_.admission->on_pod_pending(pod)) {
      enqueue_for_scheduling(pod);
    }
  } else {
    s.phase = PodPhase::kPreempted;
    s.end = engine_.now();
    record("deleted", pod, node, "preempted and not restarted");
    if (spec.job != kNoJob) {
      JobState& js = jobs_[spec.job];
      --js.active;
      ++js.failed;
    }
    if (opt_.admission != nullptr) opt_.admission->on_pod_stopped(pod);
  }
  cluster_event(fw::kEvAssignedPodDeleted);
}

void Simulation::refresh_fragmentation() {
  if (opt_.fragmentation == nullptr) return;
  const auto& nodes = cluster_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (node_frag_gen_[n] == nodes[n].generation) continue;
    const double f = opt_.fragmentation->node_fragment_milli(nodes[n]);
    frag_total_ += f - node_frag_[n];
    node_frag_[n] = f;
    node_frag_gen_[n] = nodes[n].generation;
  }
}

SampleRecord Simulation::make_sample() {
  const ClusterTotals& t = cluster_.totals();
  SampleRecord r;
  r.time = engine_.now();
  r.gpus_total = t.gpus_total;
  r.gpus_allocated = t.gpus_allocated;
  r.gpus_busy = t.gpus_busy;
  r.gpu_memory_allocated_mib = t.gpu_memory_allocated_mib;
  r.gpu_memory_used_mib = t.gpu_memory_used_mib;
  r.pods_running = t.pods_running;
  // Pending: in the scheduling queue, parked behind a gang's leader, or held for admission.
  r.pods_pending = static_cast<std::int64_t>(
      queue_.size() + parked_ + (opt_.admission != nullptr ? opt_.admission->held_pods() : 0));
  r.fragmented_gpus = frag_total_ / 1000.0;
  r.power_w = t.power_w;
  r.cost_per_hour = t.cost_per_hour;
  ++sample_stats_.count;
  const double free = t.gpus_total - t.gpus_allocated;
  if (free > 1e-9) {
    sample_stats_.fragmentation_ratio_sum += std::min(1.0, r.fragmented_gpus / free);
    ++sample_stats_.fragmentation_ratio_count;
  }
  if (t.gpus_total > 0) sample_stats_.fragmented_share_sum += r.fragmented_gpus / t.gpus_total;
  return r;
}

void Simulation::on_sample() {
  integrate();
  refresh_fragmentation();
  recorder_->record_sample(make_sample());
  if (opt_.admission != nullptr) opt_.admission->sample(engine_.now(), *recorder_);
  const SimTime next = engine_.now() + opt_.sample_interval;
  if (has_hard_work() || (opt_.horizon != kEndOfTime && next <= opt_.horizon)) {
    engine_.schedule(next, kSample);
  }
}

}  // namespace capsim
