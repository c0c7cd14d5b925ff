// AVX-512 UTF-8 validator (contract in internal/utf8.h; utf8_scalar.cc is the reference this
// must match for every input). Same algorithm as utf8_avx2.cc on 64-byte registers, with
// comparisons producing opmasks. Every function carries LUMINAMOON_AVX512
// (internal/isa_dispatch.h); the dispatcher reaches them only after CPUID and XGETBV said the
// CPU and OS support the avx512 level (opmask and ZMM state saved).
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8.h"

namespace luminamoon::data::utf8_internal {
namespace {

// ---- UTF-8 validation: Keiser & Lemire lookup algorithm (see utf8_avx2.cc for the tables).

constexpr std::uint8_t kTooShort = 1 << 0;
constexpr std::uint8_t kTooLong = 1 << 1;
constexpr std::uint8_t kOverlong3 = 1 << 2;
constexpr std::uint8_t kTooLarge = 1 << 3;
constexpr std::uint8_t kSurrogate = 1 << 4;
constexpr std::uint8_t kOverlong2 = 1 << 5;
constexpr std::uint8_t kTooLarge1000 = 1 << 6;
constexpr std::uint8_t kOverlong4 = 1 << 6;
constexpr std::uint8_t kTwoConts = 1 << 7;
constexpr std::uint8_t kCarry = kTooShort | kTooLong | kTwoConts;

LUMINAMOON_AVX512 inline __m512i table16(std::uint8_t t0, std::uint8_t t1, std::uint8_t t2,
                                         std::uint8_t t3, std::uint8_t t4, std::uint8_t t5,
                                         std::uint8_t t6, std::uint8_t t7, std::uint8_t t8,
                                         std::uint8_t t9, std::uint8_t t10, std::uint8_t t11,
                                         std::uint8_t t12, std::uint8_t t13, std::uint8_t t14,
                                         std::uint8_t t15) {
  const __m128i lane = _mm_setr_epi8(
      static_cast<char>(t0), static_cast<char>(t1), static_cast<char>(t2), static_cast<char>(t3),
      static_cast<char>(t4), static_cast<char>(t5), static_cast<char>(t6), static_cast<char>(t7),
      static_cast<char>(t8), static_cast<char>(t9), static_cast<char>(t10), static_cast<char>(t11),
      static_cast<char>(t12), static_cast<char>(t13), static_cast<char>(t14),
      static_cast<char>(t15));
  // The maskz forms: GCC 12's unmasked ones trip -Wuninitialized (GCC bug 105593).
  return _mm512_maskz_broadcast_i32x4(0xFFFF, lane);
}

LUMINAMOON_AVX512 inline __m512i splat(std::uint8_t b) {
  return _mm512_set1_epi8(static_cast<char>(b));
}

LUMINAMOON_AVX512 inline __m512i high_nibbles(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi16(v, 4), splat(0x0F));
}

// out[i] = (prev:input)[64 + i - N]: valignq brings the 16-byte lane before each lane of
// `input` alongside it, then vpalignr shifts within lanes.
template <int N>
LUMINAMOON_AVX512 inline __m512i shifted_in(__m512i input, __m512i prev) {
  return _mm512_alignr_epi8(input, _mm512_maskz_alignr_epi64(0xFF, input, prev, 6), 16 - N);
}

struct Utf8Tables {
  __m512i byte1_high, byte1_low, byte2_high;
};

LUMINAMOON_AVX512 inline Utf8Tables utf8_tables() {
  return {
      table16(kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,
              kTwoConts, kTwoConts, kTwoConts, kTwoConts, kTooShort | kOverlong2, kTooShort,
              kTooShort | kOverlong3 | kSurrogate,
              kTooShort | kTooLarge | kTooLarge1000 | kOverlong4),
      table16(kCarry | kOverlong3 | kOverlong2 | kOverlong4, kCarry | kOverlong2, kCarry, kCarry,
              kCarry | kTooLarge, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000 | kSurrogate,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000),
      table16(kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
              kTooShort,
              kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,
              kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,
              kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
              kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge, kTooShort, kTooShort,
              kTooShort, kTooShort),
  };
}

// Non-zero in a byte iff that byte of `input` (with `prev` the 64 bytes before it) ends or
// interrupts a sequence that is not valid UTF-8.
LUMINAMOON_AVX512 inline __m512i utf8_errors(const Utf8Tables& t, __m512i input, __m512i prev) {
  const __m512i prev1 = shifted_in<1>(input, prev);
  const __m512i special = _mm512_and_si512(
      _mm512_and_si512(_mm512_shuffle_epi8(t.byte1_high, high_nibbles(prev1)),
                       _mm512_shuffle_epi8(t.byte1_low, _mm512_and_si512(prev1, splat(0x0F)))),
      _mm512_shuffle_epi8(t.byte2_high, high_nibbles(input)));
  const __m512i third = _mm512_subs_epu8(shifted_in<2>(input, prev), splat(0xE0 - 0x80));
  const __m512i fourth = _mm512_subs_epu8(shifted_in<3>(input, prev), splat(0xF0 - 0x80));
  const __m512i must_continue = _mm512_and_si512(_mm512_or_si512(third, fourth), splat(0x80));
  return _mm512_xor_si512(must_continue, special);
}

// Whether the last three bytes of `input` start a sequence that needs bytes after them.
LUMINAMOON_AVX512 inline bool utf8_incomplete(__m512i input) {
  // Byte 61 >= F0, byte 62 >= E0 or byte 63 >= C0.
  const __m512i min_lead =
      _mm512_set_epi64(static_cast<long long>(0xC0E0F0FFFFFFFFFFull), -1, -1, -1, -1, -1, -1, -1);
  return _mm512_cmpge_epu8_mask(input, min_lead) != 0;
}

}  // namespace

LUMINAMOON_AVX512 std::size_t utf8_valid_prefix_avx512(const std::uint8_t* data, std::size_t size) {
  const Utf8Tables tables = utf8_tables();
  __m512i prev = _mm512_setzero_si512();
  bool prev_incomplete = false;
  std::size_t p = 0;
  // 64 bytes per step; on the first step with an error, the scalar routine finds its exact
  // position, resuming at a character start no later than p (nothing before p was flagged).
  for (; p + 64 <= size; p += 64) {
    const __m512i input = _mm512_loadu_si512(data + p);
    if (_mm512_movepi8_mask(input) == 0) {
      if (prev_incomplete) break;  // all ASCII: valid unless a character was left unfinished
    } else {
      const __m512i errors = utf8_errors(tables, input, prev);
      if (_mm512_test_epi8_mask(errors, errors) != 0) break;
      prev_incomplete = utf8_incomplete(input);
    }
    prev = input;
  }
  const std::size_t restart = character_start_before(data, p);
  return restart + utf8_valid_prefix_scalar(data + restart, size - restart);
}

}  // namespace luminamoon::data::utf8_internal
