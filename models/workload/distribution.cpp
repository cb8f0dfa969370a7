#include "models/workload/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace capsim {

Distribution Distribution::fixed(double v) {
  Distribution d;
  d.kind_ = Kind::kFixed;
  d.a_ = v;
  return d;
}

Distribution Distribution::parse(const YamlNode& node,
                                 const std::function<double(const YamlNode&)>& read_value) {
  if (node.is_scalar()) return fixed(read_value(node));
  MapReader m = node.map();
  Distribution d;
  int forms = 0;
  if (auto v = m.opt("fixed")) {
    d.kind_ = Kind::kFixed;
    d.a_ = read_value(*v);
    ++forms;
  }
  if (auto v = m.opt("uniform")) {
    auto items = v->seq();
    if (items.size() != 2) v->fail("uniform needs a list of two values: [low, high]");
    d.kind_ = Kind::kUniform;
    d.a_ = read_value(items[0]);
    d.b_ = read_value(items[1]);
    if (d.b_ < d.a_) v->fail("uniform's high value is below its low value");
    ++forms;
  }
  if (auto v = m.opt("exponential")) {
    MapReader e = v->map();
    d.kind_ = Kind::kExponential;
    d.a_ = read_value(e.req("mean"));
    if (d.a_ <= 0) v->fail("the mean must be positive");
    e.finish();
    ++forms;
  }
  if (auto v = m.opt("lognormal")) {
    MapReader e = v->map();
    d.kind_ = Kind::kLognormal;
    const double median = read_value(e.req("median"));
    if (median <= 0) v->fail("the median must be positive");
    d.a_ = std::log(median);
    d.b_ = e.req("sigma").number(0, 10);
    e.finish();
    ++forms;
  }
  if (auto v = m.opt("normal")) {
    MapReader e = v->map();
    d.kind_ = Kind::kNormal;
    d.a_ = read_value(e.req("mean"));
    d.b_ = read_value(e.req("stddev"));
    if (d.b_ < 0) v->fail("the standard deviation must not be negative");
    e.finish();
    ++forms;
  }
  if (auto v = m.opt("beta")) {
    MapReader e = v->map();
    d.kind_ = Kind::kBeta;
    d.a_ = e.req("a").number(1e-6, 1e6);
    d.b_ = e.req("b").number(1e-6, 1e6);
    e.finish();
    ++forms;
  }
  if (auto v = m.opt("choice")) {
    d.kind_ = Kind::kChoice;
    for (const auto& [k, w] : v->entries()) {
      YamlNode key = YamlNode::load_string(k, v->file());
      d.values_.push_back(read_value(w.child(key.raw(), k)));
      d.weights_.push_back(w.number(0, 1e12));
    }
    double total = 0;
    for (double w : d.weights_)
      total += w;
    if (d.values_.empty() || total <= 0)
      v->fail("choice needs at least one value with a positive weight");
    ++forms;
  }
  if (auto v = m.opt("min")) d.min_ = read_value(*v);
  if (auto v = m.opt("max")) d.max_ = read_value(*v);
  m.finish();
  if (forms != 1) {
    node.fail("give exactly one of fixed, uniform, exponential, lognormal, normal, beta or choice");
  }
  if (d.min_ > d.max_) node.fail("min is above max");
  return d;
}

double Distribution::sample(RandomStream& rng) const {
  double v = 0;
  switch (kind_) {
    case Kind::kFixed:
      v = a_;
      break;
    case Kind::kUniform:
      v = rng.uniform(a_, b_);
      break;
    case Kind::kExponential:
      v = rng.exponential(1.0 / a_);
      break;
    case Kind::kLognormal:
      v = rng.lognormal(a_, b_);
      break;
    case Kind::kNormal:
      v = rng.normal(a_, b_);
      break;
    case Kind::kBeta:
      v = rng.beta(a_, b_);
      break;
    case Kind::kChoice:
      v = values_[rng.discrete(weights_)];
      break;
  }
  return std::clamp(v, min_, max_);
}

double Distribution::mean_estimate() const {
  switch (kind_) {
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      return (a_ + b_) / 2;
    case Kind::kExponential:
      return a_;
    case Kind::kLognormal:
      return std::exp(a_ + b_ * b_ / 2);
    case Kind::kNormal:
      return a_;
    case Kind::kBeta:
      return a_ / (a_ + b_);
    case Kind::kChoice: {
      double s = 0, w = 0;
      for (std::size_t i = 0; i < values_.size(); ++i) {
        s += values_[i] * weights_[i];
        w += weights_[i];
      }
      return s / w;
    }
  }
  return 0;
}

}  // namespace capsim
