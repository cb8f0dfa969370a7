#include "tools/loaders/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "tools/loaders/file_source.hpp"
#include "tools/loaders/scenario_loader.hpp"
#include "tools/loaders/sha256.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

// A scalar's text, or the flow form of anything else: the label an axis value is known by.
std::string label_of(const YamlNode& v) {
  return v.is_scalar() ? v.raw().Scalar() : yaml_flow(v.raw());
}

struct Axis {
  std::string name;
  std::vector<VariantSpec> values;  // each a partial variant: its label, sets, seed or profile
};

bool is_special(const std::string& key) {
  return key == "seed" || key == "profile";
}

// One value of a key axis (or one entry of a listed variant) applied to `v`.
void apply_value(VariantSpec& v, const std::string& axis, const std::string& key,
                 const YamlNode& value) {
  if (key == "seed") {
    v.seed = static_cast<std::uint64_t>(value.integer(0));
    v.axes.emplace_back(axis, std::to_string(*v.seed));
  } else if (key == "profile") {
    v.profile = value.str();
    v.axes.emplace_back(axis, v.profile);
  } else {
    if (value.is_null()) value.fail("an axis value cannot be empty");
    v.sets.push_back({key + "=" + yaml_flow(value.raw()), value.where()});
    v.axes.emplace_back(axis, label_of(value));
  }
}

VariantSpec combine(const VariantSpec& a, const VariantSpec& b) {
  VariantSpec out = a;
  out.axes.insert(out.axes.end(), b.axes.begin(), b.axes.end());
  out.sets.insert(out.sets.end(), b.sets.begin(), b.sets.end());
  if (b.seed) out.seed = b.seed;
  if (!b.profile.empty()) out.profile = b.profile;
  return out;
}

Axis read_axis(const YamlNode& node) {
  MapReader a = node.map();
  Axis axis;
  const std::optional<YamlNode> key = a.opt("key");
  const std::optional<YamlNode> values = a.opt("values");
  const std::optional<YamlNode> choices = a.opt("choices");
  const std::optional<YamlNode> name = a.opt("name");
  a.finish();  // a misspelt field is reported as such, not as a missing one
  if (key) {
    axis.name = name ? name->str() : key->str();
    if (!values) a.node().fail("an axis with a key needs `values: [...]`");
    if (choices) choices->fail("an axis has either key + values or name + choices, not both");
    for (const YamlNode& v : values->seq()) {
      VariantSpec part;
      apply_value(part, axis.name, key->str(), v);
      axis.values.push_back(std::move(part));
    }
    if (axis.values.empty()) values->fail("an axis needs at least one value");
  } else {
    if (!choices) {
      a.node().fail("an axis needs `key:` and `values:`, or `name:` and `choices:`");
    }
    if (values) values->fail("an axis has either key + values or name + choices, not both");
    if (!name) a.node().fail("an axis with choices needs a `name:`");
    axis.name = name->str();
    for (const auto& [label, settings] : choices->entries()) {
      VariantSpec part;
      part.axes.emplace_back(axis.name, label);
      if (!settings.is_null()) {
        for (const auto& [k, v] : settings.entries()) {
          if (is_special(k)) {
            apply_value(part, "", k, v);
            part.axes.pop_back();
          } else {
            part.sets.push_back({k + "=" + yaml_flow(v.raw()), v.where()});
          }
        }
      }
      axis.values.push_back(std::move(part));
    }
    if (axis.values.empty()) choices->fail("an axis needs at least one choice");
  }
  return axis;
}

}  // namespace

std::string VariantSpec::describe() const {
  std::vector<std::string> parts;
  for (const auto& [k, v] : axes)
    parts.push_back(k + "=" + v);
  return parts.empty() ? fmt::format("variant {}", index + 1)
                       : fmt::format("{}", fmt::join(parts, ", "));
}

SweepInfo SweepSpec::info() const {
  SweepInfo i;
  i.sweep_id = sweep_id;
  i.name = name;
  i.scenario = base.scenario;
  i.definition = text;
  i.variants = static_cast<std::int64_t>(variants.size());
  return i;
}

std::string yaml_flow(const YAML::Node& node) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << node;
  return e.c_str();
}

std::vector<Assignment> read_assignments(const YamlNode& map) {
  std::vector<Assignment> out;
  if (map.is_null()) return out;
  if (!map.is_map()) map.fail("expected a mapping of key.path: value");
  for (const auto& [k, v] : map.entries())
    out.push_back({k + "=" + yaml_flow(v.raw()), v.where()});
  return out;
}

