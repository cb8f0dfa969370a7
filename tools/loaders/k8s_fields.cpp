#include "tools/loaders/k8s_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include "sim/quantity.hpp"

namespace capsim {

namespace {

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// The name part of a qualified name, and a label value: at most 63 characters of [A-Za-z0-9-_.],
// starting and ending with an alphanumeric. Empty `what` for values (which may be empty).
std::string name_problem(std::string_view s, std::string_view what) {
  if (s.empty()) return fmt::format("{} must not be empty", what);
  if (s.size() > 63) {
    return fmt::format("{} must be no more than 63 characters (it has {})", what, s.size());
  }
  const bool chars_ok = std::all_of(
      s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
  if (!chars_ok || !is_alnum(s.front()) || !is_alnum(s.back())) {
    return fmt::format(
        "{} must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character",
        what);
  }
  return "";
}

// One RFC 1123 label: [a-z0-9-], starting and ending with an alphanumeric.
bool is_rfc1123_label(std::string_view label) {
  return !label.empty() && is_lower_alnum(label.front()) && is_lower_alnum(label.back()) &&
         std::all_of(label.begin(), label.end(),
                     [](char c) { return is_lower_alnum(c) || c == '-'; });
}

// A lowercase RFC 1123 subdomain: dot-separated labels of [a-z0-9-], each starting and ending
// with an alphanumeric, 253 characters at most (apimachinery's IsDNS1123Subdomain). `what` names
// the string in the message.
std::string subdomain_problem(std::string_view s, std::string_view what = "prefix part") {
  if (s.empty()) return fmt::format("{} must not be empty", what);
  if (s.size() > 253) {
    return fmt::format("{} must be no more than 253 characters (it has {})", what, s.size());
  }
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t dot = std::min(s.find('.', start), s.size());
    if (!is_rfc1123_label(s.substr(start, dot - start))) {
      return fmt::format(
          "{} must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or "
          "'.', starting and ending with an alphanumeric character",
          what);
    }
    start = dot + 1;
  }
  return "";
}

bool parse_int64(std::string_view s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_byte_resource(std::string_view name) {
  return name == "memory" || name == "ephemeral-storage" || name == "storage" ||
         name.rfind("hugepages-", 0) == 0;
}

TaintEffect effect_or_fail(const YamlNode& node) {
  const std::string s = node.str();
  auto e = parse_taint_effect(s);
  if (!e) {
    node.fail(
        fmt::format("unknown taint effect '{}'{}; use NoSchedule, PreferNoSchedule or "
                    "NoExecute",
                    s, did_you_mean(s, {"NoSchedule", "PreferNoSchedule", "NoExecute"})));
  }
  return *e;
}

std::vector<std::string> read_values(MapReader& r) {
  std::vector<std::string> out;
  if (auto v = r.opt("values")) {
    for (const YamlNode& item : v->seq())
      out.push_back(item.str());
  }
  return out;
}

NodeSelectorRequirement parse_expression(const YamlNode& node, WorldBuilder& b) {
  MapReader r = node.map();
  const YamlNode key_node = r.req("key");
  const std::string key = key_node.str();
  if (auto p = label_key_problem(key); !p.empty()) {
    key_node.fail(fmt::format("invalid label key '{}': {}", key, p));
  }
  const YamlNode op_node = r.req("operator");
  const std::string op_text = op_node.str();
  auto op = parse_selector_op(op_text);
  if (!op) {
    op_node.fail(fmt::format(
        "unknown operator '{}'{}; use In, NotIn, Exists, DoesNotExist, Gt or Lt", op_text,
        did_you_mean(op_text, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})));
  }
  const std::vector<std::string> values = read_values(r);
  r.finish();
  NodeSelectorRequirement req;
  req.key = b.sym(key);
  req.op = *op;
  switch (*op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (values.empty()) node.fail("values must be given when operator is 'In' or 'NotIn'");
      for (const auto& v : values)
        req.values.push_back(b.sym(v));
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!values.empty()) {
        node.fail("values may not be given when operator is 'Exists' or 'DoesNotExist'");
      }
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (values.size() != 1) {
        node.fail(fmt::format("operator '{}' needs exactly one value (it has {})", op_text,
                              values.size()));
      }
      if (!parse_int64(values[0], req.number)) {
        node.fail(
            fmt::format("'{}' is not an integer (Gt and Lt compare the label value as an "
                        "integer)",
                        values[0]));
      }
      break;
  }
  return req;
}

NodeSelectorRequirement parse_field_requirement(const YamlNode& node, WorldBuilder& b) {
  MapReader r = node.map();
  const YamlNode key_node = r.req("key");
  const std::string key = key_node.str();
  if (key != "metadata.name") {
    key_node.fail(fmt::format(
        "'{}' is not a valid field selector key: matchFields supports only metadata.name", key));
  }
  const YamlNode op_node = r.req("operator");
  const std::string op_text = op_node.str();
  auto op = parse_selector_op(op_text);
  if (!op || (*op != SelectorOp::kIn && *op != SelectorOp::kNotIn)) {
    op_node.fail(fmt::format("operator '{}' is not supported in matchFields; use In or NotIn{}",
                             op_text, did_you_mean(op_text, {"In", "NotIn"})));
  }
  const std::vector<std::string> values = read_values(r);
  r.finish();
  if (values.size() != 1) {
    node.fail(fmt::format("matchFields with '{}' needs exactly one value (it has {})", op_text,
                          values.size()));
  }
  NodeSelectorRequirement req;
  req.key = b.sym(key);
  req.op = *op;
  req.values.push_back(b.sym(values[0]));
  return req;
}

}  // namespace

