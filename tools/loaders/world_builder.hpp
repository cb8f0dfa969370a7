// Assembles a World from the pieces the loaders read (pools, Node manifests, trace rows, Pod and
// Job manifests, synthetic tenants), applying the rules every source shares: GPU models come
// from the catalog, nodes get the labels GPU Feature Discovery would publish, pods' GPU requests
// become device requests, priority class names resolve to values (after every source is read,
// since a PriorityClass may come after the pods that use it), names are unique. Errors are
// InputErrors pointing at the offending input.
#pragma once

#include <any>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/input_error.hpp"
#include "sim/world.hpp"

namespace capsim {

class WorldBuilder {
 public:
  WorldBuilder(World& world, const GpuCatalog& catalog);

  World& world() { return *world_; }
  const GpuCatalog& catalog() const { return *catalog_; }

  // The catalog model named `name` (name or alias), or an InputError at `where` listing close
  // names.
  const GpuModel& gpu_model(const std::string& name, const InputLocation& where) const;
  // The World's index for a catalog model, adding it on first use.
  GpuModelId use_gpu_model(const GpuModel& model);
  // Interns a resource name (cpu, memory, nvidia.com/gpu, example.com/foo).
  ResourceId resource(const std::string& name, const InputLocation& where);
  Sym sym(const std::string& s) { return world_->strings.intern(s); }

  // Adds a node. `gpus` physical GPUs of `model` (nullptr: none). capacity/allocatable may
  // already hold cpu, memory, pods, extended resources; nvidia.com/gpu is set from `gpus` unless
  // already present. Adds GFD-style labels (nvidia.com/gpu.product, .count, .memory,
  // kubernetes.io/hostname, capsim.io/pool). Price: `price_override` or gpus x model price.
  NodeId add_node(NodeSpec node, const GpuModel* model, std::int32_t gpus,
                  std::optional<double> price_override, const InputLocation& where);
  // Replaces the default node price (above) with the scenario's cost model: called with the
  // node (pool set), its model (or null), GPU count, the price the input gave (if any) and where
  // the node was defined; returns the node's hourly price.
  using NodePricer = std::function<double(const NodeSpec&, const GpuModel*, std::int32_t,
                                          std::optional<double>, const InputLocation&)>;
  void set_node_pricer(NodePricer pricer) { pricer_ = std::move(pricer); }

  // Adds a pod. Derives gpu_count from requests[nvidia.com/gpu] (and checks gpu_milli shares).
  // `where` is kept to report priority-class errors at finalize().
  PodId add_pod(PodSpec pod, const InputLocation& where);
  JobId add_job(JobSpec job, const InputLocation& where);
  void add_priority_class(PriorityClassInfo pc, const InputLocation& where);
  // A v1 Namespace's labels (kubernetes.io/metadata.name is added); a namespace is described once.
  void add_namespace(const std::string& name, LabelSet labels, const InputLocation& where);

  // Resolves priority classes for every pod and job template; checks that every pod can in
  // principle be expressed (e.g. requests are non-negative). Call once, after all sources.
  void finalize();
  // Runs `check` at the end of finalize(), once per `key` (a later registration with the same key
  // is ignored). Loaders of other kinds (Kueue objects) use it to resolve references across
  // files once everything is read.
  void on_finalize(const std::string& key, std::function<void()> check);

  // Runs `expand` at the start of finalize(), before priority classes are resolved, in the order
  // registered: for objects whose pods depend on the whole cluster (a DaemonSet's pod per
  // matching node). The pods it adds are resolved and checked like any other.
  void before_finalize(std::function<void()> expand) { expanders_.push_back(std::move(expand)); }

  // A name for an object given only metadata.generateName: `prefix` and five characters from
  // Kubernetes' alphabet for generated names (consonants and digits that spell no word), made
  // from the prefix and how many names this builder has made for it, so the same input gives
  // the same names. Never returns a name it returned before.
  std::string generate_name(const std::string& prefix);

