// The DRA allocator on hand-built nodes (the Kubernetes documentation's driver.example.com and
// NVIDIA-like partitionable GPUs): first fit in device order, backtracking across requests and
// into matchAttribute constraints, firstAvailable, allocationMode All, shared counters, devices
// already allocated, and failure reasons that name the claim and request.
#include "models/dra/allocator.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace capsim;
using capsim::dra::AttrValue;

namespace {

constexpr std::int64_t kGiBMilli = std::int64_t{1024} * 1024 * 1024 * 1000;
constexpr const char* kDriver = "driver.example.com";

AttrValue str(std::string v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kString;
  a.s = std::move(v);
  return a;
}

// A device of the example driver with `gib` GiB of memory behind PCIe root `root` ("" for none).
dra::Device device(const std::string& name, std::int64_t gib, const std::string& root,
                   const std::string& model = "gpu") {
  dra::Device d;
  d.name = name;
  d.attributes.push_back({kDriver, "model", str(model)});
  if (!root.empty()) d.attributes.push_back({"resource.kubernetes.io", "pcieRoot", str(root)});
  d.capacity.push_back({kDriver, "memory", gib * kGiBMilli});
  return d;
}

struct Fixture {
  World world;

  Fixture() {
    dra::DeviceClass any;
    any.name = "example";
    any.selectors.push_back({"device.driver == 'driver.example.com'", "class"});
    world.dra.classes.push_back(any);
  }

  // Node 0 with `devices` in one pool of the example driver.
  void node(std::vector<dra::Device> devices, std::vector<dra::CounterSet> counters = {}) {
    dra::NodeDevices nd;
    nd.pools.push_back({kDriver, "node-0", 1, std::move(counters)});
    nd.devices = std::move(devices);
    world.dra.nodes.push_back(std::move(nd));
  }

  // A claim of `requests`, each (name, selector or "", count; count 0 = allocationMode All).
  std::uint32_t claim(const std::vector<std::tuple<std::string, std::string, int>>& requests,
                      const std::vector<std::string>& match_attributes = {}) {
    dra::Claim c;
    c.name = "c" + std::to_string(world.dra.claims.size());
    for (const auto& [name, selector, count] : requests)
      c.spec.requests.push_back(request(name, selector, count));
    for (const std::string& m : match_attributes)
      c.spec.constraints.push_back({{}, m, "here", false});
    world.dra.claims.push_back(std::move(c));
    return static_cast<std::uint32_t>(world.dra.claims.size() - 1);
  }
  static dra::SubRequest sub(const std::string& name, const std::string& selector, int count) {
    dra::SubRequest s;
    s.name = name;
    s.device_class = "example";
    s.class_index = 0;
    if (!selector.empty()) s.selectors.push_back({selector, name});
    s.mode = count == 0 ? dra::AllocationMode::kAll : dra::AllocationMode::kExactCount;
    s.count = count == 0 ? 1 : count;
    return s;
  }
  static dra::Request request(const std::string& name, const std::string& selector, int count) {
    dra::Request r;
    r.name = name;
    r.subrequests.push_back(sub(name, selector, count));
    return r;
  }
};

// The device names an allocation got, per claim, e.g. {"gpu-1,gpu-2"}.
std::vector<std::string> names(const World& w, const dra::AllocationOutcome& o) {
  std::vector<std::string> out;
  for (const ClaimAllocation& a : o.allocations) {
    std::string s;
    for (std::uint16_t d : a.devices)
      s += (s.empty() ? "" : ",") + w.dra.nodes[0].devices[d].name;
    out.push_back(s);
  }
  return out;
}

std::string mem_at_least(int gib) {
  return "device.capacity['driver.example.com'].memory.compareTo(quantity('" + std::to_string(gib) +
         "Gi')) >= 0";
}

}  // namespace

