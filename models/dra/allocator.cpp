#include "models/dra/allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace capsim::dra {

std::optional<std::int64_t> consumed_capacity(std::int64_t total, const RequestPolicy* policy,
                                              std::optional<std::int64_t> requested) {
  std::int64_t amount = requested ? *requested : total;
  if (!requested && policy != nullptr && policy->has_default) amount = policy->default_milli;
  if (policy == nullptr) return amount;
  if (!policy->valid_values.empty()) {
    // The smallest valid value >= the amount; above them all, refused.
    const auto it =
        std::lower_bound(policy->valid_values.begin(), policy->valid_values.end(), amount);
    if (it == policy->valid_values.end()) return std::nullopt;
    return *it;
  }
  if (policy->has_range) {
    if (amount < policy->min) amount = policy->min;
    if (policy->step > 0) {
      // min + ceil((amount - min) / step) * step
      const std::int64_t over = amount - policy->min;
      amount = policy->min + (over + policy->step - 1) / policy->step * policy->step;
    }
    if (policy->max >= 0 && amount > policy->max) return std::nullopt;
  }
  return amount;
}

Allocator::Allocator(const World& world) : world_(&world) {
  const DraWorld& w = world.dra;
  std::size_t offset = 0;
  for (const NodeDevices& n : w.nodes) {
    node_offset_.push_back(offset);
    offset += n.devices.size();
  }
  node_offset_.push_back(offset);

  auto compile = [&](const Selector& s, std::string& error) -> std::uint32_t {
    auto p = cel::Program::compile(s.expression);
    if (!p) {
      if (error.empty()) error = fmt::format("{}: {}", s.where, p.error());
      return 0xffffffffu;
    }
    programs_.push_back(std::make_unique<cel::Program>(std::move(p).value()));
    program_where_.push_back(s.where);
    verdicts_.emplace_back();
    return static_cast<std::uint32_t>(programs_.size() - 1);
  };

  std::vector<std::vector<std::uint32_t>>& class_programs = class_programs_;
  std::vector<std::string>& class_errors = class_errors_;
  class_programs.resize(w.classes.size());
  class_errors.resize(w.classes.size());
  for (std::size_t c = 0; c < w.classes.size(); ++c) {
    for (const Selector& s : w.classes[c].selectors) {
      const std::uint32_t id = compile(s, class_errors[c]);
      if (id != 0xffffffffu) class_programs[c].push_back(id);
    }
  }

  claims_.resize(w.claims.size());
  for (std::size_t k = 0; k < w.claims.size(); ++k) {
    const Claim& claim = w.claims[k];
    CClaim& out = claims_[k];
    for (const Request& r : claim.spec.requests) {
      Req req;
      req.name = r.name;
      for (const SubRequest& s : r.subrequests) {
        Sub sub;
        sub.spec = &s;
        sub.label = r.first_available ? r.name + "/" + s.name : r.name;
        if (s.class_index == kNoClaim || s.class_index >= w.classes.size()) {
          if (out.error.empty()) {
            out.error = fmt::format("{}: request {}: device class {} does not exist", s.where,
                                    sub.label, s.device_class);
          }
        } else {
          if (out.error.empty() && !class_errors[s.class_index].empty()) {
            out.error = class_errors[s.class_index];
          }
          sub.programs = class_programs[s.class_index];
        }
        for (const Selector& sel : s.selectors) {
          const std::uint32_t id = compile(sel, out.error);
          if (id != 0xffffffffu) sub.programs.push_back(id);
        }
        req.subs.push_back(std::move(sub));
      }
      out.requests.push_back(std::move(req));
    }
    for (const Constraint& c : claim.spec.constraints) {
      Match m;
      const auto slash = c.match_attribute.rfind('/');
      m.domain = slash == std::string::npos ? "" : c.match_attribute.substr(0, slash);
      m.name = slash == std::string::npos ? c.match_attribute : c.match_attribute.substr(slash + 1);
      m.distinct = c.distinct;
      for (std::uint32_t ri = 0; ri < out.requests.size(); ++ri) {
        const Req& req = out.requests[ri];
        if (c.requests.empty()) {
          m.applies.emplace_back(ri, -1);
          continue;
        }
        for (const std::string& name : c.requests) {
          if (name == req.name) m.applies.emplace_back(ri, -1);
          for (std::size_t si = 0; si < req.subs.size(); ++si) {
            if (claim.spec.requests[ri].first_available && name == req.subs[si].label) {
              m.applies.emplace_back(ri, static_cast<std::int32_t>(si));
            }
          }
        }
      }
      out.constraints.push_back(std::move(m));
    }
  }
}

