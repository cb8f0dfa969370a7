// The scenario's `durations:` section: run times for manifest workloads by rule, so files taken
// unchanged from users need no capsim.io/duration annotation. A rule matches on the object's
// kind, namespace, labels, name (a glob whose `*` matches any run of characters, as in `capsim
// compare`) and queue (all that are given must hold) and gives a fixed duration, a distribution
// (models/workload/distribution) or long-running. The first matching rule wins; an annotation on
// the object wins over every rule. A draw depends only on the seed and the object (kind, namespace,
// name), never on the order objects are read, so the same seed gives the same durations. A value
// type, constant once parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/distribution.hpp"
#include "models/yaml_reader.hpp"
#include "sim/labels.hpp"
#include "sim/time.hpp"

namespace capsim {

// The object a duration is wanted for: the one the user wrote (a CronJob, not the Jobs it makes).
struct DurationSubject {
  std::string_view kind;  // "Pod", "Job", "Deployment", "CronJob", ...
  std::string_view namespace_;
  std::string_view name;
  const LabelSet* labels = nullptr;
  const StringPool* strings = nullptr;
  std::string_view queue;
  // Distinguishes several draws for one object (the Jobs of a CronJob); "" for one draw.
  std::string_view instance;
  // metadata.generateName when the name was generated: a suggested rule matches the prefix.
  std::string_view generate_name;
};

class DurationRules {
 public:
  struct Match {
    std::optional<std::string> kind;
    std::optional<std::string> namespace_;
    std::optional<std::string> name;  // glob
    std::optional<std::string> queue;
    std::vector<std::pair<std::string, std::string>> labels;  // all must be present
  };
  struct Rule {
    Match match;
    bool long_running = false;
    std::optional<Distribution> duration;  // seconds
    std::string source;                    // "file:line"
  };

  // `durations:` (a sequence of {match, duration | long_running}); every field validated.
  static DurationRules parse(const YamlNode& list, std::uint64_t seed);

  bool empty() const { return rules_.empty(); }
  const std::vector<Rule>& rules() const { return rules_; }

  // The first matching rule's duration (kEndOfTime for long-running), drawn for `s`; nullopt
  // when no rule matches.
  std::optional<SimDuration> duration_for(const DurationSubject& s) const;
  // "file:line" of the rule that matched `s`, or "" (for messages).
  std::string matching_rule(const DurationSubject& s) const;

  // A rule, as YAML text, that would cover `s`: for the message of an object no rule covers.
  static std::string suggestion(const DurationSubject& s);

 private:
  const Rule* find(const DurationSubject& s) const;

  std::vector<Rule> rules_;
  std::uint64_t seed_ = 1;
};

}  // namespace capsim
