// LSH banding of MinHash signatures: how many bands of how many rows, how many bits of each
// signature value the index keeps, and how many equal values verify a candidate.
//
// All of it is plain IEEE double and integer arithmetic written the same way in the fallback
// (fallbacks/minhash.py), so both backends pick the same shape for the same threshold.
#pragma once

#include <cstdint>

namespace luminamoon::data {

struct LshShape {
  std::uint32_t bands = 0;
  std::uint32_t rows = 0;

  friend bool operator==(const LshShape&, const LshShape&) = default;
};

// Weights of the two error integrals minimised by optimal_lsh_shape. False negatives weigh more:
// a banding false positive is verified against the signature estimate and costs only time, a
// false negative is a near-duplicate lost for good.
inline constexpr double kFalsePositiveWeight = 0.3;
inline constexpr double kFalseNegativeWeight = 0.7;
// Composite Simpson intervals of each integral.
inline constexpr int kShapeIntegrationSteps = 64;

// Candidate probability of a pair whose signature values agree with probability p.
double lsh_candidate_probability(double p, LshShape shape);

// The (bands, rows) with bands * rows <= num_perm minimising
//   kFalsePositiveWeight * Int_0^t P(s) ds + kFalseNegativeWeight * Int_t^1 (1 - P(s)) ds,
// P(s) = 1 - (1 - s^rows)^bands; ties keep the smaller bands, then the smaller rows.
// threshold in (0, 1], num_perm >= 1.
LshShape optimal_lsh_shape(double threshold, std::uint32_t num_perm);

// Bits of every signature value the index stores and bands on: 32 when full signatures are
// stored, else the smallest of 4, 8, 16, 32 with bits * rows >= 32 (so that one band of two
// unrelated documents matches with probability <= 2^-32).
std::uint32_t lsh_value_bits(std::uint32_t rows, bool store_signatures);

// Equal values out of num_perm needed to call a candidate a duplicate: the smallest m with
// (m / num_perm - C) / (1 - C) >= threshold, C = 2^-bits the chance that the low `bits` of two
// different minima agree (C = 0 for 32 bits). Computed as ceil(num_perm * (t * (1 - C) + C)).
std::uint32_t lsh_min_matches(double threshold, std::uint32_t num_perm, std::uint32_t bits);

}  // namespace luminamoon::data
