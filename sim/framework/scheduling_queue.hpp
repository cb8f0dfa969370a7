// kube-scheduler's PriorityQueue: activeQ (ordered by the profile's QueueSort plugin), backoffQ
// (pods waiting out their exponential backoff after a failed attempt) and unschedulablePods
// (pods that failed and wait for a cluster change that could help them). A cluster event moves
// only the pods rejected by a plugin that registered for it; pods left unschedulable longer than
// max_unschedulable_duration are flushed back as upstream does. Times come from the caller.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/framework/framework.hpp"

namespace capsim::fw {

class SchedulingQueue {
 public:
  explicit SchedulingQueue(const Framework& fw);

  // A new (or recreated) pod: straight to activeQ.
  void add(PodId pod, std::int32_t priority, SimTime now);
  // The next pod to schedule, if activeQ has one. The pod stays known to the queue (in flight)
  // until done() or add_unschedulable() says how the attempt ended.
  std::optional<PodId> pop(SimTime now);
  // After a failed attempt: to unschedulablePods, remembering which plugins rejected it (the
  // queue timestamp is refreshed, so it goes behind pods of equal priority).
  void add_unschedulable(PodId pod, std::uint64_t rejector_plugins, SimTime now);
  // The attempt succeeded: forget the pod.
  void done(PodId pod);
  bool has_active() const { return active_count_ > 0; }

  // A cluster change: move the unschedulable pods it may help to activeQ (or backoffQ if they
  // are still backing off). Returns how many moved.
  std::size_t on_cluster_event(EventMask events, SimTime now);
  // Moves backoffQ pods whose backoff ended by `now` to activeQ.
  void flush_backoff(SimTime now);
  SimTime next_backoff_expiry() const;  // kEndOfTime when backoffQ is empty
  // Moves pods that have been unschedulable for longer than the profile's limit.
  void flush_unschedulable_leftover(SimTime now);
  // Removes a pod wherever it is (it gave up or was deleted).
  void remove(PodId pod);
  bool contains(PodId pod) const { return info_.count(pod) != 0; }

  std::size_t size() const { return info_.size() - in_flight_; }
  std::size_t active() const { return active_count_; }
  std::size_t backoff() const { return backoff_count_; }
  std::size_t unschedulable() const { return unschedulable_.size(); }
  SimDuration backoff_duration(std::int32_t attempts) const;

 private:
  enum class Where : std::uint8_t { kActive, kBackoff, kUnschedulable, kInFlight };
  struct Entry {
    QueuedPodInfo q;
    Where where = Where::kActive;
    std::int32_t attempts = 0;
    SimTime last_attempt = -1;
    SimTime unschedulable_since = -1;
    std::uint64_t rejectors = 0;
    std::uint64_t version = 0;  // heap entries with an older version are stale
  };
  struct HeapItem {
    QueuedPodInfo q;
    std::uint64_t version;
  };
  struct BackoffItem {
    SimTime expiry;
    std::uint64_t seq;
    PodId pod;
    std::uint64_t version;
  };

  void push_active(Entry& e);
  void push_backoff(Entry& e);
  void move_from_unschedulable(PodId pod, SimTime now);
  bool is_backing_off(const Entry& e, SimTime now) const;

  const Framework* fw_;
  std::map<PodId, Entry> info_;
  std::vector<HeapItem> active_heap_;
  std::vector<BackoffItem> backoff_heap_;
  std::map<PodId, bool> unschedulable_;  // ordered for deterministic moves
  std::size_t active_count_ = 0;
  std::size_t backoff_count_ = 0;
  std::size_t in_flight_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_version_ = 0;
};

}  // namespace capsim::fw