StudyBase read_study_base(MapReader& m, const std::string& file,
                          const std::optional<std::string>& data_dir) {
  StudyBase b;
  b.file = file;
  b.data_dir = data_dir;
  const YamlNode sc = m.req("scenario");
  fs::path p(sc.str());
  if (p.is_relative()) p = fs::path(file).parent_path() / p;
  b.scenario = p.lexically_normal().string();
  // The error_code form: a name the file system refuses (too long, say) is an input error too.
  std::error_code ec;
  if (!fs::exists(b.scenario, ec)) {
    throw InputError(
        InputErrorKind::kMissing, sc.where(),
        ec ? fmt::format("scenario file '{}' cannot be read: {}", b.scenario, ec.message())
           : fmt::format("scenario file '{}' does not exist", b.scenario));
  }
  if (auto s = m.opt("set")) b.sets = read_assignments(*s);
  b.profile = m.str_or("profile", "");
  return b;
}

void validate_assignments(const StudyBase& base, const std::vector<Assignment>& extra,
                          std::optional<std::uint64_t> seed, const std::string& profile) {
  LoadOptions lo;
  lo.data_dir = base.data_dir;
  lo.seed = seed;
  for (const auto& a : base.sets)
    lo.overrides.push_back(a.text);
  for (const auto& a : extra)
    lo.overrides.push_back(a.text);
  try {
    Scenario s = load_scenario(base.scenario, lo);
    const std::string p = profile.empty() ? base.profile : profile;
    if (!p.empty()) {
      const auto names = s.profiles.names();
      if (std::find(names.begin(), names.end(), p) == names.end()) {
        throw InputError(InputErrorKind::kInvalid, InputLocation{base.file, 0, 0, "profile"},
                         fmt::format("unknown profile '{}' (the scenario offers: {})", p,
                                     fmt::join(names, ", ")));
      }
    }
  } catch (const InputError& e) {
    if (e.where().file.rfind("--set", 0) != 0) throw;
    // Point at the line of the study file the failing assignment came from.
    std::vector<Assignment> all = base.sets;
    all.insert(all.end(), extra.begin(), extra.end());
    for (const Assignment& a : all) {
      if (e.where().file == "--set " + a.text || e.where().field == a.text) {
        throw InputError(
            e.kind(), a.where,
            fmt::format("`{}`: {}{}", a.text,
                        e.where().field == a.text ? "" : e.where().field + ": ", e.message()));
      }
    }
    throw;
  }
}

SweepSpec load_sweep(const std::string& path, const std::optional<std::string>& data_dir,
                     std::uint64_t max_variants) {
  return load_sweep_text(
      RealFiles().read(path, "cannot open the file (does it exist and is it readable?)"), path,
      data_dir, max_variants);
}

