// What the kubelet does with a pod bound to its node by spec.nodeName, which no scheduler looks
// at: its admission check (pkg/kubelet/lifecycle/predicate.go, predicateAdmitHandler.Admit,
// running noderesources.Fits) admits the pod if its requests fit beside the pods already on the
// node, in Fits' order: the pod count, cpu, memory, ephemeral-storage, then the extended
// resources (by resource id here; upstream walks a map). The first shortfall rejects the pod
// with reason "OutOf<resource>" ("OutOfcpu", "OutOfnvidia.com/gpu") and upstream's
// InsufficientResourceError message; the pod then fails (phase Failed), as the kubelet fails it.
// The device plugin resources it asks for are given as the device manager gives them: the first
// free replicas in the node's unit order, so the choice is deterministic.
// Departure: upstream drops requests for extended resources the node does not advertise at all
// before the check (removeMissingExtendedResources); capsim rejects them as OutOf<resource>.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster.hpp"

namespace capsim {

struct KubeletAdmission {
  bool admitted = false;
  std::vector<Holding> holdings;  // when admitted: the device units it takes
  std::string reason;             // when rejected: "OutOfcpu"
  std::string message;  // "Node didn't have enough resource: cpu, requested: 2000, used: ..."
};

KubeletAdmission kubelet_admit(const Cluster& cluster, PodId pod, NodeId node);

}  // namespace capsim
