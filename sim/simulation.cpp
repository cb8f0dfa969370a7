#include "sim/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/backoff.hpp"
#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/random.hpp"
#include "sim/run/autoscaler.hpp"
#include "sim/run/checkpoint.hpp"
#include "sim/run/kubelet_admission.hpp"

namespace capsim {

namespace {
constexpr SimDuration kLeftoverFlushPeriod = 30 * kSecond;  // flushUnschedulablePodsLeftover
}

Simulation::Simulation(World& world, const fw::Framework& framework, fw::ReasonTable& reasons,
                       Recorder& recorder, const RunConfig& config, const RunModels& models,
                       RunObservers observers)
    : world_(&world),
      cluster_(world),
      engine_(*this),
      fw_(&framework),
      reasons_(&reasons),
      scheduler_(framework, cluster_, reasons, RandomStream(config.seed, "tie-break")),
      queue_(framework),
      recorder_(&recorder),
      config_(config),
      models_(models),
      observers_(std::move(observers)),
      lifecycle_(cluster_),
      jobs_(world, cluster_),
      gangs_(world, cluster_),
      ledger_(cluster_, config_.energy, *models_.charge, recorder_),
      sampler_(cluster_, ledger_, *models_.fragmentation),
      failures_on_(config_.failures.enabled()),
      failures_(world, config_.failures),
      health_(cluster_),
      maintenance_on_(config_.maintenance.enabled()),
      maintenance_(config_.maintenance),
      budgets_(world),
      topology_(world),
      autoscaling_on_(world.autoscaler.enabled),
      spot_on_(config_.spot.enabled()),
      spot_(world.nodes, config_.spot) {
  if (observers_.cycles != nullptr) scheduler_.set_observer(observers_.cycles, &engine_);
  if (autoscaling_on_)
    autoscaler_ = std::make_unique<Autoscaler>(cluster_, framework, config.seed, config.scale_down);
}

Simulation::~Simulation() = default;

void Simulation::record(std::string_view kind, PodId pod, NodeId node, std::string detail) {
  recorder_->record_event(EventRecord{engine_.now(), kind, pod, node, std::move(detail)});
}

void Simulation::integrate() {
  integrals_.advance(engine_.now(), cluster_.totals(), queue_.size() > 0);
  ledger_.advance(engine_.now());
}

bool Simulation::has_hard_work() const {
  return next_arrival_ < arrivals_.size() || lifecycle_.busy() || !target_layouts_.empty() ||
         queue_.active() > 0 || queue_.backoff() > 0 || models_.admission->busy();
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
  if (placing_ != nullptr && (ev & ~fw::EventMask{fw::kEvAssignedPodAdded}) != 0) {
    // The pod being placed failed on its node (its kubelet refused the devices): the deferred
    // members before it failed before this event and are moved by it as any pod; those after
    // it are attempted after it, on the cluster it leaves.
    queue_.for_each_straddling(*placing_,
                               [this](std::uint32_t g, fw::SchedulingQueue::Signature, PodId) {
                                 bulk_cycles_ -= queue_.split(g, *placing_);
                               });
    queue_.finish_deferred(engine_.now());
  }
  queue_.on_cluster_event(ev, engine_.now());
  // Members of deferred groups after the pod being placed are, to everything else, still in
  // activeQ.
  if (queue_.has_active() || (placing_ != nullptr && queue_.deferred_after(*placing_)))
    request_cycle();
  arm_backoff_wake();
}

double Simulation::pod_rate(PodId pod, NodeId node) const {
  double rate = own_rate(pod, node);
  const GangId g = cluster_.spec(pod).gang;
  if (g == kNoGang || rate <= 0) return rate;
  // A gang moves at the pace of its slowest running member (synchronous training steps).
  for (PodId m : gangs_.members(g)) {
    if (m == pod) continue;
    const PodState& ms = cluster_.pod(m);
    if (ms.phase == PodPhase::kRunning) rate = std::min(rate, own_rate(m, ms.node));
  }
  return rate;
}

double Simulation::own_rate(PodId pod, NodeId node) const {
  const PodState& st = cluster_.pod(pod);
  const NodeSpec& n = world_->nodes[node];
  if (st.phase != PodPhase::kRunning) return 0.0;
  if (st.holdings.empty() || n.gpu_model == kNoGpuModel) return 1.0;
  const double speed = world_->gpu_models[n.gpu_model].relative_speed;
  // A multi-device pod moves at the pace of its slowest device.
  const NodeInfo& info = cluster_.node(node);
  double f = 1.0;
  for (const Holding& h : st.holdings)
    f = std::min(f, models_.devices.factor(cluster_, info, pod, h));
  return speed * f;
}

void Simulation::set_rate(PodId pod, double rate) {
  PodState& s = cluster_.pod(pod);
  const SimTime now = engine_.now();
  if (s.phase != PodPhase::kRunning) return;
  if (std::abs(rate - s.rate) < 1e-12 && s.progress_at >= 0) return;
  // Bank the work done at the old rate, then re-plan the completion at the new one.
  bank_progress(pod);
  s.progress_at = now;
  s.rate = rate;
  const PodSpec& spec = cluster_.spec(pod);
  if (spec.duration == kEndOfTime) return;
  if (rate <= 0) {
    s.completion.cancel();  // stalled: no completion until the rate changes
    return;
  }
  const auto run_for = static_cast<SimDuration>(std::ceil(static_cast<double>(s.work_left) / rate));
  if (spec.checkpoint.enabled()) {
    // Writes pause progress: the completion is where the run has computed long enough.
    const SimDuration elapsed = now - s.start;
    const SimDuration done = checkpoint::computing(spec.checkpoint, s.resume_cost, elapsed);
    const SimDuration at =
        run_for <= 0 ? elapsed
                     : checkpoint::elapsed_for(spec.checkpoint, s.resume_cost, done + run_for);
    engine_.schedule(s.start + std::max(at, elapsed), kPodFinish, pod, s.completion.arm());
    return;
  }
  engine_.schedule(now + run_for, kPodFinish, pod, s.completion.arm());
}

void Simulation::bank_progress(PodId pod) {
  PodState& s = cluster_.pod(pod);
  if (s.progress_at < 0 || s.rate <= 0) return;
  const SimTime now = engine_.now();
  const PodSpec& spec = cluster_.spec(pod);
  if (!spec.checkpoint.enabled()) {
    const auto done =
        static_cast<SimDuration>(std::floor(static_cast<double>(now - s.progress_at) * s.rate));
    s.work_left = std::max<SimDuration>(0, s.work_left - done);
    s.progress_at = now;
    return;
  }
  const CheckpointPolicy& c = spec.checkpoint;
  const SimDuration a = s.progress_at - s.start;
  const SimDuration b = now - s.start;
  const SimDuration from = checkpoint::computing(c, s.resume_cost, a);
  const SimDuration to = checkpoint::computing(c, s.resume_cost, b);
  const SimDuration left = s.work_left;
  auto work = [&](SimDuration computed) {
    return static_cast<SimDuration>(std::floor(static_cast<double>(computed) * s.rate));
  };
  s.work_left = std::max<SimDuration>(0, left - work(to - from));
  const SimDuration k = checkpoint::completed(c, s.resume_cost, b);
  if (k > checkpoint::completed(c, s.resume_cost, a)) {
    // The last checkpoint completed in (a, b] keeps the work done when its write began.
    const SimDuration began = k * c.interval;
    const SimDuration kept_left =
        std::max<SimDuration>(0, left - work(std::max<SimDuration>(0, began - from)));
    s.saved_work = std::max(s.saved_work, spec.duration - kept_left);
    s.saved_at = s.start + checkpoint::completed_at(c, s.resume_cost, k);
  }
  s.progress_at = now;
}

double Simulation::lost_gpu_seconds(PodId pod) {
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const SimTime now = engine_.now();
  const double frac = gpu_fraction(s.holdings);
  if (!spec.checkpoint.enabled()) return to_seconds(now - s.start) * frac;
  bank_progress(pod);
  const CheckpointPolicy& c = spec.checkpoint;
  const bool saved = s.saved_at >= s.start;
  const SimTime kept = saved ? s.saved_at : s.start;
  if (saved) {
    const SimDuration k = checkpoint::completed(c, s.resume_cost, kept - s.start);
    s.gpu_seconds_overhead += to_seconds(s.resume_cost + k * c.cost) * frac;
  }
  return to_seconds(now - kept) * frac;
}

void Simulation::reevaluate(NodeId node, const std::vector<std::uint16_t>& gpus) {
  if (gpus.empty()) return;
  const NodeInfo& n = cluster_.node(node);
  // Pods on any of these GPUs, and (for multi-GPU pods) the GPUs they span.
  std::vector<PodId> affected;
  for (PodId p : n.pods) {
    const PodState& st = cluster_.pod(p);
    for (std::uint16_t g : st.gpus) {
      if (std::find(gpus.begin(), gpus.end(), g) != gpus.end()) {
        affected.push_back(p);
        break;
      }
    }
  }
  // A gang member's pace bounds its siblings', wherever they run.
  const std::size_t direct = affected.size();
  for (std::size_t i = 0; i < direct; ++i) {
    const GangId g = cluster_.spec(affected[i]).gang;
    if (g == kNoGang) continue;
    for (PodId m : gangs_.members(g)) {
      if (cluster_.pod(m).phase == PodPhase::kRunning &&
          std::find(affected.begin(), affected.end(), m) == affected.end()) {
        affected.push_back(m);
      }
    }
  }
  for (PodId p : affected)
    set_rate(p, pod_rate(p, cluster_.pod(p).node));
  integrate();
  for (std::uint16_t g : gpus)
    cluster_.set_gpu_busy(node, g, models_.devices.gpu_busy(cluster_, n, g));
  ledger_.node_changed(node);  // busy GPUs draw more power
}

void Simulation::begin(RunInfo& info) {
  // Arrivals, in time order (stable: equal times keep the workload's order; pods before jobs).
  arrivals_.clear();
  for (std::size_t i = 0; i < world_->pods.size(); ++i) {
    arrivals_.push_back({world_->pods[i].arrival, false, static_cast<std::uint32_t>(i)});
  }
  for (std::size_t j = 0; j < world_->jobs.size(); ++j) {
    arrivals_.push_back({world_->jobs[j].arrival, true, static_cast<std::uint32_t>(j)});
  }
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [](const Arrival& a, const Arrival& b) { return a.time < b.time; });
  models_.admission->attach(*this);
  bulk_on_ = bulk_retries_ok();
  if (bulk_on_) queue_.enable_groups();

