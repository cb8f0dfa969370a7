// The CycleObserver a recorded run uses: every unschedulable cycle's reason counts become
// `pending_reason` rows, and every cycle of a pod whose name matches one of the --explain
// patterns becomes an ExplainRecord (its outcome, the exhaustive evaluation of the pod on the
// state the cycle saw, and PostFilter's candidates). Both go to the run's Recorder. The patterns
// are shell-style globs ('*' any run of characters, '?' one) matched against the pod's name and
// against namespace/name. Nothing here changes the run, with one exception documented in
// docs/cli.md: a plugin that draws random numbers in PreScore (RandomScore) draws again for the
// evaluation.
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

  std::size_t explained_cycles() const { return explained_; }

 private:
  Recorder* recorder_;
  const Framework* fw_;
  const ReasonTable* reasons_;
  std::vector<std::string> patterns_;
  std::size_t explained_ = 0;
  ExplainRecord record_;  // reused
};

}  // namespace capsim::fw
