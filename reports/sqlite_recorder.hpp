// SqliteRecorder writes one run into a capsim report file (docs/report-schema.md), atomically:
// everything goes to a temporary file beside OUT, which end_run() renames onto OUT. A run that
// fails, throws or is abandoned (abort() or destruction before end_run) deletes the temporary file
// and leaves any earlier OUT byte-for-byte untouched. With `append`, the temporary file starts as
// a copy of OUT and the run gets the next run_id (concurrent appends to one OUT are not supported:
// the later rename wins). The World passed to begin_run must outlive end_run: pod and node names
// are looked up in it as rows are written. One thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reports/sqlite_db.hpp"
#include "sim/recorder.hpp"

namespace capsim {

// The report could not be created or written (the CLI maps it to exit code 74).
class ReportWriteError : public std::runtime_error {
 public:
  ReportWriteError(std::filesystem::path path, const std::string& message);
  const std::filesystem::path& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  std::filesystem::path path_;
  std::string message_;
};

struct SqliteRecorderOptions {
  bool append = false;              // keep OUT's runs and add this one with the next run_id
  std::size_t batch_rows = 10'000;  // event/sample rows per transaction
  // What the file keeps (`--record`): rows of a kind the level leaves out are dropped as they
  // come, and the level is written to run.record.
  RecordLevel level = RecordLevel::kFull;
};

// One row of the queue_sample table (defined with the Recorder interface).
using QueueSampleRow = QueueSampleRecord;

class SqliteRecorder final : public Recorder {
 public:
  // Creates the temporary file (copying OUT into it when appending to an existing OUT) and the
  // schema, so an unwritable destination fails before the simulation starts. Throws
  // ReportWriteError: directory missing or not writable, OUT (when appending) not a capsim report
  // or of another schema version.
  explicit SqliteRecorder(std::filesystem::path out, SqliteRecorderOptions options = {});
  // Calls abort() unless end_run() completed.
  ~SqliteRecorder() override;
  SqliteRecorder(const SqliteRecorder&) = delete;
  SqliteRecorder& operator=(const SqliteRecorder&) = delete;

  RecordLevel level() const override { return options_.level; }

  // Inserts the run row (status 'running') and the node rows. Call once.
  void begin_run(const RunInfo& info, const World& world) override;
  // Written as they come, in transactions of `batch_rows` rows (nothing is held in memory). seq
  // counts events from 0 per run. Events, charges, pending reasons and explained cycles are
  // dropped below RecordLevel::kFull.
  void record_event(const EventRecord& e) override;
  void record_sample(const SampleRecord& s) override;
  void record_queue_sample(const QueueSampleRow& q) override;
  void record_pool_sample(const PoolSampleRecord& s) override;
  void record_charge(const ChargeRecord& c) override;
  void record_pending_reason(const PendingReasonRecord& r) override;
  void record_explain(const ExplainRecord& e) override;
  // Writes pods (from RecordLevel::kPodRows up) and summary, sets status/sim_seconds/wall_seconds
  // from `info`, and renames the temporary file onto OUT. Summary metric names must be unique.
  void end_run(const RunInfo& info, const std::vector<PodRecord>& pods,
               const Summary& summary) override;
  // Discards the run: closes and deletes the temporary file. OUT is not touched. Idempotent.
  void abort() noexcept;

  std::int64_t run_id() const { return run_id_; }  // 0 before begin_run
  const std::filesystem::path& out_path() const { return out_; }
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  enum class State { kOpen, kRunning, kFinished, kAborted };

  void open_temp();
  void copy_existing_out();
  void prepare_statements();
  void finalize_statements() noexcept;
  void row_written();
  void publish();
  [[noreturn]] void fail(std::string_view context, const std::exception& cause);
  template <typename Body>
  void guarded(std::string_view context, Body&& body);
  std::string_view pod_name(PodId pod) const;
  std::string_view node_name(NodeId node) const;

  std::filesystem::path out_;
  std::filesystem::path temp_;
  SqliteRecorderOptions options_;
  State state_ = State::kOpen;
  const World* world_ = nullptr;
  std::int64_t run_id_ = 0;
  std::int64_t next_seq_ = 0;
  std::size_t rows_in_batch_ = 0;

  SqliteDb db_;
  Statement insert_event_;
  Statement insert_sample_;
  Statement insert_pool_sample_;
  Statement insert_queue_sample_;
  Statement insert_charge_;
  Statement insert_pending_reason_;
  Statement insert_explain_attempt_, insert_explain_filter_, insert_explain_score_,
      insert_explain_node_, insert_explain_candidate_;
};

}  // namespace capsim
