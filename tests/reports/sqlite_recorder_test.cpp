// SqliteRecorder writes what the simulation reports, atomically; RunReader reads it back.
#include "reports/sqlite_recorder.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_reader.hpp"
#include "reports/schema.hpp"
#include "reports/sqlite_db.hpp"
#include "sim/check.hpp"
#include "sim/input_error.hpp"
#include "sim/world.hpp"

namespace capsim {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

// A fresh directory under the system temp dir, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path =
        fs::temp_directory_path() / ("capsim-sqlite-recorder-test-" + std::to_string(::getpid()) +
                                     "-" + std::to_string(counter.fetch_add(1)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Two nodes (an 8-GPU MIG node and a CPU node) and three pods: one from a Job, one bare, and one
// that never starts.
World make_world() {
  World w;
  GpuModelInfo h100;  // field by field: GpuModelInfo grew MIG fields (-Wmissing-field-initializers)
  h100.name = "H100-SXM5-80GB";
  h100.memory_bytes = 80 * kGiB;
  h100.sms = 132;
  h100.tdp_w = 700;
  h100.idle_w = 90;
  h100.price_per_hour = 3.5;
  h100.relative_speed = 1.0;
  w.gpu_models.push_back(h100);

  NodeSpec gpu_node;
  gpu_node.name = "gpu-0";
  gpu_node.name_sym = w.strings.intern(gpu_node.name);
  gpu_node.pool = "h100";
  gpu_node.gpu_model = 0;
  gpu_node.gpu_count = 8;
  gpu_node.sharing = GpuSharing::kMig;
  gpu_node.allocatable[kCpu] = 96'000;
  gpu_node.allocatable[kMemory] = 1536 * kGiB + 1000;  // not a whole MiB: stored rounded down
  gpu_node.allocatable[kNvidiaGpu] = 8;
  gpu_node.price_per_hour = 28.0;
  gpu_node.labels.set(w.strings.intern("nvidia.com/gpu.product"), w.strings.intern("H100"));
  w.nodes.push_back(gpu_node);

  NodeSpec cpu_node;
  cpu_node.name = "cpu-0";
  cpu_node.name_sym = w.strings.intern(cpu_node.name);
  cpu_node.allocatable[kCpu] = 32'000;
  cpu_node.allocatable[kMemory] = 128 * kGiB;
  cpu_node.price_per_hour = 1.25;
  w.nodes.push_back(cpu_node);

  JobSpec job;
  job.name = "train";
  job.queue = "research";
  w.jobs.push_back(job);

  const ResourceId gpu = *w.resources.intern("nvidia.com/gpu");
  PodSpec p0;
  p0.name = "train-0";
  p0.job = 0;
  p0.queue = "research";
  p0.priority = 100;
  p0.requests.set(gpu, 2);
  p0.gpu_count = 2;
  w.pods.push_back(p0);

  PodSpec p1;
  p1.name = "etl";
  p1.requests.set(kCpu, 4000);
  w.pods.push_back(p1);

  PodSpec p2;
  p2.name = "big";
  p2.queue = "prod";
  p2.priority = 1000;
  p2.requests.set(gpu, 16);
  p2.gpu_count = 16;
  w.pods.push_back(p2);
  return w;
}

RunInfo make_info(std::string status = "running") {
  RunInfo info;
  info.scenario = "tiny";
  info.scenario_path = "scenarios/tiny.yaml";
  info.scenario_sha256 = std::string(64, 'a');
  info.seed = (std::uint64_t{1} << 63) + 5;  // above INT64_MAX: must round-trip
  info.profile = "default-scheduler";
  info.capsim_version = "0.1.0-test";
  info.status = std::move(status);
  return info;
}

EventRecord event(SimTime t, std::string_view kind, PodId pod, NodeId node, std::string detail) {
  EventRecord e;
  e.time = t;
  e.kind = kind;
  e.pod = pod;
  e.node = node;
  e.detail = std::move(detail);
  return e;
}

SampleRecord sample(SimTime t, double allocated, std::int64_t pending) {
  SampleRecord s;
  s.time = t;
  s.gpus_total = 8;
  s.gpus_allocated = allocated;
  s.gpus_busy = allocated * 0.5;
  s.gpu_memory_allocated_mib = allocated * 81'920;
  s.gpu_memory_used_mib = allocated * 40'000;
  s.pods_running = allocated > 0 ? 1 : 0;
  s.pods_pending = pending;
  s.fragmented_gpus = 0.25;
  s.power_w = 90 * 8 + allocated * 300;
  s.cost_per_hour = 29.25;
  return s;
}

std::vector<PodRecord> make_pod_records() {
  PodRecord r0;
  r0.pod = 0;
  r0.status = "completed";
  r0.submit = 0;
  r0.start = 1 * kSecond;
  r0.end = 10 * kSecond;
  r0.node = "gpu-0";
  r0.devices = "0,1";
  r0.gpu_request = 2;
  r0.attempts = 1;
  r0.wait_s = 1.0;

  PodRecord r1;
  r1.pod = 1;
  r1.status = "completed";
  r1.submit = 0;
  r1.start = 0;
  r1.end = 500 * kMillisecond;
  r1.node = "cpu-0";
  r1.attempts = 1;

  PodRecord r2;
  r2.pod = 2;
  r2.status = "pending";
  r2.submit = 2'500'000;  // 2.5 s
  r2.gpu_request = 16;
  r2.attempts = 3;
  r2.wait_s = 117.5;
  return {r0, r1, r2};
}

// Deliberately not in alphabetical order, so reading back in name order would fail.
Summary make_summary() {
  return {{"pods_total", 3},
          {"wait_seconds_p95", 110.5},
          {"cost_total_usd", 12.25},
          {"cost_per_busy_gpu_hour_usd", std::numeric_limits<double>::quiet_NaN()},
          {"gpu_allocation_ratio_mean", 0.25}};
}

// Drives one whole run: 5 events, 3 samples, 1 queue sample, 3 pods, the summary.
void write_run(const fs::path& out, const World& world, SqliteRecorderOptions options = {},
               std::string final_status = "complete") {
  SqliteRecorder rec(out, options);
  rec.begin_run(make_info(), world);
  rec.record_event(event(0, "arrive", 0, kNoNode, ""));
  rec.record_event(event(0, "arrive", 1, kNoNode, ""));
  rec.record_sample(sample(0, 0, 2));
  rec.record_event(event(1 * kSecond, "start", 0, 0, "gpus 0,1"));
  rec.record_event(event(2'500'000, "pending", 2, kNoNode,
                         "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) "
                         "didn't match Pod's node affinity/selector."));
  rec.record_sample(sample(60 * kSecond, 2, 1));
  rec.record_event(event(10 * kSecond, "complete", 0, 0, ""));
  rec.record_sample(sample(120 * kSecond + 1, 0, 1));  // one microsecond past 120 s
  QueueSampleRow q;
  q.time = 60 * kSecond;
  q.queue = "research";
  q.resource = "nvidia.com/gpu";
  q.usage = 2;
  q.nominal = 4;
  q.pending = 16;
  rec.record_queue_sample(q);
  RunInfo info = make_info(std::move(final_status));
  info.sim_seconds = 120.000001;
  info.wall_seconds = 0.5;
  rec.end_run(info, make_pod_records(), make_summary());
}

std::int64_t count(const RunReader& reader, const std::string& sql) {
  Statement st = reader.db().prepare(sql);
  REQUIRE(st.step());
  return st.column_int64(0);
}

}  // namespace

TEST_CASE("A complete run writes every table and reads back through RunReader") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world);

