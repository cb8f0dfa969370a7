// A run: the World's workload arriving over virtual time at a cluster, scheduled by one profile.
// Simulation is the EventHandler that gives engine events their meaning (arrivals, scheduling
// cycles, completions, evictions, samples), applies the Scheduler's decisions to the Cluster,
// keeps the exact time integrals, feeds the Recorder, and checks invariants: at the end always,
// after every event when `paranoid` is set.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/cost_ledger.hpp"
#include "sim/device_model.hpp"
#include "sim/engine.hpp"
#include "sim/experiment.hpp"
#include "sim/fragmentation_meter.hpp"
#include "sim/framework/scheduler.hpp"
#include "sim/framework/scheduling_queue.hpp"
#include "sim/metrics.hpp"
#include "sim/queueing/admission.hpp"
#include "sim/reconfigurer.hpp"
#include "sim/recorder.hpp"
#include "sim/run/disruption_budgets.hpp"
#include "sim/run/failure_model.hpp"
#include "sim/run/failure_process.hpp"
#include "sim/run/gang_coordinator.hpp"
#include "sim/run/job_controller.hpp"
#include "sim/run/maintenance.hpp"
#include "sim/run/node_health.hpp"
#include "sim/run/pod_lifecycle.hpp"
#include "sim/run/sampler.hpp"
#include "sim/run/scale_down_config.hpp"
#include "sim/run/spot.hpp"
#include "sim/topology.hpp"

namespace capsim {

// A pool's racks priced beyond their nodes (cost.pools.<p>.rack_price_per_hour): each node's
// price carries its share, so the rack is billed with its nodes; the share is kept to report
// the racks' part of the hardware cost (cost_racks_usd).
struct RackPrice {
  std::string pool;
  double per_node_hour = 0;
};

// What the scenario says about a run: plain data, copyable. Pods lost to preemption, eviction or
// a failure restart from their last checkpoint (PodSpec::checkpoint), else from the beginning.
struct RunConfig {
  std::uint64_t seed = 0;
  SimTime horizon = kEndOfTime;  // stop here; pods still running or pending are reported so
  SimDuration sample_interval = kMinute;
  bool paranoid = false;               // check every invariant after every event
  EnergyPricing energy;                // energy price and PUE for cost attribution
  FailureConfig failures;              // node and GPU failures (none by default)
  MaintenanceConfig maintenance;       // maintenance windows: cordon, drain, work (none by default)
  SpotConfig spot;                     // spot pools and their reclaims (none by default)
  ScaleDownConfig scale_down;          // how autoscaled groups shrink (upstream's defaults)
  std::vector<RackPrice> rack_prices;  // pools whose racks have their own price
};

// The run's collaborators. None is ever null: each has a real default object that does nothing
// (LevelDB's Options: "Default: Env::Default()"), so the Simulation never asks whether one is
// there. None is owned; each must outlive the run. The device model has no default: tests
// simulate the same physics as `capsim run` (models/device_model.hpp's SharingDeviceModel).
struct RunModels {
  // Speed, busy and memory rules of the devices.
  const DeviceModel& devices;
  // The admission layer in front of the scheduling queue (Kueue); none(): pods go straight to
  // the scheduler.
  AdmissionController* admission = &AdmissionController::none();
  // A MIG re-layout policy consulted while pods wait; never(): layouts never change.
  MigReconfigurer* reconfigurer = &MigReconfigurer::never();
  // Free GPU capacity the workload could not use, for the samples; none() measures nothing.
  const FragmentationMeter* fragmentation = &FragmentationMeter::none();
  // What fraction of a device a pod is charged for (cost attribution).
  const DeviceCharge* charge = &DeviceCharge::standard();
  // How arrivals, retries and samples are driven; replay() is a cluster's own behaviour.
  Experiment* experiment = &Experiment::replay();
};

// Who watches a run from outside; both may be empty.
struct RunObservers {
  // Called now and then with the fraction of the run done (0..1); for progress bars.
  std::function<void(double)> progress;
  // Polled every 1024 events; returning true stops the run (run() then throws Interrupted).
  std::function<bool()> should_stop;
  // Told of scheduling cycles (the pending-reason rows, --explain); outlives the Simulation.
  fw::CycleObserver* cycles = nullptr;
};

struct RunResult {
  std::vector<PodRecord> pods;  // empty when the recorder keeps no pod rows (RecordLevel)
  Summary summary;
  SimTime end_time = 0;
  std::uint64_t events = 0;
  std::uint64_t cycles = 0;
  std::uint64_t bulk_cycles = 0;  // of `cycles`, those made by whole groups (bulk retries)
};

class Autoscaler;

class Simulation final : public EventHandler, private AdmissionHost {
 public:
  Simulation(World& world, const fw::Framework& framework, fw::ReasonTable& reasons,
             Recorder& recorder, const RunConfig& config, const RunModels& models,
             RunObservers observers = {});
  ~Simulation() override;

