// LSH shape selection: the weighted false-positive/false-negative integrals, by composite Simpson
// over powers computed by repeated squaring (no libm, so the fallback reproduces every bit).
#include "luminamoon/data/minhash/lsh_shape.h"

#include <array>
#include <cmath>
#include <initializer_list>
#include <mutex>

namespace luminamoon::data {
namespace {

// x^k by squaring, in the order the fallback uses.
double power(double x, std::uint32_t k) {
  double result = 1.0;
  while (k != 0) {
    if ((k & 1U) != 0) result *= x;
    x *= x;
    k >>= 1U;
  }
  return result;
}

double false_positive_density(double s, LshShape shape) {
  return 1.0 - power(1.0 - power(s, shape.rows), shape.bands);
}

double false_negative_density(double s, LshShape shape) {
  return power(1.0 - power(s, shape.rows), shape.bands);
}

template <typename F>
double simpson(F f, double lo, double hi) {
  const int n = kShapeIntegrationSteps;
  const double h = (hi - lo) / n;
  double sum = f(lo) + f(hi);
  for (int i = 1; i < n; ++i) {
    const double weight = (i % 2 == 1) ? 4.0 : 2.0;
    sum += weight * f(lo + i * h);
  }
  return sum * h / 3.0;
}

}  // namespace

double lsh_candidate_probability(double p, LshShape shape) {
  return false_positive_density(p, shape);
}

namespace {

LshShape search_lsh_shape(double threshold, std::uint32_t num_perm) {
  LshShape best{1, num_perm};
  double best_error = 0.0;
  bool have = false;
  for (std::uint32_t bands = 1; bands <= num_perm; ++bands) {
    for (std::uint32_t rows = 1; rows <= num_perm / bands; ++rows) {
      const LshShape shape{bands, rows};
      const double fp =
          simpson([&](double s) { return false_positive_density(s, shape); }, 0.0, threshold);
      const double fn =
          simpson([&](double s) { return false_negative_density(s, shape); }, threshold, 1.0);
      const double error = kFalsePositiveWeight * fp + kFalseNegativeWeight * fn;
      if (!have || error < best_error) {
        best = shape;
        best_error = error;
        have = true;
      }
    }
  }
  return best;
}

}  // namespace

LshShape optimal_lsh_shape(double threshold, std::uint32_t num_perm) {
  // The search integrates ~p log p shapes (0.2 ms at 64 permutations): a deduplicator made per
  // batch would pay it each time. The last few answers are kept (a pure function of its inputs).
  struct Entry {
    double threshold = -1.0;
    std::uint32_t num_perm = 0;
    LshShape shape;
  };
  static std::mutex mutex;
  static std::array<Entry, 8> recent;
  static std::size_t next = 0;
  {
    std::lock_guard lock(mutex);
    for (const Entry& e : recent) {
      if (e.num_perm == num_perm && e.threshold == threshold) return e.shape;
    }
  }
  const LshShape shape = search_lsh_shape(threshold, num_perm);
  std::lock_guard lock(mutex);
  recent[next] = Entry{threshold, num_perm, shape};
  next = (next + 1) % recent.size();
  return shape;
}

std::uint32_t lsh_value_bits(std::uint32_t rows, bool store_signatures) {
  if (store_signatures) return 32;
  for (const std::uint32_t bits : {4U, 8U, 16U}) {
    if (bits * rows >= 32) return bits;
  }
  return 32;
}

std::uint32_t lsh_min_matches(double threshold, std::uint32_t num_perm, std::uint32_t bits) {
  const double chance = bits >= 32 ? 0.0 : 1.0 / static_cast<double>(std::uint64_t{1} << bits);
  const double needed =
      std::ceil(static_cast<double>(num_perm) * (threshold * (1.0 - chance) + chance));
  if (needed <= 0.0) return 0;
  if (needed >= static_cast<double>(num_perm)) return num_perm;
  return static_cast<std::uint32_t>(needed);
}

}  // namespace luminamoon::data
