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
  const std::optional<Popped> p = pop_any(now);
  if (!p) return std::nullopt;
  CAPSIM_CHECK(p->group == kNoGroup, "pop() met a group: its caller must use pop_any()");
  return p->q.pod;
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
  std::size_t moved = move_unschedulable_if(
      [interested](const Entry& e) { return e.rejectors == 0 || (e.rejectors & interested) != 0; },
      now);
  if (!parked_groups_.empty()) {
    moved +=
        move_groups_if([events](const Group& g) { return (g.sig.moved_by & events) != 0; }, now);
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
    if (top.group != kNoGroup) {
      if (groups_[top.group].state == GroupState::kBackoff &&
          groups_[top.group].version == top.version) {
        push_group_active(top.group);
      }
      continue;
    }
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
  if (!parked_groups_.empty())
    move_groups_if([now, limit](const Group& g) { return now - g.ts > limit; }, now);
}

void SchedulingQueue::remove(PodId pod) {
  // Bulk retries are only on where nothing removes a pending pod (Simulation::bulk_retries_ok).
  CAPSIM_CHECK(pod >= grouped_.size() || grouped_[pod] == 0,
               "a pod in a bulk-retry group was removed from the scheduling queue");
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

// --- Bulk retries ---------------------------------------------------------------------------

namespace capsim::fw {

void SchedulingQueue::enable_groups() {
  groups_on_ = true;
  // The members of a group all back off for pod_max_backoff: from this many attempts on.
  capped_attempts_ = 1;
  while (capped_attempts_ < 64 &&
         backoff_duration(capped_attempts_) < fw_->config().pod_max_backoff) {
    ++capped_attempts_;
  }
}

void SchedulingQueue::count_group(const Group& g, std::ptrdiff_t sign) {
  // The pod counts a group's members are in: activeQ, backoffQ, unschedulablePods, in flight.
  std::size_t* const counts[] = {nullptr, &active_count_, &backoff_count_, &unschedulable_count_,
                                 &in_flight_};
  std::size_t* c = counts[static_cast<std::size_t>(g.state)];
  if (c != nullptr) *c += static_cast<std::size_t>(sign) * g.size;  // wraps for -1, as intended
}

std::uint32_t SchedulingQueue::new_group(std::uint32_t cls, std::int32_t priority, SimTime ts,
                                         Signature sig) {
  std::uint32_t g = 0;
  if (!free_groups_.empty()) {
    g = free_groups_.back();
    free_groups_.pop_back();
  } else {
    g = static_cast<std::uint32_t>(groups_.size());
    groups_.emplace_back();
  }
  Group& G = groups_[g];
  G = Group{};
  G.cls = cls;
  G.priority = priority;
  G.ts = ts;
  G.sig = sig;
  G.version = ++next_version_;
  return g;
}

void SchedulingQueue::free_group(std::uint32_t g) {
  Group& G = groups_[g];
  count_group(G, -1);
  G.state = GroupState::kFree;
  G.root = kNoPod;
  G.size = 0;
  G.version = ++next_version_;  // its heap and list entries go stale
  free_groups_.push_back(g);
}

SchedulingQueue::Group& SchedulingQueue::move_group(std::uint32_t g, GroupState to) {
  Group& G = groups_[g];
  count_group(G, -1);
  G.state = to;
  count_group(G, +1);
  G.version = ++next_version_;  // its older heap and list entries go stale
  return G;
}

void SchedulingQueue::push_group_active(std::uint32_t g) {
  const Group& G = move_group(g, GroupState::kActive);
  active_heap_.push_back({QueuedPodInfo{G.root, G.priority, G.ts, seq_of(G.root)}, G.version, g});
  std::push_heap(
      active_heap_.begin(), active_heap_.end(),
      [this](const HeapItem& a, const HeapItem& b) { return fw_->queue_less(b.q, a.q); });
}

void SchedulingQueue::push_group_backoff(std::uint32_t g) {
  const Group& G = move_group(g, GroupState::kBackoff);
  backoff_heap_.push_back(
      {G.ts + backoff_duration(capped_attempts_), seq_of(G.root), G.root, G.version, g});
  std::push_heap(backoff_heap_.begin(), backoff_heap_.end(),
                 [](const BackoffItem& a, const BackoffItem& b) {
                   return a.expiry > b.expiry || (a.expiry == b.expiry && a.seq > b.seq);
                 });
}

void SchedulingQueue::park_group(std::uint32_t g) {
  const Group& G = move_group(g, GroupState::kUnschedulable);
  parked_groups_.push_back({g, G.version});
}

PodId SchedulingQueue::meld(PodId a, PodId b) {
  if (a == kNoPod) return b;
  if (b == kNoPod) return a;
  if (seq_of(b) < seq_of(a)) std::swap(a, b);
  sibling_[b] = child_[a];
  child_[a] = b;
  return a;
}

PodId SchedulingQueue::pop_root(PodId root) {
  // Two-pass pairing of the root's children.
  scratch_.clear();
  for (PodId c = child_[root]; c != kNoPod;) {
    const PodId next = sibling_[c];
    sibling_[c] = kNoPod;
    scratch_.push_back(c);
    c = next;
  }
  child_[root] = kNoPod;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < scratch_.size(); i += 2) {
    scratch_[pairs++] = i + 1 < scratch_.size() ? meld(scratch_[i], scratch_[i + 1]) : scratch_[i];
  }
  PodId r = kNoPod;
  for (std::size_t i = pairs; i-- > 0;)
    r = meld(scratch_[i], r);
  return r;
}

template <typename F>
void SchedulingQueue::visit_members(PodId root, F f) const {
  if (root == kNoPod) return;
  // The member room is taken for the walk (a nested walk would start from empty room).
  std::vector<PodId> stack = std::move(visit_stack_);
  stack.clear();
  stack.push_back(root);
  while (!stack.empty()) {
    const PodId p = stack.back();
    stack.pop_back();
    f(p);
    for (PodId c = child_[p]; c != kNoPod; c = sibling_[c])
      stack.push_back(c);
  }
  visit_stack_ = std::move(stack);
}

void SchedulingQueue::add_member(std::uint32_t g, PodId p, std::uint64_t seq, std::int64_t owed) {
  if (p >= grouped_.size()) {
    const std::size_t n = std::max<std::size_t>(std::size_t{p} + 1, grouped_.size() * 2);
    grouped_.resize(n, 0);
    member_seq_.resize(n, 0);
    child_.resize(n, kNoPod);
    sibling_.resize(n, kNoPod);
    join_.resize(n, 0);
  }
  Group& G = groups_[g];
  grouped_[p] = 1;
  member_seq_[p] = seq;
  child_[p] = kNoPod;
  sibling_[p] = kNoPod;
  join_[p] = G.failures - owed;
  count_group(G, -1);
  G.root = meld(G.root, p);
  G.max_seq = G.size == 0 ? seq : std::max(G.max_seq, seq);
  ++G.size;
  count_group(G, +1);
}

void SchedulingQueue::merge_groups(std::uint32_t into, std::uint32_t from) {
  Group& A = groups_[into];
  Group& B = groups_[from];
  count_group(A, -1);
  count_group(B, -1);
  if (B.size > A.size) {
    // Re-base the smaller group's members: keep the larger's heap and failure count in `into`.
    std::swap(A.root, B.root);
    std::swap(A.size, B.size);
    std::swap(A.max_seq, B.max_seq);
    std::swap(A.failures, B.failures);
  }
  const std::int64_t delta = A.failures - B.failures;
  if (delta != 0) visit_members(B.root, [&](PodId m) { join_[m] += delta; });
  A.root = meld(A.root, B.root);
  A.max_seq = std::max(A.max_seq, B.max_seq);
  A.size += B.size;
  B.root = kNoPod;
  B.size = 0;
  count_group(A, +1);
  free_group(from);
}

std::optional<std::uint32_t> SchedulingQueue::live_failed(std::uint32_t cls, std::int32_t priority,
                                                          Signature sig, SimTime now) {
  if (failed_now_time_ != now) {
    failed_now_.clear();
    failed_now_time_ = now;
  }
  for (std::size_t i = 0; i < failed_now_.size();) {
    const FailedNow& f = failed_now_[i];
    if (f.cls != cls || f.priority != priority || !(f.sig == sig)) {
      ++i;
      continue;
    }
    const Group& G = groups_[f.group];
    if (G.state == GroupState::kUnschedulable && G.version == f.version) return f.group;
    // Moved by an event since (its members failed before it): later failures start anew.
    failed_now_[i] = failed_now_.back();
    failed_now_.pop_back();
  }
  return std::nullopt;
}

std::uint32_t SchedulingQueue::failed_group(std::uint32_t cls, std::int32_t priority, Signature sig,
                                            SimTime now) {
  if (const std::optional<std::uint32_t> live = live_failed(cls, priority, sig, now)) return *live;
  const std::uint32_t g = new_group(cls, priority, now, sig);
  park_group(g);
  failed_now_.push_back({cls, priority, sig, g, groups_[g].version});
  return g;
}

std::optional<SchedulingQueue::Popped> SchedulingQueue::pop_any(SimTime now) {
  auto cmp = [this](const HeapItem& a, const HeapItem& b) { return fw_->queue_less(b.q, a.q); };
  while (!active_heap_.empty()) {
    std::pop_heap(active_heap_.begin(), active_heap_.end(), cmp);
    const HeapItem top = active_heap_.back();
    active_heap_.pop_back();
    if (top.group != kNoGroup) {
      const Group& G = groups_[top.group];
      if (G.state != GroupState::kActive || G.version != top.version) continue;  // stale
      return Popped{top.q, top.group};
    }
    Entry* e = find(top.q.pod);
    if (e == nullptr || e->version != top.version || e->where != Where::kActive) continue;
    --active_count_;
    e->where = Where::kInFlight;
    ++e->attempts;
    e->last_attempt = now;
    ++in_flight_;
    return Popped{top.q, kNoGroup};
  }
  return std::nullopt;
}

std::pair<PodId, std::int64_t> SchedulingQueue::take_member(std::uint32_t g, SimTime now) {
  Group& G = groups_[g];
  CAPSIM_CHECK(G.state == GroupState::kActive && G.size > 0,
               "a member was taken from a group that was not popped");
  const PodId m = G.root;
  const std::int64_t owed = G.failures - join_[m];
  count_group(G, -1);
  G.root = pop_root(m);
  --G.size;
  count_group(G, +1);
  grouped_[m] = 0;
  const std::uint64_t seq = member_seq_[m];
  const QueuedPodInfo q{m, G.priority, G.ts, seq};
  const SimTime since = G.ts;
  if (G.size == 0) {
    free_group(g);
  } else {
    push_group_active(g);
  }
  Entry& e = insert(m);
  e.q = q;
  e.where = Where::kInFlight;
  e.attempts = capped_attempts_ + 1;
  e.last_attempt = now;
  e.unschedulable_since = since;
  e.rejectors = 0;  // the attempt's outcome sets them
  e.version = ++next_version_;
  ++in_flight_;
  return {m, owed};
}

std::size_t SchedulingQueue::defer(std::uint32_t g, Signature sig) {
  CAPSIM_CHECK(groups_[g].state == GroupState::kActive, "a group was deferred that was not popped");
  Group& G = move_group(g, GroupState::kDeferred);
  G.sig = sig;
  deferred_.push_back(g);
  return G.size;
}

void SchedulingQueue::for_each_straddling(
    const QueuedPodInfo& key, const std::function<void(std::uint32_t, Signature, PodId)>& f) {
  // Deferred groups were popped before `key`; those with the same priority and timestamp may
  // still have members after it (PrioritySort: priority, then timestamp, then seq).
  for (std::size_t i = 0; i < deferred_.size(); ++i) {
    const std::uint32_t g = deferred_[i];
    const Group& G = groups_[g];
    if (G.state != GroupState::kDeferred) continue;
    if (G.priority == key.priority && G.ts == key.timestamp && G.max_seq > key.seq)
      f(g, G.sig, G.root);
  }
}

bool SchedulingQueue::deferred_after(const QueuedPodInfo& key) const {
  return std::any_of(deferred_.begin(), deferred_.end(), [&](std::uint32_t g) {
    const Group& G = groups_[g];
    return G.state == GroupState::kDeferred && G.priority == key.priority &&
           G.ts == key.timestamp && G.max_seq > key.seq;
  });
}

std::size_t SchedulingQueue::split(std::uint32_t g, const QueuedPodInfo& key) {
  Group& G = groups_[g];
  std::vector<PodId>& head = split_head_;
  std::vector<PodId>& tail = split_tail_;
  head.clear();
  tail.clear();
  visit_members(G.root, [&](PodId m) { (member_seq_[m] > key.seq ? tail : head).push_back(m); });
  CAPSIM_CHECK(!head.empty() && !tail.empty(), "a deferred group was split outside its range");
  const std::int64_t failures = G.failures;
  const std::uint32_t cls = G.cls;
  const std::int32_t priority = G.priority;
  const SimTime ts = G.ts;
  const Signature sig = G.sig;
  count_group(G, -1);
  G.root = kNoPod;
  G.size = 0;
  for (PodId m : head) {
    child_[m] = sibling_[m] = kNoPod;
    const std::int64_t owed = failures - join_[m];
    G.root = meld(G.root, m);
    G.max_seq = G.size == 0 ? member_seq_[m] : std::max(G.max_seq, member_seq_[m]);
    ++G.size;
    join_[m] = failures - owed;
  }
  count_group(G, +1);
  const std::uint32_t t = new_group(cls, priority, ts, sig);
  groups_[t].failures = failures;
  for (PodId m : tail)
    add_member(t, m, member_seq_[m], failures - join_[m]);
  push_group_active(t);
  return tail.size();
}

void SchedulingQueue::finish_deferred(SimTime now) {
  for (const std::uint32_t g : deferred_) {
    Group& G = groups_[g];
    if (G.state != GroupState::kDeferred) continue;
    ++G.failures;
    G.ts = now;
    const std::uint32_t cls = G.cls;
    const std::int32_t priority = G.priority;
    const Signature sig = G.sig;
    park_group(g);
    if (const std::optional<std::uint32_t> live = live_failed(cls, priority, sig, now)) {
      merge_groups(*live, g);
    } else {
      failed_now_.push_back({cls, priority, sig, g, groups_[g].version});
    }
  }
  deferred_.clear();
}

void SchedulingQueue::add_unschedulable(PodId pod, std::uint64_t rejector_plugins, SimTime now,
                                        std::uint32_t cls, Signature sig) {
  const Entry* e = find(pod);
  if (!groups_on_ || cls == kNoClass || e == nullptr || e->where != Where::kInFlight ||
      e->attempts < capped_attempts_) {
    add_unschedulable(pod, rejector_plugins, now);
    return;
  }
  const QueuedPodInfo q = e->q;
  --in_flight_;
  erase(pod);
  const std::uint32_t g = failed_group(cls, q.priority, sig, now);
  add_member(g, pod, q.seq, 0);
}

template <typename Pred>
std::size_t SchedulingQueue::move_groups_if(Pred moves, SimTime now) {
  std::size_t kept = 0;
  std::size_t moved = 0;
  for (std::size_t i = 0; i < parked_groups_.size(); ++i) {
    const ParkedGroup p = parked_groups_[i];
    const Group& G = groups_[p.group];
    if (G.state != GroupState::kUnschedulable || G.version != p.version) continue;
    if (moves(G)) {
      moved += G.size;
      if (now < G.ts + backoff_duration(capped_attempts_)) {
        push_group_backoff(p.group);
      } else {
        push_group_active(p.group);
      }
    } else {
      parked_groups_[kept++] = p;
    }
  }
  parked_groups_.resize(kept);
  return moved;
}

void SchedulingQueue::for_each_member(
    const std::function<void(PodId, std::int64_t, Signature)>& f) const {
  for (const Group& G : groups_) {
    if (G.state == GroupState::kFree) continue;
    visit_members(G.root, [&](PodId m) { f(m, G.failures - join_[m], G.sig); });
  }
}

}  // namespace capsim::fw
