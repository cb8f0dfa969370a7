// `capsim validate FILE...`: loads each file the way `run` would (scenario, Kubernetes manifests,
// KubeSchedulerConfiguration, GPU catalog, capsim trace CSV) and reports every problem with
// file, line and field. Exit 0 when all are valid, 65 if any is invalid, 66 if one is missing.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "models/plugin_registry.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/loaders/dra_manifests.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/kueue_manifests.hpp"
#include "tools/loaders/scenario_loader.hpp"
#include "tools/loaders/world_builder.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

// Returns a one-line description of what was validated; the load's notes (skipped kinds, fields
// accepted but not modelled) are appended to `notes`.
std::string validate_one(const std::string& path, const LoadOptions& lo,
                         std::vector<std::string>& notes) {
  namespace fs = std::filesystem;
  RealFiles files;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw InputError(InputErrorKind::kMissing, InputLocation{path, 0, 0, ""},
                     ec ? "cannot be read: " + ec.message() : "no such file");
  }
  const std::string extension = fs::path(path).extension().string();
  if (extension == ".json" || extension == ".csv") {
    // A trace: the format whose sniff matches best (the input kind table) reads it alone.
    const std::string text = files.read(path);
    if (const TraceFormat* f = loader_registry().sniff_trace(SniffInput{extension, text})) {
      return f->check(*f, text, path);
    }
  }
  auto docs = files.yaml_docs(path);
  if (docs.empty())
    throw InputError(InputErrorKind::kInvalid, InputLocation{path, 0, 0, ""}, "the file is empty");
  const YamlNode& first = docs.front();
  bool has_kind = false, has_models = false, only_models = true;
  if (first.is_map()) {
    for (const auto& [k, v] : first.entries()) {
      has_kind = has_kind || k == "kind";
      has_models = has_models || k == "models";
      only_models = only_models && k == "models";
    }
  }
  if (has_kind) {
    std::string kind;
    for (const auto& [k, v] : first.entries()) {
      if (k == "kind") kind = v.str();
    }
    if (kind == "KubeSchedulerConfiguration") {
      World w;
      fw::ReasonTable reasons;
      PluginContext ctx{w, reasons, 0};
      MapReader m = first.map();
      std::vector<YamlNode> defined;
      if (auto ps = m.opt("profiles")) defined = ps->seq();
      // Compiled as a scenario's `scheduler.config` would be: the same checks as `run`.
      (void)ProfileSet::compile(defined, first, ctx);
      return fmt::format("KubeSchedulerConfiguration, {} profile(s)", defined.size());
    }
    World w;
    WorldBuilder b(w, GpuCatalog::builtin());
    std::vector<std::string>& warnings = notes;
    ManifestOptions mo;
    mo.warnings = &warnings;
    mo.kinds = &loader_registry().manifests;
    // A file alone has no scenario horizon: a CronJob is checked over one day.
    mo.horizon = kDay;
    load_manifest_docs(docs, b, mo);
    b.finalize();
    finalize_dra(b, &warnings);
    if (w.queues.active() || !w.queues.local_queues.empty() || !w.queues.flavors.empty()) {
      return fmt::format(
          "Kubernetes manifests: {} node(s), {} pod(s), {} job(s), {} priority class(es); Kueue: "
          "{} ClusterQueue(s), {} LocalQueue(s), {} ResourceFlavor(s), {} Cohort(s)",
          w.nodes.size(), w.pods.size(), w.jobs.size(), w.priority_classes.size(),
          w.queues.cluster_queues.size(), w.queues.local_queues.size(), w.queues.flavors.size(),
          w.queues.cohorts.size());
    }
    return fmt::format(
        "Kubernetes manifests: {} node(s), {} pod(s), {} job(s), {} priority class(es)",
        w.nodes.size(), w.pods.size(), w.jobs.size(), w.priority_classes.size());
  }
  if (has_models && only_models) {
    GpuCatalog c = GpuCatalog::builtin();
    c.merge_yaml(first);
    return fmt::format("GPU catalog, {} model(s) after merging", c.models().size());
  }
  // Loading compiles every profile, so plugin configuration errors show here as in `run`.
  Scenario s = load_scenario(path, lo, files);
  notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
  std::string out = fmt::format("scenario '{}': {} node(s), {} pod(s), {} job(s), {} profile(s)",
                                s.name, s.world->nodes.size(), s.world->pods.size(),
                                s.world->jobs.size(), s.profiles.names().size());
  if (s.world->queues.active()) {
    out += fmt::format(
        "; Kueue: {} ClusterQueue(s), {} LocalQueue(s), {} ResourceFlavor(s), {} gang(s)",
        s.world->queues.cluster_queues.size(), s.world->queues.local_queues.size(),
        s.world->queues.flavors.size(), s.world->gangs.size());
  }
  const DraWorld& dra = s.world->dra;
  if (!dra.empty()) {
    // DRA: what was read and published, so a missing class or slice shows before a run.
    std::size_t templates = 0, devices = 0, publishing = 0;
    for (const dra::Claim& c : dra.claims)
      templates += c.from_template ? 1 : 0;
    for (const dra::NodeDevices& n : dra.nodes) {
      devices += n.devices.size();
      if (!n.devices.empty()) ++publishing;
    }
    out += fmt::format(
        "; DRA: {} device class(es), {} resource claim(s), {} claim template(s), "
        "{} device(s) published on {} node(s)",
        dra.classes.size(), dra.claims.size() - templates, templates, devices, publishing);
  }
  return out;
}

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  return guarded("validate", [&]() -> int {
    po::options_description opts("Usage: capsim validate FILE... [options]\n\nOptions");
    std::vector<std::string> files, sets;
    std::string data_dir;
    opts.add_options()("help,h", "show this help")("set", po::value(&sets)->composing(),
                                                   "scenario override key.path=value (repeatable)")(
        "data-dir", po::value(&data_dir), "directory that {data_dir} in scenario paths expands to");
    const po::variables_map vm = parse_command_line(opts, args, {{"files", po::value(&files), -1}});
    if (vm.count("help")) {
      std::cout
          << opts
          << "\nFile kinds are recognised by content: scenarios, Kubernetes manifests,\n"
             "KubeSchedulerConfiguration, GPU catalogs (models:), and .csv and .json traces:\n";
      for (const TraceFormat& f : loader_registry().traces)
        std::cout << fmt::format("  {:<15} {}\n", f.name, f.summary);
      return kOk;
    }
    if (files.empty()) throw UsageError("at least one file is required");
    LoadOptions lo;
    lo.overrides = sets;
    if (vm.count("data-dir")) lo.data_dir = data_dir;
    int worst = kOk;
    for (const auto& f : files) {
      const int rc = guarded("validate", [&]() -> int {
        std::vector<std::string> notes;
        std::cout << fmt::format("{}: ok ({})\n", f, validate_one(f, lo, notes));
        for (const auto& n : notes)
          std::cerr << "capsim validate: note: " << n << "\n";
        return kOk;
      });
      if (rc != kOk && (worst == kOk || rc == kDataError)) worst = rc;
    }
    return worst;
  });
}

}  // namespace capsim::cli