int Allocator::matches(const Sub& sub, NodeId node, std::uint16_t device,
                       std::string& error) const {
  const NodeDevices& nd = world_->dra.nodes[node];
  const std::size_t gid = node_offset_[node] + device;
  for (std::uint32_t p : sub.programs) {
    std::vector<std::int8_t>& cache = verdicts_[p];
    if (cache.empty()) cache.assign(node_offset_.back(), -1);
    std::int8_t& v = cache[gid];
    if (v < 0) {
      const Device& d = nd.devices[device];
      const cel::SliceDeviceView view(d, nd.pools[d.pool].driver);
      const cel::EvalResult r = programs_[p]->eval(view);
      if (!r.ok) {
        v = 2;
        errors_[{p, gid}] = fmt::format("{}: device {}: {}", program_where_[p], d.name, r.error);
      } else {
        v = r.value ? 1 : 0;
      }
    }
    if (v == 2) {
      error = errors_[{p, gid}];
      return -1;
    }
    if (v == 0) return 0;
  }
  return 1;
}

// One allocation attempt: depth-first over the requests of every claim, in order.
class Allocator::Search {
 public:
  Search(const Allocator& a, NodeId node, std::span<const std::uint16_t> used,
         std::span<const ClaimToAllocate> claims, std::span<const CClaim* const> compiled,
         std::span<const std::int64_t> consumed)
      : a_(a),
        node_(node),
        nd_(a.world_->dra.nodes[node]),
        used_(used),
        claims_(claims),
        cc_(compiled) {
    taken_.assign(nd_.devices.size(), 0);
    off_ = capacity_offsets(nd_);
    cons_.assign(off_.back(), 0);
    for (std::size_t i = 0; i < consumed.size() && i < cons_.size(); ++i)
      cons_[i] = consumed[i];
    // Counters left in each pool: capacity minus what the allocated devices consume.
    for (std::size_t p = 0; p < nd_.pools.size(); ++p) {
      for (std::size_t s = 0; s < nd_.pools[p].counter_sets.size(); ++s) {
        for (std::size_t c = 0; c < nd_.pools[p].counter_sets[s].counters.size(); ++c) {
          left_[{p, s, c}] = nd_.pools[p].counter_sets[s].counters[c].second;
        }
      }
    }
    for (std::size_t d = 0; d < nd_.devices.size(); ++d) {
      if (d < used_.size() && used_[d] > 0) consume(d, -static_cast<int>(used_[d]));
    }
    for (std::size_t k = 0; k < claims_.size(); ++k) {
      const CClaim& c = *cc_[k];
      for (std::uint32_t r = 0; r < c.requests.size(); ++r)
        flat_.emplace_back(k, r);
      values_.emplace_back(c.constraints.size());
      distinct_.emplace_back(c.constraints.size());
      chosen_.emplace_back(c.requests.size(), 0);
      picked_.emplace_back(c.requests.size());
    }
  }

  // True when every claim got its devices; on false, `error_` may hold a selector error.
  bool run() { return fill_request(0); }
  bool aborted() const { return !error_.empty() || steps_ > kMaxSteps; }
  const std::string& error() const { return error_; }
  std::uint64_t steps() const { return steps_; }

