// The scenario's `failures:` section (rates by cause per pool and/or GPU model, a failure trace,
// the failure seed) and its `checkpoints:` rules, read into the run's FailureConfig and the
// pods' CheckpointPolicy. Every field is validated (unknown ones are errors with did-you-mean);
// pools, GPU models and trace nodes must exist in the finished World. The failure trace is a CSV
// file (docs/trace-format.md, "Failure traces"): time, node, gpu (empty: the whole node), cause,
// repair.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/gpu_catalog.hpp"
#include "models/yaml_reader.hpp"
#include "sim/run/failure_model.hpp"
#include "sim/world.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/file_source.hpp"

namespace capsim {

// `failures:`; `trace_path` resolves the trace's path as the scenario resolves paths.
// `run_seed` derives the default seed ("failures" stream of the run seed).
FailureConfig parse_failures(const YamlNode& section, const World& world, const GpuCatalog& catalog,
                             std::uint64_t run_seed, FileSource& files,
                             const std::function<std::string(const YamlNode&)>& resolve);

// A failure trace, checked against `world`'s nodes; rows in time order.
std::vector<TracedFailure> read_failure_trace(const CsvFile& csv, const World& world);
// The trace alone (`capsim validate`): the columns, causes and times; a one-line summary.
std::string check_failure_trace(const CsvFile& csv);

// `checkpoints:`: a sequence of {match: {queue, name (glob), job (glob)}, interval, cost,
// restart}; the first rule that matches a pod (or a Job's template) gives its CheckpointPolicy.
void apply_checkpoint_rules(const YamlNode& list, World& world);

}  // namespace capsim
