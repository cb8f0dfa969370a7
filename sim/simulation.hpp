// A run: the World's workload arriving over virtual time at a cluster, scheduled by one profile.
// Simulation is the EventHandler that gives engine events their meaning (arrivals, scheduling
// cycles, completions, evictions, samples), applies the Scheduler's decisions to the Cluster,
// keeps the exact time integrals, feeds the Recorder, and checks invariants: at the end always,
// after every event when `paranoid` is set.
#pragma once

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
#include "sim/framework/scheduler.hpp"
#include "sim/framework/scheduling_queue.hpp"
#include "sim/metrics.hpp"
#include "sim/queueing/admission.hpp"
#include "sim/reconfigurer.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// Measures fragmentation on a node: GPU capacity (in milli) that is free but that the workload's
// typical pods could not use. Implemented in models/ (the FGD measure); `none()` measures none.
class FragmentationMeter {
 public:
  virtual ~FragmentationMeter() = default;
  virtual double node_fragment_milli(const NodeInfo& node) const = 0;
  // A meter that finds no fragmentation anywhere (runs that do not measure it).
  static const FragmentationMeter& none();
};

// What the scenario says about a run: plain data, copyable and printable. Pods lost to
// preemption or eviction restart from the beginning (no checkpoints).
struct RunConfig {
  std::uint64_t seed = 0;
  SimTime horizon = kEndOfTime;  // stop here; pods still running or pending are reported so
  SimDuration sample_interval = kMinute;
  bool paranoid = false;  // check every invariant after every event
  EnergyPricing energy;   // energy price and PUE for cost attribution
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
};

struct RunResult {
  std::vector<PodRecord> pods;
  Summary summary;
  SimTime end_time = 0;
  std::uint64_t events = 0;
  std::uint64_t cycles = 0;
};

class Simulation final : public EventHandler, private AdmissionHost {
 public:
  Simulation(World& world, const fw::Framework& framework, fw::ReasonTable& reasons,
             Recorder& recorder, const RunConfig& config, const RunModels& models,
             RunObservers observers = {});

  // Runs to completion (or the horizon). `info` is passed to the recorder; its status and
  // times are filled in.
  RunResult run(RunInfo& info);

  // Stops at the next event boundary (e.g. on SIGINT); run() then throws Interrupted.
  void request_stop() { stop_requested_ = true; }

  const Cluster& cluster() const override { return cluster_; }
  void handle(const Event& event, Engine& engine) override;

 private:
  enum Kind : std::uint32_t {
    kArrival,
    kScheduleCycle,
    kPodFinish,
    kTerminated,
    kBackoffWake,
    kSample,
    kLeftoverFlush,
    kAdmissionCycle,
    kAdmissionTimer,
    kMemoryPeak,       // a pod reaches its peak GPU memory: OOM check
    kRestart,          // a crashed container restarts in place
    kRecreate,         // a controller recreates an OOM-killed pod
    kReconfigureEnd,   // a MIG re-layout finishes (subject: node, data: gpu)
    kReconfigureTick,  // time to let the re-layout policy look at pending demand
  };

  void on_arrival(SimTime t);
  void on_schedule_cycle();
  void on_pod_finish(PodId pod, std::uint64_t version);
  void on_terminated(PodId pod, std::uint64_t version);
  void on_sample();
  void on_memory_peak(PodId pod, std::uint64_t version);
  void on_restart(PodId pod, std::uint64_t version);
  void on_recreate(PodId pod);
  void on_reconfigure_tick();
  void oom_kill(PodId pod);
  // Recomputes the speed of every pod computing on these GPUs of `node` (and of pods sharing a
  // GPU with them) and the GPUs' busy fractions.
  void reevaluate(NodeId node, const std::vector<std::uint16_t>& gpus);
  void set_rate(PodId pod, double rate);
  double gpu_share(PodId pod) const;
  void arm_reconfigure();
  void fail_pod(PodId pod, PodPhase final_phase, std::string_view kind, std::string detail);

  void admit_pod(PodId pod);
  void create_job_pods(JobId job);
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
  SampleRecord make_sample();
  void record_pool_samples();
  void refresh_fragmentation();

  // Gangs and the admission layer (simulation_queueing.cpp).
  void enqueue_for_scheduling(PodId pod);
  void place_gang(PodId leader);
  void check_queueing_invariants() const;
  SimTime now() const override { return engine_.now(); }
  void release_to_scheduler(PodId pod) override { enqueue_for_scheduling(pod); }
  void withdraw(PodId pod, const std::string& why) override;
  void record(std::string_view kind, PodId pod, std::string detail) override {
    record(kind, pod, kNoNode, std::move(detail));
  }
  void wake_at(SimTime t) override;
  void request_admission() override;

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
  struct JobState {
    std::int32_t active = 0, succeeded = 0, failed = 0, created = 0;
  };
  std::vector<JobState> jobs_;

  bool cycle_scheduled_ = false;
  SimTime backoff_wake_at_ = kEndOfTime;
  bool stop_requested_ = false;
  std::int64_t terminating_ = 0;
  std::int64_t pending_finishes_ = 0;  // running pods with a completion event scheduled
  std::int64_t pending_restarts_ = 0;  // crash back-offs and recreations waiting
  std::int64_t reconfiguring_ = 0;     // MIG re-layouts in progress
  bool reconfigure_armed_ = false;
  std::map<std::pair<NodeId, std::uint16_t>, GpuLayout> target_layouts_;
  Integrals integrals_;
  CostLedger ledger_;
  SampleStats sample_stats_;
  std::vector<double> node_frag_;
  std::vector<std::uint64_t> node_frag_gen_;
  double frag_total_ = 0;

  // A gang waits in the scheduling queue as one member (the leader); the others are parked
  // until the leader's attempt places them all or none.
  struct GangRun {
    std::vector<PodId> members;  // every pod of the gang that became pending
    PodId leader = kNoPod;
    std::vector<PodId> parked;
    std::int32_t running = 0;   // members in phase Running
    std::int32_t finished = 0;  // members that ended since the gang was last placed
  };
  std::vector<GangRun> gangs_;
  std::size_t parked_ = 0;
  bool admission_scheduled_ = false;
};

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

}  // namespace capsim
