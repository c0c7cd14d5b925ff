// AVX2-level kernels of encode_utf8 for Latin-1, UCS-2 and UTF-32 (contract in
// internal/utf8_encode_kernels.h; the portable kernel in utf8_encode.cc is the reference). Every
// function carries LUMINAMOON_AVX2: this file is compiled with the default flags and reached only
// through the dispatcher, after CPUID and XGETBV said the CPU and OS support AVX2.
//
// Runs of ASCII go 32 units a step (a UCS-2 kernel enters them after a block of 16 that was all
// ASCII, so text with no ASCII run pays nothing for them). Besides narrowing ASCII blocks, these
// encode 8 units that are all below U+0800 (ASCII, Latin, Greek, Cyrillic, Hebrew, Arabic...)
// without a branch per unit: each 16-bit lane is made into its 2-byte form (or keeps its ASCII
// byte), and one PSHUFB packs the bytes that belong, picked from a table by the 8-bit mask of ASCII
// lanes. 8 UCS-2 units with 3-byte ones among them (CJK, but also dashes, quotes and box drawing in
// Latin text) take 32-bit lanes and a PSHUFB per 4. The portable kernel took a misprediction or two
// per non-ASCII character; on text like the real corpus's (96.5% ASCII, accents here and there)
// most blocks with one were paying it.
#include <immintrin.h>

#include <array>
#include <bit>
#include <cstdint>

#include "common/internal/isa_dispatch.h"
#include "common/internal/shuffle_table.h"
#include "common/internal/utf8_encode_kernels.h"

namespace luminamoon::data::internal {
namespace {

using utf8_encode::units_one_by_one;

// For each mask m of ASCII lanes among 8 lanes (bit k: lane k is ASCII), the PSHUFB indices that
// keep byte 2k of every lane and byte 2k + 1 of the lanes that are not ASCII.
constexpr ShuffleTable make_pack_table() {
  ShuffleTable t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned n = 0;
    for (unsigned k = 0; k < 8; ++k) {
      t.shuffle[m][n++] = static_cast<std::uint8_t>(2 * k);
      if (((m >> k) & 1) == 0) t.shuffle[m][n++] = static_cast<std::uint8_t>(2 * k + 1);
    }
    t.length[m] = static_cast<std::uint8_t>(n);
    for (; n < 16; ++n) t.shuffle[m][n] = 0x80;
  }
  return t;
}

constexpr ShuffleTable kPack = make_pack_table();

// For 4 code points in 32-bit lanes, each written as its UTF-8 bytes from the lane's low byte
// up: key bit k set when lane k is one byte long, bit k + 4 when it is at most two (so a lane is
// 1, 2 or 3 bytes long); the PSHUFB indices that keep those bytes in order, and their count.
constexpr ShuffleTable make_bmp_table() {
  ShuffleTable t{};
  for (unsigned key = 0; key < 256; ++key) {
    unsigned n = 0;
    for (unsigned k = 0; k < 4; ++k) {
      const bool one = ((key >> k) & 1) != 0;
      const bool two = ((key >> (k + 4)) & 1) != 0;
      const unsigned length = one ? 1 : two ? 2 : 3;
      for (unsigned b = 0; b < length; ++b)
        t.shuffle[key][n++] = static_cast<std::uint8_t>(4 * k + b);
    }
    t.length[key] = static_cast<std::uint8_t>(n);
    for (; n < 16; ++n) t.shuffle[key][n] = 0x80;
  }
  return t;
}

constexpr ShuffleTable kBmp = make_bmp_table();

// 8 units in 16-bit lanes, all below 0x800, as UTF-8 at `out` (16 bytes stored, the first ones
// meant); returns how many are meant.
LUMINAMOON_AVX2 inline std::size_t below_0800(__m128i v, char* out) {
  const __m128i ascii = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(-0x80)),  // 0xFF80
                                        _mm_setzero_si128());
  const auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(ascii, ascii))) & 0xFFu;
  // 110xxxxx in the low byte (v >> 6 is below 0x20), 10xxxxxx in the high one.
  const __m128i lead = _mm_or_si128(_mm_srli_epi16(v, 6), _mm_set1_epi16(0x00C0));
  const __m128i trail = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x3F)), 8),
                                     _mm_set1_epi16(-0x8000));  // 0x8000
  const __m128i bytes = _mm_blendv_epi8(_mm_or_si128(lead, trail), v, ascii);
  const __m128i shuffle =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kPack.shuffle[m].data()));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(bytes, shuffle));
  return kPack.length[m];
}

