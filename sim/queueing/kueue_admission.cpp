#include "sim/queueing/kueue_admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/backoff.hpp"
#include "sim/check.hpp"
#include "sim/metric_catalog.hpp"
#include "sim/metrics.hpp"
#include "sim/random.hpp"

namespace capsim::queueing {

namespace {

constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
constexpr int kMaxCyclesPerInstant = 100'000;

bool namespace_matches(const std::optional<LabelSelectorSpec>& sel, const std::string& ns,
                       const World& world) {
  // A namespace's labels: its Namespace object's (World::namespace_labels), and always
  // kubernetes.io/metadata.name=<name>.
  if (!sel) return false;  // Kueue's null selector admits no namespace
  const StringPool& pool = world.strings;
  const LabelSet* labels = nullptr;
  if (const Sym ns_sym = pool.find(ns); ns_sym != kNoSym) {
    const auto it = world.namespace_labels.find(ns_sym);
    if (it != world.namespace_labels.end()) labels = &it->second;
  }
  auto value = [&](const std::string& key) -> const std::string* {
    if (key == "kubernetes.io/metadata.name") return &ns;
    if (labels == nullptr) return nullptr;
    const Sym k = pool.find(key);
    const Sym v = k == kNoSym ? kNoSym : labels->get(k);
    return v == kNoSym ? nullptr : &pool.str(v);
  };
  for (const auto& [k, v] : sel->match_labels) {
    const std::string* have = value(k);
    if (have == nullptr || *have != v) return false;
  }
  using Op = LabelSelectorSpec::Requirement::Op;
  for (const auto& req : sel->match_expressions) {
    const std::string* have = value(req.key);
    const bool in = have != nullptr &&
                    std::find(req.values.begin(), req.values.end(), *have) != req.values.end();
    switch (req.op) {
      case Op::kIn:
        if (!in) return false;
        break;
      case Op::kNotIn:
        if (in) return false;
        break;
      case Op::kExists:
        if (have == nullptr) return false;
        break;
      case Op::kDoesNotExist:
        if (have != nullptr) return false;
        break;
    }
  }
  return true;
}

std::string lq_metric_name(const LocalQueueSpec& lq) {
  return lq.namespace_ == "default" ? lq.name : lq.namespace_ + "/" + lq.name;
}

}  // namespace

std::unique_ptr<AdmissionController> make_admission(World& world) {
  if (!world.queues.active()) return nullptr;
  return std::make_unique<KueueAdmission>(world);
}

KueueAdmission::KueueAdmission(World& world)
    : world_(&world), st_(world, world.queues), preemptor_(st_) {
  by_job_.assign(world.jobs.size(), -1);
  by_gang_.assign(world.gangs.size(), -1);
  by_group_.assign(world.workload_groups.size(), -1);
  const std::size_t lqs = world.queues.local_queues.size();
  lq_gpu_seconds_.assign(lqs, 0);
  lq_admissions_.assign(lqs, 0);
  lq_preempted_.assign(lqs, 0);
  for (const ClusterQueueSpec& cq : world.queues.cluster_queues) {
    bool all = !cq.resource_groups.empty(), any = false;
    for (const ResourceGroupSpec& g : cq.resource_groups) {
      for (const FlavorQuotasSpec& fq : g.flavors) {
        const std::int32_t f = st_.find_flavor(fq.flavor);
        const bool tas = f >= 0 && st_.flavor(f).topology >= 0;
        all = all && tas;
        any = any || tas;
      }
    }
    cq_tas_only_.push_back(all && any);
    cq_has_tas_.push_back(any);
  }
}

// --- Pods and workloads ------------------------------------------------------------------------

WorkloadId KueueAdmission::workload_for(PodId pod, std::int32_t lq) {
  const PodSpec& spec = world_->pods[pod];
  WorkloadId* slot = nullptr;
  if (spec.workload_group >= 0) {
    slot = &by_group_[static_cast<std::size_t>(spec.workload_group)];
  } else if (spec.job != kNoJob) {
    slot = &by_job_[spec.job];
  } else if (spec.gang != kNoGang) {
    slot = &by_gang_[spec.gang];
  }
  if (slot != nullptr && *slot >= 0) return *slot;

  Workload w;
  w.id = static_cast<WorkloadId>(st_.workloads().size());
  w.namespace_ = spec.namespace_;
  w.local_queue = lq;
  const std::string& cq_name =
      world_->queues.local_queues[static_cast<std::size_t>(lq)].cluster_queue;
  for (std::size_t i = 0; i < world_->queues.cluster_queues.size(); ++i) {
    if (world_->queues.cluster_queues[i].name == cq_name)
      w.cluster_queue = static_cast<std::int32_t>(i);
  }
  CAPSIM_CHECK(
      w.cluster_queue >= 0,
      fmt::format("LocalQueue points at ClusterQueue {}, which the loader did not check", cq_name));
  // Priority: the WorkloadPriorityClass named by the label, else the pods' priority.
  w.priority = spec.priority;
  const Sym key = world_->strings.find(kPriorityClassLabel);
  if (key != kNoSym && spec.labels.has(key)) {
    const std::string& name = world_->strings.str(spec.labels.get(key));
    for (const auto& pc : world_->queues.priority_classes) {
      if (pc.name == name) w.priority = pc.value;
    }
  }
  w.created = host_->now();
  w.order_time = w.created;
  w.job = spec.job;
  if (spec.workload_group >= 0) {
    // Kueue's JobSet, Kubeflow and LeaderWorkerSet integrations: one Workload for the object (a
    // LeaderWorkerSet: per group), its PodSets' counts added up.
    const WorkloadGroupSpec& g =
        world_->workload_groups[static_cast<std::size_t>(spec.workload_group)];
    w.name = g.name;
    w.count = g.pods;
    w.gang = spec.gang != kNoGang;
  } else if (spec.job != kNoJob) {
    const JobSpec& j = world_->jobs[spec.job];
    w.name = j.name;
    w.count = std::min(j.parallelism, j.completions);
    w.gang = spec.gang != kNoGang;
  } else if (spec.gang != kNoGang) {
    const GangSpec& g = world_->gangs[spec.gang];
    w.name = g.name;
    w.count = g.min_member;
    w.gang = true;
  } else {
    w.name = spec.name;
    w.count = 1;
  }
  // Partial admission is a Job's own (Kueue's Job integration); the loader checked
  // 0 < job-min-parallelism < count, as Kueue's Job webhook does.
  w.min_count = w.count;
  if (spec.workload_group < 0 && spec.job != kNoJob && world_->jobs[spec.job].min_parallelism > 0)
    w.min_count = world_->jobs[spec.job].min_parallelism;
  w.admitted_count = w.count;
  w.state = WorkloadState::kWaitingForPods;
  st_.workloads().push_back(std::move(w));
  const WorkloadId id = static_cast<WorkloadId>(st_.workloads().size() - 1);
  if (slot != nullptr) *slot = id;
  return id;
}

bool KueueAdmission::on_pod_pending(PodId pod) {
  const PodSpec& spec = world_->pods[pod];
  const std::int32_t lq = st_.find_local_queue(spec.namespace_, spec.queue);
  if (lq < 0) return false;
  if (by_pod_.size() <= pod) by_pod_.resize(static_cast<std::size_t>(pod) + 1, -1);
  if (by_pod_[pod] < 0) by_pod_[pod] = workload_for(pod, lq);
  Workload& w = st_.wl(by_pod_[pod]);
  if (std::find(w.pods.begin(), w.pods.end(), pod) == w.pods.end()) w.pods.push_back(pod);
  switch (w.state) {
    case WorkloadState::kAdmitted:
      // A pod of an admitted workload (a Job's next pod, or one recreated after a pod-level
      // preemption) goes straight to the scheduler; after a partial admission, when fewer than
      // the admitted count run. A recreated pod is pending anew, out of the scheduling queue.
      if (w.admitted_count < w.count) {
        if (released(pod)) released_[pod] = false;
        top_up(w);
      } else {
        release(pod, w);
      }
      break;
    case WorkloadState::kWaitingForPods: {
      std::int32_t present = 0;
      for (PodId p : w.pods)
        present += is_terminal(host_->cluster().pod(p).phase) ? 0 : 1;
      if (present >= w.count) complete_workload(w);
      break;
    }
    case WorkloadState::kFinished:
      CAPSIM_CHECK(false, fmt::format("pod {} arrived for workload {}, which had finished",
                                      spec.name, w.name));
      break;
    default:
      break;  // held until the workload is admitted again
  }
  return true;
}

void KueueAdmission::complete_workload(Workload& w) {
  // The pod set's requests: the sum over its pods (a Job's pods share one template).
  ResourceVec total;
  for (PodId p : w.pods) {
    if (is_terminal(host_->cluster().pod(p).phase)) continue;
    if (st_.config().settings.transformations.empty()) {
      world_->pods[p].requests.add_to(total);
    } else {
      // Kueue transforms each pod's requests, then multiplies by the count.
      charged_pod_requests(st_.config().settings, world_->resources, world_->pods[p].requests)
          .add_to(total);
    }
    // DRA devices, through resources.deviceClassMappings (nothing without mappings).
    dra_charged_requests(st_.config().settings, *world_, world_->pods[p]).add_to(total);
  }
  w.requests = {};
  for (std::size_t r = 0; r < kMaxResources; ++r) {
    if (total.v[r] != 0) w.requests.set(static_cast<ResourceId>(r), total.v[r]);
  }
  const auto& lq = world_->queues.local_queues[static_cast<std::size_t>(w.local_queue)];
  enqueue(w);
  note(
      w, "queued",
      fmt::format("{} pod(s) queued in ClusterQueue {} through LocalQueue {}/{}, priority {}",
                  w.count, st_.cq(w.cluster_queue).spec->name, lq.namespace_, lq.name, w.priority));
  host_->request_admission();
}

void KueueAdmission::enqueue(Workload& w) {
  w.state = WorkloadState::kQueued;
  st_.cq(w.cluster_queue).queued.insert({w.priority, w.order_time, w.id});
}

void KueueAdmission::dequeue(Workload& w) {
  ClusterQueueRun& run = st_.cq(w.cluster_queue);
  run.queued.erase({w.priority, w.order_time, w.id});
  run.inadmissible.erase(w.id);
}

void KueueAdmission::on_pod_started(PodId pod) {
  if (pod >= by_pod_.size() || by_pod_[pod] < 0) return;
  Workload& w = st_.wl(by_pod_[pod]);
  if (w.state != WorkloadState::kAdmitted) return;
  ++w.started_since_admission;
  if (!w.pods_ready && w.started_since_admission >= w.admitted_count) w.pods_ready = true;
}

void KueueAdmission::on_pod_stopped(PodId pod) {
  if (pod >= by_pod_.size() || by_pod_[pod] < 0) return;
  Workload& w = st_.wl(by_pod_[pod]);
  const PodState& s = host_->cluster().pod(pod);
  if (s.start >= 0) {
    const double gpu_s = to_seconds(host_->now() - s.start) * gpus_of(pod);
    lq_gpu_seconds_[static_cast<std::size_t>(w.local_queue)] += gpu_s;
    st_.cq(w.cluster_queue).gpu_seconds += gpu_s;
  }
  if (w.state == WorkloadState::kEvicting && !holds_node(w)) {
    finish_eviction(w);
  } else if (w.state == WorkloadState::kAdmitted && all_terminal(w)) {
    finish(w);
  } else if (w.state == WorkloadState::kAdmitted && w.admitted_count < w.count) {
    top_up(w);
  }
}

double KueueAdmission::gpus_of(PodId pod) const {
  const PodSpec& spec = world_->pods[pod];
  return spec.gpu_count > 0 ? spec.gpu_count : spec.gpu_milli / 1000.0;
}

bool KueueAdmission::holds_node(const Workload& w) const {
  return std::any_of(w.pods.begin(), w.pods.end(),
                     [&](PodId p) { return host_->cluster().pod(p).node != kNoNode; });
}

bool KueueAdmission::all_terminal(const Workload& w) const {
  return std::all_of(w.pods.begin(), w.pods.end(),
                     [&](PodId p) { return is_terminal(host_->cluster().pod(p).phase); });
}

void KueueAdmission::release(PodId pod, const Workload& w) {
  inject(pod, w);
  if (released_.size() <= pod) released_.resize(static_cast<std::size_t>(pod) + 1, false);
  released_[pod] = true;
  host_->release_to_scheduler(pod);
}

bool KueueAdmission::released(PodId pod) const {
  return pod < released_.size() && released_[pod];
}

void KueueAdmission::top_up(Workload& w) {
  // A partially admitted Job runs with its parallelism lowered to the admitted count (Kueue's
  // Job integration, RunWithPodSetsInfo): capsim holds the pods its Job controller made beyond
  // that and lets them go, oldest first, as released ones end.
  std::int32_t active = 0;
  for (PodId p : w.pods)
    active += released(p) && !is_terminal(host_->cluster().pod(p).phase) ? 1 : 0;
  for (PodId p : w.pods) {
    if (active >= w.admitted_count) return;
    if (host_->cluster().pod(p).phase != PodPhase::kPending || released(p)) continue;
    release(p, w);
    ++active;
  }
}

void KueueAdmission::inject(PodId pod, const Workload& w) {
  // Admission adds the assigned flavors' node labels to the pod's nodeSelector and their
  // tolerations to its tolerations; an eviction takes them away again.
  PodSpec& p = world_->pods[pod];
  auto it = saved_.find(pod);
  if (it == saved_.end()) {
    saved_.emplace(pod, SavedPlacement{p.node_selector, p.tolerations});
  } else {
    p.node_selector = it->second.node_selector;
    p.tolerations = it->second.tolerations;
  }
  for (std::int32_t f : w.flavors) {
    if (f < 0) continue;
    const ResourceFlavorSpec& flavor = st_.flavor(f);
    for (const auto& [k, v] : flavor.node_labels.items())
      p.node_selector.set(k, v);
    for (const Toleration& t : flavor.tolerations)
      p.tolerations.push_back(t);
  }
  pin(pod, w);
}

void KueueAdmission::restore(PodId pod) {
  pins_.erase(pod);
  auto it = saved_.find(pod);
  if (it == saved_.end()) return;
  PodSpec& p = world_->pods[pod];
  p.node_selector = std::move(it->second.node_selector);
  p.tolerations = std::move(it->second.tolerations);
  saved_.erase(it);
}

void KueueAdmission::note(Workload& w, std::string_view kind, const std::string& detail) {
  if (detail == w.last_detail && kind == w.last_kind) return;
  w.last_detail = detail;
  w.last_kind = kind;
  // A reason is recorded when it changes, not when only its numbers do ("4 more needed" and "2
  // more needed" are one reason): a backlog re-examined at every release would otherwise flood
  // the event log.
  std::string key(kind);
  key += '\n';
  for (char c : detail) {
    if (c < '0' || c > '9') key += c;
  }
  const std::uint64_t h = fnv1a64(key);
  if (h == w.last_reason) return;
  w.last_reason = h;
  host_->record(kind, w.pods.front(), fmt::format("workload {}: {}", w.name, detail));
}

// --- Admission cycles ----------------------------------------------------------------------------

void KueueAdmission::run_cycles() {
  integrate_usage();
  // Admission rounds at one instant must end: every round admits, evicts or sets a workload
  // aside, and none of that can repeat forever without time passing.
  if (host_->now() != instant_) {
    instant_ = host_->now();
    instant_rounds_ = 0;
  }
  CAPSIM_CHECK(++instant_rounds_ < kMaxCyclesPerInstant,
               fmt::format("{} admission rounds ran at t={}s without time passing", instant_rounds_,
                           to_seconds(instant_)));
  for (int i = 0; i < kMaxCyclesPerInstant; ++i) {
    trace_ = i + 3 >= kMaxCyclesPerInstant ? &trace_text_ : nullptr;
    if (!cycle()) return;
  }
  CAPSIM_CHECK(false,
               "Kueue admission made progress in 100000 cycles at one instant; the "
               "last cycles: " +
                   trace_text_);
}

void KueueAdmission::nominate(Entry& e) {
  Workload& w = st_.wl(e.wl);
  e.count = w.count;
  const ClusterQueueSpec& cq = *st_.cq(e.cq).spec;
  const LocalQueueSpec& lq = world_->queues.local_queues[static_cast<std::size_t>(w.local_queue)];
  if (cq.stop_policy != StopPolicy::kNone) {
    e.status = EntryStatus::kInadmissible;
    e.message = fmt::format("ClusterQueue {} is stopped (stopPolicy)", cq.name);
    return;
  }
  if (lq.stop_policy != StopPolicy::kNone) {
    e.status = EntryStatus::kInadmissible;
    e.message = fmt::format("LocalQueue {}/{} is stopped (stopPolicy)", lq.namespace_, lq.name);
    return;
  }
  if (!namespace_matches(cq.namespace_selector, w.namespace_, *world_)) {
    e.status = EntryStatus::kInadmissible;
    e.message =
        fmt::format("Workload namespace {} doesn't match the namespaceSelector of ClusterQueue {}",
                    w.namespace_, cq.name);
    return;
  }
  // Workloads of the same shape get the same answer while nothing admitted changes (a backlog
  // re-examined after every release is mostly a few shapes).
  const bool tas = cq_has_tas_[static_cast<std::size_t>(e.cq)];
  if (tas) {
    // A topology placement depends on every node's free capacity: never cached.
    e.assignment = assign_flavors(st_, preemptor_, w, e.cq);
    place_topology(e.assignment, w);
    if (e.assignment.mode == FitMode::kPreempt) {
      e.targets = preemptor_.targets(w, e.cq, e.assignment.usage, e.assignment.preempt_frs);
    }
    if (!admissible(e) && w.min_count < w.count) reduce(e, w, true);
    return;
  }
  if (nominations_generation_ != generation_) {
    nominations_.clear();
    nominations_generation_ = generation_;
  }
  if (w.shape_key.empty()) w.shape_key = nomination_key(w, e.cq);
  std::string key = w.shape_key;
  if (st_.cq(e.cq).spec->within_cluster_queue == PreemptPolicy::kLowerOrNewerEqualPriority) {
    key += fmt::format("|t{}", w.order_time);  // candidates depend on the queue time
  }
  if (auto it = nominations_.find(key); it != nominations_.end()) {
    e.assignment = it->second.assignment;
    e.targets = it->second.targets;
    e.count = it->second.count;
    return;
  }
  e.assignment = assign_flavors(st_, preemptor_, w, e.cq);
  if (e.assignment.mode == FitMode::kPreempt) {
    e.targets = preemptor_.targets(w, e.cq, e.assignment.usage, e.assignment.preempt_frs);
  }
  if (!admissible(e) && w.min_count < w.count) reduce(e, w, false);
  nominations_.emplace(std::move(key), Nomination{e.assignment, e.targets, e.count});
}

bool KueueAdmission::admissible(const Entry& e) {
  return e.assignment.mode == FitMode::kFit ||
         (e.assignment.mode == FitMode::kPreempt && !e.targets.empty());
}

Workload KueueAdmission::with_count(const Workload& w, std::int32_t count) {
  Workload probe = w;
  probe.count = count;
  probe.requests = {};
  for (const auto& [r, v] : w.requests.items) {
    CAPSIM_CHECK(v % w.count == 0, fmt::format("workload {} requests {} of resource {} for {} pods "
                                               "that share one template",
                                               w.name, v, r, w.count));
    probe.requests.set(r, v / w.count * count);
  }
  return probe;
}

void KueueAdmission::reduce(Entry& e, const Workload& w, bool tas) {
  // Kueue's getInitialAssignments (pkg/scheduler/scheduler.go) with its PodSetReducer
  // (pkg/scheduler/flavorassigner/podset_reducer.go), for one pod set: sort.Search over
  // i in [0, delta], delta = count - min_count, for the smallest i whose count - i pods fit or
  // can preempt; its assignment is the last successful probe. When none can, the full count's
  // assignment stays (and so does its message).
  const std::int32_t delta = w.count - w.min_count;
  FlavorAssignment best;
  std::vector<PreemptionTarget> best_targets;
  std::int32_t best_count = 0;
  std::int32_t lo = 0, hi = delta + 1;
  while (lo < hi) {
    const std::int32_t i = lo + (hi - lo) / 2;
    const Workload probe = with_count(w, w.count - i);
    FlavorAssignment a = assign_flavors(st_, preemptor_, probe, e.cq);
    if (tas) place_topology(a, probe);  // the reduced pods placed in the topology
    std::vector<PreemptionTarget> targets;
    if (a.mode == FitMode::kPreempt)
      targets = preemptor_.targets(probe, e.cq, a.usage, a.preempt_frs);
    if (a.mode == FitMode::kFit || (a.mode == FitMode::kPreempt && !targets.empty())) {
      best = std::move(a);
      best_targets = std::move(targets);
      best_count = probe.count;
      hi = i;
    } else {
      lo = i + 1;
    }
  }
  if (best_count == 0) return;
  e.assignment = std::move(best);
  e.targets = std::move(best_targets);
  e.count = best_count;
}

std::string KueueAdmission::nomination_key(const Workload& w, std::int32_t cq) const {
  // Everything flavor assignment and the preemptor read about the workload, but its queue time
  // (added by the caller when it matters): its queue, priority, pod count and requests, and its
  // pods' placement constraints (as they are while it waits, without any flavor's labels).
  const PodSpec& p = world_->pods[w.pods.front()];
  std::string k = fmt::format("{}|{}|{}/{}|", cq, w.priority, w.count, w.min_count);
  for (const auto& [r, v] : w.requests.items)
    k += fmt::format("{}:{},", r, v);
  k += '|';
  for (const auto& [a, b] : p.node_selector.items())
    k += fmt::format("{}={},", a, b);
  k += '|';
  for (const Toleration& t : p.tolerations) {
    k += fmt::format("{}/{}/{}/{},", t.key, static_cast<int>(t.op), t.value,
                     t.effect ? static_cast<int>(*t.effect) : -1);
  }
  k += '|';
  if (p.affinity->required) {
    for (const NodeSelectorTerm& term : *p.affinity->required) {
      for (const NodeSelectorRequirement& r : term.match_expressions) {
        k += fmt::format("{}/{}/{}/{};", r.key, static_cast<int>(r.op), fmt::join(r.values, "."),
                         r.number);
      }
      k += 'T';
    }
  }
  k += '|';
  for (GpuModelId m : p.gpu_models)
    k += fmt::format("{},", m);
  return k;
}

std::vector<std::size_t> KueueAdmission::classical_order(const std::vector<Entry>& entries) const {
  // Kueue's classical iterator: lower borrowing level first (requests within nominal quota
  // before borrowing ones), then higher priority, then the older queue timestamp.
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Entry& x = entries[a];
    const Entry& y = entries[b];
    if (x.assignment.borrowing != y.assignment.borrowing)
      return x.assignment.borrowing < y.assignment.borrowing;
    const Workload& wx = st_.wl(x.wl);
    const Workload& wy = st_.wl(y.wl);
    if (wx.priority != wy.priority) return wx.priority > wy.priority;
    if (wx.order_time != wy.order_time) return wx.order_time < wy.order_time;
    return wx.id < wy.id;
  });
  return order;
}