  CHECK(dir.files() == std::vector<std::string>{"out.db"});  // no temporary file left behind
  const RunReader reader(out);
  CHECK(reader.schema_version() == kSchemaVersion);

  const std::vector<RunRow> runs = reader.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].run_id == 1);
  CHECK(runs[0].scenario == "tiny");
  CHECK(runs[0].scenario_path == "scenarios/tiny.yaml");
  CHECK(runs[0].seed == (std::uint64_t{1} << 63) + 5);
  CHECK(runs[0].profile == "default-scheduler");
  CHECK(runs[0].capsim_version == "0.1.0-test");
  CHECK(runs[0].status == "complete");
  CHECK(runs[0].sim_seconds == doctest::Approx(120.000001));
  CHECK(runs[0].wall_seconds == doctest::Approx(0.5));
  CHECK(runs[0].overrides.empty());
  CHECK(runs[0].started_at.size() == 20);  // 2024-01-02T03:04:05Z
  CHECK(runs[0].started_at.back() == 'Z');
  CHECK(reader.is_complete(1));
  CHECK_NOTHROW(reader.require_complete(1));
  CHECK(reader.latest_complete_run() == std::optional<std::int64_t>(1));

  SUBCASE("node rows carry names, the model name, units and sharing") {
    CHECK(count(reader, "SELECT count(*) FROM node WHERE run_id = 1") == 2);
    Statement st = reader.db().prepare(
        "SELECT node, pool, gpu_model, gpus, cpu_milli, memory_mib, sharing, price_per_hour "
        "FROM node WHERE run_id = 1 ORDER BY node");
    REQUIRE(st.step());
    CHECK(st.column_text(0) == "cpu-0");
    CHECK(st.column_is_null(1));  // no pool
    CHECK(st.column_is_null(2));  // no GPU model
    CHECK(st.column_int64(3) == 0);
    CHECK(st.column_int64(4) == 32'000);
    CHECK(st.column_int64(5) == 128 * 1024);
    CHECK(st.column_text(6) == "none");
    CHECK(st.column_double(7) == 1.25);
    REQUIRE(st.step());
    CHECK(st.column_text(0) == "gpu-0");
    CHECK(st.column_text(1) == "h100");
    CHECK(st.column_text(2) == "H100-SXM5-80GB");
    CHECK(st.column_int64(3) == 8);
    CHECK(st.column_int64(4) == 96'000);
    CHECK(st.column_int64(5) == 1536 * 1024);  // 1536 GiB + 1000 B, rounded down to MiB
    CHECK(st.column_text(6) == "mig");
    CHECK(st.column_double(7) == 28.0);
    CHECK_FALSE(st.step());
  }

  SUBCASE("pod rows resolve job names and leave absent times and names NULL") {
    CHECK(count(reader, "SELECT count(*) FROM pod WHERE run_id = 1") == 3);
    Statement st = reader.db().prepare(
        "SELECT pod, job, queue, priority, submit_s, start_s, end_s, status, node, devices, "
        "gpu_request, attempts, wait_s FROM pod WHERE run_id = 1 ORDER BY rowid");
    REQUIRE(st.step());
    CHECK(st.column_text(0) == "train-0");
    CHECK(st.column_text(1) == "train");
    CHECK(st.column_text(2) == "research");
    CHECK(st.column_int64(3) == 100);
    CHECK(st.column_double(4) == 0.0);
    CHECK(st.column_double(5) == 1.0);
    CHECK(st.column_double(6) == 10.0);
    CHECK(st.column_text(7) == "completed");
    CHECK(st.column_text(8) == "gpu-0");
    CHECK(st.column_text(9) == "0,1");
    CHECK(st.column_double(10) == 2.0);
    CHECK(st.column_int64(11) == 1);
    CHECK(st.column_double(12) == 1.0);
    REQUIRE(st.step());
    CHECK(st.column_text(0) == "etl");
    CHECK(st.column_is_null(1));  // a bare pod has no job
    CHECK(st.column_is_null(2));  // nor a queue
    CHECK(st.column_double(6) == 0.5);
    CHECK(st.column_is_null(9));  // no devices
    REQUIRE(st.step());
    CHECK(st.column_text(0) == "big");
    CHECK(st.column_int64(3) == 1000);
    CHECK(st.column_double(4) == 2.5);
    CHECK(st.column_is_null(5));  // never started
    CHECK(st.column_is_null(6));
    CHECK(st.column_text(7) == "pending");
    CHECK(st.column_is_null(8));  // no node
    CHECK(st.column_int64(11) == 3);
    CHECK(st.column_double(12) == 117.5);
    CHECK_FALSE(st.step());
  }

  SUBCASE("events are numbered from 0 in record order with names resolved") {
    CHECK(count(reader, "SELECT count(*) FROM event WHERE run_id = 1") == 5);
    Statement st = reader.db().prepare(
        "SELECT seq, time_s, kind, pod, node, detail FROM event WHERE run_id = 1 ORDER BY seq");
    const std::vector<std::string> kinds = {"arrive", "arrive", "start", "pending", "complete"};
    for (std::int64_t i = 0; i < 5; ++i) {
      REQUIRE(st.step());
      CHECK(st.column_int64(0) == i);
      CHECK(st.column_text(2) == kinds[static_cast<std::size_t>(i)]);
    }
    Statement pending = reader.db().prepare(
        "SELECT time_s, pod, node, detail FROM event WHERE run_id = 1 AND kind = 'pending'");
    REQUIRE(pending.step());
    CHECK(pending.column_double(0) == 2.5);
    CHECK(pending.column_text(1) == "big");
    CHECK(pending.column_is_null(2));
    CHECK(pending.column_text(3).find("Insufficient nvidia.com/gpu") != std::string::npos);
    Statement start = reader.db().prepare(
        "SELECT pod, node, detail FROM event WHERE run_id = 1 AND kind = 'start'");
    REQUIRE(start.step());
    CHECK(start.column_text(0) == "train-0");
    CHECK(start.column_text(1) == "gpu-0");
    CHECK(start.column_text(2) == "gpus 0,1");
    CHECK(count(reader, "SELECT count(*) FROM event WHERE detail IS NULL") == 3);
  }

  SUBCASE("samples read back with exact times and values") {
    const std::vector<SampleRecord> samples = reader.samples(1);
    REQUIRE(samples.size() == 3);
    CHECK(samples[0].time == 0);
    CHECK(samples[1].time == 60 * kSecond);
    CHECK(samples[2].time == 120 * kSecond + 1);
    CHECK(samples[1].gpus_total == 8);
    CHECK(samples[1].gpus_allocated == 2);
    CHECK(samples[1].gpus_busy == 1);
    CHECK(samples[1].gpu_memory_allocated_mib == 163'840);
    CHECK(samples[1].gpu_memory_used_mib == 80'000);
    CHECK(samples[1].pods_running == 1);
    CHECK(samples[1].pods_pending == 1);
    CHECK(samples[1].fragmented_gpus == 0.25);
    CHECK(samples[1].power_w == 1320);
    CHECK(samples[1].cost_per_hour == 29.25);
    CHECK(samples[0].pods_pending == 2);
  }

  SUBCASE("queue samples are written with an absent flavor as NULL") {
    Statement st = reader.db().prepare(
        "SELECT time_s, queue, flavor, resource, usage, nominal, borrowed, pending "
        "FROM queue_sample WHERE run_id = 1");
    REQUIRE(st.step());
    CHECK(st.column_double(0) == 60.0);
    CHECK(st.column_text(1) == "research");
    CHECK(st.column_is_null(2));
    CHECK(st.column_text(3) == "nvidia.com/gpu");
    CHECK(st.column_double(4) == 2.0);
    CHECK(st.column_double(5) == 4.0);
    CHECK(st.column_double(6) == 0.0);
    CHECK(st.column_double(7) == 16.0);
    CHECK_FALSE(st.step());
  }

  SUBCASE("the summary keeps the order it was reported in, NaN included") {
    const Summary got = reader.summary(1);
    const Summary want = make_summary();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].first == want[i].first);
      if (std::isnan(want[i].second)) {
        CHECK(std::isnan(got[i].second));
      } else {
        CHECK(got[i].second == want[i].second);
      }
    }
  }
}

