// Scalar MinHash kernel: the reference every ISA-specific kernel is tested against.
#include "minhash/internal/kernels.h"

namespace luminamoon::data::minhash_internal {

void minhash_update_scalar(const std::uint64_t* hashes, std::size_t count, const std::uint64_t* a,
                           const std::uint64_t* b, std::uint32_t* mins, std::size_t num_perm) {
  for (std::size_t i = 0; i < num_perm; ++i) {
    const std::uint64_t ai = a[i];
    const std::uint64_t bi = b[i];
    std::uint32_t m = mins[i];
    for (std::size_t j = 0; j < count; ++j) {
      // Unsigned arithmetic wraps: this is exactly (a * x + b) mod 2^64.
      const auto v = static_cast<std::uint32_t>((ai * hashes[j] + bi) >> 32);
      m = v < m ? v : m;
    }
    mins[i] = m;
  }
}

}  // namespace luminamoon::data::minhash_internal
