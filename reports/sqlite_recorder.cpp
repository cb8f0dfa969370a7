#include "reports/sqlite_recorder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <set>
#include <system_error>
#include <utility>

#include "reports/output_target.hpp"
#include "reports/report_tables.hpp"
#include "reports/schema.hpp"
#include "sim/check.hpp"
#include "sim/resources.hpp"

namespace capsim {

namespace {

constexpr std::int64_t kMiB = std::int64_t{1024} * 1024;

// A write-side failure found by capsim itself (rather than by SQLite or the file system).
class WriteFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void remove_quietly(const std::filesystem::path& path) noexcept {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

// Removes the side files SQLite may keep beside a database (rollback journal, WAL, WAL index).
void remove_side_files(const std::filesystem::path& path) noexcept {
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    std::filesystem::path side = path;
    side += suffix;
    remove_quietly(side);
  }
}

// Removes a database file and its side files.
void remove_database_files(const std::filesystem::path& path) noexcept {
  remove_quietly(path);
  remove_side_files(path);
}

// Flushes a file's data to stable storage, so the rename never publishes unwritten pages.
void sync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path.string());
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::system_error(saved, std::generic_category(), "fsync " + path.string());
}

// Makes the rename itself durable. Best effort: some file systems refuse to fsync directories.
void sync_directory(const std::filesystem::path& dir) noexcept {
  const std::filesystem::path target = dir.empty() ? std::filesystem::path(".") : dir;
  const int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, n);
}

void bind_time_or_null(Statement& st, int index, SimTime t) {
  if (t >= 0) {
    st.bind_double(index, to_seconds(t));
  } else {
    st.bind_null(index);
  }
}

}  // namespace

ReportWriteError::ReportWriteError(std::filesystem::path path, const std::string& message)
    : std::runtime_error(fmt::format("{}: {}", path.string(), message)),
      path_(std::move(path)),
      message_(message) {}

SqliteRecorder::SqliteRecorder(std::filesystem::path out, SqliteRecorderOptions options)
    : out_(std::move(out)), options_(options) {
  if (options_.batch_rows == 0) options_.batch_rows = 1;
  // OUT.tmp-<pid>-<n> beside OUT, so that the final rename stays within one file system; for a
  // device or pipe OUT (/dev/null, a FIFO: SQLite cannot write to one) a file in the temporary
  // directory whose bytes are copied into OUT at the end.
  temp_ = output_temp_path(out_);
  guarded("cannot create the report", [&] {
    if (!out_.has_filename() || std::filesystem::is_directory(out_)) {
      throw WriteFailure("the output path names a directory, not a file");
    }
    if (is_in_place_output(out_)) {
      if (options_.append) throw WriteFailure("cannot append to a device or pipe");
      if (::access(out_.c_str(), W_OK) != 0) throw WriteFailure("the device is not writable");
    }
    open_temp();
  });
}

SqliteRecorder::~SqliteRecorder() {
  abort();
}

template <typename Body>
void SqliteRecorder::guarded(std::string_view context, Body&& body) {
  // Only I/O failures become ReportWriteError; InvariantError (a capsim bug) passes through, and
  // the destructor discards the temporary file.
  try {
    std::forward<Body>(body)();
  } catch (const SqliteError& e) {
    fail(context, e);
  } catch (const std::system_error& e) {  // includes std::filesystem::filesystem_error
    fail(context, e);
  } catch (const WriteFailure& e) {
    fail(context, e);
  }
}

void SqliteRecorder::fail(std::string_view context, const std::exception& cause) {
  abort();
  throw ReportWriteError(out_, fmt::format("{}: {}", context, cause.what()));
}

void SqliteRecorder::open_temp() {
  remove_database_files(temp_);
  db_ = SqliteDb(temp_.string(), OpenMode::kReadWriteCreate);
  if (options_.append && std::filesystem::exists(out_)) copy_existing_out();

  // The temporary file needs no crash safety of its own: atomicity comes from writing it
  // completely, fsyncing it once and renaming it onto OUT. A crash leaves at worst a stray
  // OUT.tmp-* file, never a half-written OUT. So no rollback journal and no per-commit fsync.
  // (With journal_mode=OFF ROLLBACK is undefined; on failure the whole file is deleted instead.)
  db_.exec(
      "PRAGMA journal_mode = OFF;"
      "PRAGMA synchronous = OFF;"
      "PRAGMA locking_mode = EXCLUSIVE;"
      "PRAGMA temp_store = MEMORY;"
      "PRAGMA cache_size = -32768;");  // 32 MiB of page cache

  if (!is_empty_database(db_)) {
    const std::optional<std::int64_t> version = read_schema_version(db_);
    if (!version) {
      throw WriteFailure("the existing file is not a capsim report; refusing to append to it");
    }
    if (*version != kSchemaVersion) {
      throw WriteFailure(fmt::format(
          "the existing report has schema version {} and this capsim writes version {}; "
          "write to a new file instead of appending",
          *version, kSchemaVersion));
    }
  }
  create_schema(db_);
  prepare_statements();
}

