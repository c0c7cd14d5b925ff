// The avx512-level UCS-2 kernel of decode_utf8 for CPUs with AVX512_VBMI2 (contract in
// internal/utf8_decode_kernels.h; the portable kernel in utf8_decode.cc is the reference). Every
// function carries LUMINAMOON_AVX512_VBMI2: this file is compiled with the default flags and
// reached only through the dispatcher, which checks the extension (avx512_extensions()).
//
// The AVX2 kernel's blocks (utf8_decode_avx2.cc) twice as wide: 32 bytes read from their first,
// second and third byte into 32 16-bit lanes, each lane's unit computed for all three lengths
// with the lead byte choosing, and the lanes of bytes that start a character packed by one
// VPCOMPRESSW into a register (its form that stores to memory is microcoded on Zen 4), then
// stored whole.
#include <immintrin.h>

#include <bit>
#include <cstdint>

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8_decode_kernels.h"

namespace luminamoon::data::internal {
namespace {

// The characters that start in the 32 bytes at p (34 readable) as UCS-2 units at `out`. Writes 32
// units, returns how many are meant.
LUMINAMOON_AVX512_VBMI2 inline std::size_t decode_ucs2_block(const std::uint8_t* p,
                                                             std::uint16_t* out) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m512i b0 = _mm512_cvtepu8_epi16(v);
  const __m512i b1 =
      _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1)));
  const __m512i b2 =
      _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)));
  const __m512i low6 = _mm512_set1_epi16(0x3F);
  const __m512i c1 = _mm512_and_si512(b1, low6);
  const __m512i two =
      _mm512_or_si512(_mm512_slli_epi16(_mm512_and_si512(b0, _mm512_set1_epi16(0x1F)), 6), c1);
  const __m512i three =
      _mm512_or_si512(_mm512_or_si512(_mm512_slli_epi16(b0, 12), _mm512_slli_epi16(c1, 6)),
                      _mm512_and_si512(b2, low6));
  const __mmask32 lead3 = _mm512_cmpgt_epu16_mask(b0, _mm512_set1_epi16(0xDF));
  const __mmask32 ascii = _mm512_cmplt_epu16_mask(b0, _mm512_set1_epi16(0x80));
  const __m512i units =
      _mm512_mask_blend_epi16(ascii, _mm512_mask_blend_epi16(lead3, two, three), b0);
  // Lanes of bytes that start a character: all but 0x80..0xBF (the signed bytes below -64).
  const __mmask32 keep = ~_mm256_cmplt_epi8_mask(v, _mm256_set1_epi8(-0x40));
  _mm512_storeu_si512(out, _mm512_maskz_compress_epi16(keep, units));
  return static_cast<std::size_t>(std::popcount(static_cast<std::uint32_t>(keep)));
}

}  // namespace

LUMINAMOON_AVX512_VBMI2 void decode_ucs2_avx512_vbmi2(const std::uint8_t* p, std::size_t n,
                                                      std::uint16_t* out, std::size_t capacity) {
  // Which text takes the vector blocks: as decode_ucs2_avx2, these blocks winning on sparser text.
  if (!utf8_decode::continuation_in_every(n, capacity, utf8_decode::kUcs2Vbmi2VectorBytes)) {
    decode_ucs2_portable(p, n, out, capacity);
    return;
  }
  std::size_t i = 0;
  std::size_t k = 0;
  // (i + 34 <= n: a block reads 2 bytes past its 32; k + 32 <= capacity: it writes 32 units)
  for (; i + 34 <= n && k + 32 <= capacity; i += 32) k += decode_ucs2_block(p + i, out + k);
  utf8_decode::after_blocks(p, n, i, out, k, capacity);
}

}  // namespace luminamoon::data::internal