std::size_t KueueAdmission::fair_pick(const std::vector<Entry>& entries,
                                      const std::vector<bool>& done) const {
  // Kueue's fair-sharing iterator. Take the remaining entry of the lowest ClusterQueue index; if
  // its ClusterQueue has a cohort, run a tournament in its cohort tree: at every cohort, the
  // child (ClusterQueue or cohort) whose dominant resource share *after admitting its nominee*
  // is lowest wins; ties by priority, then queue time.
  std::size_t first = entries.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!done[i] && (first == entries.size() || entries[i].cq < entries[first].cq)) first = i;
  }
  const QuotaTree& tree = st_.tree();
  const QuotaNodeId start = st_.cq(entries[first].cq).node;
  if (!tree.has_parent(start)) return first;
  const QuotaNodeId root = tree.root(start);

  // DRS values per (parent cohort, entry): the share of the parent's child on the entry's path,
  // with the entry's usage added.
  std::map<std::pair<QuotaNodeId, std::size_t>, Drs> shares;
  QuotaTree& mtree = const_cast<QuotaTree&>(tree);  // what-if add, undone below
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (done[i]) continue;
    const QuotaNodeId node = st_.cq(entries[i].cq).node;
    if (tree.root(node) != root) continue;
    const FrAmounts& usage = entries[i].assignment.usage;
    mtree.add_usage(node, usage);
    Drs share = tree.drs(node);
    for (QuotaNodeId a = tree.node(node).parent; a != kNoQuotaNode; a = tree.node(a).parent) {
      shares[{a, i}] = share;
      share = tree.drs(a);
    }
    mtree.remove_usage(node, usage);
  }
  auto less = [&](std::size_t a, std::size_t b, QuotaNodeId cohort) {
    const int c = compare_drs(shares.at({cohort, a}), shares.at({cohort, b}));
    if (c != 0) return c < 0;
    const Workload& wa = st_.wl(entries[a].wl);
    const Workload& wb = st_.wl(entries[b].wl);
    if (wa.priority != wb.priority) return wa.priority > wb.priority;
    if (wa.order_time != wb.order_time) return wa.order_time < wb.order_time;
    return wa.id < wb.id;
  };
  // The tournament, bottom-up.
  std::function<std::size_t(QuotaNodeId)> tournament = [&](QuotaNodeId cohort) -> std::size_t {
    std::vector<std::size_t> candidates;
    for (QuotaNodeId child : tree.node(cohort).children) {
      if (tree.node(child).cohort) {
        const std::size_t c = tournament(child);
        if (c != entries.size()) candidates.push_back(c);
      } else {
        for (std::size_t i = 0; i < entries.size(); ++i) {
          if (!done[i] && st_.cq(entries[i].cq).node == child) candidates.push_back(i);
        }
      }
    }
    if (candidates.empty()) return entries.size();
    std::size_t best = candidates.front();
    for (std::size_t k = 1; k < candidates.size(); ++k) {
      if (less(candidates[k], best, cohort)) best = candidates[k];
    }
    return best;
  };
  const std::size_t winner = tournament(root);
  CAPSIM_CHECK(winner != entries.size(), "the fair-sharing tournament found no winner");
  return winner;
}