std::string label_key_problem(std::string_view key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return name_problem(key, "name part");
  if (key.find('/', slash + 1) != std::string_view::npos) {
    return "a qualified name has at most one '/' (an optional prefix, '/', then the name)";
  }
  if (auto p = subdomain_problem(key.substr(0, slash)); !p.empty()) return p;
  return name_problem(key.substr(slash + 1), "name part");
}

std::string object_name_problem(std::string_view name) {
  return subdomain_problem(name, "a name");
}

std::string namespace_name_problem(std::string_view name) {
  if (name.size() > 63) {
    return fmt::format("a namespace name must be no more than 63 characters (it has {})",
                       name.size());
  }
  if (!is_rfc1123_label(name)) {
    return "a namespace name must be a lowercase RFC 1123 label: lowercase alphanumeric "
           "characters or '-', starting and ending with an alphanumeric character";
  }
  return "";
}

std::string label_value_problem(std::string_view value) {
  if (value.empty()) return "";
  return name_problem(value, "a label value");
}

LabelSet parse_labels(const YamlNode& map, WorldBuilder& b) {
  LabelSet out;
  for (const auto& [key, value] : map.entries()) {
    if (auto p = label_key_problem(key); !p.empty()) {
      value.fail(fmt::format("invalid label key '{}': {}", key, p));
    }
    const std::string v = value.is_null() ? std::string() : value.str();
    if (auto p = label_value_problem(v); !p.empty()) {
      value.fail(fmt::format("invalid value '{}' for label '{}': {}", v, key, p));
    }
    out.set(b.sym(key), b.sym(v));
  }
  return out;
}

std::vector<Taint> parse_taints(const YamlNode& list, WorldBuilder& b) {
  std::vector<Taint> out;
  for (const YamlNode& item : list.seq()) {
    MapReader r = item.map();
    const YamlNode key_node = r.req("key");
    const std::string key = key_node.str();
    if (auto p = label_key_problem(key); !p.empty()) {
      key_node.fail(fmt::format("invalid taint key '{}': {}", key, p));
    }
    std::string value;
    if (auto v = r.opt("value")) {
      value = v->str();
      if (auto p = label_value_problem(value); !p.empty()) {
        v->fail(fmt::format("invalid taint value '{}': {}", value, p));
      }
    }
    const TaintEffect effect = effect_or_fail(r.req("effect"));
    r.ignore("timeAdded");
    r.finish();
    Taint t{b.sym(key), b.sym(value), effect};
    for (const Taint& other : out) {
      if (other.key == t.key && other.effect == t.effect) {
        item.fail(
            fmt::format("taint '{}' with effect {} appears twice; taints must be unique by "
                        "key and effect",
                        key, to_string(effect)));
      }
    }
    out.push_back(t);
  }
  return out;
}