  // Runs to completion (or the horizon). `info` is passed to the recorder; its status and
  // times are filled in.
  RunResult run(RunInfo& info);
  // Instead of run(): processes every event before `t` exactly as run() would (the horizon and
  // everything else unchanged) and stops, without closing the books, so cluster() and
  // scheduler() show the state a run has at `t` (`capsim score`). Call once, on a fresh
  // Simulation; `info` is passed to the recorder's begin_run.
  void run_before(SimTime t, RunInfo& info);

  // Stops at the next event boundary (e.g. on SIGINT); run() then throws Interrupted.
  void request_stop() { stop_requested_ = true; }

  const Cluster& cluster() const override { return cluster_; }
  // The scheduler as the run left it (its nominations and rotating start index), for
  // evaluating a pod against the state a run reached (`capsim score`).
  const fw::Scheduler& scheduler() const { return scheduler_; }
  void handle(const Event& event, Engine& engine) override;

 private:
  // The event kinds, each with one handler (kHandlers in simulation.cpp, in this order). Events
  // that a later change can overtake carry a Timer stamp in `data` (sim/timer.hpp); the handler
  // acts only if the timer still fires it.
  enum Kind : std::uint32_t {
    kArrival,          // the next arrivals are due (no subject: every arrival at this time)
    kScheduleCycle,    // pop and attempt every pod that is ready (no subject)
    kPodFinish,        // subject: pod; data: its `completion` stamp
    kTerminated,       // a grace period ends; subject: pod; data: its `run` stamp
    kBackoffWake,      // pods' scheduling back-off may have expired (no subject)
    kSample,           // take the time-driven samples (no subject)
    kLeftoverFlush,    // flushUnschedulablePodsLeftover, every 30 s (no subject)
    kAdmissionCycle,   // run the admission layer's cycles (no subject)
    kAdmissionTimer,   // the admission layer asked to be woken (no subject)
    kMemoryPeak,       // a pod reaches its peak GPU memory: OOM check; subject: pod; data: `run`
    kRestart,          // a crashed container restarts in place; subject: pod; data: `run`
    kRecreate,         // the Job controller recreates an OOM-killed pod; subject: pod
    kReconfigureEnd,   // a MIG re-layout finishes; subject: node; data: GPU index
    kReconfigureTick,  // the re-layout policy looks at pending demand (no subject)
    kFailure,          // the next modelled failure is due (no subject)
    kTracedFailure,    // a failure trace's row is due; data: its index
    kRepair,           // a failed node or GPU is repaired; subject: node; data: GPU + 1, 0: node
    kMaintenanceOpen,  // a maintenance window opens; data: its index
    kDrainPoll,        // a drain tries its evictions again; subject: node; data: window
    kMaintenanceDone,  // a drained node's maintenance work ends; subject: node; data: window
    kAutoscalerScan,   // the autoscaler's periodic loop: scale up, scale down (no subject)
    kNodeProvisioned,  // a node the autoscaler requested becomes Ready; subject: node
    kSpotReclaim,      // a spot pool's next modelled reclaim is due; data: its spot pool index
    kTracedReclaim,    // a reclaim trace's row is due; data: its index
    kReclaimEnd,       // a reclaim's notice ends: the node goes; subject: node
    kSpotReturn,       // a reclaimed spot node comes back; subject: node
    kScaleStep,        // a scaling step of a controller; subject: its index; data: step index
    kKinds,
  };
  using Handler = void (Simulation::*)(const Event&);
  static const Handler kHandlers[kKinds];

