// Sweep files (docs/planning.md): a base scenario and axes of `--set` values, expanded into
// variants, each checked against the base scenario when the file is read so that a bad key or
// value is reported at its line in the sweep file. Also the pieces plan files share with sweeps
// (the study base, `set:` assignments). Running the variants is tools/capsim/sweep.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "reports/sweep_file.hpp"

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

// Limits on a sweep's variants (docs/cli.md#limits), counted from the axes before any variant is
// made: above the soft limit a sweep runs only with --force; above the hard one it is refused,
// since its variants alone would fill memory.
inline constexpr std::uint64_t kSoftMaxSweepVariants = 10'000;
inline constexpr std::uint64_t kMaxSweepVariants = 1'000'000;

// Reads a sweep file: errors are InputError with the file, line, column and field. A sweep of
// more than `max_variants` variants (kSoftMaxSweepVariants: the message names --force) is
// refused before its variants are made. Every axis value is tried against the base scenario
// once, so a key that does not resolve or a value the scenario rejects is reported at its line in
// the sweep file.
SweepSpec load_sweep(const std::string& path, const std::optional<std::string>& data_dir,
                     std::uint64_t max_variants = kSoftMaxSweepVariants);
// The same for a sweep file's bytes already in memory; `path` names it in messages and is the
// directory its `scenario:` resolves against (the base scenario is read from disk).
SweepSpec load_sweep_text(std::string text, const std::string& path,
                          const std::optional<std::string>& data_dir,
                          std::uint64_t max_variants = kSoftMaxSweepVariants);

// Reads `set:`-style mappings (key.path: value) of a sweep or plan file into assignments.
std::vector<Assignment> read_assignments(const YamlNode& map);
// Reads the common fields (scenario, set, profile) of a sweep or plan file.
StudyBase read_study_base(MapReader& m, const std::string& file,
                          const std::optional<std::string>& data_dir);
// Loads the base scenario with `extra` assignments, rethrowing an InputError caused by one of
// them at that assignment's location in the study file.
void validate_assignments(const StudyBase& base, const std::vector<Assignment>& extra,
                          std::optional<std::uint64_t> seed, const std::string& profile);

// Emits a YAML value as the right-hand side of a --set assignment (flow style, quoted as needed).
std::string yaml_flow(const YAML::Node& node);

}  // namespace capsim
