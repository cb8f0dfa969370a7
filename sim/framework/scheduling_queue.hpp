// kube-scheduler's PriorityQueue: activeQ (ordered by the profile's QueueSort plugin), backoffQ
// (pods waiting out their exponential backoff after a failed attempt) and unschedulablePods
// (pods that failed and wait for a cluster change that could help them). A cluster event moves
// only the pods rejected by a plugin that registered for it; pods left unschedulable longer than
// max_unschedulable_duration are flushed back as upstream does. Times come from the caller.
#pragma once

#include <cstdint>
#include <functional>
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
  bool contains(PodId pod) const {
    return find(pod) != nullptr || (pod < grouped_.size() && grouped_[pod] != 0);
  }

  // --- Bulk retries (docs/scheduling.md, "A backlog"). ---
  // Pods whose backoff has reached its cap and that failed alike at the same instant behave
  // alike until one of them can be placed: the same cluster events move them, their backoffs
  // end together, and a retry of one on an unchanged cluster fails as it did. Such pods are
  // kept as one group: the queue moves the group, and the Simulation fails a whole group with
  // one decision when its class is known to fail on the cluster as it stands. A group pops
  // (pop_any) with the key of its first member (lowest seq; members share priority and
  // timestamp), so the queue order is that of its members.
  // What tells alike failures apart later: the events that move them (those their rejecting
  // plugins registered for) and whether no node could ever take them.
  struct Signature {
    EventMask moved_by = 0;
    bool unresolvable = false;
    bool operator==(const Signature&) const = default;
  };
  static constexpr std::uint32_t kNoGroup = ~std::uint32_t{0};
  static constexpr std::uint32_t kNoClass = ~std::uint32_t{0};
  struct Popped {
    QueuedPodInfo q;                 // a pod's key, or a group's first member's
    std::uint32_t group = kNoGroup;  // kNoGroup: q.pod is a pod in flight (as pop() returns)
  };
  void enable_groups();
  bool groups_enabled() const { return groups_on_; }
  // pop(), or a group in activeQ whose first member comes next.
  std::optional<Popped> pop_any(SimTime now);
  std::uint32_t group_class(std::uint32_t g) const { return groups_[g].cls; }
  // The group's first member leaves it to be attempted as a pod in flight (as pop() leaves a
  // pod); the rest of the group goes back to activeQ. Returns the member and the attempts the
  // group made for it that its PodState has not counted yet.
  std::pair<PodId, std::int64_t> take_member(std::uint32_t g, SimTime now);
  // Every member of the group fails in this cycle with `sig`; returns how many members.
  std::size_t defer(std::uint32_t g, Signature sig);
  // Deferred groups with members after `key` (which was attempted and placed after the group
  // was deferred): `split(g, key)` gives them back to activeQ when their failure would not be
  // the same after the placement, and returns how many (their attempts are still to come).
  void for_each_straddling(const QueuedPodInfo& key,
                           const std::function<void(std::uint32_t g, Signature sig, PodId any)>& f);
  std::size_t split(std::uint32_t g, const QueuedPodInfo& key);
  // Whether some deferred group has members after `key`: pods that are, as far as the rest of
  // the run can tell, still in activeQ.
  bool deferred_after(const QueuedPodInfo& key) const;
  // Ends the cycle: the deferred groups failed now; alike groups that failed at the same time
  // become one.
  void finish_deferred(SimTime now);
  // add_unschedulable for a pod of class `cls` that may join a group (kNoClass: it may not)
  // of pods that failed now with `sig`.
  void add_unschedulable(PodId pod, std::uint64_t rejector_plugins, SimTime now, std::uint32_t cls,
                         Signature sig);
  // Every grouped pod, with the attempts owed to its PodState and its last failure.
  void for_each_member(const std::function<void(PodId, std::int64_t, Signature)>& f) const;
  std::size_t group_count() const { return groups_.size() - free_groups_.size(); }

  std::size_t size() const { return active_count_ + backoff_count_ + unschedulable_count_; }
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
    std::uint32_t group = kNoGroup;
  };
  struct BackoffItem {
    SimTime expiry;
    std::uint64_t seq;
    PodId pod;
    std::uint64_t version;
    std::uint32_t group = kNoGroup;
  };
  enum class GroupState : std::uint8_t { kFree, kActive, kBackoff, kUnschedulable, kDeferred };
  struct Group {
    std::uint32_t cls = kNoClass;
    std::int32_t priority = 0;
    SimTime ts = 0;  // its members' last attempt, queue timestamp and unschedulable_since
    Signature sig;
    GroupState state = GroupState::kFree;
    std::uint64_t version = 0;
    PodId root = kNoPod;  // pairing heap of the members by seq
    std::uint64_t max_seq = 0;
    std::size_t size = 0;
    std::int64_t failures = 0;  // whole-group failures so far (members' owed attempts)
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
  template <typename Pred>
  std::size_t move_groups_if(Pred moves, SimTime now);

  // Groups.
  std::uint32_t new_group(std::uint32_t cls, std::int32_t priority, SimTime ts, Signature sig);
  void free_group(std::uint32_t g);
  // Puts a group in another state (its counts follow) under a new version.
  Group& move_group(std::uint32_t g, GroupState to);
  void push_group_active(std::uint32_t g);
  void push_group_backoff(std::uint32_t g);
  void park_group(std::uint32_t g);
  void count_group(const Group& g, std::ptrdiff_t sign);
  std::uint64_t seq_of(PodId p) const { return member_seq_[p]; }
  PodId meld(PodId a, PodId b);
  PodId pop_root(PodId root);
  void add_member(std::uint32_t g, PodId p, std::uint64_t seq, std::int64_t owed);
  // Moves every member of `from` into `into` (the smaller's owed attempts are re-based).
  void merge_groups(std::uint32_t into, std::uint32_t from);
  template <typename F>
  void visit_members(PodId root, F f) const;
  // The group that failed at `now` with (class, priority, signature) and is still parked as it
  // failed, if any (entries of groups moved since are dropped).
  std::optional<std::uint32_t> live_failed(std::uint32_t cls, std::int32_t priority, Signature sig,
                                           SimTime now);
  // That group, or a new one parked for the next failures alike at `now`.
  std::uint32_t failed_group(std::uint32_t cls, std::int32_t priority, Signature sig, SimTime now);

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

  bool groups_on_ = false;
  std::int32_t capped_attempts_ = 1;  // attempts from which the backoff is pod_max_backoff
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_groups_;
  struct ParkedGroup {
    std::uint32_t group;
    std::uint64_t version;
  };
  std::vector<ParkedGroup> parked_groups_;  // entries whose version moved on are stale
  std::vector<std::uint32_t> deferred_;
  // Per pod: whether it is in a group, and for members their seq, pairing-heap links and the
  // group's failure count their owed attempts are counted from.
  std::vector<std::uint8_t> grouped_;
  std::vector<std::uint64_t> member_seq_;
  std::vector<PodId> child_, sibling_;
  std::vector<std::int64_t> join_;
  std::vector<PodId> scratch_;
  mutable std::vector<PodId> visit_stack_;  // visit_members' room
  std::vector<PodId> split_head_, split_tail_;
  struct FailedNow {
    std::uint32_t cls;
    std::int32_t priority;
    Signature sig;
    std::uint32_t group;
    std::uint64_t version;
  };
  SimTime failed_now_time_ = -1;
  std::vector<FailedNow> failed_now_;
};

}  // namespace capsim::fw