  std::vector<ClaimAllocation> result() const {
    std::vector<ClaimAllocation> out(claims_.size());
    for (std::size_t k = 0; k < claims_.size(); ++k) {
      const CClaim& c = *cc_[k];
      std::vector<std::string> parts;
      for (std::size_t r = 0; r < c.requests.size(); ++r) {
        const Sub& sub = c.requests[r].subs[chosen_[k][r]];
        for (std::uint16_t d : picked_[k][r]) {
          out[k].devices.push_back(d);
          out[k].requests.push_back(sub.label);
          std::vector<std::pair<std::uint32_t, std::int64_t>> amounts;
          (void)consumption(sub, d, amounts);
          for (const auto& x : amounts)
            out[k].consumed.push_back(x);
          parts.push_back(fmt::format("{} ({})", device_label(d), sub.label));
        }
      }
      out[k].detail = fmt::format("{}", fmt::join(parts, ", "));
    }
    return out;
  }

  std::string device_label(std::uint16_t d) const {
    const Device& dev = nd_.devices[d];
    if (nd_.pools.size() == 1) return dev.name;
    const Pool& p = nd_.pools[dev.pool];
    return fmt::format("{}:{}/{}", p.driver, p.name, dev.name);
  }

 private:
  // Adds (sign < 0: subtracts) a device's counter consumption to what is left.
  void consume(std::size_t d, int sign) {
    const Device& dev = nd_.devices[d];
    for (const CounterConsumption& cc : dev.consumes) {
      for (const auto& [ci, amount] : cc.counters) {
        left_[{dev.pool, cc.counter_set, ci}] += sign * amount;
      }
    }
  }
  bool counters_fit(std::size_t d) const {
    const Device& dev = nd_.devices[d];
    for (const CounterConsumption& cc : dev.consumes) {
      for (const auto& [ci, amount] : cc.counters) {
        auto it = left_.find({dev.pool, cc.counter_set, ci});
        if (it == left_.end() || it->second < amount) return false;
      }
    }
    return true;
  }

 public:
  // Consumable capacity (KEP-5075). kNever: the device can never serve the request's capacity
  // (it lacks a capacity the request names, its policy refuses the amount, an exclusive device
  // has less than asked, or one allocation would take more than the device has); kNoRoom: the
  // other allocations left too little.
  enum class Cap : std::uint8_t { kOk, kNever, kNoRoom };
  // The capacity one allocation of device d for `sub` takes (shareable devices with
  // capacities only; for others `out` stays empty), or kNever.
  Cap consumption(const Sub& sub, std::size_t d,
                  std::vector<std::pair<std::uint32_t, std::int64_t>>& out) const {
    out.clear();
    const Device& dev = nd_.devices[d];
    const std::string& driver = nd_.pools[dev.pool].driver;
    std::vector<std::optional<std::int64_t>> asked(dev.capacity.size());
    for (const auto& [key, amount] : sub.spec->capacity_requests) {
      const auto slash = key.rfind('/');
      const std::string_view domain = slash == std::string::npos
                                          ? std::string_view(driver)
                                          : std::string_view(key).substr(0, slash);
      const std::string_view name = slash == std::string::npos
                                        ? std::string_view(key)
                                        : std::string_view(key).substr(slash + 1);
      bool found = false;
      for (std::size_t c = 0; c < dev.capacity.size(); ++c) {
        if (dev.capacity[c].domain == domain && dev.capacity[c].name == name) {
          asked[c] = amount;
          found = true;
        }
      }
      if (!found) return Cap::kNever;
    }
    if (!dev.allow_multiple_allocations) {
      // The whole device is the claim's: it only needs as much as is asked.
      for (std::size_t c = 0; c < dev.capacity.size(); ++c)
        if (asked[c] && *asked[c] > dev.capacity[c].milli) return Cap::kNever;
      return Cap::kOk;
    }
    for (std::size_t c = 0; c < dev.capacity.size(); ++c) {
      const RequestPolicy* policy = nullptr;
      for (const auto& [pc, p] : dev.policies)
        if (pc == c) policy = &p;
      const std::optional<std::int64_t> take =
          consumed_capacity(dev.capacity[c].milli, policy, asked[c]);
      if (!take || *take > dev.capacity[c].milli) return Cap::kNever;
      out.emplace_back(off_[d] + static_cast<std::uint32_t>(c), *take);
    }
    return Cap::kOk;
  }
  // Whether one more allocation of device d for `sub` fits its capacities now.
  Cap capacity_fits(const Sub& sub, std::size_t d) const {
    std::vector<std::pair<std::uint32_t, std::int64_t>> amounts;
    if (consumption(sub, d, amounts) == Cap::kNever) return Cap::kNever;
    const Device& dev = nd_.devices[d];
    for (std::size_t i = 0; i < amounts.size(); ++i) {
      const auto& [ci, take] = amounts[i];
      if (cons_[ci] + take > dev.capacity[ci - off_[d]].milli) return Cap::kNoRoom;
    }
    return Cap::kOk;
  }

