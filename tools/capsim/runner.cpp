#include "tools/capsim/runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "models/device_model.hpp"
#include "models/fill_experiment.hpp"
#include "models/fragmentation.hpp"
#include "models/mig_reconfigure.hpp"
#include "models/plugin_registry.hpp"
#include "sim/framework/cycle_recorder.hpp"
#include "sim/queueing/kueue_admission.hpp"
#include "tools/capsim/cli.hpp"

namespace capsim {

namespace {

// Builds the profile and the run's models, then hands the Simulation to `body`.
template <typename Body>
void wire(Scenario& s, const RunRequest& req, Recorder& recorder, RunOutcome& out, bool observe,
          Body&& body) {
  out.warnings = s.warnings;
  const std::string profile = req.profile.empty() ? s.default_profile : req.profile;

  fw::ReasonTable reasons;
  PluginContext ctx{*s.world, reasons, s.seed};
  std::optional<BuiltProfile> built = s.profiles.instantiate(profile, ctx);
  if (!built) {
    throw cli::UsageError(fmt::format("unknown profile '{}' (available: {})", profile,
                                      fmt::join(s.profiles.names(), ", ")));
  }
  for (auto& w : built->warnings)
    out.warnings.push_back(w);
  built->config.bulk_retries = req.bulk_retries;
  fw::Framework framework(std::move(built->config));

  FragmentationModel frag(*s.world);
  RunConfig config = s.sim;
  config.paranoid = config.paranoid || req.paranoid;
  const SharingDeviceModel device_model(s.device_params);
  RunModels models{device_model};
  models.fragmentation = &frag;
  PendingDemandReconfigurer reconfigurer(s.mig_reconfiguration_time,
                                         s.mig_reconfiguration_interval);
  if (s.mig_reconfiguration) models.reconfigurer = &reconfigurer;
  // Kueue admission in front of the scheduler when the scenario has ClusterQueues.
  const std::unique_ptr<AdmissionController> admission = queueing::make_admission(*s.world);
  if (admission) models.admission = admission.get();
  // A fill experiment records its curve after every arrival (models/fill_experiment.hpp).
  std::optional<FillExperiment> fill;
  if (s.fill) models.experiment = &fill.emplace(*s.world, frag);

  out.info.scenario = s.name;
  out.info.scenario_path = s.path;
  out.info.scenario_sha256 = s.sha256;
  out.info.seed = s.seed;
  out.info.profile = profile;
  out.info.capsim_version = CAPSIM_VERSION;
  out.info.overrides = s.overrides_text;

  // Pending reasons and --explain: a CycleRecorder told of the scheduler's cycles. Without it
  // (inspection, neither asked for, or a recorder that keeps neither: --record below full) a
  // cycle pays one branch.
  std::optional<fw::CycleRecorder> cycles;
  const bool keeps_cycles = recorder.level() == RecordLevel::kFull;
  if (observe && keeps_cycles && (req.pending_reasons || !req.explain.empty()))
    cycles.emplace(recorder, framework, reasons, req.explain);
  Simulation sim(*s.world, framework, reasons, recorder, config, models,
                 RunObservers{req.progress, req.should_stop, cycles ? &*cycles : nullptr});
  body(sim, framework, reasons);
  if (cycles) out.explained_cycles = cycles->explained_cycles();
}

}  // namespace

RunOutcome run_scenario(Scenario& s, const RunRequest& req, Recorder& recorder) {
  const auto t0 = std::chrono::steady_clock::now();
  RunOutcome out;
  wire(s, req, recorder, out, true,
       [&](Simulation& sim, const fw::Framework&, const fw::ReasonTable&) {
         out.result = sim.run(out.info);
       });
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.info.wall_seconds = out.wall_seconds;
  out.info.status = "complete";
  recorder.end_run(out.info, out.result.pods, out.result.summary);
  return out;
}

std::vector<std::string> inspect_scenario_before(Scenario& s, const RunRequest& req, SimTime t,
                                                 const Inspector& inspect) {
  NullRecorder recorder;
  RunOutcome out;
  wire(s, req, recorder, out, false,
       [&](Simulation& sim, const fw::Framework& framework, const fw::ReasonTable& reasons) {
         sim.run_before(t, out.info);
         inspect(sim, framework, reasons);
       });
  return out.warnings;
}

}  // namespace capsim
