// AVX2-level kernels of encode_utf8 for Latin-1 and UCS-2 (contract in
// internal/utf8_encode_kernels.h; the portable kernel in utf8_encode.cc is the reference). Every
// function carries LUMINAMOON_AVX2: this file is compiled with the default flags and reached only
// through the dispatcher, after CPUID and XGETBV said the CPU and OS support AVX2.
//
// Besides narrowing ASCII blocks, these encode 8 units that are all below U+0800 (ASCII, Latin,
// Greek, Cyrillic, Hebrew, Arabic...) without a branch per unit: each 16-bit lane is made into its
// 2-byte form (or keeps its ASCII byte), and one PSHUFB packs the bytes that belong, picked from
// a table by the 8-bit mask of ASCII lanes. The portable kernel took a misprediction or two per
// non-ASCII character; on text like the real corpus's (96.5% ASCII, accents here and there) most
// blocks with one were paying it.
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8_encode_kernels.h"

namespace luminamoon::data::internal {
namespace {

using utf8_encode::units_one_by_one;

// For each mask m of ASCII lanes among 8 lanes (bit k: lane k is ASCII), the PSHUFB indices that
// keep byte 2k of every lane and byte 2k + 1 of the lanes that are not ASCII, in order (0x80, a
// zero byte, in the unused places), and how many bytes that is.
struct PackTable {
  std::array<std::array<std::uint8_t, 16>, 256> shuffle;
  std::array<std::uint8_t, 256> length;
};

constexpr PackTable make_pack_table() {
  PackTable t{};
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

constexpr PackTable kPack = make_pack_table();

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

}  // namespace

// Room: at unit i the output has at least 2 (Latin-1) or 3 (UCS-2) bytes a unit left, 32 or 48
// for a block of 16, and each store below writes 16 bytes at most 16 bytes past the last one.
LUMINAMOON_AVX2 Utf8Encoded encode_latin1_avx2(const unsigned char* in, std::size_t count,
                                               char* out) {
  Utf8Encoded result;  // (Latin-1 holds no surrogate)
  char* o = out;
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __builtin_prefetch(in + i + 1024);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    if (_mm_movemask_epi8(v) == 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
      o += 16;
      continue;
    }
    const __m128i zero = _mm_setzero_si128();
    o += below_0800(_mm_unpacklo_epi8(v, zero), o);
    o += below_0800(_mm_unpackhi_epi8(v, zero), o);
  }
  o = units_one_by_one<std::uint8_t>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

LUMINAMOON_AVX2 Utf8Encoded encode_ucs2_avx2(const unsigned char* in, std::size_t count,
                                             char* out) {
  Utf8Encoded result;
  char* o = out;
  const __m128i above_7f = _mm_set1_epi16(-0x80);    // 0xFF80
  const __m128i above_7ff = _mm_set1_epi16(-0x800);  // 0xF800
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __builtin_prefetch(in + 2 * i + 1024);
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i + 16));
    if (_mm_testz_si128(_mm_or_si128(a, b), above_7f)) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_packus_epi16(a, b));
      o += 16;
      continue;
    }
    // Each half: vector code when all 8 units are below U+0800 (no surrogate among them), unit
    // by unit otherwise (3-byte characters, surrogates).
    if (_mm_testz_si128(a, above_7ff)) {
      o += below_0800(a, o);
    } else {
      o = units_one_by_one<std::uint16_t>(in, i, i + 8, o, result);
    }
    if (_mm_testz_si128(b, above_7ff)) {
      o += below_0800(b, o);
    } else {
      o = units_one_by_one<std::uint16_t>(in, i + 8, i + 16, o, result);
    }
  }
  o = units_one_by_one<std::uint16_t>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

}  // namespace luminamoon::data::internal
