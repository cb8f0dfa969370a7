// Small statistics for comparing runs over seeds: mean, sample standard deviation, Student's t
// quantiles (computed here from the regularized incomplete beta function, so no table limits the
// degrees of freedom) and the 95 % confidence interval of a mean and of a difference of means
// (Welch). Pure functions; no state.
#pragma once

#include <span>

namespace capsim {

struct MeanCi {
  int n = 0;
  double mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1); 0 when n < 2
  double half_width = 0;  // of the 95 % CI: t(0.975, n-1) x stddev / sqrt(n); 0 when n < 2
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
};

// Regularized incomplete beta I_x(a, b), a, b > 0, x in [0, 1].
double incomplete_beta(double x, double a, double b);
// P(T <= t) for Student's t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);
// The p-quantile (0 < p < 1) of Student's t with `df` > 0 degrees of freedom.
double student_t_quantile(double p, double df);

// Mean and 95 % CI of `values` (NaNs must be filtered out by the caller). Empty: n = 0, mean NaN.
MeanCi mean_ci95(std::span<const double> values);

// Welch's 95 % CI for mean(b) - mean(a). half_width is NaN when either side has fewer than 2
// values (no variance estimate).
struct DifferenceCi {
  double difference = 0;
  double half_width = 0;
  double df = 0;
};
DifferenceCi welch_ci95(const MeanCi& a, const MeanCi& b);

}  // namespace capsim
