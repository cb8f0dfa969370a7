// PrioritySort (QueueSort): higher priority first; among equals, the pod that entered the queue
// earlier. The framework breaks remaining ties by insertion order.
#pragma once

#include "sim/framework/plugin.hpp"

namespace capsim::plugins {

class PrioritySort final : public fw::Plugin, public fw::QueueSortPlugin {
 public:
  std::string_view name() const override { return "PrioritySort"; }
  bool less(const fw::QueuedPodInfo& a, const fw::QueuedPodInfo& b) const override {
    return a.priority > b.priority || (a.priority == b.priority && a.timestamp < b.timestamp);
  }
};

}  // namespace capsim::plugins
