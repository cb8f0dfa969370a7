// Topology-aware scheduling in the Kueue admission layer: which workloads ask for it (the
// PodSet annotations, or implicitly in a ClusterQueue whose every flavor has a Topology), the
// flavor's nodes as TAS sees them, the placement as part of flavor assignment, the pins that
// carry it to the scheduler (a per-pod nodeSelector, as Kueue's ungater does) and the
// invariants. The placement itself is topology_assigner.cpp.
//
// Free capacity (Kueue: allocatable of ready, schedulable nodes, minus the usage of admitted TAS
// workloads and of other pods) is read from the cluster: allocatable minus what bound pods
// request, minus the pods of admitted TAS workloads pinned to a domain and not yet bound. Where
// capsim departs from Kueue is listed in docs/queues.md.
#include <fmt/format.h>

#include <algorithm>

#include "sim/check.hpp"
#include "sim/queueing/kueue_admission.hpp"

namespace capsim::queueing {

namespace {

constexpr std::string_view kHostname = "kubernetes.io/hostname";

ResourceVec per_pod_requests(const PodSpec& pod) {
  ResourceVec v;
  pod.requests.add_to(v);
  v[kPods] = 1;
  return v;
}

bool node_admits(const NodeSpec& n, const PodSpec& pod, const ResourceFlavorSpec& flavor,
                 const StringPool& pool) {
  // What Kueue's TAS checks per node when its lowest level is the hostname: the pod's
  // nodeSelector and required node affinity, and its taints against the pod's and the flavor's
  // tolerations.
  if (!n.labels.contains_all(pod.node_selector)) return false;
  if (pod.affinity->required &&
      !matches_any_term(*pod.affinity->required, NodeView{&n.labels, n.name_sym}, pool)) {
    return false;
  }
  for (const Taint& t : n.taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    if (!tolerates_any(pod.tolerations, t) && !tolerates_any(flavor.tolerations, t)) return false;
  }
  return true;
}

}  // namespace

bool KueueAdmission::tas_requested(const Workload& w) const {
  if (w.pods.empty()) return false;
  if (world_->pods[w.pods.front()].topology->explicit_request()) return true;
  return cq_tas_only_[static_cast<std::size_t>(w.cluster_queue)];
}

TopologySnapshot KueueAdmission::tas_snapshot(std::int32_t f, const PodSpec& pod, bool empty,
                                              bool reserve) const {
  const ResourceFlavorSpec& flavor = st_.flavor(f);
  const TopologySpec& topo = world_->queues.topologies[static_cast<std::size_t>(flavor.topology)];
  TopologySnapshot snap(topo.name, topo.levels);
  const StringPool& pool = world_->strings;
  const Cluster& cluster = host_->cluster();
  const bool host_leaves = topo.levels.back() == kHostname;
  std::vector<Sym> keys;
  for (const std::string& l : topo.levels)
    keys.push_back(pool.find(l));
  // Usage of the TAS-pinned pods bound to each node, which `empty` gives back.
  std::vector<ResourceVec> pinned_bound;
  if (empty) {
    pinned_bound.resize(world_->nodes.size());
    for (const auto& [p, pin] : pins_) {
      const PodState& s = cluster.pod(p);
      if (s.node != kNoNode && !is_terminal(s.phase)) {
        world_->pods[p].requests.add_to(pinned_bound[s.node]);
        pinned_bound[s.node][kPods] += 1;
      }
    }
  }
  for (NodeId n = 0; n < world_->nodes.size(); ++n) {
    const NodeSpec& spec = world_->nodes[n];
    const NodeInfo& info = cluster.node(n);
    if (info.down || spec.unschedulable) continue;
    if (!spec.labels.contains_all(flavor.node_labels)) continue;
    if (host_leaves && !node_admits(spec, pod, flavor, pool)) continue;
    std::vector<std::string> values;
    for (Sym k : keys) {
      const Sym v = k == kNoSym ? kNoSym : spec.labels.get(k);
      if (v == kNoSym) break;
      values.push_back(pool.str(v));
    }
    if (values.size() != keys.size()) continue;  // not in the topology
    ResourceVec free;
    for (std::size_t r = 0; r < kMaxResources; ++r) {
      free.v[r] = info.allocatable.v[r] - info.requested.v[r];
      if (empty) free.v[r] += pinned_bound[n].v[r];
    }
    snap.add_node(std::move(values), free);
  }
  if (!empty && reserve) {
    // Pods pinned to a domain and not yet bound will take their room there.
    for (const auto& [p, pin] : pins_) {
      const PodState& s = cluster.pod(p);
      if (s.phase != PodPhase::kPending) continue;
      const Workload& pw = st_.wl(pin.wl);
      if (pw.tas_flavor < 0 || st_.flavor(pw.tas_flavor).topology != flavor.topology) {
        continue;  // counted in its own topology's snapshot only when the levels agree
      }
      snap.reserve(pw.topology.domains[static_cast<std::size_t>(pin.domain)].values,
                   per_pod_requests(world_->pods[p]));
    }
  }
  return snap;
}

TasResult KueueAdmission::find_topology(const Workload& w, std::int32_t f, bool empty) const {
  const PodSpec& pod = world_->pods[w.pods.front()];
  TopologySnapshot snap = tas_snapshot(f, pod, empty);
  TasRequest req;
  const TopologyRequest& tr = *pod.topology;
  req.mode = tr.mode == TopologyMode::kNone ? TopologyMode::kUnconstrained : tr.mode;
  const auto lowest = static_cast<std::int32_t>(snap.levels().size()) - 1;
  req.level = lowest;
  if (req.mode == TopologyMode::kRequired || req.mode == TopologyMode::kPreferred) {
    req.level = snap.level_index(tr.level);
  }
  if (!tr.slice_level.empty()) {
    req.slice_level = snap.level_index(tr.slice_level);
    req.slice_size = tr.slice_size;
    // Kueue: a slice-only request is placed from the highest level down.
    if (tr.mode == TopologyMode::kNone) {
      req.mode = TopologyMode::kUnconstrained;
      req.level = 0;
    }
  }
  TasResult bad;
  if (req.level < 0 || (!tr.slice_level.empty() && req.slice_level < 0)) {
    bad.failure =
        fmt::format("Flavor \"{}\" does not contain the requested level", st_.flavor(f).name);
    return bad;
  }
  if (req.slice_level >= 0 && req.slice_level < req.level) {
    bad.failure = fmt::format("podset slice topology {} is above the podset topology {}",
                              tr.slice_level, tr.level);
    return bad;
  }
  req.count = w.count;
  req.per_pod = per_pod_requests(pod);
  TasResult r = snap.assign(req);
  if (!r.assignment.empty()) r.assignment.mode = tr.mode;
  if (!r.assignment.empty() && tr.mode != TopologyMode::kRequired) r.assignment.level = -1;
  return r;
}

void KueueAdmission::place_topology(FlavorAssignment& a, const Workload& w) const {
  if (!cq_has_tas_[static_cast<std::size_t>(w.cluster_queue)] || a.mode == FitMode::kNoFit) return;
  std::int32_t tas = -1;
  for (std::int32_t f : a.flavors) {
    if (f < 0 || st_.flavor(f).topology < 0) continue;
    if (tas >= 0 && tas != f) {
      a.mode = FitMode::kNoFit;
      a.message = fmt::format(
          "couldn't assign flavors to pod set main: multiple TAS flavors assigned: {}, {}",
          st_.flavor(tas).name, st_.flavor(f).name);
      return;
    }
    tas = f;
  }
  if (tas < 0 || !tas_requested(w)) return;
  a.tas_flavor = tas;
  auto no_fit = [&](const std::string& why) {
    a.mode = FitMode::kNoFit;
    a.usage.clear();
    a.preempt_frs.clear();
    a.topology = {};
    a.message = "couldn't assign flavors to pod set main: " + why;
  };
  if (a.mode == FitMode::kFit) {
    TasResult now = find_topology(w, tas, false);
    if (!now.assignment.empty()) {
      a.topology = std::move(now.assignment);
      return;
    }
    // Kueue would look for TAS workloads to preempt when the pods fit an empty topology; capsim
    // waits for capacity instead (docs/queues.md).
    TasResult empty = find_topology(w, tas, true);
    no_fit(empty.assignment.empty() ? empty.failure : now.failure);
    return;
  }
  // Preempt: only if the pods would fit once every TAS workload is gone; placed at admission.
  TasResult empty = find_topology(w, tas, true);
  if (empty.assignment.empty()) no_fit(empty.failure);
}

void KueueAdmission::pin(PodId pod, const Workload& w) {
  if (w.tas_flavor < 0 || w.topology.empty()) return;
  std::vector<std::int32_t> used(w.topology.domains.size(), 0);
  for (PodId p : w.pods) {
    if (p == pod || is_terminal(host_->cluster().pod(p).phase)) continue;
    auto it = pins_.find(p);
    if (it != pins_.end() && it->second.wl == w.id)
      ++used[static_cast<std::size_t>(it->second.domain)];
  }
  std::int32_t domain = -1;
  for (std::size_t d = 0; d < used.size() && domain < 0; ++d) {
    if (used[d] < w.topology.domains[d].count) domain = static_cast<std::int32_t>(d);
  }
  CAPSIM_CHECK(
      domain >= 0,
      fmt::format("workload {} has more live pods than its topology assignment places", w.name));
  pins_[pod] = Pin{w.id, domain};
  // Kueue's TopologyUngater: the lowest level's labels (the hostname alone when it is a level).
  PodSpec& p = world_->pods[pod];
  const TopologyDomainCount& dc = w.topology.domains[static_cast<std::size_t>(domain)];
  const std::vector<std::string>& levels = w.topology.levels;
  if (levels.back() == kHostname) {
    p.node_selector.set(world_->strings.intern(kHostname),
                        world_->strings.intern(dc.values.back()));
  } else {
    for (std::size_t l = 0; l < levels.size(); ++l)
      p.node_selector.set(world_->strings.intern(levels[l]), world_->strings.intern(dc.values[l]));
  }
}

std::string KueueAdmission::topology_note(const Workload& w) const {
  if (w.tas_flavor < 0 || w.topology.empty()) return {};
  const TopologyAssignment& t = w.topology;
  std::string how(
      topology_mode_name(t.mode == TopologyMode::kNone ? TopologyMode::kUnconstrained : t.mode));
  const TopologyRequest& tr = *world_->pods[w.pods.front()].topology;
  if (!tr.level.empty() && t.mode != TopologyMode::kUnconstrained) how += " " + tr.level;
  return fmt::format(
      "; topology {} ({}): {} pod(s) in {} domain(s) of {}",
      world_->queues.topologies[static_cast<std::size_t>(st_.flavor(w.tas_flavor).topology)].name,
      how, t.pods(), t.domains.size(), t.levels.back());
}

void KueueAdmission::check_topology_invariants() const {
  const Cluster& cluster = host_->cluster();
  const StringPool& pool = world_->strings;
  // 1. A bound pod pinned to a domain runs inside it, and a required placement's domains all lie
  //    in one domain of the required level.
  for (const auto& [p, pin] : pins_) {
    const Workload& w = st_.wl(pin.wl);
    if (w.state != WorkloadState::kAdmitted || w.topology.empty()) continue;
    const PodState& s = cluster.pod(p);
    if (s.node == kNoNode) continue;
    const TopologyDomainCount& dc = w.topology.domains.at(static_cast<std::size_t>(pin.domain));
    const NodeSpec& n = world_->nodes[s.node];
    for (std::size_t l = 0; l < w.topology.levels.size(); ++l) {
      const Sym k = pool.find(w.topology.levels[l]);
      const Sym v = k == kNoSym ? kNoSym : n.labels.get(k);
      CAPSIM_CHECK(v != kNoSym && pool.str(v) == dc.values[l],
                   fmt::format("pod {} of workload {} runs on {}, outside its assigned domain {}",
                               world_->pods[p].name, w.name, n.name, fmt::join(dc.values, "/")));
    }
  }
  for (const Workload& w : st_.workloads()) {
    if (w.state != WorkloadState::kAdmitted || w.topology.empty()) continue;
    CAPSIM_CHECK(w.topology.pods() == w.admitted_count,
                 fmt::format("workload {} admitted with {} pods has a topology assignment for {}",
                             w.name, w.admitted_count, w.topology.pods()));
    if (w.topology.mode != TopologyMode::kRequired || w.topology.level < 0) continue;
    const auto upto = static_cast<std::size_t>(w.topology.level) + 1;
    const std::vector<std::string>& first = w.topology.domains.front().values;
    for (const TopologyDomainCount& d : w.topology.domains) {
      CAPSIM_CHECK(std::equal(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(upto),
                              d.values.begin()),
                   fmt::format("workload {} requires one domain of {} but is placed in {} and {}",
                               w.name, w.topology.levels[upto - 1], fmt::join(first, "/"),
                               fmt::join(d.values, "/")));
    }
  }
  // 2. Every TAS flavor's domains: free GPUs add up level by level, and to what the flavor's
  //    nodes have free by the pods bound to them (counted here from the pods, not from the
  //    nodes' running totals).
  std::vector<std::int64_t> bound_gpus(world_->nodes.size(), 0);
  for (PodId p = 0; p < cluster.pods().size(); ++p) {
    const PodState& s = cluster.pod(p);
    if (s.node != kNoNode) bound_gpus[s.node] += world_->pods[p].requests.get(kNvidiaGpu);
  }
  for (std::int32_t f = 0; f < static_cast<std::int32_t>(world_->queues.flavors.size()); ++f) {
    const ResourceFlavorSpec& flavor = st_.flavor(f);
    if (flavor.topology < 0) continue;
    const TopologySpec& topo = world_->queues.topologies[static_cast<std::size_t>(flavor.topology)];
    PodSpec any;  // no constraints of its own: every node of the flavor
    TopologySnapshot snap = tas_snapshot(f, any, false, false);
    TasRequest probe;
    probe.count = 1;
    probe.level = static_cast<std::int32_t>(snap.levels().size()) - 1;
    probe.per_pod[kPods] = 1;
    (void)snap.assign(probe);
    snap.check_invariants();
    std::int64_t expected = 0;
    for (NodeId n = 0; n < world_->nodes.size(); ++n) {
      const NodeSpec& spec = world_->nodes[n];
      if (cluster.node(n).down || spec.unschedulable) continue;
      if (!spec.labels.contains_all(flavor.node_labels)) continue;
      if (topo.levels.back() == kHostname && !node_admits(spec, any, flavor, pool)) continue;
      bool in_topology = true;
      for (const std::string& l : topo.levels) {
        const Sym k = pool.find(l);
        in_topology = in_topology && k != kNoSym && spec.labels.has(k);
      }
      if (!in_topology) continue;
      expected +=
          std::max<std::int64_t>(0, cluster.node(n).allocatable[kNvidiaGpu] - bound_gpus[n]);
    }
    CAPSIM_CHECK(snap.free_gpus() == expected,
                 fmt::format("the domains of topology {} (flavor {}) have {} free GPUs, the "
                             "flavor's nodes {}",
                             topo.name, flavor.name, snap.free_gpus(), expected));
  }
}

}  // namespace capsim::queueing
