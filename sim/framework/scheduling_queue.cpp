#include "sim/framework/scheduling_queue.hpp"

#include <algorithm>

#include "sim/backoff.hpp"
#include "sim/check.hpp"

namespace capsim::fw {

SchedulingQueue::SchedulingQueue(const Framework& fw) : fw_(&fw) {}

SimDuration SchedulingQueue::backoff_duration(std::int32_t attempts) const {
  // calculateBackoffDuration: initial * 2^(attempts-1), capped at the maximum.
  return exponential_backoff(fw_->config().pod_initial_backoff, fw_->config().pod_max_backoff,
                             attempts);
}

bool SchedulingQueue::is_backing_off(const Entry& e, SimTime now) const {
  if (e.attempts == 0 || e.last_attempt < 0) return false;
  return now < e.last_attempt + backoff_duration(e.attempts);
}

SchedulingQueue::Entry* SchedulingQueue::find(PodId pod) {
  if (pod >= slot_of_.size() || slot_of_[pod] == kNoSlot) return nullptr;
  return &entries_[slot_of_[pod]];
}

const SchedulingQueue::Entry* SchedulingQueue::find(PodId pod) const {
  if (pod >= slot_of_.size() || slot_of_[pod] == kNoSlot) return nullptr;
  return &entries_[slot_of_[pod]];
}

SchedulingQueue::Entry& SchedulingQueue::insert(PodId pod) {
  if (pod >= slot_of_.size()) slot_of_.resize(std::size_t{pod} + 1, kNoSlot);
  std::uint32_t slot = 0;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    entries_[slot] = Entry{};
  } else {
    slot = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  slot_of_[pod] = slot;
  return entries_[slot];
}

void SchedulingQueue::erase(PodId pod) {
  free_.push_back(slot_of_[pod]);
  slot_of_[pod] = kNoSlot;
}

void SchedulingQueue::push_active(Entry& e) {
  e.where = Where::kActive;
  e.version = ++next_version_;
  active_heap_.push_back({e.q, e.version});
  std::push_heap(
      active_heap_.begin(), active_heap_.end(),
      [this](const HeapItem& a, const HeapItem& b) { return fw_->queue_less(b.q, a.q); });
  ++active_count_;
}

void SchedulingQueue::push_backoff(Entry& e) {
  e.where = Where::kBackoff;
  e.version = ++next_version_;
  backoff_heap_.push_back(
      {e.last_attempt + backoff_duration(e.attempts), e.q.seq, e.q.pod, e.version});
  std::push_heap(backoff_heap_.begin(), backoff_heap_.end(),
                 [](const BackoffItem& a, const BackoffItem& b) {
                   return a.expiry > b.expiry || (a.expiry == b.expiry && a.seq > b.seq);
                 });
  ++backoff_count_;
}

void SchedulingQueue::add(PodId pod, std::int32_t priority, SimTime now) {
  CAPSIM_CHECK(!contains(pod), "a pod was added to the scheduling queue twice");
  Entry& e = insert(pod);
  e.q = QueuedPodInfo{pod, priority, now, next_seq_++};
  push_active(e);
}

void SchedulingQueue::add_unschedulable(PodId pod, std::uint64_t rejector_plugins, SimTime now) {
  Entry* found = find(pod);
  CAPSIM_CHECK(found != nullptr && found->where == Where::kInFlight,
               "a pod that was not being scheduled was marked unschedulable");
  Entry& e = *found;
  --in_flight_;
  e.where = Where::kUnschedulable;
  e.rejectors = rejector_plugins;
  e.unschedulable_since = now;
  e.q.timestamp = now;
  e.version = ++next_version_;
  parked_.push_back({pod, e.version});
  ++unschedulable_count_;
}

void SchedulingQueue::done(PodId pod) {
  const Entry* e = find(pod);
  CAPSIM_CHECK(e != nullptr && e->where == Where::kInFlight,
               "a pod that was not being scheduled was marked done");
  --in_flight_;
  erase(pod);
}

std::optional<PodId> SchedulingQueue::pop(SimTime now) {
  auto cmp = [this](const HeapItem& a, const HeapItem& b) { return fw_->queue_less(b.q, a.q); };
  while (!active_heap_.empty()) {
    std::pop_heap(active_heap_.begin(), active_heap_.end(), cmp);
    const HeapItem top = active_heap_.back();
    active_heap_.pop_back();
    Entry* e = find(top.q.pod);
    if (e == nullptr || e->version != top.version || e->where != Where::kActive) {
      continue;  // stale entry
    }
    --active_count_;
    e->where = Where::kInFlight;
    ++e->attempts;
    e->last_attempt = now;
    ++in_flight_;
    return top.q.pod;
  }
  return std::nullopt;
}

void SchedulingQueue::move_from_unschedulable(Entry& e, SimTime now) {
  if (is_backing_off(e, now)) {
    push_backoff(e);
  } else {
    push_active(e);
  }
}

template <typename Pred>
std::size_t SchedulingQueue::move_unschedulable_if(Pred moves, SimTime now) {
  if (unschedulable_count_ == 0) {
    parked_.clear();  // only stale entries left
    parked_sorted_ = 0;
    return 0;
  }
  if (parked_sorted_ < parked_.size()) {
    const auto mid = parked_.begin() + static_cast<std::ptrdiff_t>(parked_sorted_);
    std::sort(mid, parked_.end());
    std::inplace_merge(parked_.begin(), mid, parked_.end());
  }
  std::size_t kept = 0;
  std::size_t moved = 0;
  for (std::size_t i = 0; i < parked_.size(); ++i) {
    const Parked p = parked_[i];
    Entry* e = find(p.pod);
    if (e == nullptr || e->where != Where::kUnschedulable || e->version != p.version) continue;
    if (moves(*e)) {
      --unschedulable_count_;
      move_from_unschedulable(*e, now);
      ++moved;
    } else {
      parked_[kept++] = p;
    }
  }
  parked_.resize(kept);
  parked_sorted_ = kept;
  return moved;
}

std::size_t SchedulingQueue::on_cluster_event(EventMask events, SimTime now) {
  if (unschedulable_count_ == 0) return 0;
  const std::uint64_t interested = fw_->plugins_interested_in(events);
  // A pod rejected without a plugin to blame (an error) retries on any event.
  return move_unschedulable_if(
      [interested](const Entry& e) { return e.rejectors == 0 || (e.rejectors & interested) != 0; },
      now);
}

void SchedulingQueue::flush_backoff(SimTime now) {
  auto cmp = [](const BackoffItem& a, const BackoffItem& b) {
    return a.expiry > b.expiry || (a.expiry == b.expiry && a.seq > b.seq);
  };
  while (!backoff_heap_.empty() && backoff_heap_.front().expiry <= now) {
    std::pop_heap(backoff_heap_.begin(), backoff_heap_.end(), cmp);
    const BackoffItem top = backoff_heap_.back();
    backoff_heap_.pop_back();
    Entry* e = find(top.pod);
    if (e == nullptr || e->version != top.version || e->where != Where::kBackoff) continue;
    --backoff_count_;
    push_active(*e);
  }
}

SimTime SchedulingQueue::next_backoff_expiry() const {
  // Stale entries may sit on top; they only make the wake-up early, never late.
  return backoff_heap_.empty() ? kEndOfTime : backoff_heap_.front().expiry;
}

void SchedulingQueue::flush_unschedulable_leftover(SimTime now) {
  const SimDuration limit = fw_->config().max_unschedulable_duration;
  if (limit <= 0) return;
  move_unschedulable_if(
      [now, limit](const Entry& e) { return now - e.unschedulable_since > limit; }, now);
}

void SchedulingQueue::remove(PodId pod) {
  const Entry* e = find(pod);
  if (e == nullptr) return;
  switch (e->where) {
    case Where::kActive:
      --active_count_;
      break;
    case Where::kBackoff:
      --backoff_count_;
      break;
    case Where::kUnschedulable:
      --unschedulable_count_;  // its parked_ entry goes stale
      break;
    case Where::kInFlight:
      --in_flight_;
      break;
  }
  erase(pod);  // heap entries become stale
}

}  // namespace capsim::fw
