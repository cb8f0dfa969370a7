#include "sim/framework/status.hpp"

namespace capsim::fw {

ReasonId ReasonTable::intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  const auto id = static_cast<ReasonId>(texts_.size());
  texts_.emplace_back(text);
  ids_.emplace(std::string_view(texts_.back()), id);
  return id;
}

}  // namespace capsim::fw
