// AVX-512 MinHash kernel (contract in internal/kernels.h; kernels_scalar.cc is the reference).
// Every function carries LUMINAMOON_AVX512 (common/internal/isa_dispatch.h; the avx512 level
// includes DQ, for VPMULLQ): this file is compiled with the default flags and only reached through
// the dispatcher after the CPU and OS were probed for that level.
//
// Eight permutations per register: VPMULLQ + VPADDQ give (a * x + b) mod 2^64 exactly, and
// VPMINUQ keeps the minimum of the full 64-bit values; since hi32 is monotone, the high half of
// that minimum is the minimum of the high halves. The running minimum enters as (m << 32) | ~0u.
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "minhash/internal/kernels.h"
#include "minhash/internal/shingle_hash.h"

namespace luminamoon::data::minhash_internal {
namespace {

constexpr std::size_t kLanes = 8;  // permutations per register
// Masked forms with every lane on: GCC 12's unmasked ones trip -Wmaybe-uninitialized (GCC bug
// 105593).
constexpr __mmask8 kAll = 0xFF;

// R registers of 8 permutations hold the whole state (R <= 8: 24 of the 32 registers) while the
// loops of one call run (update: shingle j's hash is hash_at(j)).
template <std::size_t R>
struct Minima {
  __m512i va[R];
  __m512i vb[R];
  __m512i vm[R];

  LUMINAMOON_AVX512 [[gnu::always_inline]] inline void load(const std::uint64_t* a,
                                                            const std::uint64_t* b,
                                                            const std::uint32_t* mins) {
    const __m512i low_ones = _mm512_set1_epi64(0xFFFFFFFFLL);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      va[r] = _mm512_loadu_si512(a + kLanes * r);
      vb[r] = _mm512_loadu_si512(b + kLanes * r);
      const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mins + kLanes * r));
      vm[r] = _mm512_or_si512(
          _mm512_maskz_slli_epi64(kAll, _mm512_maskz_cvtepu32_epi64(kAll, m), 32), low_ones);
    }
  }

  template <class HashAt>
  LUMINAMOON_AVX512 [[gnu::always_inline]] inline void update(HashAt hash_at, std::size_t count) {
    for (std::size_t j = 0; j < count; ++j) {
      const __m512i x = _mm512_set1_epi64(static_cast<long long>(hash_at(j)));
#pragma GCC unroll 8
      for (std::size_t r = 0; r < R; ++r) {
        vm[r] = _mm512_maskz_min_epu64(kAll, vm[r],
                                       _mm512_add_epi64(_mm512_mullo_epi64(va[r], x), vb[r]));
      }
    }
  }

  LUMINAMOON_AVX512 [[gnu::always_inline]] inline void store(std::uint32_t* mins) const {
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(mins + kLanes * r),
          _mm512_maskz_cvtepi64_epi32(kAll, _mm512_maskz_srli_epi64(kAll, vm[r], 32)));
    }
  }
};

template <std::size_t R>
LUMINAMOON_AVX512 inline void update_block(const std::uint64_t* hashes, std::size_t count,
                                           const std::uint64_t* a, const std::uint64_t* b,
                                           std::uint32_t* mins) {
  Minima<R> m;
  m.load(a, b, mins);
  m.update([hashes](std::size_t j) { return hashes[j]; }, count);
  m.store(mins);
}

// The shingles of one length class in a part of update_words_block: starts and lengths, appended
// 8 candidates at a time (the arrays have room for a last full store past kPart).
struct LengthClass {
  static constexpr std::size_t kPart = 256;
  alignas(64) std::uint64_t start[kPart + 8];
  alignas(64) std::uint64_t length[kPart + 8];
  std::size_t size = 0;

  LUMINAMOON_AVX512 [[gnu::always_inline]] inline void append(__mmask8 take, __m512i starts,
                                                              __m512i lengths) {
    _mm512_storeu_si512(start + size, _mm512_maskz_compress_epi64(take, starts));
    _mm512_storeu_si512(length + size, _mm512_maskz_compress_epi64(take, lengths));
    size += static_cast<std::size_t>(__builtin_popcount(take));
  }
};

