// The performance and memory model of GPU sharing. A pod's `gpu_util` u is the fraction of its
// run it keeps a whole GPU busy when alone; its GPU phases take u x D of its work D. On a device
// that gives it an effective capacity c (fraction of a whole GPU's speed), its GPU phases stretch
// by max(1, s / c), where s is the share of a whole GPU's SMs its kernels use (`gpu_sm_fraction`,
// 1 by default: kernels that fill the GPU slow down in proportion; a small inference kernel with
// s = 0.15 loses nothing on a slice with c >= 0.15). Its speed factor is
//     R = 1 / ((1 - u) + u x max(1, s / c) / t), t being its share of the device's time.
// The effective capacity c depends on the device:
//   - a whole GPU alone: c = 1;
//   - a MIG instance: c = sqrt(SM share x memory-slice share), e.g. an H100 3g.40gb is
//     sqrt(60/132 x 4/8) = 0.48 (compute follows SMs, bandwidth follows memory slices);
//   - time-slicing among k pods: the device's capacity, for a share of the time
//     t = min(1, 1/sum(u_j)) x (1 - context_switch_overhead when k >= 2) (CUDA time-slices evenly
//     between the processes that want the GPU), so GPU phases also stretch by 1/t;
//   - MPS: the device's capacity x the client's thread cap floor(100/replicas) %;
//   - a GPU share of m milli: m/1000;
//   - a device of a DRA resource claim: as a whole GPU or MIG instance, time-sliced (without
//     memory isolation) among the pods sharing the claim.
// A multi-GPU pod runs at the speed of its slowest device. A GPU's busy fraction (DCGM's
// GR_ENGINE_ACTIVE) sums its holders' u x R, scaled for MIG instances by the share of the GPU
// they occupy.
// Memory: time-slicing has no isolation; when a pod reaches its peak memory and the peaks of the
// pods already there plus its own exceed the device's memory, the allocating pod (the one
// reaching its peak now, i.e. the latest) is OOM-killed. Elsewhere a pod fails alone when its
// own peak exceeds what it was given: the MIG instance, the MPS client limit
// floor(memory / replicas), its GPU share, or the GPU.
#pragma once

#include "sim/device_model.hpp"

namespace capsim {

struct DeviceModelParams {
  double context_switch_overhead = 0.10;  // [U] commonly quoted 5-20 %
  SimDuration memory_ramp = kMinute;      // time from start to peak memory
};

class SharingDeviceModel final : public DeviceModel {
 public:
  explicit SharingDeviceModel(DeviceModelParams p = {}) : p_(p) {}
  double factor(const Cluster& c, const NodeInfo& node, PodId pod,
                const Holding& holding) const override;
  double gpu_busy(const Cluster& c, const NodeInfo& node, std::uint16_t gpu) const override;
  bool out_of_memory(const Cluster& c, PodId pod) const override;
  SimDuration memory_ramp() const override { return p_.memory_ramp; }
  const DeviceModelParams& params() const { return p_; }

  // R = 1 / ((1 - u) + u x max(1, s / c) / t), exposed for tests.
  static double speed_factor(double util, double capacity, double sm_fraction = 1.0,
                             double time_share = 1.0);

 private:
  // What a computing pod gets on `unit`: the compute capacity c it runs on (a fraction of a
  // whole GPU) and the share t of time it gets there (time-slicing contention).
  struct Access {
    double capacity;
    double time_share;
  };
  Access access(const Cluster& c, const NodeInfo& node, std::int32_t unit) const;
  DeviceModelParams p_;
};

// Whether a pod is computing (running, not crashed or terminating) and so competes for its GPU.
bool is_computing(const PodState& s);

}  // namespace capsim
