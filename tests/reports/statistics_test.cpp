// Student t quantiles computed from the incomplete beta function match the published table, and
// the confidence intervals built on them carry the textbook arithmetic.
#include "reports/statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace capsim;

TEST_CASE("Student t quantiles match the standard table") {
  struct Case {
    double p, df, want;  // two-sided 95 % is p = 0.975
  };
  const Case cases[] = {
      {0.975, 1, 12.7062}, {0.975, 2, 4.3027},  {0.975, 4, 2.7764},   {0.975, 9, 2.2622},
      {0.975, 10, 2.2281}, {0.975, 30, 2.0423}, {0.975, 100, 1.9840}, {0.975, 1e6, 1.95997},
      {0.95, 4, 2.1318},   {0.995, 4, 4.6041},  {0.9995, 1, 636.619}, {0.975, 5, 2.5706},
      {0.975, 20, 2.0860},
  };
  for (const Case& c : cases) {
    CAPTURE(c.p);
    CAPTURE(c.df);
    CHECK(student_t_quantile(c.p, c.df) == doctest::Approx(c.want).epsilon(2e-5));
    CHECK(student_t_quantile(1 - c.p, c.df) == doctest::Approx(-c.want).epsilon(2e-5));
    CHECK(student_t_cdf(student_t_quantile(c.p, c.df), c.df) == doctest::Approx(c.p));
  }
  CHECK(student_t_quantile(0.5, 3) == 0);
  CHECK(std::isnan(student_t_quantile(1.0, 3)));
  CHECK(std::isnan(student_t_quantile(0.5, 0)));
}

TEST_CASE("the incomplete beta function has its closed forms") {
  // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b
  CHECK(incomplete_beta(0.3, 1, 1) == doctest::Approx(0.3));
  CHECK(incomplete_beta(0.7, 3, 1) == doctest::Approx(0.343));
  CHECK(incomplete_beta(0.2, 1, 4) == doctest::Approx(1 - 0.4096));
  CHECK(incomplete_beta(0, 2, 3) == 0);
  CHECK(incomplete_beta(1, 2, 3) == 1);
}

TEST_CASE("a mean's 95 % interval is t(0.975, n-1) x s / sqrt(n)") {
  const std::vector<double> v = {1, 2, 3, 4, 5};
  const MeanCi m = mean_ci95(v);
  CHECK(m.n == 5);
  CHECK(m.mean == doctest::Approx(3));
  // s = sqrt(10 / 4) = 1.58114; half width = 2.77645 x 1.58114 / sqrt(5) = 1.96324
  CHECK(m.stddev == doctest::Approx(1.58114).epsilon(1e-5));
  CHECK(m.half_width == doctest::Approx(1.96324).epsilon(1e-5));
  CHECK(m.low() == doctest::Approx(3 - 1.96324).epsilon(1e-5));

  const std::vector<double> one = {7};
  CHECK(mean_ci95(one).half_width == 0);
  CHECK(std::isnan(mean_ci95(std::vector<double>{}).mean));
}

TEST_CASE("Welch's interval for a difference uses the Satterthwaite degrees of freedom") {
  const std::vector<double> a = {10, 12, 11, 13, 9};       // mean 11, var 2.5
  const std::vector<double> b = {20, 24, 22, 26, 18, 22};  // mean 22, var 8
  const DifferenceCi d = welch_ci95(mean_ci95(a), mean_ci95(b));
  CHECK(d.difference == doctest::Approx(11));
  // se^2 = 2.5/5 + 8/6 = 1.83333; df = se^4 / (0.5^2/4 + 1.33333^2/5) = 3.36111 / 0.41806
  //      = 8.0399
  CHECK(d.df == doctest::Approx(8.0399).epsilon(1e-4));
  CHECK(d.half_width ==
        doctest::Approx(student_t_quantile(0.975, d.df) * std::sqrt(1.833333)).epsilon(1e-5));
  const std::vector<double> lone = {3};
  CHECK(std::isnan(welch_ci95(mean_ci95(lone), mean_ci95(b)).half_width));
}