  recorder_->begin_run(info, *world_);
  if (!arrivals_.empty()) engine_.schedule(arrivals_.front().time, kArrival);
  if (models_.experiment->time_samples()) engine_.schedule(0, kSample);
  engine_.schedule(kLeftoverFlushPeriod, kLeftoverFlush);
  for (const PodSpec& p : world_->pods)
    checkpoints_on_ = checkpoints_on_ || p.checkpoint.enabled();
  for (const JobSpec& j : world_->jobs)
    checkpoints_on_ = checkpoints_on_ || j.pod_template.checkpoint.enabled();
  if (failures_on_) {
    arm_failure();
    if (!failures_.trace().empty()) {
      ++failure_events_;
      engine_.schedule(failures_.trace().front().time, kTracedFailure);
    }
  }
  for (std::size_t w = 0; w < config_.maintenance.windows.size(); ++w) {
    ++maintenance_events_;
    engine_.schedule(config_.maintenance.windows[w].start, kMaintenanceOpen, 0, w);
  }
  if (autoscaling_on_) start_autoscaler();
  for (std::size_t c = 0; c < world_->scaled_controllers.size(); ++c) {
    const ScaledController& sc = world_->scaled_controllers[c];
    for (std::size_t k = 0; k < sc.steps.size(); ++k)
      engine_.schedule(sc.steps[k].at, kScaleStep, static_cast<std::uint32_t>(c), k);
  }
  if (spot_on_) {
    spot_nodes_.resize(world_->nodes.size());
    spot_armed_.assign(spot_.pools(), 0);
    pool_reclaims_.assign(spot_.pools(), 0);
    for (std::size_t p = 0; p < spot_.pools(); ++p)
      arm_reclaim(p);
    if (!spot_.trace().empty()) {
      ++spot_events_;
      engine_.schedule(spot_.trace().front().time, kTracedReclaim);
    }
  }
}

