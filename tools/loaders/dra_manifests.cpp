#include "tools/loaders/dra_manifests.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "models/dra/cel.hpp"
#include "models/dra/nvidia_driver.hpp"
#include "tools/loaders/k8s_fields.hpp"

namespace capsim {

namespace {

constexpr const char* kGroup = "resource.k8s.io";
constexpr std::size_t kMaxSelectors = 32;
constexpr std::size_t kMaxRequests = 32;
constexpr std::size_t kMaxSubRequests = 8;
constexpr std::size_t kMaxConstraints = 32;
constexpr std::size_t kMaxDevicesPerSlice = 128;
constexpr std::size_t kMaxAttributesAndCapacities = 32;
constexpr std::int64_t kMaxCount = 128;

bool is_v1beta1(const ManifestContext& ctx) {
  return ctx.api_version == "resource.k8s.io/v1beta1";
}

std::string where_text(const YamlNode& n) {
  return n.where().to_string();
}

// selectors: [{cel: {expression}}], each compiled now.
std::vector<dra::Selector> read_selectors(const YamlNode& list) {
  std::vector<dra::Selector> out;
  const std::vector<YamlNode> items = list.seq();
  if (items.size() > kMaxSelectors) {
    list.fail(fmt::format("at most {} selectors are allowed", kMaxSelectors));
  }
  for (const YamlNode& item : items) {
    MapReader m = item.map();
    MapReader cel = m.req("cel").map();
    const YamlNode expr = cel.req("expression");
    cel.finish();
    m.finish();
    const std::string text = expr.str();
    auto program = cel::Program::compile(text);
    if (!program) expr.fail(fmt::format("invalid CEL expression: {}", program.error()));
    out.push_back({text, where_text(expr)});
  }
  return out;
}

void not_modelled(MapReader& m, const char* key, const std::string& what,
                  const ManifestContext& ctx) {
  if (auto v = m.opt(key)) ctx.warn(*v, what);
}

// The fields of `exactly` (and, in v1beta1, of the request itself) or of a firstAvailable entry.
void read_device_request_fields(MapReader& m, dra::SubRequest& out, const ManifestContext& ctx,
                                bool first_available) {
  const YamlNode cls = m.req("deviceClassName");
  out.device_class = cls.str();
  if (out.device_class.empty()) cls.fail("deviceClassName must not be empty");
  out.where = where_text(cls);
  if (auto s = m.opt("selectors")) out.selectors = read_selectors(*s);
  std::optional<YamlNode> mode = m.opt("allocationMode");
  if (mode) {
    const std::string v = mode->str();
    if (v == "All") {
      out.mode = dra::AllocationMode::kAll;
    } else if (v != "ExactCount") {
      mode->fail(fmt::format("unknown allocationMode '{}'{}; use ExactCount or All", v,
                             did_you_mean(v, {"ExactCount", "All"})));
    }
  }
  if (auto c = m.opt("count")) {
    if (out.mode == dra::AllocationMode::kAll) {
      c->fail("count must not be set with allocationMode All");
    }
    out.count = static_cast<std::int32_t>(c->integer(1, kMaxCount));
  }
  if (!first_available) {
    if (auto a = m.opt("adminAccess"); a && a->boolean()) {
      out.admin_access = true;
      ctx.warn(*a, "adminAccess is not modelled: the request takes its devices like any other");
    }
  }
  not_modelled(m, "tolerations", "device taints and tolerations are not modelled", ctx);
  if (auto cap = m.opt("capacity")) {
    // Consumable capacity (KEP-5075): how much of each named capacity a device must offer, and
    // what an allocation of a shareable device consumes.
    MapReader cm = cap->map();
    if (auto reqs = cm.opt("requests")) {
      for (auto& [key, v] : reqs->entries()) {
        const auto slash = key.find('/');
        if (key.empty() || slash == 0 || (slash != std::string::npos && slash + 1 == key.size()) ||
            (slash != std::string::npos && key.find('/', slash + 1) != std::string::npos)) {
          v.fail(fmt::format("'{}' is not a valid capacity name (name, or domain/name)", key));
        }
        out.capacity_requests.emplace_back(key, v.quantity(3));
      }
    }
    cm.finish();
  }
}

dra::Request read_request(const YamlNode& node, const ManifestContext& ctx) {
  MapReader m = node.map();
  dra::Request r;
  const YamlNode name = m.req("name");
  r.name = name.str();
  if (!is_dns_label(r.name))
    name.fail(fmt::format("'{}' is not a valid request name (a DNS label)", r.name));
  std::optional<YamlNode> first = m.opt("firstAvailable");
  if (is_v1beta1(ctx)) {
    // v1beta1: the `exactly` fields sit in the request itself, unless firstAvailable is used.
    if (first) {
      for (const char* k :
           {"deviceClassName", "selectors", "allocationMode", "count", "adminAccess"}) {
        if (auto v = m.opt(k))
          v->fail(fmt::format("{} must not be set together with firstAvailable", k));
      }
    } else {
      dra::SubRequest sub;
      sub.name = r.name;
      read_device_request_fields(m, sub, ctx, false);
      r.subrequests.push_back(std::move(sub));
    }
  } else {
    std::optional<YamlNode> exactly = m.opt("exactly");
    if (exactly.has_value() == first.has_value()) {
      node.fail("exactly one of `exactly` and `firstAvailable` must be set in a request");
    }
    if (exactly) {
      MapReader em = exactly->map();
      dra::SubRequest sub;
      sub.name = r.name;
      read_device_request_fields(em, sub, ctx, false);
      em.finish();
      r.subrequests.push_back(std::move(sub));
    }
  }
  if (first) {
    r.first_available = true;
    const std::vector<YamlNode> items = first->seq();
    if (items.empty() || items.size() > kMaxSubRequests) {
      first->fail(fmt::format("firstAvailable needs 1 to {} subrequests", kMaxSubRequests));
    }
    for (const YamlNode& item : items) {
      MapReader sm = item.map();
      dra::SubRequest sub;
      const YamlNode sn = sm.req("name");
      sub.name = sn.str();
      if (!is_dns_label(sub.name))
        sn.fail(fmt::format("'{}' is not a valid subrequest name (a DNS label)", sub.name));
      for (const dra::SubRequest& other : r.subrequests) {
        if (other.name == sub.name)
          sn.fail(fmt::format("duplicate subrequest name '{}'", sub.name));
      }
      read_device_request_fields(sm, sub, ctx, true);
      sm.finish();
      r.subrequests.push_back(std::move(sub));
    }
  }
  m.finish();
  return r;
}

// spec.devices of a claim (or of a template's spec.spec).
dra::ClaimSpec read_claim_spec(const YamlNode& spec_node, const ManifestContext& ctx) {
  dra::ClaimSpec cs;
  MapReader spec = spec_node.map();
  if (auto devices = spec.opt("devices")) {
    MapReader dm = devices->map();
    if (auto reqs = dm.opt("requests")) {
      const std::vector<YamlNode> items = reqs->seq();
      if (items.size() > kMaxRequests)
        reqs->fail(fmt::format("at most {} requests are allowed", kMaxRequests));
      for (const YamlNode& item : items) {
        dra::Request r = read_request(item, ctx);
        for (const dra::Request& other : cs.requests) {
          if (other.name == r.name) item.fail(fmt::format("duplicate request name '{}'", r.name));
        }
        cs.requests.push_back(std::move(r));
      }
    }
    if (auto cons = dm.opt("constraints")) {
      const std::vector<YamlNode> items = cons->seq();
      if (items.size() > kMaxConstraints) {
        cons->fail(fmt::format("at most {} constraints are allowed", kMaxConstraints));
      }
      for (const YamlNode& item : items) {
        MapReader cm = item.map();
        dra::Constraint c;
        c.where = where_text(item);
        if (auto rs = cm.opt("requests")) {
          for (const YamlNode& rn : rs->seq()) {
            const std::string name = rn.str();
            // "request" or "request/subrequest" of a firstAvailable request.
            const auto slash = name.find('/');
            const std::string base = name.substr(0, slash);
            const dra::Request* hit = nullptr;
            for (const dra::Request& r : cs.requests) {
              if (r.name == base) hit = &r;
            }
            bool ok = hit != nullptr;
            if (ok && slash != std::string::npos) {
              const std::string sub = name.substr(slash + 1);
              ok = hit->first_available &&
                   std::any_of(hit->subrequests.begin(), hit->subrequests.end(),
                               [&](const dra::SubRequest& s) { return s.name == sub; });
            }
            if (!ok) {
              std::vector<std::string> names;
              for (const dra::Request& r : cs.requests)
                names.push_back(r.name);
              rn.fail(fmt::format("'{}' is not a request of this claim{}", name,
                                  did_you_mean(name, names)));
            }
            c.requests.push_back(name);
          }
        }
        // Exactly one of matchAttribute and distinctAttribute (KEP-5075: the devices'
        // values of the attribute must all differ).
        const std::optional<YamlNode> match = cm.opt("matchAttribute");
        const std::optional<YamlNode> distinct = cm.opt("distinctAttribute");
        if (match && distinct) {
          distinct->fail("set one of matchAttribute and distinctAttribute in a constraint");
        }
        if (!match && !distinct)
          item.fail("a constraint needs matchAttribute or distinctAttribute");
        const YamlNode ma = match ? *match : *distinct;
        const char* field = match ? "matchAttribute" : "distinctAttribute";
        c.distinct = !match;
        c.match_attribute = ma.str();
        const auto slash = c.match_attribute.find('/');
        if (slash == std::string::npos || slash == 0 || slash + 1 == c.match_attribute.size()) {
          ma.fail(
              fmt::format("{} must be a fully qualified name 'domain/name' (e.g. "
                          "resource.kubernetes.io/pcieRoot), not '{}'",
                          field, c.match_attribute));
        }
        cm.finish();
        cs.constraints.push_back(std::move(c));
      }
    }
    dm.ignore("config");  // opaque driver configuration: no effect on scheduling
    dm.finish();
  }
  spec.finish();
  return cs;
}

void add_claim(dra::Claim c, const YamlNode& at, ManifestContext& ctx) {
  auto& claims = ctx.builder.world().dra.claims;
  for (const dra::Claim& other : claims) {
    if (other.name == c.name && other.namespace_ == c.namespace_ &&
        other.from_template == c.from_template) {
      at.fail(fmt::format("duplicate {} '{}/{}' (first defined at {})",
                          c.from_template ? "ResourceClaimTemplate" : "ResourceClaim", c.namespace_,
                          c.name, other.where));
    }
  }
  claims.push_back(std::move(c));
}

void load_resource_claim(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, true, {});
  dra::Claim c;
  c.name = meta.name;
  c.namespace_ = meta.namespace_;
  c.where = where_text(doc.node());
  c.spec = read_claim_spec(doc.req("spec"), ctx);
  if (auto st = doc.opt("status")) {
    ctx.warn(*st,
             "the claim's status is ignored: capsim allocates the claim when its first pod "
             "is scheduled");
  }
  add_claim(std::move(c), doc.node(), ctx);
}

void load_resource_claim_template(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, true, {});
  dra::Claim c;
  c.name = meta.name;
  c.namespace_ = meta.namespace_;
  c.from_template = true;
  c.where = where_text(doc.node());
  MapReader spec = doc.req("spec").map();
  if (auto m = spec.opt("metadata")) {
    (void)parse_object_meta(*m, ctx.builder, true, {}, /*name_required=*/false);
  }
  c.spec = read_claim_spec(spec.req("spec"), ctx);
  spec.finish();
  add_claim(std::move(c), doc.node(), ctx);
}