// 8 units in 16-bit lanes, none a surrogate (any may be 3 bytes long: CJK, dashes, quotes), as
// UTF-8 at `out`: two stores of 16 bytes, the second at most 12 bytes past `out`, so 28 bytes of
// room; returns how many are meant (at most 24). Each 32-bit lane holds one unit's bytes from
// its low byte up (its 1-, 2- and 3-byte forms made side by side and picked by two compares),
// and each 128-bit half packs its 4 lanes with one PSHUFB.
LUMINAMOON_AVX2 inline std::size_t basic_plane(__m128i v, char* out) {
  const __m256i c = _mm256_cvtepu16_epi32(v);
  const __m256i low6 =
      _mm256_or_si256(_mm256_and_si256(c, _mm256_set1_epi32(0x3F)), _mm256_set1_epi32(0x80));
  const __m256i mid6 = _mm256_or_si256(
      _mm256_and_si256(_mm256_srli_epi32(c, 6), _mm256_set1_epi32(0x3F)), _mm256_set1_epi32(0x80));
  const __m256i three =
      _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32(c, 12), _mm256_set1_epi32(0xE0)),
                      _mm256_or_si256(_mm256_slli_epi32(mid6, 8), _mm256_slli_epi32(low6, 16)));
  const __m256i two =
      _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32(c, 6), _mm256_set1_epi32(0xC0)),
                      _mm256_slli_epi32(low6, 8));
  const __m256i one = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x80), c);     // c < 0x80
  const __m256i upto2 = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x800), c);  // c < 0x800
  const __m256i bytes = _mm256_blendv_epi8(_mm256_blendv_epi8(three, two, upto2), c, one);
  const auto ones = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(one)));
  const auto twos = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(upto2)));
  const unsigned low_key = (ones & 0xF) | ((twos & 0xF) << 4);
  const unsigned high_key = (ones >> 4) | ((twos >> 4) << 4);
  const __m256i shuffle = _mm256_setr_m128i(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kBmp.shuffle[low_key].data())),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kBmp.shuffle[high_key].data())));
  const __m256i packed = _mm256_shuffle_epi8(bytes, shuffle);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
  const std::size_t first = kBmp.length[low_key];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + first), _mm256_extracti128_si256(packed, 1));
  return first + kBmp.length[high_key];
}

// The 8 units v, units [at, at + 8) of `in`, at `out`: vector code when all are below U+0800, or
// none is a surrogate; unit by unit otherwise (a lone surrogate, which is reported). Needs 28
// bytes of room (basic_plane).
// (`in` holds units of type Unit: a UTF-32 block below U+10000 comes here narrowed to 16 bits,
// and its surrogates are encoded from the UTF-32 units.)
template <typename Unit = std::uint16_t>
LUMINAMOON_AVX2 inline char* ucs2_half(const unsigned char* in, __m128i v, std::size_t at,
                                       char* out, Utf8Encoded& result) {
  const __m128i above_7ff = _mm_set1_epi16(-0x800);  // 0xF800
  if (_mm_testz_si128(v, above_7ff)) return out + below_0800(v, out);
  const __m128i surrogate = _mm_set1_epi16(-0x2800);  // 0xD800: the top 5 bits of every one
  const __m128i surrogates = _mm_cmpeq_epi16(_mm_and_si128(v, above_7ff), surrogate);
  if (_mm_testz_si128(surrogates, surrogates)) return out + basic_plane(v, out);
  return units_one_by_one<Unit>(in, at, at + 8, out, result);
}

// 16 Latin-1 units with at least one that is not ASCII (or none: the caller's test may have
// been on 32), as UTF-8 at `out`; needs 32 bytes of room.
LUMINAMOON_AVX2 inline char* latin1_block(__m128i v, char* out) {
  if (_mm_movemask_epi8(v) == 0) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
    return out + 16;
  }
  const __m128i zero = _mm_setzero_si128();
  out += below_0800(_mm_unpacklo_epi8(v, zero), out);
  return out + below_0800(_mm_unpackhi_epi8(v, zero), out);
}

