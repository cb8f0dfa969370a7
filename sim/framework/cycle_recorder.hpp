// The CycleObserver a recorded run uses: every unschedulable cycle's reason counts become
// `pending_reason` rows, and every cycle of a pod whose name matches one of the --explain
// patterns becomes an ExplainRecord (its outcome, the exhaustive evaluation of the pod on the
// state the cycle saw, and PostFilter's candidates). Both go to the run's Recorder. The patterns
// are shell-style globs ('*' any run of characters, '?' one) matched against the pod's name and
// against namespace/name. Nothing here changes the run (the Scheduler rewinds the plugins'
// random streams around an explained cycle's evaluation).
// A pod retried while nothing it depends on changed fails again with the same counts: its
// consecutive failed cycles with identical counts are held open and written as one record per
// reason (PendingReasonRecord::attempts), when a cycle differs or at finish().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/framework/scheduler.hpp"
#include "sim/recorder.hpp"

namespace capsim::fw {

// Shell-style glob: '*' matches any run of characters (also none), '?' one character.
bool glob_match(std::string_view pattern, std::string_view text);

class CycleRecorder final : public CycleObserver {
 public:
  CycleRecorder(Recorder& recorder, const Framework& framework, const ReasonTable& reasons,
                std::vector<std::string> explain_patterns);

  bool explains_any() const override { return !patterns_.empty(); }
  bool explains(const PodSpec& pod) const override;
  void on_cycle(const CycleReport& report) override;
  void finish() override;

  std::size_t explained_cycles() const { return explained_; }

 private:
  Recorder* recorder_;
  const Framework* fw_;
  const ReasonTable* reasons_;
  std::vector<std::string> patterns_;
  std::size_t explained_ = 0;
  ExplainRecord record_;  // reused
  // Per pod: its run of failed cycles with identical counts not yet written (attempts == 0:
  // none).
  struct OpenRun {
    SimTime first = 0, last = 0;
    std::int32_t attempt = 0, attempts = 0;
    std::vector<ReasonCount> reasons;
  };
  std::vector<OpenRun> open_;
  void write(PodId pod, OpenRun& run);
};

}  // namespace capsim::fw
