// AVX-512BW byte kernels of the TextCleaner (contract in internal/kernels.h; kernels_scalar.cc is
// the reference these must match byte for byte). Same algorithms as kernels_avx2.cc on 64-byte
// registers, with comparisons producing opmasks. Every function carries LUMINAMOON_AVX512
// (common/internal/isa_dispatch.h); the dispatcher reaches them only after CPUID and XGETBV said
// the CPU and OS support the avx512 level (opmask and ZMM state saved).
#include <immintrin.h>

#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"
#include "common/internal/isa_dispatch.h"

namespace luminamoon::data::cleaner_internal {
namespace {

LUMINAMOON_AVX512 inline __m512i splat(std::uint8_t b) {
  return _mm512_set1_epi8(static_cast<char>(b));
}

// ---- clean_prefix (see kernels_avx2.cc): 64 positions at a time, as opmasks (bit k = p + k).

using Mask = __mmask64;

LUMINAMOON_AVX512 inline Mask eq(__m512i v, std::uint8_t b) {
  return _mm512_cmpeq_epi8_mask(v, splat(b));
}

LUMINAMOON_AVX512 inline Mask in_range(__m512i v, std::uint8_t lo, std::uint8_t hi) {
  return _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, splat(lo)),
                                splat(static_cast<std::uint8_t>(hi - lo)));
}

LUMINAMOON_AVX512 inline Mask special_start(__m512i a, __m512i b, __m512i c) {
  const Mask b80 = eq(b, 0x80);
  const Mask c80 = eq(c, 0x80);
  const Mask c2 = eq(a, 0xC2) & in_range(b, 0x80, 0xA0);
  const Mask e1 = eq(a, 0xE1) & eq(b, 0x9A) & c80;
  const Mask e2 =
      eq(a, 0xE2) & ((b80 & (in_range(c, 0x80, 0x8A) | eq(c, 0xAF))) | (eq(b, 0x81) & eq(c, 0x9F)));
  const Mask e3 = eq(a, 0xE3) & b80 & c80;
  return c2 | e1 | e2 | e3;
}

LUMINAMOON_AVX512 inline Mask special_lead(__m512i v) {
  return eq(v, 0xC2) | in_range(v, 0xE1, 0xE3);
}

}  // namespace

LUMINAMOON_AVX512 std::size_t clean_prefix_avx512(const std::uint8_t* data, std::size_t size) {
  std::size_t p = 0;
  const __m512i printable_offset = splat(0x21);
  const __m512i printable_span = splat(0x7E - 0x21);
  // The special-sequence check of position p + 63 loads up to p + 65; the word check of p + 64
  // (for a space at p + 63) reads p + 64..p + 66 within size. The last bytes go to the scalar code.
  for (; p + 64 + 2 <= size; p += 64) {
    const __m512i v0 = _mm512_loadu_si512(data + p);
    const Mask high = _mm512_movepi8_mask(v0);
    // Bit k: position p + k starts a word.
    Mask word =
        _mm512_cmple_epu8_mask(_mm512_sub_epi8(v0, printable_offset), printable_span) | high;
    if (high != 0) {
      const Mask lead = special_lead(v0);
      if (lead != 0) {
        const __m512i v1 = _mm512_loadu_si512(data + p + 1);
        const __m512i v2 = _mm512_loadu_si512(data + p + 2);
        word &= ~special_start(v0, v1, v2);
      }
    }
    const Mask separator = eq(v0, 0x20) | eq(v0, 0x0A);
    // Bit k: position p + k + 1 starts a word; the position after the block by the scalar rule.
    Mask next_word = word >> 1;
    if ((separator >> 63) != 0 && starts_word(data, size, p + 64)) next_word |= Mask{1} << 63;
    const Mask not_plain = ~(word | (separator & next_word));
    if (not_plain != 0) return p + static_cast<std::size_t>(__builtin_ctzll(not_plain));
  }
  return p + clean_prefix_scalar(data + p, size - p);
}

}  // namespace luminamoon::data::cleaner_internal
