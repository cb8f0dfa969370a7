// The capsim trace format: a CSV file with one row per pod (submit time, duration, requests, GPU
// model constraint, queue, usage, outcome), documented column by column in docs/trace-format.md.
// The importers for public traces (`capsim import alibaba-openb|helios|philly`) write this format,
// and scenarios replay it. Rows become pods through the WorldBuilder, so names must be unique and
// priority classes resolve at finalize(). Errors name file, line and column.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/time.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

struct TraceOptions {
  // arrival = submit * time_scale + time_offset (run time). time_scale < 1 compresses the arrival
  // process (more load), > 1 stretches it; the offset starts the trace later in the run (or,
  // negative, drops a leading idle period: a row that would then arrive before 0 is an error).
  double time_scale = 1.0;
  SimDuration time_offset = 0;
  // Every duration is multiplied by this (e.g. to model faster hardware than the trace's).
  double duration_scale = 1.0;
  // The queue of rows whose `queue` cell is empty or absent ("default" when this is empty too).
  std::string default_queue;
  std::string namespace_ = "default";
  // Whether a preempted pod is recreated (trace pods normally come from Jobs or other
  // controllers that recreate them).
  bool requeue_on_preemption = true;
};

// The trace columns; `pod`, `submit` and `duration` are required.
const std::vector<std::string>& capsim_trace_columns();

// Reads a capsim trace file and adds one pod per row; returns the number of pods added. A
// missing file is InputErrorKind::kMissing.
std::size_t load_capsim_trace(FileSource& files, const std::string& path, WorldBuilder& b,
                              const TraceOptions& opt);

// The same, for text already in memory (tests, stdin); `name` is used in messages.
std::size_t load_capsim_trace_text(const std::string& text, const std::string& name,
                                   WorldBuilder& b, const TraceOptions& opt);

}  // namespace capsim