// update_block with each shingle hashed in the loop (kernels.h, MinHashUpdateWordsFn), so every
// shingle is hashed once and its scalar hashing overlaps the vector multiplies. XXH3 takes one
// path for 17-32 bytes, another for 33-64, and on real text which comes next is a coin toss (two
// thirds of word 5-grams are 17-32 bytes, most of the rest 33-64); so the shingles of each part
// of 256 are first sorted into those two classes and the rest, 8 at a time (VPCOMPRESSQ), and
// each class runs its own loop. The minima do not depend on the order.
template <std::size_t R>
LUMINAMOON_AVX512 inline void update_words_block(const char* text, const std::size_t* starts,
                                                 std::size_t count, std::size_t ngram,
                                                 const std::uint64_t* a, const std::uint64_t* b,
                                                 std::uint32_t* mins) {
  Minima<R> m;
  m.load(a, b, mins);
  LengthClass two;
  LengthClass four;
  LengthClass other;
  const __m512i ones = _mm512_set1_epi64(1);
  const __m512i c17 = _mm512_set1_epi64(17);
  const __m512i c33 = _mm512_set1_epi64(33);
  const __m512i c16 = _mm512_set1_epi64(16);
  const __m512i c32 = _mm512_set1_epi64(32);
  for (std::size_t done = 0; done < count; done += LengthClass::kPart) {
    const std::size_t n = count - done < LengthClass::kPart ? count - done : LengthClass::kPart;
    const std::size_t* s = starts + done;
    two.size = four.size = other.size = 0;
    for (std::size_t k = 0; k < n; k += 8) {
      const __mmask8 live =
          n - k >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1U << (n - k)) - 1);
      const __m512i begin = _mm512_maskz_loadu_epi64(live, s + k);
      const __m512i end = _mm512_maskz_loadu_epi64(live, s + k + ngram);
      const __m512i len = _mm512_sub_epi64(_mm512_sub_epi64(end, begin), ones);
      const __mmask8 is2 = _mm512_mask_cmplt_epu64_mask(live, _mm512_sub_epi64(len, c17), c16);
      const __mmask8 is4 = _mm512_mask_cmplt_epu64_mask(live, _mm512_sub_epi64(len, c33), c32);
      two.append(is2, begin, len);
      four.append(is4, begin, len);
      other.append(static_cast<__mmask8>(live & ~(is2 | is4)), begin, len);
    }
    const auto hash_two = [text, &two](std::size_t i) {
      return shingle_hash_17to32(text + two.start[i], two.length[i]);
    };
    const auto hash_four = [text, &four](std::size_t i) {
      return shingle_hash_33to64(text + four.start[i], four.length[i]);
    };
    const auto hash_other = [text, &other](std::size_t i) {
      return shingle_hash(text + other.start[i], other.length[i]);
    };
    m.update(hash_two, two.size);
    m.update(hash_four, four.size);
    m.update(hash_other, other.size);
  }
  m.store(mins);
}

}  // namespace

LUMINAMOON_AVX512 void minhash_update_words_avx512(const char* text, const std::size_t* starts,
                                                   std::size_t count, std::size_t ngram,
                                                   const std::uint64_t* a, const std::uint64_t* b,
                                                   std::uint32_t* mins, std::size_t num_perm) {
  switch (num_perm) {
    case 64:
      return update_words_block<8>(text, starts, count, ngram, a, b, mins);
    case 32:
      return update_words_block<4>(text, starts, count, ngram, a, b, mins);
    case 16:
      return update_words_block<2>(text, starts, count, ngram, a, b, mins);
    case 8:
      return update_words_block<1>(text, starts, count, ngram, a, b, mins);
    default:
      return minhash_update_words_chunked(minhash_update_avx512, text, starts, count, ngram, a, b,
                                          mins, num_perm);
  }
}

LUMINAMOON_AVX512 void minhash_update_avx512(const std::uint64_t* hashes, std::size_t count,
                                             const std::uint64_t* a, const std::uint64_t* b,
                                             std::uint32_t* mins, std::size_t num_perm) {
  std::size_t i = 0;
  for (; i + 8 * kLanes <= num_perm; i += 8 * kLanes) {
    update_block<8>(hashes, count, a + i, b + i, mins + i);
  }
  for (; i + 2 * kLanes <= num_perm; i += 2 * kLanes) {
    update_block<2>(hashes, count, a + i, b + i, mins + i);
  }
  for (; i + kLanes <= num_perm; i += kLanes)
    update_block<1>(hashes, count, a + i, b + i, mins + i);
  if (i < num_perm) {
    // Fewer than 8 permutations left: pad to a full register (padding lanes use a = b = 0).
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

}  // namespace luminamoon::data::minhash_internal