void load_device_class(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, false, {});
  dra::DeviceClass c;
  c.name = meta.name;
  c.where = where_text(doc.node());
  MapReader spec = doc.req("spec").map();
  if (auto s = spec.opt("selectors")) c.selectors = read_selectors(*s);
  spec.ignore("config");  // opaque driver configuration: no effect on scheduling
  if (auto e = spec.opt("extendedResourceName")) {
    c.extended_resource_name = e->str();
    const std::string& n = c.extended_resource_name;
    // As the API server validates it: an extended resource name, i.e. a qualified name with a
    // domain outside kubernetes.io (a device plugin's resource such as nvidia.com/gpu).
    const auto slash = n.find('/');
    const std::string domain = slash == std::string::npos ? "" : n.substr(0, slash);
    const std::string rest = slash == std::string::npos ? n : n.substr(slash + 1);
    const bool k8s_domain =
        domain == "kubernetes.io" || (domain.size() > 14 && domain.ends_with(".kubernetes.io"));
    if (domain.empty() || rest.empty() || k8s_domain || rest.find('/') != std::string::npos ||
        n.starts_with("requests.")) {
      e->fail(
          fmt::format("'{}' is not an extended resource name: write domain/name with a domain "
                      "outside kubernetes.io, e.g. example.com/gpu (every class is also "
                      "reachable as {}{})",
                      n, kImplicitExtendedResourcePrefix, c.name));
    }
  }
  spec.finish();
  auto& classes = ctx.builder.world().dra.classes;
  for (const dra::DeviceClass& other : classes) {
    if (other.name == c.name) {
      doc.node().fail(
          fmt::format("duplicate DeviceClass '{}' (first defined at {})", c.name, other.where));
    }
  }
  classes.push_back(std::move(c));
}

