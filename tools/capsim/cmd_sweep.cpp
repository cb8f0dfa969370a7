// `capsim sweep SWEEP.yaml`: run every variant of a sweep (or one shard's share of them) on local
// threads and write them into one sweep file; `capsim merge OUT.db SHARD.db...`: combine shard
// files of one sweep. docs/planning.md describes both and the cluster recipes around them.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>
#include <tuple>

#include "reports/output_file.hpp"
#include "reports/output_target.hpp"
#include "reports/run_reader.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"
#include "tools/capsim/sweep.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

namespace {

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  return guarded("sweep", [&]() -> int {
    po::options_description opts("Usage: capsim sweep SWEEP.yaml [options]\n\nOptions");
    std::string file, out, shard_text, data_dir, record = "summary";
    int jobs = 0;
    std::int64_t shard_count = 0;
    opts.add_options()("help,h", "show this help")(
        "output,o", po::value(&out),
        "sweep file to write (default: <sweep name>.db, or <name>.shard-I-of-N.db for a shard)")(
        "jobs,j", po::value(&jobs), "variants run at once on this machine (default: CPU count)")(
        "shard", po::value(&shard_text),
        "run only shard I of N (I/N, 0-based): the variants whose index mod N is I")(
        "shard-count", po::value(&shard_count),
        "number of shards when the index comes from JOB_COMPLETION_INDEX (the Job's "
        "completions)")("data-dir", po::value(&data_dir),
                        "what {data_dir} in scenario paths expands to")(
        "list", "print the variants (index, shard, axis values) and exit")(
        "record", po::value(&record),
        "how much of each variant's run the sweep file keeps: summary (the default: run, nodes, "
        "samples, summary), pods (also the pod rows) or full (everything `capsim run` keeps)")(
        "force", "lift the soft limits (docs/cli.md#limits): variants, nodes, samples, rows")(
        "quiet,q", "no progress on stderr");
    const po::variables_map vm = parse_command_line(opts, args, {{"file", po::value(&file), 1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nWithout --shard the shard comes from JOB_COMPLETION_INDEX (with "
                   "--shard-count)\nor SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; without "
                   "those the whole sweep runs.\nResults do not depend on -j or on sharding. "
                   "See docs/planning.md.\n";
      return kOk;
    }
    if (file.empty()) throw UsageError("a sweep file is required");
    const RecordLevel level = parse_record_level(record);
    if (vm.count("jobs") && jobs < 1) throw UsageError("-j must be at least 1");
    if (!vm.count("jobs")) jobs = default_jobs();
    if (vm.count("shard-count") && shard_count < 1) {
      throw UsageError("--shard-count must be at least 1");
    }

    std::optional<Shard> shard;
    if (!shard_text.empty()) {
      shard = parse_shard(shard_text);
    } else {
      shard = shard_from_environment(
          vm.count("shard-count") ? std::optional<std::int64_t>(shard_count) : std::nullopt,
          [](const char* v) { return std::getenv(v); });
    }

    // --list prints any sweep the hard limit allows; running one needs --force above the soft.
    const SweepSpec spec = load_sweep(
        file, vm.count("data-dir") ? std::optional<std::string>(data_dir) : std::nullopt,
        vm.count("force") || vm.count("list") ? kMaxSweepVariants : kSoftMaxSweepVariants);
    const Shard sh = shard.value_or(Shard{});
    std::vector<VariantSpec> mine;
    for (const VariantSpec& v : spec.variants) {
      if (sh.owns(v.index)) mine.push_back(v);
    }
    if (vm.count("list")) {
      std::cout << fmt::format("# sweep {} ({}), {} variants\n", spec.name,
                               spec.sweep_id.substr(0, 12), spec.variants.size());
      for (const VariantSpec& v : spec.variants) {
        std::cout << fmt::format("{:>5}  shard {}  {}\n", v.index + 1, v.index % sh.count,
                                 v.describe());
      }
      return kOk;
    }
    if (out.empty()) {
      out = shard ? fmt::format("{}.shard-{}-of-{}.db", spec.name, sh.index, sh.count)
                  : spec.name + ".db";
    }
    refuse_output_over_inputs("sweep output", out, {{"sweep file", file}});
    check_writable(out);  // before the scratch directory beside it is made
    const bool quiet = vm.count("quiet") > 0;
    const bool tty = stderr_is_tty();
    if (!quiet) {
      std::cerr << fmt::format(
          "capsim sweep: {}: {} variants{}, {} at a time\n", spec.name, spec.variants.size(),
          shard ? fmt::format(" (shard {}/{}: {} of them)", sh.index, sh.count, mine.size()) : "",
          std::min<std::size_t>(static_cast<std::size_t>(jobs),
                                std::max<std::size_t>(mine.size(), 1)));
    }

    const auto t0 = std::chrono::steady_clock::now();
    ScratchBeside scratch(out);
    RunVariantsOptions ro;
    ro.jobs = jobs;
    ro.force = vm.count("force") > 0;
    ro.record_dir = scratch.path();
    ro.record = level;
    ro.on_done = [&](std::size_t done, std::size_t total, const VariantResult& r) {
      if (quiet) return;
      const std::string line =
          fmt::format("  [{}/{}] {} ({:.2f}s)", done, total,
                      spec.variants[static_cast<std::size_t>(r.index)].describe(), r.wall_seconds);
      if (tty) {
        std::cerr << "\r\033[K" << line << std::flush;
        if (done == total) std::cerr << "\n";
      } else {
        std::cerr << line << "\n";
      }
    };
    const std::vector<VariantResult> results = run_variants(spec.base, mine, ro);
    write_sweep_file(out, spec.info(), mine, results,
                     {ShardInfo{sh.index, sh.count, static_cast<std::int64_t>(mine.size())}});
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << fmt::format(
        "capsim sweep: {} variants of {} written to {} in {:.2f}s (sweep {})\n", mine.size(),
        spec.name, out, wall, spec.sweep_id.substr(0, 12));
    return kOk;
  });
}

int cmd_merge(const std::vector<std::string>& args) {
  return guarded("merge", [&]() -> int {
    po::options_description opts("Usage: capsim merge OUT.db SHARD.db... [options]\n\nOptions");
    std::vector<std::string> files;
    opts.add_options()("help,h", "show this help")(
        "partial", "write the result even when some of the sweep's variants are missing")(
        "quiet,q", "no notes on stderr");
    const po::variables_map vm =
        parse_command_line(opts, args, {{"files", po::value(&files)->composing(), -1}});
    if (vm.count("help")) {
      std::cout << opts
                << "\nCombines shard files of one sweep (same sweep_id) into OUT.db. Refuses "
                   "files of\ndifferent sweeps and variants present in two files. See "
                   "docs/planning.md.\n";
      return kOk;
    }
    if (files.size() < 2) throw UsageError("an output file and at least one shard file are needed");
    const std::string out = files.front();
    const std::vector<std::string> inputs(files.begin() + 1, files.end());
    {
      std::vector<InputFile> shard_files;
      for (const std::string& f : inputs)
        shard_files.push_back({"shard file", f});
      refuse_output_over_inputs("merged output", out, shard_files);
    }

    std::optional<SweepInfo> info;
    std::string info_file;
    std::map<std::int64_t, std::string> owner;  // run_id -> file
    std::vector<ShardInfo> shards;
    for (const std::string& f : inputs) {
      RunReader reader(f);
      const std::optional<SweepInfo> si = read_sweep_info(reader.db());
      if (!si) {
        throw InputError(InputErrorKind::kInvalid, InputLocation{f, 0, 0, ""},
                         "not a sweep file (no sweep table): only files written by `capsim "
                         "sweep` can be merged");
      }
      if (!info) {
        info = si;
        info_file = f;
      } else if (si->sweep_id != info->sweep_id) {
        throw InputError(
            InputErrorKind::kInvalid, InputLocation{f, 0, 0, ""},
            fmt::format("belongs to sweep '{}' ({}), but {} belongs to sweep '{}' ({}): shards "
                        "of different sweeps (another sweep file, scenario or capsim version) "
                        "cannot be merged",
                        si->name, si->sweep_id.substr(0, 12), info_file, info->name,
                        info->sweep_id.substr(0, 12)));
      }
      const auto axes = read_variant_axes(reader.db());
      for (const RunRow& r : reader.runs()) {
        reader.require_complete(r.run_id);
        if (auto it = owner.find(r.run_id); it != owner.end()) {
          std::string what = fmt::format("variant {}", r.run_id);
          if (auto a = axes.find(r.run_id); a != axes.end()) {
            std::vector<std::string> parts;
            for (const auto& [k, v] : a->second)
              parts.push_back(k + "=" + v);
            what += fmt::format(" ({})", fmt::join(parts, ", "));
          }
          throw InputError(InputErrorKind::kInvalid, InputLocation{f, 0, 0, ""},
                           fmt::format("{} is also in {}: refusing to merge duplicates (was a "
                                       "shard given twice, or run with two shard counts?)",
                                       what, it->second));
        }
        owner[r.run_id] = f;
      }
      for (const ShardInfo& s : read_shards(reader.db()))
        shards.push_back(s);
    }
    std::vector<std::int64_t> missing;
    for (std::int64_t i = 1; i <= info->variants; ++i) {
      if (!owner.count(i)) missing.push_back(i);
    }
    if (!missing.empty() && !vm.count("partial")) {
      std::vector<std::string> some;
      for (std::size_t i = 0; i < missing.size() && i < 10; ++i)
        some.push_back(std::to_string(missing[i]));
      throw InputError(InputErrorKind::kInvalid, InputLocation{inputs.front(), 0, 0, ""},
                       fmt::format("{} of the sweep's {} variants are in none of the files "
                                   "(variants {}{}); pass --partial to merge anyway",
                                   missing.size(), info->variants, fmt::join(some, ", "),
                                   missing.size() > 10 ? ", ..." : ""));
    }
    SweepFileWriter w(out, *info);
    std::sort(shards.begin(), shards.end(), [](const ShardInfo& a, const ShardInfo& b) {
      return std::tie(a.shards, a.shard) < std::tie(b.shards, b.shard);
    });
    for (const ShardInfo& s : shards)
      w.add_shard(s);
    for (const auto& [run_id, f] : owner)
      w.add_run(f, run_id, run_id, nullptr);
    w.commit();
    std::cout << fmt::format("capsim merge: {} runs of sweep {} from {} files written to {}{}\n",
                             owner.size(), info->name, inputs.size(), out,
                             missing.empty() ? "" : fmt::format(" ({} missing)", missing.size()));
    return kOk;
  });
}

}  // namespace capsim::cli
