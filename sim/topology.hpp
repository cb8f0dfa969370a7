// Topology beyond the node: the cluster's levels (block, rack, NVLink domain, host) as node
// labels, and what a multi-pod job pays for spreading over them. A level is a node label key, top
// to bottom, as in Kueue's Topology object (spec.levels[].nodeLabel); two nodes share a domain of
// a level when they carry the same values for that level and every level above it (values need
// not be unique across parents: rack "r1" in block "b1" and in block "b2" are two domains). A node
// without one of the labels is in no domain of that level; the levels below still group it by
// the labels it has. The host level (kubernetes.io/hostname) is always the last.
//
// A run without `cluster.topology` and without a pool `topology:` has an empty ClusterTopology:
// no labels are added, no factor applied, no metric produced. The Kueue side (Topology objects,
// ResourceFlavor topologyName, the PodSet annotations) is sim/queueing/topology_assigner.hpp; the
// PodSet's request travels with the pod as a TopologyRequest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capsim {

struct World;
class Cluster;
using NodeId = std::uint32_t;

// A PodSet's Kueue topology request (pod template annotations kueue.x-k8s.io/podset-*).
enum class TopologyMode : std::uint8_t { kNone, kRequired, kPreferred, kUnconstrained };

struct TopologyRequest {
  TopologyMode mode = TopologyMode::kNone;
  std::string level;        // node label key of podset-required/preferred-topology
  std::string slice_level;  // podset-slice-required-topology ("" = none)
  std::int32_t slice_size = 0;
  bool explicit_request() const { return mode != TopologyMode::kNone || !slice_level.empty(); }
  bool operator==(const TopologyRequest&) const = default;
};

std::string_view topology_mode_name(TopologyMode m);

// Where a multi-pod job's pods ran relative to each other, set when a gang starts: the index of
// the finest level whose one domain holds all its pods (kSpanCluster: none does) and the rate
// factor that paid. kSpanNone: not a multi-pod job, or topology is off.
inline constexpr std::int32_t kSpanNone = -2;
inline constexpr std::int32_t kSpanCluster = -1;
struct TopologyPlacement {
  std::int32_t span = kSpanNone;
  double factor = 1.0;
};

struct TopologyLevel {
  std::string name;        // "block", "rack", "nvlink", "host": the slowdown's key
  std::string node_label;  // "cloud.provider.com/topology-rack"
};

// The label keys the built-in levels use unless the scenario names others.
inline constexpr std::string_view kBlockLabel = "cloud.provider.com/topology-block";
inline constexpr std::string_view kRackLabel = "cloud.provider.com/topology-rack";
// GPU Feature Discovery's label for a node's multi-node NVLink clique (hardware facts 2.4).
inline constexpr std::string_view kNvlinkLabel = "nvidia.com/gpu.clique";
inline constexpr std::string_view kHostLabel = "kubernetes.io/hostname";

struct ClusterTopology {
  std::vector<TopologyLevel> levels;  // top to bottom; the last is the host. Empty: off.
  // Rate factor of a job whose pods share one domain of levels[i] (and none of a finer level),
  // and of a job spread over several top-level domains.
  std::vector<double> slowdown;
  double cluster_slowdown = 1.0;
  // Per node, per level: a domain number, equal for two nodes exactly when they share that
  // level's domain (index_topology fills it once the nodes are known).
  std::vector<std::vector<std::int32_t>> node_domain;
  std::vector<std::int32_t> domains_per_level;

  bool enabled() const { return !levels.empty(); }
  // Index of the level named `name`, or -1.
  std::int32_t level_index(std::string_view name) const;
  // "cluster" for kSpanCluster, "" for kSpanNone, else the level's name.
  std::string span_name(std::int32_t span) const;
  double factor(std::int32_t span) const;
  // The finest level one of whose domains holds all of `nodes` (kSpanCluster if none).
  std::int32_t span(const std::vector<NodeId>& nodes) const;
};

// Fills ClusterTopology::node_domain from the nodes' labels. Call once the World's nodes are final.
void index_topology(World& world);

// The run's topology figures: per-level fragmentation sampled with the other samples, and per
// gang start its span and factor. Does nothing when the World has no topology.
class TopologyMeter {
 public:
  explicit TopologyMeter(const World& world);
  bool enabled() const { return enabled_; }
  void on_gang_start(std::uint32_t gang, std::int32_t span, double factor);
  void sample(const Cluster& cluster);
  // jobs_spanning_domains, topology_slowdown_mean, topology.<level>.fragmented_gpus_mean.
  void add_summary(std::vector<std::pair<std::string, double>>& summary) const;

 private:
  const World* world_;
  bool enabled_ = false;
  std::int32_t spread_level_ = -1;       // the nvlink level, else the host level
  std::vector<std::int32_t> gang_span_;  // last start per gang (kSpanNone: never started)
  std::vector<double> gang_factor_;
  std::vector<double> frag_sum_;  // per level, over samples
  std::int64_t samples_ = 0;
};

}  // namespace capsim
