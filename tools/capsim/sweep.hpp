// Sweeps (docs/planning.md): a base scenario and axes of `--set` values, expanded into variants;
// running a set of variants on local threads; and the shard arithmetic for running a sweep on a
// Kubernetes Indexed Job or a Slurm array. Every variant is one deterministic run (its scenario,
// overrides and seed fix the result), so the files this writes do not depend on -j or on how the
// sweep was sharded, except for the wall-clock columns run.wall_seconds and run.started_at.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "reports/sweep_file.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// One `--set` assignment and where in the sweep or plan file it came from.
struct Assignment {
  std::string text;  // "key.path=value"
  InputLocation where;
};

// What one variant changes in the base scenario.
struct VariantSpec {
  std::int64_t index = 0;  // 0-based position in the sweep
  AxisValues axes;         // (axis name, value label) in axis order
  std::vector<Assignment> sets;
  std::optional<std::uint64_t> seed;
  std::string profile;           // empty: the scenario's default
  std::string describe() const;  // "b200=4, layout=mig, seed=2"
};

// The base every variant starts from: the scenario file, fixed overrides, default profile.
struct StudyBase {
  std::string file;      // the sweep or plan file
  std::string scenario;  // scenario path, relative to the working directory
  std::vector<Assignment> sets;
  std::string profile;
  std::optional<std::string> data_dir;
};

struct SweepSpec {
  StudyBase base;
  std::string name;
  std::string text;  // the sweep file's bytes
  std::vector<std::string> axis_names;
  std::vector<VariantSpec> variants;
  std::string sweep_id;  // SHA-256 over capsim's version, the file, the base scenario, variants
  SweepInfo info() const;
};

// Reads a sweep file: errors are InputError with the file, line, column and field. Every axis
// value is tried against the base scenario once, so a key that does not resolve or a value the
// scenario rejects is reported at its line in the sweep file.
SweepSpec load_sweep(const std::string& path, const std::optional<std::string>& data_dir);

// Reads `set:`-style mappings (key.path: value) of a sweep or plan file into assignments.
std::vector<Assignment> read_assignments(const YamlNode& map);
// Reads the common fields (scenario, set, profile) of a sweep or plan file.
StudyBase read_study_base(MapReader& m, const std::string& file,
                          const std::optional<std::string>& data_dir);
// Loads the base scenario with `extra` assignments, rethrowing an InputError caused by one of
// them at that assignment's location in the study file.
void validate_assignments(const StudyBase& base, const std::vector<Assignment>& extra,
                          std::optional<std::uint64_t> seed, const std::string& profile);

// Which variants a shard runs: index i belongs to shard i mod N (round robin keeps shards
// balanced when the slow variants sit together on one axis).
struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
  bool owns(std::int64_t variant) const { return variant % count == index; }
};
// "I/N" (0 <= I < N). Throws cli::UsageError.
Shard parse_shard(const std::string& text);
// The shard from the environment: JOB_COMPLETION_INDEX with `count_hint` (the Job's completions;
// Kubernetes does not expose it), or SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN out of
// SLURM_ARRAY_TASK_COUNT. nullopt when neither is set. Throws cli::UsageError on bad values.
std::optional<Shard> shard_from_environment(std::optional<std::int64_t> count_hint,
                                            const std::function<const char*(const char*)>& getenv);

// The outcome of one variant's run.
struct VariantResult {
  std::int64_t index = 0;
  Summary summary;
  std::filesystem::path file;  // its report file (when runs are recorded), run_id 1
  double wall_seconds = 0;
};

struct RunVariantsOptions {
  int jobs = 1;
  // When set, each variant's run is recorded into DIR/v<index>.db; otherwise nothing is written.
  std::optional<std::filesystem::path> record_dir;
  // Called on the calling thread's behalf from workers, serialised: (done, total, result).
  std::function<void(std::size_t, std::size_t, const VariantResult&)> on_done;
};

// Runs the variants on up to `jobs` threads. Results come back in the order of `variants`. The
// first failure stops the remaining work and is rethrown (an InputError is prefixed with the
// variant it happened in).
std::vector<VariantResult> run_variants(const StudyBase& base,
                                        const std::vector<VariantSpec>& variants,
                                        const RunVariantsOptions& options);

// Writes the results (which must have been recorded) as a sweep file at `out`.
void write_sweep_file(const std::filesystem::path& out, const SweepInfo& info,
                      const std::vector<VariantSpec>& variants,
                      const std::vector<VariantResult>& results,
                      const std::vector<ShardInfo>& shards);

// A scratch directory beside `out` (same file system), removed with its contents on destruction.
class ScratchBeside {
 public:
  explicit ScratchBeside(const std::filesystem::path& out);
  ~ScratchBeside();
  ScratchBeside(const ScratchBeside&) = delete;
  ScratchBeside& operator=(const ScratchBeside&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Emits a YAML value as the right-hand side of a --set assignment (flow style, quoted as needed).
std::string yaml_flow(const YAML::Node& node);

}  // namespace capsim
