#include "guard/logistic.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::guard {

namespace {

double sigmoid(double z) noexcept {
  // Split by sign so that exp never overflows.
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// log(1 + exp(z)), stable for large |z|.
double softplus(double z) noexcept {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

// theta = (w, b): the objective sum_i softplus(z_i) - y_i z_i + l2/2 |w|^2.
double objective(std::span<const float> rows, std::size_t dim, std::span<const std::uint8_t> labels,
                 const std::vector<double>& theta, double l2) {
  double loss = 0.0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    double z = theta[dim];
    for (std::size_t j = 0; j < dim; ++j) z += theta[j] * static_cast<double>(rows[i * dim + j]);
    loss += softplus(z) - (labels[i] != 0 ? z : 0.0);
  }
  double norm = 0.0;
  for (std::size_t j = 0; j < dim; ++j) norm += theta[j] * theta[j];
  return loss + 0.5 * l2 * norm;
}

// Solves H x = g in place (H symmetric positive definite, m x m, row-major) by Cholesky.
// Returns false when H is not positive definite (cannot happen with l2 > 0 but for the
// bias, which gets a tiny ridge for exactly that reason).
bool cholesky_solve(std::vector<double>& h, std::vector<double>& g, std::size_t m) {
  for (std::size_t j = 0; j < m; ++j) {
    double d = h[j * m + j];
    for (std::size_t k = 0; k < j; ++k) d -= h[j * m + k] * h[j * m + k];
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    h[j * m + j] = d;
    for (std::size_t i = j + 1; i < m; ++i) {
      double s = h[i * m + j];
      for (std::size_t k = 0; k < j; ++k) s -= h[i * m + k] * h[j * m + k];
      h[i * m + j] = s / d;
    }
  }
  for (std::size_t i = 0; i < m; ++i) {  // L y = g
    double s = g[i];
    for (std::size_t k = 0; k < i; ++k) s -= h[i * m + k] * g[k];
    g[i] = s / h[i * m + i];
  }
  for (std::size_t i = m; i-- > 0;) {  // L^T x = y
    double s = g[i];
    for (std::size_t k = i + 1; k < m; ++k) s -= h[k * m + i] * g[k];
    g[i] = s / h[i * m + i];
  }
  return true;
}

}  // namespace

double LogisticModel::probability(std::span<const float> x) const noexcept {
  double z = bias;
  for (std::size_t j = 0; j < weights.size() && j < x.size(); ++j)
    z += weights[j] * static_cast<double>(x[j]);
  return sigmoid(z);
}

LogisticModel fit_logistic(std::span<const float> rows, std::size_t dim, std::span<const std::uint8_t> labels,
                           const LogisticOptions& options) {
  const std::size_t n = labels.size();
  if (dim == 0 || n == 0 || rows.size() != n * dim) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("logistic regression: {} values for {} rows of {} dimensions", rows.size(), n, dim));
  }
  if (!(options.l2 > 0.0))
    throw Error(ErrorKind::InvalidArgument, "logistic regression: l2 must be positive");
  const std::size_t m = dim + 1;  // weights, then the bias
  std::vector<double> theta(m, 0.0);
  double current = objective(rows, dim, labels, theta, options.l2);
  std::vector<double> grad(m), hess(m * m), x(m);
  for (int iter = 0; iter < options.max_iterations; ++iter) {
    std::fill(grad.begin(), grad.end(), 0.0);
    std::fill(hess.begin(), hess.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const float* r = rows.data() + i * dim;
      double z = theta[dim];
      for (std::size_t j = 0; j < dim; ++j) z += theta[j] * static_cast<double>(r[j]);
      const double p = sigmoid(z);
      const double residual = p - (labels[i] != 0 ? 1.0 : 0.0);
      const double w = p * (1.0 - p);
      for (std::size_t j = 0; j < dim; ++j) x[j] = static_cast<double>(r[j]);
      x[dim] = 1.0;
      for (std::size_t a = 0; a < m; ++a) {
        grad[a] += residual * x[a];
        const double wa = w * x[a];
        if (wa == 0.0) continue;
        double* hrow = hess.data() + a * m;
        for (std::size_t b = 0; b <= a; ++b) hrow[b] += wa * x[b];  // lower triangle only
      }
    }
    for (std::size_t j = 0; j < dim; ++j) {
      grad[j] += options.l2 * theta[j];
      hess[j * m + j] += options.l2;
    }
    hess[dim * m + dim] += 1e-9;  // the unpenalised bias: keep H definite on separable data
    for (std::size_t a = 0; a < m; ++a) {
      for (std::size_t b = a + 1; b < m; ++b) hess[a * m + b] = hess[b * m + a];
    }
    std::vector<double> step = grad;
    if (!cholesky_solve(hess, step, m)) {
      throw Error(ErrorKind::Internal, "logistic regression: the Hessian is not positive definite");
    }
    // Newton with step halving: the objective is convex, so a shorter step along the Newton
    // direction always improves it eventually; stop when it no longer does measurably.
    double t = 1.0;
    std::vector<double> next(m);
    double value = current;
    bool improved = false;
    for (int halving = 0; halving < 30; ++halving, t *= 0.5) {
      for (std::size_t a = 0; a < m; ++a) next[a] = theta[a] - t * step[a];
      value = objective(rows, dim, labels, next, options.l2);
      if (value < current) {
        improved = true;
        break;
      }
    }
    if (!improved) break;
    const double gain = current - value;
    theta.swap(next);
    current = value;
    if (gain <= options.tolerance * std::max(1.0, std::abs(current))) break;
  }
  LogisticModel model;
  model.weights.assign(theta.begin(), theta.begin() + static_cast<std::ptrdiff_t>(dim));
  model.bias = theta[dim];
  return model;
}

}  // namespace warden::guard