TEST_CASE("Events and samples spanning several batches are all written in order") {
  TempDir dir;
  const fs::path out = dir.path / "batched.db";
  const World world = make_world();
  {
    SqliteRecorder rec(out, SqliteRecorderOptions{false, 3});
    rec.begin_run(make_info(), world);
    for (int i = 0; i < 10; ++i) {
      rec.record_event(event(i * kSecond, "arrive", static_cast<PodId>(i % 3), kNoNode, ""));
      rec.record_sample(sample(i * kSecond, i % 2, i));
    }
    rec.end_run(make_info("complete"), make_pod_records(), make_summary());
  }
  const RunReader reader(out);
  CHECK(count(reader, "SELECT count(*) FROM event") == 10);
  CHECK(count(reader, "SELECT min(seq) FROM event") == 0);
  CHECK(count(reader, "SELECT max(seq) FROM event") == 9);
  // seq and time agree row by row: seq i was recorded at i seconds.
  CHECK(count(reader, "SELECT count(*) FROM event WHERE time_s = seq") == 10);
  CHECK(reader.samples(1).size() == 10);
  CHECK(reader.samples(1)[9].pods_pending == 9);
}

TEST_CASE("Appending a run gives it the next run_id and keeps the earlier run") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world);
  write_run(out, world, SqliteRecorderOptions{true, 10'000});

  CHECK(dir.files() == std::vector<std::string>{"out.db"});
  const RunReader reader(out);
  const std::vector<RunRow> runs = reader.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].run_id == 1);
  CHECK(runs[1].run_id == 2);
  CHECK(reader.is_complete(1));
  CHECK(reader.is_complete(2));
  CHECK(reader.latest_complete_run() == std::optional<std::int64_t>(2));
  for (std::int64_t id : {1, 2}) {
    CAPTURE(id);
    const std::string where = " WHERE run_id = " + std::to_string(id);
    CHECK(count(reader, "SELECT count(*) FROM node" + where) == 2);
    CHECK(count(reader, "SELECT count(*) FROM pod" + where) == 3);
    CHECK(count(reader, "SELECT count(*) FROM event" + where) == 5);
    CHECK(count(reader, "SELECT min(seq) FROM event" + where) == 0);
    CHECK(reader.samples(id).size() == 3);
    CHECK(reader.summary(id).size() == make_summary().size());
  }
}