bool KueueAdmission::cycle() {
  ++cycles_;
  // 1. Heads: the first queued workload of every ClusterQueue.
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < st_.cqs().size(); ++i) {
    const ClusterQueueRun& run = st_.cqs()[i];
    if (run.queued.empty()) continue;
    Entry e;
    e.wl = run.queued.begin()->id;
    e.cq = static_cast<std::int32_t>(i);
    entries.push_back(std::move(e));
  }
  if (entries.empty()) return false;

  // 2.-3. Snapshot (the live tree) and nominate: flavors, and targets if it must preempt.
  for (Entry& e : entries)
    nominate(e);

  // 4.-5. Order and admit.
  std::set<QuotaNodeId> roots_admitted;
  std::set<WorkloadId> preempted;
  std::vector<std::pair<std::int32_t, FrAmounts>> reservations;
  bool progress = false;
  if (world_->queues.settings.fair_sharing) {
    std::vector<bool> done(entries.size(), false);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const std::size_t i = fair_pick(entries, done);
      done[i] = true;
      process(entries[i], roots_admitted, preempted, reservations, progress);
    }
  } else {
    for (std::size_t i : classical_order(entries))
      process(entries[i], roots_admitted, preempted, reservations, progress);
  }
  // Usage reserved for preempting workloads counted only within this cycle.
  for (const auto& [cq, usage] : reservations)
    st_.tree().remove_usage(st_.cq(cq).node, usage);

  // 6. Requeue what was not admitted.
  for (Entry& e : entries) {
    Workload& w = st_.wl(e.wl);
    if (trace_ != nullptr) {
      *trace_ += fmt::format("[{} {}: {}] ", w.name, static_cast<int>(e.status), e.message);
    }
    switch (e.status) {
      case EntryStatus::kAdmitted:
        break;
      case EntryStatus::kSkipped:
      case EntryStatus::kPreempting:
        // Requeued at once: it stays the head of its queue.
        note(w, "admission-pending", e.message);
        break;
      case EntryStatus::kNominated:
        CAPSIM_CHECK(false, "an admission entry was never processed");
        break;
      case EntryStatus::kInadmissible:
      case EntryStatus::kNoFit:
      case EntryStatus::kNoCandidates: {
        note(w, "admission-pending", e.message);
        ClusterQueueRun& run = st_.cq(e.cq);
        const bool strict = run.spec->strategy == QueueingStrategy::kStrictFifo;
        if (!strict || e.status == EntryStatus::kInadmissible) {
          // BestEffortFIFO: set it aside so the workloads behind it get their turn.
          dequeue(w);
          w.state = WorkloadState::kInadmissible;
          run.inadmissible.insert(w.id);
          progress = true;
        }
        break;
      }
    }
  }
  return progress;
}

