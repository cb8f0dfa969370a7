// Plugin results. "Unschedulable" is an outcome, not an error: a Filter that rejects a node
// returns a Status carrying reason strings users will read ("Insufficient nvidia.com/gpu").
// Reasons are interned in a ReasonTable so that a Status is a small value and the filter hot path
// never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace capsim::fw {

enum class Code : std::uint8_t {
  kSuccess,
  kError,
  kUnschedulable,                 // might fit after other pods leave (preemption may help)
  kUnschedulableAndUnresolvable,  // will not fit whatever other pods do
  kSkip,                          // PreFilter/PreScore: this plugin has nothing to do for the pod
};

// 0 is "no reason". 16 bits keep Status at 16 bytes, returned in registers on the Filter hot
// path; plugin reasons are few (one per resource, taint, ...), so the table never gets near 65535.
using ReasonId = std::uint16_t;

class ReasonTable {
 public:
  ReasonTable() { (void)intern(""); }
  ReasonId intern(std::string_view text);
  const std::string& text(ReasonId id) const { return texts_[id]; }

 private:
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, ReasonId> ids_;
};

struct Status {
  static constexpr std::size_t kMaxReasons = 6;  // 2 + 2 + 6 x 2 = 16 bytes

  Code code = Code::kSuccess;
  std::uint8_t count = 0;
  std::int16_t plugin = -1;  // index of the plugin that produced it (set by the framework)
  std::array<ReasonId, kMaxReasons> reasons{};

  static Status success() { return {}; }
  static Status skip() { return Status{Code::kSkip}; }
  static Status unschedulable(ReasonId r) { return with(Code::kUnschedulable, r); }
  static Status unresolvable(ReasonId r) { return with(Code::kUnschedulableAndUnresolvable, r); }
  static Status error(ReasonId r) { return with(Code::kError, r); }
  static Status with(Code c, ReasonId r) {
    Status s{c};
    s.add_reason(r);
    return s;
  }
  void add_reason(ReasonId r) {
    if (count < kMaxReasons) reasons[count++] = r;
  }
  bool is_success() const { return code == Code::kSuccess; }
  bool is_rejection() const {
    return code == Code::kUnschedulable || code == Code::kUnschedulableAndUnresolvable;
  }
};
static_assert(sizeof(Status) == 16, "Status must stay small: it is returned per node per plugin");

}  // namespace capsim::fw
