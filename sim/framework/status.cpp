#include "sim/framework/status.hpp"

#include "sim/check.hpp"

namespace capsim::fw {

ReasonId ReasonTable::intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  CAPSIM_CHECK(texts_.size() < 0xffff, "too many distinct plugin reasons");
  const auto id = static_cast<ReasonId>(texts_.size());
  texts_.emplace_back(text);
  ids_.emplace(std::string_view(texts_.back()), id);
  return id;
}

}  // namespace capsim::fw