TEST_CASE("Writing without append replaces an earlier report with a single run") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world);
  write_run(out, world, SqliteRecorderOptions{false, 10'000}, "failed");
  const RunReader reader(out);
  REQUIRE(reader.runs().size() == 1);
  CHECK(reader.runs()[0].run_id == 1);
  CHECK(reader.runs()[0].status == "failed");
}

TEST_CASE("A run that ends with status failed is not complete") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world, {}, "failed");
  const RunReader reader(out);
  CHECK_FALSE(reader.is_complete(1));
  CHECK_FALSE(reader.is_complete(7));  // no such run
  CHECK_FALSE(reader.latest_complete_run().has_value());
  CHECK_THROWS_AS(reader.require_complete(1), InputError);
  CHECK_THROWS_AS(reader.require_complete(7), InputError);
}

TEST_CASE("A recorder destroyed without end_run leaves neither the output nor a temporary file") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  {
    SqliteRecorder rec(out, SqliteRecorderOptions{false, 2});
    rec.begin_run(make_info(), world);
    for (int i = 0; i < 5; ++i)
      rec.record_event(event(i, "arrive", 0, kNoNode, ""));
    CHECK(fs::exists(rec.temp_path()));  // the run really was being written
    CHECK(rec.temp_path().parent_path() == dir.path);
    CHECK_FALSE(fs::exists(out));
  }
  CHECK(dir.files().empty());
}

