#include "luminamoon/data/minhash/lsh_shape.h"

#include <gtest/gtest.h>

#include <cmath>

namespace luminamoon::data {
namespace {

TEST(LshShape, OptimalShapes) {
  // Pinned (tests/test_minhash.py pins the same values on both backends).
  EXPECT_EQ(optimal_lsh_shape(0.8, 64), (LshShape{7, 9}));
  EXPECT_EQ(optimal_lsh_shape(0.5, 64), (LshShape{16, 4}));
  EXPECT_EQ(optimal_lsh_shape(0.9, 64), (LshShape{4, 16}));
  EXPECT_EQ(optimal_lsh_shape(0.8, 128), (LshShape{11, 11}));
  EXPECT_EQ(optimal_lsh_shape(0.7, 256), (LshShape{28, 9}));
  EXPECT_EQ(optimal_lsh_shape(1.0, 64), (LshShape{1, 64}));
  EXPECT_EQ(optimal_lsh_shape(0.05, 16), (LshShape{16, 1}));
}

TEST(LshShape, ShapesNeverExceedNumPerm) {
  for (std::uint32_t p : {1U, 2U, 5U, 17U, 64U}) {
    for (double t : {0.1, 0.5, 0.8, 0.95, 1.0}) {
      const LshShape s = optimal_lsh_shape(t, p);
      EXPECT_GE(s.bands, 1U);
      EXPECT_GE(s.rows, 1U);
      EXPECT_LE(s.bands * s.rows, p);
    }
  }
}

TEST(LshShape, CandidateProbabilityIsTheSCurve) {
  EXPECT_DOUBLE_EQ(lsh_candidate_probability(1.0, {7, 9}), 1.0);
  EXPECT_DOUBLE_EQ(lsh_candidate_probability(0.0, {7, 9}), 0.0);
  EXPECT_NEAR(lsh_candidate_probability(0.9, {7, 9}), 1.0 - std::pow(1.0 - std::pow(0.9, 9), 7),
              1e-12);
}

TEST(LshShape, ValueBits) {
  EXPECT_EQ(lsh_value_bits(9, false), 4U);
  EXPECT_EQ(lsh_value_bits(8, false), 4U);
  EXPECT_EQ(lsh_value_bits(7, false), 8U);
  EXPECT_EQ(lsh_value_bits(4, false), 8U);
  EXPECT_EQ(lsh_value_bits(3, false), 16U);
  EXPECT_EQ(lsh_value_bits(2, false), 16U);
  EXPECT_EQ(lsh_value_bits(1, false), 32U);
  EXPECT_EQ(lsh_value_bits(9, true), 32U);
}

TEST(LshShape, MinMatches) {
  EXPECT_EQ(lsh_min_matches(0.8, 64, 4), 52U);
  EXPECT_EQ(lsh_min_matches(0.8, 64, 32), 52U);
  EXPECT_EQ(lsh_min_matches(0.75, 64, 32), 48U);
  EXPECT_EQ(lsh_min_matches(0.5, 64, 8), 33U);
  EXPECT_EQ(lsh_min_matches(1.0, 64, 4), 64U);
}

}  // namespace
}  // namespace luminamoon::data
