// `capsim import FORMAT INPUT... -o OUT`: converts a public trace or job log into capsim's formats.
//   alibaba-openb  the Alibaba GPU trace v2023: a pod list becomes a capsim trace CSV
//                  (docs/trace-format.md); with a node list too, OUT.yaml is a scenario whose
//                  cluster holds the nodes (identical nodes grouped into pools) and whose workload
//                  is the converted trace, written beside it as OUT.csv.
//   helios, philly, capsim-jobs
//                  a job log (Helios cluster_log.csv, Philly cluster_job_log) becomes capsim's
//                  job-level trace (docs/queues.md), which scenarios replay with
//                  `format: capsim-jobs`. Jobs the log cannot describe (still running, no
//                  complete attempt) are left out and counted on stderr.
//   kubernetes     a cluster's own dump (kubectl get -A -o yaml|json, kube-scheduler-simulator's
//                  export) becomes a directory holding a scenario that replays it
//                  (tools/loaders/k8s_dump.hpp, docs/import-kubernetes.md).
// Files are written to a temporary name and renamed, so a failed import leaves nothing behind.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "models/gpu_catalog.hpp"
#include "reports/output_target.hpp"
#include "reports/sqlite_recorder.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/loaders/alibaba_openb.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/job_trace.hpp"
#include "tools/loaders/k8s_dump.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace capsim::cli {

