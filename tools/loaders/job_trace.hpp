// Job-level traces: one row per job (submit time, duration, GPUs, nodes, user, virtual cluster,
// status), as GPU clusters log them. Three readers share one row type: capsim's own job CSV
// (docs/queues.md), and the public Helios (SenseTime, cluster_log.csv) and Philly (Microsoft,
// cluster_job_log JSON) job logs. add_job_trace turns rows into pods: one per node, a multi-node
// job becoming a gang placed all-or-nothing, each pod sent to the LocalQueue its user or virtual
// cluster maps to. Errors name the file, line and column (or JSON field).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/time.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

struct JobTraceRow {
  std::string job;
  std::string user;
  std::string vc;  // virtual cluster / team
  SimDuration submit = 0;
  SimDuration duration = 0;  // run time on a reference GPU
  std::int64_t gpus = 0;     // total over the nodes
  std::int32_t nodes = 1;
  std::vector<std::int64_t> gpus_per_node;  // explicit split (Philly); empty: even split
  std::int64_t cpu_milli = 0;               // total; 0: cpu_per_gpu applies
  std::int64_t memory = 0;                  // total bytes; 0: memory_per_gpu applies
  bool failed = false;                      // failed, killed or cancelled in the trace
  std::string queue;                        // explicit LocalQueue (capsim CSV only)
  std::vector<std::string> gpu_models;
  std::string priority_class;           // PriorityClass of the pods
  std::string workload_priority_class;  // Kueue WorkloadPriorityClass
  double gpu_util = -1;                 // < 0: unknown
  std::int64_t gpu_memory = 0;
  InputLocation where;
};

struct JobTraceOptions {
  // arrival = submit x time_scale + time_offset; duration x duration_scale.
  double time_scale = 1.0;
  SimDuration time_offset = 0;
  double duration_scale = 1.0;
  // LocalQueue of a job: its `queue` cell, else queue_map[vc], else queue_map[user], else
  // default_queue, else the vc, else the user, else "default".
  std::map<std::string, std::string> queue_map;
  std::string default_queue;
  std::string namespace_ = "default";
  std::int64_t cpu_per_gpu_milli = 0;  // requests of jobs without cpu/memory totals
  std::int64_t memory_per_gpu = 0;
  std::vector<std::string> gpu_models;  // allowed models of jobs that name none
  std::size_t max_jobs = 0;             // 0: all
};

// The columns of capsim's job CSV; `job`, `submit` and `duration` are required.
const std::vector<std::string>& job_trace_columns();

struct JobTraceRead {
  std::vector<JobTraceRow> rows;
  std::map<std::string, std::size_t> skipped;  // reason -> jobs left out
};
// The readers, one per format (rows of loader_registry().traces, tools/loaders/input_kinds.hpp);
// `name` is the file name used in messages.
JobTraceRead read_capsim_jobs_text(const std::string& text, const std::string& name);
JobTraceRead read_helios_text(const std::string& text, const std::string& name);
JobTraceRead read_philly_text(const std::string& text, const std::string& name);
// Reads a file of `format`, a job-log format of loader_registry(). Public traces are shifted so the
// first submission is at 0; jobs the trace cannot say enough about (no attempt with both times,
// still running) are skipped and counted.
JobTraceRead read_job_trace(FileSource& files, const std::string& format, const std::string& path);
JobTraceRead read_job_trace_text(const std::string& format, const std::string& text,
                                 const std::string& name);

// Adds the rows' pods (and gangs) to the world; returns the number of pods added.
std::size_t add_job_trace(const std::vector<JobTraceRow>& rows, WorldBuilder& b,
                          const JobTraceOptions& opt);

// Writes rows as capsim's job CSV (what `capsim import helios|philly` produces).
void write_job_trace_csv(std::ostream& out, const std::vector<JobTraceRow>& rows);

// A scenario's `workload.traces[]` entry of a job format: reads the options from `entry` (time
// scale and offset, queue, queue_map, namespace, cpu_per_gpu, memory_per_gpu, gpu_model,
// max_jobs), loads `path` and adds it. Notes about skipped jobs go to `warnings`.
void load_job_trace_entry(FileSource& files, const std::string& format, const std::string& path,
                          MapReader& entry, WorldBuilder& b, std::vector<std::string>* warnings);

}  // namespace capsim
