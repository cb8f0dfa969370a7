#include "tools/capsim/sweep.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "reports/output_target.hpp"
#include "reports/sqlite_recorder.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/runner.hpp"
#include "tools/loaders/scenario_loader.hpp"

namespace capsim {

namespace fs = std::filesystem;

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto bad = [&]() -> cli::UsageError {
    return cli::UsageError(
        fmt::format("--shard '{}' is not I/N with 0 <= I < N (e.g. --shard 0/4)", text));
  };
  if (slash == std::string::npos) throw bad();
  Shard s;
  try {
    std::size_t used = 0;
    s.index = std::stoll(text.substr(0, slash), &used);
    if (used != slash) throw bad();
    const std::string n = text.substr(slash + 1);
    s.count = std::stoll(n, &used);
    if (used != n.size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

std::optional<Shard> shard_from_environment(std::optional<std::int64_t> count_hint,
                                            const std::function<const char*(const char*)>& getenv) {
  auto number = [&](const char* var) -> std::optional<std::int64_t> {
    const char* v = getenv(var);
    if (v == nullptr || *v == '\0') return std::nullopt;
    try {
      std::size_t used = 0;
      const std::int64_t n = std::stoll(v, &used);
      if (used == std::string(v).size()) return n;
    } catch (const std::logic_error&) {
    }
    throw cli::UsageError(fmt::format("{}='{}' is not a whole number", var, v));
  };
  if (const auto index = number("JOB_COMPLETION_INDEX")) {
    if (!count_hint) {
      throw cli::UsageError(
          "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the number of shards is "
          "not: pass --shard-count N with the Job's completions");
    }
    return parse_shard(fmt::format("{}/{}", *index, *count_hint));
  }
  if (const auto id = number("SLURM_ARRAY_TASK_ID")) {
    const auto count = number("SLURM_ARRAY_TASK_COUNT");
    const std::int64_t min = number("SLURM_ARRAY_TASK_MIN").value_or(0);
    if (!count && !count_hint) {
      throw cli::UsageError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
    }
    return parse_shard(fmt::format("{}/{}", *id - min, count_hint ? *count_hint : *count));
  }
  return std::nullopt;
}

std::vector<VariantResult> run_variants(const StudyBase& base,
                                        const std::vector<VariantSpec>& variants,
                                        const RunVariantsOptions& options) {
  std::vector<VariantResult> results(variants.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr first_error;
  std::size_t done = 0;

  auto run_one = [&](std::size_t i) {
    const VariantSpec& v = variants[i];
    LoadOptions lo;
    lo.data_dir = base.data_dir;
    lo.seed = v.seed;
    lo.force = options.force;
    for (const auto& a : base.sets)
      lo.overrides.push_back(a.text);
    for (const auto& a : v.sets)
      lo.overrides.push_back(a.text);
    VariantResult r;
    r.index = v.index;
    try {
      Scenario s = load_scenario(base.scenario, lo);
      RunRequest req;
      req.profile = v.profile.empty() ? base.profile : v.profile;
      req.should_stop = [&failed] { return failed.load(); };
      RunOutcome o;
      if (options.record_dir) {
        r.file = *options.record_dir / fmt::format("v{}.db", v.index);
        SqliteRecorderOptions recorder_options;
        recorder_options.level = options.record;
        SqliteRecorder rec(r.file, recorder_options);
        o = run_scenario(s, req, rec);
      } else {
        NullRecorder rec;
        o = run_scenario(s, req, rec);
      }
      r.summary = std::move(o.result.summary);
      r.wall_seconds = o.wall_seconds;
    } catch (const InputError& e) {
      throw InputError(e.kind(), e.where(), fmt::format("{} (in {})", e.message(), v.describe()));
    }
    results[i] = std::move(r);
  };

  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= variants.size() || failed.load()) return;
      try {
        run_one(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error) first_error = std::current_exception();
        failed.store(true);
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (options.on_done) options.on_done(done, variants.size(), results[i]);
    }
  };

  const int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(variants.size())));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < jobs; ++t)
      threads.emplace_back(worker);
    for (auto& t : threads)
      t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
  return results;
}

void write_sweep_file(const fs::path& out, const SweepInfo& info,
                      const std::vector<VariantSpec>& variants,
                      const std::vector<VariantResult>& results,
                      const std::vector<ShardInfo>& shards) {
  SweepFileWriter w(out, info);
  for (const ShardInfo& s : shards)
    w.add_shard(s);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    w.add_run(results[i].file, 1, variants[i].index + 1, &variants[i].axes);
  }
  w.commit();
}

ScratchBeside::ScratchBeside(const fs::path& out) {
  static std::atomic<unsigned> counter{0};
  // Beside OUT; in the temporary directory when OUT is a device or pipe (/dev/null).
  path_ = is_in_place_output(out) ? output_temp_path(out) : out;
  path_ += fmt::format(".runs-{}-{}", ::getpid(), counter.fetch_add(1));
  std::error_code ec;
  fs::remove_all(path_, ec);
  fs::create_directories(path_, ec);
  if (ec) throw ReportWriteError(path_, "cannot create a scratch directory: " + ec.message());
}

ScratchBeside::~ScratchBeside() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace capsim
