// Kueue's admission controller in front of the scheduling queue. Pods of a workload that targets
// a LocalQueue are held until the workload is admitted by its ClusterQueue; then they get the
// assigned flavors' node labels and tolerations and go to the scheduler. One admission cycle is
// Kueue's scheduler loop:
//   1. heads: the first workload of every ClusterQueue (priority, then queue time);
//   2. snapshot: the quota tree (live; what-ifs are undone, reservations reverted at the end);
//   3. nominate: flavor assignment, and preemption targets when it needs preemption;
//   4. order: non-borrowing before borrowing, priority, time; or, with fair sharing, a
//      tournament by dominant resource share at every cohort level;
//   5. admit: re-check the fit, at most one borrowing admission per cohort, issue preemptions;
//   6. requeue: BestEffortFIFO sets inadmissible heads aside until quota is released in their
//      cohort tree; StrictFIFO keeps them at the head, blocking the queue.
// Cycles repeat at the same instant while they make progress. Every decision that keeps a
// workload waiting is recorded (once per change of reason) as an event.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/queueing/admission.hpp"
#include "sim/queueing/flavor_assigner.hpp"
#include "sim/queueing/kueue_state.hpp"
#include "sim/queueing/preemptor.hpp"

namespace capsim::queueing {

class KueueAdmission final : public AdmissionController {
 public:
  // `world.queues` must be active (at least one ClusterQueue) and validated by the loader.
  explicit KueueAdmission(World& world);

  void attach(AdmissionHost& host) override { host_ = &host; }
  bool on_pod_pending(PodId pod) override;
  void on_pod_started(PodId pod) override;
  void on_pod_stopped(PodId pod) override;
  void run_cycles() override;
  void on_timer() override;
  bool busy() const override;
  std::size_t held_pods() const override;
  void sample(SimTime now, Recorder& recorder) override;
  void add_summary(Summary& summary, SimTime end) const override;
  void check_invariants() const override;

  const KueueState& state() const { return st_; }
  std::int64_t cycles() const { return cycles_; }

 private:
  enum class EntryStatus : std::uint8_t {
    kNominated,
    kInadmissible,  // namespace mismatch, stopped queue
    kNoFit,
    kNoCandidates,
    kSkipped,
    kPreempting,
    kAdmitted
  };
  struct Entry {
    WorkloadId wl;
    std::int32_t cq;
    FlavorAssignment assignment;
    std::vector<PreemptionTarget> targets;
    std::int32_t count = 0;  // the pods it would be admitted with (below the workload's: partial)
    EntryStatus status = EntryStatus::kNominated;
    std::string message;
  };

  // Returns whether the cycle made progress (admitted, evicted, or set a head aside).
  bool cycle();
  void nominate(Entry& e);
  // Whether a nomination can be admitted: it fits, or fits by preempting some workloads.
  static bool admissible(const Entry& e);
  // Partial admission: the largest count down to the workload's min_count that fits or can
  // preempt (with a topology placement when `tas`), when its full count does neither.
  void reduce(Entry& e, const Workload& w, bool tas);
  // A copy of `w` with `count` pods (its requests scaled to them), for a reduced nomination.
  static Workload with_count(const Workload& w, std::int32_t count);
  std::string nomination_key(const Workload& w, std::int32_t cq) const;
  std::vector<std::size_t> classical_order(const std::vector<Entry>& entries) const;
  std::size_t fair_pick(const std::vector<Entry>& entries, const std::vector<bool>& done) const;
  void process(Entry& e, std::set<QuotaNodeId>& roots_admitted, std::set<WorkloadId>& preempted,
               std::vector<std::pair<std::int32_t, FrAmounts>>& reservations, bool& progress);

