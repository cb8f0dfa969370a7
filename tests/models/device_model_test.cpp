#include "models/device_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace capsim;

TEST_CASE("the speed factor stretches GPU phases by device width and time share") {
  struct Case {
    const char* name;
    double util, capacity, sm_fraction, time_share, want;
  };
  const Case cases[] = {
      // R = 1 / ((1 - u) + u x max(1, s / c) / t)
      {"alone on a whole GPU", 0.7, 1.0, 1.0, 1.0, 1.0},
      {"an idle pod is never slowed", 0.0, 0.1, 1.0, 0.1, 1.0},
      {"kernels filling the GPU on a 1/4 slice: 1 / (0 + 1 x 4)", 1.0, 0.25, 1.0, 1.0, 0.25},
      {"half busy on a 1/4 slice: 1 / (0.5 + 0.5 x 4) = 0.4", 0.5, 0.25, 1.0, 1.0, 0.4},
      {"narrow kernels (s = 0.2) lose nothing on a 0.25 slice", 0.5, 0.25, 0.2, 1.0, 1.0},
      {"s = 0.5 on a 0.25 slice: 1 / (0.5 + 0.5 x 2) = 2/3", 0.5, 0.25, 0.5, 1.0, 2.0 / 3},
      {"two busy time-sliced pods, 10 % switching: t = 0.45", 1.0, 1.0, 1.0, 0.45, 0.45},
      {"time-sliced, half busy, t = 0.5: 1 / (0.5 + 0.5 / 0.5) = 2/3", 0.5, 1.0, 1.0, 0.5, 2.0 / 3},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(SharingDeviceModel::speed_factor(c.util, c.capacity, c.sm_fraction, c.time_share) ==
          doctest::Approx(c.want));
  }
}
