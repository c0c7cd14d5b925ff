// AVX2 MinHash kernel (contract in internal/kernels.h; kernels_scalar.cc is the reference). Every
// function carries LUMINAMOON_AVX2 (common/internal/isa_dispatch.h): this file is compiled with
// the default flags and only reached through the dispatcher after CPUID and XGETBV said the CPU
// and OS support AVX2.
//
// AVX2 has no 64-bit lane multiply, but only bits 32..63 of a * x + b are needed:
//   hi32(a * x + b) = hi32(a_lo * x_lo + b) + a_lo * x_hi + a_hi * x_lo   (mod 2^32)
// VPMULUDQ gives a_lo * x_lo exactly, one VPMULLD gives both cross products (against x with its
// halves swapped), and 32-bit lane adds keep the cross terms out of the low halves. The minimum
// is taken with VPMINUD on the high 32-bit halves; the low halves carry nothing.
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "minhash/internal/kernels.h"

namespace luminamoon::data::minhash_internal {
namespace {

constexpr std::size_t kLanes = 4;  // permutations per register

// R registers of 4 permutations each.
template <std::size_t R>
LUMINAMOON_AVX2 inline void update_block(const std::uint64_t* hashes, std::size_t count,
                                         const std::uint64_t* a, const std::uint64_t* b,
                                         std::uint32_t* mins) {
  __m256i va[R];
  __m256i vb[R];
  __m256i vm[R];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) {
    va[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + kLanes * r));
    vb[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kLanes * r));
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mins + kLanes * r));
    vm[r] = _mm256_slli_epi64(_mm256_cvtepu32_epi64(m), 32);  // minimum in the high half
  }
  for (std::size_t j = 0; j < count; ++j) {
    const std::uint64_t h = hashes[j];
    const __m256i x = _mm256_set1_epi64x(static_cast<long long>(h));
    const __m256i xs = _mm256_set1_epi64x(static_cast<long long>((h << 32) | (h >> 32)));
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const __m256i low = _mm256_add_epi64(_mm256_mul_epu32(va[r], x), vb[r]);
      const __m256i cross = _mm256_mullo_epi32(va[r], xs);  // [a_lo*x_hi, a_hi*x_lo]
      const __m256i sum = _mm256_add_epi32(cross, _mm256_slli_epi64(cross, 32));
      vm[r] = _mm256_min_epu32(vm[r], _mm256_add_epi32(low, sum));
    }
  }
  const __m256i odd = _mm256_setr_epi32(1, 3, 5, 7, 0, 0, 0, 0);
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) {
    const __m256i packed = _mm256_permutevar8x32_epi32(vm[r], odd);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mins + kLanes * r), _mm256_castsi256_si128(packed));
  }
}

}  // namespace

LUMINAMOON_AVX2 void minhash_update_avx2(const std::uint64_t* hashes, std::size_t count,
                                         const std::uint64_t* a, const std::uint64_t* b,
                                         std::uint32_t* mins, std::size_t num_perm) {
  std::size_t i = 0;
  for (; i + 4 * kLanes <= num_perm; i += 4 * kLanes) {
    update_block<4>(hashes, count, a + i, b + i, mins + i);
  }
  for (; i + kLanes <= num_perm; i += kLanes)
    update_block<1>(hashes, count, a + i, b + i, mins + i);
  if (i < num_perm) {
    // Fewer than 4 permutations left: pad to a full register. The padding lanes compute
    // throw-away values from a = b = 0.
    std::uint64_t pa[kLanes] = {};
    std::uint64_t pb[kLanes] = {};
    std::uint32_t pm[kLanes] = {};
    const std::size_t left = num_perm - i;
    for (std::size_t k = 0; k < left; ++k) {
      pa[k] = a[i + k];
      pb[k] = b[i + k];
      pm[k] = mins[i + k];
    }
    update_block<1>(hashes, count, pa, pb, pm);
    for (std::size_t k = 0; k < left; ++k) mins[i + k] = pm[k];
  }
}

// AVX2 has 16 vector registers: the 64-permutation state does not stay in registers across the
// hashes, so shingles are hashed in chunks first.
void minhash_update_words_avx2(const char* text, const std::size_t* starts, std::size_t count,
                               std::size_t ngram, const std::uint64_t* a, const std::uint64_t* b,
                               std::uint32_t* mins, std::size_t num_perm) {
  minhash_update_words_chunked(minhash_update_avx2, text, starts, count, ngram, a, b, mins,
                               num_perm);
}

}  // namespace luminamoon::data::minhash_internal
