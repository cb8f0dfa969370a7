// `capsim import FORMAT INPUT -o OUT.csv`: converts a public job log (Helios cluster_log.csv,
// Philly cluster_job_log) into capsim's job-level trace (docs/queues.md), which scenarios replay
// with `format: capsim-jobs`. Jobs the log cannot describe (still running, no complete attempt)
// are left out and counted on stderr. The output is written to a temporary file and renamed, so
// a failed import never leaves a half-written OUT.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tools/capsim/cli.hpp"
#include "tools/loaders/job_trace.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_import(const std::vector<std::string>& args) {
  return guarded("import", [&]() -> int {
    po::options_description opts(
        "Usage: capsim import FORMAT INPUT -o OUT.csv\n\nFormats: helios (SenseTime Helios "
        "cluster_log.csv), philly (Microsoft Philly cluster_job_log),\ncapsim-jobs (capsim's "
        "job trace, normalised)\n\nOptions");
    std::string format, input, out;
    std::size_t max_jobs = 0;
    opts.add_options()("help,h", "show this help")("output,o", po::value(&out),
                                                   "the capsim job trace to write (CSV)")(
        "max-jobs", po::value(&max_jobs), "keep only the first N jobs");
    po::options_description hidden;
    hidden.add_options()("format", po::value(&format))("input", po::value(&input));
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description pos;
    pos.add("format", 1).add("input", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts
                << "\nThe result has one row per job: submit (seconds from the first submission), "
                   "duration,\ngpus, nodes, user, vc and status. Scenarios map users or virtual "
                   "clusters to\nLocalQueues with `queue_map` (docs/queues.md).\n";
      return kOk;
    }
    if (format.empty() || input.empty()) throw UsageError("a format and an input file are needed");
    if (!is_job_trace_format(format)) {
      throw UsageError(fmt::format("unknown format '{}' (supported: {})", format,
                                   fmt::join(job_trace_formats(), ", ")));
    }
    if (out.empty()) throw UsageError("-o OUT.csv is required");
    JobTraceRead read = read_job_trace(format, input);
    if (max_jobs > 0 && read.rows.size() > max_jobs) read.rows.resize(max_jobs);

    namespace fs = std::filesystem;
    const fs::path target(out);
    const fs::path temp = target.string() + ".tmp";
    {
      std::ofstream f(temp, std::ios::binary | std::ios::trunc);
      if (!f) {
        std::cerr << fmt::format("capsim import: error: cannot write {}\n", temp.string());
        return kCannotWrite;
      }
      write_job_trace_csv(f, read.rows);
      f.flush();
      if (!f) {
        f.close();
        std::remove(temp.c_str());
        std::cerr << fmt::format("capsim import: error: cannot write {}\n", temp.string());
        return kCannotWrite;
      }
    }
    std::error_code ec;
    fs::rename(temp, target, ec);
    if (ec) {
      std::remove(temp.c_str());
      std::cerr << fmt::format("capsim import: error: cannot write {}: {}\n", out, ec.message());
      return kCannotWrite;
    }
    std::int64_t gpus = 0, multi = 0;
    for (const JobTraceRow& r : read.rows) {
      gpus += r.gpus;
      multi += r.nodes > 1 ? 1 : 0;
    }
    std::cerr << fmt::format("capsim import: {} job(s), {} multi-node, {} GPUs requested -> {}\n",
                             read.rows.size(), multi, gpus, out);
    for (const auto& [why, n] : read.skipped)
      std::cerr << fmt::format("capsim import: left out {} job(s): {}\n", n, why);
    return kOk;
  });
}

}  // namespace capsim::cli