dra::AttrValue read_attribute_value(const YamlNode& n) {
  MapReader m = n.map();
  dra::AttrValue v;
  int set = 0;
  if (auto x = m.opt("int")) {
    v.kind = dra::AttrValue::Kind::kInt;
    v.i = x->integer();
    ++set;
  }
  if (auto x = m.opt("bool")) {
    v.kind = dra::AttrValue::Kind::kBool;
    v.b = x->boolean();
    ++set;
  }
  if (auto x = m.opt("string")) {
    v.kind = dra::AttrValue::Kind::kString;
    v.s = x->str();
    if (v.s.size() > 64) x->fail("a string attribute is at most 64 characters");
    ++set;
  }
  if (auto x = m.opt("version")) {
    v.kind = dra::AttrValue::Kind::kVersion;
    v.s = x->str();
    if (auto sv = cel::parse_semver(v.s); !sv)
      x->fail(fmt::format("invalid semantic version: {}", sv.error()));
    ++set;
  }
  for (const char* list : {"ints", "bools", "strings", "versions"}) {
    if (auto x = m.opt(list)) {
      x->fail(fmt::format("list attributes ({}, DRAListTypeAttributes) are not modelled", list));
    }
  }
  m.finish();
  if (set != 1) n.fail("an attribute needs exactly one of int, bool, string and version");
  return v;
}

// "name" (in the driver's domain) or "domain/name".
std::pair<std::string, std::string> qualified(const std::string& key, const std::string& driver,
                                              const YamlNode& at) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {driver, key};
  if (slash == 0 || slash + 1 == key.size() || key.find('/', slash + 1) != std::string::npos) {
    at.fail(fmt::format("'{}' is not a valid qualified name", key));
  }
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// A capacity's requestPolicy, validated as the API server does (KEP-5075): at most one of
// validRange and validValues; with either, a default that it allows; validValues ascending, at
// most 10; validRange's min <= max and step > 0.
dra::RequestPolicy read_request_policy(const YamlNode& n) {
  MapReader m = n.map();
  dra::RequestPolicy p;
  const std::optional<YamlNode> def = m.opt("default");
  if (def) {
    p.has_default = true;
    p.default_milli = def->quantity(3);
  }
  const std::optional<YamlNode> range = m.opt("validRange");
  const std::optional<YamlNode> values = m.opt("validValues");
  if (range && values) values->fail("set one of validRange and validValues, not both");
  if (range) {
    MapReader r = range->map();
    p.has_range = true;
    p.min = r.req("min").quantity(3);
    if (auto mx = r.opt("max")) {
      p.max = mx->quantity(3);
      if (p.max < p.min) mx->fail("max must not be less than min");
    }
    if (auto st = r.opt("step")) {
      p.step = st->quantity(3);
      if (p.step <= 0) st->fail("step must be greater than zero");
    }
    r.finish();
    if (!def) n.fail("a requestPolicy with validRange needs a default");
    if (p.default_milli < p.min || (p.max >= 0 && p.default_milli > p.max)) {
      def->fail("the default must lie within validRange");
    }
  }
  if (values) {
    const std::vector<YamlNode> items = values->seq();
    if (items.empty() || items.size() > 10) values->fail("validValues needs 1 to 10 values");
    for (const YamlNode& v : items) {
      const std::int64_t x = v.quantity(3);
      if (!p.valid_values.empty() && x <= p.valid_values.back()) {
        v.fail("validValues must be in ascending order, without repeats");
      }
      p.valid_values.push_back(x);
    }
    if (!def) n.fail("a requestPolicy with validValues needs a default");
    if (!std::binary_search(p.valid_values.begin(), p.valid_values.end(), p.default_milli)) {
      def->fail("the default must be one of validValues");
    }
  }
  m.finish();
  return p;
}

std::vector<std::pair<std::string, std::int64_t>> read_counters(const YamlNode& n) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (auto& [name, v] : n.entries()) {
    MapReader m = v.map();
    out.emplace_back(name, m.req("value").quantity(3));
    m.finish();
  }
  return out;
}

dra::SliceDevice read_device(const YamlNode& n, const std::string& driver, ManifestContext& ctx) {
  MapReader outer = n.map();
  dra::SliceDevice sd;
  sd.where = n.where();
  const YamlNode name = outer.req("name");
  sd.device.name = name.str();
  if (!is_dns_label(sd.device.name)) {
    name.fail(fmt::format("'{}' is not a valid device name (a DNS label)", sd.device.name));
  }
  std::optional<MapReader> basic_reader;
  MapReader* m = &outer;
  if (is_v1beta1(ctx)) {
    basic_reader.emplace(outer.req("basic").map());
    m = &*basic_reader;
  }
  std::size_t fields = 0;
  std::optional<YamlNode> request_policy;  // the first capacity's requestPolicy, if any
  if (auto attrs = m->opt("attributes")) {
    for (auto& [key, v] : attrs->entries()) {
      auto [domain, nm] = qualified(key, driver, v);
      sd.device.attributes.push_back({domain, nm, read_attribute_value(v)});
      ++fields;
    }
  }
  if (auto caps = m->opt("capacity")) {
    for (auto& [key, v] : caps->entries()) {
      auto [domain, nm] = qualified(key, driver, v);
      if (v.is_scalar())
        v.fail("a capacity is {value: <quantity>} (the bare quantity was v1alpha3)");
      MapReader cm = v.map();
      sd.device.capacity.push_back({domain, nm, cm.req("value").quantity(3)});
      // requestPolicy is only valid on a device with allowMultipleAllocations (checked below).
      if (auto rp = cm.opt("requestPolicy")) {
        if (!request_policy) request_policy = rp;
        sd.device.policies.emplace_back(static_cast<std::uint16_t>(sd.device.capacity.size() - 1),
                                        read_request_policy(*rp));
      }
      cm.finish();
      ++fields;
    }
  }
  if (fields > kMaxAttributesAndCapacities) {
    n.fail(fmt::format("a device has at most {} attributes and capacities together",
                       kMaxAttributesAndCapacities));
  }
  if (auto cc = m->opt("consumesCounters")) {
    for (const YamlNode& e : cc->seq()) {
      MapReader em = e.map();
      const std::string set = em.req("counterSet").str();
      sd.consumes.emplace_back(set, read_counters(em.req("counters")));
      em.finish();
    }
  }
  const std::optional<YamlNode> multiple = m->opt("allowMultipleAllocations");
  sd.device.allow_multiple_allocations = multiple && multiple->boolean();
  if (request_policy && !sd.device.allow_multiple_allocations) {
    request_policy->fail("requestPolicy needs allowMultipleAllocations: true on the device");
  }
  // Consumable capacity (KEP-5075): every allocation of a shareable device consumes some of each
  // of its capacities (what the claim requests, else requestPolicy.default, else all of it), and
  // the allocations never exceed it (models/dra/allocator).
  not_modelled(*m, "taints", "device taints are not modelled", ctx);
  not_modelled(*m, "bindsToNode", "bindsToNode is not modelled", ctx);
  not_modelled(*m, "bindingConditions", "binding conditions are not modelled", ctx);
  not_modelled(*m, "bindingFailureConditions", "binding conditions are not modelled", ctx);
  for (const char* k : {"nodeName", "nodeSelector", "allNodes"}) {
    if (auto v = m->opt(k))
      v->fail(
          "per-device node selection is not modelled: put the device in a slice with nodeName, "
          "nodeSelector or allNodes");
  }
  if (basic_reader) basic_reader->finish();
  outer.finish();
  return sd;
}

