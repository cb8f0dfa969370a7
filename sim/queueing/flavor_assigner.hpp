// Kueue's flavor assignment for one workload in one ClusterQueue: for each resource group that
// covers what the workload requests, the flavors are tried in the order the ClusterQueue lists
// them. A flavor must match the pods (its node labels against their nodeSelector and required
// node affinity, its taints against their tolerations); then each requested resource gets a
// mode — Fit (within available quota, maybe borrowing), Preempt (fits if some workloads are
// evicted), NoFit — and flavorFungibility decides whether to stop at this flavor or try the next
// (whenCanBorrow, whenCanPreempt, preference). The result says how much quota of which
// (flavor, resource) the workload would take, and why it does not fit if it does not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/queueing/kueue_state.hpp"
#include "sim/queueing/preemptor.hpp"
#include "sim/queueing/topology_assigner.hpp"

namespace capsim::queueing {

enum class FitMode : std::uint8_t { kNoFit, kPreempt, kFit };

struct FlavorAssignment {
  FitMode mode = FitMode::kNoFit;
  std::int32_t borrowing = 0;  // height of the lowest cohort subtree the usage fits in; 0 = none
  FrAmounts usage;
  std::vector<FrIndex> preempt_frs;   // pairs whose mode is Preempt
  std::vector<std::int32_t> flavors;  // per resource group of the ClusterQueue; -1 = not used
  std::string message;                // why it does not fit (empty when it fits)
  // Topology-aware scheduling: the flavor whose Topology placed the pods (-1: no TAS) and where
  // (sim/queueing/topology_assigner.hpp), computed when the quota fits.
  std::int32_t tas_flavor = -1;
  TopologyAssignment topology;
};

// What one pod's requests count as for quota, as Kueue's workload.Info computes its pod sets'
// requests (pkg/workload/workload.go totalRequestsFromPodSets): requests whose name starts with an
// excludeResourcePrefixes entry are dropped, then resources.transformations apply. A
// transformation of input r turns its Value() v (whole cores for cpu, rounded up) into
// v x factor of each output (added up when outputs meet), rounded up to the output's unit as
// Kueue's Requests do (Value(), MilliValue() for cpu); with multiplyBy: m, v is first multiplied
// by the Value() of the pod's request for m (when it has one); Retain keeps r as well, Replace
// drops it. Without any transformation that matches, the requests are unchanged.
ResourceList charged_pod_requests(const KueueSettings& s, const ResourceNames& names,
                                  const ResourceList& pod);

// The DRA devices one pod charges to quota under resources.deviceClassMappings, as Kueue's
// GetResourceRequestsForResourceClaimTemplates counts them: for each ResourceClaimTemplate the
// pod names (ResourceClaims are not counted), each ExactCount request of a mapped DeviceClass
// adds its count to the mapping's resource; adminAccess requests add nothing. The requests Kueue
// cannot charge (firstAvailable, allocationMode All, an unmapped class) are refused when the
// files are read (tools/loaders/kueue_manifests.cpp), so none reaches here.
ResourceList dra_charged_requests(const KueueSettings& s, const World& world, const PodSpec& pod);

// The requests a workload charges to its ClusterQueue: its pod set's requests (charged as
// charged_pod_requests says) plus `pods` (the pod count) when the ClusterQueue covers it.
ResourceList quota_requests(const KueueState& st, const Workload& w, std::int32_t cq);

FlavorAssignment assign_flavors(KueueState& st, Preemptor& preemptor, const Workload& w,
                                std::int32_t cq);

// Why `flavor` cannot take the pods of `w` (untolerated taint, node affinity, GPU model), or "".
std::string flavor_mismatch(const KueueState& st, const Workload& w, std::int32_t flavor);

}  // namespace capsim::queueing