void Simulation::run_before(SimTime t, RunInfo& info) {
  begin(info);
  const SimTime last = std::min(t - 1, config_.horizon);
  if (last >= 0) engine_.run_until(last);
  if (stop_requested_) throw Interrupted();
  settle_group_members();
}

void Simulation::settle_group_members() {
  if (!bulk_on_) return;
  // Grouped pods' PodStates: the attempts their groups made for them, and how the last ended.
  queue_.for_each_member([this](PodId p, std::int64_t owed, fw::SchedulingQueue::Signature sig) {
    PodState& s = cluster_.pod(p);
    s.attempts += static_cast<std::int32_t>(owed);
    s.last_unresolvable = sig.unresolvable;
  });
}

RunResult Simulation::run(RunInfo& info) {
  // 1. Arrivals and the first events.
  begin(info);

  // 2. The event loop.
  if (config_.horizon != kEndOfTime) {
    engine_.run_until(config_.horizon);
  } else {
    engine_.run();
  }
  if (stop_requested_) throw Interrupted();

  // 3. Close the books at the end time.
  const SimTime end = config_.horizon != kEndOfTime ? config_.horizon : engine_.now();
  if (end > engine_.now()) engine_.run_until(end);
  integrate();
  ledger_.finish();  // the open charge stretches, before the recorder closes the run
  if (observers_.cycles != nullptr) observers_.cycles->finish();  // the open pending reasons
  if (models_.experiment->time_samples()) {
    take_samples();
  } else {
    // The summary's fragmentation means count the end state even without time samples.
    sampler_.refresh();
    (void)sampler_.sample(engine_.now(), 0);
  }

  RunResult out;
  settle_group_members();
  // A recorder that keeps no pod rows gets none: the summary is made from the pods themselves.
  const bool records = recorder_->level() != RecordLevel::kSummary;
  if (records) out.pods = make_pod_records(cluster_, end);
  cluster_.check_invariants();
  lifecycle_.check_invariants();
  ledger_.check_rates();
  check_conservation(cluster_, records ? &out.pods : nullptr);
  gangs_.check_invariants();
  models_.admission->check_invariants();
  if (failures_on_ || maintenance_on_) health_.check_invariants();
  if (spot_on_) check_spot_invariants();
  out.end_time = end;
  out.events = engine_.processed();
  out.cycles = scheduler_.cycles() + bulk_cycles_;
  out.bulk_cycles = bulk_cycles_;
  out.summary =
      compute_summary(cluster_, integrals_, ledger_, sampler_.stats(), end, out.cycles, out.events);
  models_.admission->add_summary(out.summary, end);
  if (!config_.rack_prices.empty()) add_rack_cost(out.summary);
  if (failures_on_ || checkpoints_on_ || maintenance_on_ || spot_on_)
    add_failure_summary(out.summary, end);
  if (maintenance_on_) add_maintenance_summary(out.summary, end);
  if (spot_on_) add_spot_summary(out.summary, end);
  if (autoscaling_on_) add_autoscaling_summary(out.summary, end);
  topology_.add_summary(out.summary);
  models_.experiment->finish(*recorder_, out.summary);
  info.sim_seconds = to_seconds(end);
  return out;
}

void Simulation::add_rack_cost(Summary& summary) const {
  const std::vector<double> hours = ledger_.pool_node_hours();
  double cost = 0;
  for (const RackPrice& r : config_.rack_prices) {
    const auto& pools = ledger_.pools();
    const auto it = std::find(pools.begin(), pools.end(), r.pool);
    if (it != pools.end())
      cost += r.per_node_hour * hours[static_cast<std::size_t>(it - pools.begin())];
  }
  put_metric(summary, "cost_racks_usd", cost);
}

void Simulation::handle(const Event& e, Engine& engine) {
  if (observers_.should_stop && (engine.processed() & 1023) == 0 && observers_.should_stop()) {
    stop_requested_ = true;
  }
  if (stop_requested_) {
    engine.stop();
    return;
  }
  CAPSIM_CHECK(e.kind < kKinds, fmt::format("unknown event kind {}", e.kind));
  (this->*kHandlers[e.kind])(e);
  if ((failures_on_ || maintenance_on_ || spot_on_) && config_.horizon == kEndOfTime &&
      only_background_events()) {
    // Only failures, repairs, maintenance and spot reclaims are left, and no pod waits for
    // them: the run is over.
    engine.stop();
  }
  if (config_.paranoid) {
    cluster_.check_invariants();
    lifecycle_.check_invariants();
    gangs_.check_invariants();
    models_.admission->check_invariants();
    ledger_.check_rates();
    if (failures_on_ || maintenance_on_ || spot_on_) health_.check_invariants();
    if (failures_on_ || maintenance_on_ || spot_on_ || autoscaling_on_)
      check_lost_work(engine_.now());
    if (spot_on_) check_spot_invariants();
    if (autoscaling_on_) check_autoscaler_nodes();
  }
  if (observers_.progress && (engine.processed() & 4095) == 0) {
    const double frac = config_.horizon != kEndOfTime && config_.horizon > 0
                            ? static_cast<double>(e.time) / static_cast<double>(config_.horizon)
                            : (arrivals_.empty() ? 1.0
                                                 : static_cast<double>(next_arrival_) /
                                                       static_cast<double>(arrivals_.size()));
    observers_.progress(std::min(1.0, frac));
  }
}

