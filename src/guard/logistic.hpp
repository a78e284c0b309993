#pragma once
// L2-regularised logistic regression, fitted by Newton's method (a Cholesky solve per step,
// with step halving): for a few hundred rows of a few hundred dimensions that is a few
// milliseconds to tens of milliseconds, and the result is deterministic (no random
// initialisation, no data-order dependence beyond summation order).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace warden::guard {

struct LogisticModel {
  std::vector<double> weights;
  double bias = 0.0;

  // P(label = 1 | x); x.size() must equal weights.size().
  [[nodiscard]] double probability(std::span<const float> x) const noexcept;
};

struct LogisticOptions {
  double l2 = 1.0;           // penalty (l2 / 2) * |w|^2 on the summed log-loss; the bias is not penalised
  int max_iterations = 100;  // Newton steps
  double tolerance = 1e-10;  // stop when the objective improves by less than this (relative)
};

// rows: n x dim, row-major; labels: n values of 0/1. Error(InvalidArgument) when the
// shapes disagree, n is 0, dim is 0 or l2 <= 0.
LogisticModel fit_logistic(std::span<const float> rows, std::size_t dim, std::span<const std::uint8_t> labels,
                           const LogisticOptions& options = {});

}  // namespace warden::guard