std::vector<Toleration> parse_tolerations(const YamlNode& list, WorldBuilder& b) {
  std::vector<Toleration> out;
  for (const YamlNode& item : list.seq()) {
    MapReader r = item.map();
    std::string key;
    if (auto k = r.opt("key")) {
      key = k->str();
      if (!key.empty()) {
        if (auto p = label_key_problem(key); !p.empty()) {
          k->fail(fmt::format("invalid toleration key '{}': {}", key, p));
        }
      }
    }
    TolerationOp op = TolerationOp::kEqual;
    if (auto o = r.opt("operator")) {
      const std::string s = o->str();
      if (s == "Exists") {
        op = TolerationOp::kExists;
      } else if (s != "Equal" && !s.empty()) {
        o->fail(fmt::format("unknown toleration operator '{}'{}; use Equal or Exists", s,
                            did_you_mean(s, {"Equal", "Exists"})));
      }
    }
    std::string value;
    const std::optional<YamlNode> value_node = r.opt("value");
    if (value_node) value = value_node->str();
    std::optional<TaintEffect> effect;
    if (auto e = r.opt("effect")) {
      if (!e->str().empty()) effect = effect_or_fail(*e);
    }
    const std::optional<YamlNode> seconds = r.opt("tolerationSeconds");
    r.finish();

    if (key.empty() && op != TolerationOp::kExists) {
      item.fail(
          "operator must be Exists when key is empty (an empty key with Exists tolerates "
          "every taint)");
    }
    if (op == TolerationOp::kExists && !value.empty()) {
      value_node->fail("value must be empty when operator is 'Exists'");
    }
    if (auto p = label_value_problem(value); !p.empty()) {
      value_node->fail(fmt::format("invalid toleration value '{}': {}", value, p));
    }
    if (seconds) {
      (void)seconds->integer();
      if (effect != TaintEffect::kNoExecute) {
        seconds->fail("effect must be 'NoExecute' when tolerationSeconds is set");
      }
    }
    Toleration t;
    t.key = key.empty() ? kNoSym : b.sym(key);
    t.op = op;
    t.value = b.sym(value);
    t.effect = effect;
    out.push_back(t);
  }
  return out;
}

NodeSelectorTerm parse_node_selector_term(const YamlNode& term, WorldBuilder& b) {
  MapReader r = term.map();
  NodeSelectorTerm out;
  if (auto exprs = r.opt("matchExpressions")) {
    for (const YamlNode& e : exprs->seq())
      out.match_expressions.push_back(parse_expression(e, b));
  }
  if (auto fields = r.opt("matchFields")) {
    for (const YamlNode& f : fields->seq())
      out.match_fields.push_back(parse_field_requirement(f, b));
  }
  r.finish();
  return out;
}

NodeAffinity parse_node_affinity(const YamlNode& node_affinity, WorldBuilder& b) {
  NodeAffinity out;
  if (node_affinity.is_null()) return out;
  MapReader r = node_affinity.map();
  if (auto req = r.opt("requiredDuringSchedulingIgnoredDuringExecution")) {
    MapReader rr = req->map();
    const YamlNode terms = rr.req("nodeSelectorTerms");
    rr.finish();
    std::vector<NodeSelectorTerm> parsed;
    for (const YamlNode& t : terms.seq())
      parsed.push_back(parse_node_selector_term(t, b));
    if (parsed.empty()) terms.fail("nodeSelectorTerms must have at least one term");
    out.required = std::move(parsed);
  }
  if (auto pref = r.opt("preferredDuringSchedulingIgnoredDuringExecution")) {
    for (const YamlNode& item : pref->seq()) {
      MapReader pr = item.map();
      PreferredSchedulingTerm p;
      p.weight = static_cast<std::int32_t>(pr.req("weight").integer(1, 100));
      p.preference = parse_node_selector_term(pr.req("preference"), b);
      pr.finish();
      out.preferred.push_back(std::move(p));
    }
  }
  r.finish();
  return out;
}

bool is_extended_resource(std::string_view name) {
  return name.find('/') != std::string_view::npos;
}

Result<std::int64_t> resource_quantity(std::string_view resource, std::string_view text) {
  if (resource == "cpu") return parse_milli_quantity(text);
  if (is_byte_resource(resource)) return parse_quantity(text);
  // Whole units: read in milli-units so that a fraction is seen instead of rounded up.
  auto milli = parse_quantity_scaled(text, 3);
  if (!milli) return milli;
  if (*milli % 1000 != 0) {
    std::string hint;
    if (resource == "nvidia.com/gpu") {
      hint =
          "; for a share of one GPU use capsim's GPU share (annotation capsim.io/gpu-milli, "
          "trace column gpu_milli)";
    }
    return make_error(
        fmt::format("'{}' is not a whole number: {} is counted in whole units, and "
                    "Kubernetes rejects fractional amounts of it{}",
                    text, resource, hint));
  }
  return *milli / 1000;
}