void KueueAdmission::process(Entry& e, std::set<QuotaNodeId>& roots_admitted,
                             std::set<WorkloadId>& preempted,
                             std::vector<std::pair<std::int32_t, FrAmounts>>& reservations,
                             bool& progress) {
  if (e.status == EntryStatus::kInadmissible) return;
  Workload& w = st_.wl(e.wl);
  ClusterQueueRun& run = st_.cq(e.cq);
  QuotaTree& tree = st_.tree();
  const FlavorAssignment& a = e.assignment;
  if (a.mode == FitMode::kNoFit) {
    e.status = EntryStatus::kNoFit;
    e.message = a.message;
    return;
  }
  if (a.mode == FitMode::kPreempt && e.targets.empty()) {
    e.status = EntryStatus::kNoCandidates;
    e.message = a.message + "; no workload can be preempted to make room";
    return;
  }
  for (const PreemptionTarget& t : e.targets) {
    if (preempted.count(t.workload) != 0) {
      e.status = EntryStatus::kSkipped;
      e.message = "Workload has overlapping preemption targets with another workload";
      return;
    }
  }
  const QuotaNodeId root = tree.root(run.node);
  if (world_->queues.settings.one_borrowing_admission_per_cohort && a.borrowing > 0 &&
      tree.has_parent(run.node) && roots_admitted.count(root) != 0) {
    e.status = EntryStatus::kSkipped;
    e.message = fmt::format(
        "needs to borrow, and another workload was admitted in cohort {} in this cycle (at "
        "most one borrowing admission per cohort per cycle)",
        tree.node(root).name);
    return;
  }
  // Re-check the fit against what earlier entries of this cycle took (with this entry's own
  // targets removed; other entries' targets still count, so nothing is admitted twice).
  for (const PreemptionTarget& t : e.targets) {
    const Workload& v = st_.wl(t.workload);
    tree.remove_usage(st_.cq(v.cluster_queue).node, v.usage);
  }
  const bool fits = st_.fits(e.cq, a.usage, true);
  for (const PreemptionTarget& t : e.targets) {
    const Workload& v = st_.wl(t.workload);
    tree.add_usage(st_.cq(v.cluster_queue).node, v.usage);
  }
  if (!fits) {
    e.status = EntryStatus::kSkipped;
    e.message = "Workload no longer fits after processing another workload";
    return;
  }
  if (a.mode == FitMode::kFit && a.tas_flavor >= 0) {
    // Earlier admissions of this cycle pinned pods: place again against what is left.
    TasResult again = e.count == w.count
                          ? find_topology(w, a.tas_flavor, false)
                          : find_topology(with_count(w, e.count), a.tas_flavor, false);
    if (again.assignment.empty()) {
      e.status = EntryStatus::kSkipped;
      e.message = "Workload no longer fits after processing another workload";
      return;
    }
    e.assignment.topology = std::move(again.assignment);
  }
  for (const PreemptionTarget& t : e.targets)
    preempted.insert(t.workload);

  if (a.mode == FitMode::kPreempt) {
    // Reserve its quota for the rest of the cycle and evict the targets; it is admitted in a
    // later cycle, once their quota is released.
    tree.add_usage(run.node, a.usage);
    reservations.emplace_back(e.cq, a.usage);
    std::int32_t fresh = 0;
    for (const PreemptionTarget& t : e.targets) {
      Workload& v = st_.wl(t.workload);
      if (v.state != WorkloadState::kAdmitted) continue;  // already being evicted
      ++fresh;
      ++run.preempting;
      if (v.started_since_admission == 0) ++preempted_before_start_;
      ++st_.cq(v.cluster_queue).preempted;
      ++lq_preempted_[static_cast<std::size_t>(v.local_queue)];
      ++v.preempted;
      const std::string why =
          fmt::format("preempted to accommodate workload {} (ClusterQueue {}) due to {}", w.name,
                      run.spec->name, Preemptor::describe(t.reason));
      v.last_reason = 0;
      v.last_detail.clear();
      note(v, "workload-preempted", why);
      evict(v, why, false);
    }
    if (fresh > 0) progress = true;
    e.status = EntryStatus::kPreempting;
    e.message =
        fmt::format("{}. Pending the preemption of {} workload(s)", a.message, e.targets.size());
    return;
  }
  admit(e);
  e.status = EntryStatus::kAdmitted;
  roots_admitted.insert(root);
  progress = true;
}

