// One simulation run of a loaded scenario with a chosen profile, recorded through a Recorder.
// The CLI's `run`, sweeps and plans call this; it owns the wiring of profile, plugins,
// fragmentation meter and Simulation so nothing else repeats it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/recorder.hpp"
#include "sim/simulation.hpp"
#include "tools/loaders/scenario_loader.hpp"

namespace capsim {

struct RunRequest {
  std::string profile;  // empty: the scenario's default
  bool paranoid = false;
  std::function<void(double)> progress;
  std::function<bool()> should_stop;
  // Glob patterns on pod names (or namespace/name): the cycles of matching pods are explained
  // (capsim run --explain; the explain_* tables). Empty: none.
  std::vector<std::string> explain;
  // Record each unschedulable cycle's reason counts (the pending_reason table); run_scenario
  // only. Neither these nor `explain` are produced for a recorder below RecordLevel::kFull.
  bool pending_reasons = true;
  // Bulk retries of a backlog's alike pods (ProfileConfig::bulk_retries); off only in the test
  // that proves they change no result.
  bool bulk_retries = true;
};

struct RunOutcome {
  RunInfo info;
  RunResult result;
  std::vector<std::string> warnings;
  double wall_seconds = 0;
  std::size_t explained_cycles = 0;  // cycles recorded for --explain
};

// Throws cli::UsageError for a profile the scenario's ProfileSet does not hold (exit 2, from a
// sweep file too); InvariantError on a bug.
RunOutcome run_scenario(Scenario& scenario, const RunRequest& request, Recorder& recorder);

// The same run, wired the same way, stopped before virtual time `t` (Simulation::run_before);
// `inspect` then reads the Simulation, its profile and its reasons. Nothing is recorded.
// Returns the run's warnings. Throws as run_scenario does.
using Inspector =
    std::function<void(const Simulation&, const fw::Framework&, const fw::ReasonTable&)>;
std::vector<std::string> inspect_scenario_before(Scenario& scenario, const RunRequest& request,
                                                 SimTime t, const Inspector& inspect);

}  // namespace capsim