const Simulation::Handler Simulation::kHandlers[kKinds] = {
    &Simulation::on_arrival,         &Simulation::on_schedule_cycle,
    &Simulation::on_pod_finish,      &Simulation::on_terminated,
    &Simulation::on_backoff_wake,    &Simulation::on_sample,
    &Simulation::on_leftover_flush,  &Simulation::on_admission_cycle,
    &Simulation::on_admission_timer, &Simulation::on_memory_peak,
    &Simulation::on_restart,         &Simulation::on_recreate,
    &Simulation::on_reconfigure_end, &Simulation::on_reconfigure_tick,
    &Simulation::on_failure,         &Simulation::on_traced_failure,
    &Simulation::on_repair,          &Simulation::on_maintenance_open,
    &Simulation::on_drain_poll,      &Simulation::on_maintenance_done,
    &Simulation::on_autoscaler_scan, &Simulation::on_node_provisioned,
    &Simulation::on_spot_reclaim,    &Simulation::on_traced_reclaim,
    &Simulation::on_reclaim_end,     &Simulation::on_spot_return,
    &Simulation::on_scale_step,
};

void Simulation::on_backoff_wake(const Event& e) {
  if (backoff_wake_at_ <= e.time) backoff_wake_at_ = kEndOfTime;
  queue_.flush_backoff(e.time);
  if (queue_.has_active()) request_cycle();
  arm_backoff_wake();
}

void Simulation::on_leftover_flush(const Event& e) {
  queue_.flush_unschedulable_leftover(e.time);
  if (queue_.has_active()) request_cycle();
  arm_backoff_wake();
  if (has_hard_work() || (config_.horizon != kEndOfTime && e.time < config_.horizon)) {
    engine_.schedule(e.time + kLeftoverFlushPeriod, kLeftoverFlush);
  }
}

void Simulation::on_admission_cycle(const Event&) {
  admission_scheduled_ = false;
  models_.admission->run_cycles();
}

void Simulation::on_admission_timer(const Event&) {
  models_.admission->on_timer();
}

void Simulation::on_reconfigure_end(const Event& e) {
  const auto gpu = static_cast<std::uint16_t>(e.data);
  auto it = target_layouts_.find({e.subject, gpu});
  CAPSIM_CHECK(it != target_layouts_.end(), "a MIG re-layout ended without a target layout");
  integrate();
  cluster_.end_reconfigure(e.subject, gpu, it->second);
  ledger_.node_changed(e.subject);
  record("mig_reconfigured", kNoPod, e.subject,
         fmt::format("GPU {}: {} instance(s)", gpu, it->second.instances.size()));
  target_layouts_.erase(it);
  cluster_event(fw::kEvNodeChanged);
}

void Simulation::on_arrival(const Event& e) {
  const SimTime t = e.time;
  while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].time == t) {
    const Arrival a = arrivals_[next_arrival_++];
    if (a.is_job) {
      jobs_.reconcile(a.index, t, [this](PodId p) { on_pod_pending(p); });
    } else {
      on_pod_pending(a.index);
    }
  }
  if (next_arrival_ < arrivals_.size()) engine_.schedule(arrivals_[next_arrival_].time, kArrival);
}

void Simulation::on_pod_pending(PodId pod) {
  lifecycle_.arrive(pod, engine_.now());
  record("arrive", pod, kNoNode, "");
  if (!cluster_.spec(pod).node_name->empty()) {
    admit_bound(pod);  // no scheduler looks at a pod with spec.nodeName
    return;
  }
  // Pods of workloads that target a Kueue LocalQueue wait for admission first.
  if (!models_.admission->on_pod_pending(pod)) {
    enqueue_for_scheduling(pod);
  }
}

void Simulation::on_schedule_cycle(const Event&) {
  cycle_scheduled_ = false;
  const SimTime now = engine_.now();
  queue_.flush_backoff(now);
  while (auto popped = queue_.pop_any(now)) {
    PodId pod = popped->q.pod;
    if (popped->group != fw::SchedulingQueue::kNoGroup) {
      // A group of pods that failed alike: if its class is known to fail on the cluster as it
      // stands, every member fails so, as its own attempt would; otherwise its first member is
      // attempted as any pod.
      const ClassFailure& cf = class_failures_[queue_.group_class(popped->group)];
      if (cf.generation == cluster_.generation()) {
        bulk_cycles_ += queue_.defer(popped->group, cf.sig);
        continue;
      }
      const auto [member, owed] = queue_.take_member(popped->group, now);
      pod = member;
      cluster_.pod(pod).attempts += static_cast<std::int32_t>(owed);
    }
    PodState& s = cluster_.pod(pod);
    ++s.attempts;
    if (gangs_.is_leader(pod)) {
      place_gang(pod);  // all its members or none
      continue;
    }
    fw::ScheduleResult r = scheduler_.schedule_one(pod);
    if (r.outcome == fw::ScheduleResult::Outcome::kScheduled) {
      queue_.done(pod);
      scheduler_.clear_nomination(pod);
      if (bulk_on_) placing_ = &popped->q;
      bind_pod(pod, r.placement);
      placing_ = nullptr;
      models_.experiment->after_attempt(pod, true, cluster_);
      if (bulk_on_) settle_straddlers(popped->q);
      continue;
    }
    if (!models_.experiment->retries_unschedulable()) {
      // Placed once or never: the pod gives up without queueing, retry or preemption.
      queue_.done(pod);
      lifecycle_.give_up(pod, now);
      s.last_unresolvable = r.unresolvable_everywhere;
      record("unschedulable", pod, kNoNode, r.message);
      models_.experiment->after_attempt(pod, false, cluster_);
      continue;
    }
    // Unschedulable (or a plugin error): remember why, requeue, maybe preempt.
    const std::uint64_t reason = text_hash(r.message);
    if (reason != s.last_reason) {
      record(r.outcome == fw::ScheduleResult::Outcome::kError ? "error" : "pending", pod, kNoNode,
             r.message);
      s.last_reason = reason;
    }
    s.last_unresolvable = r.unresolvable_everywhere && r.victims.empty();
    if (bulk_on_) {
      const std::uint32_t cls = groupable(r) ? pod_class(pod) : fw::SchedulingQueue::kNoClass;
      const fw::SchedulingQueue::Signature sig{fw_->events_moving(r.rejector_plugins),
                                               s.last_unresolvable};
      if (cls != fw::SchedulingQueue::kNoClass) class_failures_[cls] = {cluster_.generation(), sig};
      queue_.add_unschedulable(pod, r.rejector_plugins, now, cls, sig);
    } else {
      queue_.add_unschedulable(pod, r.rejector_plugins, now);
    }
    models_.experiment->after_attempt(pod, false, cluster_);
    arm_reconfigure();
    if (r.nominated_node != kNoNode && !r.victims.empty()) {
      scheduler_.nominate(pod, r.nominated_node);
      s.nominated_node = r.nominated_node;
      record("nominate", pod, r.nominated_node,
             fmt::format("preempting {} pod(s)", r.victims.size()));
      for (PodId v : r.victims)
        evict(v, pod, r.nominated_node);
    }
  }
  if (bulk_on_) queue_.finish_deferred(now);
  arm_backoff_wake();
}