  // Not held (or shareable) and its counters fit in what is left.
  bool free(std::size_t d) const {
    const Device& dev = nd_.devices[d];
    const bool in_use = (d < used_.size() && used_[d] > 0) || taken_[d] > 0;
    return (!in_use || dev.allow_multiple_allocations) && counters_fit(d);
  }

 private:
  // The constraints of claim k that bind request r's subrequest s.
  template <typename F>
  void for_constraints(std::size_t k, std::uint32_t r, std::size_t s, F&& f) {
    const CClaim& c = *cc_[k];
    for (std::size_t ci = 0; ci < c.constraints.size(); ++ci) {
      for (const auto& [ar, as] : c.constraints[ci].applies) {
        if (ar == r && (as < 0 || static_cast<std::size_t>(as) == s)) {
          f(ci, c.constraints[ci]);
          break;
        }
      }
    }
  }
  // Whether device d keeps claim k's matchAttribute constraints for request (r, s).
  bool constraints_ok(std::size_t k, std::uint32_t r, std::size_t s, std::uint16_t d) {
    bool ok = true;
    for_constraints(k, r, s, [&](std::size_t ci, const Match& m) {
      if (!ok) return;
      const cel::SliceDeviceView view(nd_.devices[d], nd_.pools[nd_.devices[d].pool].driver);
      const AttrValue* v = view.attribute(m.domain, m.name);
      if (v == nullptr) {
        ok = false;  // a device without the attribute cannot satisfy the constraint
        return;
      }
      if (m.distinct) {
        for (const AttrValue& x : distinct_[k][ci])
          if (x == *v) ok = false;
        return;
      }
      const auto& [value, count] = values_[k][ci];
      if (count > 0 && !(value == *v)) ok = false;
    });
    return ok;
  }
  void take(std::size_t k, std::uint32_t r, std::size_t s, std::uint16_t d) {
    ++taken_[d];
    consume(d, -1);
    capacity(k, r, s, d, +1);
    picked_[k][r].push_back(d);
    for_constraints(k, r, s, [&](std::size_t ci, const Match& m) {
      if (m.distinct) {
        const cel::SliceDeviceView view(nd_.devices[d], nd_.pools[nd_.devices[d].pool].driver);
        distinct_[k][ci].push_back(*view.attribute(m.domain, m.name));
        return;
      }
      auto& [value, count] = values_[k][ci];
      if (count++ == 0) {
        const cel::SliceDeviceView view(nd_.devices[d], nd_.pools[nd_.devices[d].pool].driver);
        value = *view.attribute(m.domain, m.name);
      }
    });
  }
  void untake(std::size_t k, std::uint32_t r, std::size_t s, std::uint16_t d) {
    --taken_[d];
    consume(d, +1);
    capacity(k, r, s, d, -1);
    picked_[k][r].pop_back();
    for_constraints(k, r, s, [&](std::size_t ci, const Match& m) {
      if (m.distinct) {
        distinct_[k][ci].pop_back();
      } else {
        --values_[k][ci].second;
      }
    });
  }
  // Adds (sign > 0) or gives back what device d's allocation for request (r, s) consumes.
  void capacity(std::size_t k, std::uint32_t r, std::size_t s, std::uint16_t d, int sign) {
    std::vector<std::pair<std::uint32_t, std::int64_t>> amounts;
    (void)consumption(cc_[k]->requests[r].subs[s], d, amounts);
    for (const auto& [ci, take] : amounts)
      cons_[ci] += sign * take;
  }