TEST_CASE("requests are filled first fit in device order, backtracking when a later one fails") {
  Fixture f;
  f.node({device("gpu-0", 80, ""), device("gpu-1", 40, ""), device("gpu-2", 40, "")});
  // First fit would give "small" gpu-0 and leave "big" nothing; the allocator backtracks.
  const std::uint32_t c = f.claim({{"small", mem_at_least(40), 1}, {"big", mem_at_least(80), 1}});
  const dra::Allocator alloc(f.world);
  const std::vector<dra::ClaimToAllocate> claims = {{c, "gpus"}};
  const dra::AllocationOutcome o = alloc.allocate(0, {}, claims);
  REQUIRE(o.ok);
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-1,gpu-0"});
  CHECK(o.allocations[0].requests == std::vector<std::string>{"small", "big"});
  CHECK(o.allocations[0].detail == "gpu-1 (small), gpu-0 (big)");

  // With gpu-0 held by another claim, "big" cannot be met: the reason names claim and request.
  const std::vector<std::uint16_t> used = {1, 0, 0};
  const dra::AllocationOutcome busy = alloc.allocate(0, used, claims);
  REQUIRE_FALSE(busy.ok);
  CHECK(busy.failure.reason == "claim gpus, request big: all matching devices are in use");
  CHECK_FALSE(busy.failure.unresolvable);  // gpu-0 may be freed
  CHECK_FALSE(busy.failure.error);
}

TEST_CASE("matchAttribute keeps every device of a request on one PCIe root, backtracking") {
  Fixture f;
  f.node({device("gpu-0", 80, "pci-a"), device("gpu-1", 80, "pci-b"), device("gpu-2", 80, "pci-b"),
          device("gpu-3", 80, "")});
  const std::uint32_t pair = f.claim({{"gpus", "", 2}}, {"resource.kubernetes.io/pcieRoot"});
  const dra::Allocator alloc(f.world);
  const std::vector<dra::ClaimToAllocate> claims = {{pair, "pair"}};
  dra::AllocationOutcome o = alloc.allocate(0, {}, claims);
  REQUIRE(o.ok);
  // gpu-0 is tried first, has no partner on pci-a, and is given up.
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-1,gpu-2"});

  // gpu-2 taken: gpu-1 has no partner; gpu-3 lacks the attribute, so it never pairs.
  const std::vector<std::uint16_t> used = {0, 0, 1, 0};
  o = alloc.allocate(0, used, claims);
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason ==
        "claim pair: its requests cannot be satisfied together (the devices that are free do not "
        "meet its constraints)");
  CHECK_FALSE(o.failure.unresolvable);
}

TEST_CASE("firstAvailable takes the first subrequest that can be met and says which") {
  Fixture f;
  f.node({device("gpu-0", 80, "", "a100"), device("gpu-1", 180, "", "b200")});
  dra::Claim c;
  c.name = "fallback";
  dra::Request r;
  r.name = "gpu";
  r.first_available = true;
  r.subrequests = {
      Fixture::sub("b200", "device.attributes['driver.example.com'].model == 'b200'", 1),
      Fixture::sub("a100", "device.attributes['driver.example.com'].model == 'a100'", 1)};
  c.spec.requests.push_back(r);
  f.world.dra.claims.push_back(c);
  const dra::Allocator alloc(f.world);
  const std::vector<dra::ClaimToAllocate> claims = {{0, "gpu"}};

  dra::AllocationOutcome o = alloc.allocate(0, {}, claims);
  REQUIRE(o.ok);
  CHECK(o.allocations[0].detail == "gpu-1 (gpu/b200)");

  const std::vector<std::uint16_t> b200_busy = {0, 1};
  o = alloc.allocate(0, b200_busy, claims);
  REQUIRE(o.ok);
  CHECK(o.allocations[0].detail == "gpu-0 (gpu/a100)");

  const std::vector<std::uint16_t> both_busy = {1, 1};
  o = alloc.allocate(0, both_busy, claims);
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason ==
        "claim gpu, request gpu: no subrequest can be satisfied (b200: all matching devices are in "
        "use; a100: all matching devices are in use)");
}

