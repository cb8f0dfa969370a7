// `capsim import kubernetes`: turns a cluster's own dump (`kubectl get nodes,pods,... -A -o yaml`
// or `-o json`, a `kind: List` with status, in one or more files; or kube-scheduler-simulator's
// export JSON) into a scenario that replays what happened: the nodes as they were (GPU model, MIG
// and sharing from GPU Feature Discovery's labels), pods arriving at their creationTimestamp,
// finished pods running for the time their status shows, running pods bound on their node, pending
// pods pending. The result is text (the scenario and the manifests it names) and a report of what
// was not carried over, by kind and field; nothing is written here. Input errors are InputError
// with the dump's file, line and field path. A pure function of its inputs: the same dump gives the
// same bytes, whether it was read as YAML or as JSON.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/loaders/file_source.hpp"

namespace capsim {

struct DumpImportOptions {
  // Where pods that ran (finished ones) are placed in the replay.
  enum class Placement {
    kPrefer,  // by the scheduler, with a preferred node affinity for the node they ran on
    kFree,    // by the scheduler alone
    kBind,    // on the node they ran on (spec.nodeName), arriving when they were bound there
  };
  Placement placement = Placement::kPrefer;
  // Pods running at the dump: bound on their node (spec.nodeName, the default) or pinned there
  // by a required node affinity, which a what-if that removes the node turns into a pending pod
  // instead of a load error.
  enum class Running { kBind, kPin };
  Running running = Running::kBind;
  // The moment of the dump (Unix seconds); default: the latest timestamp in it.
  std::optional<std::int64_t> dump_time;
  std::string name = "from-cluster";  // the scenario's name
};

// The files an import writes in its output directory: the scenario, and the pods it names.
inline constexpr std::array<std::string_view, 2> kDumpOutputNames{"scenario.yaml", "pods.yaml"};

struct DumpOutputFile {
  std::string name;  // one of kDumpOutputNames, relative to the output directory
  std::string text;
};

struct DumpImport {
  std::vector<DumpOutputFile> files;  // scenario.yaml first
  std::vector<std::string> report;    // one line each: what was read, what was not carried over
  std::size_t nodes = 0, pods = 0;
};

DumpImport import_kubernetes_dump(FileSource& files, const std::vector<std::string>& paths,
                                  const DumpImportOptions& options);

// An RFC 3339 time as the API server writes it ("2026-11-30T08:00:00Z", optionally with a
// fraction and a numeric offset) in Unix seconds, the fraction dropped; nullopt when malformed.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

}  // namespace capsim