void load_resource_slice(MapReader& doc, ManifestContext& ctx) {
  (void)parse_object_meta(doc.req("metadata"), ctx.builder, false, {});
  MapReader spec = doc.req("spec").map();
  dra::Slice s;
  s.where = doc.node().where();
  const YamlNode driver = spec.req("driver");
  s.driver = driver.str();
  if (s.driver.empty() || s.driver.size() > 63) driver.fail("driver must be 1 to 63 characters");
  MapReader pool = spec.req("pool").map();
  s.pool = pool.req("name").str();
  // generation is an int64 without omitempty: a slice that leaves it out is generation 0, as the
  // API server decodes it (it only rejects a negative one), and competes with the pool's other
  // slices like any other generation.
  s.generation = pool.int_or("generation", 0, 0);
  s.slice_count = pool.req("resourceSliceCount").integer(1);
  pool.finish();
  // Which nodes reach the devices: exactly one of nodeName, nodeSelector, allNodes: true and
  // perDeviceNodeSelection: true, as the API server validates ResourceSliceSpec.
  std::vector<std::string> given;
  const std::optional<YamlNode> node_name = spec.opt("nodeName");
  const std::optional<YamlNode> node_selector = spec.opt("nodeSelector");
  const std::optional<YamlNode> all_nodes = spec.opt("allNodes");
  const std::optional<YamlNode> per_device = spec.opt("perDeviceNodeSelection");
  if (node_name) given.emplace_back("nodeName");
  if (node_selector) given.emplace_back("nodeSelector");
  if (all_nodes && all_nodes->boolean()) given.emplace_back("allNodes");
  if (per_device && per_device->boolean()) given.emplace_back("perDeviceNodeSelection");
  if (given.size() > 1) {
    spec.node().fail(
        fmt::format("exactly one of nodeName, nodeSelector, allNodes and "
                    "perDeviceNodeSelection may be set; this slice sets {}",
                    fmt::join(given, " and ")));
  }
  if (given.empty()) {
    spec.node().fail(
        "a ResourceSlice needs one of spec.nodeName (the node's own devices), "
        "spec.nodeSelector or spec.allNodes: true (network-attached devices)");
  }
  if (node_name) {
    s.node_name = node_name->str();
    s.node_where = node_name->where();
  } else if (node_selector) {
    // A NodeSelector of exactly one term (ResourceSliceSpec.nodeSelector's API doc).
    MapReader ns = node_selector->map();
    const YamlNode terms = ns.req("nodeSelectorTerms");
    ns.finish();
    const std::vector<YamlNode> items = terms.seq();
    if (items.size() != 1) {
      terms.fail(fmt::format("a ResourceSlice's nodeSelector must have exactly one term, not {}",
                             items.size()));
    }
    s.access = dra::SliceAccess::kSelector;
    s.node_selector = parse_node_selector_term(items.front(), ctx.builder);
    if (s.node_selector.match_expressions.empty() && s.node_selector.match_fields.empty()) {
      items.front().fail("the node selector term is empty, which matches no node");
    }
    s.node_where = node_selector->where();
  } else if (all_nodes && all_nodes->boolean()) {
    s.access = dra::SliceAccess::kAllNodes;
    s.node_where = all_nodes->where();
  } else {
    per_device->fail(
        "perDeviceNodeSelection is not modelled: give each group of devices its own slice with "
        "nodeName, nodeSelector or allNodes");
  }
  if (auto sc = spec.opt("sharedCounters")) {
    for (const YamlNode& e : sc->seq()) {
      MapReader em = e.map();
      dra::CounterSet set;
      set.name = em.req("name").str();
      set.counters = read_counters(em.req("counters"));
      em.finish();
      s.counter_sets.push_back(std::move(set));
    }
  }
  if (auto devs = spec.opt("devices")) {
    const std::vector<YamlNode> items = devs->seq();
    if (items.size() > kMaxDevicesPerSlice) {
      devs->fail(fmt::format("a ResourceSlice holds at most {} devices", kMaxDevicesPerSlice));
    }
    for (const YamlNode& d : items)
      s.devices.push_back(read_device(d, s.driver, ctx));
  }
  spec.finish();
  ctx.builder.world().dra.slices.push_back(std::move(s));
}

[[noreturn]] void fail_at(const InputLocation& where, const std::string& message) {
  throw InputError(InputErrorKind::kInvalid, where, message);
}
[[noreturn]] void fail_at(const std::string& where, const std::string& message) {
  throw InputError(InputErrorKind::kInvalid, InputLocation{where, 0, 0, ""}, message);
}