bool Simulation::bulk_retries_ok() const {
  if (!fw_->config().bulk_retries || observers_.cycles != nullptr ||
      recorder_->level() == RecordLevel::kFull) {
    return false;  // pending reasons and events are written per attempt
  }
  if (fw_->plugin_name(static_cast<std::int16_t>(fw_->config().queue_sort)) != "PrioritySort")
    return false;
  // Nothing that removes a pending pod, fails a pod while the queue is being drained, or
  // watches attempts one by one.
  if (!world_->gangs.empty() || models_.admission != &AdmissionController::none() ||
      models_.experiment != &Experiment::replay() ||
      models_.reconfigurer->interval() != kEndOfTime || failures_on_ || maintenance_on_ ||
      spot_on_ || autoscaling_on_ || !world_->scaled_controllers.empty()) {
    return false;
  }
  // One priority for every pod: preemption never finds a victim (a failed attempt changes
  // nothing), and no pod carries pod (anti-)affinity that a bind could turn into a fit.
  std::optional<std::int32_t> priority;
  auto plain = [&priority](const PodSpec& p) {
    if (!p.pod_rules->spread.empty() || p.pod_rules->has_pod_affinity()) return false;
    if (priority && *priority != p.priority) return false;
    priority = p.priority;
    return true;
  };
  for (const PodSpec& p : world_->pods) {
    if (!plain(p)) return false;
  }
  for (const JobSpec& j : world_->jobs) {
    if (!plain(j.pod_template)) return false;
  }
  return true;
}

bool Simulation::groupable(const fw::ScheduleResult& r) const {
  // A group is moved by the events its rejectors registered for; a bind while the queue is
  // drained (AssignedPodAdded) must not be one of them, for members attempted before it.
  return r.outcome == fw::ScheduleResult::Outcome::kUnschedulable && r.victims.empty() &&
         r.nominated_node == kNoNode && r.rejector_plugins != 0 &&
         (r.rejector_plugins & fw_->plugins_interested_in(fw::kEvAssignedPodAdded)) == 0;
}

std::uint32_t Simulation::pod_class(PodId pod) {
  if (pod >= class_of_.size()) class_of_.resize(cluster_.pods().size(), kUnclassed);
  const auto& skipped = scheduler_.last_skipped_filters();
  std::uint32_t& c = class_of_[pod];
  if (c == kUnclassed) {
    const PodSpec& spec = cluster_.spec(pod);
    c = fw::SchedulingQueue::kNoClass;
    // Pods whose fit a bind can create (claims, pod rules, topology requests) or that the
    // scheduler does not place alone stay out of groups.
    if (!spec.claims.empty() || spec.compute_domain >= 0 || !spec.pod_rules->spread.empty() ||
        spec.pod_rules->has_pod_affinity() || !spec.node_name->empty() || spec.gang != kNoGang ||
        spec.topology->explicit_request()) {
      return c;
    }
    const std::uint64_t hash = fw::Scheduler::likeness_hash(spec);
    for (std::size_t k = 0; k < classes_.size(); ++k) {
      const PodClass& pc = classes_[k];
      if (pc.hash != hash || pc.skipped != skipped) continue;
      const PodSpec& rep = cluster_.spec(pc.rep);
      if (rep.priority == spec.priority && scheduler_.filter_alike_last(rep, spec)) {
        c = static_cast<std::uint32_t>(k);
        return c;
      }
    }
    c = static_cast<std::uint32_t>(classes_.size());
    classes_.push_back({pod, hash, skipped});
    class_failures_.emplace_back();
    return c;
  }
  if (c == fw::SchedulingQueue::kNoClass || classes_[c].skipped != skipped)
    return fw::SchedulingQueue::kNoClass;
  return c;
}

void Simulation::settle_straddlers(const fw::QueuedPodInfo& key) {
  queue_.for_each_straddling(
      key, [this, &key](std::uint32_t g, fw::SchedulingQueue::Signature sig, PodId any) {
        // Its members after `key` are attempted on the cluster as the placement left it.
        const fw::ScheduleResult r = scheduler_.probe(any);
        const fw::SchedulingQueue::Signature now{fw_->events_moving(r.rejector_plugins),
                                                 r.unresolvable_everywhere && r.victims.empty()};
        if (!groupable(r) || !(now == sig)) bulk_cycles_ -= queue_.split(g, key);
      });
}

void Simulation::admit_bound(PodId pod) {
  const std::string& name = *cluster_.spec(pod).node_name;
  NodeId node = kNoNode;
  for (const NodeInfo& n : cluster_.nodes()) {
    if (n.spec->name == name) node = n.id;
  }
  CAPSIM_CHECK(node != kNoNode,
               fmt::format("spec.nodeName {} names no node (the loader checks it)", name));
  KubeletAdmission a = kubelet_admit(cluster_, pod, node);
  if (!a.admitted) {
    lifecycle_.reject(pod, engine_.now());
    record("fail", pod, node, fmt::format("{}: {}", a.reason, a.message));
    jobs_.on_pod_ended(pod, JobController::Outcome::kFailed, engine_.now(),
                       [this](PodId p) { on_pod_pending(p); });
    return;
  }
  fw::Placement placement;
  placement.node = node;
  placement.holdings = std::move(a.holdings);
  bind_pod(pod, placement);
}

