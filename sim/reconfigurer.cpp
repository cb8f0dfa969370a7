#include "sim/reconfigurer.hpp"

namespace capsim {

namespace {
class NeverReconfigure final : public MigReconfigurer {
 public:
  std::vector<Relayout> plan(const Cluster&, const std::vector<PodId>&) override { return {}; }
  SimDuration duration() const override { return 0; }
  SimDuration interval() const override { return kEndOfTime; }
};
}  // namespace

MigReconfigurer& MigReconfigurer::never() {
  static NeverReconfigure never;
  return never;
}

}  // namespace capsim
