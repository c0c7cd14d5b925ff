// The AVX2-level kernels of decode_utf8 for the Latin-1 and UCS-2 widths (contract in
// internal/utf8_decode_kernels.h; the portable kernels in utf8_decode.cc are the reference). Every
// function carries LUMINAMOON_AVX2: this file is compiled with the default flags and reached only
// through the dispatcher.
//
// Text whose characters are all below U+0100 holds ASCII bytes and 2-byte characters whose lead
// is C2 or C3. The portable kernel copies a block of ASCII with one store and decodes the
// characters after its ASCII run one by one, then starts its next block after them: on text with
// an accent every few dozen bytes (French, German, Spanish) most blocks hold one, and each paid a
// restart (CPython's decoder was 4% faster there, docs/benchmarks.md session 27). Here a block of
// 16 bytes with 2-byte characters is decoded as a whole: a continuation byte after C3 gains 0x40
// (C2 xx is U+00xx for xx in 80..BF, C3 xx is U+00xx + 0x40), and one PSHUFB per 8 bytes packs
// the bytes that are not leads; a character may straddle two blocks (its continuation byte looks
// at the block before). Every block advances 16 bytes, so no load waits on the block before.
//
// UCS-2 text (Cyrillic, Greek, CJK, or English with curly quotes) holds characters of one, two
// and three bytes. A block of 16 bytes is read three times, from its first, second and third
// byte, each widened to 16-bit lanes: lane j then sees the character that would start at byte j
// whole (its continuation bytes are at most two lanes on), and its unit is computed in every lane
// for all three lengths at once, the lead byte choosing. The lanes of bytes that start a character
// (those that are not 0x80..0xBF) are packed with one PSHUFB per 8 lanes. A character that begins
// in a block is decoded there, from bytes of the next block, and the next block's lanes for its
// continuation bytes write nothing: every block advances 16 bytes.
#include <emmintrin.h>
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "common/internal/isa_dispatch.h"
#include "common/internal/shuffle_table.h"
#include "common/internal/utf8_decode_kernels.h"

namespace luminamoon::data::internal {
namespace {

// For each mask m of 8 units of `unit` bytes to keep (bit k: unit k), the PSHUFB indices that
// put their bytes first; length: units kept.
constexpr ShuffleTable make_keep_table(unsigned unit) {
  ShuffleTable t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned n = 0;  // bytes placed
    for (unsigned k = 0; k < 8; ++k) {
      if (((m >> k) & 1) == 0) continue;
      for (unsigned b = 0; b < unit; ++b)
        t.shuffle[m][n++] = static_cast<std::uint8_t>(unit * k + b);
    }
    t.length[m] = static_cast<std::uint8_t>(n / unit);
    for (; n < 16; ++n) t.shuffle[m][n] = 0x80;
  }
  return t;
}

constexpr ShuffleTable kKeep = make_keep_table(1);       // bytes (Latin-1)
constexpr ShuffleTable kKeepLanes = make_keep_table(2);  // 16-bit lanes (UCS-2)

// The first `length` bytes of `v` whose bit is set in `keep` (8 bits), stored at `out` (8 bytes
// written); returns how many.
LUMINAMOON_AVX2 inline std::size_t store_kept(__m128i v, unsigned keep, std::uint8_t* out) {
  const __m128i shuffle =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kKeep.shuffle[keep].data()));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(v, shuffle));
  return kKeep.length[keep];
}

// The 16 bytes `v` (`last`: the 16 before them) as Latin-1 units at `out`: leads (the bytes from
// 0xC0 up) write nothing, and a continuation byte after C3, which may be the last byte of
// `last`, gains 0x40. Writes 16 bytes, returns how many are meant.
LUMINAMOON_AVX2 inline std::size_t decode_block(__m128i v, __m128i last, std::uint8_t* out) {
  const __m128i leads = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(-0x40)), v);  // 0xC0
  const auto keep = ~static_cast<unsigned>(_mm_movemask_epi8(leads)) & 0xFFFFu;
  const __m128i before = _mm_alignr_epi8(v, last, 15);  // byte j: the byte before byte j
  const __m128i after_c3 = _mm_cmpeq_epi8(before, _mm_set1_epi8(-0x3D));  // 0xC3
  const __m128i units = _mm_add_epi8(v, _mm_and_si128(after_c3, _mm_set1_epi8(0x40)));
  const std::size_t low = store_kept(units, keep & 0xFF, out);
  return low + store_kept(_mm_srli_si128(units, 8), keep >> 8, out + low);
}

