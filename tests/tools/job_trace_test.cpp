// Job-level traces: capsim's job CSV and the public Helios and Philly job logs (small synthetic
// files in their shapes under tests/data/traces) become pods, one per node, multi-node jobs gangs,
// each in the LocalQueue its virtual cluster or user maps to.
#include "tools/loaders/job_trace.hpp"

#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "models/gpu_catalog.hpp"
#include "sim/world.hpp"
#include "tools/loaders/k8s_manifests.hpp"

#ifndef CAPSIM_SOURCE_DIR
#define CAPSIM_SOURCE_DIR "."
#endif

namespace capsim {
namespace {
// Every file these tests read comes from disk; the reads it records are not looked at.
RealFiles disk;

const std::string kData = std::string(CAPSIM_SOURCE_DIR) + "/tests/data/traces/";

const PodSpec* find_pod(const World& w, const std::string& name) {
  for (const PodSpec& p : w.pods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("capsim job rows become one pod per node, multi-node jobs gangs, queues mapped") {
  World w;
  WorldBuilder b(w, GpuCatalog::builtin());
  JobTraceRead read = read_job_trace(disk, "capsim-jobs", kData + "jobs.csv");
  REQUIRE(read.rows.size() == 5);
  JobTraceOptions opt;
  opt.queue_map = {{"vision", "team-a"}, {"nlp", "team-b"}};
  opt.default_queue = "batch";
  CHECK(add_job_trace(read.rows, b, opt) == 8);  // 2 + 1 + 1 + 1 + 3 pods
  b.finalize();
  REQUIRE(w.gangs.size() == 2);  // pretrain-7 (2 nodes) and sweep-12 (3 nodes)

  struct Case {
    const char* pod;
    const char* want_queue;
    std::int64_t want_gpus, want_cpu_milli;
    double want_submit_s, want_duration_s;
    bool want_gang, want_fails;
  };
  const Case cases[] = {
      // 16 GPUs, 64 cpu, 1Ti over 2 nodes: 8 GPUs, 32 cpu, 512Gi each; vision -> team-a.
      {"pretrain-7-0", "team-a", 8, 32000, 0, 36000, true, false},
      {"pretrain-7-1", "team-a", 8, 32000, 0, 36000, true, false},
      // One node: the pod keeps the job's name; nlp -> team-b; 2h30m = 9000 s.
      {"finetune-3", "team-b", 4, 16000, 90, 9000, false, false},
      // An explicit queue wins over the mapping.
      {"eval-1", "team-c", 1, 0, 300, 600, false, true},
      // No vc; user dave is not mapped: the default queue.
      {"etl-9", "batch", 0, 8000, 300, 1800, false, false},
      // 24 GPUs over 3 nodes: 8 each; cancelled counts as failed.
      {"sweep-12-2", "team-a", 8, 0, 3600, 2700, true, true},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.pod));
    const PodSpec* p = find_pod(w, c.pod);
    REQUIRE(p != nullptr);
    CHECK(p->queue == c.want_queue);
    CHECK(p->requests.get(kNvidiaGpu) == c.want_gpus);
    CHECK(p->requests.get(kCpu) == c.want_cpu_milli);
    CHECK(to_seconds(p->arrival) == c.want_submit_s);
    CHECK(to_seconds(p->duration) == c.want_duration_s);
    CHECK((p->gang != kNoGang) == c.want_gang);
    CHECK(p->fails == c.want_fails);
  }
  CHECK(find_pod(w, "pretrain-7-0")->requests.get(kMemory) == 512LL << 30);
  CHECK(w.gangs[find_pod(w, "sweep-12-0")->gang].min_member == 3);
  CHECK(label_value(find_pod(w, "eval-1")->labels, "kueue.x-k8s.io/priority-class", w.strings) ==
        "urgent");
  CHECK(find_pod(w, "finetune-3")->gpu_models.size() == 2);
}

TEST_CASE("a Helios job log is read with its states, node counts and times") {
  // Submissions are shifted so the first (00:00:07) is at 0.
  JobTraceRead read = read_job_trace(disk, "helios", kData + "helios_cluster_log.csv");
  REQUIRE(read.rows.size() == 6);
  CHECK(read.skipped == std::map<std::string, std::size_t>{{"state RUNNING", 1}});
  struct Case {
    std::size_t row;
    const char* want_job;
    double want_submit_s, want_duration_s;
    std::int64_t want_gpus;
    std::int32_t want_nodes;
    bool want_failed;
  };
  const Case cases[] = {
      {0, "6yKbEnVp", 0, 8000, 8, 1, false},
      {1, "Kq8wL2m4", 60, 36000, 16, 2, false},  // 2 nodes: a gang of 2 x 8
      {2, "Zp0dQ7sa", 150, 30, 1, 1, true},      // FAILED
      {3, "Rf3vB8nq", 173, 600, 0, 1, false},    // a CPU job
      {4, "Mx2cA9ke", 233, 1800, 2, 1, true},    // CANCELLED; no duration: 00:40 - 00:10
      {5, "Hj5eW3cz", 393, 3600, 12, 2, true},   // TIMEOUT
  };
  for (const Case& c : cases) {
    const JobTraceRow& r = read.rows[c.row];
    CAPTURE(r.job);
    CHECK(r.job == c.want_job);
    CHECK(to_seconds(r.submit) == c.want_submit_s);
    CHECK(to_seconds(r.duration) == c.want_duration_s);
    CHECK(r.gpus == c.want_gpus);
    CHECK(r.nodes == c.want_nodes);
    CHECK(r.failed == c.want_failed);
  }
  CHECK(read.rows[0].vc == "vcEwI");
  CHECK(read.rows[0].cpu_milli == 32000);
}

TEST_CASE("a Philly job log uses each job's last complete attempt") {
  // Submissions from 2017-10-07 01:11:39.
  JobTraceRead read = read_job_trace(disk, "philly", kData + "philly_cluster_job_log.json");
  REQUIRE(read.rows.size() == 3);
  CHECK(read.skipped ==
        std::map<std::string, std::size_t>{{"no attempt with a start and an end time", 2}});
  // 14199: the second attempt, 10-07 01:13:30 to 10-09 06:53:12 = 2d 5h 39m 42s = 193182 s.
  CHECK(read.rows[0].job == "application_1506638472019_14199");
  CHECK(to_seconds(read.rows[0].duration) == 193182);
  CHECK(read.rows[0].gpus == 8);
  CHECK(!read.rows[0].failed);
  // 14200: killed, on two machines with 4 and 8 GPUs, 1h30m, submitted 48 min after the first.
  CHECK(read.rows[1].gpus_per_node == std::vector<std::int64_t>{4, 8});
  CHECK(read.rows[1].nodes == 2);
  CHECK(to_seconds(read.rows[1].submit) == 2880);
  CHECK(to_seconds(read.rows[1].duration) == 5400);
  CHECK(read.rows[1].failed);
  CHECK(read.rows[1].vc == "b436b2");
  // 14203: 22:47:21 after the first submission.
  CHECK(to_seconds(read.rows[2].submit) == 82041);

  // Written as capsim's job CSV and read back, nothing changes (the 4|8 split included).
  std::ostringstream csv;
  write_job_trace_csv(csv, read.rows);
  JobTraceRead again = read_job_trace_text("capsim-jobs", csv.str(), "converted.csv");
  REQUIRE(again.rows.size() == read.rows.size());
  for (std::size_t i = 0; i < read.rows.size(); ++i) {
    CHECK(again.rows[i].job == read.rows[i].job);
    CHECK(again.rows[i].submit == read.rows[i].submit);
    CHECK(again.rows[i].duration == read.rows[i].duration);
    CHECK(again.rows[i].gpus == read.rows[i].gpus);
    CHECK(again.rows[i].nodes == read.rows[i].nodes);
    CHECK(again.rows[i].vc == read.rows[i].vc);
    CHECK(again.rows[i].failed == read.rows[i].failed);
  }
  CHECK(again.rows[1].gpus_per_node == std::vector<std::int64_t>{4, 8});
}

TEST_CASE("mistakes in a job trace name the file, line and column") {
  struct Case {
    const char* name;
    const char* format;
    const char* text;
    int want_line;
    const char* want_message;
  };
  const Case cases[] = {
      {"an unknown column", "capsim-jobs", "job,submit,duration,gpu\nj,0,1h,1\n", 1,
       "unknown column 'gpu' (did you mean 'gpus'"},
      {"a missing required column", "capsim-jobs", "job,submit\nj,0\n", 1,
       "missing required column 'duration'"},
      {"fewer GPUs than nodes", "capsim-jobs", "job,submit,duration,gpus,nodes\nj,0,1h,1,2\n", 2,
       "1 GPUs cannot be spread over 2 nodes"},
      {"an unknown status", "capsim-jobs", "job,submit,duration,status\nj,0,1h,done\n", 2,
       "unknown status 'done'"},
      {"a Helios log without its columns", "helios", "id,gpus\n1,2\n", 1,
       "missing column 'job_id'"},
      {"a Helios time that is not a time", "helios",
       "job_id,gpu_num,submit_time,duration\nx,1,yesterday,10\n", 2, "'yesterday' is not a time"},
      {"a Helios duration of 250 million years, whose microseconds overflow (found by the traces "
       "fuzz target)",
       "helios", "job_id,gpu_num,submit_time,duration\nx,1,2020-04-01 00:00:07,8011111111111100\n",
       2, "'8011111111111100' is not a number of seconds (0 to 1e11)"},
      {"a Helios submit time in seconds past 1e11", "helios",
       "job_id,gpu_num,submit_time,duration\nx,1,1e300,10\n", 2, "'1e300' is not a time"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.name));
    try {
      (void)read_job_trace_text(c.format, c.text, "t.csv");
      FAIL("no error");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.where().file == "t.csv");
      CHECK(e.where().line == c.want_line);
      CHECK(std::string(e.message()).find(c.want_message) != std::string::npos);
    }
  }
}

}  // namespace capsim
