// libFuzzer target for every trace format. The input's first line names the format, the rest is
// the file:
//   capsim, alibaba-openb, capsim-jobs, helios, philly, capsim-failures
//       read alone as `capsim validate` reads them (the format's row of loader_registry().traces:
//       TraceFormat::check); a capsim-failures trace is also read against a fleet, as a
//       scenario's failures.trace;
//   spot-reclaims
//       a reclaim trace (docs/spot.md), as a scenario's spot.trace over a fleet with a spot pool.
// The fleet is pools od (1 node) and sp (2 spot nodes): nodes od-0, sp-0, sp-1.
// Job logs that read are also written as capsim's job CSV, as `capsim import helios|philly` does,
// and read back: an importer writing what its own loader refuses is a finding, as is a row lost.
//   build/fuzz/tests/fuzz/capsim_traces_fuzz -max_total_time=600 WORKDIR tests/fuzz/corpus/traces
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "models/yaml_reader.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tools/loaders/file_source.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/job_trace.hpp"
#include "tools/loaders/scenario_loader.hpp"

namespace {

using capsim::fuzz::expect_input_errors;

const char* kFleet =
    "seed: 3\n"
    "simulation: {horizon: 1d}\n"
    "cluster:\n  pools:\n"
    "    - {name: od, count: 1, cpu: 64, memory: 512Gi, gpu: {model: H100-80GB, count: 8}}\n"
    "    - {name: sp, count: 2, cpu: 64, memory: 512Gi, gpu: {model: H100-80GB, count: 8}, "
    "spot: {discount: 0.5, reclaim: {per_node_day: 1}}}\n"
    "workload:\n  synthetic:\n    window: 1h\n    tenants:\n"
    "      - {name: t, rate_per_hour: 2, gpus: 1, duration: 30m}\n";

// The fleet with `section` naming trace.csv.
void load_in_fleet(const std::string& section, const std::string& trace) {
  capsim::MemoryFiles files;
  files.add("fleet.yaml", std::string(kFleet) + section);
  files.add("trace.csv", trace);
  expect_input_errors(
      [&] { (void)capsim::load_scenario("fleet.yaml", capsim::LoadOptions{}, files); });
}

void read_job_log(const capsim::TraceFormat& f, const std::string& text, const std::string& path) {
  capsim::JobTraceRead read;
  try {
    read = f.read_jobs(text, path);
  } catch (const capsim::InputError&) {
    return;  // the check below reports it too
  }
  std::ostringstream out;
  capsim::write_job_trace_csv(out, read.rows);
  try {
    const capsim::JobTraceRead back = capsim::read_capsim_jobs_text(out.str(), "imported.csv");
    if (back.rows.size() != read.rows.size()) capsim::fuzz::finding();
  } catch (const capsim::InputError& e) {
    capsim::fuzz::note(e);
    capsim::fuzz::finding();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = capsim::fuzz::text_of(data, size);
  std::string_view rest;
  const std::string format(capsim::fuzz::first_line(in, rest));
  const std::string text(rest);
  if (format == "spot-reclaims") {
    load_in_fleet("spot: {trace: trace.csv}\n", text);
    return 0;
  }
  const capsim::TraceFormat* f = capsim::loader_registry().trace(format);
  if (f == nullptr) return 0;
  const std::string path = format == "philly" ? "trace.json" : "trace.csv";
  // Every file is read through FileSource::read, which refuses text that is not UTF-8 first.
  try {
    capsim::check_text_bytes(text, path);
  } catch (const capsim::InputError&) {
    return 0;
  }
  expect_input_errors([&] { (void)f->check(*f, text, path); });
  if (f->read_jobs != nullptr) read_job_log(*f, text, path);
  if (format == "capsim-failures") load_in_fleet("failures: {trace: trace.csv}\n", text);
  return 0;
}