TEST_CASE("allocationMode All takes every matching device, and none if one is in use") {
  Fixture f;
  f.node({device("gpu-0", 80, ""), device("gpu-1", 40, ""), device("gpu-2", 80, "")});
  const std::uint32_t all = f.claim({{"big", mem_at_least(80), 0}});
  const std::uint32_t one = f.claim({{"any", "", 1}});
  const dra::Allocator alloc(f.world);

  dra::AllocationOutcome o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{all, "all"}});
  REQUIRE(o.ok);
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-0,gpu-2"});

  // Allocated together with a one-device claim, the All claim goes first and "any" gets gpu-1.
  o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{all, "all"}, {one, "one"}});
  REQUIRE(o.ok);
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-0,gpu-2", "gpu-1"});

  const std::vector<std::uint16_t> used = {0, 0, 1};
  o = alloc.allocate(0, used, std::vector<dra::ClaimToAllocate>{{all, "all"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason ==
        "claim all, request big: some matching devices are in use (allocationMode All takes every "
        "one)");
}

TEST_CASE("shared counters make a whole device and its partitions exclude each other") {
  Fixture f;
  // One GPU with 2 memory slices: whole (both slices) or two halves (one slice each).
  dra::CounterSet set;
  set.name = "gpu-0-counter-set";
  set.counters = {{"memory-slice-0", 1000}, {"memory-slice-1", 1000}};
  dra::Device whole = device("gpu-0", 80, "");
  whole.consumes.push_back({0, {{0, 1000}, {1, 1000}}});
  dra::Device half0 = device("gpu-0-half-0", 40, "", "half");
  half0.consumes.push_back({0, {{0, 1000}}});
  dra::Device half1 = device("gpu-0-half-1", 40, "", "half");
  half1.consumes.push_back({0, {{1, 1000}}});
  f.node({whole, half0, half1}, {set});
  const std::uint32_t gpu =
      f.claim({{"gpu", "device.attributes['driver.example.com'].model == 'gpu'", 1}});
  const std::uint32_t half =
      f.claim({{"half", "device.attributes['driver.example.com'].model == 'half'", 1}});
  const dra::Allocator alloc(f.world);

  // A half is held: the whole GPU's counters no longer fit, the other half's do.
  const std::vector<std::uint16_t> half_used = {0, 1, 0};
  dra::AllocationOutcome o =
      alloc.allocate(0, half_used, std::vector<dra::ClaimToAllocate>{{gpu, "g"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason == "claim g, request gpu: all matching devices are in use");
  o = alloc.allocate(0, half_used, std::vector<dra::ClaimToAllocate>{{half, "h"}});
  REQUIRE(o.ok);
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-0-half-1"});

  // The whole GPU held: no half fits.
  const std::vector<std::uint16_t> whole_used = {1, 0, 0};
  o = alloc.allocate(0, whole_used, std::vector<dra::ClaimToAllocate>{{half, "h"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason == "claim h, request half: all matching devices are in use");
  // Two claims in one cycle: the whole GPU first leaves no half for the second.
  o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{gpu, "g"}, {half, "h"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason ==
        "claim g: its requests cannot be satisfied together (the node's devices cannot serve them "
        "all)");
  CHECK(o.failure.unresolvable);  // even with nothing else held
}

TEST_CASE("a node without matching devices is unresolvable; a selector error is an error") {
  Fixture f;
  f.node({device("gpu-0", 40, ""), device("gpu-1", 40, "")});
  const std::uint32_t big = f.claim({{"gpu", mem_at_least(80), 1}});
  const std::uint32_t three = f.claim({{"gpus", "", 3}});
  const std::uint32_t bad =
      f.claim({{"gpu", "device.attributes['driver.example.com'].missing == 'x'", 1}});
  const dra::Allocator alloc(f.world);

  dra::AllocationOutcome o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{big, "big"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason == "claim big, request gpu: no device on the node matches its selectors");
  CHECK(o.failure.unresolvable);

  o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{three, "three"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.reason ==
        "claim three, request gpus: the node has fewer matching devices than the 3 it asks for");
  CHECK(o.failure.unresolvable);

  o = alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{bad, "bad"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.error);
  CHECK(o.failure.reason.find("device gpu-0") != std::string::npos);
  CHECK(o.failure.reason.find("no such key: missing") != std::string::npos);
}

TEST_CASE("a selector that does not compile fails its claims with the compile error") {
  Fixture f;
  f.node({device("gpu-0", 40, "")});
  const std::uint32_t c =
      f.claim({{"gpu", "device.capacity['driver.example.com'].memory * 2 > 1", 1}});
  const dra::Allocator alloc(f.world);
  CHECK(alloc.claim_error(c).find("1:") != std::string::npos);
  const dra::AllocationOutcome o =
      alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{c, "x"}});
  REQUIRE_FALSE(o.ok);
  CHECK(o.failure.error);
  CHECK(o.failure.reason.rfind("claim x: gpu: ", 0) == 0);  // the selector's `where`
}

TEST_CASE("the extended-resource claim: one ExactCount request per resource, after the pod's") {
  // KEP-5004: the scheduler's claim for a pod's extended resources asks the serving class for
  // `count` devices per resource and is allocated after the pod's own claims, on the devices
  // they leave.
  Fixture f;
  dra::DeviceClass big;
  big.name = "big";
  big.selectors.push_back({mem_at_least(80), "big class"});
  f.world.dra.classes.push_back(big);  // class 1
  f.node({device("gpu-0", 80, ""), device("gpu-1", 40, ""), device("gpu-2", 80, ""),
          device("gpu-3", 40, "")});
  const std::uint32_t own = f.claim({{"gpu", "", 1}});
  const dra::Allocator alloc(f.world);
  auto ext = [](std::vector<dra::ExtendedRequest> reqs) {
    dra::ClaimToAllocate c;
    c.extended = std::move(reqs);
    return c;
  };
  struct Case {
    const char* name;
    std::vector<dra::ClaimToAllocate> claims;
    std::vector<std::uint16_t> used;
    std::vector<std::string> want;  // devices per claim; empty: fails with `reason`
    const char* reason;
    bool unresolvable;
  };
  const std::vector<Case> cases = {
      // 2 of class "example" (any device): gpu-0, gpu-1.
      {"two of any", {ext({{3, 0, 2, "example.com/gpu"}})}, {}, {"gpu-0,gpu-1"}, "", false},
      // The pod's claim takes gpu-0 first; the 80 GiB class then gets gpu-2 only.
      {"after the pod's claim",
       {{own, "gpu"}, ext({{4, 1, 1, "example.com/big"}})},
       {},
       {"gpu-0", "gpu-2"},
       "",
       false},
      // Two resources, two requests: any x1 (gpu-0), big x1 (gpu-2: gpu-0 is taken).
      {"two resources",
       {ext({{3, 0, 1, "example.com/gpu"}, {4, 1, 1, "example.com/big"}})},
       {},
       {"gpu-0,gpu-2"},
       "",
       false},
      // 3 of big: the node has 2 such devices (gpu-0, gpu-2): never.
      {"more than the node has",
       {ext({{4, 1, 3, "example.com/big"}})},
       {},
       {},
       "extended resource example.com/big (device class big): the node has fewer matching "
       "devices than the 3 it asks for",
       true},
      // Both 80 GiB devices held: wait.
      {"all in use",
       {ext({{4, 1, 1, "example.com/big"}})},
       {1, 0, 1, 0},
       {},
       "extended resource example.com/big (device class big): all matching devices are in use",
       false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const dra::AllocationOutcome o = alloc.allocate(0, c.used, c.claims);
    if (c.want.empty()) {
      REQUIRE_FALSE(o.ok);
      CHECK(o.failure.reason == c.reason);
      CHECK(o.failure.unresolvable == c.unresolvable);
      continue;
    }
    REQUIRE(o.ok);
    CHECK(names(f.world, o) == c.want);
  }
  // The requests are named after the resources.
  const dra::AllocationOutcome o =
      alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{ext({{3, 0, 2, "example.com/gpu"}})});
  REQUIRE(o.ok);
  CHECK(o.allocations[0].detail == "gpu-0 (example.com/gpu), gpu-1 (example.com/gpu)");
}

TEST_CASE("consumed capacity follows the request, the default and the policy's rounding") {
  // KEP-5075, CapacityRequestPolicy and CapacityRequestPolicyRange as the API documents them.
  // Amounts are in milli (x1000); "G" below is 10^9.
  constexpr std::int64_t G = std::int64_t{1000} * 1000 * 1000 * 1000;  // 1G in milli
  dra::RequestPolicy none;
  dra::RequestPolicy def;  // default 1G only
  def.has_default = true;
  def.default_milli = 1 * G;
  dra::RequestPolicy range;  // validRange {min 1G, max 8G, step 2G}, default 1G
  range.has_default = true;
  range.default_milli = 1 * G;
  range.has_range = true;
  range.min = 1 * G;
  range.max = 8 * G;
  range.step = 2 * G;
  dra::RequestPolicy open_range = range;  // min 1G, no max, no step
  open_range.max = -1;
  open_range.step = 0;
  dra::RequestPolicy values;  // validValues {1G, 4G, 10G}, default 4G
  values.has_default = true;
  values.default_milli = 4 * G;
  values.valid_values = {1 * G, 4 * G, 10 * G};
  struct Case {
    const char* name;
    const dra::RequestPolicy* policy;
    std::optional<std::int64_t> requested;
    std::optional<std::int64_t> want;
  };
  const Case cases[] = {
      {"no policy, nothing asked: the whole 10G", nullptr, std::nullopt, 10 * G},
      {"no policy, 3G asked: 3G", nullptr, 3 * G, 3 * G},
      {"an empty policy is no rounding: 3G", &none, 3 * G, 3 * G},
      {"default only, nothing asked: 1G", &def, std::nullopt, 1 * G},
      {"default only, 3G asked: 3G", &def, 3 * G, 3 * G},
      {"range, nothing asked: the default 1G", &range, std::nullopt, 1 * G},
      {"range, 500M < min: rounded up to min 1G", &range, G / 2, 1 * G},
      {"range, 2G: 1G + ceil(1G/2G)*2G = 3G", &range, 2 * G, 3 * G},
      {"range, 3G is aligned: 3G", &range, 3 * G, 3 * G},
      {"range, 6G: 1G + ceil(5G/2G)*2G = 7G", &range, 6 * G, 7 * G},
      {"range, 7.5G: 1G + ceil(6.5G/2G)*2G = 9G > max 8G: refused", &range, 15 * G / 2,
       std::nullopt},
      {"range without max or step: 9G as asked", &open_range, 9 * G, 9 * G},
      {"values, nothing asked: the default 4G", &values, std::nullopt, 4 * G},
      {"values, 2G: the smallest valid value >= 2G is 4G", &values, 2 * G, 4 * G},
      {"values, 10G: 10G", &values, 10 * G, 10 * G},
      {"values, 11G: above every valid value, refused", &values, 11 * G, std::nullopt},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(dra::consumed_capacity(10 * G, c.policy, c.requested) == c.want);
  }
}

TEST_CASE("a shareable device serves claims until their consumed capacity fills it") {
  // One NIC with 10 bandwidth units (allowMultipleAllocations) and an exclusive NIC with 4.
  // Each case: the capacity already consumed of the shareable NIC, what the request asks for,
  // and which device it gets.
  Fixture f;
  dra::Device shared;
  shared.name = "nic-0";
  shared.allow_multiple_allocations = true;
  shared.capacity.push_back({kDriver, "bandwidth", 10 * 1000});
  dra::RequestPolicy p;  // validRange {min 1, step 1}: whole units, default 2
  p.has_default = true;
  p.default_milli = 2 * 1000;
  p.has_range = true;
  p.min = 1000;
  p.step = 1000;
  shared.policies.emplace_back(0, p);
  dra::Device excl;
  excl.name = "nic-1";
  excl.capacity.push_back({kDriver, "bandwidth", 4 * 1000});
  f.node({shared, excl});
  auto claim_asking = [&](std::optional<std::int64_t> units) {
    dra::Claim c;
    c.name = "c" + std::to_string(f.world.dra.claims.size());
    dra::Request r = Fixture::request("net", "", 1);
    if (units) r.subrequests[0].capacity_requests.emplace_back("bandwidth", *units * 1000);
    c.spec.requests.push_back(r);
    f.world.dra.claims.push_back(std::move(c));
    return static_cast<std::uint32_t>(f.world.dra.claims.size() - 1);
  };
  const std::uint32_t ask3 = claim_asking(3);
  const std::uint32_t ask_default = claim_asking(std::nullopt);
  const std::uint32_t ask2_5 = claim_asking(std::nullopt);
  f.world.dra.claims[ask2_5].spec.requests[0].subrequests[0].capacity_requests.emplace_back(
      "driver.example.com/bandwidth", 2500);  // 2.5 units, qualified name
  const std::uint32_t ask11 = claim_asking(11);
  const dra::Allocator alloc(f.world);
  struct Case {
    const char* name;
    std::uint32_t claim;
    std::int64_t consumed;  // of nic-0, in units
    std::uint16_t nic1_used;
    std::string want;            // device, or "" when it fails
    std::int64_t want_consumed;  // units this allocation takes of nic-0
  };
  const Case cases[] = {
      {"3 of 10 free: nic-0, 3", ask3, 0, 0, "nic-0", 3},
      {"7 consumed, 3 more fit exactly: nic-0", ask3, 7, 0, "nic-0", 3},
      {"8 consumed, 3 do not fit; nic-1 (exclusive, 4 >= 3)", ask3, 8, 0, "nic-1", 0},
      {"8 consumed and nic-1 taken: fails", ask3, 8, 1, "", 0},
      {"nothing asked: the default 2", ask_default, 0, 0, "nic-0", 2},
      {"2.5 asked: min 1 + ceil(1.5/1)*1 = 3", ask2_5, 0, 0, "nic-0", 3},
      {"11 asked: more than either NIC has, never", ask11, 0, 0, "", 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::vector<std::uint16_t> used = {c.consumed > 0 ? std::uint16_t{1} : std::uint16_t{0},
                                             c.nic1_used};
    const std::vector<std::int64_t> consumed = {c.consumed * 1000, 0};
    const std::vector<dra::ClaimToAllocate> claims = {{c.claim, "net"}};
    const dra::AllocationOutcome o = alloc.allocate(0, used, claims, consumed);
    if (c.want.empty()) {
      CHECK_FALSE(o.ok);
      continue;
    }
    REQUIRE(o.ok);
    CHECK(names(f.world, o) == std::vector<std::string>{c.want});
    std::int64_t took = 0;
    for (const auto& [ci, amount] : o.allocations[0].consumed) {
      CHECK(ci == 0);  // nic-0's only capacity
      took += amount;
    }
    CHECK(took == c.want_consumed * 1000);
  }
  // The reasons: 11 can never be served; with 9 consumed and nic-1 held, capacity is short.
  const dra::AllocationOutcome never =
      alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{ask11, "net"}});
  CHECK(never.failure.reason ==
        "claim net, request net: no matching device can serve the capacity it requests");
  CHECK(never.failure.unresolvable);
  const dra::AllocationOutcome full = alloc.allocate(
      0, std::vector<std::uint16_t>{1, 1}, std::vector<dra::ClaimToAllocate>{{ask3, "net"}},
      std::vector<std::int64_t>{9000, 0});
  CHECK(full.failure.reason ==
        "claim net, request net: too little capacity is left on the matching devices");
  CHECK_FALSE(full.failure.unresolvable);
}

TEST_CASE("distinctAttribute takes devices whose values of the attribute all differ") {
  // Four GPUs on PCIe roots a, a, b, b; three requests of one GPU each, distinct roots: the
  // third cannot be met (two roots), two can (gpu-0 on a, gpu-2 on b: gpu-1 shares gpu-0's).
  Fixture f;
  f.node({device("gpu-0", 80, "a"), device("gpu-1", 80, "a"), device("gpu-2", 80, "b"),
          device("gpu-3", 80, "b")});
  auto distinct_claim = [&](int n) {
    dra::Claim c;
    c.name = "d" + std::to_string(n);
    for (int i = 0; i < n; ++i)
      c.spec.requests.push_back(Fixture::request("g" + std::to_string(i), "", 1));
    c.spec.constraints.push_back({{}, "resource.kubernetes.io/pcieRoot", "here", true});
    f.world.dra.claims.push_back(std::move(c));
    return static_cast<std::uint32_t>(f.world.dra.claims.size() - 1);
  };
  const std::uint32_t two = distinct_claim(2);
  const std::uint32_t three = distinct_claim(3);
  const dra::Allocator alloc(f.world);
  const dra::AllocationOutcome o =
      alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{two, "d"}});
  REQUIRE(o.ok);
  CHECK(names(f.world, o) == std::vector<std::string>{"gpu-0,gpu-2"});
  const dra::AllocationOutcome no =
      alloc.allocate(0, {}, std::vector<dra::ClaimToAllocate>{{three, "d"}});
  CHECK_FALSE(no.ok);
  CHECK(no.failure.unresolvable);  // even with every device free
}
