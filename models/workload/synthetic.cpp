#include "models/workload/synthetic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace capsim {

double daily_cycle_factor(SimTime t, double amplitude, double peak_hour) {
  const double hour = std::fmod(to_hours(t), 24.0);
  return 1.0 + amplitude * std::cos(2.0 * std::numbers::pi * (hour - peak_hour) / 24.0);
}

void generate_synthetic(const std::vector<TenantSpec>& tenants, std::uint64_t seed,
                        const std::function<void(std::size_t tenant, PodSpec&& pod)>& emit) {
  for (std::size_t ti = 0; ti < tenants.size(); ++ti) {
    const TenantSpec& t = tenants[ti];
    if (t.rate_per_hour <= 0 || t.end <= t.start) continue;
    RandomStream arrivals(seed, "arrivals/" + t.name);
    RandomStream shape(seed, "shape/" + t.name);
    RandomStream durations(seed, "duration/" + t.name);
    RandomStream usage(seed, "usage/" + t.name);
    RandomStream failures(seed, "failures/" + t.name);
    RandomStream kernel_width(seed, "sm/" + t.name);
    // Thinning (Lewis-Shedler): candidates at the peak rate, kept with probability
    // rate(t) / peak rate.
    const double peak = t.rate_per_hour * (1.0 + t.cycle_amplitude);
    const double peak_per_us = peak / static_cast<double>(kHour);
    double now = static_cast<double>(t.start);
    std::int64_t n = 0;
    for (;;) {
      now += arrivals.exponential(peak_per_us);
      if (now >= static_cast<double>(t.end)) break;
      const auto at = static_cast<SimTime>(now);
      const double keep =
          daily_cycle_factor(at, t.cycle_amplitude, t.peak_hour) / (1.0 + t.cycle_amplitude);
      if (arrivals.uniform() >= keep) continue;
      PodSpec p;
      p.name = fmt::format("{}-{:05}", t.name, n++);
      p.queue = t.queue.empty() ? t.name : t.queue;
      p.priority_class = t.priority_class;
      p.arrival = at;
      const auto gpus =
          static_cast<std::int64_t>(std::llround(std::max(0.0, t.gpus.sample(shape))));
      if (gpus > 0) {
        p.requests.set(kCpu, t.cpu_per_gpu_milli * gpus);
        p.requests.set(kMemory, t.memory_per_gpu * gpus);
        p.requests.set(t.gpu_resource, gpus);
        if (t.gpu_resource == kNvidiaGpu) p.gpu_count = static_cast<std::int32_t>(gpus);
      } else {
        p.requests.set(kCpu, t.cpu_milli_cpu_only);
        p.requests.set(kMemory, t.memory_cpu_only);
      }
      const double secs = std::max(1.0, t.duration.sample(durations));
      p.duration = from_seconds(secs);
      p.gpu_util = std::clamp(t.gpu_util.sample(usage), 0.0, 1.0);
      p.gpu_memory_used = static_cast<std::int64_t>(std::max(0.0, t.gpu_memory.sample(usage)));
      if (t.gpu_sm_fraction) {
        p.gpu_sm_fraction = std::clamp(t.gpu_sm_fraction->sample(kernel_width), 0.001, 1.0);
      }
      p.fails = t.fail_probability > 0 && failures.bernoulli(t.fail_probability);
      p.node_selector = t.node_selector;
      p.affinity = t.affinity;
      p.tolerations = t.tolerations;
      p.gpu_models = t.gpu_models;
      p.termination_grace = t.termination_grace;
      p.requeue_on_preemption = true;  // submitted through a Job controller
      emit(ti, std::move(p));
    }
  }
}

}  // namespace capsim