// The 8 lanes of `v` whose bit is set in `keep` (8 bits), first, stored at `out` (8 units
// written); returns how many.
LUMINAMOON_AVX2 inline std::size_t store_kept_lanes(__m128i v, unsigned keep, std::uint16_t* out) {
  const __m128i shuffle =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kKeepLanes.shuffle[keep].data()));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(v, shuffle));
  return kKeepLanes.length[keep];
}

// The characters that start in the 16 bytes at p (18 readable) as UCS-2 units at `out`. Writes 16
// units, returns how many are meant.
LUMINAMOON_AVX2 inline std::size_t decode_ucs2_block(const std::uint8_t* p, std::uint16_t* out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m256i b0 = _mm256_cvtepu8_epi16(v);
  const __m256i b1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1)));
  const __m256i b2 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2)));
  const __m256i low6 = _mm256_set1_epi16(0x3F);
  const __m256i c1 = _mm256_and_si256(b1, low6);
  // 110xxxxx 10yyyyyy -> xxxxxyyyyyy; 1110xxxx 10yyyyyy 10zzzzzz -> xxxxyyyyyyzzzzzz (the lead's
  // top bits leave the 16-bit lane when shifted by 12)
  const __m256i two =
      _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(b0, _mm256_set1_epi16(0x1F)), 6), c1);
  const __m256i three =
      _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi16(b0, 12), _mm256_slli_epi16(c1, 6)),
                      _mm256_and_si256(b2, low6));
  const __m256i lead3 = _mm256_cmpgt_epi16(b0, _mm256_set1_epi16(0xDF));
  const __m256i ascii = _mm256_cmpgt_epi16(_mm256_set1_epi16(0x80), b0);
  const __m256i units = _mm256_blendv_epi8(_mm256_blendv_epi8(two, three, lead3), b0, ascii);
  // Lanes of bytes that start a character: all but 0x80..0xBF (the signed bytes below -64).
  const auto keep =
      ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(-0x40)))) & 0xFFFFu;
  const std::size_t low = store_kept_lanes(_mm256_castsi256_si128(units), keep & 0xFF, out);
  return low + store_kept_lanes(_mm256_extracti128_si256(units, 1), keep >> 8, out + low);
}

}  // namespace

LUMINAMOON_AVX2 void decode_latin1_avx2(const std::uint8_t* p, std::size_t n, std::uint8_t* out,
                                        std::size_t capacity) {
  std::size_t i = 0;
  std::size_t k = 0;
  __m128i last = _mm_setzero_si128();  // the block before (its last byte may be a lead)
  // Valid text of this width has one continuation byte per character that is not ASCII: its
  // bytes less its code points. With one in every 128 bytes or more, whether a block is all
  // ASCII is a coin toss that a branch mispredicts, and the portable kernel's restart after each
  // such character costs more: every block takes the vector path, with no branch on its bytes
  // (French-like text, an accent every ~25 bytes: 5.4-5.6 against 2.4 GB/s). Sparser text
  // (most Latin-1 documents of the real corpus: an accent in a name) is the portable kernel's
  // case: blocks of ASCII with a predicted branch, a rare restart.
  if (!utf8_decode::continuation_in_every(n, capacity, 128)) {
    decode_latin1_portable(p, n, out, capacity);
    return;
  }
  // (k + 16 <= capacity: a block writes at most 16 units, its two 8-byte stores included. Every
  // block advances 16 bytes: no load waits on the masks of the block before.)
  for (; i + 16 <= n && k + 16 <= capacity; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    k += decode_block(v, last, out + k);
    last = v;
  }
  // A lead that ended the last block wrote nothing: its character is decoded from it below.
  if (i != 0 && p[i - 1] >= 0xC0) --i;
  utf8_decode::units_one_by_one(p, n, i, out, k, capacity);
}

LUMINAMOON_AVX2 void decode_ucs2_avx2(const std::uint8_t* p, std::size_t n, std::uint16_t* out,
                                      std::size_t capacity) {
  // Text with a continuation byte (its bytes less its code points) in every kUcs2Avx2VectorBytes
  // bytes or more takes the vector blocks; sparser text (English with a curly quote or a dash in
  // a paragraph) is the portable kernel's: blocks of ASCII with a predicted branch, a rare
  // restart.
  if (!utf8_decode::continuation_in_every(n, capacity, utf8_decode::kUcs2Avx2VectorBytes)) {
    decode_ucs2_portable(p, n, out, capacity);
    return;
  }
  std::size_t i = 0;
  std::size_t k = 0;
  // (i + 18 <= n: a block reads 2 bytes past its 16; k + 16 <= capacity: it writes 16 units)
  for (; i + 18 <= n && k + 16 <= capacity; i += 16) k += decode_ucs2_block(p + i, out + k);
  utf8_decode::after_blocks(p, n, i, out, k, capacity);
}

}  // namespace luminamoon::data::internal
