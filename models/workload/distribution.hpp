// Random distributions for synthetic workloads, described in YAML and sampled from a
// RandomStream. Forms: a plain value; {fixed: v}; {uniform: [a, b]}; {exponential: {mean: m}};
// {lognormal: {median: m, sigma: s}}; {normal: {mean: m, stddev: s}}; {beta: {a: a, b: b}};
// {choice: {value: weight, ...}}; each optionally clamped with min/max. Values are read by a
// caller-supplied reader, so one parser serves durations, counts, fractions and quantities.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "sim/random.hpp"

namespace capsim {

class Distribution {
 public:
  enum class Kind { kFixed, kUniform, kExponential, kLognormal, kNormal, kBeta, kChoice };

  static Distribution fixed(double v);
  // Parses any of the forms above; `read_value` turns a scalar node into a number (e.g. seconds).
  static Distribution parse(const YamlNode& node,
                            const std::function<double(const YamlNode&)>& read_value);

  double sample(RandomStream& rng) const;
  double mean_estimate() const;  // exact where closed-form, for docs and checks
  Kind kind() const { return kind_; }

 private:
  Kind kind_ = Kind::kFixed;
  double a_ = 0, b_ = 0;
  double min_ = -1e300, max_ = 1e300;
  std::vector<double> values_, weights_;
};

}  // namespace capsim