std::string resource_name_problem(std::string_view name, ResourceScope scope) {
  if (name.empty()) return "empty resource name";
  if (is_extended_resource(name)) {
    if (auto p = label_key_problem(name); !p.empty()) {
      return fmt::format("'{}' is not a valid resource name: {}", name, p);
    }
    const std::string_view prefix = name.substr(0, name.find('/'));
    // A container may ask for a DeviceClass as an extended resource by its implicit name
    // (KEP-5004, DRAExtendedResource); a node never advertises one.
    if (scope == ResourceScope::kContainer && prefix == "deviceclass.resource.kubernetes.io") {
      return "";
    }
    if (prefix == "kubernetes.io" ||
        (prefix.size() > 14 && prefix.substr(prefix.size() - 14) == ".kubernetes.io")) {
      return fmt::format(
          "'{}' is not a valid resource name: the kubernetes.io domain is reserved "
          "for Kubernetes' own resources",
          name);
    }
    return "";
  }
  if (name == "cpu" || name == "memory" || name == "ephemeral-storage") return "";
  if (name.rfind("hugepages-", 0) == 0) {
    auto size = parse_quantity(name.substr(10));
    if (!size || *size <= 0) {
      return fmt::format("'{}' has an invalid page size (e.g. hugepages-2Mi, hugepages-1Gi)", name);
    }
    return "";
  }
  if (scope == ResourceScope::kNode) {
    if (name == "pods" || name.rfind("attachable-volumes-", 0) == 0) return "";
  }
  std::string hint;
  if (lower(name).find("gpu") != std::string::npos) {
    hint = " (did you mean 'nvidia.com/gpu'?)";
  } else {
    std::vector<std::string> known = {"cpu",           "memory",        "ephemeral-storage",
                                      "hugepages-2Mi", "hugepages-1Gi", "nvidia.com/gpu"};
    if (scope == ResourceScope::kNode) known.emplace_back("pods");
    hint = did_you_mean(name, known);
  }
  return fmt::format(
      "unknown resource '{}'{}; extended resources need a domain prefix, such as "
      "nvidia.com/gpu or example.com/widget",
      name, hint);
}

std::vector<ResourceAmount> parse_resource_amounts(const YamlNode& map, ResourceScope scope) {
  std::vector<ResourceAmount> out;
  for (const auto& [name, value] : map.entries()) {
    if (auto p = resource_name_problem(name, scope); !p.empty()) value.fail(p);
    auto amount = resource_quantity(name, value.str());
    if (!amount) value.fail(amount.error());
    out.push_back(ResourceAmount{name, *amount, value});
  }
  return out;
}

ResourceList parse_resource_list(const YamlNode& map, WorldBuilder& b) {
  ResourceList out;
  for (const ResourceAmount& a : parse_resource_amounts(map, ResourceScope::kContainer)) {
    if (a.value == 0) continue;
    out.set(b.resource(a.name, a.where.where()), a.value);
  }
  return out;
}

ResourceVec parse_resource_vec(const YamlNode& map, WorldBuilder& b) {
  ResourceVec out;
  for (const ResourceAmount& a : parse_resource_amounts(map, ResourceScope::kNode)) {
    if (a.value == 0) continue;
    out[b.resource(a.name, a.where.where())] = a.value;
  }
  return out;
}

