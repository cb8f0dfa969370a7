#include "models/plugins/gpu_share.hpp"

#include <algorithm>

#include "sim/check.hpp"

namespace capsim::plugins {

ShareRequest share_request(const PodSpec& pod) {
  ShareRequest r;
  const std::int64_t cpu = pod.requests.get(kCpu);
  r.cpu = cpu != 0 ? cpu : kDefaultMilliCpuRequest;
  if (pod.gpu_count > 0) {
    r.count = pod.gpu_count;
    r.milli = 1000;
  } else if (pod.gpu_milli > 0) {
    r.count = 1;
    r.milli = pod.gpu_milli;
  }
  return r;
}

bool gpu_model_allowed(const PodSpec& pod, const NodeSpec& node) {
  if (pod.gpu_models.empty()) return true;
  if (node.gpu_model == kNoGpuModel) return false;
  return std::find(pod.gpu_models.begin(), pod.gpu_models.end(), node.gpu_model) !=
         pod.gpu_models.end();
}

std::int32_t GpuLeft::fully_free() const {
  std::int32_t n_free = 0;
  for (std::size_t i = 0; i < n; ++i)
    n_free += left[i] == 1000 ? 1 : 0;
  return n_free;
}

GpuLeft gpu_left(const NodeInfo& node) {
  GpuLeft g;
  CAPSIM_CHECK(node.gpus.size() <= g.left.size(), "a node has more GPUs than capsim supports");
  g.n = node.gpus.size();
  for (std::size_t i = 0; i < g.n; ++i) {
    // A failed GPU (unhealthy) offers nothing.
    g.left[i] = node.gpus[i].failed ? 0 : 1000 - node.gpus[i].milli_used;
    g.total += g.left[i];
  }
  return g;
}

std::int64_t gpu_left_total(const NodeInfo& node) {
  std::int64_t total = 0;
  for (const GpuDeviceState& g : node.gpus)
    total += g.failed ? 0 : 1000 - g.milli_used;
  return total;
}

int best_fit_gpu(std::span<const std::int32_t> left, std::int32_t milli) {
  int best = -1;
  for (std::size_t i = 0; i < left.size(); ++i) {
    if (left[i] >= milli && (best < 0 || left[i] < left[static_cast<std::size_t>(best)]))
      best = static_cast<int>(i);
  }
  return best;
}

int worst_fit_gpu(std::span<const std::int32_t> left, std::int32_t milli) {
  int best = -1;
  for (std::size_t i = 0; i < left.size(); ++i) {
    if (left[i] >= milli && (best < 0 || left[i] > left[static_cast<std::size_t>(best)]))
      best = static_cast<int>(i);
  }
  return best;
}

bool first_free_gpus(std::span<const std::int32_t> left, std::int32_t count,
                     std::vector<std::uint16_t>& out) {
  out.clear();
  for (std::size_t i = 0; i < left.size() && static_cast<std::int32_t>(out.size()) < count; ++i) {
    if (left[i] == 1000) out.push_back(static_cast<std::uint16_t>(i));
  }
  return static_cast<std::int32_t>(out.size()) == count;
}

bool subtract_request(GpuLeft& g, std::int64_t& cpu_left, const ShareRequest& r) {
  if (cpu_left < r.cpu || static_cast<std::int32_t>(g.n) < r.count) return false;
  cpu_left -= r.cpu;
  if (r.count == 0) return true;
  // Least milli left first, stable by index (SortedMilliGpuLeftIndexList(ascending)).
  std::array<std::uint8_t, 64> idx{};
  for (std::size_t i = 0; i < g.n; ++i)
    idx[i] = static_cast<std::uint8_t>(i);
  std::stable_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(g.n),
                   [&](std::uint8_t a, std::uint8_t b) { return g.left[a] < g.left[b]; });
  std::int32_t need = r.count;
  for (std::size_t k = 0; k < g.n && need > 0; ++k) {
    std::int32_t& l = g.left[idx[k]];
    if (l >= r.milli) {
      l -= r.milli;
      g.total -= r.milli;
      --need;
    }
  }
  return need == 0;
}

}  // namespace capsim::plugins