  void on_arrival(const Event& e);
  void on_schedule_cycle(const Event& e);
  void on_pod_finish(const Event& e);
  void on_terminated(const Event& e);
  void on_backoff_wake(const Event& e);
  void on_sample(const Event& e);
  void on_leftover_flush(const Event& e);
  void on_admission_cycle(const Event& e);
  void on_admission_timer(const Event& e);
  void on_memory_peak(const Event& e);
  void on_restart(const Event& e);
  void on_recreate(const Event& e);
  void on_reconfigure_end(const Event& e);
  void on_reconfigure_tick(const Event& e);
  void on_failure(const Event& e);
  void on_traced_failure(const Event& e);
  void on_repair(const Event& e);
  void on_maintenance_open(const Event& e);
  void on_drain_poll(const Event& e);
  void on_maintenance_done(const Event& e);
  void on_autoscaler_scan(const Event& e);
  void on_node_provisioned(const Event& e);
  void on_spot_reclaim(const Event& e);
  void on_traced_reclaim(const Event& e);
  void on_reclaim_end(const Event& e);
  void on_spot_return(const Event& e);
  // Scaling steps of Deployments, ReplicaSets and StatefulSets (sim/simulation_scaling.cpp): a
  // step up's pods arrive by themselves; a step down deletes the pods the controller would.
  void on_scale_step(const Event& e);
  std::vector<PodId> scale_down_victims(const ScaledController& c, std::size_t excess) const;
  void delete_replica(PodId pod, const std::string& why);
  // Spot capacity (sim/run/spot.hpp, sim/simulation_spot.cpp): a reclaim's notice cordons the
  // node and terminates its pods gracefully; at its end the node leaves (absent, not billed)
  // with whatever still runs on it, and it may come back later.
  void arm_reclaim(std::size_t pool);
  void apply_reclaim(const SpotProcess::Reclaim& r, std::string_view source);
  // The fleet's size changes (a reclaim, a return): the integrals up to now at the old size.
  void spot_fleet_changes();
  void add_spot_summary(Summary& summary, SimTime end);
  void check_spot_invariants() const;
  // Autoscaling (sim/run/autoscaler.hpp, sim/simulation_autoscaling.cpp).
  void start_autoscaler();
  void scale_up(SimTime now);
  void scale_down(SimTime now);
  // A drain decided by the scale-down: the node is cordoned and its pods are evicted (gracefully,
  // losing the work since their last checkpoint); finish_drain removes it once they are gone, or
  // (`force`, at max_graceful_termination) with whatever still terminates cut short. A drained
  // node that failed meanwhile is given back to its group instead.
  void begin_drain_evictions(NodeId node);
  void finish_drain(NodeId node, bool force);
  // The node leaves: its DaemonSet pods stop, it becomes absent and unbilled.
  void remove_group_node(NodeId node, std::string_view why);
  // Every group node's state agrees with its presence and billing; a removed node holds no pod.
  void check_autoscaler_nodes() const;
  void add_autoscaling_summary(Summary& summary, SimTime end);
  // node_hours and pool.<p>.node_hours, and the allocation and utilisation ratios (overall and
  // per sharing mode) over the fleet that existed: `fleet_gpu_seconds` and `mode_gpu_seconds` are
  // its integrals, which replace the end's fleet times the run. Runs whose fleet changes size.
  void put_fleet_summary(Summary& summary, double fleet_gpu_seconds,
                         const std::array<double, kGpuSharingModes>& mode_gpu_seconds);
  // cost_racks_usd: the racks' shares of the nodes' prices over the node-hours billed.
  void add_rack_cost(Summary& summary) const;
  void check_autoscaling(SimTime now) const;
  // Maintenance (sim/run/maintenance.hpp, sim/simulation_maintenance.cpp): a window takes its
  // next nodes; a node is cordoned and drained, worked on, and returned.
  void take_maintenance_nodes(std::size_t window);
  void drain(NodeId node, std::size_t window);
  void end_node_maintenance(NodeId node, std::size_t window, bool uncordon = true);
  void add_maintenance_summary(Summary& summary, SimTime end);
  // Failures (sim/run/failure_process.hpp, node_health.hpp): the failed GPU's or node's pods
  // are interrupted, the device or node goes down, and its repair is planned.
  void apply_failure(const FailureProcess::Failure& f);
  // A pod on a failed device or node stops now (no grace period: its containers are gone).
  void interrupt(PodId pod, FailureCause cause, const std::string& what);
  // Plans the next modelled failure while the run has work (or a horizon to reach).
  void arm_failure();
  // A grace period ends (or is cut short): the pod leaves its node and is recreated or deleted.
  void end_termination(PodId pod, std::string_view why);
  // Banks the work done since PodState::progress_at at the pod's rate, and the checkpoints
  // completed meanwhile.
  void bank_progress(PodId pod);
  // The GPU time an interrupted run of `pod` throws away (since its last checkpoint), adding its
  // checkpoint overhead to the pod's.
  double lost_gpu_seconds(PodId pod);
  void add_failure_summary(Summary& summary, SimTime end);
  // No pod's lost GPU time exceeds its GPUs times the run so far.
  void check_lost_work(SimTime now) const;
  void oom_kill(PodId pod);
  // Recomputes the speed of every pod computing on these GPUs of `node` (and of pods sharing a
  // GPU with them) and the GPUs' busy fractions.
  void reevaluate(NodeId node, const std::vector<std::uint16_t>& gpus);
  void set_rate(PodId pod, double rate);
  void arm_reconfigure();
  void fail_pod(PodId pod, PodPhase final_phase, std::string_view kind, std::string detail);

