#include "tools/loaders/input_kinds.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"
#include "tools/loaders/alibaba_openb.hpp"
#include "tools/loaders/dra_manifests.hpp"
#include "tools/loaders/failure_config.hpp"
#include "tools/loaders/kueue_manifests.hpp"
#include "tools/loaders/trace_csv.hpp"

namespace capsim {

namespace {

// --- sniffing ----------------------------------------------------------------------------------

// The first line that is neither empty nor a '#' comment, as comma-separated names.
std::vector<std::string> header_columns(std::string_view text) {
  std::string_view line;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') break;
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.emplace_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool has_column(const std::vector<std::string>& header, std::string_view name) {
  return std::find(header.begin(), header.end(), name) != header.end();
}

// Scores: the more specific the evidence, the higher (TraceFormat::sniff).
int sniff_capsim(const SniffInput& in) {
  return in.extension == ".csv" ? 1 : 0;
}

int sniff_openb(const SniffInput& in) {
  if (in.extension != ".csv") return 0;
  try {
    const CsvFile f = CsvFile::parse(in.text, "sniff", CsvOptions{'#', true});
    return is_openb_node_list(f) || is_openb_pod_list(f) ? 2 : 0;
  } catch (const InputError&) {
    return 0;  // malformed: the capsim reader reports it, with the file's name
  }
}

int sniff_capsim_jobs(const SniffInput& in) {
  if (in.extension != ".csv") return 0;
  const auto h = header_columns(in.text);
  return has_column(h, "job") && !has_column(h, "pod") ? 4 : 0;
}

int sniff_helios(const SniffInput& in) {
  return in.extension == ".csv" && has_column(header_columns(in.text), "job_id") ? 3 : 0;
}

int sniff_failures(const SniffInput& in) {
  if (in.extension != ".csv") return 0;
  const auto h = header_columns(in.text);
  return has_column(h, "cause") && has_column(h, "repair") ? 5 : 0;
}

int sniff_philly(const SniffInput& in) {
  return in.extension == ".json" ? 3 : 0;
}

// --- loading a scenario's traces[] entry ---------------------------------------------------------

TraceOptions read_pod_trace_options(MapReader& entry) {
  TraceOptions opt;
  opt.time_offset = entry.duration_or("time_offset", 0);
  opt.time_scale = entry.num_or("time_scale", 1.0, 1e-9, 1e9);
  opt.default_queue = entry.str_or("queue", "");
  return opt;
}

void load_capsim(const TraceFormat&, TraceRequest& r) {
  const TraceOptions opt = read_pod_trace_options(r.entry);
  r.entry.finish();
  load_capsim_trace(r.files, r.path, r.builder, opt);
}

void load_openb(const TraceFormat&, TraceRequest& r) {
  // The pod trace options are accepted (and checked) but the openb mapping has no use for them.
  (void)read_pod_trace_options(r.entry);
  r.entry.finish();
  load_openb_pods(r.files, r.path, r.builder, OpenbPodOptions{});
}

void load_jobs(const TraceFormat& self, TraceRequest& r) {
  load_job_trace_entry(r.files, std::string(self.name), r.path, r.entry, r.builder, r.warnings);
  r.entry.finish();
}

// --- checking a file alone (capsim validate) ----------------------------------------------------

std::string check_capsim(const TraceFormat&, const std::string& text, const std::string& path) {
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  const std::size_t n = load_capsim_trace_text(text, path, b, TraceOptions{});
  b.finalize();
  return fmt::format("capsim trace, {} pods", n);
}

std::string check_openb(const TraceFormat&, const std::string& text, const std::string& path) {
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  const CsvFile f = CsvFile::parse(text, path, CsvOptions{'#', true});
  if (is_openb_node_list(f)) {
    return fmt::format("alibaba-openb node list, {} nodes", read_openb_nodes(f, &b).size());
  }
  if (!is_openb_pod_list(f)) {
    f.fail_header(
        "neither an openb node list (sn, ..., model) nor a pod list (name, ..., gpu_milli)");
  }
  return fmt::format("alibaba-openb pod list, {} pods", read_openb_pods(f, &b).size());
}

std::string check_jobs(const TraceFormat& self, const std::string& text, const std::string& path) {
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  const JobTraceRead read = self.read_jobs(text, path);
  const std::size_t pods = add_job_trace(read.rows, b, JobTraceOptions{});
  b.finalize();
  std::size_t skipped = 0;
  for (const auto& [why, n] : read.skipped)
    skipped += n;
  return fmt::format("{} job trace, {} jobs ({} pods, {} gangs), {} left out", self.name,
                     read.rows.size(), pods, w.gangs.size(), skipped);
}

// A failure trace describes the fleet, not the workload: a scenario names it in failures.trace.
void load_failures(const TraceFormat&, TraceRequest& r) {
  r.entry.node().fail(
      "a failure trace is no workload: name it in the scenario's failures.trace "
      "(docs/scenario-format.md, \"Failures and checkpoints\")");
}

std::string check_failures(const TraceFormat&, const std::string& text, const std::string& path) {
  return check_failure_trace(CsvFile::parse(text, path, CsvOptions{'#', true}));
}

// --- the tables ----------------------------------------------------------------------------------

LoaderRegistry build_registry() {
  LoaderRegistry r;
  // Table order is the order formats are listed in messages and help.
  r.traces = {
      {"capsim", "capsim's pod trace CSV (docs/trace-format.md)", sniff_capsim, load_capsim,
       check_capsim, nullptr, TraceImporter::kNone},
      {"alibaba-openb", "Alibaba GPU trace v2023 node and pod lists (openb_*_list_*.csv)",
       sniff_openb, load_openb, check_openb, nullptr, TraceImporter::kOpenbLists},
      {"capsim-jobs", "capsim's job trace CSV (docs/queues.md)", sniff_capsim_jobs, load_jobs,
       check_jobs, read_capsim_jobs_text, TraceImporter::kJobLog},
      {"helios", "SenseTime Helios cluster_log.csv job log", sniff_helios, load_jobs, check_jobs,
       read_helios_text, TraceImporter::kJobLog},
      {"philly", "Microsoft Philly cluster_job_log (JSON) job log", sniff_philly, load_jobs,
       check_jobs, read_philly_text, TraceImporter::kJobLog},
      {"capsim-failures", "capsim's failure trace CSV for failures.trace (docs/trace-format.md)",
       sniff_failures, load_failures, check_failures, nullptr, TraceImporter::kNone},
  };
  r.experiments = {
      {"fill", "place pods one by one until the cluster is full (models/fill_experiment.hpp)",
       apply_fill_experiment},
  };
  r.manifests = core_manifest_kinds();
  for (ManifestKind& k : kueue_manifest_kinds())
    r.manifests.push_back(std::move(k));
  for (ManifestKind& k : dra_manifest_kinds())
    r.manifests.push_back(std::move(k));
  return r;
}

}  // namespace

const TraceFormat* LoaderRegistry::trace(std::string_view name) const {
  for (const TraceFormat& f : traces) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const ExperimentKind* LoaderRegistry::experiment(std::string_view name) const {
  for (const ExperimentKind& e : experiments) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string LoaderRegistry::trace_names(bool importable) const {
  std::vector<std::string_view> names;
  for (const TraceFormat& f : traces) {
    if (!importable || f.import != TraceImporter::kNone) names.push_back(f.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string LoaderRegistry::experiment_names() const {
  std::vector<std::string_view> names;
  for (const ExperimentKind& e : experiments)
    names.push_back(e.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

const TraceFormat* LoaderRegistry::sniff_trace(const SniffInput& in) const {
  const TraceFormat* best = nullptr;
  int best_score = 0;
  for (const TraceFormat& f : traces) {
    const int score = f.sniff(in);
    if (score > best_score) {
      best = &f;
      best_score = score;
    }
  }
  return best;
}

const LoaderRegistry& loader_registry() {
  static const LoaderRegistry registry = build_registry();
  return registry;
}

}  // namespace capsim