void Simulation::bind_pod(PodId pod, const fw::Placement& placement) {
  integrate();
  cluster_.bind(pod, placement.node, placement.holdings, placement.claims);
  ledger_.node_changed(placement.node);
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const SimTime now = engine_.now();
  lifecycle_.start(pod, now);
  s.nominated_node = kNoNode;
  s.memory_peaked = false;
  ++s.runs;
  if (spec.gang != kNoGang) gangs_.member_started(spec.gang);
  models_.admission->on_pod_started(pod);
  s.work_left = spec.duration;  // a restart begins again, but for its last checkpoint
  if (spec.checkpoint.enabled()) {
    s.work_left = spec.duration - s.saved_work;
    s.resume_cost = s.saved_work > 0 ? spec.checkpoint.restart : 0;
    s.saved_at = -1;
  }
  s.progress_at = -1;
  s.rate = -1;
  if (failures_on_ && !failure_armed_) arm_failure();
  if (spot_on_) {
    for (std::size_t p = 0; p < spot_armed_.size(); ++p) {
      if (spot_armed_[p] == 0) arm_reclaim(p);
    }
  }
  std::string devices;
  const NodeInfo& n = cluster_.node(placement.node);
  for (std::size_t i = 0; i < s.holdings.size(); ++i) {
    const Holding& h = s.holdings[i];
    const DeviceUnit& u = n.units[h.unit];
    if (h.pooled()) {
      devices += fmt::format("{}gpu{}({}m)", i ? "," : "", u.gpu, h.milli);
      continue;
    }
    if (u.instance >= 0) {
      const MigInstance& inst =
          n.gpus[u.gpu].layout.instances[static_cast<std::size_t>(u.instance)];
      devices += fmt::format("{}gpu{}/mig-{}@{}", i ? "," : "", u.gpu,
                             world_->gpu_models[n.spec->gpu_model].mig_profiles[inst.profile].name,
                             static_cast<int>(inst.start));
    } else {
      devices += fmt::format("{}gpu{}", i ? "," : "", u.gpu);
    }
    if (u.mode != ShareMode::kExclusive)
      devices += u.mode == ShareMode::kMps ? "(mps)" : "(shared)";
  }
  if (!s.claims.empty()) {
    // DRA: which devices each claim holds, e.g. "gpu0 [claims gpu: gpu-0 (gpu)]".
    devices += fmt::format("{}[claims {}]", devices.empty() ? "" : " ", s.claim_devices);
    for (std::size_t i = 0; i < spec.claims.size(); ++i) {
      const PodClaimRef& ref = spec.claims[i];
      if (!ref.shared() || placement.claims.at(i).reuse) continue;
      record(
          "allocate", pod, placement.node,
          fmt::format("claim {}/{}: {}", spec.namespace_, ref.claim_name, s.claims.at(i).detail));
    }
  }
  record("start", pod, placement.node, devices);
  if (n.down) {
    // A pod that tolerates the unreachable taint was bound to a node that is not running.
    fail_pod(pod, PodPhase::kFailed, "fail", "its node is not ready (down)");
    return;
  }
  if (!placement.admission_error.empty()) {
    // The kubelet refuses the devices at admission: the pod fails on the node.
    fail_pod(pod, PodPhase::kFailed, "fail", placement.admission_error);
    return;
  }
  reevaluate(placement.node, s.gpus);
  if (s.gpus.empty()) set_rate(pod, pod_rate(pod, placement.node));  // CPU-only pods
  // Its run time alone on a whole GPU of this model, for the slowdown metric.
  const double speed = n.spec->gpu_model != kNoGpuModel && !s.gpus.empty()
                           ? world_->gpu_models[n.spec->gpu_model].relative_speed
                           : 1.0;
  s.ideal_runtime = static_cast<SimDuration>(std::ceil(static_cast<double>(spec.duration) / speed));
  if (!s.gpus.empty()) {
    engine_.schedule(now + models_.devices.memory_ramp(), kMemoryPeak, pod, s.run.arm());
  } else {
    s.run.cancel();
  }
  cluster_event(fw::kEvAssignedPodAdded);
}

void Simulation::release_pod(PodId pod) {
  integrate();
  const NodeId node = cluster_.pod(pod).node;
  const std::vector<std::uint16_t> gpus = cluster_.pod(pod).gpus;
  const PodSpec& spec = cluster_.spec(pod);
  for (const PodClaimRef& ref : spec.claims) {
    // The last consumer of a shared claim leaving deallocates it.
    if (ref.shared() && cluster_.shared_claim(ref.claim).reserved_for.size() == 1) {
      record("deallocate", pod, node, fmt::format("claim {}/{}", spec.namespace_, ref.claim_name));
    }
  }
  cluster_.unbind(pod);
  ledger_.node_changed(node);
  cluster_.pod(pod).rate = 0;
  reevaluate(node, gpus);
}

void Simulation::fail_pod(PodId pod, PodPhase final_phase, std::string_view kind,
                          std::string detail) {
  PodState& s = cluster_.pod(pod);
  const NodeId node = s.node;
  s.completion.cancel();
  s.run.cancel();
  lifecycle_.finish(pod, final_phase);  // before the release, so the device model sees it gone
  release_pod(pod);
  lifecycle_.set_end(pod, engine_.now());
  record(kind, pod, node, std::move(detail));
  jobs_.on_pod_ended(pod, JobController::Outcome::kFailed, engine_.now(),
                     [this](PodId p) { on_pod_pending(p); });
  gang_member_stopped(pod, kind);
  models_.admission->on_pod_stopped(pod);
  cluster_event(fw::kEvAssignedPodDeleted);
}