void KueueAdmission::admit(Entry& e) {
  Workload& w = st_.wl(e.wl);
  ClusterQueueRun& run = st_.cq(e.cq);
  QuotaTree& tree = st_.tree();
  dequeue(w);
  w.state = WorkloadState::kAdmitted;
  w.admitted_count = e.count;
  w.usage = e.assignment.usage;
  w.flavors = e.assignment.flavors;
  w.borrowing = e.assignment.borrowing > 0;
  w.tas_flavor = e.assignment.tas_flavor;
  w.topology = e.assignment.topology;
  w.admitted_at = host_->now();
  if (w.first_admitted_at < 0) w.first_admitted_at = w.admitted_at;
  w.started_since_admission = 0;
  w.pods_ready = false;
  w.evicted_by_timeout = false;
  ++w.admissions;
  tree.add_usage(run.node, w.usage);
  run.holders.insert(w.id);
  ++generation_;
  for (const auto& [fr, v] : w.usage) {
    // usage <= nominal + borrowingLimit, and within what the cohort can lend.
    CAPSIM_CHECK(tree.usage(run.node, fr) <= tree.potential_available(run.node, fr),
                 fmt::format("admitting {} puts ClusterQueue {} above its quota for {}", w.name,
                             run.spec->name, st_.fr_name(fr)));
  }
  ++run.admissions;
  ++lq_admissions_[static_cast<std::size_t>(w.local_queue)];

  std::vector<std::string> flavors;
  for (std::size_t g = 0; g < w.flavors.size(); ++g) {
    if (w.flavors[g] < 0) continue;
    flavors.push_back(st_.flavor(w.flavors[g]).name);
  }
  w.last_reason = 0;
  w.last_detail.clear();
  const std::string partial =
      w.admitted_count < w.count
          ? fmt::format(", partially admitted with {} of {} pods (job-min-parallelism {})",
                        w.admitted_count, w.count, w.min_count)
          : "";
  note(w, "admitted",
       fmt::format("quota reserved in ClusterQueue {} (flavor {}{}), wait time since queued was "
                   "{}s{}{}",
                   run.spec->name, fmt::join(flavors, ", "), w.borrowing ? ", borrowing" : "",
                   to_seconds(w.admitted_at - w.order_time), partial, topology_note(w)));
  w.last_reason = 0;
  w.last_detail.clear();
  if (world_->queues.settings.wait_for_pods_ready) {
    add_timer(w.admitted_at + world_->queues.settings.pods_ready_timeout, w.id);
  }
  if (w.admitted_count < w.count) {
    top_up(w);
    return;
  }
  for (PodId p : w.pods) {
    if (host_->cluster().pod(p).phase != PodPhase::kPending) continue;
    release(p, w);
  }
}

