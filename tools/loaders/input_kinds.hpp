// The kinds of input capsim reads, one table per family: trace formats (pod-level and job-level),
// experiment kinds and Kubernetes manifest kinds. A row names the kind, says what it is, and holds
// the functions that recognise, load, check and convert it, so a new format is one row here plus
// its loader file: the scenario loader (`workload.traces[].format`, `experiment.kind`),
// `capsim validate` (sniffing a file and checking it alone) and `capsim import` (converters, help
// text and format lists) all go through the table. The registry is a value built on first use
// and never changed afterwards, so loads on several threads (`capsim sweep -j`) share it safely.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/yaml_reader.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/job_trace.hpp"
#include "tools/loaders/k8s_manifests.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

struct Scenario;

// A scenario's `workload.traces[]` entry, `path` already resolved. The format's loader reads
// its options from `entry` and finishes it.
struct TraceRequest {
  FileSource& files;
  const std::string& path;
  MapReader& entry;
  WorldBuilder& builder;
  std::vector<std::string>* warnings;
};

// What `capsim validate` looks at to pick a format: the file's extension and its bytes.
struct SniffInput {
  std::string extension;  // ".csv", ".json"
  std::string_view text;
};

// Which converter `capsim import FORMAT` runs for a format.
enum class TraceImporter {
  kNone,        // not importable
  kOpenbLists,  // node and pod lists -> a capsim trace or a scenario
  kJobLog,      // a job log -> capsim's job trace (read through TraceFormat::read_jobs)
};

struct TraceFormat {
  std::string_view name;     // "capsim", "alibaba-openb", "helios", ...
  std::string_view summary;  // one line, for help texts
  // How specific a match the file is for this format: 0 none; `capsim validate` takes the
  // highest (a CSV that is nothing more specific is a capsim trace).
  int (*sniff)(const SniffInput& in);
  void (*load)(const TraceFormat& self, TraceRequest& request);
  // Reads the file alone, as `capsim validate` does; returns what was found, in one line.
  std::string (*check)(const TraceFormat& self, const std::string& text, const std::string& path);
  // Job logs: the reader. nullptr for pod-level traces.
  JobTraceRead (*read_jobs)(const std::string& text, const std::string& name) = nullptr;
  TraceImporter import = TraceImporter::kNone;
};

// `experiment: {kind: ...}`: the workload is rewritten for a purpose-built run. `apply` reads
// the rest of the mapping (kind already read) and finishes it.
struct ExperimentKind {
  std::string_view name;
  std::string_view summary;
  void (*apply)(MapReader& spec, const YamlNode& at, Scenario& s);
};

struct LoaderRegistry {
  std::vector<TraceFormat> traces;
  std::vector<ExperimentKind> experiments;
  ManifestKinds manifests;  // core, Kueue and DRA kinds

  const TraceFormat* trace(std::string_view name) const;  // nullptr when unknown
  const ExperimentKind* experiment(std::string_view name) const;
  // The names in table order ("capsim, alibaba-openb, ..."), for messages; importable ones only
  // when `importable`.
  std::string trace_names(bool importable = false) const;
  std::string experiment_names() const;
  // The format that matches `in` best, or nullptr when none does.
  const TraceFormat* sniff_trace(const SniffInput& in) const;
};

// Built on first use (thread-safe), constant afterwards.
const LoaderRegistry& loader_registry();

// Defined in scenario_loader.cpp, beside the stage that runs it.
void apply_fill_experiment(MapReader& spec, const YamlNode& at, Scenario& s);

}  // namespace capsim
