// Scalar MinHash kernel: the reference every ISA-specific kernel is tested against.
#include "minhash/internal/kernels.h"
#include "minhash/internal/shingle_hash.h"

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

void minhash_update_words_chunked(MinHashUpdateFn update, const char* text,
                                  const std::size_t* starts, std::size_t count, std::size_t ngram,
                                  const std::uint64_t* a, const std::uint64_t* b,
                                  std::uint32_t* mins, std::size_t num_perm) {
  constexpr std::size_t kChunk = 64;
  std::uint64_t hashes[kChunk];
  for (std::size_t done = 0; done < count; done += kChunk) {
    const std::size_t n = count - done < kChunk ? count - done : kChunk;
    for (std::size_t k = done; k < done + n; ++k) {
      hashes[k - done] = shingle_hash(text + starts[k], starts[k + ngram] - 1 - starts[k]);
    }
    update(hashes, n, a, b, mins, num_perm);
  }
}

void minhash_update_words_scalar(const char* text, const std::size_t* starts, std::size_t count,
                                 std::size_t ngram, const std::uint64_t* a, const std::uint64_t* b,
                                 std::uint32_t* mins, std::size_t num_perm) {
  minhash_update_words_chunked(minhash_update_scalar, text, starts, count, ngram, a, b, mins,
                               num_perm);
}

}  // namespace luminamoon::data::minhash_internal