void KueueAdmission::evict(Workload& w, const std::string& why, bool pods_ready_timeout) {
  ++generation_;
  w.state = WorkloadState::kEvicting;
  w.evicted_by_timeout = pods_ready_timeout;
  for (PodId p : w.pods) {
    if (!is_terminal(host_->cluster().pod(p).phase)) host_->withdraw(p, why);
    if (released(p)) released_[p] = false;
  }
  if (!holds_node(w)) finish_eviction(w);
}

void KueueAdmission::finish_eviction(Workload& w) {
  // Its pods have left their nodes: release the quota and requeue.
  integrate_usage();
  ClusterQueueRun& run = st_.cq(w.cluster_queue);
  st_.tree().remove_usage(run.node, w.usage);
  run.holders.erase(w.id);
  ++generation_;
  w.usage.clear();
  for (PodId p : w.pods)
    restore(p);
  w.tas_flavor = -1;
  w.topology = {};
  w.pods_ready = false;
  w.started_since_admission = 0;
  w.admitted_count = w.count;  // a requeued Job asks for its full parallelism again
  const KueueSettings& set = world_->queues.settings;
  if (all_terminal(w)) {
    // Bare pods are not recreated: nothing is left to run.
    w.state = WorkloadState::kFinished;
  } else if (w.evicted_by_timeout) {
    ++w.pods_ready_evictions;
    if (set.backoff_limit_count && w.pods_ready_evictions > *set.backoff_limit_count) {
      w.state = WorkloadState::kDeactivated;
      note(w, "deactivated",
           fmt::format("deactivated after {} PodsReady timeouts (backoffLimitCount {})",
                       w.pods_ready_evictions, *set.backoff_limit_count));
    } else {
      // backoff = backoffBaseSeconds x 2^(requeues - 1), at most backoffMaxSeconds.
      const SimDuration backoff =
          exponential_backoff(set.backoff_base, set.backoff_max, w.pods_ready_evictions);
      w.backoff_until = host_->now() + backoff;
      if (set.requeue_at_eviction_time) w.order_time = host_->now();
      w.state = WorkloadState::kBackoff;
      add_timer(w.backoff_until, w.id);
      note(w, "requeued",
           fmt::format("requeued after a PodsReady timeout; backoff {}s", to_seconds(backoff)));
    }
  } else {
    // Kueue requeues an evicted workload only after its controllers have seen the pods go
    // (API round trips), so the preemptor, requeued at once, gets the freed quota first. capsim
    // requeues it in the next event at the same instant; otherwise a victim whose pods never
    // started would be readmitted and preempted again in one endless instant.
    // The admission round is requested before the timer, so it runs first.
    host_->request_admission();
    w.state = WorkloadState::kBackoff;
    w.backoff_until = host_->now();
    add_timer(w.backoff_until, w.id);
    note(w, "requeued", "requeued after its eviction; quota released");
  }
  requeue_inadmissible(w.cluster_queue);
  host_->request_admission();
}

void KueueAdmission::finish(Workload& w) {
  integrate_usage();
  ClusterQueueRun& run = st_.cq(w.cluster_queue);
  st_.tree().remove_usage(run.node, w.usage);
  run.holders.erase(w.id);
  ++generation_;
  w.usage.clear();
  for (PodId p : w.pods)
    pins_.erase(p);
  w.tas_flavor = -1;
  w.topology = {};
  w.state = WorkloadState::kFinished;
  requeue_inadmissible(w.cluster_queue);
  host_->request_admission();
}

void KueueAdmission::requeue_inadmissible(std::int32_t cq) {
  // Quota was released in this cohort tree: every workload set aside in it gets another look.
  for (std::int32_t m : st_.tree_members(cq)) {
    ClusterQueueRun& run = st_.cq(m);
    for (WorkloadId id : run.inadmissible) {
      Workload& w = st_.wl(id);
      w.state = WorkloadState::kQueued;
      run.queued.insert({w.priority, w.order_time, w.id});
    }
    run.inadmissible.clear();
  }
}

void KueueAdmission::add_timer(SimTime t, WorkloadId w) {
  timers_.emplace(t, w);
  host_->wake_at(t);
}

