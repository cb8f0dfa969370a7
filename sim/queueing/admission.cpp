#include "sim/queueing/admission.hpp"

namespace capsim {

namespace {
class NoAdmission final : public AdmissionController {
 public:
  void attach(AdmissionHost&) override {}
  bool on_pod_pending(PodId) override { return false; }
  void on_pod_started(PodId) override {}
  void on_pod_stopped(PodId) override {}
  void run_cycles() override {}
  void on_timer() override {}
  bool busy() const override { return false; }
  std::size_t held_pods() const override { return 0; }
  void sample(SimTime, Recorder&) override {}
  void add_summary(Summary&, SimTime) const override {}
  void check_invariants() const override {}
};
}  // namespace

AdmissionController& AdmissionController::none() {
  static NoAdmission none;
  return none;
}

}  // namespace capsim