TEST_CASE("An earlier report survives a failed second run byte for byte") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world);
  const std::string before = file_bytes(out);
  REQUIRE_FALSE(before.empty());

  for (const bool append : {true, false}) {
    CAPTURE(append);
    {  // abandoned by abort()
      SqliteRecorder rec(out, SqliteRecorderOptions{append, 2});
      rec.begin_run(make_info(), world);
      for (int i = 0; i < 5; ++i)
        rec.record_event(event(i, "arrive", 1, kNoNode, "x"));
      rec.record_sample(sample(0, 1, 0));
      CHECK(fs::exists(rec.temp_path()));
      rec.abort();
      CHECK(dir.files() == std::vector<std::string>{"out.db"});
      rec.abort();  // idempotent
    }
    CHECK(file_bytes(out) == before);
    {  // stopped by a broken invariant, then destroyed
      SqliteRecorder rec(out, SqliteRecorderOptions{append, 2});
      rec.begin_run(make_info(), world);
      rec.record_event(event(0, "arrive", 1, kNoNode, ""));
      CHECK_THROWS_AS(rec.record_event(event(1, "arrive", 99, kNoNode, "")), InvariantError);
    }
    CHECK(dir.files() == std::vector<std::string>{"out.db"});
    CHECK(file_bytes(out) == before);
  }
  const RunReader reader(out);
  CHECK(reader.runs().size() == 1);
  CHECK(reader.is_complete(1));
}

TEST_CASE("Writing into a directory that does not exist throws ReportWriteError") {
  TempDir dir;
  const fs::path out = dir.path / "no-such-dir" / "out.db";
  try {
    SqliteRecorder rec(out);
    FAIL("the recorder opened a file in a missing directory");
  } catch (const ReportWriteError& e) {
    CHECK(e.path() == out);
    CHECK(std::string(e.what()).find(out.string()) == 0);
  }
  CHECK(dir.files().empty());
}