  // A pod arrives (from the workload or its Job controller) and becomes pending.
  void on_pod_pending(PodId pod);
  // A pod with spec.nodeName: the kubelet of that node admits it (binds it, no scheduling
  // cycle) or rejects it (it fails, OutOf<resource>): sim/run/kubelet_admission.hpp.
  void admit_bound(PodId pod);
  void bind_pod(PodId pod, const fw::Placement& placement);
  void release_pod(PodId pod);
  void evict(PodId victim, PodId preemptor, NodeId node);
  // Starts the grace period of a running pod (preemption, a gang restart, a Kueue eviction).
  void terminate(PodId pod, std::string_view kind, const std::string& detail);
  // A gang member stopped running (preempted, evicted, OOM-killed): the rest of its gang stops too.
  void gang_member_stopped(PodId pod, std::string_view kind);
  void cluster_event(fw::EventMask ev);
  void request_cycle();
  void arm_backoff_wake();
  bool has_hard_work() const;
  void integrate();
  // A running pod's progress rate: its own, or its gang's slowest member's.
  double pod_rate(PodId pod, NodeId node) const;
  double own_rate(PodId pod, NodeId node) const;
  void record(std::string_view kind, PodId pod, NodeId node, std::string detail);
  // The samples of now: cluster-wide, the admission layer's and per pool.
  void take_samples();

  // Gangs and the admission layer (simulation_queueing.cpp).
  void enqueue_for_scheduling(PodId pod);
  void place_gang(PodId leader);
  SimTime now() const override { return engine_.now(); }
  void release_to_scheduler(PodId pod) override { enqueue_for_scheduling(pod); }
  void withdraw(PodId pod, const std::string& why) override;
  void record(std::string_view kind, PodId pod, std::string detail) override {
    record(kind, pod, kNoNode, std::move(detail));
  }
  void wake_at(SimTime t) override;
  void request_admission() override;
  // The start of a run: arrivals in order, the first events, the recorder told.
  void begin(RunInfo& info);

  World* world_;
  Cluster cluster_;
  Engine engine_;
  const fw::Framework* fw_;
  fw::ReasonTable* reasons_;
  fw::Scheduler scheduler_;
  fw::SchedulingQueue queue_;
  Recorder* recorder_;
  RunConfig config_;
  RunModels models_;
  RunObservers observers_;

  struct Arrival {
    SimTime time;
    bool is_job;
    std::uint32_t index;
  };
  std::vector<Arrival> arrivals_;
  std::size_t next_arrival_ = 0;
  PodLifecycle lifecycle_;
  JobController jobs_;
  GangCoordinator gangs_;

