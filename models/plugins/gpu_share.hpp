// The GPU-share view the FGD study's simulator (Open-Gpu-Share and its score plugins) takes of
// pods and nodes, shared by the OpenGpuShare filter/reserve plugin and the six policy scores:
// a pod asks for `count` GPUs with `milli` of each (a share is count 1, milli < 1000; whole GPUs
// are milli 1000; a CPU-only pod is 0 x 0), and a node is its GPU model, free CPU and the milli
// left on each GPU. Pure functions; nothing here holds state.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/cluster.hpp"

namespace capsim::plugins {

// The largest CPU (millicores) and GPU (milli) of a node in the trace: the normalisers of the
// peer's DotProduct, BestFit and GpuClustering scores (utils.MaxSpecCpu, MaxSpecGpu).
inline constexpr double kMaxSpecCpu = 128000;
inline constexpr std::int64_t kMaxSpecGpuMilli = 8000;

struct ShareRequest {
  std::int64_t cpu = 0;    // the non-zero CPU request (100m when the pod asks for none)
  std::int32_t milli = 0;  // per GPU: 1000 for whole GPUs, the share, or 0
  std::int32_t count = 0;  // GPUs
  bool wants_gpu() const { return count > 0; }
  bool is_share() const { return count == 1 && milli < 1000; }
  std::int64_t total_milli() const { return std::int64_t{count} * milli; }
};

ShareRequest share_request(const PodSpec& pod);

// Whether the pod may use the node's GPU model (IsNodeAccessibleToPodByType): no list means any
// model; a node without GPUs satisfies no list.
bool gpu_model_allowed(const PodSpec& pod, const NodeSpec& node);

// The milli left on each GPU of a node, in device order. Only the first `n` entries are set
// (and copied): building one per node per pod must not clear 64 slots.
struct GpuLeft {
  GpuLeft() = default;
  GpuLeft(const GpuLeft& o) : n(o.n), total(o.total) {
    std::copy(o.left.begin(), o.left.begin() + static_cast<std::ptrdiff_t>(n), left.begin());
  }
  GpuLeft& operator=(const GpuLeft& o) {
    n = o.n;
    total = o.total;
    std::copy(o.left.begin(), o.left.begin() + static_cast<std::ptrdiff_t>(n), left.begin());
    return *this;
  }
  std::array<std::int32_t, 64> left;  // NOLINT: only [0, n) is meaningful
  std::size_t n = 0;
  std::int64_t total = 0;
  std::span<const std::int32_t> span() const { return {left.data(), n}; }
  std::int32_t fully_free() const;
};
// The milli left summed over a node's GPUs.
std::int64_t gpu_left_total(const NodeInfo& node);
GpuLeft gpu_left(const NodeInfo& node);

// The GPU a share pod takes under the peer's "best" selection: the one with the least milli left
// that still fits, the lowest index on ties; -1 if none fits.
int best_fit_gpu(std::span<const std::int32_t> left, std::int32_t milli);
// "worst": the most milli left that fits, lowest index on ties.
int worst_fit_gpu(std::span<const std::int32_t> left, std::int32_t milli);
// The GPUs an exclusive (whole-GPU) pod takes: the first `count` fully free ones by index
// (AllocateExclusiveGpuId). False if there are fewer.
bool first_free_gpus(std::span<const std::int32_t> left, std::int32_t count,
                     std::vector<std::uint16_t>& out);
// The node state after hosting the request as NodeResource.Sub does it: CPU taken, and `count`
// GPUs with enough left taken from the least sufficient up (stable by index). False if it does
// not fit.
bool subtract_request(GpuLeft& g, std::int64_t& cpu_left, const ShareRequest& r);

}  // namespace capsim::plugins