LabelSelector parse_label_selector(const YamlNode& selector, WorldBuilder& b) {
  LabelSelector out;
  if (selector.is_null()) return out;  // absent: selects nothing
  out.present = true;
  MapReader r = selector.map();
  if (auto ml = r.opt("matchLabels")) {
    const LabelSet labels = parse_labels(*ml, b);
    for (const auto& [k, v] : labels.items())
      out.requirements.push_back(LabelRequirement{k, LabelOp::kIn, {v}});
  }
  if (auto exprs = r.opt("matchExpressions")) {
    for (const YamlNode& e : exprs->seq()) {
      MapReader er = e.map();
      const YamlNode key_node = er.req("key");
      const std::string key = key_node.str();
      if (auto p = label_key_problem(key); !p.empty()) {
        key_node.fail(fmt::format("invalid label key '{}': {}", key, p));
      }
      const YamlNode op_node = er.req("operator");
      const std::string op = op_node.str();
      LabelRequirement req;
      req.key = b.sym(key);
      if (op == "In") {
        req.op = LabelOp::kIn;
      } else if (op == "NotIn") {
        req.op = LabelOp::kNotIn;
      } else if (op == "Exists") {
        req.op = LabelOp::kExists;
      } else if (op == "DoesNotExist") {
        req.op = LabelOp::kDoesNotExist;
      } else {
        op_node.fail(fmt::format(
            "unknown operator '{}'{}; a label selector takes In, NotIn, Exists or DoesNotExist", op,
            did_you_mean(op, {"In", "NotIn", "Exists", "DoesNotExist"})));
      }
      const std::vector<std::string> values = read_values(er);
      er.finish();
      const bool set_op = req.op == LabelOp::kIn || req.op == LabelOp::kNotIn;
      if (set_op && values.empty()) {
        e.fail("values must be given when operator is 'In' or 'NotIn'");
      }
      if (!set_op && !values.empty()) {
        e.fail("values may not be given when operator is 'Exists' or 'DoesNotExist'");
      }
      for (const auto& v : values) {
        if (auto p = label_value_problem(v); !p.empty()) {
          e.fail(fmt::format("invalid value '{}' for label '{}': {}", v, key, p));
        }
        req.values.push_back(b.sym(v));
      }
      out.requirements.push_back(std::move(req));
    }
  }
  r.finish();
  return out;
}

namespace {

Sym topology_key(MapReader& r, WorldBuilder& b) {
  const YamlNode key_node = r.req("topologyKey");
  const std::string key = key_node.str();
  if (key.empty()) key_node.fail("topologyKey must not be empty");
  if (auto p = label_key_problem(key); !p.empty()) {
    key_node.fail(fmt::format("invalid topologyKey '{}': {}", key, p));
  }
  return b.sym(key);
}

// matchLabelKeys / mismatchLabelKeys: label keys, none also in the labelSelector's requirements,
// and only with a labelSelector (the API server's rules).
std::vector<Sym> label_keys(MapReader& r, const char* field, const LabelSelector& selector,
                            const YamlNode& owner, WorldBuilder& b) {
  std::vector<Sym> out;
  auto list = r.opt(field);
  if (!list) return out;
  for (const YamlNode& k : list->seq()) {
    const std::string key = k.str();
    if (auto p = label_key_problem(key); !p.empty()) {
      k.fail(fmt::format("invalid label key '{}': {}", key, p));
    }
    const Sym sym = b.sym(key);
    for (const LabelRequirement& req : selector.requirements) {
      if (req.key == sym) {
        k.fail(fmt::format("'{}' exists in both {} and labelSelector", key, field));
      }
    }
    out.push_back(sym);
  }
  if (!out.empty() && !selector.present) {
    owner.fail(fmt::format("{} cannot be set when labelSelector isn't set", field));
  }
  return out;
}

NodeInclusionPolicy inclusion_policy(const YamlNode& n) {
  const std::string v = n.str();
  if (v == "Honor") return NodeInclusionPolicy::kHonor;
  if (v != "Ignore") {
    n.fail(fmt::format("unknown node inclusion policy '{}'{}; use Honor or Ignore", v,
                       did_you_mean(v, {"Honor", "Ignore"})));
  }
  return NodeInclusionPolicy::kIgnore;
}

PodAffinityTerm parse_pod_affinity_term(const YamlNode& node, WorldBuilder& b,
                                        const FieldWarning& warn) {
  MapReader r = node.map();
  PodAffinityTerm t;
  if (auto sel = r.opt("labelSelector")) t.selector = parse_label_selector(*sel, b);
  if (auto ns = r.opt("namespaces")) {
    for (const YamlNode& n : ns->seq())
      t.namespaces.push_back(b.sym(n.str()));
  }
  if (auto nss = r.opt("namespaceSelector")) {
    t.namespace_selector = parse_label_selector(*nss, b);
    // Namespaces carry the labels of their v1 Namespace objects, which may come later or from
    // another file: a key no Namespace object has is warned about once everything is read
    // (once per key), as it sees every namespace without it.
    const Sym name_key = b.sym("kubernetes.io/metadata.name");
    for (const LabelRequirement& req : t.namespace_selector.requirements) {
      if (req.key == name_key || !warn) continue;
      const std::string key = b.world().strings.str(req.key);
      b.on_finalize("namespace-label:" + key,
                    [&world = b.world(), k = req.key, key, warn, at = *nss] {
                      for (const auto& [ns, labels] : world.namespace_labels) {
                        if (labels.has(k)) return;
                      }
                      warn(at, fmt::format("namespaceSelector key '{}' is on no Namespace object: "
                                           "every namespace is taken to lack it (give the "
                                           "v1 Namespace objects with their labels)",
                                           key));
                    });
    }
  }
  t.topology_key = topology_key(r, b);
  t.match_label_keys = label_keys(r, "matchLabelKeys", t.selector, node, b);
  t.mismatch_label_keys = label_keys(r, "mismatchLabelKeys", t.selector, node, b);
  r.finish();
  for (Sym k : t.match_label_keys) {
    if (std::find(t.mismatch_label_keys.begin(), t.mismatch_label_keys.end(), k) !=
        t.mismatch_label_keys.end()) {
      node.fail(fmt::format("'{}' exists in both matchLabelKeys and mismatchLabelKeys",
                            b.world().strings.str(k)));
    }
  }
  return t;
}

}  // namespace