  WorkloadId workload_for(PodId pod, std::int32_t lq);
  void complete_workload(Workload& w);
  void enqueue(Workload& w);
  void dequeue(Workload& w);
  void admit(Entry& e);
  void evict(Workload& w, const std::string& why, bool pods_ready_timeout);
  void finish_eviction(Workload& w);
  void finish(Workload& w);
  void requeue_inadmissible(std::int32_t cq);
  // Hands a pending pod of an admitted workload to the scheduler, with the flavors injected.
  void release(PodId pod, const Workload& w);
  bool released(PodId pod) const;
  // After a partial admission: releases held pods while fewer than the admitted count run.
  void top_up(Workload& w);
  void inject(PodId pod, const Workload& w);
  void restore(PodId pod);
  bool holds_node(const Workload& w) const;
  bool all_terminal(const Workload& w) const;
  void note(Workload& w, std::string_view kind, const std::string& detail);
  void integrate_usage();
  void add_timer(SimTime t, WorkloadId w);
  double gpus_of(PodId pod) const;

  // Topology-aware scheduling (kueue_tas.cpp). Nothing here runs without a TAS ResourceFlavor.
  bool tas_requested(const Workload& w) const;
  // After flavor assignment: the TAS placement, or NoFit with Kueue's message.
  void place_topology(FlavorAssignment& a, const Workload& w) const;
  // The flavor's nodes as TAS sees them (free capacity; `empty`: as if no TAS workload ran).
  // `reserve`: take off what pinned, unbound pods will take.
  TopologySnapshot tas_snapshot(std::int32_t flavor, const PodSpec& pod, bool empty,
                                bool reserve = true) const;
  TasResult find_topology(const Workload& w, std::int32_t flavor, bool empty) const;
  // Pins `pod` to a lowest-level domain of its workload's assignment with room (nodeSelector).
  void pin(PodId pod, const Workload& w);
  void check_topology_invariants() const;
  std::string topology_note(const Workload& w) const;

  World* world_;
  KueueState st_;
  Preemptor preemptor_;
  AdmissionHost* host_ = nullptr;
  std::vector<WorkloadId> by_pod_;
  std::vector<bool> released_;  // per pod: handed to the scheduler since its last admission
  std::vector<WorkloadId> by_job_;
  std::vector<WorkloadId> by_gang_;
  std::vector<WorkloadId> by_group_;  // per World::workload_groups entry
  struct SavedPlacement {
    LabelSet node_selector;
    std::vector<Toleration> tolerations;
  };
  std::map<PodId, SavedPlacement> saved_;
  std::vector<bool> cq_tas_only_;  // every flavor of the ClusterQueue has a Topology
  std::vector<bool> cq_has_tas_;   // some flavor of the ClusterQueue has one
  struct Pin {
    WorkloadId wl = -1;
    std::int32_t domain = -1;  // index into the workload's TopologyAssignment::domains
  };
  std::map<PodId, Pin> pins_;
  std::multimap<SimTime, WorkloadId> timers_;
  std::int64_t cycles_ = 0;
  SimTime integrated_at_ = 0;
  std::vector<double> lq_gpu_seconds_;
  std::vector<std::int64_t> lq_admissions_, lq_preempted_;
  std::int64_t pods_ready_timeouts_ = 0;
  std::int64_t preempted_before_start_ = 0;  // victims none of whose pods had started
  // Bumped whenever quota usage or the set of admitted workloads changes; nominations cached
  // for one generation.
  std::uint64_t generation_ = 0;
  std::uint64_t nominations_generation_ = 0;
  struct Nomination {
    FlavorAssignment assignment;
    std::vector<PreemptionTarget> targets;
    std::int32_t count = 0;
  };
  std::unordered_map<std::string, Nomination> nominations_;
  SimTime instant_ = -1;
  std::int64_t instant_rounds_ = 0;
  std::string* trace_ = nullptr;  // the last cycles of a runaway instant, for the error message
  std::string trace_text_;
};

// The admission layer for `world`, or nullptr when it has no ClusterQueue.
std::unique_ptr<AdmissionController> make_admission(World& world);

}  // namespace capsim::queueing
