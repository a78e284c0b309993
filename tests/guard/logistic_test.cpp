// The probe's pieces: logistic regression and the evaluation metrics.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "guard/classification_metrics.hpp"
#include "guard/logistic.hpp"

namespace warden::guard {
namespace {

TEST(GuardLogistic, SeparatesAToySetDeterministically) {
  // Class 1 on the x > 0 side, class 0 on x < 0; y is noise shared by both.
  const std::vector<float> rows = {1.0F,  0.3F, 0.8F,  -0.2F, 0.6F,  0.5F, 0.9F,  0.0F,
                                   -1.0F, 0.3F, -0.7F, -0.4F, -0.5F, 0.1F, -0.9F, 0.2F};
  const std::vector<std::uint8_t> labels = {1, 1, 1, 1, 0, 0, 0, 0};
  const LogisticModel a = fit_logistic(rows, 2, labels, {.l2 = 0.01});
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double p = a.probability(std::span<const float>(rows).subspan(i * 2, 2));
    if (labels[i] != 0) {
      EXPECT_GT(p, 0.9) << i;
    } else {
      EXPECT_LT(p, 0.1) << i;
    }
  }
  EXPECT_GT(a.weights[0], 0.0);
  EXPECT_GT(a.weights[0], 5.0 * std::abs(a.weights[1]));
  const LogisticModel b = fit_logistic(rows, 2, labels, {.l2 = 0.01});
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.bias, b.bias);
  // Stronger regularisation shrinks the weights.
  EXPECT_LT(fit_logistic(rows, 2, labels, {.l2 = 10.0}).weights[0], a.weights[0]);
}

TEST(GuardLogistic, RejectsBadShapes) {
  const std::vector<float> rows = {1.0F, 2.0F, 3.0F};
  const std::vector<std::uint8_t> labels = {1, 0};
  EXPECT_THROW((void)fit_logistic(rows, 2, labels), Error);
  EXPECT_THROW((void)fit_logistic({}, 2, {}), Error);
  EXPECT_THROW((void)fit_logistic(std::vector<float>{1, 2, 3, 4}, 2, labels, {.l2 = 0.0}), Error);
}

TEST(GuardMetrics, ExactPrecisionRecallF1) {
  const std::vector<bool> truth = {true, true, true, false, false, false};
  const std::vector<bool> predicted = {true, true, false, true, false, false};
  const BinaryMetrics m = binary_metrics(truth, predicted);
  EXPECT_EQ(m.true_positives, 2U);
  EXPECT_EQ(m.false_negatives, 1U);
  EXPECT_EQ(m.false_positives, 1U);
  EXPECT_EQ(m.true_negatives, 2U);
  EXPECT_DOUBLE_EQ(m.precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.recall, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.f1, 2.0 / 3.0);
  // Nothing predicted: precision 0 by convention, F1 0.
  const BinaryMetrics none = binary_metrics(truth, std::vector<bool>(6, false));
  EXPECT_EQ(none.precision, 0.0);
  EXPECT_EQ(none.f1, 0.0);
}

TEST(GuardMetrics, RocAucCountsTiesAsHalf) {
  const std::vector<bool> truth = {true, false, true, false};
  EXPECT_DOUBLE_EQ(*roc_auc(std::vector<double>{0.9, 0.1, 0.8, 0.2}, truth), 1.0);
  EXPECT_DOUBLE_EQ(*roc_auc(std::vector<double>{0.1, 0.9, 0.2, 0.8}, truth), 0.0);
  // Attack 0.5 ties benign 0.5 (half), beats 0.1; attack 0.9 beats both: (1.5 + 2) / 4.
  EXPECT_DOUBLE_EQ(*roc_auc(std::vector<double>{0.5, 0.5, 0.9, 0.1}, truth), 0.875);
  EXPECT_FALSE(roc_auc(std::vector<double>{0.5, 0.6}, std::vector<bool>{true, true}).has_value());
}

}  // namespace
}  // namespace warden::guard
