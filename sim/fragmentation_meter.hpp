// Measures fragmentation on a node: GPU capacity (in milli) that is free but that the workload's
// typical pods could not use. Implemented in models/ (the FGD measure); `none()` measures none.
#pragma once

#include "sim/node.hpp"

namespace capsim {

class FragmentationMeter {
 public:
  virtual ~FragmentationMeter() = default;
  virtual double node_fragment_milli(const NodeInfo& node) const = 0;
  // A meter that finds no fragmentation anywhere (runs that do not measure it).
  static const FragmentationMeter& none();
};

}  // namespace capsim
