// End-of-run figures: the per-pod rows and the summary metrics of design.md §4, computed from the
// final pod states and the exact time integrals the simulation kept. The stable metric names are
// a contract with compare, check and users' CI: add new ones, never rename.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/cost_ledger.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// Time integrals (value x seconds) of cluster-wide quantities, kept exactly at every change.
struct Integrals {
  SimTime last = 0;
  double gpu_seconds_allocated = 0;
  double gpu_seconds_busy = 0;
  double joules = 0;
  std::array<double, kGpuSharingModes> mode_allocated{};  // per GpuSharing mode
  std::array<double, kGpuSharingModes> mode_busy{};
  double mig_slice_seconds_total = 0;
  double mig_slice_seconds_unconfigured = 0;        // compute slices in no instance
  double mig_slice_seconds_idle = 0;                // in instances nobody held
  double mig_slice_seconds_idle_while_waiting = 0;  // ... while pods were waiting
  // `pods_waiting`: whether pods were pending since the last call (for stranded capacity).
  void advance(SimTime now, const ClusterTotals& t, bool pods_waiting = false);
};

struct SampleStats {
  std::int64_t count = 0;
  double fragmentation_ratio_sum = 0;  // fragmented / unallocated GPU capacity
  std::int64_t fragmentation_ratio_count = 0;
  double fragmented_share_sum = 0;  // fragmented / total GPU capacity
};

// Linear-interpolation percentile (type 7: numpy's default) of `v`, p in [0, 100]; 0 if empty.
double percentile(std::vector<double> v, double p);
// The same of `v` sorted ascending.
double sorted_percentile(const std::vector<double>& v, double p);

// An arrived pod's state as the report names it (PodRecord::status): a pod still pending whose
// last attempt no node could ever satisfy is unschedulable.
PodPhase reported_phase(const PodState& s);
// Its time pending over all attempts; a pod still pending counts its wait up to `end` (a lower
// bound), so a starved queue shows.
double reported_wait_seconds(const PodState& s, SimTime end);

// One record per arrived pod, in PodId order. `end`: as for reported_wait_seconds.
std::vector<PodRecord> make_pod_records(const Cluster& cluster, SimTime end);
// The run's figures, from the cluster's pods (their reported_phase and reported_wait_seconds);
// `cost` gives the money figures (cost_* and queue.<q>.cost_usd / gpu_hours).
Summary compute_summary(const Cluster& cluster, const Integrals& integrals, const CostLedger& cost,
                        const SampleStats& samples, SimTime end, std::uint64_t scheduling_cycles,
                        std::uint64_t events);

// Conservation: every arrived pod is in exactly one final state, holds a node exactly while it
// runs and has an end time exactly when it ended; `records`, when given, are one per arrived pod
// with its reported state.
void check_conservation(const Cluster& cluster, const std::vector<PodRecord>* records);

}  // namespace capsim