void KueueAdmission::on_timer() {
  const SimTime now = host_->now();
  const KueueSettings& set = world_->queues.settings;
  while (!timers_.empty() && timers_.begin()->first <= now) {
    const auto [t, id] = *timers_.begin();
    timers_.erase(timers_.begin());
    Workload& w = st_.wl(id);
    if (w.state == WorkloadState::kAdmitted && set.wait_for_pods_ready && !w.pods_ready &&
        t == w.admitted_at + set.pods_ready_timeout) {
      ++pods_ready_timeouts_;
      ++st_.cq(w.cluster_queue).pods_ready_timeouts;
      std::int32_t running = 0;
      for (PodId p : w.pods)
        running += host_->cluster().pod(p).phase == PodPhase::kRunning ? 1 : 0;
      const std::string why =
          fmt::format("PodsReady timeout: {} of {} pod(s) running {}s after admission", running,
                      w.admitted_count, to_seconds(set.pods_ready_timeout));
      w.last_reason = 0;
      w.last_detail.clear();
      note(w, "pods-ready-timeout", why);
      evict(w, why, true);
    } else if (w.state == WorkloadState::kBackoff && now >= w.backoff_until) {
      enqueue(w);
      host_->request_admission();
    }
  }
}

bool KueueAdmission::busy() const {
  return !timers_.empty();
}

std::size_t KueueAdmission::held_pods() const {
  std::size_t n = 0;
  for (const Workload& w : st_.workloads()) {
    if (w.state == WorkloadState::kFinished) continue;
    // An admitted workload holds pods only beyond its count after a partial admission.
    const bool admitted = w.state == WorkloadState::kAdmitted;
    if (admitted && w.admitted_count == w.count) continue;
    for (PodId p : w.pods) {
      const PodState& s = host_->cluster().pod(p);
      if (s.phase == PodPhase::kPending && !(admitted && released(p))) ++n;
    }
  }
  return n;
}

// --- Accounting ---------------------------------------------------------------------------------

void KueueAdmission::integrate_usage() {
  const SimTime now = host_ != nullptr ? host_->now() : 0;
  const double dt = to_seconds(now - integrated_at_);
  if (dt <= 0) return;
  const QuotaTree& tree = st_.tree();
  for (ClusterQueueRun& run : st_.cqs()) {
    double used = 0, borrowed = 0;
    for (FrIndex fr = 0; fr < static_cast<FrIndex>(tree.fr_count()); ++fr) {
      if (tree.fr(fr).resource != kNvidiaGpu) continue;
      const std::int64_t u = tree.usage(run.node, fr);
      used += static_cast<double>(u);
      borrowed += static_cast<double>(std::max<std::int64_t>(0, u - tree.nominal(run.node, fr)));
    }
    run.gpu_quota_seconds += used * dt;
    run.borrowed_gpu_seconds += borrowed * dt;
  }
  integrated_at_ = now;
}

void KueueAdmission::sample(SimTime now, Recorder& recorder) {
  integrate_usage();
  const QuotaTree& tree = st_.tree();
  const World& world = *world_;
  // Pending requests per ClusterQueue and resource.
  std::vector<ResourceVec> pending(st_.cqs().size());
  for (const Workload& w : st_.workloads()) {
    if (w.state == WorkloadState::kAdmitted || w.state == WorkloadState::kEvicting ||
        w.state == WorkloadState::kFinished || w.state == WorkloadState::kDeactivated) {
      continue;
    }
    quota_requests(st_, w, w.cluster_queue)
        .add_to(pending[static_cast<std::size_t>(w.cluster_queue)]);
  }
  for (std::size_t i = 0; i < st_.cqs().size(); ++i) {
    const ClusterQueueRun& run = st_.cqs()[i];
    const ClusterQueueSpec& spec = *run.spec;
    for (std::size_t g = 0; g < spec.resource_groups.size(); ++g) {
      const ResourceGroupSpec& group = spec.resource_groups[g];
      // One row per flavor and resource...
      for (std::size_t fi = 0; fi < group.flavors.size(); ++fi) {
        for (std::size_t pos = 0; pos < group.covered.size(); ++pos) {
          const FrIndex fr = run.group_frs[g][fi][pos];
          QueueSampleRecord q;
          q.time = now;
          q.queue = spec.name;
          q.flavor = group.flavors[fi].flavor;
          q.resource = world.resources.name(group.covered[pos]);
          q.usage = static_cast<double>(tree.usage(run.node, fr));
          q.nominal = static_cast<double>(tree.nominal(run.node, fr));
          q.borrowed = std::max(0.0, q.usage - q.nominal);
          recorder.record_queue_sample(q);
        }
      }
      // ...and per resource a row without flavor: the sums, and what pending workloads request.
      for (std::size_t pos = 0; pos < group.covered.size(); ++pos) {
        QueueSampleRecord q;
        q.time = now;
        q.queue = spec.name;
        q.resource = world.resources.name(group.covered[pos]);
        for (std::size_t fi = 0; fi < group.flavors.size(); ++fi) {
          const FrIndex fr = run.group_frs[g][fi][pos];
          const double u = static_cast<double>(tree.usage(run.node, fr));
          const double n = static_cast<double>(tree.nominal(run.node, fr));
          q.usage += u;
          q.nominal += n;
          q.borrowed += std::max(0.0, u - n);
        }
        q.pending = static_cast<double>(pending[i][group.covered[pos]]);
        recorder.record_queue_sample(q);
      }
    }
  }
}

