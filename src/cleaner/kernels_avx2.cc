// AVX2 byte kernels of the TextCleaner (contract in internal/kernels.h; kernels_scalar.cc is
// the reference these must match byte for byte). Every function carries LUMINAMOON_AVX2
// (common/internal/isa_dispatch.h): this file is compiled with the default flags and only reached
// through the dispatcher after CPUID and XGETBV said the CPU and OS support AVX2. The UTF-8
// validator that used to live here is common/utf8_avx2.cc.
#include <immintrin.h>

#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"
#include "common/internal/isa_dispatch.h"

namespace luminamoon::data::cleaner_internal {
namespace {

LUMINAMOON_AVX2 inline __m256i splat(std::uint8_t b) {
  return _mm256_set1_epi8(static_cast<char>(b));
}

// ---- clean_prefix: classify 32 positions at once into bit masks (bit k = position p + k). A
// special sequence is up to three bytes long, so its check loads at offsets 0..2; a space or
// newline looks at the next position, which is the word mask shifted by one.

// 0xFF where lo <= v <= hi (unsigned).
LUMINAMOON_AVX2 inline __m256i in_range(__m256i v, std::uint8_t lo, std::uint8_t hi) {
  const __m256i shifted = _mm256_sub_epi8(v, splat(lo));
  return _mm256_cmpeq_epi8(_mm256_min_epu8(shifted, splat(static_cast<std::uint8_t>(hi - lo))),
                           shifted);
}

LUMINAMOON_AVX2 inline __m256i eq(__m256i v, std::uint8_t b) {
  return _mm256_cmpeq_epi8(v, splat(b));
}

// 0xFF where 0x21 <= v <= 0x7E.
LUMINAMOON_AVX2 inline __m256i printable(__m256i v) {
  return _mm256_andnot_si256(eq(v, 0x7F), _mm256_cmpgt_epi8(v, splat(0x20)));
}

// 0xFF where a special sequence starts at a (b, c: the next two bytes of each position).
LUMINAMOON_AVX2 inline __m256i special_start(__m256i a, __m256i b, __m256i c) {
  const __m256i b80 = eq(b, 0x80);
  const __m256i c80 = eq(c, 0x80);
  const __m256i c2 = _mm256_and_si256(eq(a, 0xC2), in_range(b, 0x80, 0xA0));
  const __m256i e1 = _mm256_and_si256(eq(a, 0xE1), _mm256_and_si256(eq(b, 0x9A), c80));
  const __m256i e2_80 =
      _mm256_and_si256(b80, _mm256_or_si256(in_range(c, 0x80, 0x8A), eq(c, 0xAF)));
  const __m256i e2_81 = _mm256_and_si256(eq(b, 0x81), eq(c, 0x9F));
  const __m256i e2 = _mm256_and_si256(eq(a, 0xE2), _mm256_or_si256(e2_80, e2_81));
  const __m256i e3 = _mm256_and_si256(eq(a, 0xE3), _mm256_and_si256(b80, c80));
  return _mm256_or_si256(_mm256_or_si256(c2, e1), _mm256_or_si256(e2, e3));
}

// 0xFF where v is C2, E1, E2 or E3: the only bytes a special sequence starts with.
LUMINAMOON_AVX2 inline __m256i special_lead(__m256i v) {
  return _mm256_or_si256(eq(v, 0xC2), in_range(v, 0xE1, 0xE3));
}

}  // namespace

LUMINAMOON_AVX2 std::size_t clean_prefix_avx2(const std::uint8_t* data, std::size_t size) {
  std::size_t p = 0;
  // The special-sequence check of position p + 31 loads up to p + 33; the word check of p + 32
  // (for a space at p + 31) reads p + 32..p + 34 within size. The last bytes go to the scalar code.
  for (; p + 32 + 2 <= size; p += 32) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p));
    const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(v0));
    // Bit k: position p + k starts a word.
    auto word = static_cast<std::uint32_t>(_mm256_movemask_epi8(printable(v0))) | high;
    if (high != 0 && _mm256_movemask_epi8(special_lead(v0)) != 0) {
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p + 1));
      const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p + 2));
      word &= ~static_cast<std::uint32_t>(_mm256_movemask_epi8(special_start(v0, v1, v2)));
    }
    const auto separator = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_or_si256(eq(v0, 0x20), eq(v0, 0x0A))));
    // Bit k: position p + k + 1 starts a word; the position after the block by the scalar rule.
    std::uint32_t next_word = word >> 1;
    if ((separator >> 31) != 0 && starts_word(data, size, p + 32)) next_word |= 1u << 31;
    const std::uint32_t not_plain = ~(word | (separator & next_word));
    if (not_plain != 0) return p + static_cast<std::size_t>(__builtin_ctz(not_plain));
  }
  return p + clean_prefix_scalar(data + p, size - p);
}

}  // namespace luminamoon::data::cleaner_internal