std::vector<TopologySpreadConstraint> parse_topology_spread_constraints(const YamlNode& list,
                                                                        WorldBuilder& b) {
  std::vector<TopologySpreadConstraint> out;
  for (const YamlNode& item : list.seq()) {
    MapReader r = item.map();
    TopologySpreadConstraint c;
    const YamlNode skew = r.req("maxSkew");
    c.max_skew =
        static_cast<std::int32_t>(skew.integer(1, std::numeric_limits<std::int32_t>::max()));
    c.topology_key = topology_key(r, b);
    const YamlNode when = r.req("whenUnsatisfiable");
    const std::string w = when.str();
    if (w == "DoNotSchedule") {
      c.when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
    } else if (w == "ScheduleAnyway") {
      c.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
    } else {
      when.fail(
          fmt::format("unknown whenUnsatisfiable '{}'{}; use DoNotSchedule or "
                      "ScheduleAnyway",
                      w, did_you_mean(w, {"DoNotSchedule", "ScheduleAnyway"})));
    }
    if (auto sel = r.opt("labelSelector")) c.selector = parse_label_selector(*sel, b);
    if (auto md = r.opt("minDomains")) {
      c.min_domains =
          static_cast<std::int32_t>(md->integer(1, std::numeric_limits<std::int32_t>::max()));
      if (c.when_unsatisfiable != WhenUnsatisfiable::kDoNotSchedule) {
        md->fail("minDomains can only be used with whenUnsatisfiable DoNotSchedule");
      }
    }
    if (auto p = r.opt("nodeAffinityPolicy")) c.node_affinity_policy = inclusion_policy(*p);
    if (auto p = r.opt("nodeTaintsPolicy")) c.node_taints_policy = inclusion_policy(*p);
    c.match_label_keys = label_keys(r, "matchLabelKeys", c.selector, item, b);
    r.finish();
    for (const TopologySpreadConstraint& prev : out) {
      if (prev.topology_key == c.topology_key && prev.when_unsatisfiable == c.when_unsatisfiable) {
        item.fail(
            fmt::format("duplicate constraint: topologyKey '{}' with whenUnsatisfiable {} "
                        "is given twice",
                        b.world().strings.str(c.topology_key), w));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

PodAffinityRules parse_pod_affinity(const YamlNode& node, WorldBuilder& b,
                                    const FieldWarning& warn) {
  PodAffinityRules out;
  if (node.is_null()) return out;
  MapReader r = node.map();
  if (auto req = r.opt("requiredDuringSchedulingIgnoredDuringExecution")) {
    for (const YamlNode& t : req->seq())
      out.required.push_back(parse_pod_affinity_term(t, b, warn));
  }
  if (auto pref = r.opt("preferredDuringSchedulingIgnoredDuringExecution")) {
    for (const YamlNode& item : pref->seq()) {
      MapReader pr = item.map();
      WeightedPodAffinityTerm w;
      w.weight = static_cast<std::int32_t>(pr.req("weight").integer(1, 100));
      w.term = parse_pod_affinity_term(pr.req("podAffinityTerm"), b, warn);
      pr.finish();
      out.preferred.push_back(std::move(w));
    }
  }
  r.finish();
  return out;
}

}  // namespace capsim
