#include "tools/loaders/manifest_kind_policy.hpp"

#include <array>

namespace capsim {

namespace {

constexpr KindAction kSkip = KindAction::kSkip;
constexpr KindAction kRefuse = KindAction::kRefuse;

constexpr std::string_view kNoScheduling = "does not affect scheduling";
constexpr std::string_view kConfigHint =
    "is not read from a manifest file (a Kueue Configuration, mig-parted or device-plugin "
    "ConfigMap is named in the scenario's kueue.config, mig_configs or device_plugin_configs)";
constexpr std::string_view kGangHint =
    "write the workload as a batch/v1 Job with the annotation capsim.io/gang, or as pods with "
    "the label kueue.x-k8s.io/pod-group-name";
constexpr std::string_view kQueueHint =
    "express the quotas as Kueue ClusterQueues and LocalQueues (kueue.x-k8s.io)";

// Sorted by group, then kind, for reading; looked up linearly (a few dozen rows, once per
// document of an unknown kind).
constexpr std::array kTable = {
    // core
    UnmodelledKind{"", "ConfigMap", kSkip, kConfigHint},
    UnmodelledKind{"", "Endpoints", kSkip, kNoScheduling},
    UnmodelledKind{"", "Event", kSkip, kNoScheduling},
    UnmodelledKind{"", "LimitRange", kRefuse,
                   "(default and limit requests per namespace) is not modelled: capsim would "
                   "schedule the pods with the requests their manifests give; set the requests "
                   "on the containers instead"},
    UnmodelledKind{"", "PersistentVolume", kSkip,
                   "is not modelled: capsim does not simulate storage or volume binding"},
    UnmodelledKind{"", "PersistentVolumeClaim", kSkip,
                   "is not modelled: capsim does not simulate storage or volume binding, so a "
                   "pod's volumes never hold it back"},
    UnmodelledKind{"", "ReplicationController", kRefuse,
                   "is not modelled; write it as an apps/v1 Deployment or ReplicaSet"},
    UnmodelledKind{"", "ResourceQuota", kRefuse,
                   "(namespace quota) is not modelled: capsim would admit pods over it",
                   kQueueHint},
    UnmodelledKind{"", "Secret", kSkip, kNoScheduling},
    UnmodelledKind{"", "Service", kSkip, kNoScheduling},
    UnmodelledKind{"", "ServiceAccount", kSkip, kNoScheduling},
    // Kubernetes API groups
    UnmodelledKind{"admissionregistration.k8s.io", "MutatingWebhookConfiguration", kSkip,
                   "is not run: capsim sees the objects as the files give them"},
    UnmodelledKind{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", kSkip,
                   "is not run: capsim validates the objects itself"},
    UnmodelledKind{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", kSkip,
                   "is not run: capsim validates the objects itself"},
    UnmodelledKind{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", kSkip,
                   "is not run: capsim validates the objects itself"},
    UnmodelledKind{"apiextensions.k8s.io", "CustomResourceDefinition", kSkip,
                   "only declares a type; capsim reads the kinds it models itself"},
    UnmodelledKind{"apiregistration.k8s.io", "APIService", kSkip, kNoScheduling},
    UnmodelledKind{"apps", "ControllerRevision", kSkip,
                   "is controller bookkeeping; the pods come from the controller's template"},
    UnmodelledKind{"autoscaling", "HorizontalPodAutoscaler", kSkip,
                   "is not modelled: a controller keeps the spec.replicas its manifest gives, "
                   "changed only by the scenario's scaling: steps"},
    UnmodelledKind{"coordination.k8s.io", "Lease", kSkip, kNoScheduling},
    UnmodelledKind{"discovery.k8s.io", "EndpointSlice", kSkip, kNoScheduling},
    UnmodelledKind{"events.k8s.io", "Event", kSkip, kNoScheduling},
    UnmodelledKind{"networking.k8s.io", "Ingress", kSkip, kNoScheduling},
    UnmodelledKind{"networking.k8s.io", "IngressClass", kSkip, kNoScheduling},
    UnmodelledKind{"networking.k8s.io", "NetworkPolicy", kSkip, kNoScheduling},
    UnmodelledKind{"node.k8s.io", "RuntimeClass", kSkip,
                   "is not modelled: a pod's runtimeClassName adds no overhead in capsim (give "
                   "spec.overhead on the pod instead)"},
    UnmodelledKind{"rbac.authorization.k8s.io", "ClusterRole", kSkip, kNoScheduling},
    UnmodelledKind{"rbac.authorization.k8s.io", "ClusterRoleBinding", kSkip, kNoScheduling},
    UnmodelledKind{"rbac.authorization.k8s.io", "Role", kSkip, kNoScheduling},
    UnmodelledKind{"rbac.authorization.k8s.io", "RoleBinding", kSkip, kNoScheduling},
    UnmodelledKind{"storage.k8s.io", "CSIDriver", kSkip,
                   "is not modelled: capsim does not simulate storage"},
    UnmodelledKind{"storage.k8s.io", "StorageClass", kSkip,
                   "is not modelled: capsim does not simulate storage"},
    // Add-ons met in GPU clusters
    UnmodelledKind{"batch.volcano.sh", "Job", kRefuse,
                   "(a Volcano Job) is not modelled: capsim has no Volcano scheduler or job "
                   "controller",
                   kGangHint},
    UnmodelledKind{"bus.volcano.sh", "Command", kSkip, kNoScheduling},
    UnmodelledKind{"cert-manager.io", "Certificate", kSkip, kNoScheduling},
    UnmodelledKind{"cert-manager.io", "ClusterIssuer", kSkip, kNoScheduling},
    UnmodelledKind{"cert-manager.io", "Issuer", kSkip, kNoScheduling},
    UnmodelledKind{"config.kueue.x-k8s.io", "Configuration", kSkip, kConfigHint},
    UnmodelledKind{"kubeflow.org", "MPIJob", kRefuse,
                   "is not modelled yet; write the workers as a batch/v1 Job with "
                   "capsim.io/gang"},
    UnmodelledKind{"kubeflow.org", "TFJob", kRefuse,
                   "is not modelled yet; write the workers as a batch/v1 Job with "
                   "capsim.io/gang"},
    UnmodelledKind{"kubeflow.org", "XGBoostJob", kRefuse,
                   "is not modelled yet; write the workers as a batch/v1 Job with "
                   "capsim.io/gang"},
    UnmodelledKind{"kueue.x-k8s.io", "AdmissionCheck", kRefuse,
                   "is not modelled: capsim would admit workloads without the check; drop the "
                   "admissionChecks of the ClusterQueues to simulate without them"},
    UnmodelledKind{"kueue.x-k8s.io", "Workload", kSkip,
                   "is made by capsim from the Jobs and pods it reads; the object itself is not "
                   "read"},
    UnmodelledKind{"monitoring.coreos.com", "PodMonitor", kSkip, kNoScheduling},
    UnmodelledKind{"monitoring.coreos.com", "PrometheusRule", kSkip, kNoScheduling},
    UnmodelledKind{"monitoring.coreos.com", "ServiceMonitor", kSkip, kNoScheduling},
    UnmodelledKind{"nvidia.com", "ClusterPolicy", kSkip,
                   "(the GPU Operator's) is not read: give MIG and sharing through the "
                   "scenario's mig_configs and device_plugin_configs and the node labels"},
    UnmodelledKind{"ray.io", "RayCluster", kRefuse,
                   "is not modelled yet; write the head and workers as pods or batch/v1 Jobs"},
    UnmodelledKind{"ray.io", "RayJob", kRefuse,
                   "is not modelled yet; write the head and workers as pods or batch/v1 Jobs"},
    UnmodelledKind{"scheduling.run.ai", "PodGroup", kRefuse,
                   "(a KAI scheduler gang) is not modelled: capsim has no KAI scheduler",
                   kGangHint},
    UnmodelledKind{"scheduling.run.ai", "Queue", kRefuse,
                   "(a KAI scheduler queue) is not modelled: capsim has no KAI scheduler",
                   kQueueHint},
    UnmodelledKind{"scheduling.volcano.sh", "PodGroup", kRefuse,
                   "(a Volcano gang) is not modelled: capsim has no Volcano scheduler", kGangHint},
    UnmodelledKind{"scheduling.volcano.sh", "Queue", kRefuse,
                   "(a Volcano queue) is not modelled: capsim has no Volcano scheduler",
                   kQueueHint},
    UnmodelledKind{"scheduling.x-k8s.io", "PodGroup", kRefuse,
                   "(the coscheduling plugin's gang) is not modelled", kGangHint},
};

}  // namespace

const UnmodelledKind* unmodelled_kind(std::string_view group, std::string_view kind) {
  for (const UnmodelledKind& k : kTable) {
    if (k.group == group && k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace capsim
