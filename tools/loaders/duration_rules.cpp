#include "tools/loaders/duration_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/compare.hpp"
#include "sim/random.hpp"
#include "tools/loaders/k8s_fields.hpp"
#include "tools/loaders/world_builder.hpp"

namespace capsim {

namespace {

// The kinds a rule may name: those whose objects get a duration.
const std::vector<std::string>& rule_kinds() {
  static const std::vector<std::string> k = {
      "Pod",       "Job",    "CronJob",    "Deployment",      "ReplicaSet", "StatefulSet",
      "DaemonSet", "JobSet", "PyTorchJob", "LeaderWorkerSet", "TrainJob"};
  return k;
}

double seconds_of(const YamlNode& n) {
  return to_seconds(n.duration());
}

}  // namespace

DurationRules DurationRules::parse(const YamlNode& list, std::uint64_t seed) {
  DurationRules out;
  out.seed_ = seed;
  for (const YamlNode& item : list.seq()) {
    MapReader r = item.map();
    Rule rule;
    rule.source = short_location(item.where());
    if (auto m = r.opt("match")) {
      MapReader mr = m->map();
      if (auto k = mr.opt("kind")) {
        rule.match.kind = k->str();
        if (std::find(rule_kinds().begin(), rule_kinds().end(), *rule.match.kind) ==
            rule_kinds().end()) {
          k->fail(fmt::format("kind '{}' is not one whose objects get a duration{}; use one of {}",
                              *rule.match.kind, did_you_mean(*rule.match.kind, rule_kinds()),
                              fmt::join(rule_kinds(), ", ")));
        }
      }
      if (auto n = mr.opt("namespace")) rule.match.namespace_ = n->str();
      if (auto n = mr.opt("name")) rule.match.name = n->str();
      if (auto q = mr.opt("queue")) rule.match.queue = q->str();
      if (auto l = mr.opt("labels")) {
        for (const auto& [key, value] : l->entries()) {
          if (auto p = label_key_problem(key); !p.empty()) {
            value.fail(fmt::format("invalid label key '{}': {}", key, p));
          }
          const std::string v = value.is_null() ? std::string() : value.str();
          if (auto p = label_value_problem(v); !p.empty()) {
            value.fail(fmt::format("invalid label value '{}': {}", v, p));
          }
          rule.match.labels.emplace_back(key, v);
        }
      }
      mr.finish();
    }
    const std::optional<YamlNode> d = r.opt("duration");
    const std::optional<YamlNode> lr = r.opt("long_running");
    if (lr) rule.long_running = lr->boolean();
    if (rule.long_running && d) {
      d->fail("a rule gives either a duration or long_running: true, not both");
    }
    if (!rule.long_running && !d) {
      item.fail(
          "a durations rule needs `duration` (e.g. 2h, or a distribution such as {lognormal: "
          "{median: 30m, sigma: 0.5}}) or `long_running: true`");
    }
    if (d) rule.duration = Distribution::parse(*d, seconds_of);
    r.finish();
    out.rules_.push_back(std::move(rule));
  }
  return out;
}

const DurationRules::Rule* DurationRules::find(const DurationSubject& s) const {
  for (const Rule& rule : rules_) {
    const Match& m = rule.match;
    if (m.kind && *m.kind != s.kind) continue;
    if (m.namespace_ && *m.namespace_ != s.namespace_) continue;
    if (m.queue && *m.queue != s.queue) continue;
    if (m.name && !glob_match(*m.name, s.name)) continue;
    bool labels_ok = true;
    for (const auto& [key, value] : m.labels) {
      const Sym k = s.strings != nullptr ? s.strings->find(key) : kNoSym;
      const Sym v = (k != kNoSym && s.labels != nullptr) ? s.labels->get(k) : kNoSym;
      if (v == kNoSym || s.strings->str(v) != value) {
        labels_ok = false;
        break;
      }
    }
    if (labels_ok) return &rule;
  }
  return nullptr;
}

std::optional<SimDuration> DurationRules::duration_for(const DurationSubject& s) const {
  const Rule* rule = find(s);
  if (rule == nullptr) return std::nullopt;
  if (rule->long_running) return kEndOfTime;
  // One stream per object: the draw does not depend on which objects were read before it.
  RandomStream rng(seed_,
                   fmt::format("durations/{}/{}/{}/{}", s.kind, s.namespace_, s.name, s.instance));
  const double secs = rule->duration->sample(rng);
  // A distribution may reach below zero (a normal); a run takes at least a second.
  const double clamped = std::max(secs, 1.0);
  return static_cast<SimDuration>(std::llround(clamped * static_cast<double>(kSecond)));
}

std::string DurationRules::matching_rule(const DurationSubject& s) const {
  const Rule* rule = find(s);
  return rule == nullptr ? std::string() : rule->source;
}

std::string DurationRules::suggestion(const DurationSubject& s) {
  // A generated name differs with every input; the prefix and a `*` match every object made
  // from the same manifest.
  const std::string name =
      s.generate_name.empty() ? std::string(s.name) : std::string(s.generate_name) + "*";
  return fmt::format(
      "durations:\n  - match: {{kind: {}, namespace: {}, name: \"{}\"}}\n    duration: 1h", s.kind,
      s.namespace_, name);
}

}  // namespace capsim