// Links a gpu.nvidia.com device of a DRA node to its GPU by its canonical name.
void link_nvidia_device(dra::SliceDevice& sd, const NodeSpec& node, const GpuModel* model) {
  dra::Device& d = sd.device;
  unsigned gpu = 0;
  int consumed = 0;
  if (std::sscanf(d.name.c_str(), "gpu-%u%n", &gpu, &consumed) != 1) return;  // not a GPU: opaque
  if (gpu >= static_cast<unsigned>(node.gpu_count)) {
    fail_at(sd.where, fmt::format("device {} names GPU {}, but node {} has {} GPU(s)", d.name, gpu,
                                  node.name, node.gpu_count));
  }
  const std::string rest = d.name.substr(static_cast<std::size_t>(consumed));
  d.gpu = static_cast<std::uint16_t>(gpu);
  if (rest.empty()) {
    d.profile = -1;
    if (node.devices.layouts.at(gpu).mig_enabled) {
      fail_at(sd.where,
              fmt::format("device {} is the whole GPU {}, which is MIG-enabled on node {}", d.name,
                          gpu, node.name));
    }
    return;
  }
  // -mig-<profile>-<profile id>-<start>
  const auto last = rest.rfind('-');
  const auto mid = last == std::string::npos ? std::string::npos : rest.rfind('-', last - 1);
  if (rest.rfind("-mig-", 0) != 0 || last == std::string::npos || mid == std::string::npos ||
      mid < 4) {
    d.gpu = kNoGpu;  // some other device of the driver (e.g. gpu-vfio-0): allocation only
    return;
  }
  const int id = std::atoi(rest.substr(mid + 1, last - mid - 1).c_str());
  const int start = std::atoi(rest.substr(last + 1).c_str());
  if (model == nullptr) fail_at(sd.where, "a MIG device on a node without a GPU model");
  for (std::size_t pi = 0; pi < model->mig_profiles.size(); ++pi) {
    const MigProfile& p = model->mig_profiles[pi];
    if (p.profile_id != id) continue;
    if (dra::nvidia_mig_device_name(d.gpu, p.name, p.profile_id, start) != d.name) continue;
    d.profile = static_cast<std::int16_t>(pi);
    d.start = static_cast<std::uint8_t>(start);
    const GpuLayout& layout = node.devices.layouts.at(gpu);
    for (const MigInstance& inst : layout.instances) {
      if (layout.mig_enabled && inst.profile == static_cast<std::uint16_t>(pi) &&
          inst.start == start) {
        d.static_mig = true;
      }
    }
    if (!d.static_mig && !node.devices.dra.partitionable) {
      fail_at(sd.where, fmt::format("MIG device {} is not an instance of GPU {}'s layout on node "
                                    "{}, and the node is not partitionable (dra: {{partitionable: "
                                    "true}})",
                                    d.name, gpu, node.name));
    }
    if (!d.static_mig && sd.consumes.empty()) {
      fail_at(sd.where, fmt::format("partition {} consumes no counters, so nothing would keep it "
                                    "from overlapping other partitions of GPU {}",
                                    d.name, gpu));
    }
    return;
  }
  fail_at(sd.where, fmt::format("device {}: {} has no MIG profile {} (GI profile id {})", d.name,
                                model->name, rest.substr(5, mid - 5), id));
}

}  // namespace

// resource.nvidia.com/v1beta1 ComputeDomain (NVIDIA DRA driver, api/nvidia.com/resource/
// v1beta1/computedomain.go): spec.channel.resourceClaimTemplate.name names the
// ResourceClaimTemplate the driver's controller creates in the domain's namespace, which the
// workload's pods claim; channel.allocationMode is Single (default) or All. spec.numNodes only
// feeds the object's status with the driver's default IMEXDaemonsWithDNSNames gate, and status
// is the controller's: neither affects scheduling.
void load_compute_domain(MapReader& doc, ManifestContext& ctx) {
  const ObjectMeta meta = parse_object_meta(doc.req("metadata"), ctx.builder, true, {});
  ComputeDomain cd;
  cd.name = meta.name;
  cd.namespace_ = meta.namespace_;
  cd.where = where_text(doc.node());
  MapReader spec = doc.req("spec").map();
  if (auto n = spec.opt("numNodes"))
    cd.num_nodes = static_cast<std::int32_t>(n->integer(0, 100000));
  MapReader channel = spec.req("channel").map();
  MapReader rct = channel.req("resourceClaimTemplate").map();
  const YamlNode tname = rct.req("name");
  cd.channel_template = tname.str();
  // An object name: a DNS subdomain (lower-case alphanumerics, '-' and '.', at most 253).
  const std::string& tn = cd.channel_template;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (tn.empty() || tn.size() > 253 || !alnum(tn.front()) || !alnum(tn.back()) ||
      !std::all_of(tn.begin(), tn.end(),
                   [&](char c) { return alnum(c) || c == '-' || c == '.'; })) {
    tname.fail(
        fmt::format("'{}' is not a valid ResourceClaimTemplate name (a DNS subdomain: "
                    "lower-case letters, digits, '-' and '.')",
                    tn));
  }
  rct.finish();
  if (auto mode = channel.opt("allocationMode")) {
    const std::string m = mode->str();
    if (m == "All") {
      cd.all_channels = true;
    } else if (m != "Single") {
      mode->fail(fmt::format("unknown allocationMode '{}'{}; use Single or All", m,
                             did_you_mean(m, {"Single", "All"})));
    }
  }
  channel.finish();
  spec.finish();
  doc.ignore("status");
  auto& domains = ctx.builder.world().dra.compute_domains;
  for (const ComputeDomain& other : domains) {
    if (other.namespace_ != cd.namespace_) continue;
    if (other.name == cd.name) {
      doc.node().fail(fmt::format("duplicate ComputeDomain '{}/{}' (first defined at {})",
                                  cd.namespace_, cd.name, other.where));
    }
    if (other.channel_template == cd.channel_template) {
      tname.fail(
          fmt::format("ComputeDomain {} already names channel template '{}' (at {}): "
                      "each domain's controller makes its own",
                      other.name, cd.channel_template, other.where));
    }
  }
  domains.push_back(std::move(cd));
}

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

std::vector<ManifestKind> dra_manifest_kinds() {
  const std::vector<std::string> served = {"v1", "v1beta2", "v1beta1"};
  return {
      {kGroup, "DeviceClass", served, load_device_class},
      {kGroup, "ResourceClaim", served, load_resource_claim},
      {kGroup, "ResourceClaimTemplate", served, load_resource_claim_template},
      {kGroup, "ResourceSlice", served, load_resource_slice},
      {"resource.nvidia.com", "ComputeDomain", {"v1beta1"}, load_compute_domain},
  };
}