void Simulation::on_pod_finish(const Event& e) {
  const PodId pod = e.subject;
  PodState& s = cluster_.pod(pod);
  if (!s.completion.fires(e.data) || s.phase != PodPhase::kRunning) return;  // re-planned
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  s.run.cancel();
  if (spec.checkpoint.enabled()) {
    const SimDuration k =
        checkpoint::completed(spec.checkpoint, s.resume_cost, engine_.now() - s.start);
    s.gpu_seconds_overhead +=
        to_seconds(s.resume_cost + k * spec.checkpoint.cost) * gpu_fraction(s.holdings);
  }
  lifecycle_.finish(pod, spec.fails ? PodPhase::kFailed : PodPhase::kSucceeded);
  release_pod(pod);
  lifecycle_.set_end(pod, engine_.now());
  s.work_left = 0;
  record(spec.fails ? "fail" : "complete", pod, node, "");
  if (spec.gang != kNoGang) {
    gangs_.member_finished(spec.gang);
  }
  jobs_.on_pod_ended(
      pod, spec.fails ? JobController::Outcome::kFailed : JobController::Outcome::kSucceeded,
      engine_.now(), [this](PodId p) { on_pod_pending(p); });
  models_.admission->on_pod_stopped(pod);
  cluster_event(fw::kEvAssignedPodDeleted);
}

void Simulation::evict(PodId victim, PodId preemptor, NodeId node) {
  (void)node;  // victims run on the nominated node
  terminate(victim, "preempt", fmt::format("preempted by {}", cluster_.spec(preemptor).name));
}

void Simulation::terminate(PodId victim, std::string_view kind, const std::string& detail) {
  PodState& s = cluster_.pod(victim);
  if (s.phase != PodPhase::kRunning && s.phase != PodPhase::kCrashBackoff) return;  // leaving
  const PodSpec& spec = cluster_.spec(victim);
  const bool was_running = s.phase == PodPhase::kRunning;
  s.completion.cancel();  // its completion, any memory check or restart no longer happen
  lifecycle_.terminate(victim);
  const SimTime now = engine_.now();
  if (was_running) {
    // A replica its controller scales down leaves by design: its run is not lost work.
    const double lost = kind == kReplicaDeleteKind ? 0.0 : lost_gpu_seconds(victim);
    (kind == "interrupt" ? s.gpu_seconds_lost_failure : s.gpu_seconds_lost) += lost;
    if (kind == "drain") maintenance_.gpu_seconds_lost += lost;  // a gang sibling's too
    if (kind == kSpotReclaimKind) spot_gpu_seconds_lost_ += lost;
    if (kind == kScaleDownEvictKind) autoscaler_->books.gpu_seconds_lost += lost;
  }
  if (kind == kSpotReclaimKind) {
    // Interrupted by a reclaim (its own node's, or a gang sibling's): in pods_interrupted too.
    ++s.interruptions;
    if (pod_reclaimed_.size() <= victim) pod_reclaimed_.resize(victim + 1u, 0);
    pod_reclaimed_[victim] = 1;
  }
  record(kind, victim, s.node, detail);
  reevaluate(s.node, s.gpus);  // it stops computing; its co-runners speed up
  engine_.schedule(now + spec.termination_grace, kTerminated, victim, s.run.arm());
  gang_member_stopped(victim, kind);
}

void Simulation::gang_member_stopped(PodId pod, std::string_view kind) {
  const PodSpec& spec = cluster_.spec(pod);
  if (spec.gang == kNoGang) return;
  // A gang does not run partly: losing one member restarts all of them. A member in
  // CrashLoopBackOff still holds its devices and counts as running.
  gangs_.member_stopped(spec.gang);
  const std::vector<PodId> members = gangs_.members(spec.gang);
  for (PodId m : members) {
    const PodPhase ph = cluster_.pod(m).phase;
    if (ph == PodPhase::kRunning || ph == PodPhase::kCrashBackoff) {
      terminate(m, kind,
                fmt::format("gang {} restarts: its member {} was stopped",
                            world_->gangs[spec.gang].name, spec.name));
    }
  }
}

void Simulation::on_terminated(const Event& e) {
  const PodId pod = e.subject;
  PodState& s = cluster_.pod(pod);
  if (!s.run.fires(e.data) || s.phase != PodPhase::kTerminating) return;
  const NodeId node = s.node;
  end_termination(pod, "recreated after preemption");
  // A scale-down's drain removes its node as soon as the last evicted pod is gone.
  if (autoscaling_on_ && autoscaler_->is_group_node(node) &&
      autoscaler_->state(node) == Autoscaler::State::kDraining &&
      autoscaler_->drain_started(node) >= 0) {
    finish_drain(node, false);
  }
}

void Simulation::end_termination(PodId pod, std::string_view why) {
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  release_pod(pod);
  if (pod < pod_deleted_.size() && pod_deleted_[pod] != 0) {
    // Its controller scaled down and deleted it: not recreated.
    lifecycle_.remove(pod, engine_.now());
    record("deleted", pod, node, "scaled down");
    models_.admission->on_pod_stopped(pod);
  } else if (spec.requeue_on_preemption) {
    ++s.restarts;
    lifecycle_.requeue(pod, engine_.now());
    s.last_reason = 0;
    record("requeue", pod, node, std::string(why));
    models_.admission->on_pod_stopped(pod);
    if (!models_.admission->on_pod_pending(pod)) {
      enqueue_for_scheduling(pod);
    }
  } else {
    lifecycle_.delete_preempted(pod, engine_.now());
    record("deleted", pod, node, "preempted and not restarted");
    jobs_.on_pod_ended(pod, JobController::Outcome::kDeleted, engine_.now(),
                       [this](PodId p) { on_pod_pending(p); });
    models_.admission->on_pod_stopped(pod);
  }
  cluster_event(fw::kEvAssignedPodDeleted);
}

void Simulation::on_memory_peak(const Event& e) {
  const PodId pod = e.subject;
  PodState& s = cluster_.pod(pod);
  if (!s.run.fires(e.data) || s.phase != PodPhase::kRunning) return;
  if (models_.devices.out_of_memory(cluster_, pod)) {
    oom_kill(pod);
    return;
  }
  s.memory_peaked = true;
}

