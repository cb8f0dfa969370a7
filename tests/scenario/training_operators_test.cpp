// scenarios/training-operators end to end through the real binary: a JobSet, a PyTorchJob and a
// LeaderWorkerSet, unchanged, under Kueue quotas. Kueue admits each object (a LeaderWorkerSet:
// each group) whole: the JobSet that fits starts all its pods at once; the one whose Jobs each
// fit but whose whole does not never starts; the PyTorchJob waits for the quota and then starts
// its master and workers together; the serving groups run to the horizon.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"
#include "reports/run_reader.hpp"

namespace capsim {

namespace {

struct PodRow {
  std::string job, status, owner_kind;
  double start = -1, end = -1;
};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_SUITE("scenario") {
  TEST_CASE("training-operators: JobSet, PyTorchJob and LeaderWorkerSet are admitted whole") {
    testing::ScratchDir dir("training-operators");
    const auto r = testing::run_capsim(
        "run '" + testing::source_path("scenarios/training-operators/scenario.yaml") + "' -o '" +
            dir.file("t.db") + "'",
        dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    RunReader reader(dir.file("t.db"));
    auto st = reader.db().prepare(
        "SELECT pod, coalesce(job, ''), status, coalesce(owner_kind, ''), "
        "coalesce(start_s, -1), coalesce(end_s, -1) FROM pod WHERE run_id = 1");
    std::map<std::string, PodRow> pods;
    while (st.step()) {
      pods[st.column_text(0)] = {st.column_text(1), st.column_text(2), st.column_text(3),
                                 st.column_double(4), st.column_double(5)};
    }
    std::map<std::string, std::vector<const PodRow*>> by_object;
    for (const auto& [name, row] : pods) {
      for (const char* object : {"pretrain-", "sweep-", "finetune-", "llm-"}) {
        if (starts_with(name, object)) by_object[object].push_back(&row);
      }
    }
    // pretrain: 1 driver + 2 Jobs x 2 workers, all started at once and done after 3 h.
    REQUIRE(by_object["pretrain-"].size() == 5);
    std::set<double> pretrain_starts;
    for (const PodRow* p : by_object["pretrain-"]) {
      CHECK(p->status == "completed");
      pretrain_starts.insert(p->start);
    }
    REQUIRE(pretrain_starts.size() == 1);
    const double pretrain_start = *pretrain_starts.begin();
    CHECK(pods["pretrain-workers-1-1"].job == "pretrain-workers-1");
    CHECK(pods["pretrain-workers-1-1"].owner_kind == "Job");  // the owner `job` names

    // sweep: 3 Jobs x 2 pods x 4 GPUs = 24 GPUs over a 16-GPU queue: never admitted, although
    // each of its Jobs (8 GPUs) would fit.
    REQUIRE(by_object["sweep-"].size() == 6);
    for (const PodRow* p : by_object["sweep-"]) {
      CHECK(p->status == "pending");
      CHECK(p->start < 0);
    }

    // finetune: master + 3 workers (16 GPUs) wait for pretrain's quota, then start together.
    REQUIRE(by_object["finetune-"].size() == 4);
    std::set<double> ft_starts;
    for (const PodRow* p : by_object["finetune-"]) {
      CHECK(p->status == "completed");
      ft_starts.insert(p->start);
    }
    REQUIRE(ft_starts.size() == 1);
    CHECK(*ft_starts.begin() >= pretrain_start + 3 * 3600.0);
    CHECK(pods.count("finetune-master-0") == 1);
    CHECK(pods.count("finetune-worker-2") == 1);

    // llm: 2 groups of a leader and a worker, serving to the horizon.
    REQUIRE(by_object["llm-"].size() == 4);
    for (const PodRow* p : by_object["llm-"])
      CHECK(p->status == "running");
    CHECK(pods.count("llm-1-1") == 1);
    CHECK(pods["llm-1-1"].job == "llm");
    CHECK(pods["llm-1-1"].owner_kind == "LeaderWorkerSet");
  }
}

}  // namespace capsim