DraNodeConfig read_dra_node_config(const YamlNode& n) {
  DraNodeConfig c;
  if (n.is_scalar()) {
    c.enabled = n.boolean();
    return c;
  }
  MapReader m = n.map();
  c.enabled = m.bool_or("enabled", true);
  c.partitionable = m.bool_or("partitionable", false);
  if (auto v = m.opt("driver_version")) {
    c.driver_version = v->str();
    if (auto sv = cel::parse_semver(c.driver_version); !sv) {
      v->fail(fmt::format("driver_version must be a semantic version: {}", sv.error()));
    }
  }
  if (auto v = m.opt("cuda_driver_version")) {
    c.cuda_driver_version = v->str();
    if (auto sv = cel::parse_semver(c.cuda_driver_version); !sv) {
      v->fail(fmt::format("cuda_driver_version must be a semantic version: {}", sv.error()));
    }
  }
  c.gpus_per_pcie_root = static_cast<std::int32_t>(m.int_or("gpus_per_pcie_root", 2, 1, 64));
  c.numa_nodes = static_cast<std::int32_t>(m.int_or("numa_nodes", 2, 1, 64));
  m.finish();
  return c;
}

void finalize_dra(WorldBuilder& b, std::vector<std::string>* warnings) {
  World& w = b.world();
  DraWorld& dra = w.dra;
  // 0. ComputeDomains: a template a domain's controller makes is the domain's channel. The pod
  // joins the domain (PodSpec::compute_domain) and the ComputeDomains plugin places it; the
  // claim leaves PodSpec::claims, so a pod with no other claim is no DRA pod.
  std::vector<bool> domain_used(dra.compute_domains.size(), false);
  for (const ComputeDomain& cd : dra.compute_domains) {
    for (const dra::Claim& c : dra.claims) {
      if (c.from_template && c.namespace_ == cd.namespace_ && c.name == cd.channel_template) {
        fail_at(c.where, fmt::format("ResourceClaimTemplate {}/{} is the channel template of "
                                     "ComputeDomain {} (at {}), which its controller creates: "
                                     "remove it",
                                     c.namespace_, c.name, cd.name, cd.where));
      }
    }
  }
  auto join_domain = [&](PodSpec& p) {
    for (auto it = p.claims.begin(); it != p.claims.end();) {
      std::int32_t found = -1;
      for (std::size_t k = 0; k < dra.compute_domains.size() && !it->shared(); ++k) {
        const ComputeDomain& cd = dra.compute_domains[k];
        if (cd.namespace_ == p.namespace_ && cd.channel_template == it->template_name) {
          found = static_cast<std::int32_t>(k);
        }
      }
      if (found < 0) {
        ++it;
        continue;
      }
      if (p.compute_domain >= 0 && p.compute_domain != found) {
        fail_at(it->where,
                fmt::format("the pod already claims the channel of ComputeDomain {}; "
                            "a pod joins one ComputeDomain (its node's IMEX daemon "
                            "serves one)",
                            dra.compute_domains[static_cast<std::size_t>(p.compute_domain)].name));
      }
      p.compute_domain = found;
      domain_used[static_cast<std::size_t>(found)] = true;
      it = p.claims.erase(it);
    }
  };
  for (PodSpec& p : w.pods)
    join_domain(p);
  for (JobSpec& j : w.jobs)
    join_domain(j.pod_template);
  for (std::size_t k = 0; k < dra.compute_domains.size(); ++k) {
    const ComputeDomain& cd = dra.compute_domains[k];
    if (!domain_used[k] && warnings != nullptr) {
      warnings->push_back(
          fmt::format("{}: no pod claims the channel of ComputeDomain {} "
                      "(resourceClaimTemplateName: {} in namespace {})",
                      cd.where, cd.name, cd.channel_template, cd.namespace_));
    }
    if (cd.all_channels && warnings != nullptr) {
      warnings->push_back(
          fmt::format("{}: channel.allocationMode All is recorded; capsim "
                      "places pods the same with Single (channels are not "
                      "counted)",
                      cd.where));
    }
  }

  bool any_dra_node = false;
  for (const NodeSpec& n : w.nodes)
    any_dra_node = any_dra_node || n.devices.dra.enabled;
  bool any_claims = !dra.claims.empty();
  for (const PodSpec& p : w.pods)
    any_claims = any_claims || !p.claims.empty();
  for (const JobSpec& j : w.jobs)
    any_claims = any_claims || !j.pod_template.claims.empty();
  if (!any_dra_node && !any_claims && dra.slices.empty() && dra.classes.empty()) return;

  // 1. The NVIDIA driver's DeviceClasses, unless the manifests define their own.
  for (dra::DeviceClass& c : dra::nvidia_device_classes()) {
    const bool defined = std::any_of(dra.classes.begin(), dra.classes.end(),
                                     [&](const dra::DeviceClass& x) { return x.name == c.name; });
    if (!defined) dra.classes.push_back(std::move(c));
  }

  // 2. Device classes of every request.
  std::vector<std::string> class_names;
  for (const dra::DeviceClass& c : dra.classes)
    class_names.push_back(c.name);
  for (dra::Claim& claim : dra.claims) {
    for (dra::Request& r : claim.spec.requests) {
      for (dra::SubRequest& s : r.subrequests) {
        const auto it = std::find(class_names.begin(), class_names.end(), s.device_class);
        if (it == class_names.end()) {
          fail_at(s.where, fmt::format("device class '{}' does not exist{}", s.device_class,
                                       did_you_mean(s.device_class, class_names)));
        }
        s.class_index = static_cast<std::uint32_t>(it - class_names.begin());
      }
    }
  }

  // 2b. Extended resources served through DRA (KEP-5004): a class serves its
  // extendedResourceName and its implicit name deviceclass.resource.kubernetes.io/<class>. When
  // two classes name one resource, upstream takes the class created last (then the name that
  // sorts first; DeviceClassSpec.extendedResourceName's API doc). capsim takes the driver's
  // built-in classes as created first and the manifests' in the order they are read, so the
  // last class of the manifests that names the resource wins.
  {
    std::vector<std::uint32_t> order;
    for (std::uint32_t k = 0; k < dra.classes.size(); ++k)
      if (dra.classes[k].builtin) order.push_back(k);
    for (std::uint32_t k = 0; k < dra.classes.size(); ++k)
      if (!dra.classes[k].builtin) order.push_back(k);
    dra.extended_classes.assign(w.resources.size(), kNoClaim);
    for (std::uint32_t k : order) {
      const dra::DeviceClass& c = dra.classes[k];
      for (const std::string& name :
           {c.extended_resource_name, std::string(kImplicitExtendedResourcePrefix) + c.name}) {
        if (name.empty()) continue;
        if (auto r = w.resources.find(name)) dra.extended_classes[*r] = k;
      }
    }
  }

  // 3. ResourceSlices onto their nodes: per (driver, pool), the highest generation.
  std::map<std::string, NodeId> node_ids;
  for (NodeId i = 0; i < w.nodes.size(); ++i)
    node_ids[w.nodes[i].name] = i;
  dra.nodes.assign(w.nodes.size(), dra::NodeDevices{});
  std::map<std::tuple<NodeId, std::string, std::string>, std::vector<dra::Slice*>> pools;
  // Network-attached pools (slices with nodeSelector or allNodes) go to every node they reach,
  // in node order; all the slices of such a pool must reach the same nodes, since the pool's
  // counters are shared by its devices.
  std::map<std::pair<std::string, std::string>, const dra::Slice*> access_of;
  for (dra::Slice& s : dra.slices) {
    auto [first, inserted] = access_of.emplace(std::pair{s.driver, s.pool}, &s);
    const dra::Slice& f = *first->second;
    const bool same = f.access == s.access && (s.access != dra::SliceAccess::kSelector ||
                                               f.node_selector == s.node_selector);
    if (!inserted && !same) {
      fail_at(s.node_where,
              fmt::format("pool {}/{} also has a slice that reaches other nodes (at {}); "
                          "capsim needs every slice of a network-attached pool to have the same "
                          "nodeSelector (or all allNodes: true), and a node's own pool to use "
                          "nodeName only",
                          s.driver, s.pool, short_location(f.node_where)));
    }
    if (s.access != dra::SliceAccess::kNode) {
      std::size_t reached = 0;
      for (NodeId i = 0; i < w.nodes.size(); ++i) {
        const NodeSpec& node = w.nodes[i];
        if (s.access == dra::SliceAccess::kSelector &&
            !matches_term(s.node_selector, NodeView{&node.labels, node.name_sym}, w.strings)) {
          continue;
        }
        pools[{i, s.driver, s.pool}].push_back(&s);
        ++reached;
      }
      if (reached == 0 && warnings != nullptr) {
        warnings->push_back(
            fmt::format("{}: the slice's nodeSelector matches no node of the "
                        "scenario: its devices are never allocated",
                        s.node_where.to_string()));
      }
      continue;
    }
    auto it = node_ids.find(s.node_name);
    if (it == node_ids.end()) {
      std::vector<std::string> names;
      for (const auto& [n, id] : node_ids)
        names.push_back(n);
      fail_at(s.node_where, fmt::format("the ResourceSlice is for node '{}', which is not in the "
                                        "scenario{}",
                                        s.node_name, did_you_mean(s.node_name, names)));
    }
    const NodeSpec& node = w.nodes[it->second];
    if (s.driver == dra::kNvidiaDriver && node.gpu_count > 0 && !node.devices.dra.enabled) {
      fail_at(s.node_where, fmt::format("node {}'s GPUs are advertised by the device plugin; set "
                                        "`dra: true` on its pool or node to have the "
                                        "gpu.nvidia.com driver publish them",
                                        node.name));
    }
    pools[{it->second, s.driver, s.pool}].push_back(&s);
  }
  std::set<NodeId> nvidia_from_manifests;
  // A network-attached pool is met once per node it reaches: its warnings are given once.
  std::set<std::string> warned;
  auto warn = [&](std::string text) {
    if (warnings != nullptr && warned.insert(text).second) warnings->push_back(std::move(text));
  };
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> network_ids;
  for (auto& [key, slices] : pools) {
    const auto& [node_id, driver, pool_name] = key;
    const bool network = slices.front()->access != dra::SliceAccess::kNode;
    std::int64_t gen = 0;
    for (const dra::Slice* s : slices)
      gen = std::max(gen, s->generation);
    std::vector<dra::Slice*> current;
    for (dra::Slice* s : slices) {
      if (s->generation == gen) {
        current.push_back(s);
      } else {
        warn(
            fmt::format("{}: pool {}/{} has a newer generation ({}); this slice "
                        "is ignored, as the scheduler does",
                        s->where.to_string(), driver, pool_name, gen));
      }
    }
    if (static_cast<std::int64_t>(current.size()) < current.front()->slice_count) {
      warn(fmt::format("{}: pool {}/{} generation {} has {} of its {} slices",
                       current.front()->where.to_string(), driver, pool_name, gen, current.size(),
                       current.front()->slice_count));
    }
    const NodeSpec& node = w.nodes[node_id];
    const GpuModel* model = node.gpu_model == kNoGpuModel
                                ? nullptr
                                : b.catalog().find(w.gpu_models[node.gpu_model].name);
    dra::NodeDevices& nd = dra.nodes[node_id];
    dra::Pool pool;
    pool.driver = driver;
    pool.name = pool_name;
    pool.generation = gen;
    for (const dra::Slice* s : current) {
      for (const dra::CounterSet& cs : s->counter_sets) {
        for (const dra::CounterSet& other : pool.counter_sets) {
          if (other.name == cs.name) {
            fail_at(s->where,
                    fmt::format("counter set {} is defined twice in pool {}", cs.name, pool_name));
          }
        }
        pool.counter_sets.push_back(cs);
      }
    }
    const auto pool_index = static_cast<std::uint16_t>(nd.pools.size());
    std::set<std::string> names;
    for (dra::Slice* s : current) {
      for (dra::SliceDevice& original : s->devices) {
        // A network-attached slice is met once per node it reaches: each copy is made from the
        // slice as read.
        dra::SliceDevice copy;
        if (network) copy = original;
        dra::SliceDevice& sd = network ? copy : original;
        if (!names.insert(sd.device.name).second) {
          fail_at(sd.where,
                  fmt::format("device {} appears twice in pool {}", sd.device.name, pool_name));
        }
        sd.device.pool = pool_index;
        for (const auto& [set_name, counters] : sd.consumes) {
          auto set =
              std::find_if(pool.counter_sets.begin(), pool.counter_sets.end(),
                           [&n = set_name](const dra::CounterSet& c) { return c.name == n; });
          if (set == pool.counter_sets.end()) {
            fail_at(sd.where, fmt::format("device {} consumes counters of set {}, which pool {} "
                                          "does not define",
                                          sd.device.name, set_name, pool_name));
          }
          dra::CounterConsumption cc;
          cc.counter_set = static_cast<std::uint16_t>(set - pool.counter_sets.begin());
          for (const auto& [cname, amount] : counters) {
            auto c = std::find_if(set->counters.begin(), set->counters.end(),
                                  [&n = cname](const auto& x) { return x.first == n; });
            if (c == set->counters.end()) {
              fail_at(sd.where, fmt::format("device {} consumes counter {}, which set {} does not "
                                            "define",
                                            sd.device.name, cname, set_name));
            }
            cc.counters.emplace_back(static_cast<std::uint16_t>(c - set->counters.begin()), amount);
          }
          sd.device.consumes.push_back(std::move(cc));
        }
        if (driver == dra::kNvidiaDriver && node.devices.dra.enabled && !network) {
          link_nvidia_device(sd, node, model);
        }
        if (sd.device.gpu != kNoGpu && sd.device.allow_multiple_allocations) {
          fail_at(sd.where, "allowMultipleAllocations on a GPU device is not modelled");
        }
        nd.devices.push_back(sd.device);
        if (network) {
          // One copy per node reached; they share one record of use (Cluster::hold_claim).
          auto [at, added] = network_ids.emplace(std::tuple{driver, pool_name, sd.device.name},
                                                 static_cast<std::uint32_t>(dra.network.size()));
          if (added) dra.network.push_back({driver, pool_name, sd.device.name, {}});
          nd.devices.back().network = at->second;
        }
      }
    }
    if (driver == dra::kNvidiaDriver && !network) nvidia_from_manifests.insert(node_id);
    nd.pools.push_back(std::move(pool));
    if (nd.source.empty()) nd.source = current.front()->where.to_string();
  }
  dra.slices.clear();

  // 4. The NVIDIA driver's own slices for DRA nodes without gpu.nvidia.com manifests.
  for (NodeId i = 0; i < w.nodes.size(); ++i) {
    const NodeSpec& node = w.nodes[i];
    if (!node.devices.dra.enabled || node.gpu_count == 0 || nvidia_from_manifests.count(i))
      continue;
    const GpuModel* model = b.catalog().find(w.gpu_models[node.gpu_model].name);
    CAPSIM_CHECK(model != nullptr, "a node's GPU model is missing from the catalog");
    dra::NodeDevices gen = dra::nvidia_node_devices(node, *model);
    dra::NodeDevices& nd = dra.nodes[i];
    const auto offset = static_cast<std::uint16_t>(nd.pools.size());
    for (dra::Device& d : gen.devices) {
      d.pool = static_cast<std::uint16_t>(d.pool + offset);
      nd.devices.push_back(std::move(d));
    }
    for (dra::Pool& p : gen.pools)
      nd.pools.push_back(std::move(p));
    if (nd.source.empty()) nd.source = gen.source;
  }
  // Pools in (driver, name) order, devices in pool order then slice order: the order the
  // scheduler tries them.
  for (dra::NodeDevices& nd : dra.nodes) {
    if (nd.pools.size() < 2) continue;
    std::vector<std::uint16_t> order(nd.pools.size());
    for (std::uint16_t k = 0; k < order.size(); ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::uint16_t a, std::uint16_t c) {
      return std::tie(nd.pools[a].driver, nd.pools[a].name) <
             std::tie(nd.pools[c].driver, nd.pools[c].name);
    });
    std::vector<std::uint16_t> rank(order.size());
    for (std::uint16_t k = 0; k < order.size(); ++k)
      rank[order[k]] = k;
    std::vector<dra::Pool> pools_sorted;
    for (std::uint16_t k : order)
      pools_sorted.push_back(std::move(nd.pools[k]));
    nd.pools = std::move(pools_sorted);
    for (dra::Device& d : nd.devices)
      d.pool = rank[d.pool];
    std::stable_sort(nd.devices.begin(), nd.devices.end(),
                     [](const dra::Device& a, const dra::Device& c) { return a.pool < c.pool; });
  }
  // Where each network-attached device's copies are, now that every node's order is final.
  for (NodeId i = 0; i < dra.nodes.size(); ++i) {
    const dra::NodeDevices& nd = dra.nodes[i];
    if (nd.devices.size() > 0xffff) {
      fail_at(nd.source,
              fmt::format("node {} is reached by {} DRA devices; capsim supports at most "
                          "65535 per node",
                          w.nodes[i].name, nd.devices.size()));
    }
    const std::vector<std::uint32_t> off = dra::capacity_offsets(nd);
    for (std::size_t d = 0; d < nd.devices.size(); ++d) {
      if (nd.devices[d].network == kNoClaim) continue;
      dra.network[nd.devices[d].network].mirrors.push_back(
          {i, static_cast<std::uint16_t>(d), off[d]});
    }
  }
  if (std::all_of(dra.nodes.begin(), dra.nodes.end(),
                  [](const dra::NodeDevices& n) { return n.devices.empty() && n.pools.empty(); })) {
    dra.nodes.clear();
  }

  // 5. Pods' claims.
  auto resolve = [&](PodSpec& p) {
    if (!p.claims.empty() && p.gpu_milli > 0 && p.gpu_milli < 1000) {
      fail_at(p.claims.front().where,
              "a pod with a GPU share (capsim.io/gpu-milli) cannot also use "
              "resource claims");
    }
    for (PodClaimRef& ref : p.claims) {
      const bool tmpl = !ref.shared();
      const std::string& name = tmpl ? ref.template_name : ref.claim_name;
      std::vector<std::string> names;
      for (std::uint32_t k = 0; k < dra.claims.size(); ++k) {
        const dra::Claim& c = dra.claims[k];
        if (c.from_template != tmpl || c.namespace_ != p.namespace_) continue;
        names.push_back(c.name);
        if (c.name == name) ref.claim = k;
      }
      if (ref.claim == kNoClaim) {
        fail_at(ref.where, fmt::format("no {} '{}' in namespace {}{}",
                                       tmpl ? "ResourceClaimTemplate" : "ResourceClaim", name,
                                       p.namespace_, did_you_mean(name, names)));
      }
    }
  };
  for (PodSpec& p : w.pods)
    resolve(p);
  for (JobSpec& j : w.jobs)
    resolve(j.pod_template);
}

}  // namespace capsim
