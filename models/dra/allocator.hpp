// DRA device allocation on one node, as kube-scheduler's structured allocator does it: the
// requests of all the pod's unallocated claims are filled in order, each with the first devices
// (in the node's device order) that are not allocated, match the device class's and the
// request's CEL selectors, fit the shared counters left in their pool, and keep every
// matchAttribute constraint; on a dead end it backtracks (including into the choice of a
// firstAvailable subrequest). There is no scoring: the first solution found is taken, and the
// node is chosen by the score plugins. allocationMode All takes every matching device and fails
// if one is in use. A shareable device (allowMultipleAllocations) serves several claims while
// their consumed capacity fits (KEP-5075, consumed_capacity below); distinctAttribute constraints
// need pairwise different values. The claim kube-scheduler makes for a pod's extended resources
// (KEP-5004) is passed as a ClaimToAllocate without a claim index and allocated like the rest.
//
// The Allocator compiles every selector of the World once (an expression that does not compile,
// which the loader normally rejects, makes its claims fail with the compile error) and caches
// each selector's verdict per device, since devices and their attributes do not change during a
// run. Not thread-safe (the cache); one per scheduler profile.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/dra/cel.hpp"
#include "sim/dra.hpp"
#include "sim/world.hpp"

namespace capsim::dra {

// Consumable capacity (KEP-5075): what one allocation of a shareable device takes of a capacity
// of `total` (milli) with requestPolicy `policy` (nullptr: none), when the request asks for
// `requested` (nullopt: it names no amount of this capacity). The amount asked for, else the
// policy's default, else all of it; then rounded up as the policy says (validValues: the
// smallest valid value at least that; validRange: at least min, then up to min + n * step).
// nullopt when the policy refuses it (above every valid value, or above max).
std::optional<std::int64_t> consumed_capacity(std::int64_t total, const RequestPolicy* policy,
                                              std::optional<std::int64_t> requested);

struct AllocationFailure {
  std::string reason;         // "claim gpu, request gpu: all matching devices are in use"
  bool unresolvable = false;  // no change in what other pods hold could help on this node
  bool error = false;         // a selector failed to evaluate (a CEL runtime error)
};

struct AllocationOutcome {
  bool ok = false;
  AllocationFailure failure;
  std::vector<ClaimAllocation> allocations;  // one per claim asked for, in order
};

// One request of the claim kube-scheduler makes for a pod's extended resources served through
// DRA (KEP-5004): ExactCount `count` devices of `device_class`, named after the resource.
struct ExtendedRequest {
  ResourceId resource = 0;
  std::uint32_t device_class = kNoClaim;  // index into DraWorld::classes
  std::int32_t count = 0;
  std::string name;  // the resource's name ("nvidia.com/gpu"), for messages and reports
};

// One claim to allocate: its index in DraWorld::claims and the pod's name for it (messages);
// or, with claim == kNoClaim, the pod's extended-resource claim made of `extended`.
struct ClaimToAllocate {
  ClaimToAllocate() = default;
  ClaimToAllocate(std::uint32_t c, std::string name) : claim(c), pod_claim_name(std::move(name)) {}
  std::uint32_t claim = kNoClaim;
  std::string pod_claim_name;
  std::vector<ExtendedRequest> extended;
};

class Allocator {
 public:
  explicit Allocator(const World& world);

  // Allocates `claims` on node `node` given the claims already holding its devices
  // (`used`, NodeInfo::dra_used) and the capacity they consume of shareable devices
  // (`consumed`, NodeInfo::dra_consumed; empty: none). Deterministic.
  AllocationOutcome allocate(NodeId node, std::span<const std::uint16_t> used,
                             std::span<const ClaimToAllocate> claims,
                             std::span<const std::int64_t> consumed = {}) const;

  // The compile error of a claim's selectors (or its class's), empty if none.
  const std::string& claim_error(std::uint32_t claim) const { return claims_.at(claim).error; }
  // The compile error of a device class's selectors, empty if none.
  const std::string& class_error(std::uint32_t device_class) const {
    return class_errors_.at(device_class);
  }

  // Upper bound on search steps per allocation; past it the node is reported as failing.
  static constexpr std::uint64_t kMaxSteps = 200000;

 private:
  struct Sub {
    const SubRequest* spec = nullptr;
    std::string label;                    // "gpu" or "gpu/large"
    std::vector<std::uint32_t> programs;  // class selectors, then the request's
  };
  struct Req {
    std::string name;
    std::vector<Sub> subs;
    std::string device_class;  // the extended-resource claim's: the class serving it
  };
  struct Match {
    std::string domain, name;
    bool distinct = false;  // distinctAttribute: every device's value differs
    std::vector<std::pair<std::uint32_t, std::int32_t>> applies;  // (request, sub or -1: any)
  };
  struct CClaim {
    std::vector<Req> requests;
    std::vector<Match> constraints;
    std::string error;
    bool extended = false;  // the pod's extended-resource claim (KEP-5004)
  };
  class Search;

  // 1 match, 0 no match, -1 error (message in `error`).
  int matches(const Sub& sub, NodeId node, std::uint16_t device, std::string& error) const;

  const World* world_;
  std::vector<std::unique_ptr<cel::Program>> programs_;
  std::vector<std::string> program_where_;
  std::vector<CClaim> claims_;
  std::vector<std::vector<std::uint32_t>> class_programs_;  // per DeviceClass
  std::vector<std::string> class_errors_;                   // per DeviceClass
  std::vector<std::size_t> node_offset_;  // global device id = node_offset_[node] + device
  // Per program, per global device: -1 unknown, 0 no, 1 yes, 2 error.
  mutable std::vector<std::vector<std::int8_t>> verdicts_;
  mutable std::map<std::pair<std::uint32_t, std::size_t>, std::string> errors_;
};

}  // namespace capsim::dra