void KueueAdmission::add_summary(Summary& s, SimTime end) const {
  const_cast<KueueAdmission*>(this)->integrate_usage();
  auto put = [&](std::string k, double v) { put_metric(s, std::move(k), v); };
  const Cluster& cluster = host_->cluster();
  const std::size_t ncq = st_.cqs().size();
  const std::size_t nlq = world_->queues.local_queues.size();
  // GPU time of pods still running at the end.
  std::vector<double> cq_gpu_s(ncq, 0), lq_gpu_s = lq_gpu_seconds_;
  for (std::size_t i = 0; i < ncq; ++i)
    cq_gpu_s[i] = st_.cqs()[i].gpu_seconds;
  std::vector<std::vector<double>> cq_waits(ncq), lq_pod_waits(nlq);
  std::int64_t pending = 0, admissions = 0, preemptions = 0;
  std::vector<std::int64_t> cq_workloads(ncq, 0), cq_pending(ncq, 0);
  for (const Workload& w : st_.workloads()) {
    const auto c = static_cast<std::size_t>(w.cluster_queue);
    const auto l = static_cast<std::size_t>(w.local_queue);
    ++cq_workloads[c];
    admissions += w.admissions;
    preemptions += w.preempted;
    // Admission wait: queued until first admitted; still waiting at the end counts so far.
    if (w.first_admitted_at >= 0) {
      cq_waits[c].push_back(to_seconds(w.first_admitted_at - w.created));
    } else if (w.state != WorkloadState::kFinished) {
      cq_waits[c].push_back(to_seconds(end - w.created));
    }
    if (w.state != WorkloadState::kAdmitted && w.state != WorkloadState::kFinished &&
        w.state != WorkloadState::kEvicting) {
      ++pending;
      ++cq_pending[c];
    }
    for (PodId p : w.pods) {
      const PodState& ps = cluster.pod(p);
      if ((ps.phase == PodPhase::kRunning || ps.phase == PodPhase::kTerminating) && ps.start >= 0) {
        const double g = to_seconds(end - ps.start) * gpus_of(p);
        cq_gpu_s[c] += g;
        lq_gpu_s[l] += g;
      }
      if (ps.first_start >= 0 || ps.phase == PodPhase::kPending) {
        lq_pod_waits[l].push_back(
            to_seconds(ps.waited + (ps.phase == PodPhase::kPending ? end - ps.pending_since : 0)));
      }
    }
  }
  double total_gpu_s = 0;
  for (double g : cq_gpu_s)
    total_gpu_s += g;
  auto mean = [](const std::vector<double>& v) {
    double t = 0;
    for (double x : v)
      t += x;
    return v.empty() ? 0.0 : t / static_cast<double>(v.size());
  };
  put("kueue.workloads", static_cast<double>(st_.workloads().size()));
  put("kueue.admissions", static_cast<double>(admissions));
  put("kueue.preemptions", static_cast<double>(preemptions));
  put("kueue.preemptions_before_start", static_cast<double>(preempted_before_start_));
  put("kueue.pods_ready_timeouts", static_cast<double>(pods_ready_timeouts_));
  put("kueue.workloads_pending_at_end", static_cast<double>(pending));
  put("kueue.admission_cycles", static_cast<double>(cycles_));
  if (std::find(cq_has_tas_.begin(), cq_has_tas_.end(), true) != cq_has_tas_.end()) {
    // Topology-aware scheduling: the admission wait of the workloads that asked for it.
    std::vector<double> tas_waits;
    for (const Workload& w : st_.workloads()) {
      if (!tas_requested(w)) continue;
      if (w.first_admitted_at >= 0) {
        tas_waits.push_back(to_seconds(w.first_admitted_at - w.created));
      } else if (w.state != WorkloadState::kFinished) {
        tas_waits.push_back(to_seconds(end - w.created));
      }
    }
    put("tas_wait_seconds_p95", percentile(tas_waits, 95));
  }
  for (std::size_t i = 0; i < ncq; ++i) {
    const ClusterQueueRun& run = st_.cqs()[i];
    const std::string p = "clusterqueue." + run.spec->name + ".";
    put(p + "workloads", static_cast<double>(cq_workloads[i]));
    put(p + "admissions", static_cast<double>(run.admissions));
    put(p + "preemptions", static_cast<double>(run.preempted));
    put(p + "preempting", static_cast<double>(run.preempting));
    put(p + "pods_ready_timeouts", static_cast<double>(run.pods_ready_timeouts));
    put(p + "pending_at_end", static_cast<double>(cq_pending[i]));
    put(p + "admission_wait_seconds_mean", mean(cq_waits[i]));
    put(p + "admission_wait_seconds_p50", percentile(cq_waits[i], 50));
    put(p + "admission_wait_seconds_p95", percentile(cq_waits[i], 95));
    put(p + "admission_wait_seconds_p99", percentile(cq_waits[i], 99));
    put(p + "gpu_hours", cq_gpu_s[i] / 3600.0);
    put(p + "gpu_hour_share", total_gpu_s > 0 ? cq_gpu_s[i] / total_gpu_s : 0);
    put(p + "gpu_quota_hours", run.gpu_quota_seconds / 3600.0);
    put(p + "borrowed_gpu_hours", run.borrowed_gpu_seconds / 3600.0);
  }
  for (std::size_t i = 0; i < nlq; ++i) {
    const std::string p = "queue." + lq_metric_name(world_->queues.local_queues[i]) + ".";
    put(p + "admissions", static_cast<double>(lq_admissions_[i]));
    put(p + "preemptions", static_cast<double>(lq_preempted_[i]));
    put(p + "wait_seconds_p99", percentile(lq_pod_waits[i], 99));
    // queue.<lq>.gpu_hours itself comes from the cost ledger (charged GPU time).
    put(p + "gpu_hour_share", total_gpu_s > 0 ? lq_gpu_s[i] / total_gpu_s : 0);
  }
}

void KueueAdmission::check_invariants() const {
  st_.tree().check_invariants();
  if (std::find(cq_has_tas_.begin(), cq_has_tas_.end(), true) != cq_has_tas_.end()) {
    check_topology_invariants();
  }
  const QuotaTree& tree = st_.tree();
  for (std::size_t i = 0; i < st_.cqs().size(); ++i) {
    const ClusterQueueRun& run = st_.cqs()[i];
    std::vector<std::int64_t> sum(tree.fr_count(), 0);
    for (WorkloadId id : run.holders) {
      const Workload& w = st_.wl(id);
      CAPSIM_CHECK(w.state == WorkloadState::kAdmitted || w.state == WorkloadState::kEvicting,
                   fmt::format("workload {} holds quota in {} while {}", w.name, run.spec->name,
                               workload_state_name(w.state)));
      for (const auto& [fr, v] : w.usage)
        sum[static_cast<std::size_t>(fr)] += v;
    }
    for (FrIndex fr = 0; fr < static_cast<FrIndex>(tree.fr_count()); ++fr) {
      CAPSIM_CHECK(sum[static_cast<std::size_t>(fr)] == tree.usage(run.node, fr),
                   fmt::format("ClusterQueue {} records usage {} of {} but its workloads hold {}",
                               run.spec->name, tree.usage(run.node, fr), st_.fr_name(fr),
                               sum[static_cast<std::size_t>(fr)]));
    }
    for (const QueueKey& k : run.queued) {
      CAPSIM_CHECK(st_.wl(k.id).state == WorkloadState::kQueued,
                   fmt::format("workload {} is in the queue of {} while {}", st_.wl(k.id).name,
                               run.spec->name, workload_state_name(st_.wl(k.id).state)));
    }
  }
  // An admitted gang is never partly placed by admission: all its pods or none are released.
  for (const Workload& w : st_.workloads()) {
    if (w.state != WorkloadState::kAdmitted) {
      for (PodId p : w.pods) {
        const PodState& s = host_->cluster().pod(p);
        CAPSIM_CHECK(s.phase != PodPhase::kRunning || w.state == WorkloadState::kEvicting,
                     fmt::format("pod {} runs although its workload {} is {}", world_->pods[p].name,
                                 w.name, workload_state_name(w.state)));
      }
    }
  }
}

}  // namespace capsim::queueing