// 16 UCS-2 units [at, at + 16) of `in`, in a and b, as UTF-8 at `out`; needs the room of 18
// units (see the note on room below). (Unit: as for ucs2_half.)
template <typename Unit = std::uint16_t>
LUMINAMOON_AVX2 inline char* ucs2_block(const unsigned char* in, __m128i a, __m128i b,
                                        std::size_t at, char* out, Utf8Encoded& result) {
  const __m128i both = _mm_or_si128(a, b);
  if (_mm_testz_si128(both, _mm_set1_epi16(-0x80))) {  // 0xFF80
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(a, b));
    return out + 16;
  }
  // Both halves below U+0800 (Latin, Cyrillic, Greek... with ASCII): one test for the two.
  if (_mm_testz_si128(both, _mm_set1_epi16(-0x800))) {  // 0xF800
    out += below_0800(a, out);
    return out + below_0800(b, out);
  }
  out = ucs2_half<Unit>(in, a, at, out, result);
  return ucs2_half<Unit>(in, b, at + 8, out, result);
}

// The 8 UTF-32 units from `unit` on.
LUMINAMOON_AVX2 inline __m256i load_utf32(const unsigned char* in, std::size_t unit) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 4 * unit));
}

// Bit k set when 32-bit lane k of v is below 0x80.
LUMINAMOON_AVX2 inline unsigned ascii_lanes(__m256i v) {
  const __m256i high = _mm256_and_si256(v, _mm256_set1_epi32(-0x80));  // 0xFFFFFF80
  return static_cast<unsigned>(
      _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(high, _mm256_setzero_si256()))));
}

// 32 UTF-32 units of ASCII (each 32-bit lane below 0x80) from c0..c3 as 32 bytes at `out`.
LUMINAMOON_AVX2 inline void store_ascii_utf32(__m256i c0, __m256i c1, __m256i c2, __m256i c3,
                                              char* out) {
  // The packs work within 128-bit halves: the low half ends up with units 0-3 of c0, c1, c2 and
  // c3, the high half with their units 4-7, as groups of 4 bytes; one permutation orders them.
  const __m256i bytes =
      _mm256_packus_epi16(_mm256_packus_epi32(c0, c1), _mm256_packus_epi32(c2, c3));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permutevar8x32_epi32(bytes, order));
}

}  // namespace

// Room: at unit i the output has at least 2 (Latin-1) or 3 (UCS-2) bytes a unit left, since no
// unit written took more: 32 for a Latin-1 block of 16, whose stores write 16 bytes at most 16
// bytes past the last one; a UCS-2 block's second half has 24 bytes for its 8 units and 6 for
// the 2 units the loop leaves after it, 30 of the 28 that basic_plane may write. A step of 32
// stores 32 bytes for its 32 units or is two such blocks, the second one 18 units from the end.
LUMINAMOON_AVX2 Utf8Encoded encode_latin1_avx2(const unsigned char* in, std::size_t count,
                                               char* out) {
  Utf8Encoded result;  // (Latin-1 holds no surrogate)
  char* o = out;
  std::size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    __builtin_prefetch(in + i + 1024);
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    if (_mm256_movemask_epi8(v) == 0) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), v);
      o += 32;
      continue;
    }
    o = latin1_block(_mm256_castsi256_si128(v), o);
    o = latin1_block(_mm256_extracti128_si256(v, 1), o);
  }
  for (; i + 16 <= count; i += 16) {
    o = latin1_block(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)), o);
  }
  o = units_one_by_one<std::uint8_t>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

LUMINAMOON_AVX2 Utf8Encoded encode_ucs2_avx2(const unsigned char* in, std::size_t count,
                                             char* out) {
  Utf8Encoded result;
  char* o = out;
  std::size_t i = 0;
  while (i + 18 <= count) {
    __builtin_prefetch(in + 2 * i + 1024);
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i + 16));
    o = ucs2_block(in, a, b, i, o, result);
    i += 16;
    // After a block of ASCII, likely more: 32 units a step (one test, one pack, one store) until
    // a step holds another unit, which the blocks of 16 take on from.
    if (_mm_testz_si128(_mm_or_si128(a, b), _mm_set1_epi16(-0x80))) {  // 0xFF80
      for (; i + 34 <= count; i += 32, o += 32) {
        __builtin_prefetch(in + 2 * i + 1024);
        const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i));
        const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i + 32));
        if (!_mm256_testz_si256(_mm256_or_si256(c, d), _mm256_set1_epi16(-0x80))) break;
        // packus interleaves the 128-bit halves (c low, d low, c high, d high): put them in order.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(c, d), 0xD8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), packed);
      }
    }
  }
  o = units_one_by_one<std::uint16_t>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