void SqliteRecorder::copy_existing_out() {
  // The backup API copies a consistent snapshot (including pages still in a WAL file) under a
  // read lock, which a plain file copy would not.
  SqliteDb source(out_.string(), OpenMode::kReadOnly);
  sqlite3_backup* backup = sqlite3_backup_init(db_.handle(), "main", source.handle(), "main");
  if (backup == nullptr) {
    db_.fail(sqlite3_extended_errcode(db_.handle()), "cannot copy the existing report");
  }
  const int step_rc = sqlite3_backup_step(backup, -1);
  const int finish_rc = sqlite3_backup_finish(backup);
  if (step_rc != SQLITE_DONE) {
    throw SqliteError(out_.string(), step_rc,
                      fmt::format("cannot copy the existing report: {}", sqlite3_errstr(step_rc)));
  }
  if (finish_rc != SQLITE_OK) db_.fail(finish_rc, "cannot copy the existing report");
  source.close();
}

void SqliteRecorder::prepare_statements() {
  insert_event_ = db_.prepare(
      "INSERT INTO event (run_id, seq, time_s, kind, pod, node, detail) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  insert_sample_ = db_.prepare(insert_sql<SampleRecord>("sample", kSampleColumns));
  insert_pool_sample_ =
      db_.prepare(insert_sql<PoolSampleRecord>("pool_sample", kPoolSampleColumns));
  insert_queue_sample_ =
      db_.prepare(insert_sql<QueueSampleRecord>("queue_sample", kQueueSampleColumns));
  insert_charge_ = db_.prepare(insert_sql<ChargeRow>("charge", kChargeColumns));
  insert_pending_reason_ =
      db_.prepare(insert_sql<PendingReasonRow>("pending_reason", kPendingReasonColumns));
  insert_explain_attempt_ =
      db_.prepare(insert_sql<ExplainAttemptRow>("explain_attempt", kExplainAttemptColumns));
  insert_explain_filter_ =
      db_.prepare(insert_sql<ExplainFilterRow>("explain_filter", kExplainFilterColumns));
  insert_explain_score_ =
      db_.prepare(insert_sql<ExplainScoreRow>("explain_score", kExplainScoreColumns));
  insert_explain_node_ =
      db_.prepare(insert_sql<ExplainNodeRow>("explain_node", kExplainNodeColumns));
  insert_explain_candidate_ =
      db_.prepare(insert_sql<ExplainCandidateRow>("explain_candidate", kExplainCandidateColumns));
}

void SqliteRecorder::finalize_statements() noexcept {
  insert_event_.finalize();
  insert_sample_.finalize();
  insert_pool_sample_.finalize();
  insert_queue_sample_.finalize();
  insert_charge_.finalize();
  insert_pending_reason_.finalize();
  insert_explain_attempt_.finalize();
  insert_explain_filter_.finalize();
  insert_explain_score_.finalize();
  insert_explain_node_.finalize();
  insert_explain_candidate_.finalize();
}

std::string_view SqliteRecorder::pod_name(PodId pod) const {
  if (pod == kNoPod) return {};
  CAPSIM_CHECK(pod < world_->pods.size(),
               fmt::format("the recorder was given pod id {} but the World has {} pods", pod,
                           world_->pods.size()));
  return world_->pods[pod].name;
}

std::string_view SqliteRecorder::node_name(NodeId node) const {
  if (node == kNoNode) return {};
  CAPSIM_CHECK(node < world_->nodes.size(),
               fmt::format("the recorder was given node id {} but the World has {} nodes", node,
                           world_->nodes.size()));
  return world_->nodes[node].name;
}

void SqliteRecorder::begin_run(const RunInfo& info, const World& world) {
  CAPSIM_CHECK(state_ == State::kOpen, "begin_run is called once, on a freshly opened recorder");
  world_ = &world;
  guarded("cannot write the run header", [&] {
    db_.begin();
    {
      Statement next_id = db_.prepare("SELECT COALESCE(MAX(run_id), 0) + 1 FROM run");
      next_id.step();
      run_id_ = next_id.column_int64(0);
    }
    {
      Statement run = db_.prepare(
          "INSERT INTO run (run_id, scenario, scenario_path, scenario_sha256, seed, profile, "
          "capsim_version, status, sim_seconds, wall_seconds, overrides, started_at, record) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', 0, 0, ?8, ?9, ?10)");
      run.bind_int64(1, run_id_);
      run.bind_text(2, info.scenario);
      run.bind_text_or_null(3, info.scenario_path);
      run.bind_text_or_null(4, info.scenario_sha256);
      // Seeds above 2^63-1 are stored as their two's-complement int64 (RunReader undoes it).
      run.bind_int64(5, static_cast<std::int64_t>(info.seed));
      run.bind_text_or_null(6, info.profile);
      run.bind_text(7, info.capsim_version);
      run.bind_text_or_null(8, info.overrides);
      run.bind_text(9, utc_now_iso8601());
      run.bind_text(10, record_level_name(options_.level));
      run.execute();
    }
    {
      Statement node = db_.prepare(
          "INSERT INTO node (run_id, node, pool, gpu_model, gpus, cpu_milli, memory_mib, "
          "sharing, price_per_hour) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      for (const NodeSpec& spec : world.nodes) {
        node.bind_int64(1, run_id_);
        node.bind_text(2, spec.name);
        node.bind_text_or_null(3, spec.pool);
        if (spec.gpu_model != kNoGpuModel && spec.gpu_model < world.gpu_models.size()) {
          node.bind_text(4, world.gpu_models[spec.gpu_model].name);
        } else {
          node.bind_null(4);
        }
        node.bind_int64(5, spec.gpu_count);
        node.bind_int64(6, spec.allocatable[kCpu]);
        node.bind_int64(7, spec.allocatable[kMemory] / kMiB);  // rounded down to whole MiB
        node.bind_text(8, sharing_name(spec.sharing));
        node.bind_double(9, spec.price_per_hour);
        node.execute();
      }
    }
    {
      // The Kueue objects' quotas and LocalQueues, as the scenario states them.
      const queueing::QueueConfig& qc = world.queues;
      Statement quota = db_.prepare(insert_sql<QueueQuotaRow>("queue_quota", kQueueQuotaColumns));
      for (const queueing::ClusterQueueSpec& cq : qc.cluster_queues) {
        for (const queueing::ResourceGroupSpec& group : cq.resource_groups) {
          for (const queueing::FlavorQuotasSpec& flavor : group.flavors) {
            for (const queueing::ResourceQuotaSpec& r : flavor.resources) {
              QueueQuotaRow row;
              row.cluster_queue = cq.name;
              row.cohort = cq.cohort;
              row.flavor = flavor.flavor;
              row.resource = world.resources.name(r.resource);
              row.nominal = static_cast<double>(r.nominal);
              if (r.borrowing_limit != queueing::kNoLimit) {
                row.borrowing_limit = static_cast<double>(r.borrowing_limit);
              }
              if (r.lending_limit != queueing::kNoLimit) {
                row.lending_limit = static_cast<double>(r.lending_limit);
              }
              bind_row<QueueQuotaRow>(quota, run_id_, kQueueQuotaColumns, row);
              quota.execute();
            }
          }
        }
      }
      Statement local = db_.prepare(insert_sql<LocalQueueRow>("local_queue", kLocalQueueColumns));
      for (const queueing::LocalQueueSpec& lq : qc.local_queues) {
        bind_row<LocalQueueRow>(local, run_id_, kLocalQueueColumns,
                                LocalQueueRow{lq.namespace_, lq.name, lq.cluster_queue});
        local.execute();
      }
    }
    db_.commit();
    db_.begin();  // the first batch of events and samples
    rows_in_batch_ = 0;
  });
  state_ = State::kRunning;
}

void SqliteRecorder::row_written() {
  if (++rows_in_batch_ < options_.batch_rows) return;
  db_.commit();
  db_.begin();
  rows_in_batch_ = 0;
}

void SqliteRecorder::record_event(const EventRecord& e) {
  CAPSIM_CHECK(state_ == State::kRunning, "events are recorded between begin_run and end_run");
  if (options_.level != RecordLevel::kFull) return;
  const std::string_view pod = pod_name(e.pod);
  const std::string_view node = node_name(e.node);
  guarded("cannot write an event", [&] {
    insert_event_.bind_int64(1, run_id_);
    insert_event_.bind_int64(2, next_seq_);
    insert_event_.bind_double(3, to_seconds(e.time));
    insert_event_.bind_text(4, e.kind);
    insert_event_.bind_text_or_null(5, pod);
    insert_event_.bind_text_or_null(6, node);
    insert_event_.bind_text_or_null(7, e.detail);
    insert_event_.execute();
    ++next_seq_;
    row_written();
  });
}

void SqliteRecorder::record_sample(const SampleRecord& s) {
  CAPSIM_CHECK(state_ == State::kRunning, "samples are recorded between begin_run and end_run");
  guarded("cannot write a sample", [&] {
    bind_row<SampleRecord>(insert_sample_, run_id_, kSampleColumns, s);
    insert_sample_.execute();
    row_written();
  });
}

void SqliteRecorder::record_pool_sample(const PoolSampleRecord& s) {
  CAPSIM_CHECK(state_ == State::kRunning,
               "pool samples are recorded between begin_run and end_run");
  guarded("cannot write a pool sample", [&] {
    Statement& st = insert_pool_sample_;
    bind_row<PoolSampleRecord>(st, run_id_, kPoolSampleColumns, s);
    st.execute();
    row_written();
  });
}

void SqliteRecorder::record_queue_sample(const QueueSampleRow& q) {
  CAPSIM_CHECK(state_ == State::kRunning,
               "queue samples are recorded between begin_run and end_run");
  guarded("cannot write a queue sample", [&] {
    bind_row<QueueSampleRecord>(insert_queue_sample_, run_id_, kQueueSampleColumns, q);
    insert_queue_sample_.execute();
    row_written();
  });
}

void SqliteRecorder::record_charge(const ChargeRecord& c) {
  CAPSIM_CHECK(state_ == State::kRunning, "charges are recorded between begin_run and end_run");
  if (options_.level != RecordLevel::kFull) return;
  ChargeRow row;
  row.kind = std::string(c.kind);
  row.pod = std::string(pod_name(c.pod));
  row.node = std::string(node_name(c.node));
  row.start = c.start;
  row.end = c.end;
  row.gpus = c.gpus;
  row.hardware_cost = c.hardware_cost;
  row.energy_cost = c.energy_cost;
  row.gpu_kwh = c.gpu_kwh;
  row.cpu_cores = c.cpu_cores;
  row.ram_bytes = c.ram_bytes;
  guarded("cannot write a charge", [&] {
    bind_row<ChargeRow>(insert_charge_, run_id_, kChargeColumns, row);
    insert_charge_.execute();
    row_written();
  });
}

void SqliteRecorder::record_pending_reason(const PendingReasonRecord& r) {
  CAPSIM_CHECK(state_ == State::kRunning,
               "pending reasons are recorded between begin_run and end_run");
  if (options_.level != RecordLevel::kFull) return;
  PendingReasonRow row{r.time,
                       std::string(pod_name(r.pod)),
                       r.attempt,
                       std::string(r.plugin),
                       std::string(r.reason),
                       r.nodes,
                       r.attempts,
                       r.last_time};
  guarded("cannot write a pending reason", [&] {
    bind_row<PendingReasonRow>(insert_pending_reason_, run_id_, kPendingReasonColumns, row);
    insert_pending_reason_.execute();
    row_written();
  });
}

void SqliteRecorder::record_explain(const ExplainRecord& e) {
  CAPSIM_CHECK(state_ == State::kRunning,
               "explained cycles are recorded between begin_run and end_run");
  if (options_.level != RecordLevel::kFull) return;
  const std::string pod(pod_name(e.pod));
  const std::int64_t attempt = e.attempt;
  auto write = [&]<typename Row, std::size_t N>(Statement& st, const Column<Row>(&columns)[N],
                                                const Row& row) {
    bind_row<Row>(st, run_id_, columns, row);
    st.execute();
    row_written();
  };
  guarded("cannot write an explained cycle", [&] {
    ExplainAttemptRow a;
    a.pod = pod;
    a.attempt = attempt;
    a.time = e.time;
    a.namespace_ = world_->pods[e.pod].namespace_;
    a.profile = std::string(e.profile);
    a.tie_break = std::string(e.tie_break);
    a.result = std::string(e.result);
    a.node = std::string(node_name(e.node));
    a.message = e.message;
    a.evaluated_nodes = e.evaluated_nodes;
    a.feasible_nodes = e.feasible_nodes;
    a.selected_node = std::string(node_name(e.selected));
    a.error = e.error;
    a.post_filter = e.post_filter ? 1 : 0;
    write(insert_explain_attempt_, kExplainAttemptColumns, a);
    for (const auto& v : e.verdicts) {
      write(insert_explain_filter_, kExplainFilterColumns,
            ExplainFilterRow{pod, attempt, std::string(v.point), std::string(node_name(v.node)),
                             std::string(v.plugin), std::string(v.code), v.reason});
    }
    for (const auto& v : e.scores) {
      write(insert_explain_score_, kExplainScoreColumns,
            ExplainScoreRow{pod, attempt, std::string(node_name(v.node)), std::string(v.plugin),
                            v.raw, v.normalized, v.weight, v.skipped ? 1 : 0});
    }
    for (const auto& n : e.nodes) {
      write(insert_explain_node_, kExplainNodeColumns,
            ExplainNodeRow{pod, attempt, std::string(node_name(n.node)), n.feasible ? 1 : 0,
                           std::string(n.rejected_by), n.scored ? 1 : 0, n.total});
    }
    for (std::size_t i = 0; i < e.candidates.size(); ++i) {
      const auto& c = e.candidates[i];
      ExplainCandidateRow row;
      row.pod = pod;
      row.attempt = attempt;
      row.candidate = static_cast<std::int64_t>(i);
      row.node = std::string(node_name(c.node));
      row.chosen = c.chosen ? 1 : 0;
      for (PodId v : c.victims)
        row.victims += (row.victims.empty() ? "" : ", ") + std::string(pod_name(v));
      row.victim_count = static_cast<std::int64_t>(c.victims.size());
      row.pdb_violations = c.pdb_violations;
      row.highest_priority = c.highest_priority;
      row.priority_sum = c.priority_sum;
      row.earliest_start_of_highest = c.earliest_start_of_highest;
      row.lost_on = std::string(c.lost_on);
      write(insert_explain_candidate_, kExplainCandidateColumns, row);
    }
  });
}

void SqliteRecorder::end_run(const RunInfo& info, const std::vector<PodRecord>& pods,
                             const Summary& summary) {
  CAPSIM_CHECK(state_ == State::kRunning, "end_run follows begin_run and is called once");
  {
    std::set<std::string_view> seen;
    for (const auto& [metric, value] : summary) {
      CAPSIM_CHECK(seen.insert(metric).second,
                   fmt::format("summary metric '{}' is reported twice", metric));
    }
  }
  guarded("cannot finish the report", [&] {
    // 1. Pods, in the order given, inside the open batch transaction; none at kSummary.
    const bool with_pods = options_.level != RecordLevel::kSummary;
    if (with_pods) {
      Statement pod = db_.prepare(
          "INSERT INTO pod (run_id, pod, job, queue, priority, submit_s, start_s, end_s, status, "
          "node, devices, gpu_request, attempts, wait_s, topology_span, topology_slowdown, "
          "owner_kind) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
      for (const PodRecord& rec : pods) {
        CAPSIM_CHECK(rec.pod != kNoPod, "every pod row names a pod");
        const std::string_view name = pod_name(rec.pod);
        const PodSpec& spec = world_->pods[rec.pod];
        pod.bind_int64(1, run_id_);
        pod.bind_text(2, name);
        if (!spec.job_name.empty()) {
          pod.bind_text(3, spec.job_name);
        } else if (spec.job != kNoJob) {
          CAPSIM_CHECK(spec.job < world_->jobs.size(),
                       fmt::format("pod '{}' names job id {} but the World has {} jobs", spec.name,
                                   spec.job, world_->jobs.size()));
          pod.bind_text(3, world_->jobs[spec.job].name);
        } else {
          pod.bind_null(3);
        }
        pod.bind_text_or_null(4, spec.queue);
        pod.bind_int64(5, spec.priority);
        bind_time_or_null(pod, 6, rec.submit);
        bind_time_or_null(pod, 7, rec.start);
        bind_time_or_null(pod, 8, rec.end);
        pod.bind_text(9, rec.status);
        pod.bind_text_or_null(10, rec.node);
        pod.bind_text_or_null(11, rec.devices);
        pod.bind_double(12, rec.gpu_request);
        pod.bind_int64(13, rec.attempts);
        pod.bind_double(14, rec.wait_s);
        // Topology: NULL unless the pod's gang started under a cluster topology.
        pod.bind_text_or_null(15, rec.topology_span);
        if (rec.topology_span.empty()) {
          pod.bind_null(16);
        } else {
          pod.bind_double(16, rec.topology_slowdown);
        }
        // The owner named in `job`: its controller's kind (a Deployment, a dump's ReplicaSet),
        // else Job for a Job's pod; NULL for a bare pod or a trace's.
        if (!spec.controller_kind->empty()) {
          pod.bind_text(17, *spec.controller_kind);
        } else if (spec.job != kNoJob) {
          pod.bind_text(17, "Job");
        } else {
          pod.bind_null(17);
        }
        pod.execute();
      }
    }
    // 1b. DRA: each pod's claims and their devices.
    if (with_pods) {
      Statement claim = db_.prepare(
          "INSERT INTO pod_claim (run_id, pod, claim, resource_claim, template, node, request, "
          "device, driver, pool, gpu) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
      for (const PodRecord& rec : pods) {
        for (const ClaimDeviceRecord& c : rec.claims) {
          claim.bind_int64(1, run_id_);
          claim.bind_text(2, pod_name(rec.pod));
          claim.bind_text(3, c.claim);
          claim.bind_text(4, c.resource_claim);
          claim.bind_text_or_null(5, c.template_name);
          claim.bind_text_or_null(6, c.node);
          claim.bind_text_or_null(7, c.request);
          claim.bind_text_or_null(8, c.device);
          claim.bind_text_or_null(9, c.driver);
          claim.bind_text_or_null(10, c.pool);
          if (c.gpu >= 0) {
            claim.bind_int64(11, c.gpu);
          } else {
            claim.bind_null(11);
          }
          claim.execute();
        }
      }
    }
    // 2. Summary, keeping the caller's order in `seq`.
    {
      Statement metric =
          db_.prepare("INSERT INTO summary (run_id, seq, metric, value) VALUES (?1, ?2, ?3, ?4)");
      std::int64_t seq = 0;
      for (const auto& [name, value] : summary) {
        metric.bind_int64(1, run_id_);
        metric.bind_int64(2, seq++);
        metric.bind_text(3, name);
        metric.bind_double(4, value);  // NaN becomes NULL
        metric.execute();
      }
    }
    // 3. The run row's final state.
    {
      Statement run = db_.prepare(
          "UPDATE run SET status = ?1, sim_seconds = ?2, wall_seconds = ?3 WHERE run_id = ?4");
      run.bind_text(1, info.status);
      run.bind_double(2, info.sim_seconds);
      run.bind_double(3, info.wall_seconds);
      run.bind_int64(4, run_id_);
      run.execute();
    }
    // 4. Indexes deferred for insert speed; then commit, close, and publish under the real name.
    create_deferred_indexes(db_);
    db_.commit();
    finalize_statements();
    db_.close();
    publish();
  });
  state_ = State::kFinished;
}

void SqliteRecorder::publish() {
  if (is_in_place_output(out_)) {
    publish_output(temp_, out_);  // copies the bytes into the device and removes temp_
    remove_side_files(temp_);
    return;
  }
  sync_file(temp_);
  std::filesystem::rename(temp_, out_);  // atomic replacement of any earlier OUT
  // Side files of the replaced OUT now sit beside a file they do not belong to: a -wal left by a
  // read-only connection (the append copy reads a WAL-mode OUT through one), or a hot -journal
  // from a crashed writer, which SQLite would otherwise "roll back" into the new file.
  remove_side_files(out_);
  sync_directory(out_.parent_path());
}

void SqliteRecorder::abort() noexcept {
  if (state_ == State::kFinished || state_ == State::kAborted) return;
  finalize_statements();
  db_ = SqliteDb();  // closes the connection quietly
  remove_database_files(temp_);
  state_ = State::kAborted;
}

}  // namespace capsim
