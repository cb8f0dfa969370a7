#include "sim/pod.hpp"

namespace capsim {

bool is_device_resource(std::string_view name) {
  return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
         name.rfind("nvidia.com/mig-", 0) == 0;
}

void derive_device_requests(PodSpec& pod, const ResourceNames& names) {
  pod.device_requests.clear();
  for (const auto& [r, v] : pod.requests.items) {
    if (v > 0 && is_device_resource(names.name(r))) {
      pod.device_requests.emplace_back(r, static_cast<std::int32_t>(v));
    }
  }
}

}  // namespace capsim
