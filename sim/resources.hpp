// Resource names and amounts. A run interns every resource name it meets (cpu, memory,
// nvidia.com/gpu, nvidia.com/mig-1g.10gb, ...) into a small dense id, so node state can keep
// amounts in fixed arrays and the Filter hot path compares integers. Units follow Kubernetes'
// integer forms: cpu in millicores, memory and storage in bytes, everything else in units.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace capsim {

using ResourceId = std::uint8_t;
// Distinct resource names in one run. 128 holds every MIG profile name of every MIG-capable GPU
// in the catalog under the mixed strategy (39), with their time-sliced ".shared" names and room
// for extended resources, at 1 KiB per ResourceVec (5 per node). ResourceId is a byte, and
// kNoResource (0xff) stays out of range.
inline constexpr std::size_t kMaxResources = 128;
static_assert(kMaxResources < 0xff);

// Ids fixed in every run.
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kEphemeralStorage = 2;
inline constexpr ResourceId kPods = 3;
inline constexpr ResourceId kNvidiaGpu = 4;
inline constexpr std::size_t kFixedResources = 5;
inline constexpr ResourceId kNoResource = 0xff;  // no resource (ids stay below kMaxResources)

// Kubernetes' defaults for containers that request no cpu or memory, used by the scoring
// strategies (schedutil.DefaultMilliCPURequest / DefaultMemoryRequest).
inline constexpr std::int64_t kDefaultMilliCpuRequest = 100;
inline constexpr std::int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

class ResourceNames {
 public:
  ResourceNames();
  // Returns the id of `name`, adding it if new; nullopt when the table is full.
  std::optional<ResourceId> intern(std::string_view name);
  std::optional<ResourceId> find(std::string_view name) const;
  const std::string& name(ResourceId id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }
  // "Scalar" in kube-scheduler's sense: an extended, hugepages or attachable resource, i.e. not
  // cpu, memory or ephemeral-storage. Scoring skips scalar resources a pod does not request.
  static bool is_scalar(ResourceId id) { return id >= kNvidiaGpu; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, ResourceId> ids_;
};

// Amounts indexed by ResourceId. Value type; zero-initialised.
struct ResourceVec {
  std::array<std::int64_t, kMaxResources> v{};

  std::int64_t& operator[](ResourceId id) { return v[id]; }
  std::int64_t operator[](ResourceId id) const { return v[id]; }
  bool operator==(const ResourceVec&) const = default;
};

// A pod's requests: the few resources it names, sorted by id.
struct ResourceList {
  std::vector<std::pair<ResourceId, std::int64_t>> items;

  std::int64_t get(ResourceId id) const {
    for (const auto& [rid, val] : items) {
      if (rid == id) return val;
    }
    return 0;
  }
  void set(ResourceId id, std::int64_t value);
  void add_to(ResourceVec& target, std::int64_t sign = 1) const {
    for (const auto& [rid, val] : items)
      target[rid] += sign * val;
  }
};

}  // namespace capsim