// UTF-32 (CPython's kind for text with a character above U+FFFF: one emoji makes the whole
// document 4 bytes a character) in blocks of 16: a block below U+10000 is narrowed to 16-bit
// lanes and encoded as UCS-2 is (ASCII, below U+0800, the basic plane; its surrogates unit by
// unit, reported); a block with a unit above U+FFFF (the emoji, or a value that is no code point)
// keeps its ASCII prefix and goes on unit by unit as the portable kernel does. After an all-ASCII
// block, runs of ASCII go 32 units a step. Room: a unit
// never takes more than its 4 bytes of capacity, so 16 units from i have 64 bytes, more than
// ucs2_block's stores need.
LUMINAMOON_AVX2 Utf8Encoded encode_utf32_avx2(const unsigned char* in, std::size_t count,
                                              char* out) {
  Utf8Encoded result;
  char* o = out;
  std::size_t i = 0;
  while (i + 16 <= count) {
    __builtin_prefetch(in + 4 * i + 1024);
    const __m256i a = load_utf32(in, i);
    const __m256i b = load_utf32(in, i + 8);
    const __m256i both = _mm256_or_si256(a, b);
    // The 16 units in 16-bit lanes, exact below U+10000. (packus interleaves the halves: a0-3,
    // b0-3, a4-7, b4-7; put a's 8 units before b's.)
    const __m256i narrowed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    if (!_mm256_testz_si256(both, _mm256_set1_epi32(-0x10000))) {  // 0xFFFF0000: above U+FFFF
      // As the portable kernel does: the ASCII units before the first other one from a store of
      // the block's bytes (exact for those), then the wider units one by one: the rest of the
      // block when it holds another ASCII unit after them, else their whole run.
      const __m128i bytes =
          _mm_packus_epi16(_mm256_castsi256_si128(narrowed), _mm256_extracti128_si256(narrowed, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), bytes);
      const unsigned wide = ~(ascii_lanes(a) | (ascii_lanes(b) << 8)) & 0xFFFFu;
      const auto ascii = static_cast<std::size_t>(std::countr_zero(wide));
      const std::size_t block_end = i + 16;
      o += ascii;
      i += ascii;
      if ((wide >> ascii) > 1) {
        o = units_one_by_one<std::uint32_t>(in, i, block_end, o, result);
        i = block_end;
      } else {
        do {
          o = units_one_by_one<std::uint32_t>(in, i, i + 1, o, result);
          ++i;
        } while (i < count && utf8_encode::unit_at<std::uint32_t>(in, i) >= 0x80);
      }
      continue;
    }
    o = ucs2_block<std::uint32_t>(in, _mm256_castsi256_si128(narrowed),
                                  _mm256_extracti128_si256(narrowed, 1), i, o, result);
    i += 16;
    if (_mm256_testz_si256(both, _mm256_set1_epi32(-0x80))) {  // 0xFFFFFF80: all ASCII
      for (; i + 32 <= count; i += 32, o += 32) {
        __builtin_prefetch(in + 4 * i + 1024);
        const __m256i c0 = load_utf32(in, i);
        const __m256i c1 = load_utf32(in, i + 8);
        const __m256i c2 = load_utf32(in, i + 16);
        const __m256i c3 = load_utf32(in, i + 24);
        const __m256i all = _mm256_or_si256(_mm256_or_si256(c0, c1), _mm256_or_si256(c2, c3));
        if (!_mm256_testz_si256(all, _mm256_set1_epi32(-0x80))) break;
        store_ascii_utf32(c0, c1, c2, c3, o);
      }
    }
  }
  o = units_one_by_one<std::uint32_t>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

}  // namespace luminamoon::data::internal