  bool cycle_scheduled_ = false;
  // Bulk retries (docs/scheduling.md, "A backlog"): on where nothing in the run tells a grouped
  // pod's failed attempts apart from its group's (bulk_retries_ok). Pods that filter alike form
  // a class; a class's last failure is known for the cluster generation it was seen on.
  bool bulk_on_ = false;
  std::uint64_t bulk_cycles_ = 0;               // attempts made by whole groups
  const fw::QueuedPodInfo* placing_ = nullptr;  // the queue key of the pod being bound
  struct PodClass {
    PodId rep;
    std::uint64_t hash;
    std::bitset<fw::kMaxPlugins> skipped;
  };
  std::vector<PodClass> classes_;
  std::vector<std::uint32_t> class_of_;  // per pod; kUnclassed until its first failure
  static constexpr std::uint32_t kUnclassed = 0xfffffffeu;
  struct ClassFailure {
    std::uint64_t generation = ~std::uint64_t{0};
    fw::SchedulingQueue::Signature sig;
  };
  std::vector<ClassFailure> class_failures_;
  bool bulk_retries_ok() const;
  // Once, when the run stops: the grouped pods' PodStates catch up with their groups.
  void settle_group_members();
  // The class of `pod` right after a failed cycle of it (kNoClass: it joins no group).
  std::uint32_t pod_class(PodId pod);
  bool groupable(const fw::ScheduleResult& r) const;
  // After `key` was placed: deferred groups with members after it whose failure would differ
  // go back to activeQ.
  void settle_straddlers(const fw::QueuedPodInfo& key);
  SimTime backoff_wake_at_ = kEndOfTime;
  bool stop_requested_ = false;
  bool reconfigure_armed_ = false;
  // The MIG re-layouts in progress: the layout each GPU is being given.
  std::map<std::pair<NodeId, std::uint16_t>, GpuLayout> target_layouts_;
  Integrals integrals_;
  CostLedger ledger_;
  Sampler sampler_;

  bool admission_scheduled_ = false;

  // Failures: off (no FailureConfig) costs one flag test where they would act.
  bool failures_on_ = false;
  bool checkpoints_on_ = false;  // some pod checkpoints: report the overhead
  FailureProcess failures_;
  NodeHealth health_;
  bool failure_armed_ = false;
  std::int64_t failure_events_ = 0;  // failure and repair events pending
  std::int64_t node_failures_ = 0;
  std::int64_t gpu_failures_ = 0;
  std::array<std::int64_t, kFailureCauses> failures_by_cause_{};

  // Maintenance windows and the budgets their drains respect: off (no window) costs one flag
  // test where they would act.
  bool maintenance_on_ = false;
  MaintenanceProgress maintenance_;
  DisruptionBudgets budgets_;
  std::int64_t maintenance_events_ = 0;  // maintenance events pending
  // Only failures, repairs, maintenance and spot events are left (none of them is work).
  bool only_background_events() const;
  TopologyMeter topology_;  // sim/topology.hpp: inert without a cluster topology

  // Autoscaled node groups: off (World::autoscaler not enabled) costs one flag test where they
  // would act, and no Autoscaler is made.
  bool autoscaling_on_ = false;
  std::unique_ptr<Autoscaler> autoscaler_;

  // Spot pools: off (no SpotConfig pool) costs one flag test where they would act.
  bool spot_on_ = false;
  SpotProcess spot_;
  enum class SpotStep : std::uint8_t { kUp, kNotice, kReclaimed };
  struct SpotNode {
    SpotStep step = SpotStep::kUp;
    SimDuration return_after = -1;  // of the reclaim in progress; -1: never
  };
  std::vector<SpotNode> spot_nodes_;         // per node
  std::vector<std::uint8_t> spot_armed_;     // per spot pool: its next reclaim is drawn
  std::vector<std::int64_t> pool_reclaims_;  // per spot pool: nodes reclaimed
  std::vector<std::uint8_t> pod_reclaimed_;  // per pod: interrupted by a reclaim
  std::vector<std::uint8_t> pod_deleted_;    // per pod: its controller deletes it (scaled down)
  std::int64_t spot_events_ = 0;             // spot events pending
  std::int64_t spot_notices_ = 0;            // interruption notices given
  std::int64_t spot_reclaims_ = 0;           // nodes removed at the end of a notice
  std::int64_t spot_returns_ = 0;
  std::int64_t spot_skipped_ = 0;     // notices for nodes not up, and reclaims a failure overtook
  std::int64_t spot_kills_ = 0;       // pods still on a node when its notice ended
  double spot_gpu_seconds_lost_ = 0;  // work thrown away by reclaims (since checkpoints)
  // The fleet's GPUs integrated over time while spot nodes come and go, for the allocation and
  // utilisation ratios (as the autoscaler's Books::advance_fleet).
  double spot_fleet_gpu_seconds_ = 0;
  std::array<double, kGpuSharingModes> spot_fleet_mode_gpu_seconds_{};
  SimTime spot_fleet_last_ = 0;
};

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace capsim