  int match(const Sub& sub, std::uint16_t d) {
    std::string err;
    const int m = a_.matches(sub, node_, d, err);
    if (m < 0 && error_.empty()) error_ = err;
    return m;
  }

  bool fill_request(std::size_t pos) {
    if (aborted()) return false;
    if (pos == flat_.size()) return true;
    const auto [k, r] = flat_[pos];
    const Req& req = cc_[k]->requests[r];
    for (std::size_t s = 0; s < req.subs.size(); ++s) {
      chosen_[k][r] = s;
      const Sub& sub = req.subs[s];
      if (sub.spec->mode == AllocationMode::kAll) {
        if (fill_all(pos, k, r, s)) return true;
      } else if (fill_count(pos, k, r, s, sub.spec->count, 0)) {
        return true;
      }
      if (aborted()) return false;
    }
    return false;
  }

  // allocationMode All: every matching device of the node, all free.
  bool fill_all(std::size_t pos, std::size_t k, std::uint32_t r, std::size_t s) {
    const Sub& sub = cc_[k]->requests[r].subs[s];
    std::vector<std::uint16_t> all;
    for (std::size_t d = 0; d < nd_.devices.size(); ++d) {
      ++steps_;
      const int m = match(sub, static_cast<std::uint16_t>(d));
      if (m < 0) return false;
      if (m == 1) all.push_back(static_cast<std::uint16_t>(d));
    }
    if (all.empty()) return false;
    std::size_t n = 0;
    bool ok = true;
    for (std::uint16_t d : all) {
      if (!free(d) || capacity_fits(sub, d) != Cap::kOk || !constraints_ok(k, r, s, d)) {
        ok = false;
        break;
      }
      take(k, r, s, d);
      ++n;
    }
    if (ok && fill_request(pos + 1)) return true;
    for (std::size_t i = n; i-- > 0;)
      untake(k, r, s, all[i]);
    return false;
  }

  // ExactCount: `left` more devices, each after the previous one in device order (the same
  // first solution as trying every order, without revisiting permutations).
  bool fill_count(std::size_t pos, std::size_t k, std::uint32_t r, std::size_t s, std::int32_t left,
                  std::size_t from) {
    if (left == 0) return fill_request(pos + 1);
    const Sub& sub = cc_[k]->requests[r].subs[s];
    for (std::size_t d = from; d < nd_.devices.size(); ++d) {
      if (++steps_ > kMaxSteps || !error_.empty()) return false;
      const auto dev = static_cast<std::uint16_t>(d);
      if (!free(d)) continue;
      const int m = match(sub, dev);
      if (m < 0) return false;
      if (m == 0 || capacity_fits(sub, d) != Cap::kOk || !constraints_ok(k, r, s, dev)) continue;
      take(k, r, s, dev);
      if (fill_count(pos, k, r, s, left - 1, d + 1)) return true;
      untake(k, r, s, dev);
      if (aborted()) return false;
    }
    return false;
  }

