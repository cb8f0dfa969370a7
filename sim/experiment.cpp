#include "sim/experiment.hpp"

namespace capsim {

Experiment& Experiment::replay() {
  static Experiment plain;
  return plain;
}

}  // namespace capsim
