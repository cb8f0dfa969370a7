// The synthetic workload generator: several tenants, each submitting pods as a Poisson process
// whose rate follows a daily cycle, with GPU counts, durations and actual usage drawn from
// distributions. Every tenant and purpose draws from its own seeded stream ("arrivals/<tenant>",
// "shape/<tenant>", "duration/<tenant>", "usage/<tenant>"), so adding a tenant does not change
// what the others submit, and the same seed gives the same workload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/workload/distribution.hpp"
#include "sim/pod.hpp"

namespace capsim {

struct TenantSpec {
  std::string name;
  std::string queue;           // defaults to name
  std::string priority_class;  // resolved later
  double rate_per_hour = 0;    // mean arrivals per hour over a day
  double cycle_amplitude = 0;  // 0..1: rate(t) = rate * (1 + A cos(2pi (hour - peak) / 24))
  double peak_hour = 14;
  SimTime start = 0;
  SimTime end = 0;                                    // arrivals in [start, end)
  Distribution gpus = Distribution::fixed(1);         // GPUs per pod (rounded; 0 = CPU-only pod)
  Distribution duration = Distribution::fixed(3600);  // seconds on a reference GPU
  Distribution gpu_util = Distribution::fixed(1.0);   // busy fraction
  Distribution gpu_memory = Distribution::fixed(0);   // bytes used per GPU (0: the whole GPU)
  // Share of a whole GPU's SMs its kernels use (drawn from its own stream only when given).
  std::optional<Distribution> gpu_sm_fraction;
  std::int64_t cpu_per_gpu_milli = 8000;
  std::int64_t memory_per_gpu = 64LL << 30;
  std::int64_t cpu_milli_cpu_only = 2000;  // CPU-only pods
  std::int64_t memory_cpu_only = 8LL << 30;
  double fail_probability = 0;
  LabelSet node_selector;
  NodeAffinity affinity;
  std::vector<Toleration> tolerations;
  std::vector<GpuModelId> gpu_models;
  // The device resource GPU pods ask for: nvidia.com/gpu, or e.g. nvidia.com/mig-1g.10gb.
  ResourceId gpu_resource = kNvidiaGpu;
  SimDuration termination_grace = 30 * kSecond;
};

// The expected rate multiplier at time t for a cycle with amplitude A and peak hour p.
double daily_cycle_factor(SimTime t, double amplitude, double peak_hour);

// Generates every tenant's pods, tenant by tenant in arrival order (unsorted across tenants),
// handing each to `emit` with its tenant's index as it is made: a million pods are never held
// twice.
void generate_synthetic(const std::vector<TenantSpec>& tenants, std::uint64_t seed,
                        const std::function<void(std::size_t tenant, PodSpec&& pod)>& emit);

}  // namespace capsim
