// Sweeps (docs/planning.md): the sweep file is read by tools/loaders/sweep_spec.hpp; here,
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
#include "tools/loaders/sweep_spec.hpp"

namespace capsim {

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
  bool force = false;  // --force: each variant's load lifts the soft limits (LoadOptions::force)
  // When set, each variant's run is recorded into DIR/v<index>.db; otherwise nothing is written.
  std::optional<std::filesystem::path> record_dir;
  RecordLevel record = RecordLevel::kFull;  // what each recorded run keeps (`--record`)
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

}  // namespace capsim