SweepSpec load_sweep_text(std::string text, const std::string& path,
                          const std::optional<std::string>& data_dir, std::uint64_t max_variants) {
  SweepSpec spec;
  spec.text = std::move(text);
  const YamlNode doc = YamlNode::load_string(spec.text, path);
  if (!doc.is_map()) doc.fail("a sweep file must be a YAML mapping (scenario, axes, ...)");
  MapReader m = doc.map();
  spec.name = m.str_or("name", fs::path(path).stem().string());
  spec.base = read_study_base(m, path, data_dir);

  std::vector<Axis> axes;
  std::vector<VariantSpec> listed;
  const std::optional<YamlNode> axes_node = m.opt("axes");
  const std::optional<YamlNode> variants_node = m.opt("variants");
  const std::optional<YamlNode> seeds_node = m.opt("seeds");
  if (axes_node && variants_node) {
    variants_node->fail("a sweep has either `axes:` (a cartesian product) or `variants:` (a list)");
  }
  if (axes_node) {
    std::set<std::string> names;
    for (const YamlNode& a : axes_node->seq()) {
      Axis axis = read_axis(a);
      if (!names.insert(axis.name).second) {
        a.fail(fmt::format("two axes are named '{}'; give one a `name:`", axis.name));
      }
      axes.push_back(std::move(axis));
    }
  }
  if (variants_node) {
    for (const YamlNode& vn : variants_node->seq()) {
      if (!vn.is_map()) vn.fail("a listed variant is a mapping of key.path: value");
      VariantSpec v;
      for (const auto& [k, val] : vn.entries())
        apply_value(v, k, k, val);
      listed.push_back(std::move(v));
    }
    if (listed.empty()) variants_node->fail("`variants:` lists no variant");
  }
  if (seeds_node) {
    Axis seeds{"seed", {}};
    for (const YamlNode& s : seeds_node->seq()) {
      VariantSpec part;
      apply_value(part, "seed", "seed", s);
      seeds.values.push_back(std::move(part));
    }
    if (seeds.values.empty()) seeds_node->fail("`seeds:` lists no seed");
    for (const Axis& a : axes) {
      if (a.name == "seed") seeds_node->fail("`seeds:` and an axis named 'seed' both set seeds");
    }
    axes.push_back(std::move(seeds));
  }
  m.finish();
  if (axes.empty() && listed.empty()) {
    doc.fail("a sweep needs `axes:`, `variants:` or `seeds:`");
  }

  // The count first (saturating), so that a product too large to hold is refused before it is
  // made.
  std::uint64_t count = listed.empty() ? 1 : listed.size();
  for (const Axis& axis : axes) {
    const std::uint64_t n = axis.values.size();
    count = n != 0 && count > std::numeric_limits<std::uint64_t>::max() / n
                ? std::numeric_limits<std::uint64_t>::max()
                : count * n;
  }
  if (count > max_variants) {
    const YamlNode at = axes_node ? *axes_node : variants_node ? *variants_node : *seeds_node;
    const std::string n = count == std::numeric_limits<std::uint64_t>::max()
                              ? std::string("more than 18446744073709551615")
                              : std::to_string(count);
    if (max_variants < kMaxSweepVariants) {
      at.fail(
          fmt::format("{} variants, above the limit of {} variants of a sweep "
                      "(docs/cli.md#limits); pass --force to run them anyway",
                      n, max_variants));
    }
    at.fail(
        fmt::format("{} variants, above the hard limit of {} variants of a sweep "
                    "(docs/cli.md#limits), which --force does not lift",
                    n, max_variants));
  }

  // Cartesian product (the first axis varies slowest), over the listed variants if any.
  std::vector<VariantSpec> product =
      listed.empty() ? std::vector<VariantSpec>{VariantSpec{}} : listed;
  for (const Axis& axis : axes) {
    std::vector<VariantSpec> next;
    next.reserve(product.size() * axis.values.size());
    for (const VariantSpec& p : product) {
      for (const VariantSpec& v : axis.values)
        next.push_back(combine(p, v));
    }
    product = std::move(next);
  }
  for (std::size_t i = 0; i < product.size(); ++i)
    product[i].index = static_cast<std::int64_t>(i);
  spec.variants = std::move(product);
  for (const VariantSpec& v : spec.variants) {
    for (const auto& [axis, value] : v.axes) {
      if (std::find(spec.axis_names.begin(), spec.axis_names.end(), axis) ==
          spec.axis_names.end()) {
        spec.axis_names.push_back(axis);
      }
    }
  }

  // Every distinct assignment and profile once against the base scenario.
  validate_assignments(spec.base, {}, std::nullopt, "");
  std::set<std::string> tried;
  auto try_part = [&](const VariantSpec& part) {
    const std::string key = fmt::format("{}|{}", part.describe(), part.profile);
    if (!tried.insert(key).second) return;
    validate_assignments(spec.base, part.sets, std::nullopt, part.profile);
  };
  for (const Axis& a : axes) {
    if (a.name == "seed") continue;
    for (const VariantSpec& part : a.values)
      try_part(part);
  }
  for (const VariantSpec& part : listed)
    try_part(part);

  // The sweep's identity: shards of one sweep must agree on all of it.
  Sha256 h;
  h.update(fmt::format("capsim sweep\nversion {}\n", CAPSIM_VERSION));
  h.update(spec.text);
  LoadOptions lo;
  lo.data_dir = data_dir;
  for (const auto& a : spec.base.sets)
    lo.overrides.push_back(a.text);
  h.update("\nscenario " + load_scenario(spec.base.scenario, lo).sha256 + "\n");
  for (const VariantSpec& v : spec.variants) {
    h.update(fmt::format("{} seed={} profile={}", v.index, v.seed ? std::to_string(*v.seed) : "-",
                         v.profile));
    for (const auto& a : v.sets)
      h.update(" " + a.text);
    h.update("\n");
  }
  spec.sweep_id = h.hex_digest();
  return spec;
}

}  // namespace capsim
