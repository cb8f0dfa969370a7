// kube-scheduler's PriorityQueue: activeQ (ordered by the profile's QueueSort plugin), backoffQ
// (pods waiting out their exponential backoff after a failed attempt) and unschedulablePods
// (pods that failed and wait for a cluster change that could help them). A cluster event moves
// only the pods rejected by a plugin that registered for it; pods left unschedulable longer than
// max_unschedulable_duration are flushed back as upstream does. Times come from the caller.
#pragma once

#include <cstdint>
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
  bool contains(PodId pod) const { return find(pod) != nullptr; }

  std::size_t size() const { return entries_.size() - free_.size() - in_flight_; }
  std::size_t active() const { return active_count_; }
  std::size_t backoff() const { return backoff_count_; }
  std::size_t unschedulable() const { return unschedulable_count_; }
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
    std::uint64_t version = 0;  // heap and list entries with an older version are stale
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
  // A pod put in unschedulablePods, at the version add_unschedulable gave it.
  struct Parked {
    PodId pod;
    std::uint64_t version;
    friend bool operator<(const Parked& a, const Parked& b) {
      return a.pod != b.pod ? a.pod < b.pod : a.version < b.version;
    }
  };
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

  Entry* find(PodId pod);
  const Entry* find(PodId pod) const;
  Entry& insert(PodId pod);
  void erase(PodId pod);
  void push_active(Entry& e);
  void push_backoff(Entry& e);
  void move_from_unschedulable(Entry& e, SimTime now);
  bool is_backing_off(const Entry& e, SimTime now) const;
  // Moves the unschedulable pods for which `moves(entry)` holds, in pod order (upstream walks a
  // map; capsim keeps the order fixed so runs repeat). Returns how many moved.
  template <typename Pred>
  std::size_t move_unschedulable_if(Pred moves, SimTime now);

  const Framework* fw_;
  // The queue's pods: entries_ in slots (free_ lists the unused ones), found through slot_of_,
  // indexed by PodId. A backlog looks pods up on every attempt; a tree of them missed the cache
  // at each level.
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> slot_of_;
  std::vector<HeapItem> active_heap_;
  std::vector<BackoffItem> backoff_heap_;
  // unschedulablePods: a pod is in it when its entry says so at the version recorded here
  // (entries that no longer match are dropped when met). The first parked_sorted_ are sorted;
  // later failures are appended and merged in when the list is walked.
  std::vector<Parked> parked_;
  std::size_t parked_sorted_ = 0;
  std::size_t unschedulable_count_ = 0;
  std::size_t active_count_ = 0;
  std::size_t backoff_count_ = 0;
  std::size_t in_flight_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_version_ = 0;
};

}  // namespace capsim::fw