void Simulation::oom_kill(PodId pod) {
  PodState& s = cluster_.pod(pod);
  const PodSpec& spec = cluster_.spec(pod);
  const NodeId node = s.node;
  const SimTime now = engine_.now();
  ++s.oom_kills;
  s.gpu_seconds_lost_oom += lost_gpu_seconds(pod);
  s.completion.cancel();
  s.run.cancel();
  const bool can_retry = s.restarts < spec.max_restarts;
  if (spec.restart_policy != RestartPolicy::kNever && can_retry) {
    // The kubelet restarts the container in place after CrashLoopBackOff: 10 s doubling to 5 min.
    ++s.restarts;
    const SimDuration backoff = exponential_backoff(10 * kSecond, 5 * kMinute, s.restarts);
    lifecycle_.crash(pod);
    s.restart_at = now + backoff;
    s.memory_peaked = false;
    record("oom_kill", pod, node,
           fmt::format("OOMKilled; restarting in place in {}", format_duration(backoff)));
    reevaluate(node, s.gpus);
    engine_.schedule(now + backoff, kRestart, pod, s.run.arm());
    return;
  }
  if (spec.restart_policy == RestartPolicy::kNever && spec.requeue_on_preemption && can_retry) {
    // A Job's pod: the controller creates a replacement after its back-off (10 s doubling, 6 min).
    ++s.restarts;
    const SimDuration backoff = exponential_backoff(10 * kSecond, 6 * kMinute, s.restarts);
    lifecycle_.await_replacement(pod, now);  // the replacement, not yet queued
    release_pod(pod);
    s.last_reason = 0;
    record("oom_kill", pod, node,
           fmt::format("OOMKilled; recreated in {}", format_duration(backoff)));
    engine_.schedule(now + backoff, kRecreate, pod, 0);
    gang_member_stopped(pod, "oom_kill");
    models_.admission->on_pod_stopped(pod);
    cluster_event(fw::kEvAssignedPodDeleted);
    return;
  }
  fail_pod(pod, PodPhase::kOomKilled, "oom_kill", "OOMKilled; no restarts left");
}

void Simulation::on_restart(const Event& e) {
  const PodId pod = e.subject;
  PodState& s = cluster_.pod(pod);
  if (!s.run.fires(e.data) || s.phase != PodPhase::kCrashBackoff) return;
  const PodSpec& spec = cluster_.spec(pod);
  const SimTime now = engine_.now();
  lifecycle_.restart(pod, now);
  s.work_left = spec.duration;
  if (spec.checkpoint.enabled()) {
    s.work_left = spec.duration - s.saved_work;
    s.resume_cost = s.saved_work > 0 ? spec.checkpoint.restart : 0;
    s.saved_at = -1;
  }
  s.progress_at = -1;
  s.rate = -1;
  ++s.runs;
  record("restart", pod, s.node, "container restarted after OOM");
  reevaluate(s.node, s.gpus);
  engine_.schedule(now + models_.devices.memory_ramp(), kMemoryPeak, pod, s.run.arm());
}

void Simulation::on_recreate(const Event& e) {
  const PodId pod = e.subject;
  lifecycle_.replaced(pod);
  PodState& s = cluster_.pod(pod);
  if (s.phase != PodPhase::kPending) return;
  queue_.add(pod, cluster_.spec(pod).priority, engine_.now());
  record("requeue", pod, kNoNode, "recreated after OOM");
  request_cycle();
}

void Simulation::on_reconfigure_tick(const Event&) {
  reconfigure_armed_ = false;
  std::vector<PodId> pending;
  for (PodId p = 0; p < cluster_.pods().size(); ++p) {
    if (cluster_.pod(p).phase == PodPhase::kPending && queue_.contains(p)) pending.push_back(p);
  }
  if (pending.empty()) return;
  const SimTime now = engine_.now();
  for (const Relayout& r : models_.reconfigurer->plan(cluster_, pending)) {
    const NodeInfo& n = cluster_.node(r.node);
    const GpuDeviceState& g = n.gpus.at(r.gpu);
    if (g.holders != 0 || g.reconfiguring || g.failed) continue;  // only idle, healthy GPUs
    integrate();
    cluster_.begin_reconfigure(r.node, r.gpu);
    ledger_.node_changed(r.node);
    target_layouts_[{r.node, r.gpu}] = r.layout;
    record("mig_reconfigure", kNoPod, r.node,
           fmt::format("GPU {} to {} instance(s), {} to apply", r.gpu, r.layout.instances.size(),
                       format_duration(models_.reconfigurer->duration())));
    engine_.schedule(now + models_.reconfigurer->duration(), kReconfigureEnd, r.node, r.gpu);
  }
}

void Simulation::arm_reconfigure() {
  const SimDuration interval = models_.reconfigurer->interval();
  if (reconfigure_armed_ || interval == kEndOfTime) return;  // never() never looks
  reconfigure_armed_ = true;
  engine_.schedule(engine_.now() + interval, kReconfigureTick);
}

void Simulation::take_samples() {
  sampler_.refresh();
  // Pending: in the scheduling queue, parked behind a gang's leader, or held for admission.
  const auto pending =
      static_cast<std::int64_t>(queue_.size() + gangs_.parked() + models_.admission->held_pods());
  recorder_->record_sample(sampler_.sample(engine_.now(), pending));
  models_.admission->sample(engine_.now(), *recorder_);
  topology_.sample(cluster_);
  for (const PoolSampleRecord& p : sampler_.pool_samples(engine_.now()))
    recorder_->record_pool_sample(p);
}

void Simulation::on_sample(const Event&) {
  integrate();
  take_samples();
  const SimTime next = engine_.now() + config_.sample_interval;
  if (has_hard_work() || (config_.horizon != kEndOfTime && next <= config_.horizon)) {
    engine_.schedule(next, kSample);
  }
}

}  // namespace capsim
