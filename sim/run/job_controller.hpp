// The Job controller of a run (batch/v1 Job semantics, as capsim models them): the one place a
// Job learns what became of its pods and decides whether to create more. It keeps each Job's
// active, succeeded and failed counts and creates pods from the Job's template while
// `parallelism` and `completions` allow: at the Job's arrival, after each success, and after a
// failure while the Job's failures stay within its template's max_restarts (backoffLimit). A pod
// deleted after preemption counts as failed but is not replaced. Pods are appended to the World
// (named "<job>-<i>", arriving now) and handed to the caller one at a time, so each is pending
// before the next is made. Deployments, JobSets and CronJobs plug in beside it.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/world.hpp"

namespace capsim {

class JobController {
 public:
  enum class Outcome : std::uint8_t {
    kSucceeded,  // the pod completed: the Job may need another
    kFailed,     // the pod failed: replaced while the Job's failures allow
    kDeleted,    // preempted and not restarted: a failure, never replaced
  };

  JobController(World& world, Cluster& cluster)
      : world_(&world), cluster_(&cluster), jobs_(world.jobs.size()) {}

  // Creates the pods the Job wants now; `admit(PodId)` makes each one pending.
  template <typename Admit>
  void reconcile(JobId job, SimTime now, Admit&& admit) {
    const JobSpec& j = world_->jobs[job];
    JobState& js = jobs_[job];
    while (js.active < j.parallelism && js.succeeded + js.active < j.completions) {
      PodSpec p = j.pod_template;
      p.name = fmt::format("{}-{}", j.name, js.created);
      p.job = job;
      p.job_name = j.name;
      p.arrival = now;
      world_->pods.push_back(std::move(p));
      cluster_->sync_pod_table();
      ++js.created;
      ++js.active;
      admit(static_cast<PodId>(world_->pods.size() - 1));
    }
  }

  // A pod of a Job ended (nothing happens for a pod without a Job).
  template <typename Admit>
  void on_pod_ended(PodId pod, Outcome outcome, SimTime now, Admit&& admit) {
    const JobId job = cluster_->spec(pod).job;
    if (job == kNoJob) return;
    JobState& js = jobs_[job];
    --js.active;
    if (outcome == Outcome::kSucceeded) {
      ++js.succeeded;
      reconcile(job, now, admit);
      return;
    }
    ++js.failed;
    if (outcome == Outcome::kFailed && js.failed <= world_->jobs[job].pod_template.max_restarts)
      reconcile(job, now, admit);
  }

 private:
  struct JobState {
    std::int32_t active = 0, succeeded = 0, failed = 0, created = 0;
  };
  World* world_;
  Cluster* cluster_;
  std::vector<JobState> jobs_;
};

}  // namespace capsim