TEST_CASE("An output path that is a directory throws ReportWriteError before the run starts") {
  TempDir dir;
  CHECK_THROWS_AS(SqliteRecorder(dir.path), ReportWriteError);
  CHECK(dir.files().empty());
  CHECK(fs::is_directory(dir.path));
}

TEST_CASE("Appending to an SQLite file that is not a capsim report is refused and leaves it") {
  TempDir dir;
  const fs::path out = dir.path / "theirs.db";
  {
    SqliteDb db(out.string(), OpenMode::kReadWriteCreate);
    db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me');");
  }
  const std::string before = file_bytes(out);
  CHECK_THROWS_AS(SqliteRecorder(out, SqliteRecorderOptions{true, 10'000}), ReportWriteError);
  CHECK(file_bytes(out) == before);
  CHECK(dir.files() == std::vector<std::string>{"theirs.db"});
}

TEST_CASE("Appending to a report that a user switched to WAL mode works") {
  TempDir dir;
  const fs::path out = dir.path / "out.db";
  const World world = make_world();
  write_run(out, world);
  {
    SqliteDb db(out.string(), OpenMode::kReadWriteCreate);
    db.exec("PRAGMA journal_mode = WAL; UPDATE run SET overrides = 'edited' WHERE run_id = 1;");
  }
  write_run(out, world, SqliteRecorderOptions{true, 10'000});
  // The copy was read through the WAL; no -wal/-shm file of the replaced file is left beside it.
  CHECK(dir.files() == std::vector<std::string>{"out.db"});
  const RunReader reader(out);
  REQUIRE(reader.runs().size() == 2);
  CHECK(reader.runs()[0].overrides == "edited");
  CHECK(reader.is_complete(2));
}

TEST_CASE("RunReader tells a missing file from a file that is not a capsim report") {
  TempDir dir;

  SUBCASE("a missing file is kMissing") {
    try {
      const RunReader reader(dir.path / "absent.db");
      FAIL("opened a missing file");
    } catch (const InputError& e) {
      CHECK(e.kind() == InputErrorKind::kMissing);
      CHECK(e.where().file == (dir.path / "absent.db").string());
    }
  }
  SUBCASE("a text file is kInvalid") {
    const fs::path text = dir.path / "notes.db";
    std::ofstream(text) << "this is a text file, not an SQLite database\n";
    try {
      const RunReader reader(text);
      FAIL("opened a text file");
    } catch (const InputError& e) {
      CHECK(e.kind() == InputErrorKind::kInvalid);
      CHECK(e.message().find("not an SQLite database") != std::string::npos);
    }
  }
  SUBCASE("an SQLite file without the capsim schema is kInvalid") {
    const fs::path other = dir.path / "other.db";
    {
      SqliteDb db(other.string(), OpenMode::kReadWriteCreate);
      db.exec("CREATE TABLE t (x INTEGER);");
    }
    try {
      const RunReader reader(other);
      FAIL("opened a foreign SQLite file");
    } catch (const InputError& e) {
      CHECK(e.kind() == InputErrorKind::kInvalid);
      CHECK(e.message().find("not a capsim report") != std::string::npos);
    }
  }
  SUBCASE("a report from a newer schema is kInvalid") {
    const fs::path newer = dir.path / "newer.db";
    write_run(newer, make_world());
    {
      SqliteDb db(newer.string(), OpenMode::kReadWriteCreate);
      db.exec("UPDATE meta SET value = 99 WHERE key = 'schema_version';");
    }
    try {
      const RunReader reader(newer);
      FAIL("opened a report from a newer schema");
    } catch (const InputError& e) {
      CHECK(e.kind() == InputErrorKind::kInvalid);
    }
  }
}

TEST_CASE("sharing_name gives the node.sharing spelling of every mode") {
  CHECK(sharing_name(GpuSharing::kNone) == "none");
  CHECK(sharing_name(GpuSharing::kMig) == "mig");
  CHECK(sharing_name(GpuSharing::kTimeSlicing) == "time-slicing");
  CHECK(sharing_name(GpuSharing::kMps) == "mps");
  CHECK(sharing_name(GpuSharing::kShare) == "share");
}

}  // namespace capsim
