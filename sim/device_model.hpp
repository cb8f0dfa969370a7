// What the devices a pod holds do to it: how fast it progresses (its rate, in reference-GPU work
// per unit of wall time) given its device and the pods it shares it with, how busy that leaves
// each GPU, and whether it runs out of GPU memory. The Simulation asks whenever the holders of a
// GPU change; the rules live in models/device_model (a model, not mechanism).
#pragma once

#include <cstdint>

#include "sim/cluster.hpp"

namespace capsim {

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  // The speed factor (0..1, relative to the pod alone on a whole GPU of the node's model) of
  // `pod` through one of its holdings on `node` (a unit replica or a GPU share), given the
  // other pods computing on the same device.
  virtual double factor(const Cluster& c, const NodeInfo& node, PodId pod,
                        const Holding& holding) const = 0;
  // The busy fraction (0..1) of physical GPU `gpu` of `node`.
  virtual double gpu_busy(const Cluster& c, const NodeInfo& node, std::uint16_t gpu) const = 0;
  // Whether `pod`, reaching its peak memory now, no longer fits its devices' memory.
  virtual bool out_of_memory(const Cluster& c, PodId pod) const = 0;
  // How long after starting a pod reaches its peak memory use (when an OOM would strike).
  virtual SimDuration memory_ramp() const = 0;
};

}  // namespace capsim
