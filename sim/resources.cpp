#include "sim/resources.hpp"

#include <algorithm>

namespace capsim {

ResourceNames::ResourceNames() {
  for (const char* n : {"cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu"}) {
    (void)intern(n);
  }
}

std::optional<ResourceId> ResourceNames::intern(std::string_view name) {
  if (auto it = ids_.find(std::string(name)); it != ids_.end()) return it->second;
  if (names_.size() >= kMaxResources) return std::nullopt;
  const auto id = static_cast<ResourceId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string(name), id);
  return id;
}

std::optional<ResourceId> ResourceNames::find(std::string_view name) const {
  if (auto it = ids_.find(std::string(name)); it != ids_.end()) return it->second;
  return std::nullopt;
}

void ResourceList::set(ResourceId id, std::int64_t value) {
  auto it = std::lower_bound(items.begin(), items.end(), id,
                             [](const auto& p, ResourceId x) { return p.first < x; });
  if (it != items.end() && it->first == id) {
    if (value == 0) {
      items.erase(it);
    } else {
      it->second = value;
    }
    return;
  }
  if (value != 0) items.insert(it, {id, value});
}

}  // namespace capsim