namespace {

// The formats `importer` converts, one "  NAME  SUMMARY" line each, and their names.
std::string format_list(TraceImporter importer) {
  std::string out;
  for (const TraceFormat& f : loader_registry().traces) {
    if (f.import == importer) out += fmt::format("  {:<15} {}\n", f.name, f.summary);
  }
  return out;
}

std::string format_names(TraceImporter importer) {
  std::vector<std::string_view> names;
  for (const TraceFormat& f : loader_registry().traces) {
    if (f.import == importer) names.push_back(f.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

void write_atomically(const fs::path& path, const std::string& text) {
  if (is_in_place_output(path)) {  // /dev/null, /dev/stdout, a FIFO: written directly
    write_in_place(path, text);
    return;
  }
  const fs::path tmp = path.string() + ".tmp-import";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ReportWriteError(path, "cannot create the file (is the directory writable?)");
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw ReportWriteError(path, "cannot write the file");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ReportWriteError(path, "cannot move the file into place: " + ec.message());
  }
}

// The capsim trace for an openb pod list (the mapping of docs/trace-format.md).
std::string openb_trace_csv(const std::vector<OpenbPod>& pods, const std::string& source,
                            std::optional<SimDuration> default_duration) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (const OpenbPod& p : pods) {
    if (p.creation) first = std::min(first, *p.creation);
  }
  std::ostringstream out;
  out << fmt::format("# Converted by capsim import alibaba-openb from {}\n", source);
  out << "pod,submit,duration,cpu,memory,gpu,gpu_milli,gpu_model,queue,status\n";
  for (const OpenbPod& p : pods) {
    std::string submit = "0";
    std::string duration;
    if (p.creation) {
      submit = std::to_string(*p.creation - first);
      const std::int64_t from = p.scheduled ? *p.scheduled : *p.creation;
      duration = std::to_string(*p.deletion - from);
    } else {
      duration = format_duration(*default_duration);
    }
    std::string gpu, milli;
    if (p.is_share()) {
      milli = std::to_string(p.gpu_milli);
    } else if (p.num_gpu > 0) {
      gpu = std::to_string(p.num_gpu);
    }
    std::string models;
    for (std::size_t i = 0; i < p.gpu_spec.size(); ++i)
      models += (i ? "|" : "") + p.gpu_spec[i];
    out << fmt::format("{},{},{},{}m,{}Mi,{},{},{},{},{}\n", csv_field(p.name), submit, duration,
                       p.cpu_milli, p.memory_mib, gpu, milli, csv_field(models), csv_field(p.qos),
                       p.phase == "Failed" ? "failed" : "");
  }
  return out.str();
}

std::string memory_quantity(std::int64_t mib) {
  return mib % 1024 == 0 ? fmt::format("{}Gi", mib / 1024) : fmt::format("{}Mi", mib);
}

// A scenario whose cluster is the node list, identical nodes grouped into pools.
std::string openb_scenario_yaml(const std::vector<OpenbNode>& nodes, const std::string& source,
                                const std::string& name, const std::string& trace_file,
                                std::int64_t pods_per_node) {
  struct Pool {
    OpenbNode proto;
    std::int64_t count = 0;
  };
  std::vector<Pool> pools;
  std::map<std::tuple<std::string, std::int32_t, std::int64_t, std::int64_t>, std::size_t> index;
  for (const OpenbNode& n : nodes) {
    auto key = std::make_tuple(n.model, n.gpus, n.cpu_milli, n.memory_mib);
    auto [it, inserted] = index.try_emplace(key, pools.size());
    if (inserted) pools.push_back(Pool{n, 0});
    ++pools[it->second].count;
  }
  std::ostringstream out;
  out << fmt::format("# Converted by capsim import alibaba-openb from {}\n", source);
  out << fmt::format("name: {}\n", name);
  out << "cluster:\n  pools:\n";
  for (const Pool& p : pools) {
    const OpenbNode& n = p.proto;
    std::string pool_name = n.gpus > 0 ? fmt::format("{}-{}gpu", n.model, n.gpus) : "cpu";
    pool_name += fmt::format("-{}cpu-{}", n.cpu_milli / 1000, memory_quantity(n.memory_mib));
    for (char& c : pool_name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out << fmt::format("    - name: {}\n      count: {}\n", pool_name, p.count);
    if (n.gpus > 0) out << fmt::format("      gpu: {{model: {}, count: {}}}\n", n.model, n.gpus);
    out << fmt::format("      cpu: {}m\n      memory: {}Mi\n      pods: {}\n", n.cpu_milli,
                       n.memory_mib, pods_per_node);
  }
  if (!trace_file.empty()) {
    out << "workload:\n  traces:\n";
    out << fmt::format("    - path: '{}'\n", trace_file);
  }
  return out.str();
}

int import_alibaba_openb(const std::vector<std::string>& args) {
  return guarded("import", [&]() -> int {
    po::options_description opts(
        "Usage: capsim import FORMAT INPUT... -o OUT\n\nFormats:\n" +
        format_list(TraceImporter::kOpenbLists) +
        "  A pod list alone -> OUT.csv, a capsim trace; with a node list -> OUT.yaml, a\n"
        "  scenario (nodes as pools) plus OUT.csv beside it.\n\n"
        "Options");
    std::string format, out;
    std::vector<std::string> inputs;
    std::int64_t pods_per_node = 110;
    std::string duration_text;
    opts.add_options()("help,h", "show this help")("output,o", po::value(&out),
                                                   "output file (.csv trace or .yaml scenario)")(
        "pods-per-node", po::value(&pods_per_node),
        "pod slots per node in a scenario (default 110; the FGD study used 1001)")(
        "duration", po::value(&duration_text),
        "duration of pods in files without time columns (the multigpu lists), e.g. 1h");
    const po::variables_map vm = parse_command_line(
        opts, args,
        {{"format", po::value(&format), 1}, {"input", po::value(&inputs)->composing(), -1}});
    if (vm.count("help")) {
      std::cout << opts;
      return kOk;
    }
    const std::string openb_formats = format_names(TraceImporter::kOpenbLists);
    if (format.empty()) {
      throw UsageError(fmt::format("a format is required (supported: {})", openb_formats));
    }
    const TraceFormat* row = loader_registry().trace(format);
    if (row == nullptr || row->import != TraceImporter::kOpenbLists) {
      throw UsageError(
          fmt::format("unknown import format '{}' (supported: {})", format, openb_formats));
    }
    if (inputs.empty()) throw UsageError("at least one input file is required");
    if (out.empty()) throw UsageError("an output file is required (-o OUT.csv or -o OUT.yaml)");
    if (pods_per_node < 1) throw UsageError("--pods-per-node must be at least 1");
    {
      std::vector<InputFile> input_files;
      for (const std::string& f : inputs)
        input_files.push_back({"input", f});
      refuse_output_over_inputs("output", out, input_files);
    }
    std::optional<SimDuration> default_duration;
    if (!duration_text.empty()) {
      auto d = parse_duration(duration_text);
      if (!d) throw UsageError(fmt::format("--duration: {}", d.error()));
      default_duration = *d;
    }

    World world;
    WorldBuilder b(world, GpuCatalog::builtin());
    std::optional<std::vector<OpenbNode>> nodes;
    std::optional<std::vector<OpenbPod>> pods;
    std::string node_source, pod_source;
    RealFiles files;
    for (const std::string& in : inputs) {
      const CsvFile f = files.csv(in);
      if (is_openb_node_list(f)) {
        if (nodes) throw UsageError("give at most one node list");
        nodes = read_openb_nodes(f, &b);
        node_source = fs::path(in).filename().string();
      } else if (is_openb_pod_list(f)) {
        if (pods) throw UsageError("give at most one pod list");
        pods = read_openb_pods(f, &b);
        pod_source = fs::path(in).filename().string();
        for (const OpenbPod& p : *pods) {
          if (!p.creation && !default_duration) {
            throw InputError(InputErrorKind::kInvalid, InputLocation{in, p.line, 0, ""},
                             "the pod list has no time columns, so a capsim trace needs "
                             "--duration for its pods");
          }
        }
      } else {
        f.fail_header(
            "neither an openb node list (sn, cpu_milli, memory_mib, gpu, model) nor a pod "
            "list (name, cpu_milli, memory_mib, num_gpu, gpu_milli, ...)");
      }
    }

    const fs::path out_path(out);
    const std::string ext = out_path.extension().string();
    if (ext == ".csv") {
      if (nodes) throw UsageError("a node list converts into a scenario: use -o OUT.yaml");
      if (!pods) throw UsageError("no pod list to convert");
      write_atomically(out_path, openb_trace_csv(*pods, pod_source, default_duration));
      std::cerr << fmt::format("capsim import: {} pods -> {}\n", pods->size(), out);
      return kOk;
    }
    if (ext != ".yaml" && ext != ".yml") {
      throw UsageError("the output must be a .csv trace or a .yaml scenario");
    }
    if (!nodes) throw UsageError("a scenario needs a node list among the inputs");
    std::string trace_file;
    if (pods) {
      fs::path trace_path = out_path;
      trace_path.replace_extension(".csv");
      trace_file = trace_path.filename().string();
      write_atomically(trace_path, openb_trace_csv(*pods, pod_source, default_duration));
    }
    const std::string sources = pods ? node_source + " and " + pod_source : node_source;
    write_atomically(out_path, openb_scenario_yaml(*nodes, sources, out_path.stem().string(),
                                                   trace_file, pods_per_node));
    std::cerr << fmt::format("capsim import: {} nodes{} -> {}\n", nodes->size(),
                             pods ? fmt::format(" and {} pods", pods->size()) : "", out);
    return kOk;
  });
}

int import_job_log(const std::vector<std::string>& args) {
  return guarded("import", [&]() -> int {
    po::options_description opts("Usage: capsim import FORMAT INPUT -o OUT.csv\n\nFormats:\n" +
                                 format_list(TraceImporter::kJobLog) + "\nOptions");
    std::string format, input, out;
    std::size_t max_jobs = 0;
    opts.add_options()("help,h", "show this help")("output,o", po::value(&out),
                                                   "the capsim job trace to write (CSV)")(
        "max-jobs", po::value(&max_jobs), "keep only the first N jobs");
    const po::variables_map vm = parse_command_line(
        opts, args, {{"format", po::value(&format), 1}, {"input", po::value(&input), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nThe result has one row per job: submit (seconds from the first submission), "
                   "duration,\ngpus, nodes, user, vc and status. Scenarios map users or virtual "
                   "clusters to\nLocalQueues with `queue_map` (docs/queues.md).\n";
      return kOk;
    }
    if (format.empty() || input.empty()) throw UsageError("a format and an input file are needed");
    const TraceFormat* row = loader_registry().trace(format);
    if (row == nullptr || row->import != TraceImporter::kJobLog) {
      throw UsageError(fmt::format("unknown format '{}' (supported: {})", format,
                                   format_names(TraceImporter::kJobLog)));
    }
    if (out.empty()) throw UsageError("-o OUT.csv is required");
    refuse_output_over_inputs("output", out, {{"input", input}});
    RealFiles files;
    JobTraceRead read = read_job_trace(files, format, input);
    if (max_jobs > 0 && read.rows.size() > max_jobs) read.rows.resize(max_jobs);

    namespace fs = std::filesystem;
    const fs::path target(out);
    const fs::path temp = target.string() + ".tmp";
    {
      std::ofstream f(temp, std::ios::binary | std::ios::trunc);
      if (!f) {
        std::cerr << fmt::format("capsim import: error: cannot write {}\n", temp.string());
        return kCannotWrite;
      }
      write_job_trace_csv(f, read.rows);
      f.flush();
      if (!f) {
        f.close();
        std::remove(temp.c_str());
        std::cerr << fmt::format("capsim import: error: cannot write {}\n", temp.string());
        return kCannotWrite;
      }
    }
    std::error_code ec;
    fs::rename(temp, target, ec);
    if (ec) {
      std::remove(temp.c_str());
      std::cerr << fmt::format("capsim import: error: cannot write {}: {}\n", out, ec.message());
      return kCannotWrite;
    }
    std::int64_t gpus = 0, multi = 0;
    for (const JobTraceRow& r : read.rows) {
      gpus += r.gpus;
      multi += r.nodes > 1 ? 1 : 0;
    }
    std::cerr << fmt::format("capsim import: {} job(s), {} multi-node, {} GPUs requested -> {}\n",
                             read.rows.size(), multi, gpus, out);
    for (const auto& [why, n] : read.skipped)
      std::cerr << fmt::format("capsim import: left out {} job(s): {}\n", n, why);
    return kOk;
  });
}

int import_kubernetes(const std::vector<std::string>& args) {
  return guarded("import", [&]() -> int {
    po::options_description opts(
        "Usage: capsim import kubernetes DUMP... -o DIR\n\n"
        "Reads `kubectl get nodes,pods,... -A -o yaml` (or -o json) dumps, several files\n"
        "allowed, or kube-scheduler-simulator's export, and writes DIR/scenario.yaml (with\n"
        "DIR/pods.yaml) that replays what the dump shows (docs/import-kubernetes.md).\n\n"
        "Options");
    std::string format, out, placement = "prefer", running = "bind", at, name;
    std::vector<std::string> inputs;
    opts.add_options()("help,h", "show this help")("output,o", po::value(&out),
                                                   "the directory to write (created if needed)")(
        "placement", po::value(&placement),
        "finished pods: prefer (the scheduler places them, preferring the node they ran on; "
        "default), free (the scheduler alone) or bind (on their node, from the time they were "
        "bound)")("running", po::value(&running),
                  "pods running at the dump: bind (spec.nodeName, default) or pin (a required "
                  "node affinity, so a what-if without their node leaves them pending)")(
        "at", po::value(&at),
        "the time of the dump (RFC 3339), where the replay ends; default: its latest timestamp")(
        "name", po::value(&name), "the scenario's name (default: the directory's name)");
    const po::variables_map vm = parse_command_line(
        opts, args,
        {{"format", po::value(&format), 1}, {"input", po::value(&inputs)->composing(), -1}});
    if (vm.count("help")) {
      std::cout << opts;
      return kOk;
    }
    if (inputs.empty()) throw UsageError("at least one dump file is required");
    if (out.empty()) throw UsageError("an output directory is required (-o DIR)");
    DumpImportOptions o;
    if (placement == "prefer") {
      o.placement = DumpImportOptions::Placement::kPrefer;
    } else if (placement == "free") {
      o.placement = DumpImportOptions::Placement::kFree;
    } else if (placement == "bind") {
      o.placement = DumpImportOptions::Placement::kBind;
    } else {
      throw UsageError(fmt::format("--placement is prefer, free or bind, not '{}'", placement));
    }
    if (running == "bind") {
      o.running = DumpImportOptions::Running::kBind;
    } else if (running == "pin") {
      o.running = DumpImportOptions::Running::kPin;
    } else {
      throw UsageError(fmt::format("--running is bind or pin, not '{}'", running));
    }
    if (!at.empty()) {
      o.dump_time = parse_rfc3339(at);
      if (!o.dump_time) throw UsageError(fmt::format("--at: '{}' is not an RFC 3339 time", at));
    }
    const fs::path dir(out);
    {
      // DIR/scenario.yaml and DIR/pods.yaml must not be a dump being read (-o . next to it).
      std::vector<InputFile> dumps;
      for (const std::string& f : inputs)
        dumps.push_back({"dump", f});
      for (std::string_view written : kDumpOutputNames)
        refuse_output_over_inputs("output", dir / written, dumps);
    }
    o.name = name.empty() ? fs::absolute(dir).lexically_normal().filename().string() : name;
    if (o.name.empty()) o.name = "from-cluster";
    RealFiles files;
    const DumpImport r = import_kubernetes_dump(files, inputs, o);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ReportWriteError(dir, "cannot create the directory: " + ec.message());
    for (const DumpOutputFile& f : r.files)
      write_atomically(dir / f.name, f.text);
    for (const std::string& line : r.report)
      std::cerr << "capsim import: " << line << "\n";
    std::cerr << fmt::format("capsim import: -> {}\n", (dir / "scenario.yaml").string());
    return kOk;
  });
}

}  // namespace

int cmd_import(const std::vector<std::string>& args) {
  // The format's row in the input kind table picks the converter; each has its own options and
  // help.
  if (!args.empty() && args.front() == "kubernetes") return import_kubernetes(args);
  if (!args.empty()) {
    if (const TraceFormat* f = loader_registry().trace(args.front())) {
      if (f->import == TraceImporter::kOpenbLists) return import_alibaba_openb(args);
      if (f->import == TraceImporter::kJobLog) return import_job_log(args);
    }
  }
  if (args.empty() || args.front() == "-h" || args.front() == "--help") {
    std::cout << "Usage: capsim import FORMAT INPUT... -o OUT\n\n"
                 "Formats (an openb pod list becomes a capsim trace, with a node list a scenario;\n"
                 "a job log becomes capsim's job-level trace):\n"
              << format_list(TraceImporter::kOpenbLists) << format_list(TraceImporter::kJobLog)
              << fmt::format("  {:<15} {}\n", "kubernetes",
                             "a cluster dump (kubectl get -A -o yaml|json) -> DIR/scenario.yaml")
              << "\n`capsim import FORMAT --help` lists a format's options.\n";
    return args.empty() ? kUsage : kOk;
  }
  std::cerr << fmt::format("capsim import: error: unknown format '{}' (supported: {})\n",
                           args.front(), loader_registry().trace_names(true) + ", kubernetes");
  return kUsage;
}

}  // namespace capsim::cli
