#include "reports/statistics.hpp"

#include <cmath>
#include <limits>

namespace capsim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The continued fraction of I_x(a, b) (valid and fast for x < (a + 1) / (a + b + 2)), evaluated
// with the modified Lentz method:
//   I_x(a,b) = x^a (1-x)^b / (a B(a,b)) x 1 / (1 + d1 / (1 + d2 / (1 + ...)))
//   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),  d(2m) = m(b-m) x / ((a+2m-1)(a+2m))
double beta_continued_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= 10000; ++m) {
    const double dm = m;
    // Even step.
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    // Odd step.
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double step = d * c;
    f *= step;
    if (std::fabs(step - 1.0) < kEps) break;
  }
  return f;
}

}  // namespace

double incomplete_beta(double x, double a, double b) {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1)) return kNaN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  // x^a (1-x)^b / B(a, b), in logs.
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  // Use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(x, a, b) / a;
  return 1.0 - front * beta_continued_fraction(1 - x, b, a) / b;
}

double student_t_cdf(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return kNaN;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2)
  const double tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0) || !(p < 1) || !(df > 0)) return kNaN;
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // Bracket, then bisect: the CDF is monotone, so this always converges.
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12)
    hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * (1 + hi); ++i) {
    const double mid = 0.5 * (lo + hi);
    if (student_t_cdf(mid, df) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

MeanCi mean_ci95(std::span<const double> values) {
  MeanCi r;
  r.n = static_cast<int>(values.size());
  if (r.n == 0) {
    r.mean = kNaN;
    return r;
  }
  double sum = 0;
  for (double v : values)
    sum += v;
  r.mean = sum / r.n;
  if (r.n < 2) return r;
  double ss = 0;
  for (double v : values)
    ss += (v - r.mean) * (v - r.mean);
  r.stddev = std::sqrt(ss / (r.n - 1));
  r.half_width =
      student_t_quantile(0.975, r.n - 1) * r.stddev / std::sqrt(static_cast<double>(r.n));
  return r;
}

DifferenceCi welch_ci95(const MeanCi& a, const MeanCi& b) {
  DifferenceCi d;
  d.difference = b.mean - a.mean;
  if (a.n < 2 || b.n < 2) {
    d.half_width = kNaN;
    d.df = kNaN;
    return d;
  }
  const double va = a.stddev * a.stddev / a.n;
  const double vb = b.stddev * b.stddev / b.n;
  const double se2 = va + vb;
  if (se2 == 0) {
    d.half_width = 0;
    d.df = a.n + b.n - 2;
    return d;
  }
  // Welch-Satterthwaite degrees of freedom.
  d.df = se2 * se2 / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
  d.half_width = student_t_quantile(0.975, d.df) * std::sqrt(se2);
  return d;
}

}  // namespace capsim