  // Workload controllers read so far, by "Kind/namespace/name": an object a read controller
  // made (a dump's Pods of a ReplicaSet) is not added again (tools/loaders/k8s_manifests.cpp).
  void note_controller(const std::string& key) { controllers_.insert(key); }
  bool has_controller(const std::string& key) const { return controllers_.count(key) != 0; }
  // True the first time `key` is passed: for one note per key.
  bool first_time(const std::string& key) { return noted_.insert(key).second; }

  // A value a loader keeps for later documents of the same load to find by `key` (the
  // TrainingRuntimes a TrainJob names, which may come in a later file); nullptr before any.
  std::any* kept(const std::string& key) {
    auto it = kept_.find(key);
    return it == kept_.end() ? nullptr : &it->second;
  }
  std::any& keep(const std::string& key, std::any value) { return kept_[key] = std::move(value); }

  std::size_t node_count() const { return world_->nodes.size(); }

  // What finalize() does to every pod, for a pod added after it (a scaling step's replicas):
  // its priority class resolved, and spec.nodeName checked against the world's nodes.
  void resolve_priority(PodSpec& p, const InputLocation& where) const;
  void check_node_name(const PodSpec& p, const InputLocation& where) const;

 private:
  World* world_;
  const GpuCatalog* catalog_;
  std::map<std::string, GpuModelId> model_ids_;
  std::map<std::string, InputLocation> node_names_;
  // The pods' (namespace, name) pairs, to refuse a repeated one: an open-addressing table of
  // PodIds whose names are read from the World. A million pods made three allocations each in a
  // map of "namespace/name" strings, a large part of loading a fleet-scale scenario.
  class PodNames {
   public:
    // The pod already named so, or kNoPod.
    PodId find(const std::deque<PodSpec>& pods, const PodSpec& pod) const;
    // Adds `id` (pods[id], not already present).
    void insert(const std::deque<PodSpec>& pods, PodId id);

   private:
    // A pod and the low 32 bits of its hash: its home slot and a tag compared before the names,
    // so that neither probing nor growing reads the pods (a cache miss each, for a million).
    struct Slot {
      PodId id = kNoPod;
      std::uint32_t hash = 0;
    };
    static std::uint32_t hash(const PodSpec& pod);
    void place(Slot s);
    std::vector<Slot> slots_;  // id kNoPod where empty; the size is a power of two
    std::size_t count_ = 0;
  };
  PodNames pod_names_;
  std::map<std::string, InputLocation> job_names_;
  std::map<std::string, InputLocation> pc_names_;
  std::map<std::string, InputLocation> namespace_names_;
  // Where each pod was defined, as an index into pod_locations_: the pods of a synthetic tenant,
  // a trace or a Job share theirs, so a million pods do not hold a million copies.
  std::vector<std::uint32_t> pod_where_;
  std::vector<InputLocation> pod_locations_;
  const InputLocation& pod_where(PodId pod) const { return pod_locations_[pod_where_[pod]]; }
  std::vector<InputLocation> job_where_;
  std::vector<std::pair<std::string, std::function<void()>>> finalizers_;
  NodePricer pricer_;
  std::vector<std::function<void()>> expanders_;
  std::map<std::string, std::uint64_t> generated_count_;
  std::set<std::string> generated_;
  std::set<std::string> controllers_;
  std::set<std::string> noted_;
  std::map<std::string, std::any> kept_;
};

// "file:line" for PodSpec/NodeSpec::source.
std::string short_location(const InputLocation& where);
// Why `name` is refused as a typo of one of NVIDIA's GPU resources (nvidia.com/gpu,
// nvidia.com/gpu.shared), or "" when it is not one. WorldBuilder::resource refuses such a name
// unless the World already has it; the Kubernetes import refuses a node advertising one.
std::string gpu_resource_typo(const std::string& name);

}  // namespace capsim