  const Allocator& a_;
  NodeId node_;
  const NodeDevices& nd_;
  std::span<const std::uint16_t> used_;
  std::span<const ClaimToAllocate> claims_;
  std::span<const CClaim* const> cc_;                        // claims_[k] compiled
  std::vector<std::pair<std::size_t, std::uint32_t>> flat_;  // (claim, request)
  std::vector<std::uint16_t> taken_;
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::int64_t> left_;
  // Per claim, per constraint: the value fixed by the devices taken so far, and how many.
  std::vector<std::vector<std::pair<AttrValue, std::int32_t>>> values_;
  // Per claim, per distinctAttribute constraint: the values of the devices taken so far.
  std::vector<std::vector<std::vector<AttrValue>>> distinct_;
  std::vector<std::uint32_t> off_;                // capacity_offsets of the node
  std::vector<std::int64_t> cons_;                // capacity consumed, allocated and taken here
  std::vector<std::vector<std::size_t>> chosen_;  // subrequest per request
  std::vector<std::vector<std::vector<std::uint16_t>>> picked_;  // devices per request
  std::uint64_t steps_ = 0;
  std::string error_;
};

namespace {
// "claim gpu, request gpu" or, for the extended-resource claim, "extended resource
// nvidia.com/gpu (device class gpu.nvidia.com)".
template <typename R>
std::string who(const ClaimToAllocate& c, const R& req, std::string_view name) {
  if (c.claim == kNoClaim) {
    return fmt::format("extended resource {} (device class {})", name, req.device_class);
  }
  return fmt::format("claim {}, request {}", c.pod_claim_name, name);
}
std::string who(const ClaimToAllocate& c) {
  return c.claim == kNoClaim ? std::string("the claim for its extended resources")
                             : fmt::format("claim {}", c.pod_claim_name);
}
}  // namespace

