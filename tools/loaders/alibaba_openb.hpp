// The Alibaba GPU cluster trace v2023 ("openb", the FGD study's data): node lists
// (`sn,cpu_milli,memory_mib,gpu,model`) and pod lists
// (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time`, or only the first five columns as in the multigpu files).
// Rows are read and checked here once, then either added to a World (scenarios use the CSVs
// directly) or written as capsim formats (`capsim import alibaba-openb`). Every error names the
// file, the row's line and the column. The mapping is documented in docs/trace-format.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

struct OpenbNode {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::int32_t gpus = 0;
  std::string model;  // empty on CPU-only nodes
  int line = 0;
};

struct OpenbPod {
  std::string name;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::int32_t num_gpu = 0;
  std::int32_t gpu_milli = 0;            // per GPU; 1000 for whole GPUs
  std::vector<std::string> gpu_spec;     // allowed models as listed (a repeated name is kept)
  std::string qos;                       // empty in the five-column files
  std::string phase;                     // Running, Failed, Pending, Succeeded; may be empty
  std::optional<std::int64_t> creation;  // seconds on the trace's shifted clock
  std::optional<std::int64_t> deletion;
  std::optional<std::int64_t> scheduled;  // empty for Pending pods
  int line = 0;

  bool is_share() const { return num_gpu == 1 && gpu_milli < 1000; }
  std::int64_t total_gpu_milli() const { return std::int64_t{num_gpu} * gpu_milli; }
};

// Whether a CSV header is an openb node list or pod list (by its columns).
bool is_openb_node_list(const CsvFile& f);
bool is_openb_pod_list(const CsvFile& f);

// Reads and checks every row; errors (InputError) name file, line and column. The models are
// checked against the catalog (`b` may be null to skip that check).
std::vector<OpenbNode> read_openb_nodes(const CsvFile& f, const WorldBuilder* b);
std::vector<OpenbPod> read_openb_pods(const CsvFile& f, const WorldBuilder* b);

struct OpenbNodeOptions {
  std::int64_t pods = 110;  // allocatable pod slots (the FGD study's node YAML says 1001)
};

// Adds the nodes of a node list. Each node's pool is its GPU model (`cpu` for CPU-only nodes).
std::size_t load_openb_nodes(FileSource& files, const std::string& path, WorldBuilder& b,
                             const OpenbNodeOptions& opt);

struct OpenbPodOptions {
  std::string namespace_ = "default";
};

// Adds the pods of a pod list, as docs/trace-format.md maps them: cpu and memory requests, whole
// GPUs (nvidia.com/gpu) or a share of one GPU (gpu_milli), allowed models, queue = qos; submit =
// creation time shifted so the file's first pod arrives at 0, duration = deletion − scheduled
// (deletion − creation for pods never scheduled), Failed pods fail. Rows without time columns
// arrive at 0 and never finish (a fill experiment gives them their arrivals).
std::size_t load_openb_pods(FileSource& files, const std::string& path, WorldBuilder& b,
                            const OpenbPodOptions& opt);

}  // namespace capsim
