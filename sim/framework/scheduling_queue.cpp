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
  Entry e;
  e.q = QueuedPodInfo{pod, priority, now, next_seq_++};
  auto [it, ok] = info_.emplace(pod, e);
  push_active(it->second);
}

void SchedulingQueue::add_unschedulable(PodId pod, std::uint64_t rejector_plugins, SimTime now) {
  auto it = info_.find(pod);
  CAPSIM_CHECK(it != info_.end() && it->second.where == Where::kInFlight,
               "a pod that was not being scheduled was marked unschedulable");
  Entry& e = it->second;
  --in_flight_;
  e.where = Where::kUnschedulable;
  e.rejectors = rejector_plugins;
  e.unschedulable_since = now;
  e.q.timestamp = now;
  e.version = ++next_version_;
  unschedulable_.emplace(pod, true);
}

void SchedulingQueue::done(PodId pod) {
  auto it = info_.find(pod);
  CAPSIM_CHECK(it != info_.end() && it->second.where == Where::kInFlight,
               "a pod that was not being scheduled was marked done");
  --in_flight_;
  info_.erase(it);
}

std::optional<PodId> SchedulingQueue::pop(SimTime now) {
  auto cmp = [this](const HeapItem& a, const HeapItem& b) { return fw_->queue_less(b.q, a.q); };
  while (!active_heap_.empty()) {
    std::pop_heap(active_heap_.begin(), active_heap_.end(), cmp);
    const HeapItem top = active_heap_.back();
    active_heap_.pop_back();
    auto it = info_.find(top.q.pod);
    if (it == info_.end() || it->second.version != top.version ||
        it->second.where != Where::kActive) {
      continue;  // stale entry
    }
    --active_count_;
    Entry& e = it->second;
    e.where = Where::kInFlight;
    ++e.attempts;
    e.last_attempt = now;
    ++in_flight_;
    return top.q.pod;
  }
  return std::nullopt;
}

void SchedulingQueue::move_from_unschedulable(PodId pod, SimTime now) {
  Entry& e = info_.at(pod);
  if (is_backing_off(e, now)) {
    push_backoff(e);
  } else {
    push_active(e);
  }
}

std::size_t SchedulingQueue::on_cluster_event(EventMask events, SimTime now) {
  if (unschedulable_.empty()) return 0;
  const std::uint64_t interested = fw_->plugins_interested_in(events);
  std::size_t moved = 0;
  for (auto it = unschedulable_.begin(); it != unschedulable_.end();) {
    const Entry& e = info_.at(it->first);
    // A pod rejected without a plugin to blame (an error) retries on any event.
    if (e.rejectors == 0 || (e.rejectors & interested) != 0) {
      move_from_unschedulable(it->first, now);
      it = unschedulable_.erase(it);
      ++moved;
    } else {
      ++it;
    }
  }
  return moved;
}

void SchedulingQueue::flush_backoff(SimTime now) {
  auto cmp = [](const BackoffItem& a, const BackoffItem& b) {
    return a.expiry > b.expiry || (a.expiry == b.expiry && a.seq > b.seq);
  };
  while (!backoff_heap_.empty() && backoff_heap_.front().expiry <= now) {
    std::pop_heap(backoff_heap_.begin(), backoff_heap_.end(), cmp);
    const BackoffItem top = backoff_heap_.back();
    backoff_heap_.pop_back();
    auto it = info_.find(top.pod);
    if (it == info_.end() || it->second.version != top.version ||
        it->second.where != Where::kBackoff) {
      continue;
    }
    --backoff_count_;
    push_active(it->second);
  }
}

SimTime SchedulingQueue::next_backoff_expiry() const {
  // Stale entries may sit on top; they only make the wake-up early, never late.
  return backoff_heap_.empty() ? kEndOfTime : backoff_heap_.front().expiry;
}

void SchedulingQueue::flush_unschedulable_leftover(SimTime now) {
  const SimDuration limit = fw_->config().max_unschedulable_duration;
  if (limit <= 0) return;
  for (auto it = unschedulable_.begin(); it != unschedulable_.end();) {
    const Entry& e = info_.at(it->first);
    if (now - e.unschedulable_since > limit) {
      move_from_unschedulable(it->first, now);
      it = unschedulable_.erase(it);
    } else {
      ++it;
    }
  }
}

void SchedulingQueue::remove(PodId pod) {
  auto it = info_.find(pod);
  if (it == info_.end()) return;
  switch (it->second.where) {
    case Where::kActive:
      --active_count_;
      break;
    case Where::kBackoff:
      --backoff_count_;
      break;
    case Where::kUnschedulable:
      unschedulable_.erase(pod);
      break;
    case Where::kInFlight:
      --in_flight_;
      break;
  }
  info_.erase(it);  // heap entries become stale
}

}  // namespace capsim::fw