AllocationOutcome Allocator::allocate(NodeId node, std::span<const std::uint16_t> used,
                                      std::span<const ClaimToAllocate> claims,
                                      std::span<const std::int64_t> consumed) const {
  AllocationOutcome out;
  // The claims compiled: the World's, or the extended-resource claim built here (KEP-5004: one
  // ExactCount request per resource, from the class that serves it, count = the quantity).
  std::vector<CClaim> built;
  std::vector<SubRequest> built_subs;
  std::size_t n_ext = 0;
  for (const ClaimToAllocate& c : claims)
    if (c.claim == kNoClaim) n_ext += c.extended.size();
  built_subs.reserve(n_ext);  // Sub::spec points into it
  built.reserve(claims.size());
  std::vector<const CClaim*> cc;
  for (const ClaimToAllocate& c : claims) {
    if (c.claim != kNoClaim) {
      cc.push_back(&claims_.at(c.claim));
      continue;
    }
    CClaim x;
    x.extended = true;
    for (const ExtendedRequest& e : c.extended) {
      SubRequest sr;
      sr.name = e.name;
      sr.device_class = world_->dra.classes.at(e.device_class).name;
      sr.class_index = e.device_class;
      sr.count = e.count;
      sr.where = world_->dra.classes[e.device_class].where;
      built_subs.push_back(std::move(sr));
      Sub sub;
      sub.spec = &built_subs.back();
      sub.label = e.name;
      sub.programs = class_programs_.at(e.device_class);
      if (x.error.empty()) x.error = class_errors_[e.device_class];
      Req req;
      req.name = e.name;
      req.device_class = built_subs.back().device_class;
      req.subs.push_back(std::move(sub));
      x.requests.push_back(std::move(req));
    }
    built.push_back(std::move(x));
    cc.push_back(&built.back());
  }
  for (std::size_t i = 0; i < claims.size(); ++i) {
    if (!cc[i]->error.empty()) {
      out.failure = {fmt::format("{}: {}", who(claims[i]), cc[i]->error), true, true};
      return out;
    }
  }
  const bool has_devices = node < world_->dra.nodes.size();
  if (!has_devices || world_->dra.nodes[node].devices.empty()) {
    const CClaim& c0 = *cc.front();
    out.failure = {fmt::format("{}: the node publishes no devices",
                               c0.requests.empty() ? who(claims.front())
                                                   : who(claims.front(), c0.requests.front(),
                                                         c0.requests.front().name)),
                   true, false};
    return out;
  }

  Search search(*this, node, used, claims, cc, consumed);
  if (search.run()) {
    out.ok = true;
    out.allocations = search.result();
    return out;
  }
  if (!search.error().empty()) {
    out.failure = {search.error(), false, true};
    return out;
  }

  // Name the first request that cannot be met on its own; if each can, they conflict.
  const NodeDevices& nd = world_->dra.nodes[node];
  const Search fresh(*this, node, used, claims, cc,
                     consumed);  // counters as allocated devices leave them
  for (std::size_t ci = 0; ci < claims.size(); ++ci) {
    const ClaimToAllocate& c = claims[ci];
    const CClaim& ccl = *cc[ci];
    for (const Req& req : ccl.requests) {
      std::vector<std::string> why;
      bool static_short = true;
      bool satisfiable = false;
      for (const Sub& sub : req.subs) {
        std::int32_t matching = 0;
        std::int32_t free = 0;
        std::int32_t refused = 0;  // match, but can never serve its capacity requests
        std::int32_t no_room = 0;  // free, but too little capacity is left
        for (std::size_t d = 0; d < nd.devices.size(); ++d) {
          std::string err;
          const int m = matches(sub, node, static_cast<std::uint16_t>(d), err);
          if (m < 0) {
            out.failure = {err, false, true};
            return out;
          }
          if (m == 0) continue;
          const Search::Cap cap = fresh.capacity_fits(sub, d);
          if (cap == Search::Cap::kNever) {
            ++refused;
            continue;
          }
          ++matching;
          if (fresh.free(d)) ++(cap == Search::Cap::kOk ? free : no_room);
        }
        const bool all = sub.spec->mode == AllocationMode::kAll;
        const std::int32_t need = all ? 1 : sub.spec->count;
        std::string reason;
        if (matching == 0 && refused > 0) {
          reason = "no matching device can serve the capacity it requests";
        } else if (matching == 0) {
          reason = "no device on the node matches its selectors";
        } else if (matching < need) {
          reason = fmt::format("the node has fewer matching devices than the {} it asks for", need);
        } else {
          static_short = false;
          if (all && free < matching) {
            reason = "some matching devices are in use (allocationMode All takes every one)";
          } else if (free < need && no_room > 0) {
            reason = "too little capacity is left on the matching devices";
          } else if (free < need) {
            reason = free == 0 ? "all matching devices are in use"
                               : "not enough matching devices are free";
          } else {
            satisfiable = true;
          }
        }
        why.push_back(req.subs.size() > 1 ? fmt::format("{}: {}", sub.spec->name, reason) : reason);
      }
      if (satisfiable) continue;
      out.failure.reason = req.subs.size() > 1
                               ? fmt::format("{}: no subrequest can be satisfied ({})",
                                             who(c, req, req.name), fmt::join(why, "; "))
                               : fmt::format("{}: {}", who(c, req, req.name), why.front());
      out.failure.unresolvable = static_short;
      return out;
    }
  }
  const ClaimToAllocate& c = claims.front();
  bool constrained = false;
  for (const CClaim* x : cc)
    constrained = constrained || !x->constraints.empty();
  if (search.aborted()) {
    out.failure.reason = fmt::format("{}: the search gave up after {} steps", who(c), kMaxSteps);
    return out;
  }
  // Unresolvable when they cannot be met together even with every device of the node free
  // (e.g. a matchAttribute group larger than any PCIe root): freeing devices cannot help.
  Search empty(*this, node, {}, claims, cc, {});
  out.failure.unresolvable = !empty.run() && !empty.aborted();
  const char* why = out.failure.unresolvable
                        ? (constrained ? " (no devices of the node meet its constraints)"
                                       : " (the node's devices cannot serve them all)")
                        : (constrained ? " (the devices that are free do not meet its constraints)"
                                       : " (not enough free devices, or their shared counters are "
                                         "used up)");
  out.failure.reason = fmt::format("{}: its requests cannot be satisfied together{}", who(c), why);
  return out;
}

}  // namespace capsim::dra
