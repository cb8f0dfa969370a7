// Which nodes and GPUs are up during a run: the one place their down and up transitions go
// through, for failures and drains alike (each transition says whether the interruption was
// planned). A reclaimed spot node is not down but gone (Cluster::set_absent, docs/spot.md). It
// changes the Cluster (Cluster::set_gpu_failed and set_node_down) and keeps, per pool, the time
// integral of unavailable GPUs (nodes, for pools without GPUs), planned and unplanned apart, for
// `pool.<p>.availability`. The caller takes the pods down first (a failed device or down node
// must hold none) and tells the scheduling queue. A GPU is unavailable while it is down or its
// node is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/recorder.hpp"

namespace capsim {

enum class Interruption : std::uint8_t { kUnplanned, kPlanned };

class NodeHealth {
 public:
  explicit NodeHealth(Cluster& cluster) : cluster_(&cluster) {}

  bool gpu_down(NodeId node, std::uint16_t gpu) const;
  bool node_down(NodeId node) const { return cluster_->node(node).down; }
  // The pods holding GPU `gpu` of `node` (a whole GPU, a MIG instance or replica on it, a share
  // of it, a DRA device of it), or every pod of the node.
  std::vector<PodId> pods_on_gpu(NodeId node, std::uint16_t gpu) const;
  std::vector<PodId> pods_on_node(NodeId node) const { return cluster_->node(node).pods; }

  void take_gpu_down(NodeId node, std::uint16_t gpu, SimTime now, Interruption why);
  void bring_gpu_up(NodeId node, std::uint16_t gpu, SimTime now);
  void take_node_down(NodeId node, SimTime now, Interruption why);
  void bring_node_up(NodeId node, SimTime now);

  // pool.<p>.availability (every pool, once anything went down; nothing otherwise), and
  // pool.<p>.planned_downtime once something went down for a planned reason.
  void add_summary(Summary& summary, SimTime end);
  // A failed GPU holds no pod and offers no unit; a down node holds no pod.
  void check_invariants() const;

 private:
  struct PoolState {
    double capacity = 0;  // GPUs (nodes, for a pool without GPUs)
    double down = 0;      // of them unavailable now
    double planned = 0;   // of those, for a planned reason
    double down_seconds = 0;
    double planned_seconds = 0;
    SimTime last = 0;
  };
  void ensure_pools();
  PoolState& pool_of(NodeId node);
  void advance(PoolState& p, SimTime now);
  // The node's unavailable units (GPUs, or 1 for a node without GPUs), planned ones apart.
  std::pair<double, double> unavailable(NodeId node) const;
  void change(NodeId node, SimTime now, auto&& mutate);

  Cluster* cluster_;
  std::map<std::string, PoolState> pools_;
  std::vector<std::uint8_t> node_planned_;  // per node: down for a planned reason
  std::vector<std::vector<std::uint8_t>> gpu_planned_;
  bool touched_ = false;
  bool any_planned_ = false;  // something went down for a planned reason: report it apart
};

}  // namespace capsim
